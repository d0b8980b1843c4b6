/**
 * Starting a worker thread from a module beside the caller's: the built `.js` when freshfs runs
 * from `dist`, the `.ts` source through tsx when it runs from its sources (the tests). Shared by
 * the grep pool and the live tree's watcher. Depends on nothing inside freshfs.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * A worker running `name` (without extension) from the directory of `base` (the caller's
 * `import.meta.url`).
 */
export function startModuleWorker(base: string, name: string, options: WorkerOptions): Worker {
  if (!base.endsWith(".ts")) {
    // The parent's flags, less `--input-type` (a host started with `node --input-type=module -e`),
    // which a worker refuses to start with.
    const execArgv = process.execArgv.filter((flag) => !flag.startsWith("--input-type"));
    return new Worker(new URL(`./${name}.js`, base), { execArgv, ...options });
  }
  // tsx's loader does not carry over into worker threads by itself, so a bootstrap registers it.
  const tsx = import.meta.resolve("tsx/esm/api");
  const source = new URL(`./${name}.ts`, base).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

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
    const url = new URL(`./${name}.js`, base);
    // A worker inherits the parent's flags, save `--input-type` (a host started with
    // `node --input-type=module -e`), which it refuses: then it is given the rest. Given
    // explicitly, flags that only a process can take (`--max-old-space-size`, `--expose-gc`)
    // are refused too, and inherited they are not: so only then, and without those if need be.
    if (!process.execArgv.some((flag) => flag.startsWith("--input-type"))) {
      return new Worker(url, options);
    }
    const execArgv = process.execArgv.filter((flag) => !flag.startsWith("--input-type"));
    try {
      return new Worker(url, { execArgv, ...options });
    } catch (error) {
      if ((error as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
      return new Worker(url, { execArgv: [], ...options });
    }
  }
  // tsx's loader does not carry over into worker threads by itself, so a bootstrap registers it.
  const tsx = import.meta.resolve("tsx/esm/api");
  const source = new URL(`./${name}.ts`, base).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

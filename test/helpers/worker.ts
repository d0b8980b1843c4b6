/**
 * Test helper: runs a script over the TypeScript sources in a worker thread. vitest cannot
 * interrupt synchronous code on the test's own thread, so a call that could loop for hours (an
 * exponential match) runs here instead: then it fails at vitest's test timeout, and the worker
 * is terminated when the test ends, however it ends.
 */
import { Worker } from "node:worker_threads";
import { onTestFinished } from "vitest";

/**
 * Runs `body`, the body of an async function of `load` (`import()` of a module URL, TypeScript
 * included) and `data` (structured-cloned), in a new worker thread, with `env` as its
 * `process.env` when given; resolves what `body` returns. Call it inside a test.
 */
export function inWorker<T>(body: string, data: unknown, env?: NodeJS.ProcessEnv): Promise<T> {
  // tsx's loader does not carry over into worker threads by itself (as in src/search/grep).
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap = `
    const { parentPort, workerData } = require("node:worker_threads");
    const AsyncFunction = (async () => {}).constructor;
    import(${JSON.stringify(tsx)})
      .then((api) => {
        api.register();
        const run = new AsyncFunction("load", "data", workerData.body);
        return run((url) => import(url), workerData.data);
      })
      .then(
        (value) => parentPort.postMessage({ value }),
        (error) => parentPort.postMessage({ error: String(error && error.stack ? error.stack : error) }),
      );`;
  const worker = new Worker(bootstrap, {
    eval: true,
    workerData: { body, data },
    ...(env === undefined ? {} : { env }),
  });
  onTestFinished(() => worker.terminate().then(() => undefined));
  return new Promise<T>((resolve, reject) => {
    worker.once("message", (message: { value?: T; error?: string }) => {
      if (message.error === undefined) resolve(message.value as T);
      else reject(new Error(`in the worker: ${message.error}`));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the worker exited (${code}) with no answer`)));
  });
}

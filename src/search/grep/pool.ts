/**
 * The grep worker pool: one per process, shared by every search, at most `MAX_WORKERS` threads.
 * A search borrows a worker per range of files and gives it back after the range when another
 * search is waiting, so concurrent searches take turns (first come, first served) instead of
 * each starting threads of its own: 1,000 concurrent greps once started 1,000 threads and
 * reached 8 GB of RSS. Depends on `worker` (its protocol).
 */
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../../io/thread.js";
import { envCount } from "../../scan/cache.js";
import { STOPPED } from "./worker.js";

/**
 * Workers one search uses: one per core (rg's default); at least two, since a thread blocked in
 * a read leaves its core to the other; at most eight, since each worker holds an isolate and a
 * read buffer grown to the largest file it met (up to `maxFileSize`). FS_GREP_WORKERS sets it
 * (1 to 16), to measure the curve.
 */
export const GREP_WORKERS = Math.min(
  16,
  Math.max(1, envCount("FS_GREP_WORKERS", Math.max(2, Math.min(availableParallelism(), 8)))),
);

/**
 * Most grep threads a process runs, however many searches are under way: as many as one search
 * uses; beyond that, concurrency is a queue's job.
 */
const MAX_WORKERS = GREP_WORKERS;

/**
 * How long a worker asked to stop may stay on one file. It checks between files and flushes
 * every 10 ms, so one still on the same file after this is deep in it (a slow regex, mostly)
 * for a result nobody wants any more: it is terminated, which costs a restart (~30 ms) when
 * next needed. One that moved on meanwhile is on its way to answering (the caller's thread was
 * busy, not the worker stuck), and gets another grace: at worst two, then.
 */
const STOP_GRACE_MS = 40;

/** A pooled worker thread, and what its holder listens to. */
export interface PooledWorker {
  readonly thread: Worker;
  /** Shared with the thread: the file it is on (-1 between ranges), its descriptor (worker.ts). */
  readonly current: Int32Array;
  /** The search whose settings the thread holds. */
  search: number | undefined;
  onMessage: ((message: unknown) => void) | undefined;
  onError: ((error: Error) => void) | undefined;
}

/** @internal What the pool holds now, and counts since the process began. */
export interface GrepPoolStats {
  readonly max: number;
  /** Threads alive, idle, busy or being ended. */
  readonly workers: number;
  readonly idle: number;
  /** Searches' lanes waiting for a worker. */
  readonly waiting: number;
  /** Workers asked to stop, within their grace. */
  readonly stopping: number;
  /** The most threads alive at once. */
  readonly peak: number;
  readonly started: number;
  readonly terminated: number;
  /** Times a worker was handed to a search. */
  readonly lent: number;
}

function startThread(current: SharedArrayBuffer): Worker {
  // `trackUnmanagedFds` (Node's default, stated because grep relies on it): the file a worker
  // holds open while its regex runs is closed by Node when the worker is terminated in it.
  return startModuleWorker(import.meta.url, "worker", {
    trackUnmanagedFds: true,
    workerData: current,
  });
}

class WorkerPool {
  private readonly workers = new Set<PooledWorker>();
  /** Workers started (~30 ms each) are kept, unreferenced, for the next search. */
  private readonly idle: PooledWorker[] = [];
  /** In arrival order: a Set keeps it, and lets a waiter that gives up leave at once. */
  private readonly waiters = new Set<(worker: PooledWorker) => void>();
  private stopping = 0;
  private peak = 0;
  private started = 0;
  private terminated = 0;
  private lent = 0;

  constructor(private readonly max: number) {}

  get waiting(): number {
    return this.waiters.size;
  }

  /** A worker, now or in turn; undefined once `signal` fires (the search ended meanwhile). */
  acquire(signal: AbortSignal): Promise<PooledWorker | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const ready = this.idle.pop() ?? (this.workers.size < this.max ? this.start() : undefined);
    if (ready) return Promise.resolve(this.lend(ready));
    return new Promise((resolve) => {
      const onAbort = () => {
        this.waiters.delete(take);
        resolve(undefined);
      };
      const take = (worker: PooledWorker) => {
        signal.removeEventListener("abort", onAbort);
        resolve(this.lend(worker));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(take);
    });
  }

  /** A worker between ranges: to the first waiter, else idle. */
  release(worker: PooledWorker): void {
    worker.onMessage = undefined;
    worker.onError = undefined;
    const next = this.nextWaiter();
    if (next) {
      next(worker);
      return;
    }
    worker.search = undefined;
    worker.thread.postMessage("release");
    worker.thread.unref();
    this.idle.push(worker);
  }

  /**
   * A worker in the middle of a range nobody wants any more: it goes back once it says it has
   * stopped, or is ended once it has stayed a grace on one file. Batches it sent before
   * stopping are ignored.
   */
  retire(worker: PooledWorker): void {
    this.stopping++;
    let file = Atomics.load(worker.current, 0);
    const done = (next: () => void) => {
      clearTimeout(timer);
      this.stopping--;
      next();
    };
    const check = () => {
      const now = Atomics.load(worker.current, 0);
      // -1: between ranges, its answer already on the way.
      if (now === file && now !== -1) done(() => this.discard(worker));
      else {
        file = now;
        timer = setTimeout(check, STOP_GRACE_MS);
      }
    };
    let timer = setTimeout(check, STOP_GRACE_MS);
    worker.onMessage = (message) => {
      if (message === STOPPED) done(() => this.release(worker));
    };
    worker.onError = () => done(() => this.discard(worker));
    worker.thread.postMessage("stop");
  }

  /** Ends a worker (stuck in a regex, or failed); its place is filled when it has exited. */
  discard(worker: PooledWorker): void {
    worker.onMessage = undefined;
    worker.onError = undefined;
    this.terminated++;
    void worker.thread.terminate();
  }

  /** @internal */
  stats(): GrepPoolStats {
    return {
      max: this.max,
      workers: this.workers.size,
      idle: this.idle.length,
      waiting: this.waiters.size,
      stopping: this.stopping,
      peak: this.peak,
      started: this.started,
      terminated: this.terminated,
      lent: this.lent,
    };
  }

  private nextWaiter(): ((worker: PooledWorker) => void) | undefined {
    const [next] = this.waiters;
    if (next) this.waiters.delete(next);
    return next;
  }

  private lend(worker: PooledWorker): PooledWorker {
    this.lent++;
    worker.thread.ref();
    return worker;
  }

  private start(): PooledWorker {
    const shared = new SharedArrayBuffer(8);
    const worker: PooledWorker = {
      current: new Int32Array(shared).fill(-1),
      thread: startThread(shared),
      search: undefined,
      onMessage: undefined,
      onError: undefined,
    };
    this.started++;
    this.workers.add(worker);
    this.peak = Math.max(this.peak, this.workers.size);
    worker.thread.on("message", (message: unknown) => worker.onMessage?.(message));
    worker.thread.on("error", (error) => worker.onError?.(error));
    // Counted until the thread is gone, so that the bound holds for threads, not handles.
    worker.thread.on("exit", (code) => {
      this.workers.delete(worker);
      // Ending without an error first (which clears the holder's handler) is a failure too.
      worker.onError?.(new Error(`The grep worker exited with code ${code}.`));
      const idle = this.idle.indexOf(worker);
      if (idle !== -1) this.idle.splice(idle, 1);
      const next = this.nextWaiter();
      if (next) next(this.start());
    });
    return worker;
  }
}

/** The process's pool. */
export const grepPool = new WorkerPool(MAX_WORKERS);

/** @internal For tests: the pool's state. */
export function grepPoolStats(): GrepPoolStats {
  return grepPool.stats();
}

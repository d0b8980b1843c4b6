/**
 * Per-path async locks: the write path runs guard check → write → record as one step under
 * the lock of the canonical path, so no other call on that file can slip in between (contract
 * 1.2). Depends on `io/` and `errors`.
 */
import { FreshfsError, fromFsError } from "../errors.js";
import { nodeFs } from "../io/fs.js";
import { canonicalPath } from "../io/paths.js";

export interface PathLockOptions {
  /** Stops waiting for the lock (the holder is not interrupted). */
  signal?: AbortSignal | undefined;
}

/**
 * FIFO mutual exclusion per key. Each key holds only the tail of its queue, and the entry is
 * dropped when the last holder releases, so idle keys cost nothing.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Keys with a holder or waiters. */
  get size(): number {
    return this.#tails.size;
  }

  async run<T>(key: string, fn: () => T | Promise<T>, options: PathLockOptions = {}): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) throw aborted();
    const previous = this.#tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((done) => {
      release = done;
    });
    const tail = previous ? previous.then(() => mine) : mine;
    this.#tails.set(key, tail);
    const releaseMine = () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
    if (previous) {
      try {
        await waitFor(previous, signal);
      } catch (error) {
        // Leave the queue intact: our turn passes straight to whoever waits behind us.
        void previous.then(releaseMine);
        throw error;
      }
    }
    try {
      return await fn();
    } finally {
      releaseMine();
    }
  }
}

function waitFor(turn: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return turn;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    turn.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

function aborted(): FreshfsError {
  return new FreshfsError("ABORTED", "Stopped waiting for the file lock: the call was aborted.");
}

const processLocks = new KeyedLock();

/**
 * Runs `fn` while holding the process-wide lock of `path`'s canonical path (symlinks resolved,
 * so every spelling of one file shares one lock). Calls on one path run one at a time, queued in
 * the order their paths finished resolving; calls on different paths do not wait for each other.
 */
export async function withPathLock<T>(
  path: string,
  fn: () => T | Promise<T>,
  options: PathLockOptions = {},
): Promise<T> {
  let key: string;
  try {
    key = await canonicalPath(path, nodeFs);
  } catch (error) {
    throw fromFsError(error, "lock", path);
  }
  return processLocks.run(key, fn, options);
}

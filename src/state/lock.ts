/**
 * Per-path locks: the write path runs guard check → write → record as one step under the lock
 * of the canonical path, so no other call on that file can slip in between, in
 * this process (a FIFO queue per path, the fast path) and in every other freshfs process (the
 * lock file, `io/lockfile`, taken by the head of the queue only). Depends on `io/` and `errors`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { FreshfsError, fromFsError } from "../errors.js";
import { nodeFs } from "../io/fs.js";
import { acquireFileLock, type FileLock } from "../io/lockfile.js";
import { canonicalPath } from "../io/paths.js";
import { type LockPlace, lockPlaceOf } from "../io/state-dirs.js";

export interface PathLockOptions {
  /** Stops waiting for the lock (the holder is not interrupted). */
  signal?: AbortSignal | undefined;
  /**
   * How long to wait for another freshfs process's lock of the file before `LOCKED`.
   * @default LOCK_WAIT_MS (5000)
   */
  waitMs?: number | undefined;
  /** What the caller does with the file ("edit"), named to other processes that wait for it. */
  operation?: string | undefined;
}

/**
 * FIFO mutual exclusion per key. Each key holds only the tail of its queue, and the entry is
 * dropped when the last holder releases, so idle keys cost nothing.
 *
 * Several keys are taken together, in sorted order, so two callers locking the same pair (a
 * rename and its reverse) cannot deadlock. Taking a lock while holding one is refused with
 * `DEADLOCK` rather than risked: nested, the same key waits forever, and two keys in opposite
 * orders can.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();
  readonly #held = new AsyncLocalStorage<Set<string>>();

  /** Keys with a holder or waiters. */
  get size(): number {
    return this.#tails.size;
  }

  async run<T>(
    keys: string | readonly string[],
    fn: () => T | Promise<T>,
    options: PathLockOptions = {},
  ): Promise<T> {
    const sorted = [...new Set(typeof keys === "string" ? [keys] : keys)].sort();
    const held = this.#held.getStore();
    if (held && held.size > 0) {
      throw new FreshfsError(
        "DEADLOCK",
        `This call already holds the lock of ${[...held].join(", ")}; take every path it needs in one call, since a lock taken inside another can wait forever.`,
      );
    }
    const releases: (() => void)[] = [];
    const holding = new Set<string>();
    try {
      for (const key of sorted) releases.push(await this.#acquire(key, options.signal));
      for (const key of sorted) holding.add(key);
      return await this.#held.run(holding, fn);
    } finally {
      // Emptied, so work that `fn` left running is not taken for a holder after release.
      holding.clear();
      for (const release of releases.reverse()) release();
    }
  }

  /** Waits for `key`'s turn; resolves to the function that passes the turn on. */
  async #acquire(key: string, signal: AbortSignal | undefined): Promise<() => void> {
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
    return releaseMine;
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
 * Runs `fn` while holding the locks of one or more paths, by canonical path (symlinks resolved,
 * so every spelling of one file shares one lock; a path that does not exist yet locks where it
 * would be created), in this process and against every other freshfs process. Calls on one
 * path run one at a time, in the order they asked (across processes: whoever creates the lock
 * file first); calls on different paths do not wait for each other. Pass both sides of a rename
 * together: several paths are taken in one fixed order, in every process, so no two callers
 * deadlock. Another process's lock held past `waitMs` is `LOCKED`; one left by a process that
 * died is taken over (see `LOCK_STALE_MS`).
 */
export async function withPathLock<T>(
  paths: string | readonly string[],
  fn: () => T | Promise<T>,
  options: PathLockOptions = {},
): Promise<T> {
  const keys = (typeof paths === "string" ? [paths] : paths).map((path) => {
    try {
      return canonicalPath(path, nodeFs);
    } catch (error) {
      throw fromFsError(error, "lock", path);
    }
  });
  return withEntryLocks(keys, fn, options);
}

export interface EntryLockOptions extends PathLockOptions {
  /** The key as messages show it (a path relative to the workspace root). */
  readonly shown?: ((key: string) => string) | undefined;
  /**
   * Runs once this process's locks are held, before the lock files are made: which lock file an
   * entry has follows from where its path leads, so a path that now leads elsewhere must be
   * refused first.
   */
  readonly beforeFileLocks?: (() => void) | undefined;
}

/**
 * `withPathLock` for keys that are canonical already: a file's real path, or a link or directory
 * by its own name (delete and rename act on the entry, not on where a link leads).
 */
export async function withEntryLocks<T>(
  keys: readonly string[],
  fn: () => T | Promise<T>,
  options: EntryLockOptions = {},
): Promise<T> {
  return processLocks.run(
    keys,
    async () => {
      options.beforeFileLocks?.();
      const held: FileLock[] = [];
      try {
        for (const { key, place } of inLockOrder(keys)) {
          const lock = await acquireFileLock(key, {
            signal: options.signal,
            waitMs: options.waitMs,
            operation: options.operation,
            shown: options.shown?.(key),
            place,
          });
          if (lock) held.push(lock);
        }
        return await fn();
      } finally {
        for (const lock of held.reverse()) lock.release();
      }
    },
    options,
  );
}

/**
 * The keys with their lock files, in the order every process takes them: by the lock file's
 * name (a digest of the path within its repository, the same from every mount of it and every
 * container), then its directory. Two processes that lock the same files in one order cannot
 * deadlock.
 */
function inLockOrder(keys: readonly string[]): { key: string; place: LockPlace | undefined }[] {
  const placed = [...new Set(keys)].map((key) => ({ key, place: lockPlaceOf(key) }));
  const rank = (place: LockPlace | undefined) => (place ? `${place.name}\0${place.dir}` : "");
  return placed.sort((a, b) => {
    const x = rank(a.place);
    const y = rank(b.place);
    return x < y ? -1 : x > y ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  });
}

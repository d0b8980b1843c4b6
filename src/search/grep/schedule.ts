/**
 * How a search's files reach the worker threads: a feed of paths (complete at the start, or
 * growing while a walk lists them), cut into ranges that lanes hand to pooled workers, with the
 * results given back strictly in file order. A file on which the regex runs past its budget is
 * abandoned (its worker terminated, the range resumed after it in another); the search's
 * deadline, the caller's abort and a filled page halt every lane at once. A search the native
 * core can answer goes to it (`native`). Depends on `errors`, `feed`, `pool`, `inside`, `native`
 * and the worker's message types.
 */
import { FreshfsError } from "../../errors.js";
import { LONGEST_TIMER_MS } from "./defaults.js";
import type { Budget, Consume, FileFeed, FileHints, Scheduled } from "./feed.js";
import { opensInside, PROC_FD, rootPrefix } from "./inside.js";
import { NativeRefused, nativeFor, runNative } from "./native.js";
import { GREP_WORKERS, grepPool, type PooledWorker } from "./pool.js";
import type { WorkerBatch, WorkerOutcome, WorkerRange, WorkerSettings } from "./worker.js";

/**
 * Files per range handed to a worker: small enough to balance two workers and for searches to
 * take turns at the pool, large enough to be cheap.
 */
const RANGE = 512;
/** Ranges each worker gets at least, when the files are known at the start (see `rangeFor`). */
const RANGES_PER_WORKER = 8;
const SHORTEST_RANGE = 16;

/**
 * Files per range for a search of `files` files known at the start: shorter ranges for fewer
 * files, so the workers end together. The index's candidates are few and uneven (a block of a
 * large file beside a header of a line): `-i PM_RESUME` on the Linux tree read 1,695 files in 4
 * ranges of 512, and each worker was idle a third of the search, waiting for the other's last.
 */
function rangeFor(files: number): number {
  const even = Math.ceil(files / (GREP_WORKERS * RANGES_PER_WORKER));
  return Math.max(SHORTEST_RANGE, Math.min(RANGE, even));
}

/**
 * How many workers search at once: one per core when there is enough to share, as rg runs one
 * thread per core (FS_GREP_WORKERS overrides, to measure the curve). Reading dominates; the
 * curve on the benchmark machine is in BENCHMARKS.md.
 */
function workerCount(files: number, range: number): number {
  return Math.max(1, Math.min(GREP_WORKERS, Math.ceil(files / range)));
}

/** A range of the feed: files `from` to `end`, whose progress is kept under `key` (its first). */
interface Range {
  readonly key: number;
  readonly from: number;
  readonly end: number;
}

/** How a range's search ended: done, halted, or on a file its worker got stuck on or died on. */
type Ending = "done" | "halt" | { stuck: number; outside: boolean } | { failed: number };

let searches = 0;
let ranges = 0;

/**
 * Searches the feed's files (relative to `settings.root`) on the native core where it can
 * answer (`nativeFor`), else in pooled worker threads, and hands each outcome to `consume`, in
 * file order (so paging can stop the search early: `consume` returns false).
 */
export async function runSearch(
  settings: WorkerSettings,
  feed: FileFeed,
  consume: Consume,
  budget: Budget,
  hints: FileHints,
): Promise<Scheduled> {
  if (feed.files.length === 0 && feed.complete) return { timedOut: [], partial: false };
  const core = nativeFor(settings, hints.stretches);
  if (core) {
    try {
      return await runNative(core, settings, feed, consume, budget);
    } catch (error) {
      if (!(error instanceof NativeRefused)) throw error;
    }
  }
  return new ScheduledSearch(settings, feed, consume, budget, hints).run();
}

class ScheduledSearch {
  readonly #id = ++searches;
  readonly #settings: WorkerSettings;
  readonly #feed: FileFeed;
  readonly #consume: Consume;
  readonly #budget: Budget;
  readonly #hints: FileHints;
  readonly #result: Scheduled = { timedOut: [], partial: false };
  /**
   * New ranges are cut from the feed, `#rangeFiles` files each (the last shorter, once the
   * feed is complete), so every range starts at a multiple of it.
   */
  readonly #rangeFiles: number;
  /** Where the next new range is cut. */
  #cut = 0;
  /** Ranges to search again, after a worker was lost in one. */
  readonly #queue: Range[] = [];
  /** Outcomes that arrived ahead of their turn, by feed index. */
  readonly #outcomes = new Map<number, WorkerOutcome>();
  /** For each range (by key): every file before this index is done. */
  readonly #progress = new Map<number, number>();
  /** Files no worker may search again (one got stuck on, or died on, each). */
  readonly #skip: number[] = [];
  /** Files handed to `consume` so far. */
  #consumed = 0;
  /**
   * Every way a search ends early (the caller's abort, the deadline, a page filled) halts
   * every lane at once, whether it is searching or waiting for a worker.
   */
  readonly #halt = new AbortController();

  constructor(
    settings: WorkerSettings,
    feed: FileFeed,
    consume: Consume,
    budget: Budget,
    hints: FileHints,
  ) {
    this.#settings = settings;
    this.#feed = feed;
    this.#consume = consume;
    this.#budget = budget;
    this.#hints = hints;
    this.#rangeFiles = feed.complete ? rangeFor(feed.files.length) : RANGE;
  }

  async run(): Promise<Scheduled> {
    const stop = () => this.#halt.abort();
    const { signal, timeoutMs } = this.#budget;
    signal?.addEventListener("abort", stop, { once: true });
    const deadline =
      timeoutMs <= LONGEST_TIMER_MS
        ? setTimeout(() => {
            this.#result.partial = true;
            stop();
          }, timeoutMs)
        : undefined;
    try {
      const files = this.#feed.complete ? this.#feed.files.length : Number.POSITIVE_INFINITY;
      const lanes = workerCount(files, this.#rangeFiles);
      await Promise.all(Array.from({ length: lanes }, () => this.#runLane()));
    } finally {
      // A lane that failed leaves the others to halt.
      stop();
      clearTimeout(deadline);
      signal?.removeEventListener("abort", stop);
    }
    if (signal?.aborted) throw new FreshfsError("ABORTED", "The search was aborted.");
    return this.#result;
  }

  /** Hands `consume` every outcome whose turn has come; halts once it is done or says stop. */
  #advance(): void {
    const files = this.#feed.files;
    while (this.#consumed < files.length && !this.#halt.signal.aborted) {
      const at = this.#consumed;
      const key = at - (at % this.#rangeFiles);
      if (at >= (this.#progress.get(key) ?? key)) return;
      const outcome = this.#outcomes.get(at);
      this.#outcomes.delete(at);
      if (!this.#consume(at, outcome)) this.#halt.abort();
      this.#consumed++;
    }
    if (this.#consumed >= files.length && this.#feed.complete) this.#halt.abort();
  }

  /**
   * One lane: ranges from the queue until it empties or the search halts. A worker is kept
   * from range to range while no other search waits for one, and given back after a range when
   * one does, so that a long search does not hold workers others are queued for.
   */
  async #runLane(): Promise<void> {
    let worker: PooledWorker | undefined;
    for (;;) {
      const range = await this.#nextRange();
      if (!range) break;
      if (!worker) worker = await grepPool.acquire(this.#halt.signal);
      if (!worker) {
        this.#queue.unshift(range);
        return;
      }
      const ending = await this.#searchRange(worker, range);
      if (ending === "done") {
        if (grepPool.waiting > 0) {
          grepPool.release(worker);
          worker = undefined;
        }
        continue;
      }
      if (ending === "halt") {
        grepPool.retire(worker);
        return;
      }
      // Stuck on a file (the regex ran past its budget) or crashed on one: report it, and
      // go on after it in another worker.
      grepPool.discard(worker);
      worker = undefined;
      this.#resumeAfter(range, ending);
    }
    if (worker) grepPool.release(worker);
  }

  /** The next range: one to search again, else a new one cut from the feed (waiting for it). */
  async #nextRange(): Promise<Range | undefined> {
    const feed = this.#feed;
    for (;;) {
      if (this.#halt.signal.aborted) return undefined;
      const again = this.#queue.shift();
      if (again) return again;
      const ready = feed.files.length - this.#cut;
      if (ready >= this.#rangeFiles || (feed.complete && ready > 0)) {
        const end = Math.min(feed.files.length, this.#cut + this.#rangeFiles);
        const range = { key: this.#cut, from: this.#cut, end };
        this.#cut = end;
        return range;
      }
      if (feed.complete) return undefined;
      await feed.next(this.#halt.signal);
    }
  }

  /** Skips the file a worker got stuck on or died on, and queues the rest of its range. */
  #resumeAfter(range: Range, ending: { stuck: number; outside: boolean } | { failed: number }) {
    const index = "stuck" in ending ? ending.stuck : ending.failed;
    if (index < range.from) {
      throw new FreshfsError("IO_ERROR", "The search worker failed before it searched a file.");
    }
    if (!("outside" in ending && ending.outside)) this.#result.timedOut.push(index);
    this.#skip.push(index);
    const from = this.#progress.get(range.key) ?? range.from;
    this.#queue.unshift({ key: range.key, from, end: range.end });
  }

  /**
   * The file the worker is stuck on, still open in it, leads outside the root (a directory
   * swapped for a link): it is skipped without being named, as the worker would have reported
   * it. Naming it would tell that the regex backtracks on what the outside file holds. When
   * the descriptor cannot be read (the worker moved on after all), it is named as before.
   */
  #stuckOutside(currentFile: Int32Array, index: number): boolean {
    const fd = Atomics.load(currentFile, 1);
    if (PROC_FD === undefined || fd < 0) return false;
    try {
      const inside = opensInside(fd, rootPrefix(this.#settings.root), this.#settings.named);
      return !inside && Atomics.load(currentFile, 0) === index;
    } catch {
      return false;
    }
  }

  /** Searches one range in `worker`, watching that no file holds it past the file budget. */
  #searchRange(worker: PooledWorker, range: Range): Promise<Ending> {
    return new Promise<Ending>((resolve) => {
      const rangeId = ++ranges;
      const currentFile = worker.current;
      const { fileTimeoutMs } = this.#budget;
      let lastIndex = Atomics.load(currentFile, 0);
      let lastChange = performance.now();
      let settled = false;
      const finish = (how: Ending) => {
        if (settled) return;
        settled = true;
        clearInterval(watch);
        this.#halt.signal.removeEventListener("abort", onHalt);
        worker.onMessage = undefined;
        worker.onError = undefined;
        resolve(how);
      };
      const watch = setInterval(
        () => {
          const index = Atomics.load(currentFile, 0);
          const now = performance.now();
          if (index !== lastIndex) {
            lastIndex = index;
            lastChange = now;
          } else if (index >= range.from && now - lastChange >= fileTimeoutMs) {
            finish({ stuck: index, outside: this.#stuckOutside(currentFile, index) });
          }
        },
        Math.min(100, fileTimeoutMs),
      );
      const onHalt = () => finish("halt");
      this.#halt.signal.addEventListener("abort", onHalt, { once: true });
      worker.onMessage = (message) => {
        const batch = message as WorkerBatch;
        if (batch.id !== rangeId) return;
        for (const { index, outcome } of batch.results) this.#outcomes.set(index, outcome);
        this.#progress.set(range.key, batch.next);
        // A worker done with its range is idle, even if what it sent ends the search.
        if (batch.done) finish("done");
        this.#advance();
      };
      worker.onError = () => finish({ failed: Atomics.load(currentFile, 0) });
      worker.thread.postMessage(this.#message(worker, rangeId, range));
    });
  }

  #message(worker: PooledWorker, rangeId: number, range: Range): WorkerRange {
    // A worker that served this search before has its settings already.
    const settings = worker.search === this.#id ? undefined : this.#settings;
    worker.search = this.#id;
    return {
      type: "range",
      id: rangeId,
      search: this.#id,
      settings,
      start: range.from,
      files: this.#feed.files.slice(range.from, range.end).join("\0"),
      skip: this.#skip,
      stretches: within(this.#hints.stretches, range.from, range.end),
      branches: within(this.#hints.branches, range.from, range.end),
    };
  }
}

/** The entries of `map` for files `from` to `end`, as a record (it crosses to a worker). */
function within<T>(
  map: ReadonlyMap<number, T>,
  from: number,
  end: number,
): Record<number, T> | undefined {
  if (map.size === 0) return undefined;
  const out: Record<number, T> = {};
  for (let i = from; i < end; i++) {
    const these = map.get(i);
    if (these !== undefined) out[i] = these;
  }
  return out;
}

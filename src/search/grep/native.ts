/**
 * Grep on the native core: the feed's files handed to it in batches (while a walk still lists
 * them), its outcomes handed to `consume` in file order, as `runSearch` does with workers. Rust's
 * regex runs in linear time, so no file needs a budget of its own; the search's deadline, the
 * caller's abort and a filled page stop it between files. Depends on `native`, `io`, `errors`,
 * `feed` and the pattern's and worker's types.
 */
import { FreshfsError } from "../../errors.js";
import { encodeName, hasEscapedBytes } from "../../io/bytes.js";
import { type NativeAnswer, type NativeCore, nativeCore } from "../../native/core.js";
import { LONGEST_TIMER_MS } from "./defaults.js";
import type { Budget, Consume, FileFeed, Scheduled } from "./feed.js";
import { rootPrefix } from "./inside.js";
import { repeated } from "./pattern.js";
import { GREP_WORKERS } from "./pool.js";
import type { WorkerSettings } from "./worker.js";

/**
 * Files in the first batch: a search that a page fills early has read few files past it. Each
 * batch after is twice the last, up to `LARGEST_BATCH`, so that few batches (and few waits for
 * a batch's slowest file) make up a large search.
 */
const FIRST_BATCH = 1024;
const LARGEST_BATCH = 16_384;
/** Files listed and not searched yet, past the first batch, that make a batch while the walk runs. */
const READY = 256;
/**
 * The largest batch while the walk still lists files: each batch searches on one thread fewer
 * than the cores, and the next batch after the walk ends gets them all.
 */
const WALKING_BATCH = 4096;
/** The bytes of lines one answer holds at most: the core stops there, and is asked again. */
const ANSWER_BYTES = 32 * 1024 * 1024;
/**
 * Searches take turns on the core, one at a time in the process, first come first served, a
 * turn lasting while the search has batches in flight (one, or two while its walk lists): a batch
 * runs on up to `GREP_WORKERS` threads of the core's and holds one thread of libuv's pool (4,
 * which file reads of the whole process share) while it runs. 300 concurrent greps then use as many threads
 * as one, and a long search lets a short one in between its batches.
 */
class Turns {
  #busy = false;
  readonly #waiting: (() => void)[] = [];

  /** Resolves true once it is this caller's turn; false if `signal` fires first. */
  take(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (!this.#busy) {
      this.#busy = true;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const turn = () => {
        signal.removeEventListener("abort", gaveUp);
        resolve(true);
      };
      const gaveUp = () => {
        this.#waiting.splice(this.#waiting.indexOf(turn), 1);
        resolve(false);
      };
      signal.addEventListener("abort", gaveUp, { once: true });
      this.#waiting.push(turn);
    });
  }

  give(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  }
}

const turns = new Turns();

/**
 * The core, when it can answer this search as the workers would: rg's syntax on single lines,
 * files of a listing read whole (the content index's stretches of large files stay the
 * workers'), and no match positions asked (`-o`, `--column`, `-r`, `--json`). No patterns at
 * all match nothing, on the workers; a pattern that repeats too much (see `repeated`) or holds a
 * word boundary (`WORD_BOUNDARY`) runs there too, and so does one Rust's regex refuses as too
 * large (`NativeRefused`).
 */
export function nativeFor(
  settings: WorkerSettings,
  stretches: ReadonlyMap<number, unknown>,
): NativeCore | undefined {
  const rust = settings.rust;
  if (
    rust === undefined ||
    rust.patterns.length === 0 ||
    (!rust.fixedStrings &&
      rust.patterns.some((one) => repeated(one) > MOST_REPEATED || WORD_BOUNDARY.test(one))) ||
    settings.multiline ||
    settings.spans ||
    settings.replace !== undefined ||
    settings.named !== undefined ||
    stretches.size > 0
  ) {
    return undefined;
  }
  return nativeCore();
}

export async function runNative(
  core: NativeCore,
  settings: WorkerSettings,
  feed: FileFeed,
  consume: Consume,
  budget: Budget,
): Promise<Scheduled> {
  const rust = settings.rust as NonNullable<WorkerSettings["rust"]>;
  const result: Scheduled = { timedOut: [], partial: false };
  const cancel = new Uint8Array(1);
  const halt = new AbortController();
  const stop = () => {
    cancel[0] = 1;
    halt.abort();
  };
  const { signal, timeoutMs } = budget;
  signal?.addEventListener("abort", stop, { once: true });
  // The deadline counts a wait for a turn too.
  const deadline =
    timeoutMs <= LONGEST_TIMER_MS
      ? setTimeout(() => {
          result.partial = true;
          stop();
        }, timeoutMs)
      : undefined;
  const started = performance.now();
  const prefix = encodeName(rootPrefix(settings.root));
  const request = (at: number, end: number, left: number) =>
    core.search(
      {
        prefix,
        paths: pathBytes(feed.files, at, end),
        ...rust,
        invert: settings.invert,
        maxCount: settings.maxCount,
        before: settings.before,
        after: settings.after,
        binary: settings.binary,
        // While the walk lists files on this thread, it keeps a core of its own.
        threads: feed.complete ? GREP_WORKERS : Math.max(1, GREP_WORKERS - 1),
        timeoutMs: left,
        maxFileSize: settings.maxFileSize,
        mode: settings.mode,
        countMatches: settings.countMatches,
        followLinks: settings.followLinks,
        maxAnswerBytes: ANSWER_BYTES,
      },
      cancel,
    );
  /**
   * Batches sent and not yet consumed, in feed order. While the walk lists files, a second is
   * sent behind the first: the walk holds this thread for slices of up to 10 ms, and the core
   * would wait that long for its next batch after each one.
   */
  const inflight: { at: number; end: number; answer: Promise<NativeAnswer> }[] = [];
  let holding = false;
  let cut = 0;
  let batch = FIRST_BATCH;
  try {
    while (!halt.signal.aborted) {
      const depth = feed.complete ? 1 : 2;
      const ready = feed.files.length - cut;
      const enough = ready >= (cut === 0 ? FIRST_BATCH : READY) || (feed.complete && ready > 0);
      if (inflight.length < depth && enough) {
        const left = timeoutMs - (performance.now() - started);
        if (left <= 0) {
          result.partial = true;
          break;
        }
        if (!holding) {
          if (!(await turns.take(halt.signal))) break;
          holding = true;
        }
        const end = Math.min(feed.files.length, cut + batch);
        const answer = refusedAsRefusal(cut, request(cut, end, left));
        // Awaited in turn below; a rejection meanwhile must not go unhandled.
        answer.catch(() => undefined);
        inflight.push({ at: cut, end, answer });
        cut = end;
        batch = Math.min(feed.complete ? LARGEST_BATCH : WALKING_BATCH, batch * 2);
        continue;
      }
      const head = inflight[0];
      if (!head) {
        if (feed.complete) break;
        await feed.next(halt.signal);
        continue;
      }
      // The feed may fill a second batch before the first is answered.
      if (inflight.length < depth && !feed.complete) {
        const grew = feed.next(halt.signal).then(() => undefined);
        if ((await Promise.race([head.answer, grew])) === undefined) continue;
      }
      const answer = await head.answer;
      inflight.shift();
      if (inflight.length === 0) {
        turns.give();
        holding = false;
      }
      for (let i = 0; i < answer.done && !halt.signal.aborted; i++) {
        if (!consume(head.at + i, answer.outcomes.get(i))) halt.abort();
      }
      if (answer.stopped) {
        if (!signal?.aborted) result.partial = true;
        break;
      }
      if (answer.done < head.end - head.at) {
        // The answer's bound stopped it: the batches behind it begin too late, and are sent again.
        await Promise.allSettled(inflight.splice(0).map((one) => one.answer));
        cut = head.at + answer.done;
      }
    }
  } finally {
    clearTimeout(deadline);
    signal?.removeEventListener("abort", stop);
    if (inflight.length > 0) {
      cancel[0] = 1;
      await Promise.allSettled(inflight.map((one) => one.answer));
    }
    if (holding) turns.give();
  }
  if (signal?.aborted) throw new FreshfsError("ABORTED", "The search was aborted.");
  return result;
}

/**
 * The most a pattern may repeat itself (`repeated`) to be compiled by the core. Rust's regex
 * compiles a counted repetition by copying it: `(a{50}){50}` (2,500) took 57 ms to compile,
 * `(a{100}){100}` 811 ms, and `(a{1000}){1000}` did not finish in a minute (rg 13 hangs on it
 * too), and a compile cannot be stopped. The workers compile it in V8, and a regex that runs
 * long on a file is abandoned there.
 */
const MOST_REPEATED = 4096;

/**
 * A Unicode word boundary (`\b`, `\B`): Rust's regex cannot run it on its lazy DFA and falls back
 * to a slower engine for the whole search. On the npm corpus `\b[a-z]+_[a-z]+\(` took 156 ms on
 * the core (rg: 149 ms) and 119 ms on the workers, whose byte prefilter looks for the `_` first.
 * An escaped backslash before a `b` is taken for one too: such a pattern runs on the workers,
 * with the same answer.
 */
const WORD_BOUNDARY = /\\[bB]/;

/**
 * The core refused the pattern (Rust's regex found it too large to compile, where V8 did not)
 * before any outcome was consumed: the workers search instead.
 */
export class NativeRefused extends Error {}

async function refusedAsRefusal<T>(at: number, searching: Promise<T>): Promise<T> {
  try {
    return await searching;
  } catch (error) {
    if (at === 0 && (error as { code?: string }).code === "INVALID_PATTERN") {
      throw new NativeRefused((error as Error).message);
    }
    throw error;
  }
}

/** Files `from` to `end` as the core takes them: NUL-separated bytes, names as on disk. */
function pathBytes(files: readonly string[], from: number, end: number): Buffer {
  const joined = files.slice(from, end).join("\0");
  if (!hasEscapedBytes(joined)) return Buffer.from(joined, "utf8");
  const parts: Buffer[] = [];
  for (let i = from; i < end; i++) {
    if (i > from) parts.push(Buffer.from([0]));
    parts.push(encodeName(files[i] as string));
  }
  return Buffer.concat(parts);
}

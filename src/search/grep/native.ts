/**
 * Grep on the native core: the feed's files handed to it in batches (while a walk still lists
 * them), its outcomes handed to `consume` in file order, as `runSearch` does with workers. Rust's
 * regex runs in linear time, so no file needs a budget of its own; the search's deadline, the
 * caller's abort and a filled page stop it between files. Depends on `native`, `io`, `errors`
 * and the worker's types.
 */
import { FreshfsError } from "../../errors.js";
import { encodeName, hasEscapedBytes } from "../../io/bytes.js";
import { type NativeCore, nativeCore } from "../../native/core.js";
import { rootPrefix } from "./inside.js";
import { GREP_WORKERS } from "./pool.js";
import type { WorkerOutcome, WorkerSettings } from "./worker.js";

/*
 * The scheduler's types, as this module needs them (`schedule.ts` defines them and calls this
 * one; importing them back would make a cycle).
 */
interface Feed {
  readonly files: readonly string[];
  readonly complete: boolean;
  next(signal: AbortSignal): Promise<void>;
}
type Consume = (index: number, outcome: WorkerOutcome | undefined) => boolean;
interface Budget {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}
interface Scheduled {
  readonly timedOut: number[];
  partial: boolean;
}

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
 * The core, when it can answer this search as the workers would: rg's syntax on single lines,
 * files of a listing read whole (the content index's stretches of large files stay the
 * workers'), and no match positions asked (`-o`, `--column`, `-r`, `--json`).
 */
export function nativeFor(
  settings: WorkerSettings,
  stretches: ReadonlyMap<number, unknown>,
): NativeCore | undefined {
  if (
    settings.rust === undefined ||
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
  feed: Feed,
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
  const started = performance.now();
  const prefix = Buffer.from(rootPrefix(settings.root), "utf8");
  let at = 0;
  let batch = FIRST_BATCH;
  try {
    while (!halt.signal.aborted) {
      // While the walk runs, a batch starts with what is listed, so the core is never idle.
      const ready = at === 0 ? FIRST_BATCH : READY;
      while (!feed.complete && feed.files.length - at < ready && !halt.signal.aborted) {
        await feed.next(halt.signal);
      }
      const end = Math.min(feed.files.length, at + batch);
      if (end === at || halt.signal.aborted) break;
      const left = timeoutMs - (performance.now() - started);
      if (left <= 0) {
        result.partial = true;
        break;
      }
      const answer = await core.search(
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
      for (let i = 0; i < answer.done && !halt.signal.aborted; i++) {
        if (!consume(at + i, answer.outcomes.get(i))) halt.abort();
      }
      at += answer.done;
      if (answer.stopped) {
        if (!signal?.aborted) result.partial = true;
        break;
      }
      batch = Math.min(feed.complete ? LARGEST_BATCH : WALKING_BATCH, batch * 2);
    }
  } finally {
    signal?.removeEventListener("abort", stop);
  }
  if (signal?.aborted) throw new FreshfsError("ABORTED", "The search was aborted.");
  return result;
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

/**
 * grep: ripgrep's results for what agents ask, over the shared listing. The algorithm, in
 * rooms as ripgrep splits its own: resolve the options once (`options`), choose the files
 * (`candidates`: the target, the filters and rg's overrides, `-L`, the content index), hand them
 * to worker threads (`schedule`, `pool`, `worker`, `engine`), and page the records they yield
 * (`collect`). Depends on `content/`, `scan/`, `search/listing` and the rest of `search/grep`.
 *
 * The caller's thread selects the files and assembles the answer; workers read and search them
 * in path order, so results stream in sorted and a filled page (`offset + limit`) stops the
 * search early. A file on which the regex runs longer than `fileTimeoutMs` is abandoned (its
 * worker is terminated and a new one goes on after it) and reported; past `timeoutMs` the
 * search stops and the result is flagged partial. Either way the process keeps serving.
 */
import { statSync } from "node:fs";
import { contentIndexes } from "../../content/registry.js";
import { indexWhenLive } from "../../content/reopen.js";
import { FreshfsError } from "../../errors.js";
import {
  consultIndex,
  indexFor,
  type Listed,
  listCandidates,
  resolveTarget,
  Selection,
  type Target,
} from "./candidates.js";
import { type Answered, type GrepResult, RecordSink } from "./collect.js";
import { type Budget, FileFeed, NO_HINTS, type Scheduled } from "./feed.js";
import { type GrepOptions, type ResolvedGrep, resolveGrepOptions } from "./options.js";
import { runSearch } from "./schedule.js";
import type { WorkerSettings } from "./worker.js";

export type { GrepLine, GrepResult, GrepSkipped, GrepSubmatch } from "./collect.js";
export {
  GREP_DEFAULT_FILE_TIMEOUT_MS,
  GREP_DEFAULT_MAX_COLUMNS,
  GREP_DEFAULT_TIMEOUT_MS,
  GREP_MAX_FILE_BYTES,
} from "./defaults.js";
export type { GrepOptions, GrepOutputMode } from "./options.js";

/** Searches for `pattern` (or any of several, as rg's `-e a -e b`; none matches nothing). */
export function grep(
  pattern: string | readonly string[],
  given: GrepOptions = {},
): Promise<GrepResult> {
  return search(pattern, given, false);
}

/**
 * grep for the Workspace, whose `path` is confined and canonical already: a link found there
 * now was swapped in after the confinement, and is not followed (as `grep` follows a link the
 * caller names).
 */
export function grepConfined(
  pattern: string | readonly string[],
  given: GrepOptions,
): Promise<GrepResult> {
  return search(pattern, given, true);
}

/**
 * The files `grep` would search with these options (`rg --files`), by path, in `files`: the
 * listing's, filtered by the globs, types, depth and links as a search would be; none is read.
 * A size bound the caller gave leaves out the larger files, as `rg --files --max-filesize`.
 */
export async function grepFiles(given: GrepOptions = {}): Promise<GrepResult> {
  const options = resolveGrepOptions([], { ...given, outputMode: "files_with_matches" });
  throwIfAborted(options);
  const target = resolveTarget(options.path, false);
  const found =
    target.kind === "file"
      ? fileListed(target)
      : await listCandidates(target.root, options, new Selection(options), undefined);
  const files = found.candidates.filter(
    (path) => !options.maxFileSizeGiven || sizeOf(`${target.root}/${path}`) <= options.maxFileSize,
  );
  const sink = new RecordSink(options);
  return {
    ...sink.result(answered(target, found), { timedOut: [], partial: false }, files.length),
    files: files.slice(options.page.offset, options.wanted),
    totalRecords: files.length,
    truncated: files.length > options.wanted,
    filesRead: 0,
  };
}

async function search(
  pattern: string | readonly string[],
  given: GrepOptions,
  confined: boolean,
): Promise<GrepResult> {
  const options = resolveGrepOptions(pattern, given);
  throwIfAborted(options);
  const target = resolveTarget(options.path, confined);
  const settings = workerSettings(options, target);
  const sink = new RecordSink(options);
  const budget: Budget = {
    fileTimeoutMs: options.fileTimeoutMs,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  };

  if (target.kind === "file") {
    const found = fileListed(target);
    sink.reading(found.candidates);
    const feed = new FileFeed(found.candidates);
    const scheduled = await runSearch(settings, feed, sink.take, budget, NO_HINTS);
    return sink.result(answered(target, found), scheduled, found.candidates.length);
  }

  // While a walk lists the tree, its files are searched as they come, as rg does.
  const selection = new Selection(options);
  const streamed = selection.streams ? new StreamedSearch(settings, sink, budget) : undefined;
  let found: Listed;
  try {
    found = await listCandidates(target.root, options, selection, streamed?.push);
    streamed?.check(found.candidates);
  } catch (error) {
    await streamed?.abandon();
    throw error;
  }

  let scheduled: Scheduled;
  // Asked for even when the search streamed: the first live search starts the index's build.
  const index = indexFor(target.root, options, found.freshness);
  if (streamed?.started) {
    scheduled = await streamed.finish(found.candidates);
  } else if (index) {
    // A snapshot being loaded answers sooner than reading every file: it is waited for.
    if (found.listing) await contentIndexes.ready(index, found.listing, options.signal);
    const reading = consultIndex(index, found.candidates, options);
    sink.reading(reading.files, reading.positions, reading.knownBinary);
    const feed = new FileFeed(reading.files);
    scheduled = await runSearch(settings, feed, sink.take, budget, reading.hints);
  } else {
    sink.reading(found.candidates);
    const feed = new FileFeed(found.candidates);
    scheduled = await runSearch(settings, feed, sink.take, budget, NO_HINTS);
  }
  // Files changed since the index read them (or new) are indexed again, once this answer is
  // returned: the build thread does not compete with its reading, nor the bookkeeping with it.
  if (index && found.listing) contentIndexes.maintainSoon(index, found.listing);
  else if (found.freshness === "walked" && options.index && options.watch) {
    void indexWhenLive(target.root, options.policy);
  }
  return sink.result(answered(target, found), scheduled, found.candidates.length);
}

/**
 * A search started while the walk lists the files it goes through: the first files listed
 * start it, later ones are pushed to its feed, and the complete listing finishes the feed. The
 * caller's abort, or a listing that failed, stops it.
 */
class StreamedSearch {
  readonly #settings: WorkerSettings;
  readonly #sink: RecordSink;
  readonly #budget: Budget;
  readonly #stop = new AbortController();
  readonly #onAbort = () => this.#stop.abort();
  #feed: FileFeed | undefined;
  #running: Promise<Scheduled> | undefined;

  constructor(settings: WorkerSettings, sink: RecordSink, budget: Budget) {
    this.#settings = settings;
    this.#sink = sink;
    this.#budget = budget;
  }

  get started(): boolean {
    return this.#running !== undefined;
  }

  /** Files the walk just listed, in order. */
  readonly push = (files: string[]): void => {
    if (!this.#feed) {
      const feed = new FileFeed(undefined);
      this.#feed = feed;
      this.#sink.reading(feed.files);
      // Listened to only once the search runs: one that never starts leaves nothing behind on
      // the caller's signal (which may serve many calls).
      const signal = this.#budget.signal;
      signal?.addEventListener("abort", this.#onAbort, { once: true });
      if (signal?.aborted) this.#stop.abort();
      const budget = { ...this.#budget, signal: this.#stop.signal };
      this.#running = runSearch(this.#settings, feed, this.#sink.take, budget, NO_HINTS);
      // Awaited once the listing is complete; a failure meanwhile must not go unhandled.
      this.#running.catch(() => undefined);
    }
    this.#feed.push(files);
  };

  /** The complete listing must begin with every file already searched, in the same order. */
  check(candidates: readonly string[]): void {
    const searched = this.#feed?.files ?? [];
    if (searched.length > candidates.length || searched.some((path, i) => candidates[i] !== path)) {
      throw new FreshfsError("IO_ERROR", "The listing changed under the search of its files.");
    }
  }

  /** The rest of the candidates, then the end of the feed; resolves when the search is done. */
  async finish(candidates: readonly string[]): Promise<Scheduled> {
    const feed = this.#feed as FileFeed;
    feed.push(candidates.slice(feed.files.length));
    feed.finish();
    try {
      return await (this.#running as Promise<Scheduled>);
    } finally {
      this.#detach();
    }
  }

  /** The listing failed: its lanes would wait for files that never come, holding workers. */
  async abandon(): Promise<void> {
    this.#stop.abort();
    await this.#running?.catch(() => undefined);
    this.#detach();
  }

  #detach(): void {
    this.#budget.signal?.removeEventListener("abort", this.#onAbort);
  }
}

function throwIfAborted(options: ResolvedGrep): void {
  if (options.signal?.aborted) throw new FreshfsError("ABORTED", "The search was aborted.");
}

/** A single file named: read now, whatever any listing says. */
function fileListed(target: Extract<Target, { kind: "file" }>): Listed {
  return {
    candidates: [target.name],
    listing: undefined,
    freshness: "walked",
    unwatched: undefined,
  };
}

function answered(target: Target, found: Listed): Answered {
  return { root: target.root, freshness: found.freshness, unwatched: found.unwatched };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** What a worker needs of the search: the compiled pattern, the engine's settings, the target. */
function workerSettings(options: ResolvedGrep, target: Target): WorkerSettings {
  const { pattern } = options;
  return {
    pattern: pattern.planned,
    rust: pattern.rust,
    fixedStrings: pattern.fixedStrings,
    source: pattern.source,
    flags: pattern.flags,
    literal: pattern.literal,
    foldsAside: pattern.foldsAside,
    exact: pattern.exact,
    ignoreCase: pattern.ignoreCase,
    multiline: pattern.multiline,
    before: options.before,
    after: options.after,
    maxCount: options.maxCount,
    // A file without a match is found by searching it for one.
    mode: options.mode === "files_without_match" ? "files_with_matches" : options.mode,
    maxFileSize: options.maxFileSize,
    root: target.root,
    named: target.kind === "file" ? target.named : undefined,
    follow: target.kind === "file" && target.follow,
    invert: options.invert,
    spans: options.spans,
    replace: options.replace,
    countMatches: options.countMatches,
    binary: options.binary,
    followLinks: options.followLinks,
  };
}

/**
 * How glob, fuzzy find and grep get their listing: with caching off (every API's default), a walk
 * that is not stored; with caching on, the shared listing, and one forced, stored rescan when
 * the caller's filtered result came back empty from a listing older than
 * FS_SCAN_EMPTY_RECHECK_MS (a file created a moment ago may be missing from it). Depends on
 * `scan/`.
 */
import { FreshfsError } from "../errors.js";
import { liveTrees } from "../live/registry.js";
import {
  type Freshness,
  forceRescan,
  getOrScan,
  type ScanPolicy,
  type ScanResult,
  scanCachePolicy,
} from "../scan/cache.js";
import type { ScanEntry, WalkProgress } from "../scan/walk.js";

export interface ListingRequest {
  readonly root: string;
  readonly policy: ScanPolicy;
  readonly cache: boolean;
  /** Answer from the root's live tree (watched, synced per call) where it can be watched. */
  readonly watch?: boolean | undefined;
  /**
   * The search is cheap next to a sync (glob, fuzzy find: microseconds over a listing): run it
   * on the live listing while the sync is under way, and keep it if nothing changed.
   */
  readonly cheap?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: SearchProgress) => void) | undefined;
  /**
   * Called while a walk for this call goes on, with the entries listed so far (in final order):
   * grep starts searching them before the walk ends, as rg does.
   */
  readonly onListed?: ((entries: readonly ScanEntry[]) => void) | undefined;
}

/**
 * The request of a cheap search (glob, fuzzy find) over `root`'s listing, as `options` ask for
 * it: the cache and the live tree when asked, progress and the signal passed on.
 */
export function cheapRequest(
  root: string,
  policy: ScanPolicy,
  options: ListingOptions,
): ListingRequest {
  return {
    root,
    policy,
    cache: options.cache ?? false,
    watch: options.watch,
    cheap: true,
    signal: options.signal,
    onProgress: options.onProgress,
  };
}

/** Where a long search is, for a person waiting on it (a CLI's progress line). */
export interface SearchProgress {
  /** `walk`: listing the tree; `search`: reading files (grep). */
  readonly phase: "walk" | "search";
  /** Entries listed so far (walk), or files searched so far (search). */
  readonly done: number;
  /** Files to search in all (search phase); undefined while walking. */
  readonly total: number | undefined;
}

/** A search's answer, and which mode answered: every result says so. */
export interface Searched<T> {
  readonly value: T;
  readonly freshness: Freshness;
  /** Why the root is not watched, when watching was asked for. */
  readonly unwatched: string | undefined;
}

/**
 * Runs `search` over the listing of `request.root`; `isEmpty` says whether its result counts as
 * empty for the recheck. With `watch`, the live tree answers, synchronized with its watcher:
 * exact, so no recheck; where the root cannot be watched, the TTL policy below does.
 */
export async function searchListing<T>(
  request: ListingRequest,
  search: (listing: ScanResult) => T | Promise<T>,
  isEmpty: (result: T) => boolean,
): Promise<Searched<T>> {
  const answer = async (listing: ScanResult): Promise<Searched<T>> => ({
    value: await search(listing),
    freshness: listing.freshness,
    unwatched: listing.unwatched ?? unwatched,
  });
  let unwatched: string | undefined;
  if (request.watch && request.cache) {
    const attempt = request.cheap
      ? liveTrees.peek(request.root, request.policy, request.signal)
      : undefined;
    if (attempt) {
      const optimistic = await answer(attempt.snapshot);
      if (await attempt.settled) return optimistic;
    }
    // A cheap search may be answered from a daemon's saved listing while the tree's first walk
    // runs; grep waits for the walk, which ends in the live tree its content index needs.
    const live = await liveTrees.query(
      request.root,
      request.policy,
      { signal: request.signal, onProgress: walkProgress(request) },
      request.cheap === true,
    );
    if (live) return answer(live);
    unwatched = liveTrees.policy().enabled
      ? "the file system cannot be watched: the TTL policy applies"
      : "watching is off (FS_LIVE_WATCH=0, or not Linux): the TTL policy applies";
  }
  const { root, policy, signal } = request;
  const onProgress = walkProgress(request);
  if (!request.cache) return answer(await forceRescan(root, policy, { signal, onProgress }));
  const listing = await getOrScan(root, policy, { signal, onProgress });
  const first = await answer(listing);
  if (!isEmpty(first.value) || listing.cacheAgeMs < scanCachePolicy().emptyRecheckMs) {
    return first;
  }
  return answer(await forceRescan(root, policy, { store: true, signal, onProgress }));
}

function walkProgress(request: ListingRequest): ((walk: WalkProgress) => void) | undefined {
  const { onProgress: report, onListed } = request;
  if (!report && !onListed) return undefined;
  return (walk: WalkProgress) => {
    onListed?.(walk.listed);
    report?.({ phase: "walk", done: walk.entries, total: undefined });
  };
}

/**
 * What every search over a listing takes (glob, fuzzyFind and grep extend it): where, which
 * entries, how fresh, and one page of the answer.
 */
export interface ListingOptions {
  /** The directory searched (grep: or one file); relative paths resolve against the cwd. @default process.cwd() */
  path?: string | undefined;
  /**
   * Entries whose name starts with a dot (`.git` never). glob and fuzzyFind leave them out
   * (a pattern that names one, `.github/**`, still finds it): they answer "which files are
   * there", where caches and tool state in dot-directories would crowd out the sources. grep
   * searches them: it answers "where is this text", and the configuration an agent looks for
   * lives in `.github/`, `.vscode/`, `.eslintrc`.
   * @default false (grep: true)
   */
  hidden?: boolean | undefined;
  /** Leave out what `.gitignore`, `.ignore`, `.rgignore` and git's excludes leave out. @default true */
  gitignore?: boolean | undefined;
  /** Use the shared scan cache (and fill it). @default false */
  cache?: boolean | undefined;
  /**
   * Answer from the root's live tree: watched after the first walk, synchronized with the watcher
   * on every call, so the answer reflects every change completed before the call, by anyone.
   * Needs `cache`; where the root cannot be watched, the cache's TTL policy applies.
   * @default false
   */
  watch?: boolean | undefined;
  /** Search node_modules (where the ignore rules let it through). @default glob, fuzzyFind: when the pattern names node_modules; grep: true */
  includeNodeModules?: boolean | undefined;
  /**
   * Most results returned (paths, matches, or grep's records), after `offset`. glob's and
   * fuzzyFind's totals count every match; grep stops once the page is full and one record more
   * is found (it says `truncated`), so its total counts only that far.
   * @default unlimited (fuzzyFind: 100)
   */
  limit?: number | undefined;
  /** Results to skip first, to page through a long answer. @default 0 */
  offset?: number | undefined;
  /** Called now and then while a long walk (or grep's reading of files) goes on. */
  onProgress?: ((progress: SearchProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** What every search over a listing answers with, besides its records. */
export interface ListingAnswer {
  /** The canonical directory searched (grep: the named file's directory). */
  readonly root: string;
  /** More results exist beyond `offset + limit`. */
  readonly truncated: boolean;
  /** Which mode answered: `live` (watched), `walked` (a walk for this call) or `cached` (TTL). */
  readonly freshness: Freshness;
  /** Why the root was not watched, when `watch` asked for it. */
  readonly unwatched?: string | undefined;
}

/** A whole number >= 0 (or Infinity, where unlimited is allowed), or `fallback` when not given. */
export function countOption(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value >= 0) && value !== Number.POSITIVE_INFINITY) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `${name} must be a whole number >= 0, not ${value}.`,
    );
  }
  return value;
}

/** The page a search answers with: `limit` results after `offset`. */
export interface Page {
  readonly limit: number;
  readonly offset: number;
}

/** `limit` and `offset` checked, with the search's own default limit. */
export function pageOf(options: ListingOptions, defaultLimit = Number.POSITIVE_INFINITY): Page {
  return {
    limit: countOption(options.limit, "limit", defaultLimit),
    offset: countOption(options.offset, "offset", 0),
  };
}

/**
 * Options renamed when every search took `limit`: a caller still passing the old name would
 * otherwise get every result (grep: read the whole tree) without a word.
 */
const RENAMED: Readonly<Record<string, string>> = { maxResults: "limit", headLimit: "limit" };

/** Options from an untyped caller (a model, JSON) checked for shape before use. */
export function checkedOptions<T extends { signal?: AbortSignal | undefined }>(
  options: T | null | undefined,
): T {
  if (options === null || options === undefined) return {} as T;
  if (typeof options !== "object")
    throw new FreshfsError("INVALID_ARGUMENT", "The options must be an object.");
  for (const [old, name] of Object.entries(RENAMED)) {
    if (Object.hasOwn(options, old)) {
      throw new FreshfsError("INVALID_ARGUMENT", `${old} is now ${name} (with offset to page).`);
    }
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new FreshfsError("INVALID_ARGUMENT", "signal must be an AbortSignal.");
  }
  return options;
}

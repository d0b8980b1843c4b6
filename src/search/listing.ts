/**
 * How glob, fuzzy find and grep get their listing (contract 2.5, 2.6): with caching off, a walk
 * that is not stored; with caching on, the shared listing, and one forced, stored rescan when
 * the caller's filtered result came back empty from a listing older than
 * FS_SCAN_EMPTY_RECHECK_MS (a file created a moment ago may be missing from it). Depends on
 * `scan/`.
 */
import { FreshfsError } from "../errors.js";
import {
  forceRescan,
  getOrScan,
  type ScanPolicy,
  type ScanResult,
  scanCachePolicy,
} from "../scan/cache.js";
import type { WalkProgress } from "../scan/walk.js";

export interface ListingRequest {
  readonly root: string;
  readonly policy: ScanPolicy;
  readonly cache: boolean;
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: SearchProgress) => void) | undefined;
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

/**
 * Runs `search` over the listing of `request.root`; `isEmpty` says whether its result counts as
 * empty for the recheck.
 */
export async function searchListing<T>(
  request: ListingRequest,
  search: (listing: ScanResult) => T | Promise<T>,
  isEmpty: (result: T) => boolean,
): Promise<T> {
  const { root, policy, signal } = request;
  const report = request.onProgress;
  const onProgress = report
    ? (walk: WalkProgress) => report({ phase: "walk", done: walk.entries, total: undefined })
    : undefined;
  if (!request.cache) return search(await forceRescan(root, policy, { signal, onProgress }));
  const listing = await getOrScan(root, policy, { signal, onProgress });
  const result = await search(listing);
  if (!isEmpty(result) || listing.cacheAgeMs < scanCachePolicy().emptyRecheckMs) return result;
  return search(await forceRescan(root, policy, { store: true, signal, onProgress }));
}

/** Options from an untyped caller (a model, JSON) checked for shape before use. */
export function checkedOptions<T extends { signal?: AbortSignal | undefined }>(
  options: T | null | undefined,
): T {
  if (options === null || options === undefined) return {} as T;
  if (typeof options !== "object")
    throw new FreshfsError("INVALID_ARGUMENT", "The options must be an object.");
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new FreshfsError("INVALID_ARGUMENT", "signal must be an AbortSignal.");
  }
  return options;
}

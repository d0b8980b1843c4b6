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

export interface ListingRequest {
  readonly root: string;
  readonly policy: ScanPolicy;
  readonly cache: boolean;
  readonly signal?: AbortSignal | undefined;
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
  if (!request.cache) return search(await forceRescan(root, policy, { signal }));
  const listing = await getOrScan(root, policy, { signal });
  const result = await search(listing);
  if (!isEmpty(result) || listing.cacheAgeMs < scanCachePolicy().emptyRecheckMs) return result;
  return search(await forceRescan(root, policy, { store: true, signal }));
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

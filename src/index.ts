/**
 * freshfs: the file layer of a coding agent. The public API, exported by name; everything not
 * exported here is internal.
 */
export { FreshfsError, type FreshfsErrorCode } from "./errors.js";
export {
  configureScanCache,
  type ForceRescanOptions,
  forceRescan,
  getOrScan,
  invalidateFsScanAfterDelete,
  invalidateFsScanAfterRename,
  invalidateFsScanAfterWrite,
  invalidateFsScanCache,
  type ScanCachePolicy,
  type ScanOptions,
  type ScanPolicy,
  type ScanResult,
  scanCachePolicy,
} from "./scan/cache.js";
export type { EntryType, ScanEntry, ScanWarning, WalkProgress } from "./scan/walk.js";
export {
  type FuzzyFindOptions,
  type FuzzyFindResult,
  type FuzzyMatch,
  fuzzyFind,
} from "./search/fuzzy.js";
export { type GlobFileType, type GlobOptions, type GlobResult, glob } from "./search/glob.js";
export {
  type GrepLine,
  type GrepOptions,
  type GrepOutputMode,
  type GrepResult,
  grep,
} from "./search/grep/grep.js";
export { type PathLockOptions, withPathLock } from "./state/lock.js";
export {
  type CheckEditOptions,
  type EditState,
  type EditVerdict,
  FileStateTracker,
  type FileStateTrackerOptions,
  type GuardPolicy,
  type PartialReadPolicy,
  type ReadEntry,
  type RecordEditOptions,
  type RecordReadOptions,
} from "./state/tracker.js";

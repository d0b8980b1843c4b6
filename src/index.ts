/**
 * freshfs: the file layer of a coding agent. The public API, exported by name; everything not
 * exported here is internal.
 */

export type { AnsweredBy } from "./client/session.js";
export {
  type ContentIndexPolicy,
  type ContentIndexStats,
  configureContentIndex,
  contentIndexPolicy,
  contentIndexStats,
  type SnapshotStats,
  saveContentIndexSnapshots,
  waitForContentIndex,
} from "./content/registry.js";
export { snapshotDirPath } from "./content/snapshot-files.js";
export { FreshfsError, type FreshfsErrorCode } from "./errors.js";
export { decodeName, encodeName, fsPath, hasEscapedBytes } from "./io/bytes.js";
export { LOCK_STALE_MS, LOCK_WAIT_MS } from "./io/lockfile.js";
export {
  configureLiveTrees,
  type LiveTreePolicy,
  liveTreePolicy,
} from "./live/registry.js";
export {
  configureScanCache,
  type ForceRescanOptions,
  type Freshness,
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
export { explainPath, type PathExplanation } from "./scan/explain.js";
export { FILE_TYPES } from "./scan/ignore/default-types.js";
export type { IgnoreRule } from "./scan/ignore/pattern.js";
export type {
  EntryType,
  ScanEntry,
  ScanWarning,
  SkippedFile,
  WalkProgress,
} from "./scan/walk.js";
export {
  FUZZY_DEFAULT_LIMIT,
  type FuzzyFindOptions,
  type FuzzyFindResult,
  type FuzzyMatch,
  fuzzyFind,
} from "./search/fuzzy.js";
export { type GlobFileType, type GlobOptions, type GlobResult, glob } from "./search/glob.js";
export {
  type FormatGrepOptions,
  type FormattableLine,
  formatGrepLines,
} from "./search/grep/format.js";
export {
  GREP_DEFAULT_FILE_TIMEOUT_MS,
  GREP_DEFAULT_MAX_COLUMNS,
  GREP_DEFAULT_TIMEOUT_MS,
  GREP_MAX_FILE_BYTES,
  type GrepLine,
  type GrepOptions,
  type GrepOutputMode,
  type GrepResult,
  type GrepSubmatch,
  grep,
  grepFiles,
} from "./search/grep/grep.js";
export type { ListingAnswer, ListingOptions, SearchProgress } from "./search/listing.js";
export { type PathLockOptions, withPathLock } from "./state/lock.js";
export type { ReadWindow } from "./state/records.js";
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
export type {
  ApplyPatchParams,
  ApplyPatchResult,
  PatchedFile,
} from "./tools/apply-patch.js";
export type { Aliases } from "./tools/args.js";
export type { CallOptions } from "./tools/commit.js";
export type {
  AliasesOf,
  AnyTool,
  ContentBlock,
  ToolDefinition,
  ToolResult,
} from "./tools/definition.js";
export type { EditParams, EditResult, MultiEditParams } from "./tools/edit.js";
export type { DeleteParams, DeleteResult, RenameParams, RenameResult } from "./tools/files.js";
export {
  AMBIGUOUS_LINES_SHOWN,
  FIND_DEFAULT_LIMIT,
  GLOB_DEFAULT_LIMIT,
  GREP_TOOL_DEFAULT_LIMIT,
  GREP_TOOL_MAX_COLUMNS,
  GREP_TOOL_TIMEOUT_MS,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_DEPTH,
  LIST_MAX_LIMIT,
  MAX_FILE_BYTES,
  MAX_IMAGE_BYTES,
  MAX_RESULT_BYTES,
  PATCH_MAX_BYTES,
  PATCH_MAX_FILES,
  PDF_MAX_PAGES,
  PDF_TIMEOUT_MS,
  READ_DEFAULT_LIMIT,
  READ_MANY_MAX_FILES,
  READ_MAX_LINE_CHARS,
} from "./tools/limits.js";
export type { ListEntry, ListParams, ListResult, ListSort } from "./tools/list.js";
export type { ImageInfo, ImageType } from "./tools/media.js";
export type { MkdirParams, MkdirResult } from "./tools/mkdir.js";
export { boundText } from "./tools/output.js";
export type { PatchMatch } from "./tools/patch.js";
export { CODE_FILE_EXTENSIONS, CODE_FILE_NAMES } from "./tools/quotes.js";
export type { ReadParams, ReadResult } from "./tools/read.js";
export type { ReadManyFile, ReadManyParams, ReadManyResult } from "./tools/read-many.js";
export type {
  FindParams,
  FindToolResult,
  GlobParams,
  GlobToolResult,
  GrepParams,
  GrepToolResult,
  ListingParams,
  PagedParams,
} from "./tools/search.js";
export type { EntryKind, ReadState, StatParams, StatResult } from "./tools/stat.js";
export { TOOLS, type ToolMethod } from "./tools/table.js";
export {
  type Answered,
  Workspace,
  type WorkspaceOptions,
  type WorkspaceTools,
} from "./tools/workspace.js";
export type { WriteParams, WriteResult } from "./tools/write.js";

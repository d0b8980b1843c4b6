/**
 * grep's options: what a caller may ask (`GrepOptions`, every field with its default), and
 * `resolveGrepOptions`, which checks them once and fills every default, so the rest of grep
 * reads one complete shape and never tests for `undefined` again. Depends on `errors`,
 * `scan/ignore` (overrides, types), `search/listing` and grep's pattern compiler.
 */
import { FreshfsError } from "../../errors.js";
import type { ScanPolicy } from "../../scan/cache.js";
import { type GlobFilter, globFilter } from "../../scan/ignore/overrides.js";
import { type TypeFilter, typeFilter } from "../../scan/ignore/types.js";
import {
  checkedOptions,
  countOption,
  type ListingOptions,
  type Page,
  pageOf,
  type SearchProgress,
} from "../listing.js";
import {
  GREP_DEFAULT_FILE_TIMEOUT_MS,
  GREP_DEFAULT_MAX_COLUMNS,
  GREP_DEFAULT_TIMEOUT_MS,
  GREP_MAX_FILE_BYTES,
} from "./defaults.js";
import type { BinaryMode, SearchMode } from "./engine.js";
import { type CompiledPattern, compilePattern } from "./pattern.js";

export type GrepOutputMode = SearchMode | "files_without_match";

export interface GrepOptions extends ListingOptions {
  /** Only files matching these globs (`rg -g`; `!glob` excludes; no `/`: any depth). */
  glob?: string | readonly string[] | undefined;
  /** Like `glob`, matched without regard to case (`rg --iglob`); after `glob`, as rg takes them. */
  iglob?: string | readonly string[] | undefined;
  /** Every glob matched without regard to case (`rg --glob-case-insensitive`). @default false */
  globCaseInsensitive?: boolean | undefined;
  /**
   * Only files of these types (`rg -t`: ts, js, py, rust, go, md, json, ... `all`: any type;
   * rg 13's table of 169, `FILE_TYPES`).
   */
  type?: string | readonly string[] | undefined;
  /** Not files of these types (`rg -T`); where a file is of types named both ways, the last named wins. */
  typeNot?: string | readonly string[] | undefined;
  /** Only files at most this many directories down: 1 is the directory's own files (`--max-depth`). */
  maxDepth?: number | undefined;
  /** Follow symbolic links to files and directories (`-L`); a link back up is not followed twice. @default false */
  follow?: boolean | undefined;
  /**
   * With `watch`, use the live tree's content index: files it proves cannot match are not read
   * (built in the background at the first search, kept exact by the tree's events).
   * @default true
   */
  index?: boolean | undefined;
  /** The pattern is a literal string (`-F`). @default false */
  fixedStrings?: boolean | undefined;
  /**
   * The pattern's syntax: rg's (Rust's `regex` crate: `\pL`, `[[:alpha:]]`, `(?i)`, Unicode
   * `\w` and `\b`), or JavaScript's, for lookaround and backreferences (as rg's `-P`).
   * @default "rust"
   */
  syntax?: "rust" | "javascript" | undefined;
  /** @default false */
  ignoreCase?: boolean | undefined;
  /** Case-insensitive unless the pattern has a capital (`-S`). @default false */
  smartCase?: boolean | undefined;
  /** Whole words only (`-w`). @default false */
  word?: boolean | undefined;
  /** Whole lines only (`-x`; it overrides `word`). @default false */
  lineRegexp?: boolean | undefined;
  /** The lines that do not match are the result (`-v`). @default false */
  invert?: boolean | undefined;
  /**
   * Each match a line of its own (`-o`): its text (or replacement) as the line's, its column.
   * @default false
   */
  onlyMatching?: boolean | undefined;
  /**
   * Each match's text replaced by this template in the lines returned (`-r`; the files are not
   * touched): `$1`, `$name`, `${1}`, `${name}`, `$$` for a dollar.
   */
  replace?: string | undefined;
  /** Matching lines carry `column`, `offset` and `submatches` (byte offsets, as rg's `--json`). @default false */
  submatches?: boolean | undefined;
  /** `count` mode counts matches, not lines (`--count-matches`). @default false */
  countMatches?: boolean | undefined;
  /**
   * What a file with a NUL byte gets: `skip` (left out, counted in `skipped.binary`); `quit`,
   * rg's way with the files it finds: the matches before the first NUL, then a notice line;
   * `report`, rg's way with a file it is given (and `--binary`): one notice line when it
   * matches, searched whole; `text`: searched as any file (`-a`). @default "skip"
   */
  binary?: BinaryMode | undefined;
  /** Search binary files as text (`-a`): `binary: "text"`. @default false */
  text?: boolean | undefined;
  /** Matches may span lines (`-U`). @default false */
  multiline?: boolean | undefined;
  /** Context lines before each match (`-B`). @default 0 */
  before?: number | undefined;
  /** Context lines after each match (`-A`). @default 0 */
  after?: number | undefined;
  /** Context lines on both sides (`-C`), unless `before`/`after` say otherwise. @default 0 */
  context?: number | undefined;
  /** @default "content" */
  outputMode?: GrepOutputMode | undefined;
  /** Most matching lines per file (`-m`). @default unlimited */
  maxCount?: number | undefined;
  /** Larger files are skipped, and named in the result. @default GREP_MAX_FILE_BYTES (16 MiB) */
  maxFileSize?: number | undefined;
  /** Longer lines are cut, with a marker saying how much. @default GREP_DEFAULT_MAX_COLUMNS (500) */
  maxColumns?: number | undefined;
  /** A file on which the regex runs longer is abandoned and reported. @default GREP_DEFAULT_FILE_TIMEOUT_MS (5000) */
  fileTimeoutMs?: number | undefined;
  /** The search stops here and returns what it has, flagged partial. @default GREP_DEFAULT_TIMEOUT_MS (60000) */
  timeoutMs?: number | undefined;
}

const MODES: readonly GrepOutputMode[] = [
  "content",
  "files_with_matches",
  "files_without_match",
  "count",
];
const BINARY_MODES: readonly BinaryMode[] = ["skip", "quit", "report", "text"];

/** grep's options, checked, with every default filled in. */
export interface ResolvedGrep {
  readonly pattern: CompiledPattern;
  readonly mode: GrepOutputMode;
  /** `files_without_match`: every file is searched, and those with no match are the records. */
  readonly withoutMatch: boolean;
  readonly invert: boolean;
  /** Without `invert`: each match is a record of its own. */
  readonly onlyMatching: boolean;
  readonly replace: string | undefined;
  readonly submatches: boolean;
  /** Matching lines carry their matches' places (for `submatches`, `onlyMatching`, `replace`). */
  readonly spans: boolean;
  readonly countMatches: boolean;
  readonly binary: BinaryMode;
  /** Context lines (0 outside `content` mode). */
  readonly before: number;
  readonly after: number;
  readonly maxCount: number;
  readonly page: Page;
  /** Records needed to fill the page: once one more is in hand, the answer is truncated. */
  readonly wanted: number;
  readonly maxFileSize: number;
  /** `maxFileSize` was given: `grepFiles` leaves the larger files out, as `rg --files --max-filesize`. */
  readonly maxFileSizeGiven: boolean;
  readonly maxColumns: number;
  readonly fileTimeoutMs: number;
  readonly timeoutMs: number;
  /** The path searched, as given (a directory or one file). */
  readonly path: string;
  readonly globs: GlobFilter | undefined;
  readonly types: TypeFilter | undefined;
  readonly maxDepth: number;
  readonly includeNodeModules: boolean;
  readonly followLinks: boolean;
  readonly policy: ScanPolicy;
  /** The shared listings are gitignore-aware ones: a search without ignore rules walks on its own. */
  readonly cache: boolean;
  readonly watch: boolean;
  readonly index: boolean;
  readonly onProgress: ((progress: SearchProgress) => void) | undefined;
  readonly signal: AbortSignal | undefined;
}

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", message);
}

function list(value: string | readonly string[] | undefined, name: string): readonly string[] {
  if (value === undefined) return [];
  const items = typeof value === "string" ? [value] : value;
  if (!Array.isArray(items) || items.some((item) => typeof item !== "string" || item === "")) {
    throw invalid(`${name} must be a non-empty string or a list of them.`);
  }
  return items;
}

/** Checks `given` and fills every default; throws INVALID_ARGUMENT or INVALID_PATTERN. */
export function resolveGrepOptions(
  pattern: string | readonly string[],
  given: GrepOptions | undefined,
): ResolvedGrep {
  const options = checkedOptions(given);
  const mode = options.outputMode ?? "content";
  if (!MODES.includes(mode)) {
    throw invalid(
      `outputMode must be content, files_with_matches, files_without_match or count, not ${String(mode)}.`,
    );
  }
  const invert = options.invert ?? false;
  const onlyMatching = (options.onlyMatching ?? false) && !invert;
  const replace = options.replace;
  if (replace !== undefined && typeof replace !== "string") {
    throw invalid("replace must be a string.");
  }
  const submatches = options.submatches ?? false;
  const binary: BinaryMode = options.text ? "text" : (options.binary ?? "skip");
  if (!BINARY_MODES.includes(binary)) {
    throw invalid(`binary must be skip, quit, report or text, not ${String(binary)}.`);
  }
  const maxDepth = countOption(options.maxDepth, "maxDepth", Number.POSITIVE_INFINITY);
  const context = countOption(options.context, "context", 0);
  const before = countOption(options.before, "before", context);
  const after = countOption(options.after, "after", context);
  const maxCount = countOption(options.maxCount, "maxCount", Number.POSITIVE_INFINITY);
  const page = pageOf(options);
  const maxFileSize = countOption(options.maxFileSize, "maxFileSize", GREP_MAX_FILE_BYTES);
  const maxColumns = countOption(options.maxColumns, "maxColumns", GREP_DEFAULT_MAX_COLUMNS);
  const fileTimeoutMs = countOption(
    options.fileTimeoutMs,
    "fileTimeoutMs",
    GREP_DEFAULT_FILE_TIMEOUT_MS,
  );
  const timeoutMs = countOption(options.timeoutMs, "timeoutMs", GREP_DEFAULT_TIMEOUT_MS);
  const compiled = compilePattern(pattern, {
    fixedStrings: options.fixedStrings ?? false,
    ignoreCase: options.ignoreCase ?? false,
    smartCase: options.smartCase ?? false,
    word: options.word ?? false,
    multiline: options.multiline ?? false,
    lineRegexp: options.lineRegexp ?? false,
    syntax: options.syntax,
  });
  const globs = options.globCaseInsensitive
    ? globFilter([], [...list(options.glob, "glob"), ...list(options.iglob, "iglob")])
    : globFilter(list(options.glob, "glob"), list(options.iglob, "iglob"));
  const types = typeFilter(list(options.type, "type"), list(options.typeNot, "typeNot"));
  const gitignore = options.gitignore ?? true;
  const content = mode === "content";
  return {
    pattern: compiled,
    mode,
    withoutMatch: mode === "files_without_match",
    invert,
    onlyMatching,
    replace,
    submatches,
    spans: content && (submatches || onlyMatching || replace !== undefined),
    countMatches: options.countMatches ?? false,
    binary,
    before: content ? before : 0,
    after: content ? after : 0,
    maxCount,
    page,
    wanted: page.offset + page.limit,
    maxFileSize,
    maxFileSizeGiven: options.maxFileSize !== undefined,
    maxColumns,
    fileTimeoutMs,
    timeoutMs,
    path: options.path ?? process.cwd(),
    globs,
    types,
    maxDepth,
    includeNodeModules: options.includeNodeModules ?? true,
    followLinks: options.follow ?? false,
    policy: { includeHidden: options.hidden ?? true, useGitignore: gitignore },
    cache: (options.cache ?? false) && gitignore,
    watch: options.watch ?? false,
    index: options.index ?? true,
    onProgress: options.onProgress,
    signal: options.signal,
  };
}

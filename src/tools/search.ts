/**
 * The search tools with agent defaults: `glob`, `grep` and `find` (fuzzy) over every root (or
 * the `path` given, inside one), through the shared scan cache, with result caps, `truncated`
 * notices that say how to page on, and paths relative to the root. Depends on `search/`,
 * `tools/`.
 */
import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { elided, FreshfsError } from "../errors.js";
import type { Freshness } from "../scan/cache.js";
import { fuzzyFind } from "../search/fuzzy.js";
import { glob } from "../search/glob.js";
import { formatGrepLines } from "../search/grep/format.js";
import {
  type GrepOptions,
  type GrepOutputMode,
  type GrepResult,
  grepConfined,
} from "../search/grep/grep.js";
import { type Aliases, Args } from "./args.js";
import type { CallOptions, ToolContext } from "./commit.js";
import {
  FIND_DEFAULT_LIMIT,
  GLOB_DEFAULT_LIMIT,
  GREP_TOOL_DEFAULT_LIMIT,
  GREP_TOOL_MAX_COLUMNS,
  GREP_TOOL_TIMEOUT_MS,
  MAX_RESULT_BYTES,
} from "./limits.js";
import { fitting, NOTES_RESERVE_BYTES } from "./output.js";

/**
 * What the listing tools (list, glob, grep, find) name alike, so that one name means one thing
 * in each. Each tool documents its own default for `limit`.
 */
export interface ListingParams {
  /** The directory searched or listed (inside a root; grep: a file too). @default every root */
  path?: string;
  /** Most results shown (entries, paths, matches or records). */
  limit?: number | string;
}

/** The listing tools that page through a long answer (glob, grep). */
export interface PagedParams extends ListingParams {
  /** Results to skip first (paging). @default 0 */
  offset?: number | string;
}

export interface GlobParams extends PagedParams {
  /** A glob (`**\/*.ts`, `src/**`, `*.{js,json}`); without `/` it matches at any depth. */
  pattern?: string;
  /** Most paths shown. Alias: `head_limit`. @default 100 */
  limit?: number | string;
  head_limit?: number | string;
}

export interface GlobToolResult {
  /** Matching files, newest first, as the model should name them. */
  readonly files: readonly string[];
  /** Matches before the limit. */
  readonly total: number;
  readonly truncated: boolean;
  /** Which mode answered (the weakest over the roots searched): `live`, `walked` or `cached`. */
  readonly freshness: Freshness;
  readonly text: string;
}

export interface GrepParams extends PagedParams {
  /** A regular expression in rg's syntax (or a literal string with `fixed_strings`). */
  pattern?: string;
  /** More patterns: a line matching any of them (and `pattern`) matches, as rg's `-e a -e b`. */
  patterns?: readonly string[] | string;
  /** The lines that do not match (`-v`). Aliases: `invert_match`, `invert`. */
  "-v"?: boolean | string;
  /** Each match alone, on a line of its own (`-o`). Aliases: `only_matching`, `onlyMatching`. */
  "-o"?: boolean | string;
  /** Whole words only (`-w`). Aliases: `word_regexp`, `word`. */
  "-w"?: boolean | string;
  /** Only files at most this many directories down (1: the directory's own files). Alias: `maxDepth`. */
  max_depth?: number | string;
  /** Only files matching this glob (`*.ts`, `*.{ts,tsx}`, `!*.test.ts`). Alias: `include`. */
  glob?: string;
  /** Only files of this type (`ts`, `js`, `py`, `rust`, `go`, ...). */
  type?: string;
  /** `content` (lines), `files_with_matches` (paths) or `count`. Alias: `outputMode`. @default "files_with_matches" */
  output_mode?: GrepOutputMode;
  "-A"?: number | string;
  "-B"?: number | string;
  /** Lines around each match (content mode). Alias: `context`. */
  "-C"?: number | string;
  /** Case-insensitive. Aliases: `ignoreCase`, `ignore_case`. */
  "-i"?: boolean | string;
  /** Line numbers in content mode. @default true */
  "-n"?: boolean | string;
  /** The pattern is a literal string. Aliases: `literal`, `fixedStrings`. */
  fixed_strings?: boolean | string;
  /** Matches may span lines. */
  multiline?: boolean | string;
  /**
   * The pattern's syntax: `rust` (ripgrep's: Rust's regex crate) or `javascript` (lookaround,
   * backreferences). @default "rust"
   */
  syntax?: "rust" | "javascript" | string;
  /** Most records (lines, files or counts) shown. Alias: `limit`. @default 250 */
  head_limit?: number | string;
  invert_match?: boolean | string;
  invert?: boolean | string;
  only_matching?: boolean | string;
  onlyMatching?: boolean | string;
  word_regexp?: boolean | string;
  word?: boolean | string;
  maxDepth?: number | string;
  include?: string;
  outputMode?: GrepOutputMode;
  context?: number | string;
  ignoreCase?: boolean | string;
  ignore_case?: boolean | string;
  literal?: boolean | string;
  fixedStrings?: boolean | string;
}

export interface GrepToolResult {
  readonly mode: GrepOutputMode;
  /** `content`: `path:line:text` records (context lines `path-line-text`). */
  readonly lines: readonly { path: string; line: number; text: string; match: boolean }[];
  readonly files: readonly string[];
  readonly counts: readonly { path: string; count: number }[];
  /** Records found (at least; the search stops once the page is full). */
  readonly total: number;
  readonly truncated: boolean;
  /** The search ran out of time: only part of the answer. */
  readonly partial: boolean;
  /** Files not searched: the regex ran too long on them, or they could not be read or are too large. */
  readonly skipped: readonly string[];
  /** Which mode answered (the weakest over the roots searched): `live`, `walked` or `cached`. */
  readonly freshness: Freshness;
  readonly text: string;
}

export interface FindParams extends ListingParams {
  /** A few letters of the file meant: an abbreviation, a prefix, camelCase initials. Alias: `pattern`. */
  query?: string;
  /** Most matches shown. @default 20 */
  limit?: number | string;
  pattern?: string;
}

export interface FindToolResult {
  /** Best first. */
  readonly matches: readonly { path: string; type: "file" | "dir" | "symlink"; score: number }[];
  readonly total: number;
  readonly truncated: boolean;
  /** Which mode answered (the weakest over the roots searched): `live`, `walked` or `cached`. */
  readonly freshness: Freshness;
  readonly text: string;
}

const STRENGTH: Record<Freshness, number> = { live: 2, walked: 1, cached: 0 };

/** The weaker of two modes: an answer over several roots is as fresh as its stalest part. */
function weakest(a: Freshness, b: Freshness): Freshness {
  return STRENGTH[a] <= STRENGTH[b] ? a : b;
}

/** The directories to search: the `path` given (confined), else every root. */
function searchRoots(context: ToolContext, path: string | undefined): string[] {
  if (path === undefined || path === "") {
    // None open: say so, rather than answer "no matches" about files that may well exist.
    if (context.roots.given.length === 0) context.roots.confine(".", "path");
    return [...context.roots.real];
  }
  return [context.roots.confine(path, "path").real];
}

/**
 * The search ran where it was confined: the library resolves its path again, and a directory
 * swapped for a symbolic link in between would have it list (and grep read) outside the roots.
 * `base` may be a file (grep), searched from its directory.
 */
function assertSearchedAt(base: string, root: string): void {
  if (root === base) return;
  // A file searched from its directory (or removed since: nothing of it is shown then).
  if (root === dirname(base) && !statSync(base, { throwIfNoEntry: false })?.isDirectory()) return;
  throw new FreshfsError(
    "STALE",
    `${base} resolved to ${root} while it was searched (a symbolic link was put on its way); nothing from there is shown. Check the path, then retry.`,
    { path: base },
  );
}

/** A path found under `base`, as the model should see it. */
function shownUnder(context: ToolContext, base: string, relative: string): string {
  const absolute = relative === "" || relative === "." ? base : `${base}/${relative}`;
  return context.roots.display(absolute);
}

function pageNote(shown: number, total: number, offset: number, what: string): string {
  return `(Showing ${what} ${offset + 1}-${offset + shown} of ${total}. Use offset=${offset + shown} for more.)`;
}

/**
 * Pages through results gathered root by root: each root is asked for at most `offset + limit`
 * records, which is enough to cut the page out of their concatenation in root order.
 */
function page<T>(
  perRoot: readonly { items: readonly T[]; total: number }[],
  offset: number,
  limit: number,
) {
  const all = perRoot.flatMap((r) => r.items);
  const total = perRoot.reduce((sum, r) => sum + r.total, 0);
  const items = all.slice(offset, offset + limit);
  return { items, total, truncated: offset + items.length < total };
}

export async function globTool(
  context: ToolContext,
  input: GlobParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<GlobToolResult> {
  const args = new Args("glob", input, aliases);
  const pattern = args.requiredText("pattern");
  const path = args.string("path");
  const limit = args.integer("limit", { min: 1 }) ?? GLOB_DEFAULT_LIMIT;
  const offset = args.integer("offset") ?? 0;
  const bases = searchRoots(context, path);
  const perRoot: { items: { path: string; mtimeMs: number }[]; total: number }[] = [];
  let freshness: Freshness = "live";
  for (const base of bases) {
    // Newest first, as Claude Code's Glob: the files an agent is working on come up top.
    // Hidden entries only when the pattern names one (`.github/**`), as rg --files and fd.
    const result = await glob(pattern, {
      path: base,
      cache: context.cache,
      watch: context.watch,
      sortByMtime: true,
      limit: offset + limit,
      signal: call.signal,
      onProgress: call.onProgress,
    });
    assertSearchedAt(base, result.root);
    freshness = weakest(freshness, result.freshness);
    perRoot.push({
      items: result.matches.map((m) => ({
        path: shownUnder(context, result.root, m),
        mtimeMs: bases.length > 1 ? mtimeOf(result.root, m) : 0,
      })),
      total: result.totalMatches,
    });
  }
  // Several roots: one newest-first order over all of them (each root's first
  // `offset + limit` hold every file the page can show).
  if (perRoot.length > 1) {
    const merged = perRoot.flatMap((r) => r.items);
    merged.sort(
      (a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
    );
    perRoot.splice(0, perRoot.length, {
      items: merged,
      total: perRoot.reduce((n, r) => n + r.total, 0),
    });
  }
  const paged = page(perRoot, offset, limit);
  const total = paged.total;
  const files = pathsThatFit(paged.items.map((item) => item.path));
  const truncated = paged.truncated || files.length < paged.items.length;
  const lines =
    files.length === 0
      ? [noneFound(`No files match ${elided(pattern)}`, offset, total)]
      : [...files];
  if (truncated) lines.push("", pageNote(files.length, total, offset, "files"));
  return { files, total, truncated, freshness, text: lines.join("\n") };
}

function mtimeOf(root: string, relative: string): number {
  try {
    return lstatSync(`${root}/${relative}`).mtimeMs;
  } catch {
    return 0; // gone since the listing: last
  }
}

/** The first of `paths` that fit under the cap, one per line, with room for the notes after. */
function pathsThatFit(paths: readonly string[]): readonly string[] {
  const budget = MAX_RESULT_BYTES - NOTES_RESERVE_BYTES;
  return paths.slice(
    0,
    fitting(paths.length, (n) => paths.slice(0, n).join("\n"), budget),
  );
}

function noneFound(what: string, offset: number, total: number): string {
  return offset > 0 && total > 0
    ? `(offset=${offset} is past the last of ${total} results.)`
    : `${what}.`;
}

export async function findTool(
  context: ToolContext,
  input: FindParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<FindToolResult> {
  const args = new Args("find", input, aliases);
  const query = args.requiredText("query");
  const path = args.string("path");
  const limit = args.integer("limit", { min: 1 }) ?? FIND_DEFAULT_LIMIT;
  const scored: { path: string; type: "file" | "dir" | "symlink"; score: number }[] = [];
  let total = 0;
  let freshness: Freshness = "live";
  for (const base of searchRoots(context, path)) {
    const result = await fuzzyFind(query, {
      path: base,
      cache: context.cache,
      watch: context.watch,
      limit,
      signal: call.signal,
      onProgress: call.onProgress,
    });
    assertSearchedAt(base, result.root);
    freshness = weakest(freshness, result.freshness);
    total += result.totalMatches;
    for (const match of result.matches) {
      scored.push({
        path: shownUnder(context, result.root, match.path),
        type: match.type,
        score: match.score,
      });
    }
  }
  // Across roots, by score; within one root fuzzyFind's order already is.
  const best = scored.sort((a, b) => b.score - a.score).slice(0, limit);
  const shownAs = (m: (typeof best)[number]) => (m.type === "dir" ? `${m.path}/` : m.path);
  const matches = best.slice(0, pathsThatFit(best.map(shownAs)).length);
  const truncated = matches.length < total;
  const lines =
    matches.length === 0 ? [`No files match "${elided(query)}".`] : matches.map(shownAs);
  if (truncated)
    lines.push(
      "",
      `(Showing the best ${matches.length} of ${total} matches; a longer query narrows them.)`,
    );
  return { matches, total, truncated, freshness, text: lines.join("\n") };
}

const OUTPUT_MODES: readonly GrepOutputMode[] = ["content", "files_with_matches", "count"];
const SYNTAXES: readonly ("rust" | "javascript")[] = ["rust", "javascript"];

/** A grep call's arguments, read and defaulted. */
interface GrepRequest {
  readonly patterns: readonly string[];
  /** The patterns as one, as the text names them. */
  readonly shown: string;
  readonly path: string | undefined;
  readonly mode: GrepOutputMode;
  /** The content mode's line numbers. */
  readonly numbers: boolean;
  readonly limit: number;
  readonly offset: number;
  /** What the library's grep is asked, per root (path and page aside). */
  readonly options: GrepOptions;
}

/** The arguments in the order they are checked: the first bad one is the one reported. */
function readGrepArgs(args: Args): GrepRequest {
  const more = args.strings("patterns") ?? [];
  const single = more.length > 0 ? args.string("pattern") : args.requiredText("pattern");
  const patterns = single === undefined || single === "" ? more : [single, ...more];
  const invert = args.boolean("-v") ?? false;
  const onlyMatching = args.boolean("-o") ?? false;
  const word = args.boolean("-w") ?? false;
  const maxDepth = args.integer("max_depth", { min: 0 });
  const path = args.string("path");
  const glob = args.string("glob");
  const type = args.string("type");
  const mode = args.choice("output_mode", OUTPUT_MODES) ?? "files_with_matches";
  const contextLines = args.integer("-C");
  const after = args.integer("-A");
  const before = args.integer("-B");
  const ignoreCase = args.boolean("-i") ?? false;
  const numbers = args.boolean("-n") ?? true;
  const fixedStrings = args.boolean("fixed_strings") ?? false;
  const multiline = args.boolean("multiline") ?? false;
  const syntax = args.choice("syntax", SYNTAXES) ?? "rust";
  // 0 means no cap, as in Claude Code.
  const asked = args.integer("head_limit", { min: 0 }) ?? GREP_TOOL_DEFAULT_LIMIT;
  const offset = args.integer("offset") ?? 0;
  // Context only means something for lines; elsewhere it is ignored, as Claude Code documents.
  const lined = mode === "content";
  return {
    patterns,
    shown: patterns.join(" | "),
    path,
    mode,
    numbers,
    limit: asked === 0 ? Number.POSITIVE_INFINITY : asked,
    offset,
    options: {
      invert,
      onlyMatching,
      word,
      maxDepth,
      glob,
      type,
      ignoreCase,
      fixedStrings,
      multiline,
      syntax,
      context: lined ? contextLines : undefined,
      after: lined ? after : undefined,
      before: lined ? before : undefined,
      outputMode: mode,
      maxColumns: GREP_TOOL_MAX_COLUMNS,
      timeoutMs: GREP_TOOL_TIMEOUT_MS,
    },
  };
}

type GrepToolLine = GrepToolResult["lines"][number];
type GrepToolCount = GrepToolResult["counts"][number];

/** What the roots answered, root by root, as the model should see the paths. */
interface GrepGathered {
  readonly lines: { items: GrepToolLine[]; total: number }[];
  readonly files: { items: string[]; total: number }[];
  readonly counts: { items: GrepToolCount[]; total: number }[];
  partial: boolean;
  readonly skipped: string[];
  readonly notes: string[];
  freshness: Freshness;
}

async function grepRoots(
  context: ToolContext,
  request: GrepRequest,
  call: CallOptions,
): Promise<GrepGathered> {
  const { patterns, mode } = request;
  const gathered: GrepGathered = {
    lines: [],
    files: [],
    counts: [],
    partial: false,
    skipped: [],
    notes: [],
    freshness: "live",
  };
  for (const base of searchRoots(context, request.path)) {
    const result: GrepResult = await grepConfined(
      patterns.length === 1 ? request.shown : patterns,
      {
        ...request.options,
        path: base,
        cache: context.cache,
        watch: context.watch,
        limit: request.offset + request.limit,
        signal: call.signal,
        onProgress: call.onProgress,
      },
    );
    assertSearchedAt(base, result.root);
    gathered.freshness = weakest(gathered.freshness, result.freshness);
    // Relative to the directory searched (a file's own directory when `path` is a file).
    const name = (p: string) => shownUnder(context, result.root, p);
    gathered.lines.push({
      items: result.lines.map((l) => ({
        path: name(l.path),
        line: l.line,
        text: l.text,
        match: l.match,
      })),
      total: mode === "content" ? result.totalRecords : 0,
    });
    gathered.files.push({
      items: result.files.map(name),
      total: mode === "files_with_matches" ? result.totalRecords : 0,
    });
    gathered.counts.push({
      items: result.counts.map((c) => ({ path: name(c.path), count: c.count })),
      total: mode === "count" ? result.totalRecords : 0,
    });
    gathered.partial ||= result.partial;
    gathered.skipped.push(
      ...result.skipped.timedOut.map(name),
      ...result.skipped.tooLarge.map((f) => name(f.path)),
      ...result.skipped.unreadable.map((f) => name(f.path)),
      ...result.skipped.failed.map((f) => name(f.path)),
    );
    gathered.notes.push(...skippedNotes(result, name));
  }
  return gathered;
}

/** One page of records: those that fit under the cap, and their text. */
interface ShownPage<T> {
  readonly items: T[];
  readonly text: string;
  readonly total: number;
  readonly truncated: boolean;
}

/**
 * The page of `perRoot` at `offset`, cut to the records that fit under the cap (one line each,
 * or a context group's `--` more); the paging note then starts the next page where this one
 * was cut.
 */
function shownPage<T>(
  perRoot: readonly { items: readonly T[]; total: number }[],
  request: GrepRequest,
  render: (some: readonly T[]) => string,
): ShownPage<T> {
  const paged = page(perRoot, request.offset, request.limit);
  const budget = MAX_RESULT_BYTES - NOTES_RESERVE_BYTES;
  const n = fitting(paged.items.length, (k) => render(paged.items.slice(0, k)), budget);
  const items = paged.items.slice(0, n);
  return {
    items,
    text: render(items),
    total: paged.total,
    truncated: paged.truncated || n < paged.items.length,
  };
}

/** The gathered records as the tool's result: the page the mode shows, and the notes after it. */
function grepResult(request: GrepRequest, gathered: GrepGathered): GrepToolResult {
  const { mode, offset, options } = request;
  const none: ShownPage<never> = { items: [], text: "", total: 0, truncated: false };
  const lines =
    mode === "content"
      ? shownPage(gathered.lines, request, (some) =>
          formatGrepLines(some, {
            lineNumbers: request.numbers,
            context: (options.context ?? options.after ?? options.before ?? 0) > 0,
          }).join("\n"),
        )
      : none;
  const files =
    mode === "files_with_matches"
      ? shownPage(gathered.files, request, (some) => some.join("\n"))
      : none;
  const counts =
    mode === "count"
      ? shownPage(gathered.counts, request, (some) =>
          some.map((c) => `${c.path}:${c.count}`).join("\n"),
        )
      : none;
  const shown = mode === "content" ? lines : mode === "count" ? counts : files;
  const records = shown.items.length;
  let text =
    records === 0
      ? noneFound(`No matches for ${elided(request.shown)}`, offset, shown.total)
      : shown.text;
  const tail: string[] = [];
  if (shown.truncated) {
    const what = mode === "content" ? "lines" : mode === "count" ? "counts" : "files";
    tail.push(
      `(Showing ${what} ${offset + 1}-${offset + records}; more exist. Use offset=${offset + records} for more.)`,
    );
  }
  if (gathered.partial) tail.push("(The search ran out of time: these results are partial.)");
  tail.push(...gathered.notes);
  if (tail.length > 0) text = [text, "", ...tail].join("\n");
  return {
    mode,
    lines: lines.items,
    files: files.items,
    counts: counts.items,
    total: shown.total,
    truncated: shown.truncated,
    partial: gathered.partial,
    skipped: gathered.skipped,
    freshness: gathered.freshness,
    text,
  };
}

export async function grepTool(
  context: ToolContext,
  input: GrepParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<GrepToolResult> {
  const request = readGrepArgs(new Args("grep", input, aliases));
  return grepResult(request, await grepRoots(context, request, call));
}

// Files named per kind of skip; the rest are counted (a tree of build output can skip thousands).
const SKIPPED_NAMED = 20;

function named(paths: readonly string[]): string {
  const shown = paths.slice(0, SKIPPED_NAMED).join(", ");
  return paths.length > SKIPPED_NAMED ? `${shown} and ${paths.length - SKIPPED_NAMED} more` : shown;
}

function skippedNotes(result: GrepResult, name: (p: string) => string): string[] {
  const notes: string[] = [];
  const { tooLarge, unreadable, timedOut, failed } = result.skipped;
  if (tooLarge.length > 0) {
    notes.push(`(Skipped, too large to search: ${named(tooLarge.map((f) => name(f.path)))}.)`);
  }
  if (unreadable.length > 0) {
    notes.push(
      `(Skipped, unreadable: ${named(unreadable.map((f) => `${name(f.path)} (${f.code})`))}.)`,
    );
  }
  if (timedOut.length > 0) {
    notes.push(
      `(Skipped, the regex took too long on: ${named(timedOut.map(name))}. A simpler pattern may work.)`,
    );
  }
  if (failed.length > 0) {
    notes.push(`(Skipped, the regex failed on: ${named(failed.map((f) => name(f.path)))}.)`);
  }
  return notes;
}

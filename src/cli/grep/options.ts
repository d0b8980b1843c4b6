/**
 * grep's arguments resolved into what its searches need and how their results print (ripgrep's
 * hiargs): the patterns, the paths, the library's `GrepOptions` for each path, the printer and
 * its settings, the order of files. Every flag becomes an option of the library or a way of
 * printing its result. Reads the pattern files (`-f`); depends on `args`, the library's grep
 * options and `commands` (errors).
 */
import { readFileSync } from "node:fs";
import type { GrepOptions } from "../../search/grep/grep.js";
import { daemonWanted } from "../backend.js";
import { badInput } from "../commands.js";
import { fromCwd, io, RunElsewhere } from "../io.js";
import type { FileSort, GrepArgs } from "./args.js";

type BinaryMode = NonNullable<GrepOptions["binary"]>;

/** How the standard printer lays out lines, counts and paths (rg's printer settings). */
export interface PrintSettings {
  /** `-0`: a NUL after each path, where the printer would put a separator or line break. */
  readonly nul: boolean;
  readonly lineNumber: boolean;
  readonly withFilename: boolean;
  readonly heading: boolean;
  /** The column of a match is printed: `--column`, or `--vimgrep` unless `--no-column`. */
  readonly column: boolean;
  /** `--vimgrep`: a line with several matches printed once for each. */
  readonly vimgrep: boolean;
  readonly onlyMatching: boolean;
  /** Context lines are printed (-A, -B, -C or --passthru, not with --vimgrep), so gaps get a separator. */
  readonly showsContext: boolean;
  /** undefined: none (`--no-context-separator`). */
  readonly contextSeparator: string | undefined;
  readonly fieldMatchSeparator: string;
  readonly fieldContextSeparator: string;
  /** `-M`: longer lines (in bytes) are omitted; 0 or undefined, none is. */
  readonly maxColumns: number | undefined;
  readonly maxColumnsPreview: boolean;
  readonly trim: boolean;
}

/** One grep command, resolved: what each path's search is asked and how the results print. */
export interface GrepPlan {
  /** `-e` and `-f` in order, else the first operand. */
  readonly patterns: readonly string[];
  /** Searched one by one, in this order; undefined: the current directory. */
  readonly paths: readonly (string | undefined)[];
  /** `--files`: the files a search would read are listed, and nothing is searched. */
  readonly listFiles: boolean;
  /** `standard`, rg's JSON Lines (`--json`), or freshfs's one document (`--json-result`). */
  readonly printer: "standard" | "json" | "json-result";
  readonly print: PrintSettings;
  readonly sort: FileSort;
  /** `-q`: nothing printed, and the first match ends the search. */
  readonly quiet: boolean;
  /** `--no-messages`: no notes on stderr about paths and files that were not searched. */
  readonly noMessages: boolean;
  /** `--timeout` as given, to say which timeout stopped a search. */
  readonly timeoutMs: number | undefined;
  /** Search through the user's daemon (not with `--no-daemon` or FRESHFS_DAEMON=0). */
  readonly daemon: boolean;
  /** The options of every path's search but the path and its binary mode (`pathOptions`). */
  readonly search: Omit<GrepOptions, "path" | "binary">;
  /**
   * rg searches a file it finds up to its first NUL (`found`), and a file it is given (or
   * every file, with --binary or -uuu) whole, saying that it matches (`named`).
   */
  readonly binary: { readonly found: BinaryMode; readonly named: BinaryMode };
}

/** Resolves the arguments once; an argument that cannot be used throws INVALID_ARGUMENT. */
export function planGrep(args: GrepArgs): GrepPlan {
  const operands = [...args.operands];
  let patterns = [...args.patterns];
  for (const file of args.patternFiles) patterns.push(...readPatternFile(file));
  if (!args.patternsGiven && !args.files) {
    const first = operands.shift();
    if (first === undefined) throw badInput("grep needs PATTERN. See 'freshfs grep --help'.");
    patterns = [first];
  }
  if (args.json && args.summary !== undefined) {
    throw badInput("--json cannot be used with -c, --count-matches, -l or --files-without-match.");
  }
  if (args.multiline && args.multilineDotall && !args.javascript && !args.fixedStrings) {
    patterns = patterns.map((one) => `(?s:${one})`);
  }
  const print = printSettings(args);
  return {
    patterns,
    paths: operands.length > 0 ? operands : [undefined],
    listFiles: args.files,
    printer: args.jsonResult ? "json-result" : args.json ? "json" : "standard",
    print,
    sort: args.sort,
    quiet: args.quiet,
    noMessages: args.noMessages,
    timeoutMs: args.timeoutMs,
    daemon: daemonWanted(args.noDaemon),
    search: searchOptions(args, print),
    binary: binaryModes(args),
  };
}

/** The library's options for one path; `file`: the path names a file, not a directory. */
export function pathOptions(plan: GrepPlan, path: string | undefined, file: boolean): GrepOptions {
  return { ...plan.search, path, binary: file ? plan.binary.named : plan.binary.found };
}

function printSettings(args: GrepArgs): PrintSettings {
  const context = args.context ?? 0;
  const before = args.before ?? context;
  const after = args.after ?? context;
  return {
    nul: args.nul,
    lineNumber: args.lineNumber,
    withFilename: args.withFilename,
    heading: args.heading,
    column: args.column ?? args.vimgrep,
    vimgrep: args.vimgrep,
    onlyMatching: args.onlyMatching,
    showsContext: (before > 0 || after > 0 || args.passthru) && !args.vimgrep,
    contextSeparator: args.contextSeparator,
    fieldMatchSeparator: args.fieldMatchSeparator,
    fieldContextSeparator: args.fieldContextSeparator,
    maxColumns: args.maxColumns,
    maxColumnsPreview: args.maxColumnsPreview,
    trim: args.trim,
  };
}

function searchOptions(args: GrepArgs, print: PrintSettings): GrepPlan["search"] {
  const context = args.context ?? 0;
  return {
    hidden: args.hidden || args.unrestricted >= 2,
    gitignore: !(args.noIgnore || args.unrestricted >= 1),
    ignoreCase: args.caseMode === "insensitive",
    smartCase: args.caseMode === "smart",
    fixedStrings: args.fixedStrings,
    word: args.word,
    lineRegexp: args.lineRegexp,
    invert: args.invert,
    onlyMatching: args.onlyMatching,
    replace: args.replace,
    // With -r or a column, rg knows each match, and an omitted line says how many it had.
    submatches: args.json || args.vimgrep || print.column || args.replace !== undefined,
    multiline: args.multiline,
    syntax: args.javascript ? "javascript" : "rust",
    // --passthru: every line, as context around the matches, with no separator.
    before: args.passthru ? Number.POSITIVE_INFINITY : (args.before ?? context),
    // rg prints nothing past the last match -m counts, even with --passthru.
    after: args.passthru
      ? args.maxCount === undefined
        ? Number.POSITIVE_INFINITY
        : 0
      : (args.after ?? context),
    glob: args.globs.filter((g) => !g.insensitive).map((g) => g.glob),
    iglob: args.globs.filter((g) => g.insensitive).map((g) => g.glob),
    globCaseInsensitive: args.globCaseInsensitive,
    type: args.types,
    typeNot: args.typesNot,
    maxDepth: args.maxDepth,
    follow: args.follow,
    outputMode: outputMode(args),
    countMatches:
      args.summary === "count-matches" || (args.summary === "count" && args.onlyMatching),
    maxCount: args.maxCount,
    limit: args.quiet ? 1 : args.limit,
    // rg prints whole lines; -M is applied when printing, with rg's words.
    maxColumns: Number.POSITIVE_INFINITY,
    // rg needs no size bound, as it reads a file lazily; the worker reads each file whole
    // into memory, so only the bound keeps memory bounded (a 2 GiB file took 2.1 GB).
    maxFileSize: args.maxFileSize,
    timeoutMs: args.timeoutMs,
  };
}

function binaryModes(args: GrepArgs): GrepPlan["binary"] {
  if (args.text) return { found: "text", named: "text" };
  return { found: args.binary || args.unrestricted >= 3 ? "report" : "quit", named: "report" };
}

/** The library's record per file: -q and -l need only whether a file matches. */
function outputMode(args: GrepArgs): GrepOptions["outputMode"] {
  if (args.quiet || args.summary === "with-matches") return "files_with_matches";
  if (args.summary === "without-match") return "files_without_match";
  if (args.summary === "count" || args.summary === "count-matches") return "count";
  return "content";
}

function readPatternFile(path: string): string[] {
  if (path === "-" && !io().stdin) throw new RunElsewhere("-f - reads the user's stdin");
  let text: string;
  try {
    // `-f -`: the patterns come on stdin, as rg reads them.
    text = readFileSync(path === "-" ? 0 : fromCwd(path), "utf8");
  } catch (error) {
    throw badInput(`-f ${path}: ${(error as NodeJS.ErrnoException).code ?? "cannot be read"}.`);
  }
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

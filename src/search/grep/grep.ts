/**
 * grep: ripgrep's results for what agents ask (contract Part 3), over the shared listing.
 * Depends on `scan/`, `search/listing`, picomatch and the rest of `search/grep`.
 *
 * The caller's thread selects the files and assembles the answer; a worker thread reads and
 * searches them in path order, so results stream in sorted and a page (`offset + limit`) filled stops the search
 * early. A file on which the regex runs longer than `fileTimeoutMs` is abandoned (the worker is
 * terminated and a new one goes on after it) and reported; past `timeoutMs` the search stops
 * and the result is flagged partial. Either way the process keeps serving.
 */
import { realpathSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import picomatch from "picomatch";
import { contentIndexes } from "../../content/registry.js";
import type { ContentIndex } from "../../content/store.js";
import { FreshfsError, fromFsError, quoted } from "../../errors.js";
import { fsPath, hasEscapedBytes } from "../../io/bytes.js";
import { nodeFs } from "../../io/fs.js";
import { absolutePath, canonicalPath } from "../../io/paths.js";
import { liveTrees } from "../../live/registry.js";
import { type Freshness, forceRescan, type ScanResult } from "../../scan/cache.js";
import { byteForm, IgnoreFile, type PatternProblem } from "../../scan/ignore/pattern.js";
import { comparePaths } from "../../scan/order.js";
import { resolveScanRoot, type ScanEntry } from "../../scan/walk.js";
import { checkedOptions, type ListingOptions, pageOf, searchListing } from "../listing.js";
import type { BinaryMode, LineRecord, SearchMode } from "./engine.js";
import { opensInside, PROC_FD, rootPrefix } from "./inside.js";
import { compilePattern } from "./pattern.js";
import { GREP_WORKERS, grepPool, type PooledWorker } from "./pool.js";
import { planRegex } from "./regex/index.js";
import { FILE_TYPES } from "./types.js";
import type { WorkerBatch, WorkerOutcome, WorkerRange, WorkerSettings } from "./worker.js";

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
  /** Longer lines are cut, with a marker saying how much. @default 500 */
  maxColumns?: number | undefined;
  /** A file on which the regex runs longer is abandoned and reported. @default 5000 */
  fileTimeoutMs?: number | undefined;
  /** The search stops here and returns what it has, flagged partial. @default GREP_DEFAULT_TIMEOUT_MS (60000) */
  timeoutMs?: number | undefined;
}

export interface GrepLine {
  readonly path: string;
  /** 1-based. */
  readonly line: number;
  readonly text: string;
  /** A matching line, or a context line around one. */
  readonly match: boolean;
  /**
   * With `submatches` or `onlyMatching`, on a matching line: the 1-based byte column of its
   * first match (with `onlyMatching`, of this match).
   */
  readonly column?: number | undefined;
  /** With `submatches`: the line's byte offset in the file. */
  readonly offset?: number | undefined;
  /** With `submatches`, on a matching line: each match, its byte offsets in the line, its text. */
  readonly submatches?: readonly GrepSubmatch[] | undefined;
  /**
   * Not a line of the file but rg's notice about it (with `binary` `quit` or `report`): the
   * offset of its first NUL, and whether the search stopped there after the lines before
   * (`quit`) or the file matched as a whole (`report`; then `match` is true).
   */
  readonly binary?: { readonly offset: number; readonly stopped: boolean } | undefined;
}

export interface GrepSubmatch {
  /** Byte offsets in the line, [start, end). */
  readonly start: number;
  readonly end: number;
  /** The matched text (with `replace`, its replacement). */
  readonly text: string;
}

export interface GrepResult {
  readonly root: string;
  readonly mode: GrepOutputMode;
  /** `content` mode: matching and context lines, by path then line. */
  readonly lines: readonly GrepLine[];
  /** `files_with_matches` (and `files_without_match`) mode: the files, by path. */
  readonly files: readonly string[];
  /** `count` mode: matching lines per file, by path. */
  readonly counts: readonly { readonly path: string; readonly count: number }[];
  /** Records (lines, files or counts) found, or found before the search stopped at `offset + limit`. */
  readonly totalRecords: number;
  /** More records exist beyond `offset + limit`. */
  readonly truncated: boolean;
  /** Files searched (candidates after the filters). */
  readonly filesSearched: number;
  /** Files read to answer: fewer than `filesSearched` when the content index ruled some out. */
  readonly filesRead: number;
  readonly skipped: {
    readonly binary: number;
    readonly tooLarge: readonly { readonly path: string; readonly size: number }[];
    readonly unreadable: readonly { readonly path: string; readonly code: string }[];
    /** Files abandoned because the regex ran past `fileTimeoutMs` on them. */
    readonly timedOut: readonly string[];
    /** Files on which the regex itself failed (a stack overflow on a deeply nested match). */
    readonly failed: readonly { readonly path: string; readonly message: string }[];
  };
  /** The search stopped at `timeoutMs`: what is here is only part of the answer. */
  readonly partial: boolean;
  readonly warnings: readonly string[];
  /** Which mode answered: `live` (watched), `walked` (a walk for this call) or `cached` (TTL). */
  readonly freshness: Freshness;
  /** Why the root was not watched, when `watch` asked for it. */
  readonly unwatched?: string | undefined;
}

// Often enough for a progress line to move, rarely enough to cost nothing.
const PROGRESS_EVERY_MS = 100;

/**
 * grep's default `maxFileSize`: a file is read whole into memory to be searched (rg reads bit by
 * bit and needs no bound), so this is what keeps a search of a 2 GiB log from taking 2 GiB.
 */
export const GREP_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** grep's default `timeoutMs`: past it the search returns what it has, flagged partial. */
export const GREP_DEFAULT_TIMEOUT_MS = 60_000;

const DEFAULTS = {
  maxFileSize: GREP_MAX_FILE_BYTES,
  maxColumns: 500,
  fileTimeoutMs: 5000,
  timeoutMs: GREP_DEFAULT_TIMEOUT_MS,
};

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", message);
}

function count(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value >= 0) && value !== Number.POSITIVE_INFINITY) {
    throw invalid(`${name} must be a whole number >= 0, not ${value}.`);
  }
  return value;
}

function list(value: string | readonly string[] | undefined, name: string): readonly string[] {
  if (value === undefined) return [];
  const items = typeof value === "string" ? [value] : value;
  if (!Array.isArray(items) || items.some((item) => typeof item !== "string" || item === "")) {
    throw invalid(`${name} must be a non-empty string or a list of them.`);
  }
  return items;
}

const MAX_EXPANSIONS = 1024;

/** `a{b,c}d` → `abd`, `acd` (nested too), as ripgrep's globs allow; escapes kept. */
function expandBraces(glob: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") i++;
    else if (c === "{" && depth++ === 0) open = i;
    else if (c === "}" && depth > 0 && --depth === 0) {
      const inner = glob.slice(open + 1, i);
      const options: string[] = [];
      let start = 0;
      let level = 0;
      for (let j = 0; j < inner.length; j++) {
        const d = inner[j];
        if (d === "\\") j++;
        else if (d === "{") level++;
        else if (d === "}") level--;
        else if (d === "," && level === 0) {
          options.push(inner.slice(start, j));
          start = j + 1;
        }
      }
      options.push(inner.slice(start));
      const out: string[] = [];
      for (const option of options) {
        for (const expanded of expandBraces(glob.slice(0, open) + option + glob.slice(i + 1))) {
          out.push(expanded);
          if (out.length > MAX_EXPANSIONS) {
            throw new FreshfsError(
              "INVALID_PATTERN",
              `The glob ${quoted(glob)} expands to more than ${MAX_EXPANSIONS} patterns.`,
            );
          }
        }
      }
      return out;
    }
  }
  return [glob];
}

/** What the `-g` globs say of a file: an include glob took it, an exclude glob left it out, or none spoke. */
type GlobVerdict = "include" | "exclude" | "none";

interface GlobFilter {
  /** The file is searched (when nothing else rules it out). */
  readonly passes: (path: string) => boolean;
  /** The verdict itself: an include glob overrides ignore rules and hiddenness, as in rg. */
  readonly verdict: (path: string) => GlobVerdict;
}

/** Brace-expanded ignore-file lines of globs: a plain line includes, a `!` line excludes. */
function globLines(globs: readonly string[]): string[] {
  return globs.flatMap((glob) => {
    const negated = glob.startsWith("!");
    try {
      return expandBraces(negated ? glob.slice(1) : glob).map((one) => (negated ? `!${one}` : one));
    } catch (error) {
      // Name the glob as the caller wrote it, not the half-expanded one the recursion held.
      if (!(error instanceof FreshfsError)) throw error;
      throw new FreshfsError(
        "INVALID_PATTERN",
        `The glob ${quoted(glob)} expands to more than ${MAX_EXPANSIONS} patterns.`,
      );
    }
  });
}

/**
 * ripgrep's `-g`: globs in gitignore syntax (anchoring, `**`, directory-only), `!glob` excludes,
 * the last matching glob wins, an excluded directory takes its files with it, and when any glob
 * includes, a file no glob matches is left out. `globs` match with case, then `caseless` without
 * (`--iglob`; ASCII case, as the ignore files' `core.ignoreCase`), as rg adds them: every caseless
 * glob comes after every other, so where one matches it is the last match, and wins.
 */
function globFilter(globs: readonly string[], caseless: readonly string[]): GlobFilter | undefined {
  const sets = [
    { lines: globLines(caseless), ignoreCase: true },
    { lines: globLines(globs), ignoreCase: false },
  ].filter((set) => set.lines.length > 0);
  if (sets.length === 0) return undefined;
  const files = sets.map(({ lines, ignoreCase }) => {
    const rules = IgnoreFile.compile(lines.join("\n"), "glob", { ignoreCase });
    if (rules.problems.length > 0) {
      const problem = rules.problems[0] as PatternProblem;
      throw new FreshfsError(
        "INVALID_PATTERN",
        `Invalid glob ${quoted(problem.pattern)}: it ${problem.message}.`,
      );
    }
    return rules;
  });
  const includes = sets.some(({ lines }) => lines.some((line) => !line.startsWith("!")));
  const match = (name: string, isDir: boolean, path: string) => {
    for (const rules of files) {
      const rule = rules.match(name, isDir, path);
      if (rule) return rule;
    }
    return undefined;
  };
  const verdict = (path: string): GlobVerdict => {
    const bytes = byteForm(path);
    for (let slash = bytes.indexOf("/"); slash !== -1; slash = bytes.indexOf("/", slash + 1)) {
      const dir = bytes.slice(0, slash);
      if (match(dir.slice(dir.lastIndexOf("/") + 1), true, dir)?.negated) return "exclude";
    }
    const rule = match(bytes.slice(bytes.lastIndexOf("/") + 1), false, bytes);
    if (!rule) return "none";
    return rule.negated ? "exclude" : "include";
  };
  return {
    verdict,
    passes: (path) => {
      const said = verdict(path);
      return said === "include" || (said === "none" && !includes);
    },
  };
}

/**
 * `-L`: the files behind the listing's links, by the links' paths: a link to a file is the file;
 * a link to a directory is walked with the same rules (its own ignore files; those above the
 * link do not reach into it), and its links followed in turn. A directory already on the way
 * down (a link back up) is not walked again; a broken link is passed over.
 */
async function linkedFiles(
  root: string,
  listing: ScanResult,
  policy: { includeHidden: boolean; useGitignore: boolean },
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const out: string[] = [];
  const visit = async (entries: readonly ScanEntry[], base: string, above: ReadonlySet<string>) => {
    for (const entry of entries) {
      if (entry.type === "file" && base !== "") out.push(base + entry.path);
      if (entry.type !== "symlink") continue;
      const path = `${root}/${base}${entry.path}`;
      let real: string;
      let isDirectory: boolean;
      try {
        real = realpathSync(path);
        isDirectory = statSync(real).isDirectory();
      } catch {
        continue;
      }
      if (!isDirectory) {
        out.push(base + entry.path);
        continue;
      }
      if (above.has(real)) continue;
      const walked = await forceRescan(real, policy, { signal });
      await visit(walked.entries, `${base}${entry.path}/`, new Set([...above, real]));
    }
  };
  await visit(listing.entries, "", new Set([realpathSync(root)]));
  return out;
}

/**
 * The byte offsets in `text`'s UTF-8 of the character offsets `at` (matches' [start, end), in
 * order), each measured from the one before: a line of many matches is measured once.
 */
function byteOffsets(text: string, at: readonly number[]): number[] {
  const out: number[] = [];
  let char = 0;
  let byte = 0;
  for (const offset of at) {
    if (offset >= char) byte += Buffer.byteLength(text.slice(char, offset));
    else byte = Buffer.byteLength(text.slice(0, offset));
    char = offset;
    out.push(byte);
  }
  return out;
}

/** Directories down to a listed file: 1 for a file of the root itself. */
function depthOf(path: string): number {
  let depth = 1;
  for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) depth++;
  return depth;
}

interface TypeFilter {
  readonly passes: (path: string) => boolean;
  /** A `type` selected it: that overrides hiddenness, as in rg. */
  readonly selects: (path: string) => boolean;
}

function typeGlobs(name: string): readonly string[] {
  if (name === "all") return Object.values(FILE_TYPES).flat();
  const known = Object.hasOwn(FILE_TYPES, name) ? FILE_TYPES[name] : undefined;
  if (!known) {
    throw invalid(
      `Unknown file type ${JSON.stringify(name)} (rg's ${Object.keys(FILE_TYPES).length} types, and all; 'freshfs grep --type-list' lists them).`,
    );
  }
  return known;
}

/**
 * rg's `-t` and `-T`: of the types named, the last that holds the file decides (selected, or
 * not); a file of no type named is searched only when no type was selected.
 */
function typeFilter(types: readonly string[], typesNot: readonly string[]): TypeFilter | undefined {
  if (types.length === 0 && typesNot.length === 0) return undefined;
  // rg adds the selections first, then the negations: a negation wins over a selection.
  const named = [
    ...types.map((name) => ({ name, select: true })),
    ...typesNot.map((name) => ({ name, select: false })),
  ].map(({ name, select }) => ({
    select,
    test: picomatch(typeGlobs(name) as string[], { dot: true, basename: true, posix: true }),
  }));
  const selecting = types.length > 0;
  const verdict = (path: string): boolean | undefined => {
    for (let i = named.length - 1; i >= 0; i--) {
      const one = named[i] as (typeof named)[number];
      if (one.test(path)) return one.select;
    }
    return undefined;
  };
  return {
    passes: (path) => verdict(path) ?? !selecting,
    selects: (path) => verdict(path) === true,
  };
}

function cut(text: string, maxColumns: number): string {
  if (text.length <= maxColumns) return text;
  return `${text.slice(0, maxColumns)} [… ${text.length - maxColumns} more characters]`;
}

/**
 * Files per range handed to a worker: small enough to balance two workers and for searches to
 * take turns at the pool, large enough to be cheap.
 */
const RANGE = 512;
/** Ranges each worker gets at least, when the files are known at the start (see `rangeFor`). */
const RANGES_PER_WORKER = 8;
const SHORTEST_RANGE = 16;

/**
 * Files per range for a search of `files` files known at the start: shorter ranges for fewer
 * files, so the workers end together. The index's candidates are few and uneven (a block of a
 * large file beside a header of a line): `-i PM_RESUME` on the Linux tree read 1,695 files in 4
 * ranges of 512, and each worker was idle a third of the search, waiting for the other's last.
 */
function rangeFor(files: number): number {
  const even = Math.ceil(files / (GREP_WORKERS * RANGES_PER_WORKER));
  return Math.max(SHORTEST_RANGE, Math.min(RANGE, even));
}

/**
 * How many workers search at once: one per core when there is enough to share, as rg runs one
 * thread per core (FS_GREP_WORKERS overrides, to measure the curve). Reading dominates; the
 * curve on the benchmark machine is in BENCHMARKS.md.
 */
function workerCount(files: number, range: number): number {
  return Math.max(1, Math.min(GREP_WORKERS, Math.ceil(files / range)));
}

interface Collected {
  readonly timedOut: number[];
  partial: boolean;
}

// Node clamps a longer timer to 1 ms: a deadline further away than this is no deadline.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

let searches = 0;
let ranges = 0;

/**
 * Runs the search over `files` (relative to `search.root`) in pooled worker threads: one or two
 * lanes, each borrowing a worker per range of files. Results reach `consume` strictly in file
 * order (so paging can stop the search early: `consume` returns false). A file on which the
 * regex runs past the per-file budget is abandoned: its worker is terminated and the range goes
 * on after it in another. The deadline counts from here, time spent waiting for a worker
 * included.
 */
/**
 * The files a search goes through: all known at the start, or appended while a walk lists
 * them (in final order), until `finish`.
 */
class FileFeed {
  readonly #files: readonly string[];
  /** The same array, while files are pushed (none for a feed complete from the start). */
  readonly #growing: string[] | undefined;
  #complete: boolean;
  #waiters: (() => void)[] = [];

  /** All the files, complete (the array is not copied); or none yet, to be pushed. */
  constructor(files: readonly string[] | undefined) {
    this.#growing = files ? undefined : [];
    this.#files = files ?? (this.#growing as string[]);
    this.#complete = files !== undefined;
  }

  get files(): readonly string[] {
    return this.#files;
  }

  get complete(): boolean {
    return this.#complete;
  }

  push(paths: readonly string[]): void {
    if (paths.length === 0) return;
    for (const path of paths) this.#growing?.push(path);
    this.#wake();
  }

  finish(): void {
    this.#complete = true;
    this.#wake();
  }

  /** Resolves at the next push, at the end, or when `signal` fires. */
  next(signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#complete) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
      this.#waiters.push(done);
    });
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

async function runSearch(
  search: WorkerSettings,
  feed: FileFeed,
  consume: (index: number, outcome: WorkerOutcome | undefined) => boolean,
  budget: { fileTimeoutMs: number; timeoutMs: number; signal: AbortSignal | undefined },
  stretches: ReadonlyMap<number, readonly number[]>,
  branches: ReadonlyMap<number, number>,
): Promise<Collected> {
  const collected: Collected = { timedOut: [], partial: false };
  const { files } = feed;
  if (files.length === 0 && feed.complete) return collected;
  const id = ++searches;
  const rangeFiles = feed.complete ? rangeFor(files.length) : RANGE;
  /**
   * Ranges to search again (after a worker was lost in one): `key` is where the range began
   * (progress is kept under it). New ranges are cut from the feed, `rangeFiles` files each (the
   * last shorter, once the feed is complete), so every range starts at a multiple of it.
   */
  const queue: { key: number; from: number; end: number }[] = [];
  let cut = 0;
  const outcomes = new Map<number, WorkerOutcome>();
  /** For each range: every file before this index is done. */
  const progress = new Map<number, number>();
  const skip: number[] = [];
  let consumed = 0;

  // Every way a search ends early (the caller's abort, the deadline, a page filled) halts every
  // lane at once, whether it is searching or waiting for a worker.
  const halt = new AbortController();
  const stop = () => halt.abort();
  budget.signal?.addEventListener("abort", stop, { once: true });
  const deadline =
    budget.timeoutMs <= LONGEST_TIMER_MS
      ? setTimeout(() => {
          collected.partial = true;
          stop();
        }, budget.timeoutMs)
      : undefined;

  const advance = () => {
    while (consumed < files.length && !halt.signal.aborted) {
      const key = consumed - (consumed % rangeFiles);
      if (consumed >= (progress.get(key) ?? key)) return;
      const outcome = outcomes.get(consumed);
      outcomes.delete(consumed);
      if (!consume(consumed, outcome)) stop();
      consumed++;
    }
    if (consumed >= files.length && feed.complete) stop();
  };

  /** The entries of `map` for files `from` to `end`, as a record (it crosses to a worker). */
  const within = <T>(map: ReadonlyMap<number, T>, from: number, end: number) => {
    if (map.size === 0) return undefined;
    const out: Record<number, T> = {};
    for (let i = from; i < end; i++) {
      const these = map.get(i);
      if (these !== undefined) out[i] = these;
    }
    return out;
  };

  type Ending = "done" | "halt" | { stuck: number; outside: boolean } | { failed: number };

  /**
   * The file the worker is stuck on, still open in it, leads outside the root (a directory
   * swapped for a link): it is skipped without being named, as the worker would have reported
   * it. Naming it would tell that the regex backtracks on what the outside file holds. When
   * the descriptor cannot be read (the worker moved on after all), it is named as before.
   */
  const stuckOutside = (currentFile: Int32Array, index: number): boolean => {
    const fd = Atomics.load(currentFile, 1);
    if (PROC_FD === undefined || fd < 0) return false;
    try {
      const inside = opensInside(fd, rootPrefix(search.root), search.named);
      return !inside && Atomics.load(currentFile, 0) === index;
    } catch {
      return false;
    }
  };

  /** Searches one range in `worker`, watching it. */
  const searchRange = (worker: PooledWorker, range: { key: number; from: number; end: number }) =>
    new Promise<Ending>((resolve) => {
      const rangeId = ++ranges;
      const currentFile = worker.current;
      let lastIndex = Atomics.load(currentFile, 0);
      let lastChange = performance.now();
      let settled = false;
      const finish = (how: Ending) => {
        if (settled) return;
        settled = true;
        clearInterval(watch);
        halt.signal.removeEventListener("abort", onHalt);
        worker.onMessage = undefined;
        worker.onError = undefined;
        resolve(how);
      };
      const watch = setInterval(
        () => {
          const index = Atomics.load(currentFile, 0);
          const now = performance.now();
          if (index !== lastIndex) {
            lastIndex = index;
            lastChange = now;
          } else if (index >= range.from && now - lastChange >= budget.fileTimeoutMs) {
            finish({ stuck: index, outside: stuckOutside(currentFile, index) });
          }
        },
        Math.min(100, budget.fileTimeoutMs),
      );
      const onHalt = () => finish("halt");
      halt.signal.addEventListener("abort", onHalt, { once: true });
      worker.onMessage = (message) => {
        const batch = message as WorkerBatch;
        if (batch.id !== rangeId) return;
        for (const [index, outcome] of batch.results) outcomes.set(index, outcome);
        progress.set(range.key, batch.next);
        // A worker done with its range is idle, even if what it sent ends the search.
        if (batch.done) finish("done");
        advance();
      };
      worker.onError = () => finish({ failed: Atomics.load(currentFile, 0) });
      const settings = worker.search === id ? undefined : search;
      worker.search = id;
      worker.thread.postMessage({
        type: "range",
        id: rangeId,
        search: id,
        settings,
        start: range.from,
        files: files.slice(range.from, range.end).join("\0"),
        skip,
        stretches: within(stretches, range.from, range.end),
        branches: within(branches, range.from, range.end),
      } satisfies WorkerRange);
    });

  /**
   * One lane: ranges from the queue until it empties or the search halts. A worker is kept
   * from range to range while no other search waits for one, and given back after a range when
   * one does, so that a long search does not hold workers others are queued for.
   */
  const nextRange = async (): Promise<{ key: number; from: number; end: number } | undefined> => {
    for (;;) {
      if (halt.signal.aborted) return undefined;
      const again = queue.shift();
      if (again) return again;
      const ready = files.length - cut;
      if (ready >= rangeFiles || (feed.complete && ready > 0)) {
        const range = { key: cut, from: cut, end: Math.min(files.length, cut + rangeFiles) };
        cut = range.end;
        return range;
      }
      if (feed.complete) return undefined;
      await feed.next(halt.signal);
    }
  };

  const runLane = async (): Promise<void> => {
    let worker: PooledWorker | undefined;
    for (;;) {
      const range = await nextRange();
      if (!range) break;
      if (!worker) worker = await grepPool.acquire(halt.signal);
      if (!worker) {
        queue.unshift(range);
        return;
      }
      const ending = await searchRange(worker, range);
      if (ending === "done") {
        if (grepPool.waiting > 0) {
          grepPool.release(worker);
          worker = undefined;
        }
        continue;
      }
      if (ending === "halt") {
        grepPool.retire(worker);
        return;
      }
      // Stuck on a file (the regex ran past its budget) or crashed on one: report it, and
      // go on after it in another worker.
      grepPool.discard(worker);
      worker = undefined;
      const index = "stuck" in ending ? ending.stuck : ending.failed;
      if (index < range.from) {
        throw new FreshfsError("IO_ERROR", "The search worker failed before it searched a file.");
      }
      if (!("outside" in ending && ending.outside)) collected.timedOut.push(index);
      skip.push(index);
      queue.unshift({
        key: range.key,
        from: progress.get(range.key) ?? range.from,
        end: range.end,
      });
    }
    if (worker) grepPool.release(worker);
  };

  try {
    const lanes = workerCount(feed.complete ? files.length : Number.POSITIVE_INFINITY, rangeFiles);
    await Promise.all(Array.from({ length: lanes }, () => runLane()));
  } finally {
    // A lane that failed leaves the others to halt.
    stop();
    clearTimeout(deadline);
    budget.signal?.removeEventListener("abort", stop);
  }
  if (budget.signal?.aborted) throw new FreshfsError("ABORTED", "The search was aborted.");
  return collected;
}

/** Whether `list` begins with every item of `prefix`. */
function startsWith(list: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > list.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (list[i] !== prefix[i]) return false;
  return true;
}

/** Searches for `pattern` (or any of several, as rg's `-e a -e b`; none matches nothing). */
export function grep(
  pattern: string | readonly string[],
  given: GrepOptions = {},
): Promise<GrepResult> {
  return search(pattern, given, false);
}

/**
 * The files `grep` would search with these options (`rg --files`), by path, in `files`: the
 * listing's, filtered by the globs, types, depth and links as a search would be; none is read.
 */
export function grepFiles(given: GrepOptions = {}): Promise<GrepResult> {
  return search([], { ...given, outputMode: "files_with_matches" }, false, true);
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

async function search(
  pattern: string | readonly string[],
  given: GrepOptions,
  confined: boolean,
  listOnly = false,
): Promise<GrepResult> {
  const options = checkedOptions(given);
  const mode = options.outputMode ?? "content";
  if (
    mode !== "content" &&
    mode !== "files_with_matches" &&
    mode !== "files_without_match" &&
    mode !== "count"
  ) {
    throw invalid(
      `outputMode must be content, files_with_matches, files_without_match or count, not ${String(mode)}.`,
    );
  }
  const withoutMatch = mode === "files_without_match";
  const invert = options.invert ?? false;
  const onlyMatching = (options.onlyMatching ?? false) && !invert;
  const replace = options.replace;
  if (replace !== undefined && typeof replace !== "string") {
    throw invalid("replace must be a string.");
  }
  const submatches = options.submatches ?? false;
  const spans = mode === "content" && (submatches || onlyMatching || replace !== undefined);
  const followLinks = options.follow ?? false;
  const binaryMode: BinaryMode = options.text ? "text" : (options.binary ?? "skip");
  if (!["skip", "quit", "report", "text"].includes(binaryMode)) {
    throw invalid(`binary must be skip, quit, report or text, not ${String(binaryMode)}.`);
  }
  const maxDepth = count(options.maxDepth, "maxDepth", Number.POSITIVE_INFINITY);
  const context = count(options.context, "context", 0);
  const before = count(options.before, "before", context);
  const after = count(options.after, "after", context);
  const maxCount = count(options.maxCount, "maxCount", Number.POSITIVE_INFINITY);
  const { limit, offset } = pageOf(options);
  const maxFileSize = count(options.maxFileSize, "maxFileSize", DEFAULTS.maxFileSize);
  const maxColumns = count(options.maxColumns, "maxColumns", DEFAULTS.maxColumns);
  const fileTimeoutMs = count(options.fileTimeoutMs, "fileTimeoutMs", DEFAULTS.fileTimeoutMs);
  const timeoutMs = count(options.timeoutMs, "timeoutMs", DEFAULTS.timeoutMs);
  const compiled = compilePattern(pattern, {
    fixedStrings: options.fixedStrings ?? false,
    ignoreCase: options.ignoreCase ?? false,
    smartCase: options.smartCase ?? false,
    word: options.word ?? false,
    multiline: options.multiline ?? false,
    lineRegexp: options.lineRegexp ?? false,
    syntax: options.syntax,
  });
  const insensitive = options.globCaseInsensitive ?? false;
  const globs = insensitive
    ? globFilter([], [...list(options.glob, "glob"), ...list(options.iglob, "iglob")])
    : globFilter(list(options.glob, "glob"), list(options.iglob, "iglob"));
  const types = typeFilter(list(options.type, "type"), list(options.typeNot, "typeNot"));
  const includeNodeModules = options.includeNodeModules ?? true;
  if (options.signal?.aborted) throw new FreshfsError("ABORTED", "The search was aborted.");

  // One file, or the files of a directory's listing that pass the filters.
  const target = absolutePath(options.path ?? process.cwd());
  let isFile: boolean;
  try {
    isFile = statSync(fsPath(target)).isFile();
  } catch (error) {
    throw fromFsError(error, "search", target);
  }
  let root: string;
  let candidates: string[];
  let named: string | undefined;
  // A single file named: read now, whatever any listing says.
  let freshness: Freshness = "walked";
  let unwatched: string | undefined;
  let follow = false;
  let listed: ScanResult | undefined;
  let index: ContentIndex | undefined;
  /** The files read, in order: the candidates, or those the index could not rule out. */
  let toSearch: readonly string[] = [];
  /** Index in `candidates` of each file searched (when the index left some out). */
  let positions: number[] | undefined;
  /** Files the index knows to be binary, by index in `candidates`, ascending. */
  let knownBinary: number[] = [];
  const stretches = new Map<number, readonly number[]>();
  /** Which alternatives each file searched can hold, by index in `toSearch` (the index says). */
  const branches = new Map<number, number>();
  /** A search started while the walk lists the files it goes through. */
  let running: Promise<Collected> | undefined;
  let feed: FileFeed | undefined;
  let detachStream = () => {};

  const lines: GrepLine[] = [];
  const files: string[] = [];
  const counts: { path: string; count: number }[] = [];
  let records = 0;
  let binary = 0;
  let binaryCounted = 0;
  /** Counts the known binary files before candidate `upTo`, as reading them would have. */
  const countBinaryBefore = (upTo: number) => {
    while (binaryCounted < knownBinary.length && (knownBinary[binaryCounted] as number) < upTo) {
      binary++;
      binaryCounted++;
    }
  };
  const tooLarge: { path: string; size: number }[] = [];
  const unreadable: { path: string; code: string }[] = [];
  const failed: { path: string; message: string }[] = [];
  const wanted = offset + limit;
  const keep = () => records > offset && records <= wanted;
  // Results arrive in path order; take them in order, and stop once one record more than
  // the page is in hand (that one says the answer is truncated).
  const report = options.onProgress;
  // The first result is reported at once: a progress line shows the search has begun.
  let reportedAt = Number.NEGATIVE_INFINITY;
  const consume = (at: number, outcome: WorkerOutcome | undefined): boolean => {
    if (report && performance.now() - reportedAt >= PROGRESS_EVERY_MS) {
      reportedAt = performance.now();
      report({ phase: "search", done: at + 1, total: toSearch.length });
    }
    if (positions) countBinaryBefore(positions[at] as number);
    const path = toSearch[at] as string;
    // A file that was read and held no match; binary, unreadable or too large is not one.
    if (!outcome || outcome.kind === "none") return withoutMatch ? noMatch(path) : true;
    if (outcome.kind === "binary") binary++;
    else if (outcome.kind === "too-large") tooLarge.push({ path, size: outcome.size });
    else if (outcome.kind === "unreadable") {
      // Deleted since the listing was taken (a cached one, say): not there, as rg would see it.
      if (outcome.code !== "ENOENT" && outcome.code !== "ENOTDIR") {
        unreadable.push({ path, code: outcome.code });
      }
    } else if (outcome.kind === "failed") failed.push({ path, message: outcome.message });
    else if (outcome.kind === "hits") {
      if (withoutMatch) return true;
      const binaryAt = outcome.binaryAt;
      // rg counts nothing in a file it stopped searching at a NUL.
      if (binaryAt !== undefined && binaryMode === "quit" && mode === "count") {
        binary++;
        return true;
      }
      if (mode === "content") {
        for (const record of outcome.lines as LineRecord[]) {
          if (record.length === 3 || !record[2]) {
            records++;
            if (keep()) {
              const [line, text, match] = record;
              lines.push(
                record.length === 3 || !submatches
                  ? { path, line, text: cut(text, maxColumns), match }
                  : {
                      path,
                      line,
                      text: cut(text, maxColumns),
                      match,
                      offset: record[3],
                      submatches: [],
                    },
              );
            }
          } else if (onlyMatching) {
            // Each match a line of its own (context lines stay whole, as rg's -o shows them).
            const [line, text, , , at, texts] = record;
            const bytes = byteOffsets(text, at);
            for (let k = 0; k < texts.length; k++) {
              records++;
              if (keep()) {
                const column = (bytes[2 * k] as number) + 1;
                lines.push({
                  path,
                  line,
                  text: cut(texts[k] as string, maxColumns),
                  match: true,
                  column,
                });
              }
            }
          } else {
            records++;
            if (keep()) lines.push(detailed(path, record));
          }
        }
        // After the lines before its first NUL, rg's notice: it stopped there, or the file
        // matched (a notice that is the file's only record counts as one).
        if (binaryAt !== undefined) {
          const stopped = binaryMode === "quit";
          if (!stopped && outcome.lines.length === 0) records++;
          if (keep()) {
            const notice = { offset: binaryAt, stopped };
            lines.push({ path, line: 0, text: "", match: !stopped, binary: notice });
          }
        }
      } else {
        records++;
        if (keep()) {
          if (mode === "count") counts.push({ path, count: outcome.matches });
          else files.push(path);
        }
      }
    }
    return records <= wanted;
  };
  /** A matching line with its matches: replaced (`replace`), and placed (`submatches`). */
  const detailed = (
    path: string,
    [line, text, , offset, at, texts]: [number, string, boolean, number, number[], string[]],
  ): GrepLine => {
    let shown = text;
    if (replace !== undefined) {
      shown = "";
      let from = 0;
      for (let k = 0; k < texts.length; k++) {
        const start = Math.min(at[2 * k] as number, text.length);
        shown += text.slice(from, start) + (texts[k] as string);
        from = Math.min(at[2 * k + 1] as number, text.length);
      }
      shown += text.slice(from);
      // A run of lines replaced as one (`-U`) ends with its last line's break, if not replaced.
      if (shown.endsWith("\n")) shown = shown.slice(0, -1);
    }
    const first = at[0];
    const column = first === undefined ? undefined : Buffer.byteLength(text.slice(0, first)) + 1;
    if (!submatches) return { path, line, text: cut(shown, maxColumns), match: true, column };
    const bytes = byteOffsets(text, at);
    const found: GrepSubmatch[] = [];
    for (let k = 0; k < texts.length; k++) {
      found.push({
        start: bytes[2 * k] as number,
        end: bytes[2 * k + 1] as number,
        text: texts[k] as string,
      });
    }
    return {
      path,
      line,
      text: cut(shown, maxColumns),
      match: true,
      column,
      offset,
      submatches: found,
    };
  };
  /** For `files_without_match`: files with no match, taken in order as the search passes them. */
  const noMatch = (path: string) => {
    records++;
    if (keep()) files.push(path);
    return records <= wanted;
  };

  const settings = (): WorkerSettings => ({
    pattern: compiled.planned,
    fixedStrings: compiled.fixedStrings,
    source: compiled.source,
    flags: compiled.flags,
    literal: compiled.literal,
    foldsAside: compiled.foldsAside,
    exact: compiled.exact,
    ignoreCase: compiled.ignoreCase,
    multiline: compiled.multiline,
    before: mode === "content" ? before : 0,
    after: mode === "content" ? after : 0,
    maxCount,
    mode: withoutMatch ? "files_with_matches" : mode,
    maxFileSize,
    root,
    named,
    follow,
    invert,
    spans,
    replace,
    countMatches: options.countMatches ?? false,
    binary: binaryMode,
    followLinks,
  });

  if (isFile) {
    root = resolveScanRoot(dirname(target));
    candidates = [basename(target)];
    // A link named as the file is followed, as rg does, to where it leads now, and only there;
    // a confined path is canonical, and stays where it is.
    try {
      // A name that is not UTF-8 (escaped bytes) is canonical in its directory's path.
      named = confined
        ? target
        : hasEscapedBytes(basename(target))
          ? `${canonicalPath(dirname(target), nodeFs)}/${basename(target)}`
          : canonicalPath(target, nodeFs);
    } catch (error) {
      throw fromFsError(error, "search", target);
    }
    follow = !confined;
  } else {
    root = resolveScanRoot(target);
    const wanted = (path: string) =>
      (includeNodeModules || !/(^|\/)node_modules(\/|$)/.test(path)) &&
      (maxDepth === Number.POSITIVE_INFINITY || depthOf(path) <= maxDepth);
    const select = (listing: ScanResult) => {
      const out: string[] = [];
      for (const entry of listing.entries) {
        if (entry.type !== "file") continue;
        const path = entry.path;
        if (!wanted(path)) continue;
        if (globs && !globs.passes(path)) continue;
        if (types && !types.passes(path)) continue;
        out.push(path);
      }
      // rg's overrides: a file an include glob names is searched though ignored or hidden, and
      // one a type names though hidden (not though ignored); in directories walked, that is.
      const before = out.length;
      for (const file of listing.skipped) {
        if (!wanted(file.path)) continue;
        const typed = types ? types.passes(file.path) : true;
        const named = globs?.verdict(file.path) === "include";
        const byType =
          (types?.selects(file.path) ?? false) &&
          file.hidden &&
          !file.ignored &&
          (globs?.passes(file.path) ?? true);
        if (typed && (named || byType)) out.push(file.path);
      }
      return out.length === before ? out : out.sort(comparePaths);
    };
    const policy = {
      includeHidden: options.hidden ?? true,
      useGitignore: options.gitignore ?? true,
    };
    // While a walk lists the tree, its files are searched as they come, as rg does (the walk
    // lists in final order). Not with globs or types: their overrides add skipped files, which
    // the walk reports only at its end.
    const streams = !listOnly && globs === undefined && types === undefined && !followLinks;
    let seen = 0;
    const onListed = (entries: readonly ScanEntry[]) => {
      const fresh: string[] = [];
      for (; seen < entries.length; seen++) {
        const entry = entries[seen] as ScanEntry;
        if (entry.type === "file" && wanted(entry.path)) fresh.push(entry.path);
      }
      if (!feed) {
        feed = new FileFeed(undefined);
        toSearch = feed.files;
        running = runSearch(
          settings(),
          feed,
          consume,
          { fileTimeoutMs, timeoutMs, signal: streamStop.signal },
          stretches,
          branches,
        );
        // Awaited once the listing is complete; a failure meanwhile must not go unhandled.
        running.catch(() => undefined);
      }
      feed.push(fresh);
    };
    // The caller's abort, or a listing that failed, stops a search started while it walked.
    const streamStop = new AbortController();
    const stopStream = () => streamStop.abort();
    options.signal?.addEventListener("abort", stopStream, { once: true });
    detachStream = () => options.signal?.removeEventListener("abort", stopStream);
    const searchedOrFailed = searchListing(
      {
        root,
        policy,
        // The shared listings of grep are gitignore-aware ones (contract 2.6): a search without
        // ignore rules walks on its own.
        cache: (options.cache ?? false) && (options.gitignore ?? true),
        watch: options.watch,
        signal: options.signal,
        onProgress: options.onProgress,
        onListed: streams ? onListed : undefined,
      },
      (listing) => {
        listed = listing;
        return select(listing);
      },
      (files) => files.length === 0,
    );
    let searched: Awaited<typeof searchedOrFailed>;
    try {
      searched = await searchedOrFailed;
      if (feed && !startsWith(searched.value, feed.files)) {
        throw new FreshfsError("IO_ERROR", "The listing changed under the search of its files.");
      }
    } catch (error) {
      // Its lanes would wait for files that never come, holding workers: halt them first.
      stopStream();
      await running?.catch(() => undefined);
      detachStream();
      throw error;
    }
    if (!running) detachStream();
    candidates = searched.value;
    freshness = searched.freshness;
    unwatched = searched.unwatched;
    if (followLinks && listed) {
      const linked = await linkedFiles(root, listed, policy, options.signal);
      const more = linked.filter(
        (path) => wanted(path) && (!globs || globs.passes(path)) && (!types || types.passes(path)),
      );
      if (more.length > 0) candidates = [...candidates, ...more].sort(comparePaths);
    }
    // The index vouches for files only as the live tree does: for a live answer.
    const tree = freshness === "live" ? liveTrees.treeOf(root, policy) : undefined;
    // Inverted and without-match searches read every file; linked files are not indexed.
    const indexed = (options.index ?? true) && !invert && !withoutMatch && !followLinks;
    index = tree && indexed ? contentIndexes.of(tree) : undefined;
  }
  if (listOnly) {
    // A size bound the caller gave leaves out the larger files, as `rg --files --max-filesize`.
    const listed =
      options.maxFileSize === undefined
        ? candidates
        : candidates.filter((path) => {
            try {
              return statSync(`${root}/${path}`).size <= maxFileSize;
            } catch {
              return false;
            }
          });
    candidates = listed;
    const files = candidates.slice(offset, wanted);
    return {
      root,
      mode,
      lines: [],
      files,
      counts: [],
      totalRecords: candidates.length,
      truncated: candidates.length > wanted,
      filesSearched: candidates.length,
      filesRead: 0,
      skipped: { binary: 0, tooLarge: [], unreadable: [], timedOut: [], failed: [] },
      partial: false,
      warnings: [],
      freshness,
      unwatched,
    };
  }
  if (index) {
    const plan = planRegex(compiled.planned, {
      fixedStrings: compiled.fixedStrings,
      ignoreCase: compiled.ignoreCase,
      unicode: compiled.flags.includes("u"),
      multiline: compiled.multiline,
    });
    const consulted = index.consult(candidates, plan.query, {
      requiresNonAscii: plan.requiresNonAscii,
      exactCase: !plan.folded,
      foldsAside: plan.foldsAside,
      maxFileSize,
      // Blocks hold whole lines: a match within a line is within one (context is not).
      blocks: !compiled.multiline && (mode !== "content" || (before === 0 && after === 0)),
      multiline: compiled.multiline,
    });
    toSearch = consulted.read.map((i) => candidates[i] as string);
    positions = consulted.read;
    consulted.read.forEach((i, at) => {
      const these = consulted.blocks.get(i);
      if (these) stretches.set(at, these);
      const mask = consulted.branches.get(i);
      if (mask !== undefined) branches.set(at, mask);
    });
    knownBinary = consulted.binary;
  }

  let collected: Collected;
  if (running) {
    feed?.push(candidates.slice(feed.files.length));
    feed?.finish();
    try {
      collected = await running;
    } finally {
      detachStream();
    }
  } else {
    toSearch = index ? toSearch : candidates;
    collected = await runSearch(
      settings(),
      new FileFeed(toSearch),
      consume,
      { fileTimeoutMs, timeoutMs, signal: options.signal },
      stretches,
      branches,
    );
  }
  // Searched to the end: every known binary file was reached.
  if (records <= wanted && !collected.partial) countBinaryBefore(candidates.length);
  // Files changed since the index read them (or new) are indexed again, once this answer is
  // returned: the build thread does not compete with its reading, nor the bookkeeping with it.
  if (index && listed) contentIndexes.maintainSoon(index, listed);
  const timedOut = collected.timedOut.map((at) => toSearch[at] as string);
  const warnings: string[] = [];
  if (timedOut.length > 0) {
    warnings.push(
      `The regex ran longer than ${fileTimeoutMs} ms on ${timedOut.length} file(s), which were skipped: ${timedOut.join(", ")}. Simplify the pattern (avoid nested or adjacent unbounded repeats) or add a literal it must contain.`,
    );
  }
  if (failed.length > 0) {
    const list = failed.map((f) => `${f.path} (${f.message})`).join(", ");
    warnings.push(`The regex failed on ${failed.length} file(s), which were skipped: ${list}.`);
  }
  if (collected.partial) {
    warnings.push(`The search stopped after ${timeoutMs} ms: results are partial.`);
  }
  if (tooLarge.length > 0) {
    warnings.push(`${tooLarge.length} file(s) larger than ${maxFileSize} bytes were not searched.`);
  }
  return {
    root,
    mode,
    lines,
    files,
    counts,
    totalRecords: records,
    truncated: records > wanted,
    filesSearched: candidates.length,
    filesRead: toSearch.length,
    skipped: { binary, tooLarge, unreadable, timedOut, failed },
    partial: collected.partial,
    warnings,
    freshness,
    unwatched,
  };
}

/**
 * The grep worker: searches ranges of a file list and posts what it finds. Runs in a worker
 * thread so that the caller's event loop never waits on file reads or on a regex, and so that a
 * regex that backtracks without end can be stopped: the thread is terminated, which no code on
 * the main thread could do to a running `RegExp.exec`. Depends on `engine`.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import {
  type MessagePort,
  parentPort,
  receiveMessageOnPort,
  workerData,
} from "node:worker_threads";
import { FOLDED_ASIDE } from "../../content/format.js";
import { fsPath } from "../../io/bytes.js";
import {
  type BinaryMode,
  type EngineSettings,
  type FileOutcome,
  type LineRecord,
  type SearchMode,
  searchBuffer,
  transcoded,
} from "./engine.js";
import { anyFinder, exactFinder, type Finder, foldedFinder } from "./finder.js";
import { opensInside, PROC_FD, rootPrefix } from "./inside.js";
import type { RustQuery } from "./pattern.js";
import { planRegex, type RegexPlan } from "./regex/index.js";

/**
 * What a search looks for, and where: sent with the first range of the search a worker serves
 * (a pooled worker serves ranges of many searches in turn, and keeps the last one's settings).
 */
export interface WorkerSettings {
  /** The directory the files are relative to (canonical). */
  readonly root: string;
  /**
   * One file named by the caller (canonical: where a link named leads) rather than a listing's
   * files, which are never links.
   */
  readonly named: string | undefined;
  /** The named file may be a link (it was one when the search began). Listed files never are. */
  readonly follow: boolean;
  /** The pattern as given, and whether it is a literal: the worker plans its line prefilter. */
  readonly pattern: string;
  /** The query in rg's syntax as given, for the native core (undefined: the workers' alone). */
  readonly rust: RustQuery | undefined;
  readonly fixedStrings: boolean;
  readonly source: string;
  readonly flags: string;
  readonly literal: string | undefined;
  /** The literal holds `k` or `s` under `iu` (compilePattern's `foldsAside`). */
  readonly foldsAside: boolean;
  readonly exact: boolean;
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
  readonly before: number;
  readonly after: number;
  readonly maxCount: number;
  readonly mode: SearchMode;
  readonly maxFileSize: number;
  /** `-v`, `--count-matches`, `-a` and what matches are reported with: see `EngineSettings`. */
  readonly invert: boolean;
  readonly spans: boolean;
  readonly replace: string | undefined;
  readonly countMatches: boolean;
  readonly binary: BinaryMode;
  /**
   * Links are followed (`-L`): a file may lead outside the root, as the caller asked, so the
   * check that it opens inside is not made.
   */
  readonly followLinks: boolean;
}

/** A range of a search's files. */
export interface WorkerRange {
  readonly type: "range";
  /** Tags this range's batches: a batch posted just before a stop must not be taken for another's. */
  readonly id: number;
  /** The search the range belongs to. */
  readonly search: number;
  /** The search's settings, sent only when the worker does not hold them already. */
  readonly settings: WorkerSettings | undefined;
  /** Index of the range's first file in the search's file list. */
  readonly start: number;
  /**
   * The range's files, relative to `root`, joined by NUL (which no path contains): one string
   * crosses to the worker as one copy, where an array of strings is cloned string by string.
   */
  readonly files: string;
  /** Files to pass over (a regex timed out on them in an earlier worker). */
  readonly skip: readonly number[];
  /**
   * Files to read only in part, by index in the search: [offset, end, first line] of each
   * stretch of whole lines that can match, flat (the content index's blocks of a large file).
   */
  readonly stretches: Readonly<Record<number, readonly number[]>> | undefined;
  /**
   * For an alternation of literals: by index in the search, which of them (bit i for the i-th
   * of the plan's `or`) a file can hold, where the content index ruled some out.
   */
  readonly branches: Readonly<Record<number, number>> | undefined;
}

/**
 * A file's lines as columns, an entry per line (the fields of `LineRecord`): what crosses to
 * the caller's thread. Structured clone copies an object's keys with every object, so columns
 * clone several times faster than an object a line (measured on 200,000 lines: 35 ms against
 * 120-190 ms, and 56-94 ms for a tuple a line); on the kernel tree's 763,186 lines of `static`,
 * a search took 13% longer with an object a line.
 */
export interface LineTable {
  readonly line: number[];
  readonly text: string[];
  readonly match: boolean[];
  /** With `spans`: each line's `LineSpans`, a column a field. */
  readonly offset?: number[];
  readonly at?: (readonly number[])[];
  readonly texts?: (readonly string[])[];
}

/** A file that was not searched, and why. */
type Unsearched =
  | { readonly kind: "too-large"; readonly size: number }
  | { readonly kind: "unreadable"; readonly code: string }
  /** The regex itself failed on the file (a stack overflow on a deeply nested match). */
  | { readonly kind: "failed"; readonly message: string };

/** What searching one file gave, in the worker. */
type Outcome = FileOutcome | Unsearched;

/** A file's outcome as the caller's thread receives it: its lines in columns. */
export type WorkerOutcome =
  | Exclude<FileOutcome, { kind: "hits" }>
  | {
      readonly kind: "hits";
      readonly matches: number;
      readonly lines: LineTable;
      /** `quit` or `report`: the offset of the file's first NUL (it is binary). */
      readonly binaryAt?: number;
    }
  | Unsearched;

/** The worker's answer to "stop": it is idle again, ready for another range. */
export const STOPPED = "stopped";

/** A file's outcome, by its index in the search. */
export interface WorkerResult {
  readonly index: number;
  readonly outcome: WorkerOutcome;
}

export interface WorkerBatch {
  readonly id: number;
  /** Every file of the range before this index is done. */
  readonly next: number;
  /** The outcomes of the range's files that hold something (a file with nothing is left out). */
  readonly results: readonly WorkerResult[];
  readonly done: boolean;
}

const FLUSH_MS = 10;
const FLUSH_RESULTS = 128;
/** Most source files fit in the first read, which then needs no `fstat`. */
const FIRST_READ = 64 * 1024;
/**
 * One buffer for every file (a file is searched before the next is read), grown up to
 * `KEPT_BYTES` as files need: a search through many files then allocates, copies and collects
 * nothing per file. A larger file gets a buffer of its own, collected after it, so that a
 * worker does not hold the largest file it ever met (up to 16 MiB) in memory while idle.
 * Given back when the worker goes idle (`release`).
 */
let scratch = Buffer.allocUnsafe(FIRST_READ);
const KEPT_BYTES = 1024 * 1024;

/*
 * A directory swapped for a link out after the walk passed it would let a file be opened outside
 * the root; the walk never follows a link, so neither must grep. A file whose search gave
 * anything to report (lines, a count, binary, too large, a regex failure) is checked first
 * (`opensInside`, through /proc): its descriptor, still open, must name a file under the root,
 * or the one file named. One that does not is reported as nothing at all, as a file that is not
 * there: a distinct answer would tell whether the outside file matched. Checking every file cost
 * 20-30% of grep's speed (measured); files with something to report are few. The descriptor is
 * published in `current[1]` while the file is searched, so that the parent can check a file the
 * regex gets stuck on before it names it. Where /proc is missing, nothing is checked.
 */

function failed(error: unknown): Unsearched {
  return { kind: "unreadable", code: (error as NodeJS.ErrnoException).code ?? "EIO" };
}

/**
 * Reads the open file `fd` into the scratch buffer. The descriptor stays open: a worker
 * terminated in a runaway regex has it closed by Node (`trackUnmanagedFds`).
 */
function read(fd: number, maxFileSize: number): Buffer | Unsearched {
  try {
    const first = readSync(fd, scratch, 0, scratch.length, 0);
    // A short read is the whole file.
    if (first < scratch.length && first <= maxFileSize) return scratch.subarray(0, first);
    const size = fstatSync(fd).size;
    if (size > maxFileSize) return { kind: "too-large", size };
    let buffer = scratch;
    if (size > scratch.length) {
      buffer =
        size > KEPT_BYTES
          ? Buffer.allocUnsafe(Math.max(size, first))
          : Buffer.allocUnsafe(Math.min(Math.max(size, 2 * scratch.length), KEPT_BYTES));
      scratch.copy(buffer, 0, 0, first);
      if (buffer.length <= KEPT_BYTES) scratch = buffer;
    }
    // A file that grows while it is read is searched as it was when it was measured.
    const end = Math.min(Math.max(size, first), buffer.length);
    let total = first;
    while (total < end) {
      const n = readSync(fd, buffer, total, end - total, total);
      if (n === 0) break;
      total += n;
    }
    return buffer.subarray(0, total);
  } catch (error) {
    return failed(error);
  }
}

/**
 * Searches the stretches of an open file, in order, as one file: line numbers offset by each
 * stretch's first line, matches counted across them, `maxCount` over the whole file.
 */
function searchStretches(
  fd: number,
  stretches: readonly number[],
  serving: Prepared,
  engine: EngineSettings,
): Outcome {
  const { settings } = serving;
  const limit = settings.mode === "files_with_matches" ? 1 : settings.maxCount;
  const lines: LineRecord[] = [];
  let matches = 0;
  for (let s = 0; s < stretches.length && matches < limit; s += 3) {
    const from = stretches[s] as number;
    const length = (stretches[s + 1] as number) - from;
    if (length > scratch.length && length <= KEPT_BYTES) {
      scratch = Buffer.allocUnsafe(Math.min(length * 2, KEPT_BYTES));
    }
    const buffer = length <= scratch.length ? scratch : Buffer.allocUnsafe(length);
    let total = 0;
    try {
      while (total < length) {
        const n = readSync(fd, buffer, total, length - total, from + total);
        if (n === 0) break;
        total += n;
      }
    } catch (error) {
      return failed(error);
    }
    const outcome = searchBuffer(
      buffer.subarray(0, total),
      { ...engine, maxCount: limit - matches },
      false,
      from === 0,
    );
    if (outcome.kind !== "hits") continue;
    matches += outcome.matches;
    const base = (stretches[s + 2] as number) - 1;
    for (const record of outcome.lines) {
      const line = record.line + base;
      const spans = record.spans && { ...record.spans, offset: record.spans.offset + from };
      lines.push(spans ? { ...record, line, spans } : { ...record, line });
    }
  }
  return matches === 0 ? { kind: "none" } : { kind: "hits", matches, lines };
}

/** Searches one file: opened, read, searched, and checked to be inside the root if it matched. */
function searchFile(
  path: string,
  serving: Prepared,
  current: Int32Array,
  stretches: readonly number[] | undefined,
  branches: number | undefined,
): Outcome {
  const { settings } = serving;
  let engine = branches === undefined ? serving.engine : engineFor(serving, branches);
  let fd: number;
  try {
    // A listed file was a file when the walk passed: a link there now is not followed. And a
    // FIFO swapped in must not block the open (for files the flag changes nothing).
    const flags = constants.O_RDONLY | constants.O_NONBLOCK;
    const follow = settings.follow || settings.followLinks;
    fd = openSync(fsPath(path), follow ? flags : flags | constants.O_NOFOLLOW);
  } catch (error) {
    return failed(error);
  }
  Atomics.store(current, 1, fd);
  try {
    let outcome: Outcome;
    try {
      if (stretches) outcome = searchStretches(fd, stretches, serving, engine);
      else {
        const bytes = read(fd, settings.maxFileSize);
        // Transcoded here (a UTF-16 text), so that the look for U+212A and U+017F sees the text.
        const file = Buffer.isBuffer(bytes) ? transcoded(bytes) : bytes;
        // Its U+212A or U+017F match the literal's `k` or `s` under `iu`: no literal then.
        if (serving.plain && Buffer.isBuffer(file) && serving.aside.some((c) => file.includes(c))) {
          engine = serving.plain;
        }
        outcome = Buffer.isBuffer(file) ? searchBuffer(file, engine) : file;
      }
    } catch (error) {
      outcome = { kind: "failed", message: error instanceof Error ? error.message : String(error) };
    }
    if (
      PROC_FD !== undefined &&
      !settings.followLinks &&
      outcome.kind !== "none" &&
      !opensInside(fd, serving.prefix, settings.named)
    ) {
      return { kind: "none" };
    }
    return outcome;
  } catch (error) {
    return failed(error);
  } finally {
    Atomics.store(current, 1, -1);
    closeSync(fd);
  }
}

/** The settings of the last search this worker served, compiled. */
interface Prepared {
  readonly search: number;
  readonly settings: WorkerSettings;
  readonly engine: EngineSettings;
  /** The root with a trailing slash: every file searched is under it. */
  readonly prefix: string;
  /** For an alternation of literals: a finder for each, in the plan's order. */
  readonly alternatives: readonly Finder[] | undefined;
  /** Engines looking for some of the alternatives only, by which (a bit each). */
  readonly narrowed: Map<number, EngineSettings>;
  /**
   * For a text holding U+212A or U+017F when the literals fold `k` or `s` (`foldsAside`): the
   * engine without them. The content index reads such a file whole.
   */
  readonly plain: EngineSettings | undefined;
  /** Which of FOLDED_ASIDE a text is looked through for (then searched with `plain`). */
  readonly aside: readonly Buffer[];
}

/**
 * The engine for a file the content index says can hold only some of an alternation's
 * literals: its finder looks for those alone (`-i` with four literals is up to 32 passes over
 * a file; one literal's candidates need at most 8). The regex still decides every line.
 */
function engineFor(serving: Prepared, branches: number): EngineSettings {
  const { alternatives } = serving;
  if (!alternatives) return serving.engine;
  let engine = serving.narrowed.get(branches);
  if (!engine) {
    const finders = alternatives.filter((_, b) => (branches >>> b) & 1);
    engine = { ...serving.engine, finder: finders.length === 1 ? finders[0] : anyFinder(finders) };
    serving.narrowed.set(branches, engine);
  }
  return engine;
}

let prepared: Prepared | undefined;

/**
 * What finds the candidate lines: the literal every match contains; else, for an alternation
 * of literals, any of them (and a finder for each); else nothing (the plan's line prefilter, if
 * any, or every line).
 */
function findersFor(
  settings: WorkerSettings,
  plan: RegexPlan | undefined,
): {
  finder: Finder | undefined;
  alternatives: readonly Finder[] | undefined;
  /** What the finders look for. */
  texts: readonly string[];
} {
  const finderOf = (literal: string) =>
    settings.ignoreCase ? foldedFinder(literal) : exactFinder(Buffer.from(literal, "utf8"));
  if (settings.literal !== undefined) {
    return {
      finder: finderOf(settings.literal),
      alternatives: undefined,
      texts: [settings.literal],
    };
  }
  const query = plan?.query;
  if (query?.kind === "or" && query.of.every((item) => item.kind === "literal")) {
    const texts = query.of.map((item) => (item as { text: string }).text);
    const alternatives = texts.map(finderOf);
    return { finder: anyFinder(alternatives), alternatives, texts };
  }
  return { finder: undefined, alternatives: undefined, texts: [] };
}

function prepare(search: number, settings: WorkerSettings): Prepared {
  const plan =
    settings.literal === undefined && !settings.multiline
      ? planRegex(settings.pattern, {
          fixedStrings: settings.fixedStrings,
          ignoreCase: settings.ignoreCase,
          unicode: settings.flags.includes("u"),
          multiline: false,
        })
      : undefined;
  const { finder, alternatives, texts } = findersFor(settings, plan);
  const engine: EngineSettings = {
    regex: new RegExp(settings.source, settings.flags),
    finder,
    prefilter: finder === undefined ? plan?.prefilter : undefined,
    exact: settings.exact,
    multiline: settings.multiline,
    wholeText: !/\(\?<?[=!]/.test(settings.source),
    before: settings.before,
    after: settings.after,
    maxCount: settings.maxCount,
    mode: settings.mode,
    invert: settings.invert,
    spans: settings.spans,
    replace: settings.replace,
    countMatches: settings.countMatches,
    binary: settings.binary,
  };
  // Of the two characters, those that fold to a letter the finders look for (one pass each).
  const aside =
    finder !== undefined && (settings.foldsAside || (plan?.foldsAside ?? false))
      ? FOLDED_ASIDE.filter(({ letter }) => texts.some((text) => text.includes(letter))).map(
          ({ bytes }) => bytes,
        )
      : [];
  return {
    search,
    settings,
    prefix: rootPrefix(settings.root),
    alternatives,
    narrowed: new Map(),
    engine,
    aside,
    plain:
      aside.length > 0
        ? { ...engine, finder: undefined, prefilter: undefined, exact: false }
        : undefined,
  };
}

function search(range: WorkerRange, port: MessagePort, current: Int32Array): void {
  if (range.settings) prepared = prepare(range.search, range.settings);
  const serving = prepared;
  // The parent tracks which settings each worker holds; a range of another search would be
  // searched with the wrong pattern, so it fails loudly instead.
  if (serving?.search !== range.search) throw new Error("A grep range came without its settings.");
  const files = range.files.split("\0");
  const end = range.start + files.length;
  const skip = new Set(range.skip);
  let results: WorkerResult[] = [];
  let flushed = performance.now();
  const flush = (next: number, done: boolean) => {
    const batch: WorkerBatch = { id: range.id, next, results, done };
    port.postMessage(batch);
    results = [];
    flushed = performance.now();
  };
  for (let i = range.start; i < end; i++) {
    if (results.length >= FLUSH_RESULTS || performance.now() - flushed >= FLUSH_MS) {
      flush(i, false);
      // The caller has enough (or gave up): stop between files.
      if (receiveMessageOnPort(port)?.message === "stop") {
        Atomics.store(current, 0, -1);
        port.postMessage(STOPPED);
        return;
      }
    }
    if (skip.has(i)) continue;
    Atomics.store(current, 0, i);
    const outcome = searchFile(
      serving.prefix + files[i - range.start],
      serving,
      current,
      range.stretches?.[i],
      range.branches?.[i],
    );
    if (outcome.kind !== "none") results.push({ index: i, outcome: forTransfer(outcome) });
  }
  Atomics.store(current, 0, -1);
  flush(end, true);
}

/** A file's outcome as it crosses to the caller's thread: its lines in columns. */
function forTransfer(outcome: Outcome): WorkerOutcome {
  if (outcome.kind !== "hits") return outcome;
  const records = outcome.lines;
  const table = {
    line: records.map((record) => record.line),
    text: records.map((record) => record.text),
    match: records.map((record) => record.match),
  };
  const spans = records[0]?.spans === undefined ? undefined : records.map((r) => r.spans);
  const lines: LineTable = spans
    ? {
        ...table,
        offset: spans.map((one) => one?.offset ?? 0),
        at: spans.map((one) => one?.at ?? []),
        texts: spans.map((one) => one?.texts ?? []),
      }
    : table;
  return { ...outcome, lines };
}

/** The worker goes idle in the pool: it lets go of the last search's settings and grown buffer. */
function release(): void {
  prepared = undefined;
  if (scratch.length > FIRST_READ) scratch = Buffer.allocUnsafe(FIRST_READ);
}

// The caller's thread imports this module too (for STOPPED): only a grep worker, started with
// its shared buffer as `workerData`, listens.
if (parentPort && workerData instanceof SharedArrayBuffer) {
  const port = parentPort;
  /**
   * Shared with the parent's watchdogs: [0] index of the file being searched, written before
   * each file, -1 once the range is over (set before the answer is posted, so that it never
   * overwrites the next range's first index); [1] its open descriptor while it is searched,
   * else -1.
   */
  const current = new Int32Array(workerData);
  port.on("message", (message: WorkerRange | "stop" | "release") => {
    if (message === "release") release();
    // A stop that arrives after the range ended: the worker is idle already.
    else if (message === "stop") port.postMessage(STOPPED);
    else search(message, port, current);
  });
}

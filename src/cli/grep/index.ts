/**
 * `freshfs grep`: ripgrep's flags (`args`), run through the library's grep, printed as rg
 * prints. Depends on the library's grep modules and `commands` (the progress line, errors).
 *
 * The one default that is not rg's: lines are printed as `rg --no-heading --with-filename
 * --line-number` prints them, whether or not the output is a terminal, because a program
 * reading the output is the usual reader here. `-N`, `-I` and `--heading` change each, and
 * the last of two opposite flags wins, as with rg.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { FreshfsError } from "../../errors.js";
import { encodeName, hasEscapedBytes } from "../../io/bytes.js";
import { compareByEntries } from "../../scan/order.js";
import {
  GREP_DEFAULT_TIMEOUT_MS,
  GREP_MAX_FILE_BYTES,
  type GrepLine,
  type GrepOptions,
  type GrepResult,
  grep,
  grepFiles,
} from "../../search/grep/grep.js";
import { FILE_TYPES } from "../../search/grep/types.js";
import { badInput, isFileOperand, namer, withProgress } from "../commands.js";
import { type GrepArgs, parseGrepArgs } from "./args.js";

const GREP_HELP = `Usage: freshfs grep [OPTIONS] PATTERN [PATH ...]
       freshfs grep [OPTIONS] -e PATTERN ... [PATH ...]
       freshfs grep [OPTIONS] -f PATTERNFILE ... [PATH ...]
       freshfs grep [OPTIONS] --files [PATH ...]
       freshfs grep --type-list

Searches file contents with ripgrep's flags and output. PATTERN is a regex in rg's syntax
(Rust's regex crate: \\pL, [[:alpha:]], (?i), Unicode \\w and \\b), a literal with -F, or
JavaScript's with -P. Lines print as 'rg --no-heading --with-filename --line-number' prints
them, sorted by path; -N, -I and --heading change that. Exit status: 0 found, 1 not, 2 error.

Patterns:
  -e, --regexp PATTERN       a pattern; repeatable (a line matching any is a match)
  -f, --file PATTERNFILE     patterns, one per line; repeatable
  -F, --fixed-strings        patterns are literal strings
  -i, --ignore-case          -s, --case-sensitive       -S, --smart-case
  -w, --word-regexp          -x, --line-regexp          -v, --invert-match
  -U, --multiline            --multiline-dotall (with -U, . matches a line break too)
  -P, --pcre2                JavaScript's regex syntax (lookaround, backreferences), where rg's
                             -P runs PCRE2

Output:
  -o, --only-matching        each match on its own line
  -r, --replace TEXT         print matches replaced ($1, $name, \${1}, $$); files are untouched
  -c, --count                matching lines per file    --count-matches  matches per file
  -l, --files-with-matches   --files-without-match
  -n, --line-number          -N, --no-line-number
  -H, --with-filename        -I, --no-filename          --heading, --no-heading
  -0, --null                 NUL after each path
  --column                   the column (bytes, from 1) of the first match
  --vimgrep                  every match as path:line:column:text
  -A, -B, -C NUM             lines of context after, before, around each match
  --context-separator SEP    --field-match-separator SEP   --field-context-separator SEP
  -m, --max-count NUM        at most NUM matching lines per file
  -M, --max-columns NUM      omit lines longer than NUM bytes; --max-columns-preview shows
                             their start
  --trim                     strip leading white space
  -q, --quiet                print nothing; exit 0 at the first match
  --json                     rg's JSON Lines (begin, match, context, end, summary)
  --json-result              freshfs's own: one JSON document with the whole result
  --sort path|modified|accessed|created|none, --sortr ...   order of files (default path)

Files:
  -g, --glob GLOB            only files matching GLOB (!GLOB excludes); repeatable
  --iglob GLOB               the same, without regard to case; --glob-case-insensitive
  -t, --type TYPE            only files of TYPE (rg 13's 169 types; all); repeatable
  -T, --type-not TYPE        not files of TYPE; --type-list lists the types
  --files                    list the files that would be searched, search nothing
  -., --hidden               search files and directories whose name starts with a dot
  --no-ignore                do not apply .gitignore, .ignore and git's exclude files
  -u, -uu, -uuu              --no-ignore; and --hidden; and --text
  -a, --text                 search binary files as text
  -L, --follow               follow symbolic links
  --max-depth NUM            descend at most NUM directories
  --max-filesize NUM[K|M|G]  skip larger files, naming each on stderr; default ${GREP_MAX_FILE_BYTES / 1024 / 1024}M. rg
                             needs no bound as it reads a file lazily; freshfs reads each
                             file whole, so this bound keeps its memory bounded

freshfs's own:
  --timeout MS    stop searching after MS milliseconds (default ${GREP_DEFAULT_TIMEOUT_MS}); a search
                  stopped there prints what it found, says so on stderr and exits 2
  --limit N       print at most N results

Accepted, no effect: --color never|auto, --no-config, --line-buffered, --block-buffered, -j N.
`;

/** What an omitted line says, as rg's `-M`. */
const OMITTED = { match: "[Omitted long matching line]", context: "[Omitted long context line]" };

interface Run {
  readonly result: GrepResult;
  readonly name: (path: string) => string;
}

function readPatternFile(path: string): string[] {
  let text: string;
  try {
    // `-f -`: the patterns come on stdin, as rg reads them.
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (error) {
    throw badInput(`-f ${path}: ${(error as NodeJS.ErrnoException).code ?? "cannot be read"}.`);
  }
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

function typeList(): string {
  return `${Object.entries(FILE_TYPES)
    .map(([name, globs]) => `${name}: ${globs.join(", ")}`)
    .join("\n")}\n`;
}

/** rg's `elapsed`: seconds, nanoseconds and the human form. */
function elapsed(ms: number) {
  const nanos = Math.round(ms * 1e6);
  return {
    secs: Math.floor(nanos / 1e9),
    nanos: nanos % 1e9,
    human: `${(ms / 1000).toFixed(6)}s`,
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Access times as they were before this run read anything (reading a file or a directory moves
 * its own): every entry under the roots, each taken before its directory is read, as rg's walk
 * sorts a directory's entries before it enters them. Only for `--sort accessed`.
 */
function accessTimesBefore(roots: readonly (string | undefined)[]): Map<string, bigint> {
  const times = new Map<string, bigint>();
  const visit = (path: string) => {
    let entries: string[];
    try {
      entries = readdirSync(path);
    } catch {
      return;
    }
    const dirs: string[] = [];
    for (const name of entries) {
      const child = `${path}/${name}`;
      try {
        const stat = statSync(child, { bigint: true });
        times.set(child, stat.atimeNs);
        if (stat.isDirectory() && name !== ".git") dirs.push(child);
      } catch {
        // Gone, or a dangling link: nothing to sort.
      }
    }
    for (const dir of dirs) visit(dir);
  };
  for (const root of roots) {
    try {
      visit(realpathSync(resolve(root ?? ".")));
    } catch {
      // A root that is not there: its run says so.
    }
  }
  return times;
}

function timeOf(
  path: string,
  by: "modified" | "accessed" | "created",
  accessed: ReadonlyMap<string, bigint> | undefined,
): bigint {
  const before = accessed?.get(resolve(path));
  if (before !== undefined) return before;
  try {
    // Nanoseconds, as rg compares them: files made within a millisecond still have an order.
    const stat = statSync(path, { bigint: true });
    return by === "modified" ? stat.mtimeNs : by === "accessed" ? stat.atimeNs : stat.birthtimeNs;
  } catch {
    return 0n;
  }
}

/** Runs `freshfs grep` with its arguments; returns the exit status. */
export async function grepMain(argv: readonly string[]): Promise<number> {
  const args = parseGrepArgs(argv);
  if (args.help) {
    process.stdout.write(GREP_HELP);
    return 0;
  }
  if (args.typeList) {
    process.stdout.write(typeList());
    return 0;
  }
  const operands = [...args.operands];
  let patterns: string[] = [...args.patterns];
  for (const file of args.patternFiles) patterns.push(...readPatternFile(file));
  if (!args.patternsGiven && !args.files) {
    const first = operands.shift();
    if (first === undefined) throw badInput("grep needs PATTERN. See 'freshfs grep --help'.");
    patterns = [first];
  }
  if (args.json && args.summary !== undefined) {
    throw badInput("--json cannot be used with -c, --count-matches, -l or --files-without-match.");
  }
  const rust = !args.javascript;
  if (args.multiline && args.multilineDotall && rust && !args.fixedStrings) {
    patterns = patterns.map((one) => `(?s:${one})`);
  }
  const context = args.context ?? 0;
  const before = args.before ?? context;
  const after = args.after ?? context;
  const showsContext = (before > 0 || after > 0 || args.passthru) && !args.vimgrep;
  const mode: GrepOptions["outputMode"] =
    args.quiet || args.summary === "with-matches"
      ? "files_with_matches"
      : args.summary === "without-match"
        ? "files_without_match"
        : args.summary === "count" || args.summary === "count-matches"
          ? "count"
          : "content";
  const paths = operands.length > 0 ? operands : [undefined];
  const options = (path: string | undefined, file: boolean): GrepOptions => ({
    path,
    hidden: args.hidden || args.unrestricted >= 2,
    gitignore: !(args.noIgnore || args.unrestricted >= 1),
    // rg searches a file it finds up to its first NUL, and a file it is given (or every file,
    // with --binary or -uuu) whole, saying that it matches.
    binary: args.text ? "text" : args.binary || args.unrestricted >= 3 || file ? "report" : "quit",
    ignoreCase: args.caseMode === "insensitive",
    smartCase: args.caseMode === "smart",
    fixedStrings: args.fixedStrings,
    word: args.word,
    lineRegexp: args.lineRegexp,
    invert: args.invert,
    onlyMatching: args.onlyMatching,
    replace: args.replace,
    // With -r or a column, rg knows each match, and an omitted line says how many it had.
    submatches: args.json || args.vimgrep || columns(args) || args.replace !== undefined,
    multiline: args.multiline,
    syntax: rust ? "rust" : "javascript",
    // --passthru: every line, as context around the matches, with no separator.
    before: args.passthru ? Number.POSITIVE_INFINITY : before,
    // rg prints nothing past the last match -m counts, even with --passthru.
    after: args.passthru ? (args.maxCount === undefined ? Number.POSITIVE_INFINITY : 0) : after,
    glob: args.globs.filter((g) => !g.insensitive).map((g) => g.glob),
    iglob: args.globs.filter((g) => g.insensitive).map((g) => g.glob),
    globCaseInsensitive: args.globCaseInsensitive,
    type: args.types,
    typeNot: args.typesNot,
    maxDepth: args.maxDepth,
    follow: args.follow,
    outputMode: mode,
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
  });

  const started = performance.now();
  const accessed = args.sort.by === "accessed" ? accessTimesBefore(paths) : undefined;
  const searchedRuns: Run[] = [];
  let failed = false;
  for (const path of paths) {
    try {
      const file = isFileOperand(path);
      const result = await withProgress(args.files ? "files" : "grep", (progress) =>
        (args.files ? grepFiles : (o: GrepOptions) => grep(patterns, o))({
          ...options(path, file),
          onProgress: progress.update,
        }),
      );
      searchedRuns.push({ result, name: namer(path, file) });
    } catch (error) {
      // One path that cannot be searched does not stop the others, as with rg; the status says so.
      if (paths.length === 1 || !(error instanceof FreshfsError)) throw error;
      failed = true;
      if (!args.noMessages) write(`freshfs: ${error.message}\n`, process.stderr);
    }
  }
  // In the order --sort asks, once, for whichever printer runs.
  const runs = ordered(searchedRuns, args, accessed);
  if (args.jsonResult) {
    const results = runs.map((run) => run.result);
    process.stdout.write(
      `${JSON.stringify(results.length === 1 ? results[0] : results, null, 2)}\n`,
    );
    return status(runs, failed, args);
  }
  if (args.files) {
    const found = runs.some((run) => run.result.files.length > 0);
    if (args.quiet) return failed ? 2 : found ? 0 : 1;
    const out: string[] = [];
    for (const run of runs) {
      for (const file of run.result.files) out.push(run.name(file));
    }
    write(out.map((path) => path + (args.nul ? "\0" : "\n")).join(""));
    return failed ? 2 : found ? 0 : 1;
  }
  const searched = runs.reduce((sum, run) => sum + run.result.filesSearched, 0);
  if (searched === 0 && !failed) {
    throw badInput(
      "no files were searched: the directory is empty, or the -g/-t filters, ignore rules or hidden-file rule left none (try --no-ignore or --hidden).",
    );
  }
  if (!args.quiet) {
    const text = args.json ? jsonLines(runs, started) : printed(runs, args, showsContext);
    write(text);
    for (const run of runs) {
      for (const note of notes(run)) {
        if (!args.noMessages) write(`freshfs: ${note}\n`, process.stderr);
      }
    }
  }
  return status(runs, failed, args);
}

/** Output as bytes: a path that is not UTF-8 (escaped bytes, `io/bytes`) prints as its bytes, as rg prints it. */
function write(text: string, to: NodeJS.WriteStream = process.stdout): void {
  if (text !== "") to.write(hasEscapedBytes(text) ? encodeName(text) : text);
}

function status(runs: readonly Run[], failed: boolean, args: GrepArgs): number {
  const found = runs.some((run) => run.result.totalRecords > 0);
  if (args.quiet && found) return 0;
  const partial = runs.find((run) => run.result.partial);
  if (partial) {
    const after = args.timeoutMs === undefined ? "" : ` of ${args.timeoutMs} ms`;
    process.stderr.write(
      `freshfs: the search stopped at its timeout${after}, so the results are partial (--timeout MS gives it longer)\n`,
    );
    // Neither 0 nor 1: either would say the whole tree was searched.
    return 2;
  }
  if (failed) return 2;
  return found ? 0 : 1;
}

/** The files of each run, as `--sort`/`--sortr` orders them (path order is the library's). */
function ordered(
  runs: readonly Run[],
  args: GrepArgs,
  accessed: ReadonlyMap<string, bigint> | undefined,
): Run[] {
  const { by, reverse } = args.sort;
  return runs.map((run) => {
    const { result } = run;
    if (by === "path" || by === "none") {
      if (!reverse) return run;
      return { ...run, result: reorder(result, (paths) => [...paths].reverse()) };
    }
    // rg sorts each directory's entries as it walks it: a directory by its own time, its
    // files after it together, wherever its time puts it among its siblings.
    const times = new Map<string, bigint>();
    const at = (path: string) => {
      let time = times.get(path);
      if (time === undefined) {
        time = timeOf(`${result.root}/${path}`, by, accessed);
        times.set(path, time);
      }
      return time;
    };
    const compare = (a: string, b: string) =>
      compareByEntries(a, b, (p, q) => {
        const [tp, tq] = [at(p), at(q)];
        const order = tp < tq ? -1 : tp > tq ? 1 : p < q ? -1 : 1;
        return reverse ? -order : order;
      });
    return { ...run, result: reorder(result, (paths) => [...paths].sort(compare)) };
  });
}

/** The result with its files (lines grouped by file, counts, paths) in the order `order` gives. */
function reorder(result: GrepResult, order: (paths: readonly string[]) => string[]): GrepResult {
  const files = order(result.files);
  const countOf = new Map(result.counts.map((c) => [c.path, c]));
  const counts = order([...countOf.keys()]).map(
    (path) => countOf.get(path) as (typeof result.counts)[number],
  );
  const byPath = byFile(result.lines);
  const lines = order([...byPath.keys()]).flatMap((path) => byPath.get(path) ?? []);
  return { ...result, files, counts, lines };
}

/** The lines of each file, files in the order they come. */
function byFile(lines: readonly GrepLine[]): Map<string, GrepLine[]> {
  const out = new Map<string, GrepLine[]>();
  for (const line of lines) {
    const these = out.get(line.path);
    if (these) these.push(line);
    else out.set(line.path, [line]);
  }
  return out;
}

/** rg's standard printer. */
function printed(runs: readonly Run[], args: GrepArgs, showsContext: boolean): string {
  const out: string[] = [];
  const end = args.nul ? "\0" : "\n";
  const lineNumbers = args.lineNumber;
  const withName = args.withFilename;
  for (const run of runs) {
    const { result, name } = run;
    if (result.mode === "files_with_matches" || result.mode === "files_without_match") {
      for (const file of result.files) out.push(name(file) + end);
      continue;
    }
    if (result.mode === "count") {
      for (const { path, count } of result.counts) {
        out.push(withName ? `${name(path)}${args.nul ? "\0" : ":"}${count}\n` : `${count}\n`);
      }
      continue;
    }
    let previous: GrepLine | undefined;
    for (const line of result.lines) {
      if (line.binary) {
        out.push(`${name(line.path)}: ${binaryNotice(line.binary)}\n`);
        continue;
      }
      const newFile = previous?.path !== line.path;
      if (args.heading && newFile) {
        if (out.length > 0) out.push("\n");
        out.push(`${name(line.path)}${args.nul ? "\0" : "\n"}`);
      } else if (
        showsContext &&
        args.contextSeparator !== undefined &&
        previous &&
        (newFile || line.line > previous.line + 1)
      ) {
        out.push(`${args.contextSeparator}\n`);
      }
      previous = line;
      const pieces =
        args.vimgrep && line.match && !args.onlyMatching ? (line.submatches ?? []) : [undefined];
      const sep = line.match ? args.fieldMatchSeparator : args.fieldContextSeparator;
      const prefix = (number: number, column: number | undefined) => {
        let head = "";
        if (withName && !args.heading) head += name(line.path) + (args.nul ? "\0" : sep);
        if (lineNumbers) head += `${number}${sep}`;
        if (columns(args) && line.match && column !== undefined) {
          head += `${column}${sep}`;
        }
        return head;
      };
      for (const piece of pieces) {
        // A multiline match (`-U -o`) prints as its lines, each numbered as the line it is.
        for (const [k, part] of line.text.split("\n").entries()) {
          const head = prefix(
            line.line + k,
            k === 0 ? (piece ? piece.start + 1 : line.column) : undefined,
          );
          out.push(`${head}${shown(part, line, args)}\n`);
        }
      }
    }
  }
  return out.join("");
}

/** Whether columns are printed: `--column`, or `--vimgrep` unless `--no-column`. */
function columns(args: GrepArgs): boolean {
  return args.column ?? args.vimgrep;
}

function binaryNotice(binary: { offset: number; stopped: boolean }): string {
  const found = `(found "\\0" byte around offset ${binary.offset})`;
  return binary.stopped
    ? `WARNING: stopped searching binary file after match ${found}`
    : `binary file matches ${found}`;
}

/**
 * A line's text as printed: trimmed (`--trim`), omitted or previewed past `-M`. Where rg knows
 * the line's matches (`-r`, a column), an omitted line says how many it had.
 */
function shown(given: string, line: GrepLine, args: GrepArgs): string {
  const trim = (value: string) => (args.trim ? value.replace(/^[ \t\f\v\r]+/, "") : value);
  const max = args.maxColumns;
  // rg bounds a line as it is and trims its preview after the cut; a match (-o) it trims first.
  const text = args.onlyMatching ? trim(given) : given;
  if (max === undefined || max === 0 || Buffer.byteLength(text) <= max) return trim(text);
  // With -o, rg knows the one match the line is.
  const known = line.match ? (args.onlyMatching ? [{ start: 0 }] : line.submatches) : undefined;
  if (args.maxColumnsPreview) {
    const preview = trim(text.slice(0, max));
    if (!known) return `${preview} [... omitted end of long line]`;
    const more = known.filter((m) => m.start >= max).length;
    return `${preview} [... ${more} more match${more === 1 ? "" : "es"}]`;
  }
  if (known) return `[Omitted long line with ${known.length} matches]`;
  return line.match ? OMITTED.match : OMITTED.context;
}

/** rg's `--json`: begin, match and context, end per file; a summary at the end. */
function jsonLines(runs: readonly Run[], started: number): string {
  const out: string[] = [];
  const totals = {
    bytes_printed: 0,
    bytes_searched: 0,
    matched_lines: 0,
    matches: 0,
    searches: 0,
    searches_with_match: 0,
  };
  const emit = (value: unknown) => {
    const line = `${JSON.stringify(value)}\n`;
    out.push(line);
    return Buffer.byteLength(line);
  };
  for (const run of runs) {
    const { result, name } = run;
    const byPath = byFile(result.lines);
    for (const [path, lines] of byPath) {
      const begun = performance.now();
      // rg's form for a path that is not UTF-8: its bytes, in base64.
      const shown = name(path);
      const shownPath = hasEscapedBytes(shown)
        ? { bytes: encodeName(shown).toString("base64") }
        : { text: shown };
      let printedBytes = emit({ type: "begin", data: { path: shownPath } });
      let matchedLines = 0;
      let matches = 0;
      for (const line of lines) {
        const submatches = (line.submatches ?? []).map((m) => ({
          match: { text: m.text },
          start: m.start,
          end: m.end,
        }));
        if (line.match) {
          matchedLines++;
          matches += submatches.length;
        }
        printedBytes += emit({
          type: line.match ? "match" : "context",
          data: {
            path: shownPath,
            lines: { text: `${line.text}\n` },
            line_number: line.line,
            absolute_offset: line.offset ?? 0,
            submatches,
          },
        });
      }
      const stats = {
        elapsed: elapsed(performance.now() - begun),
        searches: 1,
        searches_with_match: 1,
        bytes_searched: sizeOf(`${result.root}/${path}`),
        bytes_printed: printedBytes,
        matched_lines: matchedLines,
        matches,
      };
      emit({ type: "end", data: { path: shownPath, binary_offset: null, stats } });
      totals.bytes_printed += printedBytes;
      totals.bytes_searched += stats.bytes_searched;
      totals.matched_lines += matchedLines;
      totals.matches += matches;
      // rg's summary counts the searches that printed something.
      totals.searches++;
      totals.searches_with_match++;
    }
  }
  // rg writes the summary's keys in sorted order.
  const total = elapsed(performance.now() - started);
  emit({
    data: {
      elapsed_total: { human: total.human, nanos: total.nanos, secs: total.secs },
      stats: {
        bytes_printed: totals.bytes_printed,
        bytes_searched: totals.bytes_searched,
        elapsed: { human: total.human, nanos: total.nanos, secs: total.secs },
        matched_lines: totals.matched_lines,
        matches: totals.matches,
        searches: totals.searches,
        searches_with_match: totals.searches_with_match,
      },
    },
    type: "summary",
  });
  return out.join("");
}

function notes(run: Run): string[] {
  const { result, name } = run;
  const out: string[] = [];
  for (const file of result.skipped.tooLarge) {
    out.push(
      `${name(file.path)}: skipped, ${file.size} bytes is over the size bound (--max-filesize)`,
    );
  }
  for (const file of result.skipped.unreadable) {
    out.push(`${name(file.path)}: skipped, cannot be read (${file.code})`);
  }
  for (const path of result.skipped.timedOut) {
    out.push(`${name(path)}: skipped, the regex ran too long on it`);
  }
  for (const file of result.skipped.failed) {
    out.push(`${name(file.path)}: skipped, ${file.message}`);
  }
  return out;
}

/**
 * The CLI's commands over the library's public surface: files, glob, find, grep, why. Each
 * returns its exit status (0 found, 1 nothing found, as rg and git check-ignore; errors throw
 * and main renders them, exit 2).
 */
import { existsSync, lstatSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
// Each from its own module, not the public index: a one-shot command loads what it runs (the
// agent tools, diffs and the MCP schemas stay unloaded: ~20 ms of every start).
import { FreshfsError } from "../errors.js";
import { forceRescan } from "../scan/cache.js";
import { explainPath } from "../scan/explain.js";
import { fuzzyFind } from "../search/fuzzy.js";
import { glob } from "../search/glob.js";
import { formatGrepLines } from "../search/grep/format.js";
import { type GrepOutputMode, grep } from "../search/grep/grep.js";
import { ProgressLine } from "./progress.js";

export interface Common {
  readonly hidden: boolean;
  readonly noIgnore: boolean;
  readonly limit: number | undefined;
  readonly json: boolean;
}

function out(lines: readonly string[]): void {
  if (lines.length > 0) process.stdout.write(`${lines.join("\n")}\n`);
}

function json(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function withProgress<T>(label: string, run: (p: ProgressLine) => Promise<T>): Promise<T> {
  const progress = new ProgressLine(label);
  try {
    return await run(progress);
  } finally {
    progress.stop();
  }
}

export async function filesCommand(dir: string | undefined, common: Common): Promise<number> {
  const root = dir ?? ".";
  const listing = await withProgress("listing", (progress) =>
    forceRescan(
      root,
      { includeHidden: common.hidden, useGitignore: !common.noIgnore },
      {
        onProgress: (walk) =>
          progress.update({ phase: "walk", done: walk.entries, total: undefined }),
      },
    ),
  );
  let files = listing.entries.filter((entry) => entry.type === "file").map((entry) => entry.path);
  if (common.limit !== undefined) files = files.slice(0, common.limit);
  if (common.json) json({ root: listing.root, files, warnings: listing.warnings });
  else out(files);
  return 0;
}

export async function globCommand(
  pattern: string,
  dir: string | undefined,
  common: Common,
): Promise<number> {
  const result = await withProgress("glob", (progress) =>
    glob(pattern, {
      path: dir,
      hidden: common.hidden,
      gitignore: !common.noIgnore,
      maxResults: common.limit,
      onProgress: progress.update,
    }),
  );
  if (common.json) json(result);
  else out(result.matches);
  // Found, even when --limit shows none of it (as grep's status counts matches, not lines shown).
  return result.totalMatches > 0 ? 0 : 1;
}

export async function findCommand(
  query: string,
  dir: string | undefined,
  common: Common,
): Promise<number> {
  const result = await withProgress("find", (progress) =>
    fuzzyFind(query, {
      path: dir,
      hidden: common.hidden,
      gitignore: !common.noIgnore,
      limit: common.limit,
      onProgress: progress.update,
    }),
  );
  if (common.json) json(result);
  else {
    out(result.matches.map((m) => (m.type === "dir" ? `${m.path}/` : m.path)));
    if (result.truncated) {
      process.stderr.write(
        `freshfs: the best ${result.matches.length} of ${result.totalMatches} matches; --limit N shows more\n`,
      );
    }
  }
  return result.totalMatches > 0 ? 0 : 1;
}

export interface GrepFlags {
  readonly ignoreCase: boolean;
  readonly smartCase: boolean;
  readonly fixedStrings: boolean;
  readonly word: boolean;
  readonly count: boolean;
  readonly filesWithMatches: boolean;
  readonly after: number | undefined;
  readonly before: number | undefined;
  readonly context: number | undefined;
  readonly globs: readonly string[];
  readonly types: readonly string[];
  readonly multiline: boolean;
  /** `-P`: the pattern in JavaScript's syntax. */
  readonly javascript: boolean;
  readonly maxColumns: number | undefined;
  /** Bytes; undefined: the library's bound. */
  readonly maxFileSize: number | undefined;
  /** undefined: the library's timeout. */
  readonly timeoutMs: number | undefined;
}

/** How rg names a file found under the path it was given: joined to it as written. */
function namer(dir: string | undefined): (path: string) => string {
  if (dir === undefined) return (path) => path;
  let isFile = false;
  try {
    isFile = !lstatSync(dir).isDirectory() && !isDirectoryThroughLink(dir);
  } catch {
    // grep reports the missing path itself.
  }
  if (isFile) return () => dir;
  const base = dir.endsWith("/") || dir.endsWith(sep) ? dir.slice(0, -1) : dir;
  return (path) => (base === "" ? `/${path}` : `${base}/${path}`);
}

function isDirectoryThroughLink(path: string): boolean {
  try {
    return lstatSync(`${path}/.`).isDirectory();
  } catch {
    return false;
  }
}

export async function grepCommand(
  pattern: string,
  dir: string | undefined,
  flags: GrepFlags,
  common: Common,
): Promise<number> {
  const mode: GrepOutputMode = flags.filesWithMatches
    ? "files_with_matches"
    : flags.count
      ? "count"
      : "content";
  const result = await withProgress("grep", (progress) =>
    grep(pattern, {
      path: dir,
      hidden: common.hidden,
      gitignore: !common.noIgnore,
      ignoreCase: flags.ignoreCase,
      smartCase: flags.smartCase,
      fixedStrings: flags.fixedStrings,
      word: flags.word,
      multiline: flags.multiline,
      syntax: flags.javascript ? "javascript" : "rust",
      after: flags.after,
      before: flags.before,
      context: flags.context,
      glob: flags.globs,
      type: flags.types,
      outputMode: mode,
      headLimit: common.limit,
      // rg prints whole lines unless told otherwise (`-M`).
      maxColumns: flags.maxColumns ?? Number.POSITIVE_INFINITY,
      // rg needs no size bound, as it reads a file lazily; the worker reads each file whole
      // into memory, so only the bound keeps memory bounded (a 2 GiB file took 2.1 GB).
      maxFileSize: flags.maxFileSize,
      timeoutMs: flags.timeoutMs,
      onProgress: progress.update,
    }),
  );
  // rg's answer when filters (or an empty tree) leave nothing to search: an error, not "no match".
  if (result.filesSearched === 0) {
    throw badInput(
      "no files were searched: the directory is empty, or the -g/-t filters, ignore rules or hidden-file rule left none (try --no-ignore or --hidden).",
    );
  }
  if (common.json) {
    json(result);
  } else {
    const name = namer(dir);
    if (mode === "files_with_matches") out(result.files.map(name));
    else if (mode === "count") out(result.counts.map((c) => `${name(c.path)}:${c.count}`));
    else {
      const context = (flags.context ?? 0) > 0 || (flags.after ?? 0) > 0 || (flags.before ?? 0) > 0;
      out(
        formatGrepLines(
          result.lines.map((l) => ({ ...l, path: name(l.path) })),
          { context },
        ),
      );
    }
    for (const note of grepNotes(result, name)) process.stderr.write(`freshfs: ${note}\n`);
  }
  // Neither 0 nor 1: either would say the whole tree was searched.
  if (result.partial) {
    const after = flags.timeoutMs === undefined ? "" : ` of ${flags.timeoutMs} ms`;
    process.stderr.write(
      `freshfs: the search stopped at its timeout${after}, so the results are partial (--timeout MS gives it longer)\n`,
    );
    return 2;
  }
  return result.totalRecords > 0 ? 0 : 1;
}

function grepNotes(
  result: Awaited<ReturnType<typeof grep>>,
  name: (path: string) => string,
): string[] {
  const notes: string[] = [];
  for (const file of result.skipped.tooLarge) {
    notes.push(
      `${name(file.path)}: skipped, ${file.size} bytes is over the size bound (--max-filesize)`,
    );
  }
  for (const file of result.skipped.unreadable) {
    notes.push(`${name(file.path)}: skipped, cannot be read (${file.code})`);
  }
  for (const path of result.skipped.timedOut) {
    notes.push(`${name(path)}: skipped, the regex ran too long on it`);
  }
  for (const file of result.skipped.failed) {
    notes.push(`${name(file.path)}: skipped, ${file.message}`);
  }
  return notes;
}

/** `freshfs why PATH`: git check-ignore's answer with its reason, plus the walker's own rules. */
export function whyCommand(path: string, common: Common): number {
  const absolute = resolve(path);
  // git check-ignore answers from the repository of the cwd: a file in a repository nested
  // under one of its ignored directories is ignored there.
  const here = repositoryTop(join(process.cwd(), "."));
  const root =
    here !== undefined && absolute.startsWith(`${here}${sep}`)
      ? here
      : (repositoryTop(absolute) ?? nearestListingRoot(absolute));
  const rel = relative(root, absolute).split(sep).join("/");
  // `dir/` names a directory, whether it exists or not (git reads it so).
  let isDir = path.endsWith("/") || path.endsWith(sep);
  try {
    isDir ||= lstatSync(absolute).isDirectory();
  } catch {
    // A path that does not exist can still be asked about, as with git check-ignore.
  }
  const names = rel.split("/");
  const explanation = rel === "" ? undefined : explainPath(root, rel, isDir);
  const lines: string[] = [];
  const shown = isAbsolute(path) ? absolute : path;
  if (names.includes(".git")) {
    lines.push(`${shown}: never listed: .git is always left out`);
  } else if (explanation?.ignored) {
    const rule = explanation.rule;
    const by = rule
      ? `${displaySource(rule.source, root)}:${rule.line}: ${rule.pattern}`
      : "a rule";
    const through =
      explanation.decidedFor !== rel ? ` (through its directory ${explanation.decidedFor})` : "";
    lines.push(`${shown}: ignored by ${by}${through}`);
  } else {
    const rule = explanation?.rule;
    lines.push(
      rule
        ? `${shown}: not ignored: re-included by ${displaySource(rule.source, root)}:${rule.line}: ${rule.pattern}`
        : `${shown}: not ignored: no ignore rule matches it`,
    );
    const hiddenName = names.find((name) => name.startsWith(".") && name !== "." && name !== "..");
    if (hiddenName && !common.hidden) {
      lines.push(`${shown}: hidden (${hiddenName} starts with a dot): listed only with --hidden`);
    }
    if (names.includes("node_modules")) {
      lines.push(
        `${shown}: under node_modules: glob and find leave it out unless the pattern names node_modules`,
      );
    }
  }
  for (const warning of explanation?.warnings ?? []) lines.push(`warning: ${warning.message}`);
  if (common.json) json({ path: absolute, root, ...explanation, lines });
  else out(lines);
  return explanation?.ignored || names.includes(".git") ? 0 : 1;
}

/**
 * The work tree holding `path` (the nearest directory above it with a `.git`): git's rules
 * apply from there down, and a directory rule (`build/`) can only be seen from above it.
 */
function repositoryTop(path: string): string | undefined {
  for (let dir = path === process.cwd() ? path : dirname(path); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Outside a repository, `.ignore` files apply below the directory listed: the cwd, if above. */
function nearestListingRoot(path: string): string {
  const cwd = process.cwd();
  return path.startsWith(`${cwd}${sep}`) ? cwd : dirname(path);
}

function displaySource(source: string, root: string): string {
  if (!isAbsolute(source)) return source;
  const rel = relative(root, source);
  return rel.startsWith("..") ? source : rel.split(sep).join("/");
}

/** An input a command cannot use, as a FreshfsError for main to print. */
export function badInput(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", message);
}

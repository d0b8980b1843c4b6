/**
 * The CLI's commands over the library's public surface: files, glob, find, why (grep has its
 * own folder, `grep/`, and uses withProgress, namer and isFileOperand from here). Each returns
 * its exit status (0 found, 1 nothing found, as rg and git check-ignore; errors throw and main
 * renders them, exit 2).
 */
import { existsSync, lstatSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
// Each from its own module, not the public index: a one-shot command loads what it runs (the
// agent tools, diffs and the MCP schemas stay unloaded: ~20 ms of every start). The searches
// themselves go through `backend` (the daemon, or the library loaded for the call).
import { FreshfsError } from "../errors.js";
import { encodeName, fsPath, hasEscapedBytes } from "../io/bytes.js";
import type { SearchBackend } from "./backend.js";
import { fromCwd, io } from "./io.js";
import { ProgressLine } from "./progress.js";

export interface Common {
  readonly hidden: boolean;
  readonly noIgnore: boolean;
  readonly limit: number | undefined;
  readonly json: boolean;
  /** `-0`: each path ends with NUL, not a line break, so that any name reads back whole. */
  readonly nul: boolean;
}

function out(lines: readonly string[], nul = false): void {
  const end = nul ? "\0" : "\n";
  if (lines.length === 0) return;
  const text = `${lines.join(end)}${end}`;
  // A path that is not UTF-8 (escaped bytes, `io/bytes`) prints as its bytes.
  io().stdout.write(hasEscapedBytes(text) ? encodeName(text) : text);
}

function json(value: unknown): void {
  io().stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export async function withProgress<T>(
  label: string,
  run: (p: ProgressLine) => Promise<T>,
): Promise<T> {
  const progress = new ProgressLine(label);
  try {
    return await run(progress);
  } finally {
    progress.stop();
  }
}

export async function filesCommand(
  dir: string | undefined,
  common: Common,
  backend: SearchBackend,
): Promise<number> {
  const listing = await withProgress("listing", (progress) =>
    backend.files(
      { path: dir ?? ".", hidden: common.hidden, gitignore: !common.noIgnore },
      progress.update,
    ),
  );
  let files = listing.files;
  if (common.limit !== undefined) files = files.slice(0, common.limit);
  if (common.json) json({ root: listing.root, files, warnings: listing.warnings ?? [] });
  else out(files, common.nul);
  return 0;
}

export async function globCommand(
  pattern: string,
  dir: string | undefined,
  common: Common,
  backend: SearchBackend,
): Promise<number> {
  const result = await withProgress("glob", (progress) =>
    backend.glob(pattern, {
      path: dir,
      hidden: common.hidden,
      gitignore: !common.noIgnore,
      limit: common.limit,
      onProgress: progress.update,
    }),
  );
  if (common.json) json(result);
  else out(result.matches, common.nul);
  // Found, even when --limit shows none of it (as grep's status counts matches, not lines shown).
  return result.totalMatches > 0 ? 0 : 1;
}

export async function findCommand(
  query: string,
  dir: string | undefined,
  common: Common,
  backend: SearchBackend,
): Promise<number> {
  const result = await withProgress("find", (progress) =>
    backend.fuzzyFind(query, {
      path: dir,
      hidden: common.hidden,
      gitignore: !common.noIgnore,
      limit: common.limit,
      onProgress: progress.update,
    }),
  );
  if (common.json) json(result);
  else {
    out(
      result.matches.map((m) => (m.type === "dir" ? `${m.path}/` : m.path)),
      common.nul,
    );
    if (result.truncated) {
      io().stderr.write(
        `freshfs: the best ${result.matches.length} of ${result.totalMatches} matches; --limit N shows more\n`,
      );
    }
  }
  return result.totalMatches > 0 ? 0 : 1;
}

/** How rg names a file found under the path it was given: joined to it as written. */
export function namer(
  dir: string | undefined,
  isFile = isFileOperand(dir),
): (path: string) => string {
  if (dir === undefined) return (path) => path;
  if (isFile) return () => dir;
  const base = dir.endsWith("/") || dir.endsWith(sep) ? dir.slice(0, -1) : dir;
  return (path) => (base === "" ? `/${path}` : `${base}/${path}`);
}

/** Whether a path operand names one file (not a directory, nor a link to one). */
export function isFileOperand(dir: string | undefined): boolean {
  if (dir === undefined) return false;
  try {
    const path = fromCwd(dir);
    return !lstatSync(fsPath(path)).isDirectory() && !isDirectoryThroughLink(path);
  } catch {
    // grep reports the missing path itself.
    return false;
  }
}

function isDirectoryThroughLink(path: string): boolean {
  try {
    return lstatSync(fsPath(`${path}/.`)).isDirectory();
  } catch {
    return false;
  }
}

/** `freshfs why PATH`: git check-ignore's answer with its reason, plus the walker's own rules. */
export async function whyCommand(
  path: string,
  common: Common,
  backend: SearchBackend,
): Promise<number> {
  const absolute = fromCwd(path);
  // git check-ignore answers from the repository of the cwd: a file in a repository nested
  // under one of its ignored directories is ignored there.
  const here = repositoryTop(join(io().cwd, "."));
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
  const explanation = rel === "" ? undefined : await backend.explain(root, rel, isDir);
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
  for (let dir = path === io().cwd ? path : dirname(path); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Outside a repository, `.ignore` files apply below the directory listed: the cwd, if above. */
function nearestListingRoot(path: string): string {
  const cwd = io().cwd;
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

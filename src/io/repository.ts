/**
 * Where a git repository keeps its own files: the git directory a work tree's `.git` leads to
 * (a directory, or a "gitdir:" file as linked worktrees and submodules have), and the common
 * directory every worktree of one repository shares (`commondir`). Shared by the ignore stack
 * (info/exclude and config live in the common directory) and by freshfs's own state
 * (`io/state-dirs`: lock files go there). Synchronous; depends on nothing.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The git directory of a work tree whose top holds `dotGit`: a directory (or a symlink to one),
 * or a "gitdir:" file. Undefined when `dotGit` is neither (missing, or a file of another shape).
 */
export function gitDirOf(dotGit: string): string | undefined {
  // Throws where it cannot be looked at (EACCES): the ignore stack reports that as a warning.
  const stats = statSync(dotGit, { throwIfNoEntry: false });
  if (!stats) return undefined;
  if (stats.isDirectory()) return dotGit;
  const target = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit) ?? "")?.[1];
  if (!target) return undefined;
  return isAbsolute(target) ? target : join(dirname(dotGit), target);
}

/** The common directory of `gitDir`: its `commondir` file's (linked worktrees), else itself. */
export function commonDirOf(gitDir: string): string {
  const text = readText(join(gitDir, "commondir"))?.trim();
  if (!text) return gitDir;
  return isAbsolute(text) ? text : join(gitDir, text);
}

/** A git work tree that holds a path. */
export interface WorkTree {
  /** The directory holding `.git`. */
  readonly top: string;
  readonly gitDir: string;
  /** The directory every worktree of the repository shares. */
  readonly commonDir: string;
  /**
   * Which worktree of the repository this is, by a name that does not depend on where the
   * repository is mounted: "" for the main one, `worktrees/<name>` for a linked one.
   */
  readonly id: string;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/**
 * The work tree whose top is the nearest directory at or above `dir` (an absolute, canonical
 * path) with a `.git` that leads to a git directory, as git discovers it (without `GIT_DIR`,
 * which only the process that has it would follow).
 */
export function findWorkTree(dir: string): WorkTree | undefined {
  for (let current = dir; ; current = dirname(current)) {
    let gitDir: string | undefined;
    try {
      gitDir = gitDirOf(join(current, ".git"));
    } catch {
      gitDir = undefined; // as git does, a `.git` that cannot be looked at is passed over
    }
    if (gitDir !== undefined && isDirectory(gitDir)) {
      const commonDir = commonDirOf(gitDir);
      const id = commonDir === gitDir ? "" : relative(commonDir, gitDir);
      return { top: current, gitDir, commonDir, id };
    }
    if (dirname(current) === current) return undefined;
  }
}

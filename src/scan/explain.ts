/**
 * Why a path is, or is not, ignored: the walker's decision for one path, without a walk. Used
 * by glob to skip walking under a static prefix that the listing would not contain, and by
 * `freshfs why`. Depends on `scan/walk` and `scan/ignore`.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { byteForm, type PatternProblem } from "./ignore/pattern.js";
import { type IgnoreMatch, IgnoreStack } from "./ignore/stack.js";
import { type DirectoryIgnoreFiles, enterDirectory, type ScanWarning } from "./walk.js";

export interface PathExplanation {
  /** The walker leaves the path out (itself, or a directory above it, is ignored). */
  readonly ignored: boolean;
  /** The line that decided, if any: for the path, or for the directory above it that was ignored. */
  readonly rule: IgnoreMatch | undefined;
  /** The path the rule decided: `rel` itself or one of its ancestors (relative to the root). */
  readonly decidedFor: string | undefined;
  readonly warnings: readonly ScanWarning[];
}

function kindOf(path: string): "file" | "symlink" | undefined {
  try {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (!stats) return undefined;
    return stats.isSymbolicLink() ? "symlink" : "file";
  } catch {
    return undefined;
  }
}

function ignoreFilesOf(dir: string): DirectoryIgnoreFiles {
  return {
    git: kindOf(join(dir, ".git")) !== undefined,
    rgignore: kindOf(join(dir, ".rgignore")),
    ignore: kindOf(join(dir, ".ignore")),
    gitignore: kindOf(join(dir, ".gitignore")),
  };
}

/**
 * Walks the ignore stack down from `root` (canonical) to `rel` (relative, `/`-separated), as the
 * walker would, and says whether the walker lists it. `isDir` is whether `rel` is a directory.
 */
export function explainPath(
  root: string,
  rel: string,
  isDir: boolean,
  env: NodeJS.ProcessEnv = process.env,
): PathExplanation {
  const problems: PatternProblem[] = [];
  const warnings: ScanWarning[] = [];
  let stack = enterDirectory(
    IgnoreStack.forRoot(root, env, problems),
    root,
    "",
    "",
    ignoreFilesOf(root),
    env,
    problems,
    warnings,
  );
  const names = rel.split("/").filter((name) => name !== "" && name !== ".");
  let path = "";
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    path = path === "" ? name : `${path}/${name}`;
    const last = i === names.length - 1;
    const rule = stack.match(byteForm(path), byteForm(name), last ? isDir : true);
    if (rule && !rule.negated) return { ignored: true, rule, decidedFor: path, warnings };
    if (last) return { ignored: false, rule, decidedFor: rule ? path : undefined, warnings };
    const absolute = join(root, path);
    stack = enterDirectory(
      stack,
      absolute,
      path,
      byteForm(path),
      ignoreFilesOf(absolute),
      env,
      problems,
      warnings,
    );
  }
  return { ignored: false, rule: undefined, decidedFor: undefined, warnings };
}

/**
 * The per-directory stack of ignore files: immutable frames linked to their parent, one per
 * directory that has something to say, and the rule of precedence between them. Depends on
 * `pattern` and `gitconfig`; reads files only through the functions that build frames.
 *
 * Precedence (ripgrep's, which is git's for the gitignore family):
 * 0. `.rgignore` files, the deepest first (ripgrep's own, above every other source);
 * 1. `.ignore` files, the deepest first (they apply inside and outside git repositories);
 * 2. `.gitignore` files, the deepest first, up to the root of the repository holding the path;
 * 3. that repository's `.git/info/exclude`;
 * 4. the global excludes file (`core.excludesFile`, by default `~/.config/git/ignore`).
 * The first source with a matching line decides; within a file the last matching line does.
 * A directory that is ignored is never entered, so nothing under it can be re-included (git's
 * rule); the walker gets that by pruning.
 */
import { lstatSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { commonDirOf, gitDirOf } from "../../io/repository.js";
import { defaultExcludesFile, readGitSettings, userConfigFiles } from "./gitconfig.js";
import { byteForm, IgnoreFile, type IgnoreRule, type PatternProblem } from "./pattern.js";

/** The rule that decided a path; the path is ignored unless the rule is negated. */
export type IgnoreMatch = IgnoreRule;

/** A git repository, as far as ignoring goes. */
export interface Repository {
  /** Absolute path of the work tree's top. */
  readonly root: string;
  readonly ignoreCase: boolean;
  /**
   * Every file its rules and settings were read from, or would be read from if it existed
   * (the `.git` entry, git's configuration files, `info/exclude`, the global excludes file):
   * the live tree rescans when one changes.
   */
  readonly sources: readonly string[];
  /** `info/exclude`, then the global excludes file: the gitignore family's lowest sources. */
  readonly excludes: readonly IgnoreFile[];
}

type Env = NodeJS.ProcessEnv;

/** What one directory contributes. */
interface Frame {
  readonly rgignore: IgnoreFile | undefined;
  readonly ignore: IgnoreFile | undefined;
  readonly gitignore: IgnoreFile | undefined;
  /** Byte form of the path from this directory to the scan root, with a trailing "/". */
  readonly prefix: string;
  /** Characters of a scan-root-relative path to drop to make it relative to this directory. */
  readonly strip: number;
}

function readIfPresent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function exists(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // an unsearchable directory: as far as we can tell, nothing is there
  }
}

/** Loads what ignoring needs of the repository whose work tree starts at `root`. */
export function loadRepository(root: string, env: Env, problems: PatternProblem[]): Repository {
  const gitDir = gitDirOf(join(root, ".git"));
  // Linked work trees keep info/ and config in the common directory.
  const common = gitDir && commonDirOf(gitDir);
  const configs = userConfigFiles(env);
  if (common) configs.push(join(common, "config"));
  const settings = readGitSettings(configs, env);
  const options = { ignoreCase: settings.ignoreCase };
  const excludes: IgnoreFile[] = [];
  const sources: [string, string][] = [];
  if (common) sources.push([join(common, "info", "exclude"), join(common, "info", "exclude")]);
  const globalPath = settings.excludesFile ?? defaultExcludesFile(env);
  sources.push([isAbsolute(globalPath) ? globalPath : join(root, globalPath), globalPath]);
  for (const [path, label] of sources) {
    const bytes = readIfPresent(path);
    if (!bytes) continue;
    const file = IgnoreFile.compile(bytes, label === path ? path : `${label} (${path})`, options);
    problems.push(...file.problems);
    excludes.push(file);
  }
  const consulted = [join(root, ".git"), ...configs, ...sources.map(([path]) => path)];
  if (gitDir) consulted.push(join(gitDir, "commondir"));
  return { root, ignoreCase: settings.ignoreCase, excludes, sources: consulted };
}

/** The nearest directory at or above `dir` that is the top of a git work tree. */
export function findRepositoryRoot(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    if (exists(join(current, ".git"))) return current;
    if (dirname(current) === current) return undefined;
  }
}

export class IgnoreStack {
  readonly #parent: IgnoreStack | undefined;
  readonly #frame: Frame;
  /** The repository whose gitignore family applies here, if any. */
  readonly #repository: Repository | undefined;
  /** Byte form of the path from the repository root to the scan root, with a trailing "/". */
  readonly #repoPrefix: string;
  readonly #repoStrip: number;
  /** This frame's directory is the top of `#repository`: the `.gitignore` chain ends here. */
  readonly #repoTop: boolean;
  /** Some frame here or above has a `.rgignore`: else `match` skips that layer's pass. */
  readonly #rgignores: boolean;

  private constructor(
    parent: IgnoreStack | undefined,
    frame: Frame,
    repository: Repository | undefined,
    repoPrefix: string,
    repoStrip: number,
    repoTop: boolean,
  ) {
    this.#parent = parent;
    this.#frame = frame;
    this.#repository = repository;
    this.#repoPrefix = repoPrefix;
    this.#repoStrip = repoStrip;
    this.#repoTop = repoTop;
    const above = parent ? parent.#rgignores : false;
    this.#rgignores = frame.rgignore !== undefined || above;
  }

  /**
   * The stack above a scan root: `.ignore` files of every ancestor, and, inside a repository,
   * `.gitignore` files from the repository's top down to the root's parent. The root's own
   * files come with `child("")`.
   */
  static forRoot(
    root: string,
    env: Env,
    problems: PatternProblem[],
    probed?: string[],
  ): IgnoreStack {
    const repoRoot = findRepositoryRoot(root);
    const repository = repoRoot === undefined ? undefined : loadRepository(repoRoot, env, problems);
    const repoPrefix = repoRoot === undefined ? "" : prefixBetween(repoRoot, root);
    const ancestors: string[] = [];
    for (let dir = dirname(root); ; dir = dirname(dir)) {
      ancestors.unshift(dir);
      if (dirname(dir) === dir) break;
    }
    if (dirname(root) === root) ancestors.length = 0;
    let stack: IgnoreStack | undefined;
    for (const dir of ancestors) {
      const inRepo = repoRoot !== undefined && isWithin(dir, repoRoot);
      // A `.git` made above the root would put it in a repository (findRepositoryRoot).
      probed?.push(
        join(dir, ".rgignore"),
        join(dir, ".ignore"),
        join(dir, ".gitignore"),
        join(dir, ".git"),
      );
      const rgignore = readIgnoreFile(join(dir, ".rgignore"), false, problems);
      const ignore = readIgnoreFile(join(dir, ".ignore"), false, problems);
      const gitignore =
        inRepo && repository
          ? readIgnoreFile(join(dir, ".gitignore"), repository.ignoreCase, problems)
          : undefined;
      if (!rgignore && !ignore && !gitignore && dir !== repoRoot) continue;
      const frame: Frame = {
        rgignore,
        ignore,
        gitignore,
        prefix: prefixBetween(dir, root),
        strip: 0,
      };
      stack = new IgnoreStack(stack, frame, repository, repoPrefix, 0, dir === repoRoot);
    }
    const top: Frame = {
      rgignore: undefined,
      ignore: undefined,
      gitignore: undefined,
      prefix: "",
      strip: 0,
    };
    return stack ?? new IgnoreStack(undefined, top, repository, repoPrefix, 0, root === repoRoot);
  }

  /**
   * The stack inside directory `dir` (byte form, relative to the scan root; "" for the root),
   * given its ignore files and whether it is the top of a nested repository (`.git` inside).
   */
  child(
    dir: string,
    files: {
      rgignore?: Uint8Array | undefined;
      ignore?: Uint8Array | undefined;
      gitignore?: Uint8Array | undefined;
    },
    nested: Repository | undefined,
    problems: PatternProblem[],
    absoluteDir: string,
  ): IgnoreStack {
    const repository = nested ?? this.#repository;
    const strip = dir === "" ? 0 : dir.length + 1;
    const rgignore =
      files.rgignore && compile(files.rgignore, join(absoluteDir, ".rgignore"), false, problems);
    const ignore =
      files.ignore && compile(files.ignore, join(absoluteDir, ".ignore"), false, problems);
    const gitignore =
      files.gitignore && repository
        ? compile(files.gitignore, join(absoluteDir, ".gitignore"), repository.ignoreCase, problems)
        : undefined;
    if (!rgignore && !ignore && !gitignore && !nested) return this;
    const frame: Frame = { rgignore, ignore, gitignore, prefix: "", strip };
    return nested
      ? new IgnoreStack(this, frame, nested, "", strip, true)
      : new IgnoreStack(this, frame, repository, this.#repoPrefix, this.#repoStrip, false);
  }

  /** The repository whose gitignore family applies here, if any. */
  get repository(): Repository | undefined {
    return this.#repository;
  }

  /** Whether any rule can apply below this point (an empty stack lets the walker skip matching). */
  get empty(): boolean {
    for (let node: IgnoreStack | undefined = this; node; node = node.#parent) {
      const frame = node.#frame;
      if (frame.rgignore || frame.ignore || frame.gitignore) return false;
    }
    return (this.#repository?.excludes.length ?? 0) === 0;
  }

  /**
   * The rule that decides `path` (byte form, relative to the scan root; `name` is its last
   * component), by the precedence in the module comment; undefined when no rule matches.
   */
  match(path: string, name: string, isDir: boolean): IgnoreMatch | undefined {
    for (const layer of this.#rgignores
      ? (["rgignore", "ignore"] as const)
      : (["ignore"] as const)) {
      for (let node: IgnoreStack | undefined = this; node; node = node.#parent) {
        const file = node.#frame[layer];
        if (file) {
          const rule = file.match(name, isDir, path, node.#frame.prefix, node.#frame.strip);
          if (rule) return rule;
        }
      }
    }
    if (!this.#repository) return undefined;
    for (let node: IgnoreStack | undefined = this; node; node = node.#parent) {
      const file = node.#frame.gitignore;
      if (file) {
        const rule = file.match(name, isDir, path, node.#frame.prefix, node.#frame.strip);
        if (rule) return rule;
      }
      if (node.#repoTop) break;
    }
    for (const file of this.#repository.excludes) {
      const rule = file.match(name, isDir, path, this.#repoPrefix, this.#repoStrip);
      if (rule) return rule;
    }
    return undefined;
  }
}

function compile(
  bytes: Uint8Array,
  source: string,
  ignoreCase: boolean,
  problems: PatternProblem[],
): IgnoreFile {
  const file = IgnoreFile.compile(bytes, source, { ignoreCase });
  problems.push(...file.problems);
  return file;
}

function readIgnoreFile(
  path: string,
  ignoreCase: boolean,
  problems: PatternProblem[],
): IgnoreFile | undefined {
  const bytes = readIfPresent(path);
  return bytes && compile(bytes, path, ignoreCase, problems);
}

function isWithin(dir: string, ancestor: string): boolean {
  return dir === ancestor || dir.startsWith(ancestor.endsWith(sep) ? ancestor : ancestor + sep);
}

/** Byte form of `to` relative to `from`, with a trailing "/" ("" when they are the same). */
function prefixBetween(from: string, to: string): string {
  const rel = relative(from, to).split(sep).join("/");
  return rel === "" ? "" : `${byteForm(rel)}/`;
}

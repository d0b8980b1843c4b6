/**
 * Test helpers: real git, kept away from the user's and the system's configuration, in
 * temporary repositories.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What a git run left behind. */
export interface GitResult {
  /** The exit code (-1 when git was killed by a signal). */
  readonly status: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export interface RunGitOptions {
  /** The directory git runs in. */
  readonly cwd: string;
  /** An empty directory standing in for the home and XDG config directories. */
  readonly home: string;
  /** Written to git's standard input, which is then closed. */
  readonly input?: string | Uint8Array;
}

/**
 * The environment for an isolated git: `HOME` and `XDG_CONFIG_HOME` point into `home` (so no
 * global config, excludes file or attributes), the system config is skipped, and any `GIT_*`
 * variable inherited from the caller (a hook's `GIT_DIR`, say) is dropped.
 */
export function isolatedGitEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("GIT_")) env[key] = value;
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
  };
}

/** Runs `git ...args` with an isolated environment; resolves whatever the exit code. */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: isolatedGitEnv(options.home),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      resolve({
        status: code ?? -1,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr).toString("utf8"),
      });
    });
    // git may exit before reading its input (an error, or a command that takes none).
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

/** A temporary repository with its own empty home; `remove()` deletes both. */
export interface TempRepo {
  /** The work tree (a real path, no symlinks). */
  readonly dir: string;
  /** The empty home directory git runs with. */
  readonly home: string;
  /** Runs git in the work tree, isolated. */
  git(args: readonly string[], input?: string | Uint8Array): Promise<GitResult>;
  remove(): Promise<void>;
}

/** `git init -q` in a fresh temporary directory. The caller removes it. */
export async function createTempRepo(): Promise<TempRepo> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "freshfs-git-")));
  const dir = join(root, "repo");
  const home = join(root, "home");
  await mkdir(dir);
  await mkdir(home);
  const git = (args: readonly string[], input?: string | Uint8Array) =>
    runGit(args, input === undefined ? { cwd: dir, home } : { cwd: dir, home, input });
  const repo: TempRepo = {
    dir,
    home,
    git,
    remove: () => rm(root, { recursive: true, force: true }),
  };
  const init = await git(["init", "-q"]);
  if (init.status !== 0) {
    await repo.remove();
    throw new Error(`git init failed (${init.status}): ${init.stderr}`);
  }
  return repo;
}

/** The exclude pattern git reports for a path (`git check-ignore -v`). */
export interface IgnoreMatch {
  /** The file the pattern came from, as git prints it (relative to the work tree). */
  readonly source: string;
  /** 1-based line number in that file. */
  readonly line: number;
  /** The pattern as git prints it: `!` for a negation, `/` for a directory-only pattern. */
  readonly pattern: string;
}

/** git's answer for one path. */
export interface CheckIgnoreAnswer {
  readonly path: string;
  /** Whether git ignores the path (a matching pattern that is not a negation). */
  readonly ignored: boolean;
  /** The deciding pattern, if any matched (a negation when the path is re-included). */
  readonly match: IgnoreMatch | undefined;
}

export interface CheckIgnoreOptions {
  /** `-c key=value` settings for this run, e.g. `{ "core.ignorecase": "true" }`. */
  readonly config?: Readonly<Record<string, string>>;
}

/**
 * Asks `git check-ignore --no-index -v -n` about `paths` (relative to the work tree, `/`
 * separated, existing on disk so git can tell directories from files) in one run. Answers come
 * back in the order asked.
 */
export async function checkIgnore(
  repo: TempRepo,
  paths: readonly string[],
  options: CheckIgnoreOptions = {},
): Promise<CheckIgnoreAnswer[]> {
  if (paths.length === 0) return [];
  const config = Object.entries(options.config ?? {}).flatMap(([key, value]) => [
    "-c",
    `${key}=${value}`,
  ]);
  const args = [...config, "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"];
  const run = await repo.git(args, paths.map((path) => `${path}\0`).join(""));
  // 0: some path is ignored, 1: none is; anything else is an error.
  if (run.status !== 0 && run.status !== 1) {
    throw new Error(`git check-ignore failed (${run.status}): ${run.stderr}`);
  }
  // -z -v -n: source NUL line NUL pattern NUL path NUL, all empty but the path for no match.
  const fields = run.stdout.toString("utf8").split("\0");
  const answers: CheckIgnoreAnswer[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [source = "", line = "", pattern = "", path = ""] = fields.slice(i, i + 4);
    const match = source === "" ? undefined : { source, line: Number(line), pattern };
    answers.push({ path, ignored: match !== undefined && !pattern.startsWith("!"), match });
  }
  if (answers.length !== paths.length || answers.some((answer, i) => answer.path !== paths[i])) {
    throw new Error(`git check-ignore answered ${answers.length} of ${paths.length} paths`);
  }
  return answers;
}

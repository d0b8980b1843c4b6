/**
 * oh-my-pi's grep as a peer of rg in the kernel benchmark. `@oh-my-pi/pi-natives` is the Rust
 * (N-API) core of the oh-my-pi coding agent; its `grep` is what that agent searches with, in its
 * own process, as freshfs's library does, so it is timed on the same rows.
 *
 * It is installed on demand into the gitignored `bench/.pi-natives/`, never a dependency: its
 * platform package is about 180 MB (on x64 it carries two builds of the addon), which nobody
 * installing freshfs should download, and the benchmark must still run (without this peer)
 * offline.
 *
 * It is loaded without the package's own entry: `native/index.js` is written for Bun (it reads
 * `import.meta.dir`, which Node 20 does not have, and throws when imported). So this does what
 * that loader does for an npm install: require the platform package's addon (the AVX2 build when
 * the CPU has AVX2), check that it is the pinned release, and install its Tokio runtime. Neither
 * package has install scripts, so npm not running unapproved ones changes nothing;
 * `--ignore-scripts` makes that explicit.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The pinned release. It is the newest that the registry has for both packages at one version:
 * the core's 18.2.9 and 18.2.10 have no linux-x64 package of their version, and linux-x64's
 * 18.2.11 has no core. The core pins its platform packages to its own version exactly, so
 * installing the core at this version brings the matching platform package.
 */
const VERSION = "18.2.3";
const CORE = "@oh-my-pi/pi-natives";
/** The platforms the release has a package for (`@oh-my-pi/pi-natives-<platform>-<arch>`). */
const PLATFORMS = new Set([
  "linux-x64",
  "linux-arm64",
  "darwin-x64",
  "darwin-arm64",
  "win32-x64",
  "win32-arm64",
]);
/** The download is about 180 MB: a slow mirror must not hang the benchmark forever. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

const DIR = fileURLToPath(new URL("../.pi-natives/", import.meta.url));

/**
 * One in-process search of `root` (a directory), as `rg -n` would: returns the matching lines as
 * "relative/path:line:text" strings, unsorted, and nothing else.
 *
 * Called with `hidden: false` (pi's default is to search hidden files, rg's is not), its default
 * `gitignore: true`, and neither `maxCount` nor `maxColumns`: in this release both default to no
 * limit (checked: 763,186 lines for `static` in the kernel, all of them, and lines of 6,586
 * characters whole). A result that says it was cut short anyway is thrown, not returned.
 *
 * pi has no whole-word option: `word` wraps the pattern as ripgrep 13 builds its `-w` regex,
 * `(?:(?m:^)|\W)(?:PATTERN)(?:\W|(?m:$))` (not `\b…\b`, which differs when the pattern starts or
 * ends with a non-word character). A line matches exactly when that regex matches in it, so the
 * lines are rg 13's (checked on the kernel for `-w` PM_RESUME, `\wAh`, an alternation, `-w -i`).
 * ripgrep 14 builds `-w` from half word boundaries instead, which can differ on such patterns.
 *
 * Where its lines differ from rg's (measured on this release):
 * - Each line loses its trailing whitespace (a `trim_end`), the `\r` of a CRLF line included; rg
 *   prints the line as it is. For `static` in the kernel that is 326 of 763,186 lines.
 * - A file over 4 MiB is searched only in its first 4,194,304 bytes: matches past that are
 *   missed, and the line cut there is searched as if it ended there (` $` matches 16 such cuts).
 *   The kernel has 29 such files, all amdgpu register headers.
 * - A binary file (a NUL byte) is skipped when the NUL comes early, as rg skips it; when it comes
 *   later (200 KB in, say), pi still reports every matching line, those past the NUL too, where
 *   rg stops at the buffer holding it (and prints a warning line).
 * - `node_modules` directories are skipped even when no ignore file names them.
 * - `.gitignore` files are honoured outside a git repository too (rg needs one), and `.rgignore`
 *   files are not honoured (`.ignore`, `.git/info/exclude` and git's global excludes are, as rg
 *   does).
 * - Bytes that are not UTF-8 come back as U+FFFD, as when rg's output is decoded as UTF-8.
 * - A pattern rg rejects may still be searched: pi escapes braces that are not a repetition and,
 *   when a group is unbalanced, the parentheses, and it falls back to PCRE2 for look-around and
 *   backreferences.
 */
export type PiGrep = (
  root: string,
  pattern: string,
  options: { ignoreCase: boolean; word: boolean },
) => Promise<string[]>;

/** The part of the addon's `grep` this uses (its `native/index.d.ts` has the rest). */
interface NativeGrepOptions {
  pattern: string;
  path: string;
  ignoreCase: boolean;
  hidden: boolean;
  gitignore: boolean;
  mode: "content";
}

interface NativeGrepResult {
  matches: { path: string; lineNumber: number; line: string; truncated?: boolean }[];
  limitReached?: boolean;
}

interface NativeBindings {
  grep(options: NativeGrepOptions): Promise<NativeGrepResult>;
  /** Absent in addons older than the runtime split; present in the pinned one. */
  __ompInstallTokioRuntime?: () => void;
}

/** Memoized: the addon is loaded once per process, and its runtime installed once. */
let loaded: Promise<{ grep: PiGrep; version: string } | { missing: string }> | undefined;

/**
 * Installs the pinned version into bench/.pi-natives when missing, and loads it; returns
 * `{ missing: reason }` when it cannot (no network, unsupported platform, an addon that does not
 * load). Never throws; the first call's answer is every later call's.
 */
export function loadPiNatives(): Promise<{ grep: PiGrep; version: string } | { missing: string }> {
  loaded ??= load().catch((error: unknown) => ({ missing: String(error) }));
  return loaded;
}

async function load(): Promise<{ grep: PiGrep; version: string } | { missing: string }> {
  const platform = `${process.platform}-${process.arch}`;
  if (!PLATFORMS.has(platform)) {
    return { missing: `${CORE}@${VERSION} has no build for ${platform}` };
  }
  const leaf = join(DIR, "node_modules", "@oh-my-pi", `pi-natives-${platform}`);
  if (installProblem(leaf) !== undefined) {
    process.stderr.write(`installing ${CORE}@${VERSION} into ${DIR} (about 180 MB)\n`);
    const failure = await npmInstall();
    if (failure !== undefined) return { missing: `npm install ${CORE}@${VERSION}: ${failure}` };
    const problem = installProblem(leaf);
    if (problem !== undefined) return { missing: problem };
  }
  const native = requireAddon(leaf, platform);
  if (typeof native === "string") return { missing: native };
  native.__ompInstallTokioRuntime?.();
  return { grep: grepWith(native), version: VERSION };
}

/** Why the install in `DIR` is not the pinned release, or undefined when it is. */
function installProblem(leaf: string): string | undefined {
  const core = join(DIR, "node_modules", "@oh-my-pi", "pi-natives");
  const coreVersion = packageVersion(core);
  if (coreVersion !== VERSION) return `${CORE} is ${coreVersion ?? "not installed"}`;
  const leafVersion = packageVersion(leaf);
  // npm skips an optional dependency it cannot install instead of failing: check it came.
  if (leafVersion !== VERSION) return `${leaf} is ${leafVersion ?? "not installed"}`;
  return undefined;
}

function packageVersion(dir: string): string | undefined {
  try {
    const manifest: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const version = (manifest as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/** Runs npm; resolves to undefined when it succeeded, else to what went wrong. */
function npmInstall(): Promise<string | undefined> {
  mkdirSync(DIR, { recursive: true });
  const args = [
    "install",
    "--prefix",
    DIR,
    "--no-save",
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    "--loglevel=error",
    `${CORE}@${VERSION}`,
  ];
  return new Promise((resolve) => {
    execFile(
      "npm",
      args,
      // npm.cmd is a batch file, which Windows runs only through a shell.
      { timeout: INSTALL_TIMEOUT_MS, shell: process.platform === "win32" },
      (error, _stdout, stderr) => {
        if (!error) return resolve(undefined);
        // npm's first lines say what failed (code, then the request); its last, where its log is.
        const said = stderr
          .split("\n")
          .map((line) => line.replace(/^npm (error|ERR!) ?/, "").trim())
          .filter((line) => line !== "" && !line.startsWith("A complete log"));
        resolve(said.slice(0, 4).join("; ") || error.message);
      },
    );
  });
}

/** The addon, or why it cannot be loaded. */
function requireAddon(leaf: string, platform: string): NativeBindings | string {
  const require = createRequire(import.meta.url);
  const sentinel = `__piNativesV${VERSION.replaceAll(".", "_")}`;
  const errors: string[] = [];
  for (const file of addonFiles(platform)) {
    const path = join(leaf, file);
    if (!existsSync(path)) continue;
    try {
      const bindings = require(path) as NativeBindings & Record<string, unknown>;
      // The release names an export after its version: a stale addon cannot pass for this one.
      if (typeof bindings[sentinel] !== "function") {
        errors.push(`${path} is not ${VERSION} (no ${sentinel})`);
        continue;
      }
      return bindings;
    } catch (error) {
      errors.push(`${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return errors.length > 0 ? errors.join("; ") : `no addon for ${platform} in ${leaf}`;
}

/**
 * The addon files to try, best first. x64 ships an AVX2 ("modern") build and a "baseline" one,
 * and pi's loader picks the AVX2 one on a CPU that has AVX2; this detects it as that loader does
 * on Linux and, where that takes a subprocess (macOS, Windows), settles for the baseline one.
 */
function addonFiles(platform: string): string[] {
  if (process.arch !== "x64") return [`pi_natives.${platform}.node`];
  const baseline = `pi_natives.${platform}-baseline.node`;
  return hasAvx2() ? [`pi_natives.${platform}-modern.node`, baseline] : [baseline];
}

function hasAvx2(): boolean {
  if (process.platform !== "linux") return false;
  try {
    return /\bavx2\b/.test(readFileSync("/proc/cpuinfo", "utf8"));
  } catch {
    return false;
  }
}

function grepWith(native: NativeBindings): PiGrep {
  return async (root, pattern, { ignoreCase, word }) => {
    const result = await native.grep({
      pattern: word ? `(?:(?m:^)|\\W)(?:${pattern})(?:\\W|(?m:$))` : pattern,
      path: root,
      ignoreCase,
      hidden: false,
      gitignore: true,
      mode: "content",
    });
    // Neither should happen with no limits set; if one does, the lines are not all rg's.
    if (result.limitReached) throw new Error(`pi-natives grep stopped at a limit in ${root}`);
    const lines: string[] = [];
    for (const match of result.matches) {
      if (match.truncated)
        throw new Error(`pi-natives grep truncated ${match.path}:${match.lineNumber}`);
      lines.push(`${match.path}:${match.lineNumber}:${match.line}`);
    }
    return lines;
  };
}

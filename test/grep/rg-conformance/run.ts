/**
 * Runs one conformance case: its files in a fresh temporary directory, then real `rg` and the
 * built `freshfs grep` on them with the case's arguments, and compares stdout (byte for byte)
 * and the exit status. stderr is recorded, not compared: messages are worded differently on
 * purpose, and what matters to a caller is the output and the status.
 *
 * rg runs as `rg --no-heading --with-filename --line-number --sort path --color never ARGS`,
 * freshfs as `freshfs grep ARGS`, because freshfs's plain output is defined as what that rg
 * prints. rg lets a later flag override an earlier one, so a case's own -N, --no-filename,
 * --heading or --sort still wins. Without --sort rg's order is not deterministic anyway (it
 * searches in parallel), and ripgrep's own tests sort their output where it matters, so fixing
 * the order costs the comparison nothing.
 *
 * One refinement: a default is left out when the case sets that option itself (either way).
 * The case's flag would win anyway, but rg 13's argument parser (clap 2) trips over some
 * repeats: `--sort path --sort path PATTERN` takes PATTERN as a second --sort value, and
 * `--line-number -nU` is rejected as a repeated --line-number. Those errors would be the
 * harness's doing, not rg's behaviour.
 *
 * Both tools get the same isolation: stdin closed (rg given no path would otherwise search a
 * piped stdin), HOME and XDG_CONFIG_HOME pointing at empty directories (no global gitignore),
 * no system git config, no RIPGREP_CONFIG_PATH and no inherited GIT_* variables.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import {
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  symlink,
  truncate,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CASE_DIR, type Case, type Content, type SkipKind, type Time } from "./cases.js";
import { flagsOf, SUPPORTED } from "./flags.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const DATA = fileURLToPath(new URL("./data/", import.meta.url));
export const FRESHFS_BIN = join(REPO, "dist", "cli", "main.js");

/**
 * What freshfs's plain output is defined as, put before the case's args so those win; each
 * default with the flags that set the same option (see the top comment).
 */
const RG_DEFAULTS: readonly {
  readonly args: readonly string[];
  readonly setBy: readonly string[];
}[] = [
  { args: ["--no-heading"], setBy: ["--heading", "--no-heading", "-p", "--pretty"] },
  { args: ["--with-filename"], setBy: ["-H", "--with-filename", "-I", "--no-filename"] },
  { args: ["--line-number"], setBy: ["-n", "--line-number", "-N", "--no-line-number"] },
  { args: ["--sort", "path"], setBy: ["--sort", "--sortr", "--sort-files"] },
  { args: ["--color", "never"], setBy: ["--color"] },
];

/** rg's full argument list for a case's args. */
export function rgArgs(args: readonly string[]): string[] {
  const used = new Set(flagsOf(args));
  const defaults = RG_DEFAULTS.filter((d) => !d.setBy.some((flag) => used.has(flag)));
  return [...defaults.flatMap((d) => d.args), ...args];
}

/** A process that outlives this is reported as a timeout (a disagreement), not awaited. */
const TIMEOUT_MS = 20_000;

/** Base of the case times (2020-09-13): in the past, so no tool sees a file from the future. */
const BASE_TIME = 1_600_000_000;

export interface ToolRun {
  /** The exit code; null when killed (see signal, timedOut). */
  readonly status: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CaseResult {
  readonly id: string;
  readonly agree: boolean;
  readonly rg: ToolRun;
  readonly freshfs: ToolRun;
}

export function hasRg(): boolean {
  return spawnSync("rg", ["--version"], { stdio: "ignore" }).status === 0;
}

export function hasFreshfsBuild(): boolean {
  return existsSync(FRESHFS_BIN);
}

/** Supported: not skipped, and every flag it uses is one freshfs supports. */
export function isSupported(c: Case): boolean {
  return c.skip === undefined && flagsOf(c.args).every((flag) => SUPPORTED.has(flag));
}

interface RawRun {
  readonly run: ToolRun;
  readonly stdout: Buffer;
}

function execute(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<RawRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, TIMEOUT_MS);
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    const finish = (status: number | null, signal: string | null, extra = "") => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out);
      resolve({
        stdout,
        run: {
          status,
          signal,
          timedOut,
          stdout: stdout.toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8") + extra,
        },
      });
    };
    // A missing binary is an answer too (status null), so the suite reports it instead of dying.
    child.on("error", (error) => finish(null, null, `spawn failed: ${error.message}\n`));
    child.on("close", (code, signal) => finish(code, signal));
  });
}

async function bytesOf(content: Content): Promise<Uint8Array | number> {
  if (typeof content === "string") return Buffer.from(content, "utf8");
  if ("base64" in content) return Buffer.from(content.base64, "base64");
  if ("fixture" in content) return readFile(join(DATA, content.fixture));
  return content.size;
}

async function materialize(c: Case, dir: string): Promise<void> {
  for (const sub of c.dirs ?? []) await mkdir(join(dir, sub), { recursive: true });
  for (const [path, content] of Object.entries(c.files ?? {})) {
    const full = join(dir, path);
    await mkdir(dirname(full), { recursive: true });
    const bytes = await bytesOf(content);
    if (typeof bytes === "number") {
      await writeFile(full, "");
      await truncate(full, bytes);
    } else {
      await writeFile(full, bytes);
    }
  }
  for (const [link, target] of Object.entries(c.links ?? {})) {
    const full = join(dir, link);
    await mkdir(dirname(full), { recursive: true });
    await symlink(join(dir, target), full);
  }
}

/** Reading a file can move its atime (relatime), so times are set again before each tool. */
async function applyTimes(c: Case, dir: string): Promise<void> {
  const entries = Object.entries(c.times ?? {}) as [string, Time][];
  for (const [path, time] of entries) {
    const [atime, mtime] = typeof time === "number" ? [time, time] : time;
    await utimes(join(dir, path), BASE_TIME + atime, BASE_TIME + mtime);
  }
}

function isolatedEnv(home: string, xdg: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("GIT_") && key !== "RIPGREP_CONFIG_PATH") env[key] = value;
  }
  return { ...env, HOME: home, XDG_CONFIG_HOME: xdg, GIT_CONFIG_NOSYSTEM: "1" };
}

/** Runs one case (skipped or not: the caller decides); the temporary directory is removed. */
export async function runCase(c: Case): Promise<CaseResult> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "freshfs-rg-conformance-")));
  try {
    const home = join(root, "home");
    const xdg = join(root, "xdg");
    const dir = join(root, "case");
    await mkdir(home);
    await mkdir(xdg);
    await mkdir(dir);
    await materialize(c, dir);
    const env = isolatedEnv(home, xdg);
    const cwd = c.cwd === undefined ? dir : join(dir, c.cwd);
    const args = c.args.map((arg) => arg.split(CASE_DIR).join(dir));

    await applyTimes(c, dir);
    const rg = await execute("rg", rgArgs(args), cwd, env);
    await applyTimes(c, dir);
    const freshfs = await execute(process.execPath, [FRESHFS_BIN, "grep", ...args], cwd, env);

    const agree =
      !rg.run.timedOut &&
      !freshfs.run.timedOut &&
      rg.run.status === freshfs.run.status &&
      rg.stdout.equals(freshfs.stdout);
    return { id: c.id, agree, rg: rg.run, freshfs: freshfs.run };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * Runs `cases` a few at a time (each case already runs two processes one after the other),
 * in input order in the result.
 */
export async function runCases(
  cases: readonly Case[],
  options: { concurrency?: number; onResult?: (result: CaseResult) => void } = {},
): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const result = await runCase(cases[index] as Case);
      results[index] = result;
      options.onResult?.(result);
    }
  };
  const width = Math.max(1, Math.min(options.concurrency ?? 4, cases.length));
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

export interface Summary {
  readonly total: number;
  readonly skipped: Readonly<Partial<Record<SkipKind, number>>>;
  readonly skippedTotal: number;
  readonly unsupported: number;
  readonly supported: number;
  /** Supported cases on which freshfs agrees with rg. */
  readonly agreeing: number;
  /**
   * Unsupported cases that agree anyway (often both tools rejecting a flag); undefined when
   * none of them was run.
   */
  readonly unsupportedAgreeing: number | undefined;
  /** Unsupported flag → how many run cases use it. */
  readonly missingFlags: Readonly<Record<string, number>>;
}

/** Counts over all `cases`; `results` are those that were run, matched by id. */
export function summarize(cases: readonly Case[], results: readonly CaseResult[]): Summary {
  const byId = new Map(results.map((result) => [result.id, result]));
  const skipped: Partial<Record<SkipKind, number>> = {};
  const missingFlags: Record<string, number> = {};
  let skippedTotal = 0;
  let unsupported = 0;
  let supported = 0;
  let agreeing = 0;
  let unsupportedAgreeing = 0;
  let unsupportedRun = 0;
  for (const c of cases) {
    if (c.skip !== undefined) {
      skipped[c.skip.kind] = (skipped[c.skip.kind] ?? 0) + 1;
      skippedTotal++;
      continue;
    }
    const result = byId.get(c.id);
    const agrees = result?.agree === true;
    if (isSupported(c)) {
      supported++;
      if (agrees) agreeing++;
    } else {
      unsupported++;
      if (result !== undefined) unsupportedRun++;
      if (agrees) unsupportedAgreeing++;
      for (const flag of flagsOf(c.args)) {
        if (!SUPPORTED.has(flag)) missingFlags[flag] = (missingFlags[flag] ?? 0) + 1;
      }
    }
  }
  return {
    total: cases.length,
    skipped,
    skippedTotal,
    unsupported,
    supported,
    agreeing,
    unsupportedAgreeing: unsupportedRun === 0 ? undefined : unsupportedAgreeing,
    missingFlags,
  };
}

/** The summary as a few lines of text, for the test's log and the report. */
export function formatSummary(summary: Summary): string {
  const kinds = Object.entries(summary.skipped)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
  const flags = Object.entries(summary.missingFlags)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([flag, count]) => `${flag} ${count}`)
    .join(", ");
  const ratio =
    summary.supported === 0
      ? "n/a"
      : `${((100 * summary.agreeing) / summary.supported).toFixed(1)}%`;
  return [
    `rg conformance: ${summary.total} cases`,
    `  skipped ${summary.skippedTotal}${kinds === "" ? "" : ` (${kinds})`}`,
    summary.unsupportedAgreeing === undefined
      ? `  unsupported ${summary.unsupported} (not run)`
      : `  unsupported ${summary.unsupported} (agreeing anyway: ${summary.unsupportedAgreeing})`,
    `  supported ${summary.supported}, agreeing ${summary.agreeing} (${ratio})`,
    `  flags keeping cases unsupported: ${flags === "" ? "none" : flags}`,
  ].join("\n");
}

/**
 * A daemon started anew over a tree it kept before: how soon its first glob answers and its
 * first grep answers from the content index loaded from its snapshot (from `freshfs daemon
 * start`), what a command with no daemon running costs (it answers itself), and whether the
 * answers are fresh after 100 files changed while no daemon ran. Run by the linux suite after its daemon stops (which writes the
 * snapshot), with that daemon's runtime and cache directories.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const CLIENT = new URL("../dist/client/connection.js", import.meta.url).href;
const HERE = fileURLToPath(import.meta.url);

interface Answer {
  readonly ms: number;
  readonly stdout: string;
  readonly status: number | null;
  readonly stderr: string;
}

function cli(args: readonly string[], root: string, env: NodeJS.ProcessEnv): Answer {
  const started = performance.now();
  const run = spawnSync(process.execPath, [CLI, ...args], {
    cwd: root,
    env,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  return {
    ms: performance.now() - started,
    stdout: run.stdout,
    status: run.status,
    stderr: run.stderr,
  };
}

/** rg's lines for `args` in `root`, sorted (its order is its threads'). */
function rg(args: readonly string[], root: string): string {
  const run = spawnSync("rg", [...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return sortedLines(run.stdout);
}

function sortedLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .sort()
    .join("\n");
}

interface DaemonSeen {
  readonly outcome: string | undefined;
  readonly restore: string | undefined;
  readonly status: string | undefined;
  readonly fromSavedListing: number;
  readonly rssMb: number;
}

interface Status {
  readonly memory: { readonly rss: number };
  readonly roots: readonly {
    readonly root: string;
    readonly status: string;
    readonly fromSavedListing: number;
    readonly snapshots: readonly { readonly outcome?: string; readonly restore?: string }[];
  }[];
}

/**
 * The daemon's view of `root`, asked over its socket (this process's environment names it):
 * polled every 50 ms, a \`freshfs daemon status\` each time would be a Node start each.
 */
async function status(root: string): Promise<DaemonSeen | undefined> {
  const { DaemonClient } = (await import(CLIENT)) as {
    DaemonClient: {
      connect(options: { start: false }): Promise<{
        request<T>(method: string, params: unknown): Promise<T>;
        close(): void;
      }>;
    };
  };
  let parsed: Status;
  try {
    const client = await DaemonClient.connect({ start: false });
    try {
      parsed = await client.request<Status>("status", {});
    } finally {
      client.close();
    }
  } catch {
    return undefined;
  }
  const kept = parsed.roots.find((one) => one.root === realpathSync(root));
  return {
    outcome: kept?.snapshots[0]?.outcome,
    restore: kept?.snapshots[0]?.restore,
    status: kept?.status,
    fromSavedListing: kept?.fromSavedListing ?? 0,
    rssMb: parsed.memory.rss / 1024 / 1024,
  };
}

/** Until the daemon keeps `root` live with its snapshot loaded (or 60 s). */
async function untilLoaded(root: string): Promise<DaemonSeen | undefined> {
  for (let i = 0; i < 1200; i++) {
    const seen = await status(root);
    if (seen?.status === "live" && seen.restore === "done") return seen;
    await sleep(50);
  }
  return status(root);
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/**
 * Stops the daemon of `env` and waits until its process is gone: it writes its snapshots after
 * it stops listening, and a daemon started before it lets go of its lock would wait for it.
 */
export async function stopDaemon(env: NodeJS.ProcessEnv): Promise<void> {
  const run = spawnSync(process.execPath, [CLI, "daemon", "status", "--json"], {
    env,
    encoding: "utf8",
  });
  if (run.status !== 0) return;
  const { pid } = JSON.parse(run.stdout) as { pid: number };
  spawnSync(process.execPath, [CLI, "daemon", "stop"], { env, stdio: "ignore" });
  for (let i = 0; i < 1200 && !gone(pid); i++) await sleep(50);
}

export interface RestartRun {
  /** A command with no daemon running: it answers itself and leaves one starting. */
  readonly aloneMs: number;
  /** From `freshfs daemon start` to each answer (ms). */
  readonly globMs: number;
  readonly grepMs: number;
  readonly outcome: string | undefined;
  /** Whether the glob was answered from the saved listing (the tree's walk still running). */
  readonly globFromSaved: boolean;
  readonly rssMb: number | undefined;
  readonly identical: boolean;
}

export interface RestartResult {
  readonly snapshotMb: number;
  readonly runs: readonly RestartRun[];
  readonly changed: {
    readonly files: number;
    readonly grepMs: number;
    readonly outcome: string | undefined;
    /** Each answer as rg's (sorted lines): the token's files, the literal's counts, the glob. */
    readonly checks: readonly { readonly what: string; readonly identical: boolean }[];
  };
}

const GLOB = "**/*.c";
const GREP = ["grep", "-c", "PM_RESUME"] as const;

function snapshotBytes(env: NodeJS.ProcessEnv): number {
  const dir = join(env.FRESHFS_CACHE_DIR as string, "snapshots");
  let bytes = 0;
  for (const name of readdirSync(dir)) {
    if (name.endsWith(".snapshot")) bytes += statSync(join(dir, name)).size;
  }
  return bytes;
}

/**
 * Restarts the daemon `reps` times, then once after changing 100 files (appending a token to
 * each; their bytes are put back after). The daemon must be stopped, with its snapshot written,
 * when this is called; it is stopped again at the end.
 */
async function measureHere(
  root: string,
  env: NodeJS.ProcessEnv,
  reps: number,
): Promise<RestartResult> {
  const snapshotMb = snapshotBytes(env) / 1024 / 1024;
  const grepOracle = rg(["-c", "PM_RESUME"], root);
  const runs: RestartRun[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const alone = cli([...GREP], root, env);
    await stopDaemon(env);
    const started = performance.now();
    cli(["daemon", "start"], root, env);
    cli(["glob", GLOB], root, env);
    const globMs = performance.now() - started;
    const globFromSaved = ((await status(root))?.fromSavedListing ?? 0) > 0;
    await untilLoaded(root);
    const grep = cli([...GREP], root, env);
    const grepMs = performance.now() - started;
    const seen = await status(root);
    runs.push({
      aloneMs: alone.ms,
      globMs,
      grepMs,
      outcome: seen?.outcome,
      globFromSaved,
      rssMb: seen?.rssMb,
      identical:
        sortedLines(grep.stdout) === grepOracle && sortedLines(alone.stdout) === grepOracle,
    });
    await stopDaemon(env);
  }
  return { snapshotMb, runs, changed: await changedWhileDown(root, env, grepOracle) };
}

async function changedWhileDown(
  root: string,
  env: NodeJS.ProcessEnv,
  grepOracle: string,
): Promise<RestartResult["changed"]> {
  const files = rg(["--files", "-g", "*.c"], root).split("\n");
  const step = Math.max(1, Math.floor(files.length / 100));
  const chosen = files.filter((_, i) => i % step === 0).slice(0, 100);
  const token = `FRESHFS_RESTART_${Date.now()}`;
  const originals = new Map(chosen.map((file) => [file, readFileSync(join(root, file))]));
  try {
    for (const [file, bytes] of originals) {
      writeFileSync(join(root, file), Buffer.concat([bytes, Buffer.from(`\n// ${token}\n`)]));
    }
    const started = performance.now();
    cli(["daemon", "start"], root, env);
    const seen = await untilLoaded(root);
    const first = cli(["grep", "-l", token], root, env);
    const grepMs = performance.now() - started;
    const counts = cli([...GREP], root, env);
    const glob = cli(["glob", GLOB], root, env);
    const checks = [
      {
        what: `grep -l ${token.replace(/\d+$/, "N")}`,
        identical: sortedLines(first.stdout) === rg(["-l", token], root),
      },
      { what: "grep -c PM_RESUME", identical: sortedLines(counts.stdout) === grepOracle },
      {
        what: `glob ${GLOB}`,
        identical: sortedLines(glob.stdout) === rg(["--files", "-g", "*.c"], root),
      },
    ];
    return { files: chosen.length, grepMs, outcome: seen?.outcome, checks };
  } finally {
    for (const [file, bytes] of originals) writeFileSync(join(root, file), bytes);
    await stopDaemon(env);
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * `measureHere` in a process of its own, started with `env` (which names the daemon): the
 * benchmark's own holds the library's tree and index of the corpus, and each command it
 * started would cost a fork of them.
 */
export function measureRestart(root: string, env: NodeJS.ProcessEnv, reps: number): RestartResult {
  const ran = spawnSync(process.execPath, ["--import", "tsx", HERE, root, String(reps)], {
    env,
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  if (ran.status !== 0) throw new Error(`bench/daemon-restart.ts failed: ${ran.stderr}`);
  return JSON.parse(ran.stdout) as RestartResult;
}

if (process.argv[1] === HERE) {
  const [root, reps] = process.argv.slice(2) as [string, string];
  process.stdout.write(JSON.stringify(await measureHere(root, process.env, Number(reps))));
}

/** The section of BENCHMARKS.md. */
export function restartReport(result: RestartResult): string {
  const ms = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(0)}`);
  const lines = [
    "### A daemon restarted with a snapshot",
    "",
    `The daemon above is stopped (it writes its content index, ${result.snapshotMb.toFixed(0)} MB, and the tree's listing to its cache directory). Then, ${result.runs.length} times: a \`freshfs ${GREP.join(" ")}\` with no daemon running (it answers itself, as \`--no-daemon\` does, and leaves a daemon starting; that daemon is stopped), then \`freshfs daemon start\` and, timed from it, \`freshfs glob '${GLOB}'\` (answered from the saved listing while the tree's walk runs, where every directory's stat holds) and the first \`freshfs ${GREP.join(" ")}\` answered from the index loaded from the snapshot (each file confirmed by its stat), asked once \`daemon status\` says it is loaded.`,
    "",
    "| run | no daemon running (ms) | from start: first glob (ms) | from start: first indexed grep (ms) | glob from the saved listing | what the load came to | daemon RSS (MB) | grep as rg |",
    "|---|--:|--:|--:|---|---|--:|---|",
  ];
  result.runs.forEach((run, i) => {
    lines.push(
      `| ${i + 1} | ${ms(run.aloneMs)} | ${ms(run.globMs)} | ${ms(run.grepMs)} | ${run.globFromSaved ? "yes" : "no"} | ${run.outcome ?? "–"} | ${ms(run.rssMb)} | ${run.identical ? "yes" : "**no**"} |`,
    );
  });
  lines.push(
    "",
    `Medians: no daemon running ${ms(median(result.runs.map((r) => r.aloneMs)))} ms; from the start, first glob ${ms(median(result.runs.map((r) => r.globMs)))} ms, first indexed grep ${ms(median(result.runs.map((r) => r.grepMs)))} ms.`,
    "",
    `With ${result.changed.files} files changed while no daemon ran (a token appended to each; put back after): from \`daemon start\`, the first \`grep -l\` of the token answered in ${ms(result.changed.grepMs)} ms; the load: ${result.changed.outcome ?? "–"}. ${result.changed.checks.map((check) => `${check.what}: ${check.identical ? "as rg" : "**not as rg**"}`).join("; ")}.`,
  );
  return lines.join("\n");
}

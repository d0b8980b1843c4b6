/**
 * Four agents on one tree: four `freshfs mcp` servers (each with its own official SDK client)
 * working in their own processes (`--no-daemon`), against the same four through one daemon.
 * Each server globs and greps the tree until its content index is built (the daemon's is built
 * once); then the memory of every process (resident now and at its peak, from /proc), the
 * inotify watches they hold, and the latency of a warm grep.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { quantile } from "./lib/measure.js";
import { findCorpus } from "./lib/peers.js";
import { inotifyWatches } from "./lib/proc.js";
import type { SuiteResult } from "./lib/report.js";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const SERVERS = 4;

export interface DaemonBenchOptions {
  readonly quick: boolean;
}

interface Memory {
  readonly rssMb: number;
  readonly peakMb: number;
}

/** VmRSS and VmHWM of `pid`, in MB. */
function memoryOf(pid: number): Memory {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return { rssMb: (kb("VmRSS") * 1024) / 1e6, peakMb: (kb("VmHWM") * 1024) / 1e6 };
}

interface Server {
  readonly client: Client;
  readonly pid: number;
}

async function startServer(root: string, env: Record<string, string>, daemon: boolean) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", "--root", root, ...(daemon ? [] : ["--no-daemon"])],
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "freshfs-bench-daemon", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: transport.pid as number } satisfies Server;
}

async function call(server: Server, name: string, args: Record<string, unknown>) {
  const started = performance.now();
  const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult;
  const meta = result._meta as Record<string, { pid: number; daemon: boolean }> | undefined;
  return { ms: performance.now() - started, by: meta?.["freshfs/answeredBy"], result };
}

interface WayResult {
  readonly way: string;
  readonly servers: readonly Memory[];
  readonly daemon: Memory | undefined;
  readonly watches: number;
  readonly firstGrepMs: number;
  readonly warmGrepMs: number;
  readonly answeredByDaemon: number;
  readonly answers: number;
}

const GREP = { pattern: "function", output_mode: "files_with_matches", head_limit: 0 };

/**
 * Runs the four servers one way: each globs, then greps every 2 s until the tree's index stops
 * growing (its warm grep then reads only the files that can match), then is measured.
 */
async function oneWay(root: string, env: Record<string, string>, daemon: boolean, quick: boolean) {
  const servers: Server[] = [];
  let answers = 0;
  let byDaemon = 0;
  let daemonPid: number | undefined;
  const note = (by: { pid: number; daemon: boolean } | undefined) => {
    answers++;
    if (by?.daemon) {
      byDaemon++;
      daemonPid = by.pid;
    }
  };
  try {
    for (let i = 0; i < SERVERS; i++) servers.push(await startServer(root, env, daemon));
    const firsts: number[] = [];
    for (const server of servers) {
      note((await call(server, "glob", { pattern: "**/*.js" })).by);
      const first = await call(server, "grep", GREP);
      note(first.by);
      firsts.push(first.ms);
    }
    // Until a round of greps is as fast as the one before: the indexes are built.
    let last = Number.POSITIVE_INFINITY;
    for (let round = 0; round < (quick ? 3 : 30); round++) {
      await sleep(quick ? 500 : 2000);
      const times: number[] = [];
      for (const server of servers) {
        const warm = await call(server, "grep", GREP);
        note(warm.by);
        times.push(warm.ms);
      }
      const median = quantile(
        [...times].sort((a, b) => a - b),
        0.5,
      );
      if (median > last * 0.8) break;
      last = median;
    }
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      for (const server of servers) {
        const one = await call(server, "grep", GREP);
        note(one.by);
        warm.push(one.ms);
      }
    }
    const pids = [...servers.map((s) => s.pid), ...(daemonPid ? [daemonPid] : [])];
    return {
      way: daemon ? "through one daemon" : "each in its own process",
      servers: servers.map((server) => memoryOf(server.pid)),
      daemon: daemonPid ? memoryOf(daemonPid) : undefined,
      watches: pids.reduce((sum, pid) => sum + (inotifyWatches(pid) ?? 0), 0),
      firstGrepMs: quantile(
        [...firsts].sort((a, b) => a - b),
        0.5,
      ),
      warmGrepMs: quantile(
        [...warm].sort((a, b) => a - b),
        0.5,
      ),
      answeredByDaemon: byDaemon,
      answers,
    } satisfies WayResult;
  } finally {
    for (const server of servers) await server.client.close().catch(() => undefined);
    if (daemonPid) {
      spawnSync(process.execPath, [CLI, "daemon", "stop"], { env, stdio: "ignore" });
    }
  }
}

/** A tree for quick mode: 40 directories of 50 small files. */
function quickTree(dir: string): string {
  const root = join(dir, "tree");
  for (let d = 0; d < 40; d++) {
    mkdirSync(join(root, `d${d}`), { recursive: true });
    for (let f = 0; f < 50; f++) {
      const text = f % 3 === 0 ? `function f${f}() {}\n` : `const x${f} = ${f};\n`;
      writeFileSync(join(root, `d${d}`, `f${f}.js`), text);
    }
  }
  return root;
}

function stringEnv(extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) out[key] = value;
  return { ...out, ...extra };
}

export async function benchDaemon(options: DaemonBenchOptions): Promise<SuiteResult> {
  const scratch = mkdtempSync(join(tmpdir(), "freshfs-bench-daemon-"));
  try {
    const root = options.quick ? quickTree(scratch) : findCorpus();
    if (root === undefined) throw new Error("bench: daemon: no corpus (npm run bench builds it)");
    const runtime = join(scratch, "run");
    mkdirSync(runtime, { mode: 0o700 });
    const env = stringEnv({
      FRESHFS_RUNTIME_DIR: runtime,
      FRESHFS_CACHE_DIR: join(scratch, "cache"),
    });
    const alone = await oneWay(root, env, false, options.quick);
    const shared = await oneWay(root, env, true, options.quick);
    return report([alone, shared]);
  } finally {
    spawnSync("pkill", ["-KILL", "-f", `daemon run --socket ${scratch}/`], { stdio: "ignore" });
    rmSync(scratch, { recursive: true, force: true });
  }
}

const mb = (value: number) => value.toFixed(0);

function report(ways: readonly WayResult[]): SuiteResult {
  const rows = ways.map((way) => {
    const rss = way.servers.map((m) => m.rssMb);
    const peaks = way.servers.map((m) => m.peakMb);
    const total = rss.reduce((a, b) => a + b, 0) + (way.daemon?.rssMb ?? 0);
    return `| ${way.way} | ${mb(Math.min(...rss))}–${mb(Math.max(...rss))} | ${mb(Math.min(...peaks))}–${mb(Math.max(...peaks))} | ${way.daemon ? `${mb(way.daemon.rssMb)} / ${mb(way.daemon.peakMb)}` : "–"} | ${mb(total)} | ${way.watches.toLocaleString("en-US")} | ${way.firstGrepMs.toFixed(0)} | ${way.warmGrepMs.toFixed(1)} | ${way.answeredByDaemon} of ${way.answers} |`;
  });
  const [alone, shared] = ways as [WayResult, WayResult];
  const onePeak = Math.max(...alone.servers.map((m) => m.peakMb));
  const oneRss = Math.max(...alone.servers.map((m) => m.rssMb));
  const daemon = shared.daemon;
  return {
    heading: "Four MCP servers on one tree, with and without the daemon (`bench/daemon.ts`)",
    method: `${SERVERS} \`freshfs mcp\` servers, each driven by its own official SDK client, on the corpus: each globs \`**/*.js\`, then greps \`function\` (files with matches) every 2 s until a round is no faster than the one before (the content indexes built), then 5 more rounds are timed. First each server in its own process (\`--no-daemon\`), then the same four through one daemon (the default). Memory from \`/proc/PID/status\` (VmRSS now, VmHWM the peak), inotify watches counted in every process's descriptors; grep latency is the client's, median over the servers.`,
    body: [
      "| way | each server's RSS (MB) | each server's peak (MB) | daemon RSS / peak (MB) | total RSS (MB) | inotify watches | first grep (ms) | warm grep (ms) | answered by the daemon |",
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
      ...rows,
    ].join("\n"),
    charts: [],
    reading: [
      `Through the daemon, each server holds ${mb(Math.max(...shared.servers.map((m) => m.rssMb)))} MB at most (its peak ${mb(Math.max(...shared.servers.map((m) => m.peakMb)))} MB), where one in its own process holds ${mb(oneRss)} MB (peak ${mb(onePeak)} MB).`,
      daemon
        ? `The daemon, which keeps the one tree and index all four use, holds ${mb(daemon.rssMb)} MB (peak ${mb(daemon.peakMb)} MB): ${(daemon.rssMb / oneRss).toFixed(2)}× one server's own RSS, ${(daemon.peakMb / onePeak).toFixed(2)}× its peak.`
        : "No answer came from a daemon.",
      `inotify watches: ${alone.watches.toLocaleString("en-US")} for four servers alone, ${shared.watches.toLocaleString("en-US")} through the daemon.`,
    ],
    missing: [],
  };
}

/**
 * A busy client (issue 13): many `grep` calls pipelined to one `freshfs mcp` server at once, over
 * the official SDK client, with the server's threads and memory sampled from /proc while they
 * run. Each grep started its own workers before the pool: 1,000 calls reached 5.6 GB and 908
 * threads. Every call must be answered, and answered as the same grep alone answers it.
 *
 * Build first (`npm run build`): the server is `dist/cli/main.js mcp`.
 */
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const BIN = new URL("../dist/cli/main.js", import.meta.url).pathname;

export interface FloodOptions {
  /** Calls sent at once. */
  readonly calls: number;
  /** Files in the tree. */
  readonly files: number;
}

export interface FloodReport {
  readonly calls: number;
  readonly answered: number;
  /** Answers that differ from the same grep made alone before the flood. */
  readonly wrong: number;
  readonly errors: number;
  /** The server's threads before the flood, and the most seen while it ran. */
  readonly threadsBefore: number;
  readonly threadsPeak: number;
  /** The server's resident memory before the flood and its high-water mark after (VmHWM). */
  readonly rssBeforeMiB: number;
  readonly rssPeakMiB: number;
  readonly elapsedMs: number;
}

/** `Threads:` and `VmRSS`/`VmHWM` (KiB) of /proc/<pid>/status. */
function status(pid: number): { threads: number; rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1]);
  return { threads: field("Threads"), rss: field("VmRSS"), hwm: field("VmHWM") };
}

const PATTERNS = ["TODO", "function \\w+\\(", "return", "const [a-z]+ =", "zzz-none"];

export async function flood(options: FloodOptions): Promise<FloodReport> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "freshfs-mcp-flood-")));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--no-daemon", "--root", root],
    stderr: "ignore",
  });
  const client = new Client({ name: "freshfs-flood", version: "1.0.0" });
  try {
    for (let i = 0; i < options.files; i++) {
      const dir = join(root, `pkg${i % 8}`);
      await mkdir(dir, { recursive: true });
      const lines = Array.from({ length: 200 }, (_, n) =>
        n % 17 === 0
          ? `// TODO item ${i}-${n}`
          : `function f${i}_${n}(x) { const v${n} = x + ${n}; return v${n}; }`,
      );
      await writeFile(join(dir, `file${i}.js`), `${lines.join("\n")}\n`);
    }
    await client.connect(transport);
    const pid = transport.pid as number;
    const args = (i: number) => ({
      pattern: PATTERNS[i % PATTERNS.length],
      output_mode: i % 2 === 0 ? "count" : "files_with_matches",
    });
    const textOf = (result: CallToolResult) =>
      result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
    // What each kind of call answers alone (and the workers started, the cache warm).
    const alone = new Map<string, string>();
    for (let i = 0; i < PATTERNS.length * 2; i++) {
      const result = (await client.callTool({
        name: "grep",
        arguments: args(i),
      })) as CallToolResult;
      alone.set(JSON.stringify(args(i)), textOf(result));
    }
    const before = status(pid);
    let threadsPeak = before.threads;
    const sampler = setInterval(() => {
      threadsPeak = Math.max(threadsPeak, status(pid).threads);
    }, 5);
    const started = performance.now();
    let wrong = 0;
    let errors = 0;
    let answered = 0;
    await Promise.all(
      Array.from({ length: options.calls }, async (_, i) => {
        try {
          const result = (await client.callTool({ name: "grep", arguments: args(i) }, undefined, {
            timeout: 600_000,
          })) as CallToolResult;
          answered++;
          if (result.isError) errors++;
          else if (textOf(result) !== alone.get(JSON.stringify(args(i)))) wrong++;
        } catch {
          errors++;
        }
      }),
    );
    const elapsedMs = performance.now() - started;
    clearInterval(sampler);
    const after = status(pid);
    return {
      calls: options.calls,
      answered,
      wrong,
      errors,
      threadsBefore: before.threads,
      threadsPeak: Math.max(threadsPeak, after.threads),
      rssBeforeMiB: before.rss / 1024,
      rssPeakMiB: after.hwm / 1024,
      elapsedMs,
    };
  } finally {
    await client.close().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

export async function run(): Promise<string> {
  const rows: string[] = [];
  for (const calls of [200, 1000]) {
    const r = await flood({ calls, files: 52 });
    rows.push(
      `| ${r.calls} | ${r.answered} | ${r.wrong} | ${r.errors} | ${r.threadsBefore} → ${r.threadsPeak} | ${r.rssBeforeMiB.toFixed(0)} → ${r.rssPeakMiB.toFixed(0)} MiB | ${(r.elapsedMs / 1000).toFixed(2)} s |`,
    );
  }
  return [
    "One `freshfs mcp` server, a 52-file tree, `grep` calls (five patterns, count and files modes) all sent at once by one SDK client; the server's `/proc/<pid>/status` sampled every 5 ms.",
    "",
    "| calls pipelined | answered | answers unlike the same call alone | errors | server threads (before → peak) | server memory (RSS before → peak VmHWM) | time for all |",
    "|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
  ].join("\n");
}

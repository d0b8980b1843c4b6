/**
 * Load (issue 7, item 7): the MCP server under 50 concurrent clients' worth of mixed tool calls
 * (read, edit, write, glob, grep, find, rename) for a bounded time, over stdio, with the built
 * `node dist/cli/main.js mcp --root DIR`.
 *
 * What "50 concurrent clients" can mean with the MCP SDK, and why two runs:
 * - stdio is one client per server process, and the SDK's `Server` serves one transport. So
 *   50 agents sharing ONE server (one Workspace, one guard, one scan cache, one event loop) can
 *   only be 50 concurrent callers multiplexed over one connection: run A, one server process and
 *   one Client with 50 logical clients, each keeping one call in flight (50 in flight at once).
 *   This is the server's concurrency under load: the Workspace's locks, guard and cache shared
 *   by 50 callers.
 * - 50 agents each with their own server is the deployment stdio actually gives (each agent
 *   spawns `freshfs mcp`): run B, 50 server processes, one Client and one logical client each,
 *   all over the same directory. This measures the process model on this machine (50 Node
 *   processes on its cores), and the servers' independence over one tree.
 * Each logical client owns a directory (clients/cNN) and only mutates files there, so every
 * refusal is unexpected except the deliberate ones (counted apart, by their code); it checks
 * that glob and grep over its own directory show exactly its writes (no stale listing), and at
 * the end every file it owns must hold exactly the bytes it last wrote (nothing lost).
 */
import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";

const BIN = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

const CLIENTS = 50;
const RUN_A_MS = 50_000;
const RUN_B_MS = 40_000;
const SHARED_FILES = 1000;
const OWN_FILES = 8;
const TOOLS = ["read", "edit", "write", "rename", "glob", "grep", "find"] as const;
type ToolName = (typeof TOOLS)[number];

interface ToolStats {
  ok: number;
  /** Refusals asked for on purpose, with the code expected. */
  refused: number;
  errors: number;
  latencies: number[];
}

interface RunStats {
  readonly tools: Record<ToolName, ToolStats>;
  readonly errorSamples: string[];
  /** Own-directory glob/grep answers compared with what the client wrote. */
  checks: number;
  stale: number;
  readonly staleSamples: string[];
}

function newStats(): RunStats {
  const tools = Object.fromEntries(
    TOOLS.map((tool) => [tool, { ok: 0, refused: 0, errors: 0, latencies: [] }]),
  ) as unknown as Record<ToolName, ToolStats>;
  return { tools, errorSamples: [], checks: 0, stale: 0, staleSamples: [] };
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

/** One file a logical client owns: its current name and the exact text it last wrote. */
interface Owned {
  name: string;
  key: number;
  value: number;
  content: string;
  /** Read, written or edited by its client already (through the server it uses). */
  known: boolean;
}

function ownedContent(client: string, key: number, value: number, note: string): string {
  const filler = Array.from(
    { length: 20 },
    (_, i) => `  line ${i}: some ordinary code for ${client} file ${key};`,
  );
  return [
    `// owned by ${client} (${note})`,
    `export const value_${client}_${key} = ${value};`,
    "export function body() {",
    ...filler,
    "}",
    "",
  ].join("\n");
}

/** The tree: shared sources, ignored build output, and a directory per logical client. */
function makeTree(): { root: string; owned: Owned[][] } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "freshfs-load-")));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  execFileSync("git", ["init", "-q"], { cwd: root });
  write(".gitignore", "dist/\nnode_modules/\n*.log\n");
  for (let i = 0; i < SHARED_FILES; i++) {
    const lines = [
      `// shared module ${i}`,
      `export function fn${i}(input: string): string {`,
      i % 7 === 0 ? "  // TODO: handle the empty input" : "  // nothing to do",
      `  return input + "${i}";`,
      "}",
      i % 5 === 0 ? `export class Thing${i} {}` : "",
      "",
    ];
    write(`shared/pkg${i % 20}/src/mod${i}.ts`, lines.join("\n"));
    if (i % 10 === 0) write(`shared/pkg${i % 20}/README${i}.md`, `# Package ${i}\n`);
    if (i % 25 === 0) write(`dist/out${i}.js`, `// built ${i}\n`);
    if (i % 25 === 0) write(`shared/pkg${i % 20}/debug${i}.log`, "log\n");
  }
  const owned: Owned[][] = [];
  for (let c = 0; c < CLIENTS; c++) {
    const client = `c${String(c).padStart(2, "0")}`;
    const files: Owned[] = [];
    for (let k = 0; k < OWN_FILES; k++) {
      const content = ownedContent(client, k, 0, "initial");
      write(`clients/${client}/k${k}.ts`, content);
      files.push({ name: `k${k}.ts`, key: k, value: 0, content, known: false });
    }
    owned.push(files);
  }
  return { root, owned };
}

type Caller = (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;

/**
 * One logical client: picks calls with fixed weights until the deadline, one in flight at a time.
 */
async function logicalClient(
  index: number,
  callTool: Caller,
  owned: Owned[],
  deadline: number,
  stats: RunStats,
): Promise<void> {
  const client = `c${String(index).padStart(2, "0")}`;
  const dir = `clients/${client}`;
  const next = seededRandom(1000 + index);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  let keys = owned.length;
  let generation = 0;

  /** A call, timed; `expected` is the code of a refusal asked for on purpose. */
  const call = async (
    tool: ToolName,
    name: string,
    args: Record<string, unknown>,
    expected?: string,
  ): Promise<CallToolResult | undefined> => {
    const entry = stats.tools[tool];
    const started = performance.now();
    let result: CallToolResult;
    try {
      result = await callTool(name, args);
    } catch (error) {
      entry.latencies.push(performance.now() - started);
      entry.errors++;
      if (stats.errorSamples.length < 10) {
        stats.errorSamples.push(`${client} ${name}: threw ${(error as Error).message}`);
      }
      return undefined;
    }
    entry.latencies.push(performance.now() - started);
    const refusedAsAsked =
      result.isError === true && expected !== undefined && textOf(result).endsWith(`(${expected})`);
    if (refusedAsAsked) entry.refused++;
    else if (result.isError || expected !== undefined) {
      entry.errors++;
      if (stats.errorSamples.length < 10) {
        stats.errorSamples.push(
          `${client} ${name} ${JSON.stringify(args).slice(0, 120)}: ${expected ? `expected ${expected}, got ` : ""}${textOf(result).slice(0, 200)}`,
        );
      }
      return undefined;
    } else entry.ok++;
    return refusedAsAsked ? undefined : result;
  };

  const stale = (what: string) => {
    stats.stale++;
    if (stats.staleSamples.length < 10) stats.staleSamples.push(`${client}: ${what}`);
  };

  const readOwn = async (file: Owned) => {
    const result = await call("read", "read", { file_path: `${dir}/${file.name}` });
    if (result) file.known = true;
    return result;
  };

  const ops: [number, () => Promise<void>][] = [
    // Reads: own files, and shared ones.
    [14, async () => void (await readOwn(pick(owned)))],
    [
      10,
      async () => {
        const i = Math.floor(next() * SHARED_FILES);
        await call("read", "read", { file_path: `shared/pkg${i % 20}/src/mod${i}.ts` });
      },
    ],
    // Edit an own file: sometimes after a fresh read, sometimes relying on earlier calls.
    [
      20,
      async () => {
        const file = pick(owned);
        // A model reads a file before its first edit; after that, half the time it edits on.
        if (!file.known || next() < 0.5) await readOwn(file);
        const result = await call("edit", "edit", {
          file_path: `${dir}/${file.name}`,
          old_string: `value_${client}_${file.key} = ${file.value};`,
          new_string: `value_${client}_${file.key} = ${file.value + 1};`,
        });
        if (result) {
          file.value++;
          file.content = file.content.replace(
            `value_${client}_${file.key} = ${file.value - 1};`,
            `value_${client}_${file.key} = ${file.value};`,
          );
        }
      },
    ],
    // Overwrite an own file after reading it; create a new one now and then.
    [
      5,
      async () => {
        const file = pick(owned);
        await readOwn(file);
        const content = ownedContent(client, file.key, file.value, `rewritten ${++generation}`);
        const result = await call("write", "write", { file_path: `${dir}/${file.name}`, content });
        if (result) file.content = content;
      },
    ],
    [
      3,
      async () => {
        if (owned.length >= 16) return;
        const key = keys++;
        const content = ownedContent(client, key, 0, "created");
        const result = await call("write", "write", { file_path: `${dir}/k${key}.ts`, content });
        if (result) owned.push({ name: `k${key}.ts`, key, value: 0, content, known: true });
      },
    ],
    // Rename an own file (the guard follows it: later edits need no new read).
    [
      5,
      async () => {
        const file = pick(owned);
        const to = `k${file.key}-r${++generation}.ts`;
        const result = await call("rename", "rename", {
          from: `${dir}/${file.name}`,
          to: `${dir}/${to}`,
        });
        if (result) file.name = to;
      },
    ],
    // Searches: own directory (checked against what this client wrote), and the shared tree.
    [
      5,
      async () => {
        const result = await call("glob", "glob", { pattern: `${dir}/*.ts`, limit: 1000 });
        if (!result) return;
        stats.checks++;
        const seen = [...((result.structuredContent as { files: string[] }).files ?? [])].sort();
        const mine = owned.map((f) => `${dir}/${f.name}`).sort();
        if (JSON.stringify(seen) !== JSON.stringify(mine)) {
          stale(
            `glob saw ${seen.length} files, owns ${mine.length}: ${seen.filter((p) => !mine.includes(p)).join(",")} / ${mine.filter((p) => !seen.includes(p)).join(",")}`,
          );
        }
      },
    ],
    [
      4,
      async () =>
        void (await call("glob", "glob", {
          pattern: pick([
            "shared/**/*.ts",
            "**/*.md",
            `shared/pkg${Math.floor(next() * 20)}/**`,
            "*.json",
          ]),
        })),
    ],
    [
      5,
      async () => {
        const result = await call("grep", "grep", {
          pattern: `value_${client}_\\d+ = \\d+;`,
          path: dir,
          output_mode: "content",
          head_limit: 0,
        });
        if (!result) return;
        stats.checks++;
        const lines = (result.structuredContent as { lines: { path: string; text: string }[] })
          .lines;
        const seen = lines.map((l) => `${l.path}:${l.text}`).sort();
        const mine = owned
          .map((f) => `${dir}/${f.name}:export const value_${client}_${f.key} = ${f.value};`)
          .sort();
        if (JSON.stringify(seen) !== JSON.stringify(mine)) {
          stale(
            `grep saw ${seen.filter((p) => !mine.includes(p)).join(",")} but wrote ${mine.filter((p) => !seen.includes(p)).join(",")}`,
          );
        }
      },
    ],
    [
      6,
      async () =>
        void (await call(
          "grep",
          "grep",
          pick([
            { pattern: "export function \\w+" },
            { pattern: "TODO", output_mode: "count" },
            { pattern: "class thing\\d+", "-i": true, output_mode: "content", head_limit: 20 },
            { pattern: "return input", glob: "*.ts", path: `shared/pkg${Math.floor(next() * 20)}` },
          ]),
        )),
    ],
    [
      6,
      async () =>
        void (await call("find", "find", {
          query: pick([
            `mod${Math.floor(next() * SHARED_FILES)}`,
            "pkg3 src",
            `${client} k1`,
            "readme",
            "mdl",
          ]),
        })),
    ],
    // Refusals asked for, counted apart: each must come back with its code.
    [
      2,
      async () => {
        const file = pick(owned);
        await readOwn(file);
        await call(
          "edit",
          "edit",
          {
            file_path: `${dir}/${file.name}`,
            old_string: "text that is in no file",
            new_string: "x",
          },
          "NO_MATCH",
        );
      },
    ],
    [
      1,
      async () =>
        void (await call("read", "read", { file_path: "../outside.txt" }, "OUTSIDE_ROOT")),
    ],
    [
      1,
      async () => {
        if (owned.length < 2) return;
        const [a, b] = [owned[0] as Owned, owned[1] as Owned];
        await call(
          "rename",
          "rename",
          { from: `${dir}/${a.name}`, to: `${dir}/${b.name}` },
          "ALREADY_EXISTS",
        );
      },
    ],
  ];
  const total = ops.reduce((sum, [weight]) => sum + weight, 0);
  while (performance.now() < deadline) {
    let roll = next() * total;
    for (const [weight, op] of ops) {
      roll -= weight;
      if (roll < 0) {
        await op();
        break;
      }
    }
  }
}

/** Every owned file on disk against what its client last wrote; and no file it does not know of. */
function verifyDisk(root: string, owned: Owned[][]): { files: number; mismatches: string[] } {
  const mismatches: string[] = [];
  let files = 0;
  owned.forEach((mine, c) => {
    const dir = join(root, "clients", `c${String(c).padStart(2, "0")}`);
    const names = readdirSync(dir).sort();
    const expected = mine.map((f) => f.name).sort();
    if (JSON.stringify(names) !== JSON.stringify(expected)) {
      mismatches.push(`${dir}: holds ${names.join(",")}, expected ${expected.join(",")}`);
    }
    for (const file of mine) {
      files++;
      let text: string | undefined;
      try {
        text = readFileSync(join(dir, file.name), "utf8");
      } catch {
        text = undefined;
      }
      if (text !== file.content) mismatches.push(`${dir}/${file.name}: content differs`);
    }
  });
  return { files, mismatches };
}

interface Server {
  readonly client: Client;
  readonly pid: number | null;
  stderr: string;
}

async function startServer(root: string, name: string): Promise<Server> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--no-daemon", "--root", root],
    stderr: "pipe",
  });
  const client = new Client({ name, version: "1.0.0" });
  const server: Server = { client, pid: null, stderr: "" };
  transport.stderr?.on("data", (chunk: Buffer) => {
    server.stderr += chunk.toString("utf8");
  });
  await client.connect(transport);
  return Object.assign(server, { pid: transport.pid });
}

/** Peak resident memory of a process (VmHWM), in MiB. */
function peakRss(pid: number | null): number {
  if (pid === null) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ] as number;
}

const ms = (value: number) =>
  Number.isNaN(value) ? "–" : value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`;

/** Failures the server logged (a tool throwing something else than a FreshfsError). */
function loggedFailures(stderr: string): string[] {
  return stderr.split("\n").filter((line) => / failed: /.test(line));
}

function report(
  title: string,
  stats: RunStats,
  elapsedMs: number,
  disk: { files: number; mismatches: string[] },
  server: string,
  logged: string[],
): string {
  const out: string[] = [`### ${title}\n`];
  let calls = 0;
  let errors = 0;
  let refused = 0;
  out.push("| tool | calls | ok | refused as asked | errors | p50 | p90 | p99 | max |");
  out.push("|---|---|---|---|---|---|---|---|---|");
  const all: number[] = [];
  for (const tool of TOOLS) {
    const entry = stats.tools[tool];
    const sorted = [...entry.latencies].sort((a, b) => a - b);
    all.push(...sorted);
    const n = entry.ok + entry.refused + entry.errors;
    calls += n;
    errors += entry.errors;
    refused += entry.refused;
    out.push(
      `| ${tool} | ${n} | ${entry.ok} | ${entry.refused} | ${entry.errors} | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 90))} | ${ms(percentile(sorted, 99))} | ${ms(percentile(sorted, 100))} |`,
    );
  }
  all.sort((a, b) => a - b);
  out.push(
    `| **all** | ${calls} | ${calls - errors - refused} | ${refused} | ${errors} | ${ms(percentile(all, 50))} | ${ms(percentile(all, 90))} | ${ms(percentile(all, 99))} | ${ms(percentile(all, 100))} |`,
  );
  out.push("");
  out.push(
    `- ${calls} calls in ${(elapsedMs / 1000).toFixed(1)} s: **${(calls / (elapsedMs / 1000)).toFixed(0)} calls/s**; errors **${errors}**; deliberate refusals ${refused} (each with its code: NO_MATCH, OUTSIDE_ROOT, ALREADY_EXISTS).`,
  );
  out.push(
    `- Own-directory glob/grep answers checked against the client's own writes: ${stats.checks}, stale or wrong: **${stats.stale}**.`,
  );
  out.push(
    `- On disk afterwards: ${disk.files} owned files, each compared byte for byte with its client's last write: mismatches **${disk.mismatches.length}**.`,
  );
  out.push(`- ${server}`);
  out.push(
    `- Failures the server logged (a tool that threw something other than a typed refusal): ${logged.length}.`,
  );
  for (const sample of [
    ...stats.errorSamples,
    ...stats.staleSamples,
    ...disk.mismatches.slice(0, 5),
    ...logged.slice(0, 5),
  ]) {
    out.push(`  - ${sample.replace(/\|/g, "\\|")}`);
  }
  out.push("");
  return out.join("\n");
}

async function runShared(): Promise<string> {
  const { root, owned } = makeTree();
  try {
    const server = await startServer(root, "freshfs-load");
    const stats = newStats();
    const callTool: Caller = async (name, args) =>
      (await server.client.callTool({ name, arguments: args })) as CallToolResult;
    const started = performance.now();
    const deadline = started + RUN_A_MS;
    await Promise.all(owned.map((mine, i) => logicalClient(i, callTool, mine, deadline, stats)));
    const elapsed = performance.now() - started;
    const rss = peakRss(server.pid);
    await server.client.close();
    return report(
      `Run A: one server process, ${CLIENTS} concurrent logical clients over one stdio connection`,
      stats,
      elapsed,
      verifyDisk(root, owned),
      `Server: one process, peak RSS ${rss.toFixed(0)} MiB.`,
      loggedFailures(server.stderr),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function runSeparate(): Promise<string> {
  const { root, owned } = makeTree();
  const servers: Server[] = [];
  try {
    const spawnStarted = performance.now();
    // Started ten at a time: fifty Node processes starting at once on two cores would time out.
    for (let i = 0; i < CLIENTS; i += 10) {
      servers.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(10, CLIENTS - i) }, (_, j) =>
            startServer(root, `freshfs-load-${i + j}`),
          ),
        )),
      );
    }
    const spawnMs = performance.now() - spawnStarted;
    const stats = newStats();
    const started = performance.now();
    const deadline = started + RUN_B_MS;
    await Promise.all(
      owned.map((mine, i) => {
        const server = servers[i] as Server;
        const callTool: Caller = async (name, args) =>
          (await server.client.callTool({ name, arguments: args })) as CallToolResult;
        return logicalClient(i, callTool, mine, deadline, stats);
      }),
    );
    const elapsed = performance.now() - started;
    const rss = servers.map((s) => peakRss(s.pid));
    const logged = servers.flatMap((s) => loggedFailures(s.stderr));
    return report(
      `Run B: ${CLIENTS} server processes, one client each, over one directory`,
      stats,
      elapsed,
      verifyDisk(root, owned),
      `Servers: ${CLIENTS} processes started in ${(spawnMs / 1000).toFixed(1)} s (ten at a time); peak RSS per process ${Math.min(...rss).toFixed(0)}–${Math.max(...rss).toFixed(0)} MiB, ${rss.reduce((a, b) => a + b, 0).toFixed(0)} MiB in all.`,
      logged,
    );
  } finally {
    await Promise.all(servers.map((s) => s.client.close().catch(() => undefined)));
    rmSync(root, { recursive: true, force: true });
  }
}

export async function run(): Promise<string> {
  const out: string[] = [];
  out.push(
    `Built server (\`node dist/cli/main.js mcp --root DIR\`) over stdio. A tree of ${SHARED_FILES} shared source files (plus READMEs, and ignored build output and logs) in a git repository, and one directory per logical client with ${OWN_FILES} files it owns. Each logical client runs a fixed-seed mix, one call in flight at a time: read (own and shared files), edit of an own file (after a fresh read half the time), write (overwrite after a read, or a new file), rename of an own file, glob and grep over its own directory (checked against its own writes) and over the shared tree, find; plus a few refusals asked for on purpose (edit NO_MATCH, read OUTSIDE_ROOT, rename ALREADY_EXISTS), counted apart. Latency is measured by the client, from request to response.\n`,
  );
  out.push(
    'Why two runs: the MCP SDK\'s `Server` serves one transport and stdio is one client per process, so "50 clients of one server" is run A (one server process, 50 concurrent callers multiplexed over one connection: the shared Workspace, guard, locks and scan cache under 50 concurrent callers), and "50 agents, each with its server" is run B (50 processes over one directory: the process model stdio gives, on this machine\'s cores).\n',
  );
  out.push(await runShared());
  out.push(await runSeparate());
  return out.join("\n");
}

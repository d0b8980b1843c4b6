/**
 * Hostile patterns (issue 7, item 5), the long runs: pathological regexes in grep (through the
 * library with small budgets and the Workspace with its defaults), globs of thousands of braces,
 * .gitignore files of 100,000 lines, and the built MCP server over stdio answering reads while
 * hostile calls run. For each operation: how long it took, the longest the event loop was held
 * meanwhile (perf_hooks.monitorEventLoopDelay), and what it returned; for the MCP cases, how
 * long the reads sent meanwhile waited. Operations that would hold the process for minutes run
 * in a child process behind a guard.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  forceRescan,
  type GrepResult,
  glob,
  grep,
  invalidateFsScanCache,
  Workspace,
} from "../src/index.js";
import { runGuarded } from "../test/helpers/child.js";
import { isolatedGitEnv } from "../test/helpers/git.js";

const ENTRY = new URL("../dist/index.js", import.meta.url).href;
const BIN = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

const temps: string[] = [];

function tempDir(files: Record<string, string> = {}): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "freshfs-hostile-")));
  temps.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

interface Measured<T> {
  readonly value?: T;
  readonly error?: unknown;
  readonly ms: number;
  /** The longest the event loop was held while the operation ran. */
  readonly maxDelayMs: number;
}

/** monitorEventLoopDelay's sampling interval; a sample is the time between two of its timer's runs. */
const RESOLUTION_MS = 5;

/**
 * Runs `op`, timing it and watching the event loop meanwhile: the longest stall is the largest
 * gap between two runs of the monitor's timer, less the interval itself. The monitor is read
 * after a few more intervals, so a stall that lasts until `op` ends is counted too.
 */
async function measure<T>(op: () => Promise<T>): Promise<Measured<T>> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  // The monitor records the gap between two runs of its timer: a stall before its first run
  // would go unseen.
  await new Promise((resolve) => setTimeout(resolve, 3 * RESOLUTION_MS));
  const started = performance.now();
  let outcome: { value: T } | { error: unknown };
  try {
    outcome = { value: await op() };
  } catch (error) {
    outcome = { error };
  }
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 3 * RESOLUTION_MS));
  histogram.disable();
  return { ...outcome, ms, maxDelayMs: Math.max(0, histogram.max / 1e6 - RESOLUTION_MS) };
}

const ms = (value: number) =>
  value >= 10_000
    ? `${(value / 1000).toFixed(1)} s`
    : value >= 100
      ? `${value.toFixed(0)} ms`
      : `${value.toFixed(1)} ms`;

function errorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return `${code === undefined ? "error" : String(code)}: ${message.slice(0, 160)}`;
}

function oneLine(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n+/g, " ⏎ ").slice(0, 220);
}

function grepOutcome(result: GrepResult): string {
  const found = new Set([...result.lines.map((l) => l.path), ...result.files]).size;
  return `${found} file(s) matched; timedOut ${result.skipped.timedOut.length}${result.skipped.timedOut.length > 0 ? ` (${result.skipped.timedOut.slice(0, 3).join(", ")}${result.skipped.timedOut.length > 3 ? ", …" : ""})` : ""}; partial ${result.partial}`;
}

/** A source tree of `count` ordinary files (some with lines of a's, so regexes find something). */
function ordinaryTree(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const lines = [`export function f${i}(x: number) {`, "  return x + 1;", "}"];
    if (i % 50 === 0) lines.push("aaa", "xxy", "someExpression(1)");
    files[`src/m${i % 40}/file${i}.ts`] = `${lines.join("\n")}\n`;
  }
  return files;
}

/** Percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

// ---------------------------------------------------------------------------------------------
// Regexes

async function regexes(out: string[]): Promise<void> {
  out.push("### Pathological regexes in grep\n");
  out.push(
    "Each evil file sits in a tree of 1,000 ordinary files (one in 50 of which matches). Library `grep` with `fileTimeoutMs: 1000`, `timeoutMs: 30000`, output mode content.\n",
  );
  out.push("| pattern | evil file | time | longest event-loop stall | returned |");
  out.push("|---|---|---|---|---|");
  const cases = [
    { pattern: "(?=(a+)+$)", what: "1,000,000 × a + !", content: `${"a".repeat(1_000_000)}!\n` },
    { pattern: "(?=(x+x+)+y)", what: "100,000 × x", content: `${"x".repeat(100_000)}\n` },
    {
      pattern: "\\w+Expression\\(",
      what: "4 MiB word run + ' Expression('",
      content: `${"a".repeat(4 * 1024 * 1024)} Expression(\n`,
    },
    { pattern: "^(\\w+\\s?)*$", what: "50,000 × 'a ' + !", content: `${"a ".repeat(50_000)}!\n` },
    { pattern: "(a|aa)+$", what: "10,000 × a + !", content: `${"a".repeat(10_000)}!\n` },
    { pattern: "(.*a){25}", what: "5,000 × a", content: `${"a".repeat(5_000)}\n` },
  ];
  const base = ordinaryTree(1000);
  for (const { pattern, what, content } of cases) {
    const root = tempDir({ ...base, "evil.txt": content });
    const run = await measure(() =>
      grep(pattern, { path: root, fileTimeoutMs: 1000, timeoutMs: 30_000 }),
    );
    const returned = run.value ? grepOutcome(run.value) : errorText(run.error);
    out.push(
      `| \`${pattern.replace(/\|/g, "\\|")}\` | ${what} | ${ms(run.ms)} | ${ms(run.maxDelayMs)} | ${returned} |`,
    );
    rmSync(root, { recursive: true, force: true });
  }

  // Many evil files: the overall budget ends the search, flagged partial.
  const many: Record<string, string> = { ...base };
  for (let i = 0; i < 40; i++)
    many[`evil/e${String(i).padStart(2, "0")}.txt`] = `${"a".repeat(200_000)}!\n`;
  const root = tempDir(many);
  const run = await measure(() =>
    grep("(?=(a+)+$)", { path: root, fileTimeoutMs: 250, timeoutMs: 5000 }),
  );
  out.push(
    `| \`(a+)+$\` | 40 evil files (200,000 × a + !), fileTimeoutMs 250, timeoutMs 5000 | ${ms(run.ms)} | ${ms(run.maxDelayMs)} | ${run.value ? grepOutcome(run.value) : errorText(run.error)} |`,
  );
  out.push("");

  // The Workspace, with its defaults (the ones the MCP server uses): 5 s per file, 60 s in all.
  const one = tempDir({ ...base, "evil.txt": `${"a".repeat(100_000)}!\n` });
  const workspace = new Workspace({ roots: [one] });
  const tool = await measure(() => workspace.grep({ pattern: "(?=(a+)+$)" }));
  out.push(
    "Through `Workspace.grep` (default budgets: 5 s per file, 60 s in all), one evil file among 1,000:\n",
  );
  if (tool.value) {
    out.push(
      `- ${ms(tool.ms)}, longest event-loop stall ${ms(tool.maxDelayMs)}; structured result: total ${tool.value.total}, partial ${tool.value.partial}, truncated ${tool.value.truncated} (no field says a file was skipped); text ends: “${oneLine(tool.value.text.split("\n").slice(-2).join("\n"))}”`,
    );
  } else {
    out.push(`- failed: ${errorText(tool.error)}`);
  }
  out.push("");
  rmSync(root, { recursive: true, force: true });
  rmSync(one, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// MCP

interface StdioServer {
  readonly client: Client;
  close(): Promise<void>;
}

/** The built server over stdio (`node dist/cli/main.js mcp --root DIR`) and a Client of it. */
async function stdioServer(root: string): Promise<StdioServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--no-daemon", "--root", root],
    stderr: "ignore",
  });
  const client = new Client({ name: "freshfs-stress-hostile", version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

/**
 * Runs the hostile call and, on the same connection, a read of a one-line file every 100 ms
 * (one in flight at a time) until it ends. The client is in this process and the server in its
 * own, so a read is sent on time even while the server is stuck, and its latency shows it.
 */
async function readsDuring(
  client: Client,
  hostile: () => Promise<unknown>,
): Promise<{ value?: unknown; error?: unknown; ms: number; latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  let failed = 0;
  let done = false;
  const reads = (async () => {
    while (!done) {
      const started = performance.now();
      try {
        const result = (await client.callTool({
          name: "read",
          arguments: { file_path: "notes.txt" },
        })) as CallToolResult;
        if (result.isError || textOf(result) !== "     1\thello") failed++;
      } catch {
        failed++;
      }
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  // The reads start first: the hostile call comes in among them.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = performance.now();
  let outcome: { value: unknown } | { error: unknown };
  try {
    outcome = { value: await hostile() };
  } catch (error) {
    outcome = { error };
  }
  const ms = performance.now() - started;
  done = true;
  await reads;
  return { ...outcome, ms, latencies: latencies.sort((a, b) => a - b), failed };
}

function latencyLine(latencies: readonly number[], failed: number): string {
  return `${latencies.length} reads, p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(percentile(latencies, 100))}, ${failed} failed`;
}

async function mcp(out: string[]): Promise<void> {
  out.push("### The MCP server while hostile calls run\n");
  out.push(
    "The built server over stdio (`node dist/cli/main.js mcp --root DIR`), one Client. stdio is one client per server process (and the SDK's `Server` serves one transport), so the other caller is a second stream of requests on the same connection: a `read` of a one-line file every 100 ms, one in flight at a time, while the hostile call runs. The client runs in this process and the server in its own, so the reads are sent on time even when the server is stuck. The SDK's default request timeout (60 s) applies.\n",
  );
  out.push("| hostile call | its time | its outcome | reads meanwhile |");
  out.push("|---|---|---|---|");
  const row = async (
    label: string,
    files: Record<string, string>,
    name: string,
    args: Record<string, unknown>,
    root = tempDir(files),
  ) => {
    writeFileSync(join(root, "notes.txt"), "hello\n");
    const server = await stdioServer(root);
    try {
      const run = await readsDuring(server.client, () =>
        server.client.callTool({ name, arguments: args }),
      );
      const result = run.value as CallToolResult | undefined;
      const structured = result?.structuredContent as
        | { partial?: boolean; total?: number }
        | undefined;
      const outcome = result
        ? `${result.isError ? "isError: " : `total ${structured?.total}${structured?.partial === undefined ? "" : `, partial ${structured.partial}`}; `}“${oneLine(textOf(result).split("\n").slice(-2).join("\n"))}”`
        : `**the client gave up**: ${errorText(run.error)}`;
      out.push(
        `| ${label} | ${ms(run.ms)} | ${outcome} | ${latencyLine(run.latencies, run.failed)} |`,
      );
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  };

  await row(
    "grep `(?=(a+)+$)`, 1 evil file among 500",
    { ...ordinaryTree(500), "evil.txt": `${"a".repeat(100_000)}!\n` },
    "grep",
    { pattern: "(?=(a+)+$)" },
  );
  // picomatch's regex backtracks 2^26 times on the long name, on the server's thread.
  await row(
    "glob `{?,?}` × 26, a 47-character name in the tree",
    { "a-long-file-name-of-more-than-forty-characters.ts": "x\n" },
    "glob",
    { pattern: "{?,?}".repeat(26) },
  );
  await row("glob `{` × 5,000 (unclosed)", { "a.ts": "x\n" }, "glob", {
    pattern: "{".repeat(5000),
  });
  await row(
    "glob `**/*.ts`, cold, 100,000-line .gitignore, 600 files",
    {},
    "glob",
    { pattern: "**/*.ts" },
    gitignoreTree(100_000, 600, "mixed").root,
  );
  // 13 evil files x the default 5 s per file: past the default 60 s overall budget.
  const evil: Record<string, string> = { ...ordinaryTree(200) };
  for (let i = 0; i < 13; i++) {
    evil[`evil-${String(i).padStart(2, "0")}.txt`] = `${"a".repeat(100_000)}!\n`;
  }
  await row("grep `(?=(a+)+$)`, 13 evil files", evil, "grep", { pattern: "(?=(a+)+$)" });
  out.push("");
}

// ---------------------------------------------------------------------------------------------
// Globs

/** Runs a Workspace call in a child process of the built library, killed after `guardMs`. */
async function inChild(
  root: string,
  tool: "glob" | "grep",
  params: Record<string, unknown>,
  guardMs: number,
): Promise<string> {
  const script = `
    import { Workspace } from ${JSON.stringify(ENTRY)};
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const { root, tool, params } = JSON.parse(input);
    const started = performance.now();
    try {
      const result = await new Workspace({ roots: [root] })[tool](params);
      process.stdout.write("answered in " + (performance.now() - started).toFixed(0) + " ms: total " + result.total);
    } catch (error) {
      process.stdout.write("refused in " + (performance.now() - started).toFixed(0) + " ms: " + error.code + " " + String(error.message).slice(0, 120));
    }`;
  const run = await runGuarded(script, JSON.stringify({ root, tool, params }), guardMs);
  if (run.killed) return `**still running after ${ms(guardMs)}: killed**`;
  return run.stdout || `child failed: ${run.stderr.slice(0, 200)}`;
}

async function globs(out: string[]): Promise<void> {
  out.push("### Globs made of braces\n");
  out.push(
    'A tree of 2,000 ordinary files plus a few names the patterns can hit (one of 47 characters). `Workspace.glob` unless noted; `grep glob` is `Workspace.grep({ pattern: "x", glob })`.\n',
  );
  out.push("| pattern | call | time | longest event-loop stall | returned |");
  out.push("|---|---|---|---|---|");
  const root = tempDir({
    ...ordinaryTree(2000),
    [`${"ab".repeat(10)}`]: "x\n",
    "f1.txt": "x\n",
    "f4999.txt": "x\n",
    "a-long-file-name-of-more-than-forty-characters.ts": "x\n",
  });
  const alternatives = (n: number) =>
    `{${Array.from({ length: n }, (_, i) => `f${i}`).join(",")}}.txt`;
  const cases: { label: string; pattern: string; call: "glob" | "grep glob" | "library glob" }[] = [
    { label: "`{a,b}` × 20", pattern: "{a,b}".repeat(20), call: "glob" },
    { label: "`{a,b}` × 20", pattern: "{a,b}".repeat(20), call: "grep glob" },
    { label: "`{a,b}` × 2,000", pattern: "{a,b}".repeat(2000), call: "glob" },
    { label: "5,000 comma alternatives", pattern: alternatives(5000), call: "glob" },
    { label: "5,000 comma alternatives", pattern: alternatives(5000), call: "grep glob" },
    { label: "50,000 comma alternatives", pattern: alternatives(50_000), call: "glob" },
    {
      label: "`{a,{b,{c,…}}}` nested 1,000 deep",
      pattern: `${"{a,".repeat(1000)}z${"}".repeat(1000)}`,
      call: "glob",
    },
    { label: "`{a,b}` × 13,000 (65 KB)", pattern: "{a,b}".repeat(13_000), call: "glob" },
    { label: "`[ab]` × 15,000 (60 KB)", pattern: "[ab]".repeat(15_000), call: "glob" },
  ];
  for (const n of [2500, 5000]) {
    cases.push({
      label: `\`{\` × ${n.toLocaleString("en")} (unclosed)`,
      pattern: "{".repeat(n),
      call: "library glob",
    });
  }
  for (const n of [16, 20, 22, 24]) {
    cases.push({ label: `\`{?,?}\` × ${n}`, pattern: "{?,?}".repeat(n), call: "glob" });
  }
  for (const { label, pattern, call } of cases) {
    invalidateFsScanCache();
    const workspace = new Workspace({ roots: [root] });
    const run = await measure(async () => {
      if (call === "library glob") {
        const r = await glob(pattern, { path: root });
        return `total ${r.totalMatches}`;
      }
      const r =
        call === "glob"
          ? await workspace.glob({ pattern })
          : await workspace.grep({ pattern: "x", glob: pattern });
      return `total ${r.total}`;
    });
    out.push(
      `| ${label} | ${call} | ${ms(run.ms)} | ${ms(run.maxDelayMs)} | ${run.value ?? errorText(run.error)} |`,
    );
  }
  // Too long to run in this process: in children, side by side, behind guards.
  const [question, nested, extglob] = await Promise.all([
    inChild(root, "glob", { pattern: "{?,?}".repeat(40) }, 15_000),
    inChild(root, "glob", { pattern: "{".repeat(15_000) }, 30_000),
    inChild(root, "glob", { pattern: "?(a)".repeat(6000) }, 30_000),
  ]);
  out.push(`| \`{?,?}\` × 40 | glob, child process (3 at once) | | | ${question} |`);
  out.push(`| \`{\` × 15,000 (unclosed) | glob, child process (3 at once) | | | ${nested} |`);
  out.push(`| \`?(a)\` × 6,000 | glob, child process (3 at once) | | | ${extglob} |`);
  out.push("");
  rmSync(root, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// .gitignore

/** A deterministic .gitignore of `count` lines: a realistic mix, or only rules wildmatch must run. */
function gitignoreText(count: number, kind: "mixed" | "wildmatch"): string {
  const lines: string[] = [];
  for (let i = 0; lines.length < count; i++) {
    const k = kind === "wildmatch" ? [5, 6, 8, 9][i % 4] : i % 10;
    switch (k) {
      case 0:
      case 1:
        lines.push(`generated-${i}.ts`);
        break;
      case 2:
        lines.push(`*.x${i}`);
        break;
      case 3:
        lines.push(`out-${i}/`);
        break;
      case 4:
        lines.push(`!keep-${i}.log`);
        break;
      case 5:
        lines.push(`**/cache-${i}/**`);
        break;
      case 6:
        lines.push(`src/**/gen-${i}.js`);
        break;
      case 7:
        lines.push(`/build-${i}`);
        break;
      case 8:
        lines.push(`docs/*-${i}.md`);
        break;
      default:
        lines.push(`tmp-${i}-*.bak`);
    }
  }
  lines.splice(10, 0, "*.log", "out-3/");
  lines.push("!keep-4.log", "**/cache-5/**", "src/**/gen-6.js", "/build-7", "docs/*-8.md");
  return `${lines.join("\n")}\n`;
}

/** A git repository with a big .gitignore and `files` files, some of which it ignores. */
function gitignoreTree(
  lines: number,
  files: number,
  kind: "mixed" | "wildmatch",
): { root: string; env: NodeJS.ProcessEnv } {
  const root = tempDir({ ".gitignore": gitignoreText(lines, kind) });
  const home = tempDir();
  const env = isolatedGitEnv(home);
  execFileSync("git", ["init", "-q"], { cwd: root, env });
  const special = [
    "b.log",
    "keep-4.log",
    "out-3/f.txt",
    "lib/cache-5/z.ts",
    "src/x/gen-6.js",
    "build-7/q.ts",
    "docs/a-8.md",
  ];
  const exts = ["ts", "log", "md", "js"];
  const paths = [...special];
  for (let i = 0; paths.length < files; i++) {
    paths.push(`src/d${i % 12}/s${i % 5}/file${i}.${exts[i % exts.length]}`);
  }
  for (const path of paths) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), "x\n");
  }
  return { root, env };
}

async function gitignores(out: string[]): Promise<void> {
  out.push("### A .gitignore of 100,000 lines\n");
  out.push(
    "A git repository whose root .gitignore has the lines given (mixed: literal names, `*.ext`, `dir/`, negations, `**` and anchored patterns; wildmatch: only patterns that must be matched one by one), over a tree of files some of which it ignores. `forceRescan` (includeHidden) against `git ls-files -co --exclude-standard` (isolated git config).\n",
  );
  out.push(
    "| .gitignore | files | walk | longest event-loop stall | git ls-files | listed (freshfs / git) | differences |",
  );
  out.push("|---|---|---|---|---|---|---|");
  const cases: [number, number, "mixed" | "wildmatch"][] = [
    [100_000, 200, "mixed"],
    [100_000, 500, "mixed"],
    [100_000, 200, "wildmatch"],
  ];
  for (const [lines, files, kind] of cases) {
    const { root, env } = gitignoreTree(lines, files, kind);
    const saved = process.env;
    process.env = env;
    let walk: Measured<Awaited<ReturnType<typeof forceRescan>>>;
    try {
      walk = await measure(() => forceRescan(root, { includeHidden: true }));
    } finally {
      process.env = saved;
    }
    const started = performance.now();
    const theirs = execFileSync(
      "git",
      ["-c", "core.quotePath=false", "ls-files", "-z", "-co", "--exclude-standard"],
      { cwd: root, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    )
      .split("\0")
      .filter(Boolean);
    const gitMs = performance.now() - started;
    const listed = (walk.value?.entries ?? []).filter((e) => e.type !== "dir").map((e) => e.path);
    const mine = new Set(listed);
    const gits = new Set(theirs);
    const missing = theirs.filter((p) => !mine.has(p));
    const extra = listed.filter((p) => !gits.has(p));
    const differences = walk.error
      ? errorText(walk.error)
      : missing.length + extra.length === 0
        ? "none"
        : `**missing ${missing.slice(0, 3).join(", ")}; extra ${extra.slice(0, 3).join(", ")}**`;
    out.push(
      `| ${lines.toLocaleString("en")} lines, ${kind} | ${files} | ${ms(walk.ms)} | ${ms(walk.maxDelayMs)} | ${ms(gitMs)} | ${listed.length} / ${theirs.length} | ${differences} |`,
    );
    rmSync(root, { recursive: true, force: true });
  }
  out.push("");
}

export async function run(): Promise<string> {
  const out: string[] = [];
  try {
    await regexes(out);
    await globs(out);
    await gitignores(out);
    await mcp(out);
  } finally {
    for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
  return out.join("\n");
}

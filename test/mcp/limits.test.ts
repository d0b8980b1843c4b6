/**
 * `freshfs mcp` under a client that waits, cancels and reads big files: progress
 * notifications for grep, glob and find when the request carries a progressToken, a cancelled
 * grep that stops burning CPU, and results bounded by MAX_RESULT_BYTES in the text and in the
 * structured content. Real server processes (`npm run build`), driven by the official client.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { MAX_RESULT_BYTES } from "../../src/index.js";
import { flood } from "../../stress/mcp-flood.js";
import { tempTree } from "../helpers/fs.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;

async function serve(root: string): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--no-daemon", "--root", root],
    stderr: "ignore",
  });
  const client = new Client({ name: "freshfs-limits", version: "1.0.0" });
  await client.connect(transport);
  onTestFinished(async () => {
    await client.close();
  });
  return { client, pid: transport.pid as number };
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

/** CPU time (user + system, in clock ticks) the process has used so far. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** `count` files of source-like text under `dir/`, `kb` KiB each, in `dirs` directories. */
function fill(
  tree: Record<string, string>,
  dir: string,
  count: number,
  kb: number,
  dirs: number,
): void {
  const line = "const value = compute(input, options) + offset; // a line of code\n";
  const body = line.repeat(Math.ceil((kb * 1024) / line.length));
  for (let i = 0; i < count; i++) tree[`${dir}/d${i % dirs}/f${i}.ts`] = body;
}

describe("progress", () => {
  // A walk reports where it is each time it yields (every 10 ms of work): 24,000 entries take
  // several slices even on a fast disk. The grep reads 1,500 files through a regex with no
  // literal, which takes well over its 100 ms between reports.
  let root: string;
  beforeAll(async () => {
    const tree: Record<string, string> = {};
    fill(tree, "walked", 24_000, 0, 200);
    fill(tree, "searched", 1500, 16, 50);
    root = await tempTree(tree, { lifetime: "file" });
  });

  it("grep and glob send progress notifications, growing, when the client asks", async () => {
    const { client } = await serve(root);
    const seen: Record<string, Progress[]> = { glob: [], grep: [] };
    const calls: [string, Record<string, unknown>][] = [
      ["glob", { pattern: "**/*.ts", path: "walked" }],
      // No literal to look for: every line of every file goes through the regex.
      ["grep", { pattern: "\\w+\\s+\\w+\\s+\\(\\w+Z", path: "searched" }],
    ];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: args }, undefined, {
        onprogress: (progress) => seen[name]?.push(progress),
      })) as CallToolResult;
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    for (const name of ["glob", "grep"]) {
      const got = seen[name] as Progress[];
      expect(got.length, name).toBeGreaterThan(0);
      for (let i = 1; i < got.length; i++) {
        expect((got[i] as Progress).progress).toBeGreaterThan((got[i - 1] as Progress).progress);
      }
    }
    expect(seen.grep?.some((p) => /searched \d+ of 1500 files/.test(p.message ?? ""))).toBe(true);
    expect(seen.glob?.every((p) => /listed \d+ entries/.test(p.message ?? ""))).toBe(true);
  });

  it("find reports its walk", async () => {
    // A server of its own: glob's cached walk would leave find nothing to report.
    const { client } = await serve(root);
    const got: Progress[] = [];
    await client.callTool(
      { name: "find", arguments: { query: "f12", path: "walked" } },
      undefined,
      {
        onprogress: (progress) => got.push(progress),
      },
    );
    expect(got.length).toBeGreaterThan(0);
  });
});

describe("cancellation", () => {
  it("a cancelled grep stops using CPU, and the server answers the next call", async () => {
    // Backtracks on every line of every file: tens of seconds of work.
    const tree: Record<string, string> = {};
    for (let i = 0; i < 8; i++) tree[`big${i}.txt`] = `${"a".repeat(30)}\n`.repeat(60_000);
    const root = await tempTree(tree);
    const { client, pid } = await serve(root);
    const controller = new AbortController();
    const call = client.callTool(
      {
        name: "grep",
        arguments: { pattern: "(?=(a|aa)+$b)", syntax: "javascript", output_mode: "count" },
      },
      undefined,
      { signal: controller.signal, timeout: 120_000 },
    );
    call.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 800));
    const busy = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Working: at least a fifth of a core over that half second (a tick is 10 ms).
    expect(cpuTicks(pid) - busy).toBeGreaterThan(10);
    controller.abort();
    await expect(call).rejects.toThrow();
    // The 100 ms a cancel may take to stop the search's CPU (with room for the server's turn),
    // then a quiet second.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(cpuTicks(pid) - after).toBeLessThan(20);
    const next = (await client.callTool({
      name: "glob",
      arguments: { pattern: "*.txt" },
    })) as CallToolResult;
    expect(textOf(next).split("\n")).toHaveLength(8);
  });
});

describe("a flood of pipelined calls", () => {
  it("300 greps sent at once are all answered, as each alone, on the pool's threads", async () => {
    const report = await flood({ calls: 300, files: 52 });
    expect(report).toMatchObject({ answered: 300, wrong: 0, errors: 0 });
    // The pool's ceiling is 8 threads whatever the machine; one worker per call would be 300.
    expect(report.threadsPeak - report.threadsBefore).toBeLessThanOrEqual(8);
    expect(report.rssPeakMiB).toBeLessThan(300);
  });
});

describe("results within MAX_RESULT_BYTES", () => {
  it("an edit of a minified one-line file answers with a summary, text and structured content alike", async () => {
    const parts: string[] = [];
    for (let i = 0; i < 20_000; i++) parts.push(`var a${i}=function(b){return b+${i}};`);
    const root = await tempTree({ "bundle.min.js": parts.join("") });
    const { client } = await serve(root);
    const read = (await client.callTool({
      name: "read",
      arguments: { file_path: "bundle.min.js" },
    })) as CallToolResult;
    const readText = textOf(read);
    expect(Buffer.byteLength(readText)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    // A client that forwards only the structured content still shows the model the file.
    expect((read.structuredContent as { text: string }).text).toBe(readText);
    const edit = (await client.callTool({
      name: "edit",
      arguments: {
        file_path: "bundle.min.js",
        old_string: "var a5000=function(b){return b+5000};",
        new_string: "var a5000=function(b){return b-5000};",
      },
    })) as CallToolResult;
    expect(edit.isError, textOf(edit)).toBeFalsy();
    expect(Buffer.byteLength(textOf(edit))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(textOf(edit)).toContain("covers, each hunk with up to 3 lines of context: 1.");
    const structured = edit.structuredContent as Record<string, unknown>;
    expect(structured.diff).toBeUndefined();
    expect(structured.diffOmitted).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(structured))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(readFileSync(join(root, "bundle.min.js"), "utf8")).toContain("return b-5000}");
  });

  it("an error quoting a huge value stays within the cap", async () => {
    const root = await tempTree({ "a.txt": "one\n" });
    writeFileSync(join(root, "b.txt"), "two\n");
    const { client } = await serve(root);
    const result = (await client.callTool({
      name: "grep",
      arguments: { pattern: `(${"x".repeat(3_000_000)}` },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(Buffer.byteLength(textOf(result))).toBeLessThan(2000);
  });
});

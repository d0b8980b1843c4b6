/**
 * `freshfs mcp` servers through one daemon, with real processes and the official SDK client:
 * they share the daemon's live tree (one set of watches), each server's guard is a session of
 * its own (one agent's read never allows another's edit) unless they name the same session,
 * every answer says which process gave it, and a daemon killed mid-session leaves each server
 * answering in its own process, its edits asking for a fresh read. The library's Workspace with
 * `daemon: "auto"` likewise.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { Workspace } from "../../src/index.js";
import { runtimeDir } from "../helpers/daemons.js";
import { tempTree } from "../helpers/fs.js";
import { call, fails, ok } from "../helpers/mcp.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(REPO, "dist", "cli", "main.js");

const clients: Client[] = [];

function env(runtime: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) out[key] = value;
  return { ...out, FRESHFS_DAEMON: "1", FRESHFS_RUNTIME_DIR: runtime };
}

function daemonStatus(
  runtime: string,
  bin = BIN,
): { pid: number; roots: unknown[]; sessions: { name?: string; clients: number }[] } | undefined {
  const run = spawnSync(process.execPath, [bin, "daemon", "status", "--json"], {
    env: env(runtime),
    encoding: "utf8",
  });
  return run.status === 0 ? JSON.parse(run.stdout) : undefined;
}

async function server(root: string, runtime: string, extra: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--root", root, ...extra],
    env: env(runtime),
    stderr: "pipe",
  });
  const client = new Client({ name: "freshfs-daemon-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Which process answered (or refused), as a result's `_meta` says. */
function answeredBy(result: CallToolResult): { pid: number; daemon: boolean } | undefined {
  const meta = result._meta as Record<string, { pid: number; daemon: boolean }> | undefined;
  return meta?.["freshfs/answeredBy"];
}

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
});

describe("freshfs mcp servers through one daemon", () => {
  it("share its live tree, each with a guard of its own, and say the daemon answered", async () => {
    const root = await tempTree({ "a.txt": "one\n", "b.txt": "two\n" });
    const runtime = runtimeDir();
    const a = await server(root, runtime);
    const b = await server(root, runtime);
    const readA = await ok(a, "read", { file_path: "a.txt" });
    // B never read a.txt: A's read is A's.
    await fails(
      b,
      "edit",
      { file_path: "a.txt", old_string: "one", new_string: "uno" },
      "NOT_READ",
    );
    const edited = await ok(a, "edit", {
      file_path: "a.txt",
      old_string: "one",
      new_string: "uno",
    });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("uno\n");
    // A's edit is another process's change for B, which reads it fresh.
    const grepB = await ok(b, "grep", { pattern: "uno", output_mode: "content" });
    expect(grepB.text).toContain("a.txt:1:uno");
    const status = daemonStatus(runtime);
    const pid = status?.pid as number;
    for (const result of [readA.result, edited.result, grepB.result]) {
      expect(answeredBy(result)).toEqual({ pid, daemon: true });
    }
    // A refusal says who refused: the daemon's session.
    const refused = await call(b, "write", { file_path: "a.txt", content: "x\n" });
    expect(refused.isError).toBe(true);
    expect(answeredBy(refused)).toEqual({ pid, daemon: true });
    // One tree, watched once, for both servers; a session each.
    expect(status?.roots).toHaveLength(1);
    expect(status?.sessions).toHaveLength(2);
  });

  it("a named session is shared: one server's read allows another's edit", async () => {
    const root = await tempTree({ "a.txt": "one\n" });
    const runtime = runtimeDir();
    const a = await server(root, runtime, ["--session", "task-1"]);
    const b = await server(root, runtime, ["--session", "task-1"]);
    await ok(a, "read", { file_path: "a.txt" });
    await ok(b, "edit", { file_path: "a.txt", old_string: "one", new_string: "uno" });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("uno\n");
    expect(daemonStatus(runtime)?.sessions).toEqual([
      { name: "task-1", roots: [root], clients: 2 },
    ]);
  });

  it("a daemon killed mid-session: the server answers itself, and edits ask for a fresh read", async () => {
    const root = await tempTree({ "a.txt": "one\n" });
    const runtime = runtimeDir();
    const a = await server(root, runtime);
    await ok(a, "read", { file_path: "a.txt" });
    const pid = daemonStatus(runtime)?.pid as number;
    process.kill(pid, "SIGKILL");
    // The read was the daemon's session's: this server's own guard has none.
    const refused = await call(a, "edit", {
      file_path: "a.txt",
      old_string: "one",
      new_string: "uno",
    });
    expect(refused.isError).toBe(true);
    expect(refused.content).toEqual([
      expect.objectContaining({ text: expect.stringContaining("NOT_READ") }),
    ]);
    const reread = await ok(a, "read", { file_path: "a.txt" });
    expect(answeredBy(reread.result)).toEqual({ pid: expect.any(Number), daemon: false });
    expect(answeredBy(reread.result)?.pid).not.toBe(pid);
    await ok(a, "edit", { file_path: "a.txt", old_string: "one", new_string: "uno" });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("uno\n");
  });
});

describe("the library's Workspace with daemon: auto", () => {
  it("runs its tools in the daemon's session, and says so", async () => {
    const root = await tempTree({ "a.txt": "one\n" });
    const runtime = runtimeDir();
    const before = process.env.FRESHFS_RUNTIME_DIR;
    process.env.FRESHFS_RUNTIME_DIR = runtime;
    try {
      const ws = new Workspace({ roots: root, daemon: "auto" });
      const read = await ws.read({ file_path: "a.txt" });
      expect(read.answeredBy.daemon).toBe(true);
      expect(read.answeredBy.pid).not.toBe(process.pid);
      const edit = await ws.edit({ file_path: "a.txt", old_string: "one", new_string: "uno" });
      expect(edit.answeredBy.daemon).toBe(true);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("uno\n");
      // Another Workspace (its own session) may not edit on that read.
      const other = new Workspace({ roots: root, daemon: "auto" });
      await expect(
        other.edit({ file_path: "a.txt", old_string: "uno", new_string: "one" }),
      ).rejects.toMatchObject({ code: "NOT_READ" });
      ws.close();
      other.close();
      process.kill(read.answeredBy.pid, "SIGKILL");
    } finally {
      if (before === undefined) delete process.env.FRESHFS_RUNTIME_DIR;
      else process.env.FRESHFS_RUNTIME_DIR = before;
    }
  }, 60_000);
});

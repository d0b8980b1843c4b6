/**
 * The MCP tools added with read_many, apply_patch, mkdir, list, stat, images in read and
 * dry_run for edit/multi_edit/apply_patch: each through a real SDK Client (in memory), its
 * structured content checked against its advertised output schema; their failures as isError
 * results naming the code; their annotations; and two real `freshfs mcp` processes over stdio
 * on one root, where one's patch makes the other's stale and each sees the other's changes.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { describe, expect, it, onTestFinished } from "vitest";
import { createFreshfsServer } from "../../src/mcp/server.js";
import { tempTree } from "../helpers/fs.js";
import { fails, type Ok, ok, toolsOf, validateOutput } from "../helpers/mcp.js";
import { png } from "../helpers/media.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;

/** A server over `roots` and a real Client linked to it in memory. */
async function connect(roots: string[]): Promise<Client> {
  const { server } = createFreshfsServer({ roots });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "freshfs-test", version: "1.0.0" });
  await client.connect(clientSide);
  onTestFinished(async () => {
    await client.close();
  });
  return client;
}

/** A real `freshfs mcp` process over `root`, driven through stdio. */
async function spawnServer(root: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--no-daemon", "--root", root],
    stderr: "pipe",
  });
  const client = new Client({ name: "freshfs-test", version: "1.0.0" });
  await client.connect(transport);
  onTestFinished(async () => {
    await client.close();
  });
  return client;
}

/** A call that succeeds, its structured content validated against the tool's schema. */
async function checked(
  client: Client,
  tools: Map<string, Tool>,
  name: string,
  args: Record<string, unknown>,
): Promise<Ok> {
  const answer = await ok(client, name, args);
  validateOutput(tools.get(name), answer.structured);
  return answer;
}

const PNG = png(5, 3);

type Block = CallToolResult["content"][number];
const imagesOf = (result: CallToolResult) =>
  result.content.filter(
    (block): block is Extract<Block, { type: "image" }> => block.type === "image",
  );
const textsOf = (result: CallToolResult) => result.content.filter((block) => block.type === "text");

function patch(...body: string[]): string {
  return ["*** Begin Patch", ...body, "*** End Patch"].join("\n");
}

describe("the validator", () => {
  it("rejects what a schema does not allow (so the checks below can fail)", async () => {
    const dir = await tempTree();
    const tools = await toolsOf(await connect([dir]));
    const schema = tools.get("mkdir")?.outputSchema as Record<string, unknown>;
    const validate = new AjvJsonSchemaValidator().getValidator(schema);
    expect(validate({ path: "x", created: true }).valid).toBe(true);
    expect(validate({ path: "x" }).valid).toBe(false);
    expect(validate({ path: 1, created: true }).valid).toBe(false);
  });
});

describe("structured content matches each new tool's output schema", () => {
  it("read of a text file", async () => {
    const dir = await tempTree({ "a.txt": "one\ntwo\n" });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    const read = await checked(client, tools, "read", { file_path: "a.txt" });
    expect(read.structured).toMatchObject({
      kind: "text",
      startLine: 1,
      endLine: 2,
      totalLines: 2,
    });
    // (In memory, absent optional fields may travel as undefined; over JSON they vanish.)
    expect(read.structured.image).toBeUndefined();
    expect(read.result.content).toEqual([{ type: "text", text: "     1\tone\n     2\ttwo" }]);
  });

  it("read of a PNG: an image block holding the file's bytes, a text block, and no data in structuredContent", async () => {
    const dir = await tempTree({ "pic.png": PNG });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    const read = await checked(client, tools, "read", { file_path: "pic.png" });
    const images = imagesOf(read.result);
    expect(images).toHaveLength(1);
    expect(images[0]?.mimeType).toBe("image/png");
    expect(Buffer.from(images[0]?.data ?? "", "base64").equals(PNG)).toBe(true);
    const texts = textsOf(read.result);
    expect(texts).toHaveLength(1);
    expect(read.text).toContain("pic.png");
    expect(read.text).toContain("5x3");
    expect(read.structured.kind).toBe("image");
    const image = read.structured.image as Record<string, unknown>;
    expect(image).toEqual({ mimeType: "image/png", bytes: PNG.length, width: 5, height: 3 });
    expect(image).not.toHaveProperty("data");
    expect(JSON.stringify(read.structured)).not.toContain(PNG.toString("base64").slice(0, 40));
    // Recorded as a full read: the image may now be deleted.
    await ok(client, "delete", { file_path: "pic.png" });
    expect(existsSync(join(dir, "pic.png"))).toBe(false);
  });

  it("read_many of a text file, a PNG and a missing file", async () => {
    const dir = await tempTree({ "a.txt": "alpha\nbeta\n", "pic.png": PNG });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    const many = await checked(client, tools, "read_many", {
      paths: ["a.txt", "pic.png", "missing.txt"],
    });
    expect(many.result.isError).toBeFalsy();
    const images = imagesOf(many.result);
    expect(images).toHaveLength(1);
    expect(images[0]?.mimeType).toBe("image/png");
    expect(Buffer.from(images[0]?.data ?? "", "base64").equals(PNG)).toBe(true);
    expect(many.text).toContain("     2\tbeta");
    expect(many.text).toContain("missing.txt");
    expect(many.text).toContain("(NOT_FOUND)");
    expect(many.structured).toMatchObject({ read: 2, failed: 1 });
    const files = many.structured.files as {
      path: string;
      result?: Record<string, unknown>;
      error?: { code: string; message: string };
    }[];
    expect(files.map((file) => file.path)).toEqual(["a.txt", "pic.png", "missing.txt"]);
    expect(files[0]?.result).toMatchObject({ kind: "text", totalLines: 2 });
    expect(files[0]?.error).toBeUndefined();
    expect(files[1]?.result?.image).toEqual({
      mimeType: "image/png",
      bytes: PNG.length,
      width: 5,
      height: 3,
    });
    expect(files[2]?.result).toBeUndefined();
    expect(files[2]?.error?.code).toBe("NOT_FOUND");
    expect(files[2]?.error?.message).toContain("missing.txt");
    expect(JSON.stringify(many.structured)).not.toContain(PNG.toString("base64").slice(0, 40));
    // Each file read counts as read would: the text file may be edited now.
    await ok(client, "edit", { file_path: "a.txt", old_string: "beta", new_string: "BETA" });
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha\nBETA\n");
  });

  it("list with depth 2", async () => {
    const dir = await tempTree({
      "README.md": "# hi\n",
      "src/a.ts": "export const a = 1;\n",
      "src/lib/b.ts": "export const b = 2;\n",
      "src/lib/c.ts": "export const c = 3;\n",
    });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    const list = await checked(client, tools, "list", { depth: 2 });
    const entries = list.structured.entries as {
      path: string;
      kind: string;
      depth: number;
      size?: number;
      hiddenEntries?: number;
    }[];
    const byPath = new Map(entries.map((entry) => [entry.path, entry]));
    expect([...byPath.keys()].sort()).toEqual(["README.md", "src", "src/a.ts", "src/lib"]);
    expect(byPath.get("src")).toMatchObject({ kind: "dir", depth: 1 });
    expect(byPath.get("README.md")).toMatchObject({ kind: "file", depth: 1, size: 5 });
    expect(byPath.get("src/a.ts")).toMatchObject({ kind: "file", depth: 2, size: 20 });
    expect(byPath.get("src/lib")).toMatchObject({ kind: "dir", depth: 2, hiddenEntries: 2 });
    expect(list.structured.truncated).toBe(false);
    expect(list.text).toContain("a.ts");
    expect(list.text).not.toContain("b.ts");
  });

  it("stat of a file read, of one not read, and of a directory", async () => {
    const dir = await tempTree({ "a.txt": "hello\n", "b.txt": "b\n", "d/x": "x" });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    const before = await checked(client, tools, "stat", { path: "a.txt" });
    expect(before.structured).toMatchObject({
      kind: "file",
      size: 6,
      read: "not_read",
      editable: false,
    });
    await ok(client, "read", { file_path: "a.txt" });
    const after = await checked(client, tools, "stat", { path: "a.txt" });
    expect(after.structured).toMatchObject({ kind: "file", read: "fresh", editable: true });
    expect(after.structured.mtimeMs).toBe(
      Math.floor(Number(statSync(join(dir, "a.txt"), { bigint: true }).mtimeNs / 1_000_000n)),
    );
    const directory = await checked(client, tools, "stat", { path: "d" });
    expect(directory.structured).toMatchObject({ kind: "directory", editable: false });
    expect(directory.structured.read).toBeUndefined();
  });

  it("mkdir of a new nested directory, then of the same one again", async () => {
    const dir = await tempTree();
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    const made = await checked(client, tools, "mkdir", { path: "x/y/z" });
    expect(made.structured.created).toBe(true);
    expect(made.structured.path).toBe(join(dir, "x/y/z"));
    expect(made.structured.firstCreated).toBe(join(dir, "x"));
    expect(statSync(join(dir, "x/y/z")).isDirectory()).toBe(true);
    const again = await checked(client, tools, "mkdir", { path: "x/y/z" });
    expect(again.structured.created).toBe(false);
    expect(again.structured.firstCreated).toBeUndefined();
  });

  it("apply_patch adding, updating and deleting in one patch, after reads", async () => {
    const dir = await tempTree({
      "keep.txt": "one\ntwo\nthree\n",
      "gone.txt": "bye\n",
    });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    await ok(client, "read", { file_path: "keep.txt" });
    await ok(client, "read", { file_path: "gone.txt" });
    const applied = await checked(client, tools, "apply_patch", {
      input: patch(
        "*** Add File: new/added.txt",
        "+fresh line",
        "+second",
        "*** Update File: keep.txt",
        "@@",
        " one",
        "-two",
        "+TWO",
        " three",
        "*** Delete File: gone.txt",
      ),
    });
    expect(applied.text).toContain("Success");
    expect(applied.structured.dryRun).toBe(false);
    const files = applied.structured.files as {
      path: string;
      action: string;
      added: number;
      removed: number;
      diff?: string;
    }[];
    expect(files.map((file) => [file.action, file.path])).toEqual([
      ["add", join(dir, "new/added.txt")],
      ["update", join(dir, "keep.txt")],
      ["delete", join(dir, "gone.txt")],
    ]);
    expect(files[0]).toMatchObject({ added: 2, removed: 0 });
    expect(files[1]).toMatchObject({ added: 1, removed: 1 });
    expect(files[1]?.diff).toContain("-two");
    expect(files[1]?.diff).toContain("+TWO");
    expect(files[2]).toMatchObject({ added: 0, removed: 1 });
    expect(readFileSync(join(dir, "new/added.txt"), "utf8")).toBe("fresh line\nsecond\n");
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    expect(existsSync(join(dir, "gone.txt"))).toBe(false);
    // The patched file counts as read: a further edit needs no new read.
    await ok(client, "edit", { file_path: "keep.txt", old_string: "TWO", new_string: "2" });
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("one\n2\nthree\n");
  });

  it("apply_patch with dry_run: nothing changes on disk, the text says Dry run", async () => {
    const dir = await tempTree({ "keep.txt": "one\ntwo\n", "gone.txt": "bye\n" });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    await ok(client, "read", { file_path: "keep.txt" });
    await ok(client, "read", { file_path: "gone.txt" });
    const input = patch(
      "*** Add File: added.txt",
      "+new",
      "*** Update File: keep.txt",
      "-two",
      "+TWO",
      "*** Delete File: gone.txt",
    );
    const dry = await checked(client, tools, "apply_patch", { input, dry_run: true });
    expect(dry.text).toContain("Dry run");
    expect(dry.structured.dryRun).toBe(true);
    const files = dry.structured.files as { action: string; diff?: string }[];
    expect(files.map((file) => file.action)).toEqual(["add", "update", "delete"]);
    expect(files[1]?.diff).toContain("+TWO");
    expect(existsSync(join(dir, "added.txt"))).toBe(false);
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("one\ntwo\n");
    expect(readFileSync(join(dir, "gone.txt"), "utf8")).toBe("bye\n");
    // The reads still stand: the same patch applies for real.
    const real = await ok(client, "apply_patch", { input });
    expect(real.structured.dryRun).toBe(false);
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("one\nTWO\n");
    expect(readFileSync(join(dir, "added.txt"), "utf8")).toBe("new\n");
    expect(existsSync(join(dir, "gone.txt"))).toBe(false);
  });

  it("edit with dry_run: file unchanged, dryRun true, a diff", async () => {
    const dir = await tempTree({ "a.txt": "alpha\nbeta\n" });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    await ok(client, "read", { file_path: "a.txt" });
    const mtime = statSync(join(dir, "a.txt")).mtimeMs;
    const dry = await checked(client, tools, "edit", {
      file_path: "a.txt",
      old_string: "beta",
      new_string: "BETA",
      dry_run: true,
    });
    expect(dry.structured.dryRun).toBe(true);
    expect(dry.structured.replacements).toBe(1);
    expect(dry.structured.diff).toEqual(expect.stringContaining("-beta"));
    expect(dry.structured.diff).toEqual(expect.stringContaining("+BETA"));
    expect(dry.text).toMatch(/dry run/i);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(statSync(join(dir, "a.txt")).mtimeMs).toBe(mtime);
    const real = await checked(client, tools, "edit", {
      file_path: "a.txt",
      old_string: "beta",
      new_string: "BETA",
    });
    expect(real.structured.dryRun).toBe(false);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha\nBETA\n");
  });

  it("multi_edit with dry_run: file unchanged, dryRun true, a diff", async () => {
    const dir = await tempTree({ "a.txt": "alpha\nbeta\ngamma\n" });
    const client = await connect([dir]);
    const tools = await toolsOf(client);
    await ok(client, "read", { file_path: "a.txt" });
    const edits = [
      { old_string: "alpha", new_string: "ALPHA" },
      { old_string: "gamma", new_string: "GAMMA" },
    ];
    const dry = await checked(client, tools, "multi_edit", {
      file_path: "a.txt",
      edits,
      dry_run: true,
    });
    expect(dry.structured.dryRun).toBe(true);
    expect(dry.structured.replacements).toBe(2);
    expect(dry.structured.diff).toEqual(expect.stringContaining("+ALPHA"));
    expect(dry.structured.diff).toEqual(expect.stringContaining("+GAMMA"));
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha\nbeta\ngamma\n");
    await ok(client, "multi_edit", { file_path: "a.txt", edits });
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("ALPHA\nbeta\nGAMMA\n");
  });
});

describe("apply_patch with diffs past half the output cap", () => {
  it("still answers structured content that matches its output schema", async () => {
    const dir = await tempTree();
    const client = await connect([dir]);
    // Each line about 60 bytes: 2500 of them make a diff of about 150 KiB (> MAX_RESULT_BYTES / 2).
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i} ${"x".repeat(50)}`);
    const applied = await ok(client, "apply_patch", {
      input: patch("*** Add File: big.txt", ...lines.map((line) => `+${line}`)),
    });
    expect(readFileSync(join(dir, "big.txt"), "utf8")).toBe(`${lines.join("\n")}\n`);
    const files = applied.structured.files as { diff?: string }[];
    expect(files[0]?.diff).toBeUndefined();
    // The schema the client was given must allow what the server sends.
    validateOutput((await toolsOf(client)).get("apply_patch"), applied.structured);
  });

  it("is not rejected by an SDK client that listed the tools (and so checks the schema)", async () => {
    const dir = await tempTree();
    const client = await connect([dir]);
    await client.listTools();
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i} ${"x".repeat(50)}`);
    const input = patch("*** Add File: big.txt", ...lines.map((line) => `+${line}`));
    const result = await client
      .callTool({ name: "apply_patch", arguments: { input, dry_run: true } })
      .catch((error: Error) => error);
    expect(result instanceof Error ? result.message : "", "callTool rejected").toBe("");
    expect((result as CallToolResult).isError).toBeFalsy();
    expect(existsSync(join(dir, "big.txt"))).toBe(false);
  });
});

describe("failures of the new tools are isError results naming the code", () => {
  it("apply_patch of a malformed patch: INVALID_PATCH", async () => {
    const dir = await tempTree({ "a.txt": "a\n" });
    const client = await connect([dir]);
    await ok(client, "read", { file_path: "a.txt" });
    await fails(
      client,
      "apply_patch",
      { input: "*** Update File: a.txt\n-a\n+b\n*** End Patch" },
      "INVALID_PATCH",
    );
    await fails(
      client,
      "apply_patch",
      { input: patch("*** Frobnicate File: a.txt", "+b") },
      "INVALID_PATCH",
    );
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("a\n");
  });

  it("apply_patch of a file not read: NOT_READ, and nothing changed", async () => {
    const dir = await tempTree({ "a.txt": "one\n", "b.txt": "two\n" });
    const client = await connect([dir]);
    await ok(client, "read", { file_path: "a.txt" });
    const text = await fails(
      client,
      "apply_patch",
      {
        input: patch(
          "*** Add File: c.txt",
          "+three",
          "*** Update File: a.txt",
          "-one",
          "+ONE",
          "*** Update File: b.txt",
          "-two",
          "+TWO",
        ),
      },
      "NOT_READ",
    );
    expect(text).toContain("b.txt");
    expect(existsSync(join(dir, "c.txt"))).toBe(false);
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\n");
    expect(await readFile(join(dir, "b.txt"), "utf8")).toBe("two\n");
  });

  it("apply_patch whose third file's hunk fails: NO_MATCH naming it, the first two unchanged", async () => {
    const dir = await tempTree({ "a.txt": "a1\na2\n", "b.txt": "b1\nb2\n", "c.txt": "c1\nc2\n" });
    const client = await connect([dir]);
    for (const name of ["a.txt", "b.txt", "c.txt"]) await ok(client, "read", { file_path: name });
    const text = await fails(
      client,
      "apply_patch",
      {
        input: patch(
          "*** Update File: a.txt",
          "-a1",
          "+A1",
          "*** Update File: b.txt",
          "-b2",
          "+B2",
          "*** Update File: c.txt",
          "-not in the file",
          "+C",
        ),
      },
      "NO_MATCH",
    );
    expect(text).toContain("c.txt");
    expect(text).toContain("hunk 1 of c.txt");
    expect(text).toContain("not in the file");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("a1\na2\n");
    expect(await readFile(join(dir, "b.txt"), "utf8")).toBe("b1\nb2\n");
    expect(await readFile(join(dir, "c.txt"), "utf8")).toBe("c1\nc2\n");
  });

  it("mkdir outside the root: OUTSIDE_ROOT, and nothing made", async () => {
    const base = await tempTree({ "root/a.txt": "a\n" });
    const root = join(base, "root");
    const client = await connect([root]);
    await fails(client, "mkdir", { path: join(base, "elsewhere") }, "OUTSIDE_ROOT");
    await fails(client, "mkdir", { path: "../escaped/deep" }, "OUTSIDE_ROOT");
    expect(existsSync(join(base, "elsewhere"))).toBe(false);
    expect(existsSync(join(base, "escaped"))).toBe(false);
  });

  it("list of a file: NOT_A_DIRECTORY", async () => {
    const dir = await tempTree({ "a.txt": "a\n" });
    const client = await connect([dir]);
    const text = await fails(client, "list", { path: "a.txt" }, "NOT_A_DIRECTORY");
    expect(text).toContain("a.txt");
  });
});

describe("annotations of the new tools", () => {
  it("marks list, stat and read_many read-only, apply_patch and mkdir not", async () => {
    const dir = await tempTree();
    const tools = await toolsOf(await connect([dir]));
    for (const name of ["list", "stat", "read_many"]) {
      expect(tools.get(name)?.annotations?.readOnlyHint, name).toBe(true);
    }
    for (const name of ["apply_patch", "mkdir"]) {
      expect(tools.get(name)?.annotations?.readOnlyHint, name).toBe(false);
    }
  });
});

describe("two real freshfs mcp processes on one root", () => {
  it("refuses a patch based on a read the other process made stale, and applies it after a re-read", async () => {
    const dir = await tempTree({ "a.txt": "line one\nline two\n" });
    const file = join(dir, "a.txt");
    const [a, b] = await Promise.all([spawnServer(dir), spawnServer(dir)]);

    await ok(a, "read", { file_path: "a.txt" });
    await ok(b, "read", { file_path: "a.txt" });
    const byB = await ok(b, "apply_patch", {
      input: patch("*** Update File: a.txt", "-line two", "+line two (by B)"),
    });
    expect(byB.structured.dryRun).toBe(false);
    expect(await readFile(file, "utf8")).toBe("line one\nline two (by B)\n");

    const fromA = patch("*** Update File: a.txt", "-line one", "+line one (by A)");
    const refused = await fails(a, "apply_patch", { input: fromA }, "STALE");
    expect(refused).toContain("a.txt");
    expect(await readFile(file, "utf8")).toBe("line one\nline two (by B)\n");

    const again = await ok(a, "read", { file_path: "a.txt" });
    expect(again.text).toContain("line two (by B)");
    await ok(a, "apply_patch", { input: fromA });
    expect(await readFile(file, "utf8")).toBe("line one (by A)\nline two (by B)\n");
  });

  it("shows one process's mkdir and added file in the other's list and glob at once", async () => {
    const dir = await tempTree({ "old.txt": "old\n" });
    const [a, b] = await Promise.all([spawnServer(dir), spawnServer(dir)]);
    // A has listed and globbed the tree before (its listing may be live or cached now).
    const first = await ok(a, "list", {});
    expect((first.structured.entries as { path: string }[]).map((e) => e.path)).toEqual([
      "old.txt",
    ]);
    expect((await ok(a, "glob", { pattern: "**/*.txt" })).structured.files).toEqual(["old.txt"]);

    await ok(b, "mkdir", { path: "made/inner" });
    await ok(b, "apply_patch", { input: patch("*** Add File: made/new.txt", "+hello") });

    const listed = await ok(a, "list", { depth: 3 });
    const paths = (listed.structured.entries as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(["made", "made/inner", "made/new.txt", "old.txt"]);
    const globbed = await ok(a, "glob", { pattern: "**/*.txt" });
    expect([...(globbed.structured.files as string[])].sort()).toEqual(["made/new.txt", "old.txt"]);
    const dirs = await ok(a, "glob", { pattern: "made/*" });
    expect(dirs.structured.files).toEqual(["made/new.txt"]);

    // Once A answers from its watched (live) tree, B's changes are still in A's next answer.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const probe = await ok(a, "glob", { pattern: "**/*.txt" });
      if (probe.structured.freshness === "live") break;
      expect(Date.now(), "A's tree never became live").toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await ok(b, "mkdir", { path: "made/inner/later" });
    await ok(b, "apply_patch", { input: patch("*** Add File: made/inner/later.txt", "+x") });
    const liveList = await ok(a, "list", { path: "made", depth: 3 });
    expect(liveList.structured.freshness).toBe("live");
    expect((liveList.structured.entries as { path: string }[]).map((e) => e.path).sort()).toEqual([
      "made/inner",
      "made/inner/later",
      "made/inner/later.txt",
      "made/new.txt",
    ]);
    const liveGlob = await ok(a, "glob", { pattern: "**/*.txt" });
    expect(liveGlob.structured.freshness).toBe("live");
    expect([...(liveGlob.structured.files as string[])].sort()).toEqual([
      "made/inner/later.txt",
      "made/new.txt",
      "old.txt",
    ]);
  });
});

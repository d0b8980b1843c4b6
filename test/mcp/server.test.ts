/**
 * The MCP server: tools listed with Claude Code's parameters, limits in their
 * descriptions, annotations and output schemas; the stale-edit scenario; every tool through a
 * real SDK Client over the in-memory transport; one Workspace per server; client roots that
 * narrow and never widen; concurrency; and the built `freshfs mcp` over stdio.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallToolResult,
  ListRootsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  FIND_DEFAULT_LIMIT,
  GLOB_DEFAULT_LIMIT,
  GREP_TOOL_DEFAULT_LIMIT,
  GREP_TOOL_MAX_COLUMNS,
  MAX_FILE_BYTES,
  MAX_RESULT_BYTES,
  READ_DEFAULT_LIMIT,
  READ_MAX_LINE_CHARS,
} from "../../src/index.js";
import { createFreshfsServer } from "../../src/mcp/server.js";
import { tempTree } from "../helpers/fs.js";
import { call, fails, ok, textOf, toolsOf, validateOutput } from "../helpers/mcp.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;

const TOOL_NAMES = [
  "apply_patch",
  "delete",
  "edit",
  "find",
  "glob",
  "grep",
  "list",
  "mkdir",
  "multi_edit",
  "read",
  "read_many",
  "rename",
  "stat",
  "write",
];
const READ_ONLY = ["read", "read_many", "list", "stat", "glob", "grep", "find"];

interface Connected {
  client: Client;
  /** Client roots (directories) the client answers roots/list with; mutate, then notify. */
  clientRoots: string[];
}

/**
 * A server over `roots` and a real Client linked to it in memory. With `clientRoots`, the
 * client declares the roots capability and answers roots/list with those directories.
 */
async function connect(roots: string[], clientRoots?: string[]): Promise<Connected> {
  const { server } = createFreshfsServer({ roots });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client(
    { name: "freshfs-test", version: "1.0.0" },
    clientRoots ? { capabilities: { roots: { listChanged: true } } } : {},
  );
  const current = clientRoots ?? [];
  if (clientRoots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: current.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir })),
    }));
  }
  await client.connect(clientSide);
  onTestFinished(async () => {
    await client.close();
  });
  return { client, clientRoots: current };
}

function propertiesOf(schema: Tool["inputSchema"] | Tool["outputSchema"]): string[] {
  return Object.keys((schema?.properties ?? {}) as Record<string, unknown>);
}

describe("tools/list", () => {
  it("lists exactly the fourteen tools", async () => {
    const dir = await tempTree();
    const { client } = await connect([dir]);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
  });

  it("states each tool's limits in its description, with the numbers the code enforces", async () => {
    const dir = await tempTree();
    const { client } = await connect([dir]);
    const tools = await toolsOf(client);
    for (const name of TOOL_NAMES) {
      expect(tools.get(name)?.description?.length ?? 0, name).toBeGreaterThan(40);
    }
    const has = (name: string, value: number | string) =>
      expect(tools.get(name)?.description, `${name}: ${value}`).toMatch(
        new RegExp(`(^|\\D)${value}(\\D|$)`),
      );
    has("read", READ_DEFAULT_LIMIT);
    has("read", READ_MAX_LINE_CHARS);
    has("read", `${MAX_RESULT_BYTES / 1024} KiB`);
    has("read", `${MAX_FILE_BYTES / (1024 * 1024)} MiB`);
    has("glob", GLOB_DEFAULT_LIMIT);
    has("grep", GREP_TOOL_DEFAULT_LIMIT);
    has("grep", GREP_TOOL_MAX_COLUMNS);
    has("find", FIND_DEFAULT_LIMIT);
    // The guard is stated where it applies.
    for (const name of ["write", "edit", "multi_edit", "delete"]) {
      expect(tools.get(name)?.description, name).toMatch(/read/i);
    }
  });

  it("annotates read-only and destructive tools", async () => {
    const dir = await tempTree();
    const { client } = await connect([dir]);
    const tools = await toolsOf(client);
    for (const name of TOOL_NAMES) {
      const annotations = tools.get(name)?.annotations;
      if (READ_ONLY.includes(name)) {
        expect(annotations?.readOnlyHint, name).toBe(true);
        expect(annotations?.destructiveHint, name).not.toBe(true);
      } else {
        expect(annotations?.destructiveHint, name).toBe(true);
        expect(annotations?.readOnlyHint, name).not.toBe(true);
      }
    }
  });

  it("takes Claude Code's parameter names and declares an output schema", async () => {
    const dir = await tempTree();
    const { client } = await connect([dir]);
    const tools = await toolsOf(client);
    const expected: Record<string, string[]> = {
      read: ["file_path", "offset", "limit"],
      write: ["file_path", "content"],
      edit: ["file_path", "old_string", "new_string", "replace_all"],
      multi_edit: ["file_path", "edits"],
      delete: ["file_path"],
      rename: ["from", "to", "overwrite"],
      glob: ["pattern", "path", "offset"],
      grep: [
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-A",
        "-B",
        "-C",
        "-i",
        "-n",
        "head_limit",
        "offset",
        "multiline",
      ],
      find: ["query", "path", "limit"],
    };
    for (const [name, params] of Object.entries(expected)) {
      const tool = tools.get(name);
      expect(tool?.inputSchema.type, name).toBe("object");
      expect(propertiesOf(tool?.inputSchema), name).toEqual(expect.arrayContaining(params));
      expect(tool?.outputSchema?.type, name).toBe("object");
      expect(propertiesOf(tool?.outputSchema).length, name).toBeGreaterThan(0);
    }
    const multiEdit = tools.get("multi_edit") as Tool;
    const edits = (multiEdit.inputSchema.properties as Record<string, unknown>).edits as {
      type: string;
      items: { properties: Record<string, unknown> };
    };
    expect(edits.type).toBe("array");
    expect(Object.keys(edits.items.properties)).toEqual(
      expect.arrayContaining(["old_string", "new_string", "replace_all"]),
    );
    expect(propertiesOf(tools.get("grep")?.outputSchema)).toEqual(
      expect.arrayContaining(["mode", "total", "truncated"]),
    );
  });
});

describe("the stale-edit scenario", () => {
  it("refuses an edit after an external change, and makes it after a re-read", async () => {
    const dir = await tempTree({ "notes.txt": "alpha\nbeta\ngamma\n" });
    const file = join(dir, "notes.txt");
    const { client } = await connect([dir]);
    const tools = await toolsOf(client);

    const first = await ok(client, "read", { file_path: file });
    expect(first.text).toContain("     2\tbeta");

    await writeFile(file, "alpha\nBETA (changed outside)\ngamma\ndelta\n");

    const refused = await fails(
      client,
      "edit",
      { file_path: file, old_string: "gamma", new_string: "GAMMA" },
      "STALE",
    );
    expect(refused).toMatch(/read it again/i);
    expect(refused).toContain("notes.txt");
    expect(await readFile(file, "utf8")).toBe("alpha\nBETA (changed outside)\ngamma\ndelta\n");

    const again = await ok(client, "read", { file_path: file });
    expect(again.text).toContain("BETA (changed outside)");

    const edited = await ok(client, "edit", {
      file_path: file,
      old_string: "gamma",
      new_string: "GAMMA",
    });
    expect(edited.structured.replacements).toBe(1);
    expect(edited.structured.diff).toEqual(expect.stringContaining("-gamma"));
    expect(edited.structured.diff).toEqual(expect.stringContaining("+GAMMA"));
    expect(edited.structured.firstChangedLine).toBe(3);
    expect(edited.structured).not.toHaveProperty("text");
    const edit = tools.get("edit") as Tool;
    validateOutput(edit, edited.structured);
    const allowed = propertiesOf(edit.outputSchema);
    for (const key of Object.keys(edited.structured)) expect(allowed, key).toContain(key);
    for (const key of (edit.outputSchema?.required ?? []) as string[]) {
      expect(edited.structured, key).toHaveProperty(key);
    }
    expect(await readFile(file, "utf8")).toBe("alpha\nBETA (changed outside)\nGAMMA\ndelta\n");
  });
});

describe("every tool through the client", () => {
  it("answers each tool with structured content matching its output schema", async () => {
    const dir = await tempTree({
      "src/app.ts": 'export const greeting = "hello";\nexport const other = 1;\n',
      "src/util.ts": "export function helper() {\n  return 42;\n}\n",
      "README.md": "# Project\n",
    });
    const { client } = await connect([dir]);
    const tools = await toolsOf(client);
    const check = async (name: string, args: Record<string, unknown>) => {
      const result = await ok(client, name, args);
      validateOutput(tools.get(name) as Tool, result.structured);
      return result;
    };

    const written = await check("write", { file_path: "src/new.ts", content: "export {};\n" });
    expect(written.structured.created).toBe(true);
    expect(readFileSync(join(dir, "src/new.ts"), "utf8")).toBe("export {};\n");

    const read = await check("read", { file_path: "src/app.ts" });
    expect(read.text).toContain('     1\texport const greeting = "hello";');
    expect(read.structured).toMatchObject({ startLine: 1, endLine: 2, totalLines: 2 });

    const edited = await check("edit", {
      file_path: "src/app.ts",
      old_string: '"hello"',
      new_string: '"hi"',
    });
    expect(edited.structured.replacements).toBe(1);

    await check("read", { file_path: "src/util.ts" });
    const multi = await check("multi_edit", {
      file_path: "src/util.ts",
      edits: [
        { old_string: "helper", new_string: "assist" },
        { old_string: "42", new_string: "43" },
      ],
    });
    expect(multi.structured.replacements).toBe(2);
    expect(readFileSync(join(dir, "src/util.ts"), "utf8")).toBe(
      "export function assist() {\n  return 43;\n}\n",
    );

    const glob = await check("glob", { pattern: "**/*.ts" });
    expect([...(glob.structured.files as string[])].sort()).toEqual([
      "src/app.ts",
      "src/new.ts",
      "src/util.ts",
    ]);

    const grep = await check("grep", { pattern: "export", output_mode: "content" });
    expect(grep.structured.mode).toBe("content");
    expect(grep.text).toContain('src/app.ts:1:export const greeting = "hi";');

    const find = await check("find", { query: "util" });
    expect((find.structured.matches as { path: string }[])[0]?.path).toBe("src/util.ts");

    const renamed = await check("rename", { from: "src/new.ts", to: "lib/new.ts" });
    expect(renamed.structured.overwrote).toBe(false);
    expect(readFileSync(join(dir, "lib/new.ts"), "utf8")).toBe("export {};\n");

    await check("read", { file_path: "README.md" });
    const deleted = await check("delete", { file_path: "README.md" });
    expect(deleted.structured).toHaveProperty("path");
    const after = await check("glob", { pattern: "*.md" });
    expect(after.structured.files).toEqual([]);
  });

  it("returns failures as isError results a model can act on", async () => {
    const dir = await tempTree({
      "a.txt": "one\ntwo\none\n",
      "b.txt": "const value = 1;\n",
      "c.txt": "never read\n",
    });
    const outside = await tempTree({ "secret.txt": "secret\n" });
    const { client } = await connect([dir]);

    const missing = await fails(client, "read", { file_path: "nope.txt" }, "NOT_FOUND");
    expect(missing).toContain("nope.txt");
    expect(missing).toMatch(/does not exist/);

    const escaped = await fails(
      client,
      "read",
      { file_path: join(outside, "secret.txt") },
      "OUTSIDE_ROOT",
    );
    expect(escaped).toContain("outside the workspace");
    expect(escaped).toContain(dir);
    expect(escaped).not.toContain("secret\n");
    await fails(client, "read", { file_path: "../x.txt" }, "OUTSIDE_ROOT");

    await ok(client, "read", { file_path: "b.txt" });
    const noMatch = await fails(
      client,
      "edit",
      { file_path: "b.txt", old_string: "const valu = 1;", new_string: "const value = 2;" },
      "NO_MATCH",
    );
    expect(noMatch).toContain("was not found");
    expect(noMatch).toContain("const value = 1;"); // the closest line, to copy from

    await ok(client, "read", { file_path: "a.txt" });
    const ambiguous = await fails(
      client,
      "edit",
      { file_path: "a.txt", old_string: "one", new_string: "ONE" },
      "AMBIGUOUS",
    );
    expect(ambiguous).toContain("2 times");
    expect(ambiguous).toMatch(/lines 1, 3/);
    expect(ambiguous).toContain("replace_all");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\ntwo\none\n");

    const pattern = await fails(client, "grep", { pattern: "(unclosed" }, "INVALID_PATTERN");
    expect(pattern).toContain("(unclosed");

    const notRead = await fails(
      client,
      "write",
      { file_path: "c.txt", content: "overwritten\n" },
      "NOT_READ",
    );
    expect(notRead).toMatch(/read it/i);
    expect(await readFile(join(dir, "c.txt"), "utf8")).toBe("never read\n");

    // A malformed argument is an isError result naming the parameter, not a protocol error.
    const malformed = await call(client, "read", { file_path: "c.txt", offset: "abc" });
    expect(malformed.isError).toBe(true);
    expect(textOf(malformed)).toContain("offset");
  });

  it("accepts numbers and booleans sent as strings", async () => {
    const dir = await tempTree({
      "lines.txt": "l1\nl2\nl3\nl4\n",
      "dup.txt": "x = 1\nx = 1\n",
      "case.txt": "Hello World\nnothing\nhello again\n",
    });
    const { client } = await connect([dir]);

    const window = await ok(client, "read", { file_path: "lines.txt", offset: "2", limit: "2" });
    expect(window.structured).toMatchObject({ startLine: 2, endLine: 3 });
    expect(window.text).toContain("     2\tl2");
    expect(window.text).not.toContain("l1");

    await ok(client, "read", { file_path: "dup.txt" });
    const all = await ok(client, "edit", {
      file_path: "dup.txt",
      old_string: "x = 1",
      new_string: "x = 2",
      replace_all: "true",
    });
    expect(all.structured.replacements).toBe(2);
    expect(await readFile(join(dir, "dup.txt"), "utf8")).toBe("x = 2\nx = 2\n");

    const found = await ok(client, "grep", {
      pattern: "HELLO",
      "-i": "true",
      output_mode: "content",
      "-n": "true",
      "-C": "0",
      head_limit: "5",
    });
    expect(found.text).toContain("case.txt:1:Hello World");
    expect(found.text).toContain("case.txt:3:hello again");
    expect(found.structured.total).toBe(2);

    const paged = await ok(client, "glob", { pattern: "*.txt", limit: "1", offset: "1" });
    expect(paged.structured.files).toHaveLength(1);
    expect(paged.structured.total).toBe(3);
  });

  it("accepts the filePath alias for file_path", async () => {
    const dir = await tempTree({ "a.txt": "one\ntwo\n" });
    const { client } = await connect([dir]);
    const read = await ok(client, "read", { filePath: "a.txt" });
    expect(read.text).toContain("     2\ttwo");
  });

  it("accepts the oldString/newString aliases in edit", async () => {
    const dir = await tempTree({ "a.txt": "one\ntwo\n" });
    const { client } = await connect([dir]);
    await ok(client, "read", { file_path: "a.txt" });
    const edited = await ok(client, "edit", {
      filePath: "a.txt",
      oldString: "two",
      newString: "2",
    });
    expect(edited.structured.replacements).toBe(1);
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\n2\n");
  });
});

describe("arguments the Workspace accepts are not refused by the schemas", () => {
  it("treats null optional parameters as absent", async () => {
    const dir = await tempTree({ "a.txt": "one\ntwo\none\n" });
    const { client } = await connect([dir]);
    const read = await ok(client, "read", { file_path: "a.txt", offset: null, limit: null });
    expect(read.structured).toMatchObject({ startLine: 1, endLine: 3, totalLines: 3 });
    const edited = await ok(client, "edit", {
      file_path: "a.txt",
      old_string: "two",
      new_string: "2",
      replace_all: null,
    });
    expect(edited.structured.replacements).toBe(1);
    const found = await ok(client, "grep", { pattern: "ONE", "-i": null, head_limit: null });
    expect(found.structured.files).toEqual([]);
  });

  it("accepts multi_edit's edits sent as JSON text", async () => {
    const dir = await tempTree({ "a.txt": "one\ntwo\n" });
    const { client } = await connect([dir]);
    await ok(client, "read", { file_path: "a.txt" });
    const edited = await ok(client, "multi_edit", {
      file_path: "a.txt",
      edits: JSON.stringify([
        { old_string: "one", new_string: "1" },
        { old_string: "two", new_string: "2" },
      ]),
    });
    expect(edited.structured.replacements).toBe(2);
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("1\n2\n");
  });
});

describe("one Workspace per server", () => {
  it("lets a read in one call allow an edit in a later call", async () => {
    const dir = await tempTree({ "a.txt": "before\n" });
    const { client } = await connect([dir]);
    await ok(client, "read", { file_path: "a.txt" });
    await ok(client, "glob", { pattern: "*" }); // other calls in between
    await ok(client, "edit", { file_path: "a.txt", old_string: "before", new_string: "after" });
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("after\n");
  });

  it("does not share reads between two servers", async () => {
    const dir = await tempTree({ "a.txt": "before\n" });
    const one = await connect([dir]);
    const two = await connect([dir]);
    await ok(one.client, "read", { file_path: "a.txt" });
    const refused = await fails(
      two.client,
      "edit",
      { file_path: "a.txt", old_string: "before", new_string: "after" },
      "NOT_READ",
    );
    expect(refused).toMatch(/read/i);
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("before\n");
    // The first server's read still counts for the first server.
    await ok(one.client, "edit", { file_path: "a.txt", old_string: "before", new_string: "after" });
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("after\n");
  });
});

describe("client roots", () => {
  const tree = {
    "top.txt": "top\n",
    "sub/a.txt": "in sub\n",
    "other/b.txt": "in other\n",
  };

  it("narrow the tools to the client's directory", async () => {
    const dir = await tempTree(tree);
    const { client } = await connect([dir], [join(dir, "sub")]);
    const inside = await ok(client, "read", { file_path: join(dir, "sub/a.txt") });
    expect(inside.text).toContain("in sub");
    await fails(client, "read", { file_path: join(dir, "top.txt") }, "OUTSIDE_ROOT");
    await fails(client, "read", { file_path: join(dir, "other/b.txt") }, "OUTSIDE_ROOT");
    await fails(
      client,
      "write",
      { file_path: join(dir, "other/new.txt"), content: "x\n" },
      "OUTSIDE_ROOT",
    );
    const glob = await ok(client, "glob", { pattern: "**/*.txt" });
    expect(JSON.stringify(glob.structured.files)).not.toContain("b.txt");
    expect(JSON.stringify(glob.structured.files)).not.toContain("top.txt");
    expect(JSON.stringify(glob.structured.files)).toContain("a.txt");
    await ok(client, "write", { file_path: join(dir, "sub/new.txt"), content: "x\n" });
    expect(readFileSync(join(dir, "sub/new.txt"), "utf8")).toBe("x\n");
  });

  it("never widen: a client root outside the server's roots opens nothing", async () => {
    const dir = await tempTree(tree);
    const elsewhere = await tempTree({ "e.txt": "elsewhere\n" });
    const { client } = await connect([join(dir, "sub")], [elsewhere, dir]);
    // `dir` contains the server's root: the server's root is kept, not widened to `dir`.
    await ok(client, "read", { file_path: join(dir, "sub/a.txt") });
    await fails(client, "read", { file_path: join(elsewhere, "e.txt") }, "OUTSIDE_ROOT");
    await fails(client, "read", { file_path: join(dir, "top.txt") }, "OUTSIDE_ROOT");
    await fails(
      client,
      "write",
      { file_path: join(elsewhere, "new.txt"), content: "x\n" },
      "OUTSIDE_ROOT",
    );
  });

  it("with no overlap, refuse every path", async () => {
    const dir = await tempTree(tree);
    const elsewhere = await tempTree({ "e.txt": "elsewhere\n" });
    const { client } = await connect([dir], [elsewhere]);
    await fails(client, "read", { file_path: join(dir, "top.txt") }, "OUTSIDE_ROOT");
    await fails(client, "read", { file_path: "top.txt" }, "OUTSIDE_ROOT");
    await fails(client, "read", { file_path: join(elsewhere, "e.txt") }, "OUTSIDE_ROOT");
    await fails(
      client,
      "write",
      { file_path: join(dir, "sub/new.txt"), content: "x\n" },
      "OUTSIDE_ROOT",
    );
    // Searches find nothing rather than the server's whole root.
    const glob = await call(client, "glob", { pattern: "**/*.txt" });
    if (!glob.isError) expect((glob.structuredContent as { files: string[] }).files).toEqual([]);
    else expect(textOf(glob)).toContain("OUTSIDE_ROOT");
  });

  it("accept a directory whose file URI needs escaping", async () => {
    const dir = await tempTree({ "my dir #1/a.txt": "spaced\n", "b.txt": "top\n" });
    const { client } = await connect([dir], [join(dir, "my dir #1")]);
    const read = await ok(client, "read", { file_path: join(dir, "my dir #1/a.txt") });
    expect(read.text).toContain("spaced");
    await fails(client, "read", { file_path: join(dir, "b.txt") }, "OUTSIDE_ROOT");
  });

  it("take effect when the client says they changed", async () => {
    const dir = await tempTree(tree);
    const { client, clientRoots } = await connect([dir], [join(dir, "sub")]);
    await fails(client, "read", { file_path: join(dir, "other/b.txt") }, "OUTSIDE_ROOT");

    clientRoots.splice(0, clientRoots.length, join(dir, "other"));
    await client.sendRootsListChanged();
    const now = await ok(client, "read", { file_path: join(dir, "other/b.txt") });
    expect(now.text).toContain("in other");
    await fails(client, "read", { file_path: join(dir, "sub/a.txt") }, "OUTSIDE_ROOT");
  });

  it("keep the guard's reads across a roots change", async () => {
    const dir = await tempTree(tree);
    const { client, clientRoots } = await connect([dir], [join(dir, "sub")]);
    await ok(client, "read", { file_path: join(dir, "sub/a.txt") });

    clientRoots.splice(0, clientRoots.length, join(dir, "sub"), join(dir, "other"));
    await client.sendRootsListChanged();
    await ok(client, "read", { file_path: join(dir, "other/b.txt") }); // the change is in force
    await ok(client, "edit", {
      file_path: join(dir, "sub/a.txt"),
      old_string: "in sub",
      new_string: "edited",
    });
    expect(await readFile(join(dir, "sub/a.txt"), "utf8")).toBe("edited\n");
  });
});

describe("concurrency", () => {
  it("serves 20 parallel reads and parallel glob/grep through one client", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`f${i}.txt`] = `file number ${i}\nneedle ${i}\n`;
    const dir = await tempTree(files);
    const { client } = await connect([dir]);
    const reads = Array.from({ length: 20 }, (_, i) =>
      ok(client, "read", { file_path: `f${i}.txt` }),
    );
    const searches = [
      ok(client, "glob", { pattern: "*.txt" }),
      ok(client, "grep", { pattern: "needle", output_mode: "count" }),
      ok(client, "glob", { pattern: "f1*.txt" }),
      ok(client, "grep", { pattern: "needle 7" }),
    ];
    const results = await Promise.all(reads);
    results.forEach((result, i) => {
      expect(result.text).toContain(`     1\tfile number ${i}`);
    });
    const [all, counts, some, one] = await Promise.all(searches);
    expect(all?.structured.total).toBe(20);
    expect(counts?.structured.total).toBe(20);
    expect(some?.structured.total).toBe(11); // f1 and f10..f19
    expect(one?.structured.files).toEqual(["f7.txt"]);
    // Every read counted: each file can be edited now.
    await ok(client, "edit", { file_path: "f13.txt", old_string: "needle 13", new_string: "pin" });
  });

  it("applies parallel edits of one read file without losing any", async () => {
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i}`);
    const dir = await tempTree({ "a.txt": `${lines.join("\n")}\n` });
    const { client } = await connect([dir]);
    await ok(client, "read", { file_path: "a.txt" });
    const results = await Promise.all(
      lines.map((line, i) =>
        call(client, "edit", { file_path: "a.txt", old_string: line, new_string: `edited ${i}` }),
      ),
    );
    for (const result of results) expect(result.isError, textOf(result)).toBeFalsy();
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe(
      `${lines.map((_, i) => `edited ${i}`).join("\n")}\n`,
    );
  });
});

describe("freshfs mcp over stdio", () => {
  it("serves the tools on stdout, logs on stderr, and ends when the client closes", async () => {
    const dir = await tempTree({ "a.txt": "hello\nworld\n" });
    await mkdir(join(dir, "empty"));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--no-daemon", "--root", dir],
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const errors: Error[] = [];
    const client = new Client({ name: "freshfs-test", version: "1.0.0" });
    client.onerror = (error) => errors.push(error);
    await client.connect(transport);
    // The child, to see how it ends (the SDK kills it after 2 s if it does not exit itself).
    const child = Reflect.get(transport, "_process") as ChildProcess | undefined;
    expect(child).toBeDefined();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve) => {
        child?.once("exit", (code, signal) => resolve({ code, signal }));
      },
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);

      const read = (await client.callTool({
        name: "read",
        arguments: { file_path: "a.txt" },
      })) as CallToolResult;
      expect(read.isError, textOf(read)).toBeFalsy();
      expect(textOf(read)).toBe("     1\thello\n     2\tworld");

      const edit = (await client.callTool({
        name: "edit",
        arguments: { file_path: "a.txt", old_string: "world", new_string: "there" },
      })) as CallToolResult;
      expect(edit.isError, textOf(edit)).toBeFalsy();
      expect((edit.structuredContent as { replacements: number }).replacements).toBe(1);
      expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("hello\nthere\n");

      const refused = (await client.callTool({
        name: "read",
        arguments: { file_path: "/" },
      })) as CallToolResult;
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
    const end = await exited;
    expect(end).toEqual({ code: 0, signal: null });
    expect(errors.map((error) => error.message)).toEqual([]);
    expect(stderr).toContain("freshfs mcp:");
    expect(stderr).toContain(dir);
  });

  it("answers glob and grep with every change this process made before the call, and says so", async () => {
    const dir = await tempTree({ "src/a.ts": "export const a = 1;\n" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--no-daemon", "--root", dir],
      stderr: "pipe",
    });
    const client = new Client({ name: "freshfs-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const glob = async () =>
        (
          (await client.callTool({
            name: "glob",
            arguments: { pattern: "**/*.ts" },
          })) as CallToolResult
        ).structuredContent as { files: string[]; freshness: string };
      const grep = async () =>
        (
          (await client.callTool({
            name: "grep",
            arguments: { pattern: "export const" },
          })) as CallToolResult
        ).structuredContent as { files: string[]; freshness: string };
      expect(await glob()).toMatchObject({ files: ["src/a.ts"], freshness: "walked" });
      const modes = new Set<string>();
      // The server is another process: each change here is made behind its back.
      for (let i = 0; i < 30; i++) {
        await writeFile(join(dir, "src", `b${i}.ts`), `export const b${i} = ${i};\n`);
        await rm(join(dir, "src", i === 0 ? "a.ts" : `b${i - 1}.ts`));
        const found = await glob();
        expect(found.files).toEqual([`src/b${i}.ts`]);
        expect((await grep()).files).toEqual([`src/b${i}.ts`]);
        modes.add(found.freshness);
        if (i === 10) await new Promise((resolve) => setTimeout(resolve, 300));
      }
      // Once its watches are set up, the server answers from the live tree.
      expect(modes).toContain("live");
    } finally {
      await client.close();
    }
  });

  it("keeps its guard for the server's life: a server started per call refuses an edit read by the last one", async () => {
    const dir = await tempTree({ "f.txt": "one\n" });
    const call = async (name: string, args: Record<string, unknown>) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, "mcp", "--no-daemon", "--root", dir],
        stderr: "pipe",
      });
      const client = new Client({ name: "freshfs-test", version: "1.0.0" });
      await client.connect(transport);
      try {
        return (await client.callTool({ name, arguments: args })) as CallToolResult;
      } finally {
        await client.close();
      }
    };
    expect((await call("read", { file_path: "f.txt" })).isError).toBeFalsy();
    const edit = await call("edit", { file_path: "f.txt", old_string: "one", new_string: "two" });
    expect(edit.isError).toBe(true);
    expect(JSON.stringify(edit.content)).toContain("NOT_READ");
    expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("one\n");
  });

  it("takes rg's -v, -o, -w, several patterns and max_depth in grep, over the SDK client", async () => {
    const dir = await tempTree({ "a.txt": "foo bar\nbaz\nfoobar\n", "d/e/b.txt": "foo deep\n" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--no-daemon", "--root", dir],
      stderr: "pipe",
    });
    const client = new Client({ name: "freshfs-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const grep = async (args: Record<string, unknown>) =>
        (
          (await client.callTool({
            name: "grep",
            arguments: { output_mode: "content", ...args },
          })) as CallToolResult
        ).structuredContent as { lines: { path: string; line: number; text: string }[] };
      const shown = async (args: Record<string, unknown>) =>
        (await grep(args)).lines.map((l) => `${l.path}:${l.line}:${l.text}`);
      expect(await shown({ pattern: "foo", "-v": true })).toEqual(["a.txt:2:baz"]);
      expect(await shown({ pattern: "fo+", "-o": true, path: "a.txt" })).toEqual([
        "a.txt:1:foo",
        "a.txt:3:foo",
      ]);
      expect(await shown({ pattern: "foo", "-w": true })).toEqual([
        "a.txt:1:foo bar",
        "d/e/b.txt:1:foo deep",
      ]);
      expect(await shown({ pattern: "baz", patterns: ["deep"] })).toEqual([
        "a.txt:2:baz",
        "d/e/b.txt:1:foo deep",
      ]);
      expect(await shown({ pattern: "foo", max_depth: 1 })).toEqual([
        "a.txt:1:foo bar",
        "a.txt:3:foobar",
      ]);
      const bad = (await client.callTool({
        name: "grep",
        arguments: { pattern: "foo", max_depth: -1 },
      })) as CallToolResult;
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("serves the current directory when no --root is given", async () => {
    const dir = await tempTree({ "here.txt": "here\n" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--no-daemon"],
      cwd: dir,
      stderr: "pipe",
    });
    const client = new Client({ name: "freshfs-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const read = (await client.callTool({
        name: "read",
        arguments: { file_path: "here.txt" },
      })) as CallToolResult;
      expect(textOf(read)).toBe("     1\there");
      const outside = (await client.callTool({
        name: "read",
        arguments: { file_path: "../x.txt" },
      })) as CallToolResult;
      expect(outside.isError).toBe(true);
      expect(textOf(outside)).toContain("OUTSIDE_ROOT");
    } finally {
      await client.close();
    }
  });
});

describe("review regressions", () => {
  it("skips a client root that is no local directory instead of widening to the server's", async () => {
    const base = await tempTree({
      "project/a.txt": "a\n",
      "secret/key.txt": "k\n",
      "file.txt": "f\n",
    });
    const { server } = createFreshfsServer({ roots: [base] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client(
      { name: "freshfs-test", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [
        { uri: pathToFileURL(join(base, "project")).href },
        { uri: "file://server/share" },
        { uri: pathToFileURL(join(base, "file.txt")).href },
      ],
    }));
    await client.connect(clientSide);
    onTestFinished(async () => {
      await client.close();
    });
    await fails(client, "read", { file_path: join(base, "secret", "key.txt") }, "OUTSIDE_ROOT");
    await ok(client, "read", { file_path: join(base, "project", "a.txt") });
  });

  it("answers OUTSIDE_ROOT, not 'no matches', from the search tools when no root is open", async () => {
    const base = await tempTree({ "server/a.txt": "t\n", "elsewhere/b.txt": "t\n" });
    const { client } = await connect([join(base, "server")], [join(base, "elsewhere")]);
    await fails(client, "grep", { pattern: "t" }, "OUTSIDE_ROOT");
    await fails(client, "glob", { pattern: "*" }, "OUTSIDE_ROOT");
    await fails(client, "find", { query: "a" }, "OUTSIDE_ROOT");
  });

  it("lists each file once when roots repeat or nest", async () => {
    const base = await tempTree({ "a/x.txt": "t\n" });
    const { client } = await connect([base, `${base}/`, join(base, "a")]);
    const { structured } = await ok(client, "glob", { pattern: "**/*.txt" });
    expect(structured.files).toEqual(["a/x.txt"]);
  });
});

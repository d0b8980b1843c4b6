/**
 * The tool table is the one source of the tools: a real `freshfs mcp` (the built binary, an SDK
 * client over stdio) lists exactly the table's tools, each with its entry's schemas; the
 * Workspace has exactly one method per entry; and every alias in the table is accepted the same
 * way by the Workspace and over MCP (two values under a name and its alias are refused alike,
 * naming both; an alias alone gives the same answer as its parameter).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FreshfsError, TOOLS, type ToolMethod, Workspace } from "../../src/index.js";
import { tempTree } from "../helpers/fs.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;

const PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch";

/**
 * Arguments each tool accepts, with as many of its parameters as can be given at once: an alias
 * is tried in place of each. The mutations run dry where they can; the others are only tried
 * with a conflicting alias, which is refused before anything is touched.
 */
const SAMPLE: Record<ToolMethod, Record<string, unknown>> = {
  read: { file_path: "a.txt", offset: 1, limit: 5 },
  readMany: { paths: ["a.txt", "b.txt"], offset: 1, limit: 5 },
  write: { file_path: "new.txt", content: "n\n" },
  edit: { file_path: "a.txt", old_string: "alpha", new_string: "ALPHA", dry_run: true },
  multiEdit: {
    file_path: "a.txt",
    edits: [{ old_string: "alpha", new_string: "ALPHA", replace_all: true }],
    dry_run: true,
  },
  applyPatch: { input: PATCH, dry_run: true },
  delete: { file_path: "b.txt" },
  rename: { from: "b.txt", to: "c.txt", overwrite: false },
  mkdir: { path: "made" },
  list: { path: "dir", ignore: ["*.log"], depth: 2 },
  stat: { path: "a.txt" },
  glob: { pattern: "**/*.txt", limit: 5, offset: 0 },
  grep: {
    pattern: "alpha",
    output_mode: "content",
    "-C": 1,
    "-i": true,
    "-v": false,
    "-o": false,
    "-w": false,
    max_depth: 3,
    glob: "*.txt",
    fixed_strings: true,
    head_limit: 10,
  },
  find: { query: "inner", limit: 5 },
};

/** Tools a call may run with an alias alone: they change nothing (or run dry). */
const RUNS_DRY: readonly ToolMethod[] = [
  "read",
  "readMany",
  "edit",
  "multiEdit",
  "applyPatch",
  "list",
  "stat",
  "glob",
  "grep",
  "find",
];

const ENTRIES = Object.entries(TOOLS) as [ToolMethod, (typeof TOOLS)[ToolMethod]][];

interface Served {
  root: string;
  client: Client;
  ws: Workspace;
  listed: Map<string, Tool>;
}

let served: Served;

beforeAll(async () => {
  const root = await tempTree(
    {
      "a.txt": "alpha\nbeta\n",
      "b.txt": "bee\n",
      "dir/inner.txt": "inner alpha\n",
    },
    { lifetime: "file" },
  );
  const client = new Client({ name: "freshfs-tool-table", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--no-daemon", "--root", root],
    }),
  );
  const ws = new Workspace({ roots: root });
  for (const file of ["a.txt", "b.txt"]) {
    await ws.read({ file_path: file });
    await client.callTool({ name: "read", arguments: { file_path: file } });
  }
  const { tools } = await client.listTools();
  served = { root, client, ws, listed: new Map(tools.map((tool) => [tool.name, tool])) };
});

afterAll(async () => {
  await served?.client.close();
});

/** What a call came to: its text, or its refusal as MCP renders one. */
async function direct(method: ToolMethod, args: Record<string, unknown>): Promise<string> {
  try {
    const run = served.ws[method] as (params: unknown) => Promise<{ text: string }>;
    return (await run.call(served.ws, args)).text;
  } catch (error) {
    if (!(error instanceof FreshfsError)) throw error;
    return `${error.message} (${error.code})`;
  }
}

async function overMcp(name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await served.client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}

/** Where a parameter is given: at the top, or in the first object of a list (edits). */
function placeOf(tool: Tool, param: string): string | undefined {
  const properties = (tool.inputSchema.properties ?? {}) as Record<
    string,
    { items?: { properties?: Record<string, unknown> } }
  >;
  if (param in properties) return "";
  return Object.keys(properties).find(
    (list) => param in (properties[list]?.items?.properties ?? {}),
  );
}

/** `args` with `fields` set where `place` says: at the top, or in the first item of that list. */
function withFields(
  args: Record<string, unknown>,
  place: string,
  fields: Record<string, unknown>,
  drop?: string,
): Record<string, unknown> {
  const put = (into: Record<string, unknown>) => {
    const copy = { ...into, ...fields };
    if (drop !== undefined) delete copy[drop];
    return copy;
  };
  if (place === "") return put(args);
  const [first, ...rest] = args[place] as Record<string, unknown>[];
  return { ...args, [place]: [put(first ?? {}), ...rest] };
}

/** The value SAMPLE gives a parameter, at the top or in the first edit. */
function sampled(method: ToolMethod, param: string): unknown {
  const args = SAMPLE[method];
  const edits = Array.isArray(args.edits) ? (args.edits as Record<string, unknown>[]) : [];
  return args[param] ?? edits[0]?.[param];
}

const ALIASES = ENTRIES.flatMap(([method, tool]) =>
  Object.entries(tool.aliases as Record<string, readonly string[]>).flatMap(([param, aliases]) =>
    aliases.map((alias) => ({ method, name: tool.name, param, alias })),
  ),
);

describe("the tool table", () => {
  it("is what a real freshfs mcp lists, in its order, with each entry's schemas", async () => {
    const { tools } = await served.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(ENTRIES.map(([, tool]) => tool.name));
    for (const [, tool] of ENTRIES) {
      const listed = served.listed.get(tool.name);
      expect(listed?.description, tool.name).toBe(tool.description);
      expect(listed?.annotations?.readOnlyHint, tool.name).toBe(tool.readOnly);
      const { $schema: _input, ...input } = z.toJSONSchema(tool.input, { target: "draft-7" });
      const { $schema: _output, ...output } = z.toJSONSchema(tool.output, { target: "draft-7" });
      expect(listed?.inputSchema, tool.name).toEqual(input);
      expect(listed?.outputSchema, tool.name).toEqual(output);
    }
  });

  it("gives the Workspace one method per tool, and no other tool method", () => {
    const methods = Object.getOwnPropertyNames(Workspace.prototype).filter(
      (name) =>
        name !== "constructor" &&
        typeof Object.getOwnPropertyDescriptor(Workspace.prototype, name)?.value === "function",
    );
    // narrowTo and close are the Workspace's own; every other method is a tool's.
    const own = new Set(["narrowTo", "close"]);
    expect(methods.filter((name) => !own.has(name)).sort()).toEqual(
      ENTRIES.map(([method]) => method).sort(),
    );
    for (const [method, tool] of ENTRIES) {
      expect(served.listed.has(tool.name), `${method}: ${tool.name} listed`).toBe(true);
    }
  });

  it("has an alias for a parameter only where the schema documents the parameter, not the alias", () => {
    expect(ALIASES.length).toBeGreaterThan(30);
    for (const { method, name, param, alias } of ALIASES) {
      const listed = served.listed.get(name) as Tool;
      expect(placeOf(listed, param), `${method}: ${param}`).toBeDefined();
      expect(placeOf(listed, alias), `${method}: ${alias}`).toBeUndefined();
    }
  });

  it.each(ALIASES.map((a) => [`${a.method}: ${a.alias} for ${a.param}`, a] as const))(
    "refuses %s with another value alike, directly and over MCP",
    async (_title, { method, name, param, alias }) => {
      const place = placeOf(served.listed.get(name) as Tool, param) as string;
      const args = withFields(SAMPLE[method], place, { [param]: "one", [alias]: "another" });
      const said = `${param} and ${alias} name the same parameter (${param}) with different values`;
      const [fromWorkspace, fromMcp] = [await direct(method, args), await overMcp(name, args)];
      expect(fromWorkspace).toContain(said);
      expect(fromWorkspace).toMatch(/\(INVALID_ARGUMENT\)$/);
      expect(fromMcp).toBe(fromWorkspace);
    },
  );

  const alone = ALIASES.filter(
    ({ method, param }) => RUNS_DRY.includes(method) && sampled(method, param) !== undefined,
  );

  it.each(alone.map((a) => [`${a.method}: ${a.alias} for ${a.param}`, a] as const))(
    "takes %s alone as the parameter, directly and over MCP",
    async (_title, { method, name, param, alias }) => {
      const place = placeOf(served.listed.get(name) as Tool, param) as string;
      const args = withFields(SAMPLE[method], place, { [alias]: sampled(method, param) }, param);
      const expected = await direct(method, SAMPLE[method]);
      expect(expected).not.toMatch(/\([A-Z_]+\)$/);
      expect(await direct(method, args)).toBe(expected);
      expect(await overMcp(name, args)).toBe(expected);
    },
  );
});

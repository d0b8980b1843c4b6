/**
 * Bad input: every Workspace tool fed wrong types, missing fields, empty and
 * huge strings, invalid regexes and globs, binary files, directories as files, files as
 * directories, permission-denied paths and paths that vanish mid-call. Each ends in a
 * `FreshfsError` with a sensible code (and a short message) or a correct result, never another
 * exception, never a hang; a refused call changes no file. The same table runs through the MCP
 * server, where every refusal is an `isError` result and the server goes on answering. Issue
 * 17's tools (readMany, list, stat, mkdir, applyPatch, and dry_run) are in the same table.
 */
import { readdirSync, statSync } from "node:fs";
import { chmod, mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { FreshfsError, type FreshfsErrorCode, Workspace } from "../../src/index.js";
import { createFreshfsServer } from "../../src/mcp/server.js";
import { snapshot } from "../../stress/escapes.js";
import { tempTree } from "../helpers/fs.js";
import { canRunAsNobody, runAsNobody } from "../helpers/nobody.js";

type ToolName =
  | "read"
  | "write"
  | "edit"
  | "multiEdit"
  | "delete"
  | "rename"
  | "glob"
  | "grep"
  | "find"
  | "readMany"
  | "list"
  | "stat"
  | "mkdir"
  | "applyPatch";

const MCP_NAMES: Record<ToolName, string> = {
  read: "read",
  write: "write",
  edit: "edit",
  multiEdit: "multi_edit",
  delete: "delete",
  rename: "rename",
  glob: "glob",
  grep: "grep",
  find: "find",
  readMany: "read_many",
  list: "list",
  stat: "stat",
  mkdir: "mkdir",
  applyPatch: "apply_patch",
};

const PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch";

type Outcome = FreshfsErrorCode | "ok";

interface Case {
  readonly tool: ToolName;
  readonly name: string;
  readonly args: unknown;
  /** The acceptable outcomes: a code, or `ok` (a correct result, checked by `check`). */
  readonly expect: readonly Outcome[];
  readonly check?: (root: string, result: Record<string, unknown>) => void | Promise<void>;
  /** Not sent through MCP (arguments JSON cannot carry, or too slow to run twice). */
  readonly directOnly?: boolean;
}

/**
 * What every case starts from; a.txt and b.txt have been read in full (strict policy). A read
 * of a binary file records it (so that it can then be deleted or replaced), so the cases that
 * need a binary file never read use `unread.dat`, which no case reads.
 */
const TREE = {
  "a.txt": "alpha\nbeta\n",
  "b.txt": "bee\n",
  "dir/inner.txt": "inner\n",
  "bin.dat": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03]),
  "unread.dat": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03]),
};

/** A refusal's message is for a model: short, whatever the input's size. */
const MAX_MESSAGE = 2000;

const MB10 = "x".repeat(10 * 1024 * 1024);

/** Arguments that work, one parameter of which each case spoils. */
const VALID: Record<ToolName, Record<string, unknown>> = {
  read: { file_path: "a.txt" },
  write: { file_path: "new.txt", content: "n\n" },
  edit: { file_path: "a.txt", old_string: "alpha", new_string: "ALPHA" },
  multiEdit: { file_path: "a.txt", edits: [{ old_string: "alpha", new_string: "ALPHA" }] },
  delete: { file_path: "b.txt" },
  rename: { from: "b.txt", to: "c.txt" },
  glob: { pattern: "**/*.txt" },
  grep: { pattern: "alpha" },
  find: { query: "inner" },
  readMany: { paths: ["a.txt", "b.txt"] },
  list: { path: "dir" },
  stat: { path: "a.txt" },
  mkdir: { path: "made/here" },
  applyPatch: { input: PATCH },
};

type Kind =
  | "path"
  | "text"
  | "string"
  | "optString"
  | "int"
  | "bool"
  | "choice"
  | "edits"
  | "paths"
  | "optStrings";

/** Tools whose every parameter has a default: no arguments at all is a call that works. */
const NOTHING_REQUIRED: readonly ToolName[] = ["list"];

/** Each tool's parameters: the kind of value, and whether it is required. */
const PARAMS: Record<ToolName, readonly (readonly [name: string, kind: Kind])[]> = {
  read: [
    ["file_path", "path"],
    ["offset", "int"],
    ["limit", "int"],
  ],
  write: [
    ["file_path", "path"],
    ["content", "string"],
  ],
  edit: [
    ["file_path", "path"],
    ["old_string", "string"],
    ["new_string", "string"],
    ["replace_all", "bool"],
    ["dry_run", "bool"],
  ],
  multiEdit: [
    ["file_path", "path"],
    ["edits", "edits"],
    ["dry_run", "bool"],
  ],
  delete: [["file_path", "path"]],
  rename: [
    ["from", "path"],
    ["to", "path"],
    ["overwrite", "bool"],
  ],
  glob: [
    ["pattern", "text"],
    ["path", "optString"],
    ["limit", "int"],
    ["offset", "int"],
  ],
  grep: [
    ["pattern", "text"],
    ["path", "optString"],
    ["glob", "optString"],
    ["type", "optString"],
    ["output_mode", "choice"],
    ["-A", "int"],
    ["-B", "int"],
    ["-C", "int"],
    ["-i", "bool"],
    ["-n", "bool"],
    ["fixed_strings", "bool"],
    ["multiline", "bool"],
    ["head_limit", "int"],
    ["offset", "int"],
  ],
  find: [
    ["query", "text"],
    ["path", "optString"],
    ["limit", "int"],
  ],
  readMany: [
    ["paths", "paths"],
    ["offset", "int"],
    ["limit", "int"],
  ],
  list: [
    ["path", "optString"],
    ["depth", "int"],
    ["ignore", "optStrings"],
    ["hidden", "bool"],
    ["gitignore", "bool"],
    ["sort", "choice"],
    ["limit", "int"],
  ],
  stat: [["path", "path"]],
  mkdir: [["path", "path"]],
  applyPatch: [
    ["input", "text"],
    ["dry_run", "bool"],
  ],
};

const REQUIRED: readonly Kind[] = ["path", "text", "string", "edits", "paths"];

/** Values of the wrong type for a kind of parameter (`directOnly`: JSON cannot carry it). */
function wrongValues(
  kind: Kind,
): readonly (readonly [label: string, value: unknown, directOnly?: boolean])[] {
  const notString: [string, unknown][] = [
    ["a number", 42],
    ["a boolean", true],
    ["an empty array", []],
    ["an array of a string", ["a.txt"]],
    ["an object", { path: "a.txt" }],
  ];
  switch (kind) {
    case "path":
    case "text":
    case "string":
    case "optString":
    case "choice":
      return notString;
    case "int":
      return [
        ["a word", "abc"],
        ["a decimal string", "1.5"],
        ["an empty string", ""],
        ["a blank string", "  "],
        ["a negative number", -1],
        ["a fraction", 1.5],
        ["NaN", Number.NaN, true],
        ["Infinity", Number.POSITIVE_INFINITY, true],
        ["a number past 2^53", 2 ** 60],
        ["a boolean", true],
        ["an array", [1]],
        ["an object", { value: 1 }],
      ];
    case "bool":
      return [
        ["yes", "yes"],
        ["TRUE in capitals", "TRUE"],
        ["the number 1", 1],
        ["the number 0", 0],
        ["an array", [true]],
        ["an object", {}],
      ];
    case "paths":
    case "optStrings":
      return [
        ["a number", 42],
        ["a boolean", true],
        ["an object", { path: "a.txt" }],
        ["an array of a number", [1]],
        ["an array of null", [null]],
      ];
    case "edits":
      return [
        ["an object", { old_string: "alpha", new_string: "ALPHA" }],
        ["a string that is not JSON", "nope"],
        ["JSON text of an object", '{"old_string":"alpha","new_string":"x"}'],
        ["a number", 5],
        ["an array of a number", [1]],
        ["an array of null", [null]],
        ["an array of a string", ["alpha"]],
        ["an empty array", []],
        ["an edit without new_string", [{ old_string: "alpha" }]],
        ["an edit with a numeric old_string", [{ old_string: 1, new_string: "x" }]],
        [
          "an edit with replace_all 'yes'",
          [{ old_string: "a", new_string: "b", replace_all: "yes" }],
        ],
      ];
  }
}

function generatedCases(): Case[] {
  const cases: Case[] = [];
  for (const tool of Object.keys(PARAMS) as ToolName[]) {
    for (const [param, kind] of PARAMS[tool]) {
      for (const [label, value, directOnly] of wrongValues(kind)) {
        cases.push({
          tool,
          name: `${param} as ${label}`,
          args: { ...VALID[tool], [param]: value },
          expect: ["INVALID_ARGUMENT"],
          directOnly: directOnly === true,
        });
      }
      const required = REQUIRED.includes(kind);
      // `null` is "not given" (as several clients send it): required is missing, else default.
      cases.push({
        tool,
        name: `${param} as null`,
        args: { ...VALID[tool], [param]: null },
        expect: required ? ["INVALID_ARGUMENT"] : ["ok"],
      });
      if (required) {
        const { [param]: _dropped, ...rest } = VALID[tool];
        cases.push({ tool, name: `${param} missing`, args: rest, expect: ["INVALID_ARGUMENT"] });
      }
    }
    for (const [label, args] of [
      ["no arguments", undefined],
      ["null arguments", null],
      ["a string for arguments", "a.txt"],
      ["an array for arguments", ["a.txt"]],
      ["a number for arguments", 7],
    ] as const) {
      // `undefined` is the method's default argument (no arguments at all).
      const works = NOTHING_REQUIRED.includes(tool) && args === undefined;
      cases.push({
        tool,
        name: label,
        args,
        expect: [works ? "ok" : "INVALID_ARGUMENT"],
        directOnly: true,
      });
    }
    cases.push({
      tool,
      name: "an empty object",
      args: {},
      expect: [NOTHING_REQUIRED.includes(tool) ? "ok" : "INVALID_ARGUMENT"],
    });
  }
  return cases;
}

const exists = (path: string) => statSync(path, { throwIfNoEntry: false }) !== undefined;

const NAMED_CASES: readonly Case[] = [
  // Aliases that disagree, numbers and booleans sent as strings.
  {
    tool: "read",
    name: "file_path and path disagreeing",
    args: { file_path: "a.txt", path: "b.txt" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "edit",
    name: "old_string and oldString disagreeing",
    args: { ...VALID.edit, oldString: "beta" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "read",
    name: 'offset "2" and limit " 1 "',
    args: { file_path: "a.txt", offset: "2", limit: " 1 " },
    expect: ["ok"],
    check: (_root, result) => expect(result.lines).toEqual(["beta"]),
  },
  {
    tool: "edit",
    name: 'replace_all "true"',
    args: { file_path: "a.txt", old_string: "a", new_string: "A", replace_all: "true" },
    expect: ["ok"],
    check: async (root) =>
      expect(await readFile(join(root, "a.txt"), "utf8")).toBe("AlphA\nbetA\n"),
  },
  // Empty strings.
  ...(["read", "write", "edit", "multiEdit", "delete"] as const).map(
    (tool): Case => ({
      tool,
      name: "an empty file_path",
      args: { ...VALID[tool], file_path: "" },
      expect: ["INVALID_ARGUMENT"],
    }),
  ),
  {
    tool: "rename",
    name: "an empty from",
    args: { from: "", to: "c.txt" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "rename",
    name: "an empty to",
    args: { from: "b.txt", to: "" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "write",
    name: "empty content (an empty file)",
    args: { file_path: "new.txt", content: "" },
    expect: ["ok"],
    check: async (root) => expect(await readFile(join(root, "new.txt"), "utf8")).toBe(""),
  },
  {
    tool: "edit",
    name: "an empty old_string on a file with content",
    args: { file_path: "a.txt", old_string: "", new_string: "x" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "multiEdit",
    name: "an empty old_string on a file with content",
    args: { file_path: "a.txt", edits: [{ old_string: "", new_string: "x" }] },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "edit",
    name: "an empty new_string (removes the text)",
    args: { file_path: "a.txt", old_string: "alpha", new_string: "" },
    expect: ["ok"],
    check: async (root) => expect(await readFile(join(root, "a.txt"), "utf8")).toBe("\nbeta\n"),
  },
  {
    tool: "edit",
    name: "old_string equal to new_string",
    args: { file_path: "a.txt", old_string: "alpha", new_string: "alpha" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "glob",
    name: "an empty pattern",
    args: { pattern: "" },
    expect: ["INVALID_ARGUMENT", "INVALID_PATTERN"],
  },
  {
    tool: "glob",
    name: "a blank pattern",
    args: { pattern: "   " },
    expect: ["INVALID_ARGUMENT", "INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "an empty pattern",
    args: { pattern: "" },
    expect: ["INVALID_ARGUMENT", "INVALID_PATTERN"],
  },
  { tool: "find", name: "an empty query", args: { query: "" }, expect: ["INVALID_ARGUMENT"] },
  ...(["glob", "grep", "find"] as const).map(
    (tool): Case => ({
      tool,
      name: "an empty path (every root)",
      args: { ...VALID[tool], path: "" },
      expect: ["ok"],
    }),
  ),
  {
    tool: "grep",
    name: "an empty glob",
    args: { pattern: "alpha", glob: "" },
    expect: ["ok", "INVALID_ARGUMENT"],
  },
  {
    tool: "grep",
    name: "an empty type",
    args: { pattern: "alpha", type: "" },
    expect: ["ok", "INVALID_ARGUMENT"],
  },
  {
    tool: "grep",
    name: "an empty output_mode",
    args: { pattern: "alpha", output_mode: "" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "grep",
    name: "an unknown output_mode",
    args: { pattern: "alpha", output_mode: "lines" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "grep",
    name: "an unknown type",
    args: { pattern: "alpha", type: "no-such-type" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "multiEdit",
    name: "two edits, one creating",
    args: {
      file_path: "a.txt",
      edits: [
        { old_string: "", new_string: "x" },
        { old_string: "beta", new_string: "b" },
      ],
    },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "multiEdit",
    name: "overlapping edits",
    args: {
      file_path: "a.txt",
      edits: [
        { old_string: "alpha", new_string: "x" },
        { old_string: "lph", new_string: "y" },
      ],
    },
    expect: ["INVALID_ARGUMENT"],
  },
  // Issue 17's tools: what each refuses, and what it takes.
  { tool: "readMany", name: "an empty paths", args: { paths: [] }, expect: ["INVALID_ARGUMENT"] },
  {
    tool: "readMany",
    name: "101 paths",
    args: { paths: Array.from({ length: 101 }, () => "a.txt") },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "readMany",
    name: "a missing file and a binary file among read ones (inline, not thrown)",
    args: { paths: ["a.txt", "missing.txt", "unread.dat", "dir"] },
    expect: ["ok"],
    check: (_root, result) =>
      expect((result.files as { error?: { code: string } }[]).map((f) => f.error?.code)).toEqual([
        undefined,
        "NOT_FOUND",
        "BINARY",
        "NOT_A_FILE",
      ]),
  },
  { tool: "list", name: "a file", args: { path: "a.txt" }, expect: ["NOT_A_DIRECTORY"] },
  { tool: "list", name: "a missing path", args: { path: "nope" }, expect: ["NOT_FOUND"] },
  { tool: "list", name: "depth 0", args: { depth: 0 }, expect: ["INVALID_ARGUMENT"] },
  { tool: "list", name: "depth 33", args: { depth: 33 }, expect: ["INVALID_ARGUMENT"] },
  { tool: "list", name: "an unknown sort", args: { sort: "age" }, expect: ["INVALID_ARGUMENT"] },
  {
    tool: "list",
    name: "an empty ignore glob",
    args: { ignore: [""] },
    expect: ["INVALID_PATTERN"],
  },
  {
    tool: "list",
    name: "101 ignore globs",
    args: { ignore: Array.from({ length: 101 }, (_, i) => `x${i}`) },
    expect: ["INVALID_ARGUMENT"],
  },
  { tool: "stat", name: "a missing path", args: { path: "nope" }, expect: ["NOT_FOUND"] },
  { tool: "stat", name: "an empty path", args: { path: "" }, expect: ["INVALID_ARGUMENT"] },
  { tool: "mkdir", name: "an empty path", args: { path: "" }, expect: ["INVALID_ARGUMENT"] },
  { tool: "mkdir", name: "an existing file", args: { path: "a.txt" }, expect: ["ALREADY_EXISTS"] },
  {
    tool: "mkdir",
    name: "a file on the way",
    args: { path: "a.txt/sub" },
    expect: ["NOT_A_DIRECTORY"],
  },
  {
    tool: "mkdir",
    name: "an existing directory (no error)",
    args: { path: "dir" },
    expect: ["ok"],
    check: (_root, result) => expect(result.created).toBe(false),
  },
  { tool: "applyPatch", name: "an empty input", args: { input: "" }, expect: ["INVALID_ARGUMENT"] },
  {
    tool: "applyPatch",
    name: "text that is no patch",
    args: { input: "alpha -> ALPHA" },
    expect: ["INVALID_PATCH"],
  },
  {
    tool: "applyPatch",
    name: "a patch without its end",
    args: { input: "*** Begin Patch\n*** Add File: n.txt\n+n" },
    expect: ["INVALID_PATCH"],
  },
  {
    tool: "applyPatch",
    name: "a hunk that does not match",
    args: { input: PATCH.replace("-alpha", "-gamma") },
    expect: ["NO_MATCH"],
  },
  {
    tool: "applyPatch",
    name: "an update of a file not read",
    args: { input: PATCH.replaceAll("a.txt", "dir/inner.txt").replace("-alpha", "-inner") },
    expect: ["NOT_READ"],
  },
  {
    tool: "applyPatch",
    name: "an add over a file not read",
    args: { input: "*** Begin Patch\n*** Add File: dir/inner.txt\n+x\n*** End Patch" },
    expect: ["NOT_READ"],
  },
  {
    tool: "applyPatch",
    name: "a delete of a directory",
    args: { input: "*** Begin Patch\n*** Delete File: dir\n*** End Patch" },
    expect: ["NOT_A_FILE"],
  },
  {
    tool: "applyPatch",
    name: "an update of a binary file",
    args: {
      input: "*** Begin Patch\n*** Update File: bin.dat\n@@\n-x\n+y\n*** End Patch",
    },
    expect: ["NOT_READ", "BINARY"],
  },
  {
    tool: "applyPatch",
    name: "a 10 MB added line",
    args: {
      input: `*** Begin Patch\n*** Add File: big.txt\n+${"x".repeat(10 * 1024 * 1024)}\n*** End Patch`,
    },
    expect: ["ok"],
    directOnly: true,
    check: (root) => expect(statSync(join(root, "big.txt")).size).toBe(10 * 1024 * 1024 + 1),
  },
  // Huge strings (10 MB).
  // Many components: the path is too long, whatever the way of saying so (not a stack overflow).
  {
    tool: "read",
    name: "a path of 20000 components",
    args: { file_path: `${"d/".repeat(20_000)}x` },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "write",
    name: "a path of 20000 components",
    args: { file_path: `${"d/".repeat(20_000)}x`, content: "x" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "write",
    name: "10 MB of content",
    args: { file_path: "big.txt", content: MB10 },
    expect: ["ok"],
    check: (root) => expect(statSync(join(root, "big.txt")).size).toBe(MB10.length),
  },
  {
    tool: "write",
    name: "a 10 MB file_path",
    args: { file_path: MB10, content: "x" },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "read",
    name: "a 10 MB file_path",
    args: { file_path: MB10 },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "rename",
    name: "a 10 MB to",
    args: { from: "b.txt", to: MB10 },
    expect: ["INVALID_ARGUMENT"],
  },
  {
    tool: "edit",
    name: "a 10 MB old_string",
    args: { file_path: "a.txt", old_string: MB10, new_string: "y" },
    expect: ["NO_MATCH"],
  },
  {
    tool: "edit",
    name: "a 10 MB new_string",
    args: { file_path: "a.txt", old_string: "alpha", new_string: MB10 },
    expect: ["ok"],
    check: async (root) =>
      expect(await readFile(join(root, "a.txt"), "utf8")).toBe(`${MB10}\nbeta\n`),
  },
  {
    tool: "multiEdit",
    name: "a 10 MB old_string",
    args: { file_path: "a.txt", edits: [{ old_string: MB10, new_string: "y" }] },
    expect: ["NO_MATCH"],
  },
  {
    tool: "glob",
    name: "a 10 MB pattern",
    args: { pattern: MB10 },
    expect: ["ok", "INVALID_PATTERN"],
  },
  // 1 MB: a 10 MB regex takes ~5 s to compile and search (fixed_strings below is 10 MB).
  {
    tool: "grep",
    name: "a 1 MB regex",
    args: { pattern: MB10.slice(0, 1024 * 1024) },
    expect: ["ok", "INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "a 10 MB literal pattern",
    args: { pattern: MB10, fixed_strings: true },
    expect: ["ok", "INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "a regex of 100000 groups",
    args: { pattern: "(a|b)".repeat(100_000) },
    expect: ["INVALID_PATTERN"],
  },
  {
    tool: "find",
    name: "a 10 MB query",
    args: { query: MB10 },
    expect: ["ok", "INVALID_ARGUMENT"],
  },
  // Invalid regular expressions.
  ...["(", "[", "a{2,1}", "(?<", "\\", "*", "+a", "[z-a]", "(?<n>a)(?<n>b)", "(?=a"].map(
    (pattern): Case => ({
      tool: "grep",
      name: `the regex ${JSON.stringify(pattern)}`,
      args: { pattern },
      expect: ["INVALID_PATTERN"],
    }),
  ),
  {
    tool: "grep",
    name: "an invalid regex with multiline",
    args: { pattern: "(", multiline: true },
    expect: ["INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "an invalid regex with -i and content mode",
    args: { pattern: "[", "-i": true, output_mode: "content" },
    expect: ["INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "a regex matching a line break without multiline",
    args: { pattern: "alpha\\nbeta" },
    expect: ["INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "an invalid regex as a fixed string",
    args: { pattern: "(", fixed_strings: true },
    expect: ["ok"],
  },
  // Invalid globs, and thousands of braces.
  {
    tool: "glob",
    name: "five wildcards in one name",
    args: { pattern: "a*b*c*d*e" },
    expect: ["INVALID_PATTERN"],
  },
  {
    tool: "glob",
    name: "the pattern /",
    args: { pattern: "/" },
    expect: ["ok", "INVALID_PATTERN"],
  },
  {
    tool: "glob",
    name: "an unclosed [",
    args: { pattern: "[" },
    expect: ["ok", "INVALID_PATTERN"],
  },
  {
    tool: "glob",
    name: "an unclosed extglob",
    args: { pattern: "+(a" },
    expect: ["ok", "INVALID_PATTERN"],
  },
  {
    tool: "grep",
    name: "an unclosed [ as glob",
    args: { pattern: "alpha", glob: "[" },
    expect: ["ok", "INVALID_PATTERN"],
  },
  ...(
    [
      ["1000 brace pairs", "{a,b}".repeat(1000)],
      ["5000 brace pairs", "{a,b}".repeat(5000)],
      ["2000 unclosed braces", "{".repeat(2000)],
      ["1000 nested braces", `${"{".repeat(1000)}a${"}".repeat(1000)}`],
      ["1000 nested alternatives", `${"{a,".repeat(1000)}b${"}".repeat(1000)}`],
      [
        "a brace list of 10000 names",
        `{${Array.from({ length: 10000 }, (_, i) => `f${i}`).join(",")}}`,
      ],
    ] as const
  ).flatMap(([label, pattern]): Case[] => [
    {
      tool: "glob",
      name: `a glob of ${label}`,
      args: { pattern },
      expect: ["ok", "INVALID_PATTERN"],
    },
    // grep expands braces itself and stops past 1024 patterns: 5000 pairs only take longer.
    ...(label === "5000 brace pairs"
      ? []
      : [
          {
            tool: "grep",
            name: `a glob filter of ${label}`,
            args: { pattern: "alpha", glob: pattern },
            expect: ["ok", "INVALID_PATTERN"],
          } satisfies Case,
        ]),
  ]),
  // Binary files.
  { tool: "read", name: "a binary file", args: { file_path: "bin.dat" }, expect: ["BINARY"] },
  {
    tool: "edit",
    name: "a binary file",
    args: { file_path: "bin.dat", old_string: "PNG", new_string: "GIF" },
    expect: ["BINARY", "NOT_READ"],
  },
  {
    tool: "write",
    name: "over a binary file never read",
    args: { file_path: "unread.dat", content: "x" },
    expect: ["NOT_READ"],
  },
  {
    tool: "delete",
    name: "a binary file never read",
    args: { file_path: "unread.dat" },
    expect: ["NOT_READ"],
  },
  {
    tool: "grep",
    name: "a pattern only a binary file holds",
    args: { pattern: "PNG" },
    expect: ["ok"],
    check: (_root, result) => expect(result.files).toEqual([]),
  },
  {
    tool: "grep",
    name: "a binary file as path",
    args: { pattern: "PNG", path: "bin.dat" },
    expect: ["ok"],
  },
  // Directories as files.
  { tool: "read", name: "a directory", args: { file_path: "dir" }, expect: ["NOT_A_FILE"] },
  {
    tool: "read",
    name: "a directory with a slash",
    args: { file_path: "dir/" },
    expect: ["NOT_A_FILE"],
  },
  {
    tool: "write",
    name: "a directory",
    args: { file_path: "dir", content: "x" },
    expect: ["NOT_A_FILE"],
  },
  {
    tool: "edit",
    name: "a directory",
    args: { file_path: "dir", old_string: "a", new_string: "b" },
    expect: ["NOT_A_FILE"],
  },
  {
    tool: "edit",
    name: "a directory, with an empty old_string",
    args: { file_path: "dir", old_string: "", new_string: "b" },
    expect: ["NOT_A_FILE"],
  },
  {
    tool: "multiEdit",
    name: "a directory",
    args: { file_path: "dir", edits: [{ old_string: "a", new_string: "b" }] },
    expect: ["NOT_A_FILE"],
  },
  { tool: "delete", name: "a directory", args: { file_path: "dir" }, expect: ["NOT_A_FILE"] },
  {
    tool: "rename",
    name: "onto a directory",
    args: { from: "b.txt", to: "dir" },
    expect: ["ALREADY_EXISTS"],
  },
  {
    tool: "rename",
    name: "onto a directory with overwrite",
    args: { from: "b.txt", to: "dir", overwrite: true },
    expect: ["NOT_A_FILE", "ALREADY_EXISTS"],
  },
  {
    tool: "rename",
    name: "a directory onto a file with overwrite",
    args: { from: "dir", to: "a.txt", overwrite: true },
    expect: ["ALREADY_EXISTS", "NOT_A_DIRECTORY"],
  },
  // Files as directories.
  {
    tool: "read",
    name: "a path under a file",
    args: { file_path: "a.txt/x" },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "write",
    name: "a path under a file",
    args: { file_path: "a.txt/x", content: "x" },
    expect: ["NOT_A_DIRECTORY"],
  },
  {
    tool: "write",
    name: "a deep path under a file",
    args: { file_path: "a.txt/x/y/z.txt", content: "x" },
    expect: ["NOT_A_DIRECTORY"],
  },
  {
    tool: "edit",
    name: "a path under a file",
    args: { file_path: "a.txt/x", old_string: "a", new_string: "b" },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "edit",
    name: "a path under a file, with an empty old_string",
    args: { file_path: "a.txt/x", old_string: "", new_string: "b" },
    expect: ["NOT_A_DIRECTORY"],
  },
  {
    tool: "multiEdit",
    name: "a path under a file",
    args: { file_path: "a.txt/x", edits: [{ old_string: "a", new_string: "b" }] },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "delete",
    name: "a path under a file",
    args: { file_path: "a.txt/x" },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "rename",
    name: "from a path under a file",
    args: { from: "a.txt/x", to: "c.txt" },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "rename",
    name: "to a path under another file",
    args: { from: "b.txt", to: "a.txt/x" },
    expect: ["NOT_A_DIRECTORY"],
  },
  // The same mistake with the source's own name: a.txt is a file, so the answer is the same
  // as above, not "a directory cannot be moved into itself".
  {
    tool: "rename",
    name: "to a path under the source file itself",
    args: { from: "a.txt", to: "a.txt/x" },
    expect: ["NOT_A_DIRECTORY"],
  },
  {
    tool: "glob",
    name: "a file as path",
    args: { pattern: "*", path: "a.txt" },
    expect: ["NOT_A_DIRECTORY", "ok"],
  },
  {
    tool: "glob",
    name: "a path under a file",
    args: { pattern: "*", path: "a.txt/x" },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "grep",
    name: "a path under a file",
    args: { pattern: "a", path: "a.txt/x" },
    expect: ["NOT_FOUND", "NOT_A_DIRECTORY"],
  },
  {
    tool: "find",
    name: "a file as path",
    args: { query: "a", path: "a.txt" },
    expect: ["NOT_A_DIRECTORY", "ok"],
  },
  {
    tool: "find",
    name: "a missing path",
    args: { query: "a", path: "nope" },
    expect: ["NOT_FOUND"],
  },
];

const CASES: readonly Case[] = [...generatedCases(), ...NAMED_CASES];

/** A tree and a strict workspace that has read a.txt and b.txt in full. */
async function setup(lifetime: "test" | "file" = "test"): Promise<{ root: string; ws: Workspace }> {
  const root = await tempTree(TREE, { lifetime });
  const ws = new Workspace({ roots: root });
  await ws.read({ file_path: "a.txt" });
  await ws.read({ file_path: "b.txt" });
  return { root, ws };
}

function call(ws: Workspace, tool: ToolName, args: unknown): Promise<unknown> {
  // Deliberately untyped: the point is what the tools do with arguments their types forbid.
  const method = ws[tool] as (input: unknown) => Promise<unknown>;
  return method.call(ws, args);
}

/** `tool: name`, for test titles. */
const title = (c: Case) => `${c.tool}: ${c.name}`;

/**
 * Cases that must be refused share one tree (and workspace, or server) in turn: a refusal
 * changes nothing, which each case checks. One that changed something gets the next case a
 * fresh tree. Cases that may succeed get their own.
 */
function sharedFixture<T extends { root: string }>(make: () => Promise<T>) {
  let current: T | undefined;
  return {
    get: async (): Promise<T> => {
      current ??= await make();
      return current;
    },
    spoilt: () => {
      current = undefined;
    },
  };
}

const direct = sharedFixture(() => setup("file"));

describe("every tool, called directly", () => {
  it("has a case for each kind of bad input for every tool", () => {
    const tools = new Set(CASES.map((c) => c.tool));
    expect([...tools].sort()).toEqual(Object.keys(MCP_NAMES).sort());
    expect(CASES.length).toBeGreaterThan(300);
  });

  it.each(CASES.map((c) => [title(c), c] as const))("%s", async (_title, c) => {
    const mayPass = c.expect.includes("ok");
    const { root, ws } = mayPass ? await setup() : await direct.get();
    const before = snapshot(root);
    let result: unknown;
    let error: unknown;
    try {
      result = await call(ws, c.tool, c.args);
    } catch (thrown) {
      error = thrown;
    }
    const after = snapshot(root);
    if (!mayPass && (error === undefined || JSON.stringify(after) !== JSON.stringify(before))) {
      direct.spoilt();
    }
    if (error === undefined) {
      expect(c.expect, "the call succeeded").toContain("ok");
      expect(typeof (result as { text?: unknown }).text).toBe("string");
      await c.check?.(root, result as Record<string, unknown>);
      return;
    }
    expect(error, String(error)).toBeInstanceOf(FreshfsError);
    const refusal = error as FreshfsError;
    expect(c.expect, refusal.message.slice(0, 300)).toContain(refusal.code);
    expect(refusal.message.length, "the message is short").toBeLessThanOrEqual(MAX_MESSAGE);
    expect(after, "a refused call changed the tree").toEqual(before);
  });
});

/** A server over a fresh tree, with a real Client linked in memory, that has read a.txt and b.txt. */
async function connect(lifetime: "test" | "file"): Promise<{ root: string; client: Client }> {
  const root = await tempTree(TREE, { lifetime });
  const { server } = createFreshfsServer({ roots: [root] });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "freshfs-bad-input", version: "1.0.0" });
  await client.connect(clientSide);
  const close = async () => {
    await client.close();
  };
  if (lifetime === "test") onTestFinished(close);
  else afterAll(close);
  for (const file of ["a.txt", "b.txt"]) {
    const read = await callMcp(client, "read", { file_path: file });
    expect(read.isError, textOf(read)).toBeFalsy();
  }
  return { root, client };
}

async function callMcp(client: Client, name: string, args: unknown): Promise<CallToolResult> {
  return (await client.callTool({
    name,
    arguments: args as Record<string, unknown>,
  })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text : "";
}

/** Of the 10 MB cases, these go through MCP too (the rest are slow, and the same code runs). */
const MCP_HUGE = new Set(["write: 10 MB of content", "read: a 10 MB file_path"]);

/** Cases JSON can carry as they are (a `NaN` would arrive as `null`, another case). */
const MCP_CASES = CASES.filter(
  (c) =>
    !c.directOnly &&
    typeof c.args === "object" &&
    c.args !== null &&
    !Array.isArray(c.args) &&
    JSON.stringify(JSON.parse(JSON.stringify(c.args))) === JSON.stringify(c.args) &&
    (JSON.stringify(c.args).length < 100_000 || MCP_HUGE.has(title(c))),
);

const served = sharedFixture(() => connect("file"));
let refusedByServer = 0;

describe("every tool, through the MCP server", () => {
  it.each(MCP_CASES.map((c) => [title(c), c] as const))("%s", async (_title, c) => {
    const mayPass = c.expect.includes("ok");
    const { root, client } = mayPass ? await connect("test") : await served.get();
    const before = snapshot(root);
    const result = await callMcp(client, MCP_NAMES[c.tool], c.args);
    const after = snapshot(root);
    const text = textOf(result);
    if (!mayPass && (!result.isError || JSON.stringify(after) !== JSON.stringify(before))) {
      served.spoilt();
    }
    if (!result.isError) {
      expect(c.expect, "the call succeeded").toContain("ok");
    } else {
      if (!mayPass) refusedByServer++;
      // A FreshfsError is rendered "<message> (<CODE>)"; anything else "<tool> failed: ...".
      const code = /\(([A-Z_]+)\)$/.exec(text)?.[1];
      expect(text, "not a FreshfsError").not.toMatch(/^\w+ failed: /);
      expect(c.expect, text.slice(0, 300)).toContain(code);
      expect(text.length, "the message is short").toBeLessThanOrEqual(MAX_MESSAGE + 30);
      expect(after, "a refused call changed the tree").toEqual(before);
    }
    // The server goes on answering.
    const again = await callMcp(client, "read", { file_path: "a.txt" });
    expect(again.isError, textOf(again)).toBeFalsy();
  });

  it("still edits after hundreds of bad calls on one server", async () => {
    expect(refusedByServer).toBeGreaterThan(250);
    const { root, client } = await served.get();
    const edit = await callMcp(client, "edit", {
      file_path: "a.txt",
      old_string: "alpha",
      new_string: "ALPHA",
    });
    expect(edit.isError, textOf(edit)).toBeFalsy();
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("ALPHA\nbeta\n");
  });
});

/** A call run as nobody: its name, the tool and arguments, the policy, and files read first. */
interface NobodyCase {
  readonly name: string;
  readonly tool: ToolName;
  readonly args: Record<string, unknown>;
  readonly policy: "strict" | "warn";
  readonly readFirst?: readonly string[];
  readonly expect: readonly Outcome[];
  /** What it may change when it succeeds. */
  readonly touches?: readonly string[];
}

const NOBODY_CASES: readonly NobodyCase[] = [
  {
    name: "read an unreadable file",
    tool: "read",
    args: { file_path: "secret.txt" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "write over an unreadable file (warn)",
    tool: "write",
    args: { file_path: "secret.txt", content: "x" },
    policy: "warn",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "edit an unreadable file (warn)",
    tool: "edit",
    args: { file_path: "secret.txt", old_string: "s", new_string: "x" },
    policy: "warn",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "delete a file in a directory nobody may write (warn)",
    tool: "delete",
    args: { file_path: "secret.txt" },
    policy: "warn",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "overwrite a writable file in a read-only directory",
    tool: "write",
    args: { file_path: "locked/f.txt", content: "new\n" },
    policy: "strict",
    readFirst: ["locked/f.txt"],
    expect: ["PERMISSION_DENIED", "ok"],
    touches: ["locked/f.txt"],
  },
  {
    name: "create a file in a read-only directory",
    tool: "write",
    args: { file_path: "locked/new.txt", content: "x" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "create a directory in a read-only directory",
    tool: "write",
    args: { file_path: "locked/sub/new.txt", content: "x" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "delete from a read-only directory",
    tool: "delete",
    args: { file_path: "locked/f.txt" },
    policy: "strict",
    readFirst: ["locked/f.txt"],
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "rename out of a read-only directory",
    tool: "rename",
    args: { from: "locked/f.txt", to: "open/moved.txt" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "rename into a read-only directory",
    tool: "rename",
    args: { from: "open/mine.txt", to: "locked/moved.txt" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "read under a directory nobody may enter",
    tool: "read",
    args: { file_path: "noexec/x.txt" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "write under a directory nobody may enter",
    tool: "write",
    args: { file_path: "noexec/new.txt", content: "x" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "glob a directory nobody may enter",
    tool: "glob",
    args: { pattern: "*", path: "noexec" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "grep a directory nobody may enter",
    tool: "grep",
    args: { pattern: "x", path: "noexec" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "find in a directory nobody may enter",
    tool: "find",
    args: { query: "x", path: "noexec" },
    policy: "strict",
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "glob the whole root",
    tool: "glob",
    args: { pattern: "**/*" },
    policy: "strict",
    expect: ["ok"],
  },
  {
    name: "grep the whole root",
    tool: "grep",
    args: { pattern: "." },
    policy: "strict",
    expect: ["ok"],
  },
  {
    name: "edit another user's read-only file in a shared directory",
    tool: "edit",
    args: { file_path: "open/ro.txt", old_string: "ro", new_string: "RW" },
    policy: "strict",
    readFirst: ["open/ro.txt"],
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "overwrite another user's read-only file in a shared directory",
    tool: "write",
    args: { file_path: "open/ro2.txt", content: "RW\n" },
    policy: "strict",
    readFirst: ["open/ro2.txt"],
    expect: ["PERMISSION_DENIED"],
  },
  {
    name: "edit another user's writable file in a sticky directory",
    tool: "edit",
    args: { file_path: "sticky/s.txt", old_string: "s", new_string: "S" },
    policy: "strict",
    readFirst: ["sticky/s.txt"],
    expect: ["PERMISSION_DENIED", "ok"],
    touches: ["sticky/s.txt"],
  },
  {
    name: "delete another user's file in a sticky directory",
    tool: "delete",
    args: { file_path: "sticky/s.txt" },
    policy: "strict",
    readFirst: ["sticky/s.txt"],
    expect: ["PERMISSION_DENIED"],
  },
];

describe("permission-denied paths, as nobody", () => {
  it.skipIf(!canRunAsNobody)(
    "every call ends in PERMISSION_DENIED or a correct result, and a refusal changes nothing",
    async () => {
      const root = await tempTree({
        "secret.txt": "s\n",
        "locked/f.txt": "f\n",
        "noexec/x.txt": "x\n",
        "open/ro.txt": "ro\n",
        "open/ro2.txt": "ro2\n",
        "open/mine.txt": "mine\n",
        "sticky/s.txt": "s\n",
      });
      await chmod(root, 0o755);
      await chmod(join(root, "secret.txt"), 0o000);
      await chmod(join(root, "locked", "f.txt"), 0o666);
      await chmod(join(root, "locked"), 0o555);
      await chmod(join(root, "noexec"), 0o700);
      await chmod(join(root, "open", "ro.txt"), 0o444);
      await chmod(join(root, "open", "ro2.txt"), 0o444);
      await chmod(join(root, "open", "mine.txt"), 0o666);
      await chmod(join(root, "open"), 0o777);
      await chmod(join(root, "sticky", "s.txt"), 0o666);
      await chmod(join(root, "sticky"), 0o1777);
      const before = snapshot(root);
      const run = runAsNobody(`
        import { Workspace, FreshfsError } from "ENTRY";
        const cases = ${JSON.stringify(NOBODY_CASES)};
        const out = [];
        for (const c of cases) {
          const ws = new Workspace({ roots: ${JSON.stringify(root)}, policy: c.policy });
          for (const file of c.readFirst ?? []) await ws.read({ file_path: file });
          try {
            const result = await ws[c.tool](c.args);
            out.push({ name: c.name, outcome: "ok", text: result.text });
          } catch (error) {
            out.push({
              name: c.name,
              outcome: error instanceof FreshfsError ? error.code : "not a FreshfsError: " + error,
              text: String(error.message),
            });
          }
        }
        console.log(JSON.stringify(out));
      `);
      expect(run.status, run.stderr).toBe(0);
      const outcomes = JSON.parse(run.stdout) as { name: string; outcome: string; text: string }[];
      expect(outcomes.map((o) => o.name)).toEqual(NOBODY_CASES.map((c) => c.name));
      const allowed = new Set<string>();
      NOBODY_CASES.forEach((c, i) => {
        const got = outcomes[i] as { outcome: string; text: string };
        expect
          .soft(c.expect, `${c.name}: ${got.outcome} ${got.text.slice(0, 200)}`)
          .toContain(got.outcome);
        if (got.outcome === "ok" && c.expect.includes("ok")) {
          for (const path of c.touches ?? []) allowed.add(path);
        }
      });
      // The whole-root grep says what it skipped.
      const grep = outcomes.find((o) => o.name === "grep the whole root");
      expect.soft(grep?.text).toContain("unreadable");
      const after = snapshot(root);
      const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
        (key) => before[key] !== after[key] && !allowed.has(key),
      );
      expect(changed, "refused calls changed these").toEqual([]);
    },
  );
});

const VANISH_ROUNDS = 5;

/**
 * Calls on `d/f.txt` (read in full first), or searches of `d/`, with the file (or `d/`) removed
 * a few event-loop turns after the call starts. `settle` checks the tree against the outcome.
 */
const VANISHING: readonly (readonly [
  tool: ToolName,
  args: Record<string, unknown>,
  removes: "file" | "dir",
  allowed: readonly Outcome[],
])[] = [
  ["read", { file_path: "d/f.txt" }, "file", ["ok", "NOT_FOUND"]],
  ["write", { file_path: "d/f.txt", content: "new\n" }, "file", ["ok", "STALE", "NOT_FOUND"]],
  ["write", { file_path: "d/f.txt", content: "new\n" }, "dir", ["ok", "STALE", "NOT_FOUND"]],
  [
    "edit",
    { file_path: "d/f.txt", old_string: "alpha", new_string: "b", replace_all: true },
    "file",
    ["ok", "STALE", "NOT_FOUND"],
  ],
  [
    "multiEdit",
    { file_path: "d/f.txt", edits: [{ old_string: "alpha", new_string: "b", replace_all: true }] },
    "file",
    ["ok", "STALE", "NOT_FOUND"],
  ],
  ["delete", { file_path: "d/f.txt" }, "file", ["ok", "STALE", "NOT_FOUND"]],
  ["rename", { from: "d/f.txt", to: "e/f.txt" }, "file", ["ok", "NOT_FOUND"]],
  ["rename", { from: "d/f.txt", to: "e/f.txt" }, "dir", ["ok", "NOT_FOUND"]],
  ["glob", { pattern: "**/*.txt", path: "d" }, "dir", ["ok", "NOT_FOUND"]],
  ["grep", { pattern: "alpha", path: "d", output_mode: "content" }, "dir", ["ok", "NOT_FOUND"]],
  ["grep", { pattern: "alpha", path: "d/f.txt" }, "file", ["ok", "NOT_FOUND"]],
  ["find", { query: "g1", path: "d" }, "dir", ["ok", "NOT_FOUND"]],
];

const ORIGINAL = "alpha\n".repeat(2000);
/** What each mutation leaves in d/f.txt when it goes through. */
const WRITTEN: Partial<Record<ToolName, string>> = {
  write: "new\n",
  edit: "b\n".repeat(2000),
  multiEdit: "b\n".repeat(2000),
};

function turns(count: number): Promise<void> {
  return new Promise((done) => {
    let left = count;
    const next = () => (left-- <= 0 ? done() : setImmediate(next));
    next();
  });
}

describe("a path that vanishes mid-operation", () => {
  it.each(VANISHING.map((v) => [`${v[0]} (${v[2]} removed)`, ...v] as const))(
    "%s: a typed error or a correct result, every time",
    async (_title, tool, args, removes, allowed) => {
      const outcomes = new Set<string>();
      for (let round = 0; round < VANISH_ROUNDS; round++) {
        const root = await tempTree({
          "d/f.txt": ORIGINAL,
          "d/g1.txt": "alpha\n",
          "d/g2.txt": "x\n",
        });
        const ws = new Workspace({ roots: root });
        await ws.read({ file_path: "d/f.txt" });
        const pending = call(ws, tool, args).then(
          (result) => ({ result, error: undefined }),
          (error: unknown) => ({ result: undefined, error }),
        );
        await turns(round);
        // Retried: the write under test may put its temp file in `d` while rm empties it.
        await rm(join(root, removes === "dir" ? "d" : "d/f.txt"), {
          recursive: true,
          force: true,
          maxRetries: 5,
        });
        const { result, error } = await pending;
        const outcome =
          error === undefined ? "ok" : error instanceof FreshfsError ? error.code : String(error);
        outcomes.add(outcome);
        expect(allowed, `round ${round}: ${String(error)}`).toContain(outcome);
        const f = join(root, "d", "f.txt");
        if (tool === "read" && outcome === "ok") {
          expect((result as { lines: string[] }).lines).toHaveLength(2000);
        }
        if (["write", "edit", "multiEdit", "delete"].includes(tool)) {
          // The file was removed: a refused call must not bring it back; a write that went
          // through before the removal is gone with it, one after it stands whole.
          if (outcome !== "ok" || tool === "delete") expect(exists(f)).toBe(false);
          else if (exists(f)) expect(await readFile(f, "utf8")).toBe(WRITTEN[tool]);
        }
        if (tool === "rename") {
          const moved = join(root, "e", "f.txt");
          if (outcome === "ok") expect(await readFile(moved, "utf8")).toBe(ORIGINAL);
          else expect(exists(moved)).toBe(false);
        }
        // No temp file of an abandoned write is left in sight.
        if (exists(join(root, "d"))) {
          expect(readdirSync(join(root, "d")).filter((n) => n.includes(".freshfs-"))).toEqual([]);
        }
      }
      expect(outcomes.size).toBeGreaterThan(0);
    },
  );

  it("a file replaced by a directory mid-call is refused with a typed error", async () => {
    for (let round = 0; round < VANISH_ROUNDS; round++) {
      const root = await tempTree({ "d/f.txt": ORIGINAL });
      const ws = new Workspace({ roots: root });
      await ws.read({ file_path: "d/f.txt" });
      const pending = ws
        .edit({ file_path: "d/f.txt", old_string: "alpha", new_string: "b", replace_all: true })
        .then(
          () => "ok",
          (error: unknown) => (error instanceof FreshfsError ? error.code : String(error)),
        );
      await turns(round);
      await rm(join(root, "d", "f.txt"));
      await mkdir(join(root, "d", "f.txt"));
      const outcome = await pending;
      expect(["ok", "STALE", "NOT_FOUND", "NOT_A_FILE"]).toContain(outcome);
      // Whenever the edit landed, the directory made after it is what stays.
      expect(statSync(join(root, "d", "f.txt")).isDirectory()).toBe(true);
    }
  });
});

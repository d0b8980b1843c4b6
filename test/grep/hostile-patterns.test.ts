/**
 * Hostile patterns, the fast cases: pathological regexes in grep, globs made
 * of thousands of braces, a .gitignore of 100,000 lines, and the MCP server answering another
 * request while a pathological grep runs. Every hostile operation must end in bounded time with
 * a clear error or a result that says it is incomplete, and the event loop must keep turning
 * meanwhile. Operations that could block the event loop for minutes run in a child process
 * (the built dist) behind a hang guard, so a regression fails the test instead of hanging it.
 * The long versions, with timings, are `npm run stress -- hostile`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type FreshfsError,
  forceRescan,
  type GrepToolResult,
  glob,
  grep,
  invalidateFsScanCache,
  Workspace,
} from "../../src/index.js";
import { createFreshfsServer } from "../../src/mcp/server.js";
import { runGuarded } from "../helpers/child.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const ENTRY = new URL("../../dist/index.js", import.meta.url);

beforeEach(() => invalidateFsScanCache());

/**
 * Runs `op` with a 10 ms interval ticking beside it; returns its outcome (value or error) and
 * how often the interval ticked while it was pending (a blocked event loop ticks at most once).
 */
async function whileTicking<T>(
  op: () => Promise<T>,
): Promise<{ value?: T; error?: unknown; ticks: number; ms: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  try {
    const value = await op();
    return { value, ticks, ms: performance.now() - started };
  } catch (error) {
    return { error, ticks, ms: performance.now() - started };
  } finally {
    clearInterval(timer);
  }
}

/** What a child process running one Workspace call reported, or that the hang guard killed it. */
type ChildOutcome =
  | { status: "done"; ok: true; total: number; text: string; ms: number }
  | { status: "done"; ok: false; code: string; message: string; ms: number }
  | { status: "killed"; afterMs: number };

/**
 * Calls `new Workspace({ roots: [root] })[tool](params)` in a child process of the built
 * library, killed after `guardMs` (a hang guard: the call should take milliseconds). A call
 * that blocks the event loop would otherwise hang the test runner itself.
 */
async function workspaceCallInChild(
  root: string,
  tool: "glob" | "grep",
  params: Record<string, unknown>,
  guardMs: number,
): Promise<ChildOutcome> {
  if (!existsSync(ENTRY)) throw new Error("dist/ is missing: run `npm run build` first");
  const script = `
    import { Workspace } from ${JSON.stringify(ENTRY.href)};
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const { root, tool, params } = JSON.parse(input);
    const started = performance.now();
    try {
      const result = await new Workspace({ roots: [root] })[tool](params);
      process.stdout.write(JSON.stringify({ ok: true, total: result.total, text: result.text.slice(0, 2000), ms: performance.now() - started }));
    } catch (error) {
      process.stdout.write(JSON.stringify({ ok: false, code: error.code ?? String(error), message: String(error.message), ms: performance.now() - started }));
    }`;
  const run = await runGuarded(script, JSON.stringify({ root, tool, params }), guardMs);
  if (run.killed) return { status: "killed", afterMs: run.ms };
  if (run.stdout === "") throw new Error(`the child printed nothing; stderr: ${run.stderr}`);
  return { status: "done", ...JSON.parse(run.stdout) };
}

/** Whether a Workspace grep result says, in its structured fields, that files went unsearched. */
function flagsIncomplete(result: GrepToolResult, file: string): boolean {
  if (result.partial) return true;
  return result.skipped.some((p) => p.endsWith(file));
}

const A_LINE = `${"a".repeat(100_000)}!\n`;
const X_LINE = `${"x".repeat(5_000)}\n`;
// Every match needs "Expression(", which the line has (so the literal prefilter lets the regex
// run), after a 1 MB run of word characters: \w+ then backtracks from every start in the run.
const WORD_LINE = `${"a".repeat(1024 * 1024)} Expression(\n`;

describe("a pathological regex in grep (library, small budgets)", () => {
  const cases = [
    { pattern: "(?=(a+)+$)", file: "evil.txt", content: A_LINE, good: "aaa\n" },
    { pattern: "(?=(x+x+)+y)", file: "evil.txt", content: X_LINE, good: "xxy\n" },
    {
      pattern: "\\w+Expression\\(",
      file: "evil.txt",
      content: WORD_LINE,
      good: "myExpression(1)\n",
    },
  ];
  for (const { pattern, file, content, good } of cases) {
    it(`${pattern}: the file is abandoned at fileTimeoutMs and named, the rest is searched, the loop turns`, async () => {
      const root = await tempTree({ [file]: content, "good.txt": good });
      const run = await whileTicking(() =>
        grep(pattern, { path: root, syntax: "javascript", fileTimeoutMs: 300, timeoutMs: 10_000 }),
      );
      expect(run.error).toBeUndefined();
      const result = run.value as Awaited<ReturnType<typeof grep>>;
      console.info(`grep ${pattern}: ${run.ms.toFixed(0)} ms, ${run.ticks} ticks of a 10 ms timer`);
      expect(result.lines.map((l) => l.path)).toEqual(["good.txt"]);
      expect(result.skipped.timedOut).toEqual([file]);
      expect(result.partial).toBe(false);
      expect(result.warnings.join("\n")).toContain(`ran longer than 300 ms on 1 file(s)`);
      expect(result.warnings.join("\n")).toContain(file);
      // The regex ran in a worker: the caller's event loop went on turning meanwhile.
      expect(run.ticks).toBeGreaterThanOrEqual(3);
    });
  }

  it("stops at timeoutMs with a result flagged partial when every file is pathological", async () => {
    const tree: Record<string, string> = {};
    for (let i = 0; i < 6; i++) tree[`evil-${i}.txt`] = A_LINE;
    const root = await tempTree(tree);
    const run = await whileTicking(() =>
      grep("(?=(a+)+$)", {
        path: root,
        syntax: "javascript",
        fileTimeoutMs: 60_000,
        timeoutMs: 500,
      }),
    );
    expect(run.error).toBeUndefined();
    const result = run.value as Awaited<ReturnType<typeof grep>>;
    console.info(`grep (a+)+$ x6 files, timeoutMs 500: ${run.ms.toFixed(0)} ms`);
    expect(result.partial).toBe(true);
    expect(result.lines).toEqual([]);
    expect(result.warnings.join("\n")).toContain("stopped after 500 ms: results are partial");
    expect(run.ticks).toBeGreaterThanOrEqual(3);
  });

  it("an abort signal ends a pathological search with ABORTED", async () => {
    const root = await tempTree({ "evil.txt": A_LINE });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = (
      await whileTicking(() =>
        grep("(?=(a+)+$)", {
          path: root,
          syntax: "javascript",
          fileTimeoutMs: 60_000,
          signal: controller.signal,
        }),
      )
    ).error;
    expect((error as FreshfsError).code).toBe("ABORTED");
  });
});

describe("a glob with thousands of braces", () => {
  const names = ["ab".repeat(10), "f1.txt", "f4999.txt", "other.md"];
  const tree = Object.fromEntries(names.map((name) => [name, "x\n"]));

  it("{a,b} x 20: refused at once by glob, Workspace.glob and grep's glob filter", async () => {
    const root = await tempTree(tree);
    const pattern = "{a,b}".repeat(20);
    // More brace groups than glob takes (16): picomatch's regex for such patterns backtracks
    // exponentially on long names ({?,?} x 40 never ended), so glob refuses them outright.
    const lib = await whileTicking(() => glob(pattern, { path: root }));
    expect(lib.error).toMatchObject({ code: "INVALID_PATTERN" });
    const workspace = new Workspace({ roots: [root] });
    expect(await rejectsWith(workspace.glob({ pattern }), "INVALID_PATTERN")).toContain(
      "brace groups",
    );
    const refusal = await rejectsWith(
      workspace.grep({ pattern: "x", glob: pattern }),
      "INVALID_PATTERN",
    );
    expect(refusal).toContain("expands to more than 1024 patterns");
  });

  it("grep's refusal of a brace bomb quotes the glob as the caller wrote it", async () => {
    const root = await tempTree(tree);
    const pattern = "{a,b}".repeat(20);
    const refusal = await rejectsWith(
      new Workspace({ roots: [root] }).grep({ pattern: "x", glob: pattern }),
      "INVALID_PATTERN",
    );
    // The message names a half-expanded glob ("aaaaaaaaa{a,b}…"), which the model never wrote.
    expect(refusal).toContain(`The glob "${pattern.slice(0, 30)}`);
    expect(refusal).not.toContain('"aaaa');
  });

  it("13,000 {a,b} groups (a 65 KB pattern): refused with INVALID_PATTERN, not a raw SyntaxError", async () => {
    const root = await tempTree(tree);
    const pattern = "{a,b}".repeat(13_000);
    // picomatch builds (a|b) x 13,000; V8 compiles it at the first test, outside glob's
    // try/catch around the matcher's construction, and throws "Stack overflow".
    const lib = await whileTicking(() => glob(pattern, { path: root }));
    expect(lib.error).toBeDefined();
    expect((lib.error as FreshfsError).code, String(lib.error).slice(0, 120)).toBe(
      "INVALID_PATTERN",
    );
    await rejectsWith(new Workspace({ roots: [root] }).glob({ pattern }), "INVALID_PATTERN");
  });

  it("5,000 comma alternatives: refused at once by glob, Workspace.glob and grep's glob filter", async () => {
    const root = await tempTree(tree);
    const pattern = `{${Array.from({ length: 5000 }, (_, i) => `f${i}`).join(",")}}.txt`;
    // Longer than glob takes (1,024 characters).
    await rejectsWith(glob(pattern, { path: root }), "INVALID_PATTERN");
    const workspace = new Workspace({ roots: [root] });
    await rejectsWith(workspace.glob({ pattern }), "INVALID_PATTERN");
    await rejectsWith(workspace.grep({ pattern: "x", glob: pattern }), "INVALID_PATTERN");
  });
});

/** A deterministic realistic .gitignore of `count` lines, some of which hit the tree below. */
function bigGitignore(count: number): string {
  const lines: string[] = ["# generated"];
  for (let i = 0; lines.length < count; i++) {
    switch (i % 10) {
      case 0:
      case 1:
        lines.push(`generated-${i}.ts`); // literal names
        break;
      case 2:
        lines.push(`*.x${i}`); // *.ext
        break;
      case 3:
        lines.push(`out-${i}/`); // dir/
        break;
      case 4:
        lines.push(`!keep-${i}.log`); // negations
        break;
      case 5:
        lines.push(`**/cache-${i}/**`); // ** patterns
        break;
      case 6:
        lines.push(`src/**/gen-${i}.js`);
        break;
      case 7:
        lines.push(`/build-${i}`); // anchored
        break;
      case 8:
        lines.push(`docs/*-${i}.md`);
        break;
      default:
        lines.push(`tmp-${i}-*.bak`);
    }
  }
  // Rules that decide files in the tree, early and late in the file.
  lines.splice(10, 0, "*.log", "out-3/");
  lines.push("!keep-4.log", "**/cache-5/**", "src/**/gen-6.js", "/build-7", "docs/*-8.md");
  lines.push("generated-0.ts", "tmp-9-*.bak", "*.x2");
  return `${lines.join("\n")}\n`;
}

const GITIGNORED_TREE = [
  "a.ts",
  "b.log",
  "keep-4.log",
  "generated-0.ts",
  "src/generated-0.ts",
  "src/x/gen-6.js",
  "src/x/gen-16.js",
  "out-3/f.txt",
  "deep/out-3/g.txt",
  "out-13/h.txt",
  "lib/cache-5/z.ts",
  "lib/cache-15/z.ts",
  "docs/a-8.md",
  "docs/b-18.md",
  "docs/sub/c-8.md",
  "build-7/q.ts",
  "src/build-7/q.ts",
  "tmp-9-1.bak",
  "tmp-19-1.bak",
  "z.x2",
  "z.x12",
  ...Array.from(
    { length: 60 },
    (_, i) => `m/n${i % 4}/file${i}.${["ts", "log", "md", "x2"][i % 4]}`,
  ),
];

describe("a .gitignore with 100,000 lines", () => {
  it("a walk finishes (30 s hang guard) and lists what git ls-files -co --exclude-standard lists", async () => {
    const root = await tempTree({ ".gitignore": bigGitignore(100_000) });
    const home = await tempTree();
    const env = isolatedGitEnv(home);
    execFileSync("git", ["init", "-q"], { cwd: root, env });
    for (const path of GITIGNORED_TREE) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), "x\n");
    }
    const saved = process.env;
    process.env = env;
    let walk: Awaited<ReturnType<typeof whileTicking<Awaited<ReturnType<typeof forceRescan>>>>>;
    let tool: GrepToolResult | undefined;
    try {
      walk = await whileTicking(() => forceRescan(root, { includeHidden: true }));
      tool = await new Workspace({ roots: [root] }).grep({ pattern: "x", head_limit: 0 });
    } finally {
      process.env = saved;
    }
    expect(walk.error).toBeUndefined();
    const theirs = execFileSync(
      "git",
      ["-c", "core.quotePath=false", "ls-files", "-z", "-co", "--exclude-standard"],
      { cwd: root, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    )
      .split("\0")
      .filter(Boolean)
      .sort();
    const listed = (walk.value?.entries ?? [])
      .filter((entry) => entry.type !== "dir")
      .map((entry) => entry.path)
      .sort();
    console.info(
      `100,000-line .gitignore: walk ${walk.ms.toFixed(0)} ms (${walk.ticks} ticks of a 10 ms timer), git lists ${theirs.length} of ${GITIGNORED_TREE.length + 1} files`,
    );
    expect(walk.ms, "hang guard").toBeLessThan(30_000);
    expect({
      missing: theirs.filter((path) => !listed.includes(path)),
      extra: listed.filter((path) => !theirs.includes(path)),
    }).toEqual({ missing: [], extra: [] });
    // The rules decide: some of the tree is ignored, some re-included.
    expect(theirs.length).toBeLessThan(GITIGNORED_TREE.length);
    expect(theirs).toContain("keep-4.log");
    expect(theirs).not.toContain("b.log");
    // grep over the same tree (every file holds an x) sees exactly git's files.
    expect([...(tool?.files ?? [])].sort()).toEqual(theirs);
    expect(walk.value?.warnings).toEqual([]);
  });
});

// Cases that take seconds (the Workspace's default per-file regex budget is 5 s; the hang
// guards 10 s) run side by side, each in its own temp tree kept for the file.
describe.concurrent("hostile cases that take seconds, side by side", () => {
  describe("a pathological regex through the Workspace (its default budgets)", () => {
    it("answers within its per-file budget, says in the text and in the structured result that a file went unsearched", async ({
      expect,
    }) => {
      const root = await tempTree(
        { "evil.txt": A_LINE, "good.txt": "aaa\n" },
        { lifetime: "file" },
      );
      const workspace = new Workspace({ roots: [root] });
      const run = await whileTicking(() =>
        workspace.grep({ pattern: "(?=(a+)+$)", syntax: "javascript", output_mode: "content" }),
      );
      expect(run.error).toBeUndefined();
      const result = run.value as GrepToolResult;
      console.info(`Workspace.grep (a+)+$: ${run.ms.toFixed(0)} ms, ${run.ticks} ticks`);
      expect(result.lines.map((l) => l.path)).toEqual(["good.txt"]);
      expect(result.text).toContain("good.txt:1:aaa");
      expect(result.text).toMatch(/took too long on: evil\.txt/);
      expect(run.ticks).toBeGreaterThanOrEqual(3);
      // A program (or an MCP client reading structuredContent) must be able to tell that this
      // answer is incomplete: `partial: false` and no list of skipped files claims a full search.
      expect(
        flagsIncomplete(result, "evil.txt"),
        `structured result claims a complete search: ${JSON.stringify({ ...result, text: undefined })}`,
      ).toBe(true);
    });
  });

  // These would block the event loop for minutes if they regressed (picomatch's regexes
  // run on the caller's thread): they run in a child process behind a 10 s hang guard. Each
  // should take milliseconds, refused or answered.
  describe("globs of thousands of braces, in a child process behind a hang guard", () => {
    it("{?,?} x 40 over a tree with a long file name is refused or answered, never hangs", async ({
      expect,
    }) => {
      const root = await tempTree(
        { "a-long-file-name-of-more-than-forty-characters.ts": "x\n" },
        { lifetime: "file" },
      );
      const outcome = await workspaceCallInChild(
        root,
        "glob",
        { pattern: "{?,?}".repeat(40) },
        10_000,
      );
      // picomatch compiles it to ([^/]|[^/]) x 40: the regex backtracks 2^40 times on any name
      // longer than 40 characters, on the caller's thread.
      expect(outcome.status, "Workspace.glob was still running after 10 s and was killed").toBe(
        "done",
      );
      if (outcome.status === "done" && !outcome.ok) expect(outcome.code).toBe("INVALID_PATTERN");
    });

    it("30,000 nested braces are refused or answered without holding the process for seconds", async ({
      expect,
    }) => {
      const root = await tempTree({ "a.txt": "x\n" }, { lifetime: "file" });
      const outcome = await workspaceCallInChild(
        root,
        "glob",
        { pattern: "{".repeat(30_000) },
        10_000,
      );
      expect(outcome.status, "Workspace.glob was still running after 10 s and was killed").toBe(
        "done",
      );
      if (outcome.status === "done" && !outcome.ok) expect(outcome.code).toBe("INVALID_PATTERN");
    });

    it("a brace bomb as grep's glob filter is refused at once", async ({ expect }) => {
      const root = await tempTree({ "a.txt": "x\n" }, { lifetime: "file" });
      const outcome = await workspaceCallInChild(
        root,
        "grep",
        { pattern: "x", glob: `${"{a,b,c,d}".repeat(12)}` },
        10_000,
      );
      expect(outcome).toMatchObject({ status: "done", ok: false, code: "INVALID_PATTERN" });
    });
  });

  describe("the MCP server while a pathological grep runs", () => {
    function textOf(result: CallToolResult): string {
      return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
    }

    async function connect(root: string): Promise<Client> {
      const { server } = createFreshfsServer({ roots: [root] });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const client = new Client({ name: "freshfs-hostile", version: "1.0.0" });
      await client.connect(clientSide);
      return client;
    }

    async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
      const started = performance.now();
      const value = await promise;
      return { value, ms: performance.now() - started };
    }

    // The SDK's Server serves one transport, so "the same server" is the same server process:
    // one event loop, one grep worker pool, one scan cache. The read comes both on the grep's own
    // connection and from a second client of a second server over the same root in this process.
    it("answers a read on the grep's connection and from a second client before the grep ends", async ({
      expect,
      onTestFinished,
    }) => {
      const root = await tempTree(
        { "evil.txt": A_LINE, "notes.txt": "hello\n" },
        { lifetime: "file" },
      );
      const first = await connect(root);
      const second = await connect(root);
      onTestFinished(async () => {
        await first.close();
        await second.close();
      });
      let grepEnded: number | undefined;
      const started = performance.now();
      const grepping = first
        .callTool({ name: "grep", arguments: { pattern: "(?=(a+)+$)", syntax: "javascript" } })
        .then((result) => {
          grepEnded = performance.now();
          return result as CallToolResult;
        });
      // Let the grep reach the regex (the worker reads the file in well under this).
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [same, other] = await Promise.all([
        timed(first.callTool({ name: "read", arguments: { file_path: "notes.txt" } })),
        timed(second.callTool({ name: "read", arguments: { file_path: "notes.txt" } })),
      ]);
      const answeredBeforeGrep = grepEnded === undefined;
      const grepResult = await grepping;
      console.info(
        `MCP read during a pathological grep: same client ${same.ms.toFixed(1)} ms, second client ${other.ms.toFixed(1)} ms; grep took ${((grepEnded ?? 0) - started).toFixed(0)} ms`,
      );
      expect(textOf(same.value as CallToolResult)).toBe("     1\thello");
      expect(textOf(other.value as CallToolResult)).toBe("     1\thello");
      expect(answeredBeforeGrep, "the reads waited for the grep").toBe(true);
      expect(grepResult.isError, textOf(grepResult)).toBeFalsy();
      expect(textOf(grepResult)).toContain("evil.txt");
      expect(textOf(grepResult)).toMatch(/took too long|ran longer than/);
    });
  });
});

/**
 * The search tools of `Workspace` (glob, grep, find) with their agent defaults: result caps and
 * paging notices, paths relative to the root, grep's output modes and rg's line shapes, the
 * aliases and stringly-typed arguments models send, and the errors a model can act on.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  GLOB_DEFAULT_LIMIT,
  type GrepParams,
  invalidateFsScanCache,
  Workspace,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { type Tree, tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const hasRg = spawnSync("rg", ["--version"]).status === 0;
if (!hasRg) {
  console.warn(
    "SKIPPED: the grep context comparison needs ripgrep (`apt-get install -y ripgrep`).",
  );
}

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

/** A temporary tree that is a git repository, so its .gitignore counts. */
async function repoTree(tree: Tree): Promise<string> {
  const root = await tempTree(tree);
  execFileSync("git", ["init", "-q", root], { env: isolatedGitEnv(root) });
  return root;
}

/** Sets a file's modification time to `secondsAgo` seconds before now. */
async function age(root: string, path: string, secondsAgo: number): Promise<void> {
  const when = new Date(Date.now() - secondsAgo * 1000);
  await utimes(join(root, path), when, when);
}

const SOURCE = {
  "src/a.ts": "one\nalpha\ntwo\nthree\nfour\nfive\nalpha beta\nsix\nAlpha\n",
  "src/lib/b.js": "alpha\n",
  "README.md": "alpha\n",
  "notes.txt": "nothing here\n",
};

describe("glob", () => {
  it("lists files relative to the root, newest first", async () => {
    const root = await tempTree({ "a.ts": "", "b.ts": "", "src/c.ts": "", "d.md": "" });
    await age(root, "a.ts", 300);
    await age(root, "b.ts", 10);
    await age(root, "src/c.ts", 100);
    await age(root, "d.md", 1);
    const result = await new Workspace({ roots: root }).glob({ pattern: "**/*.ts" });
    expect(result.files).toEqual(["b.ts", "src/c.ts", "a.ts"]);
    expect(result.text).toBe("b.ts\nsrc/c.ts\na.ts");
    expect(result.total).toBe(3);
    expect(result.truncated).toBe(false);
  });

  it("caps results at 100 by default and says how to get the rest", async () => {
    const tree = Object.fromEntries(
      Array.from({ length: 105 }, (_, i) => [`f${String(i).padStart(3, "0")}.txt`, ""]),
    );
    const root = await tempTree(tree);
    const ws = new Workspace({ roots: root });
    const first = await ws.glob({ pattern: "*.txt" });
    expect(GLOB_DEFAULT_LIMIT).toBe(100);
    expect(first.files).toHaveLength(100);
    expect(first.total).toBe(105);
    expect(first.truncated).toBe(true);
    expect(first.text).toContain("offset=100");
    expect(first.text.split("\n").slice(0, 100)).toEqual(first.files);

    const rest = await ws.glob({ pattern: "*.txt", offset: 100 });
    expect(rest.files).toHaveLength(5);
    expect(rest.truncated).toBe(false);
    expect(rest.text).not.toContain("offset=");
    expect(new Set([...first.files, ...rest.files]).size).toBe(105);
  });

  it("pages with limit and offset, head_limit being an alias of limit", async () => {
    const tree = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}.txt`, ""]));
    const root = await tempTree(tree);
    const ws = new Workspace({ roots: root });
    const all = (await ws.glob({ pattern: "*.txt" })).files;
    expect(all).toHaveLength(30);

    const page = await ws.glob({ pattern: "*.txt", limit: 10, offset: 20 });
    expect(page.files).toEqual(all.slice(20, 30));
    expect(page.truncated).toBe(false);

    const middle = await ws.glob({ pattern: "*.txt", head_limit: 10, offset: 10 });
    expect(middle.files).toEqual(all.slice(10, 20));
    expect(middle.truncated).toBe(true);
    expect(middle.text).toContain("offset=20");

    const strings = await ws.glob({ pattern: "*.txt", limit: "5", offset: "3" });
    expect(strings.files).toEqual(all.slice(3, 8));
  });

  it("searches the `path` given, still naming files relative to the root", async () => {
    const root = await tempTree({
      "top.ts": "",
      "src/a.ts": "",
      "src/lib/b.ts": "",
      "other/c.ts": "",
    });
    const ws = new Workspace({ roots: root });
    const relative = await ws.glob({ pattern: "**/*.ts", path: "src" });
    expect([...relative.files].sort()).toEqual(["src/a.ts", "src/lib/b.ts"]);
    const absolute = await ws.glob({ pattern: "*.ts", path: join(root, "src", "lib") });
    expect(absolute.files).toEqual(["src/lib/b.ts"]);
    expect(absolute.text).toBe("src/lib/b.ts");
  });

  it("leaves out gitignored files", async () => {
    const root = await repoTree({
      ".gitignore": "build/\n*.log\n",
      "src/a.ts": "",
      "build/out.ts": "",
      "debug.log": "",
      "src/trace.log": "",
    });
    const result = await new Workspace({ roots: root }).glob({ pattern: "**/*" });
    expect([...result.files].sort()).toEqual(["src/a.ts"]);
    const logs = await new Workspace({ roots: root }).glob({ pattern: "**/*.log" });
    expect(logs.files).toEqual([]);
  });

  it("says when nothing matches", async () => {
    const root = await tempTree({ "a.ts": "" });
    const result = await new Workspace({ roots: root }).glob({ pattern: "**/*.zig" });
    expect(result.files).toEqual([]);
    expect(result.total).toBe(0);
    expect(result.truncated).toBe(false);
    expect(result.text).toBe("No files match **/*.zig.");
  });

  it("refuses a pattern it cannot match with INVALID_PATTERN", async () => {
    const root = await tempTree({ "a.ts": "" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.glob({ pattern: "*a*a*a*a*c" }), "INVALID_PATTERN");
    expect(message).toContain("*a*a*a*a*c");
  });

  it("refuses a `path` outside the workspace with OUTSIDE_ROOT", async () => {
    const root = await tempTree({ "a.ts": "" });
    const elsewhere = await tempTree({ "secret.ts": "" });
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.glob({ pattern: "*.ts", path: elsewhere }), "OUTSIDE_ROOT");
    const message = await rejectsWith(ws.glob({ pattern: "*.ts", path: ".." }), "OUTSIDE_ROOT");
    expect(message).toContain("outside the workspace");
  });
});

describe("grep", () => {
  it("lists the files with matches by default", async () => {
    const root = await tempTree(SOURCE);
    const result = await new Workspace({ roots: root }).grep({ pattern: "alpha" });
    expect(result.mode).toBe("files_with_matches");
    expect([...result.files].sort()).toEqual(["README.md", "src/a.ts", "src/lib/b.js"]);
    expect(result.text.split("\n").sort()).toEqual(["README.md", "src/a.ts", "src/lib/b.js"]);
    expect(result.lines).toEqual([]);
  });

  it("renders content as path:line:text", async () => {
    const root = await tempTree(SOURCE);
    const result = await new Workspace({ roots: root }).grep({
      pattern: "alpha",
      path: "src/a.ts",
      output_mode: "content",
    });
    expect(result.text).toBe("src/a.ts:2:alpha\nsrc/a.ts:7:alpha beta");
    expect(result.lines).toEqual([
      { path: "src/a.ts", line: 2, text: "alpha", match: true },
      { path: "src/a.ts", line: 7, text: "alpha beta", match: true },
    ]);
  });

  it("renders context lines as path-line-text, with -- between groups that do not touch", async () => {
    const root = await tempTree(SOURCE);
    const result = await new Workspace({ roots: root }).grep({
      pattern: "alpha",
      path: "src",
      output_mode: "content",
      "-C": 1,
    });
    expect(result.text).toBe(
      [
        "src/a.ts-1-one",
        "src/a.ts:2:alpha",
        "src/a.ts-3-two",
        "--",
        "src/a.ts-6-five",
        "src/a.ts:7:alpha beta",
        "src/a.ts-8-six",
        "--",
        "src/lib/b.js:1:alpha",
      ].join("\n"),
    );
  });

  it.skipIf(!hasRg)(
    "prints context exactly as `rg --no-heading --with-filename` does",
    async () => {
      const root = await tempTree({
        "a.txt": "hit\nx\nhit\nx\nx\nx\nhit\nx\n",
        "b/c.txt": "x\nx\nx\nhit\n",
        "b/d.txt": "hit\nhit\nx\nx\nx\nx\nx\nx\nhit\n",
      });
      const ws = new Workspace({ roots: root });
      const variants: { ours: GrepParams; rg: string[] }[] = [
        { ours: { "-C": 1 }, rg: ["--line-number", "-C1"] },
        { ours: { "-C": 2 }, rg: ["--line-number", "-C2"] },
        { ours: { "-A": 1 }, rg: ["--line-number", "-A1"] },
        { ours: { "-B": 2 }, rg: ["--line-number", "-B2"] },
        { ours: { "-C": 1, "-n": false }, rg: ["-C1"] },
        { ours: {}, rg: ["--line-number"] },
      ];
      for (const variant of variants) {
        const expected = execFileSync(
          "rg",
          [
            "--no-config",
            "--no-heading",
            "--with-filename",
            "--sort",
            "path",
            ...variant.rg,
            "hit",
          ],
          // stdin closed: rg reads a piped stdin instead of the directory.
          { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
        ).trimEnd();
        const ours = await ws.grep({ pattern: "hit", output_mode: "content", ...variant.ours });
        expect(ours.text, JSON.stringify(variant.ours)).toBe(expected);
      }
    },
  );

  it('drops line numbers with "-n": false', async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const result = await ws.grep({
      pattern: "alpha",
      path: "src/a.ts",
      output_mode: "content",
      "-n": false,
    });
    expect(result.text).toBe("src/a.ts:alpha\nsrc/a.ts:alpha beta");
    const context = await ws.grep({
      pattern: "beta",
      path: "src/a.ts",
      output_mode: "content",
      "-n": "false",
      "-C": "1",
    });
    expect(context.text).toBe("src/a.ts-five\nsrc/a.ts:alpha beta\nsrc/a.ts-six");
  });

  it('ignores case with "-i" or its alias ignoreCase', async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const base = { pattern: "ALPHA", path: "src/a.ts", output_mode: "content" } as const;
    expect((await ws.grep(base)).text).toBe("No matches for ALPHA.");
    const expected = "src/a.ts:2:alpha\nsrc/a.ts:7:alpha beta\nsrc/a.ts:9:Alpha";
    expect((await ws.grep({ ...base, "-i": true })).text).toBe(expected);
    expect((await ws.grep({ ...base, ignoreCase: true })).text).toBe(expected);
    expect((await ws.grep({ ...base, "-i": "true" })).text).toBe(expected);
  });

  it("filters files by glob, or its alias include", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    expect((await ws.grep({ pattern: "alpha", glob: "*.md" })).files).toEqual(["README.md"]);
    expect([...(await ws.grep({ pattern: "alpha", include: "*.{ts,js}" })).files].sort()).toEqual([
      "src/a.ts",
      "src/lib/b.js",
    ]);
    expect((await ws.grep({ pattern: "alpha", glob: "!*.{ts,md}" })).files).toEqual([
      "src/lib/b.js",
    ]);
  });

  it("filters files by type", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    expect((await ws.grep({ pattern: "alpha", type: "js" })).files).toEqual(["src/lib/b.js"]);
    expect((await ws.grep({ pattern: "alpha", type: "ts" })).files).toEqual(["src/a.ts"]);
    expect((await ws.grep({ pattern: "alpha", type: "md" })).files).toEqual(["README.md"]);
  });

  it("counts matching lines per file as path:count", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const result = await ws.grep({ pattern: "alpha", output_mode: "count" });
    expect([...result.counts].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: "README.md", count: 1 },
      { path: "src/a.ts", count: 2 },
      { path: "src/lib/b.js", count: 1 },
    ]);
    expect(result.text.split("\n").sort()).toEqual(["README.md:1", "src/a.ts:2", "src/lib/b.js:1"]);
  });

  it("pages content with head_limit and offset, with a notice naming the next offset", async () => {
    const lines = Array.from({ length: 7 }, (_, i) => `hit ${i + 1}`).join("\n");
    const root = await tempTree({ "f.txt": `${lines}\n` });
    const ws = new Workspace({ roots: root });
    const all = (await ws.grep({ pattern: "hit", output_mode: "content" })).lines;
    expect(all.map((l) => l.line)).toEqual([1, 2, 3, 4, 5, 6, 7]);

    const first = await ws.grep({ pattern: "hit", output_mode: "content", head_limit: 3 });
    expect(first.lines.map((l) => l.line)).toEqual([1, 2, 3]);
    expect(first.truncated).toBe(true);
    expect(first.text).toContain("f.txt:3:hit 3");
    expect(first.text).toContain("offset=3");

    const second = await ws.grep({
      pattern: "hit",
      output_mode: "content",
      head_limit: "3",
      offset: "3",
    });
    expect(second.lines.map((l) => l.line)).toEqual([4, 5, 6]);
    expect(second.text).toContain("offset=6");

    const last = await ws.grep({
      pattern: "hit",
      output_mode: "content",
      head_limit: 3,
      offset: 6,
    });
    expect(last.lines.map((l) => l.line)).toEqual([7]);
    expect(last.truncated).toBe(false);
    expect(last.text).toBe("f.txt:7:hit 7");
  });

  it("pages the file list too", async () => {
    const tree = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}.txt`, "hit\n"]));
    const root = await tempTree(tree);
    const ws = new Workspace({ roots: root });
    const all = (await ws.grep({ pattern: "hit" })).files;
    expect(all).toHaveLength(5);
    const page = await ws.grep({ pattern: "hit", head_limit: 2, offset: 2 });
    expect(page.files).toEqual(all.slice(2, 4));
    expect(page.truncated).toBe(true);
    expect(page.text).toContain("offset=4");
  });

  it("matches across lines with multiline", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const params = { pattern: "alpha\\ntwo", output_mode: "content" } as const;
    // Without multiline a line break can never match: refused with the remedy, as rg does.
    expect(await rejectsWith(ws.grep(params), "INVALID_PATTERN")).toContain("multiline");
    const result = await ws.grep({ ...params, multiline: true });
    expect(result.text).toBe("src/a.ts:2:alpha\nsrc/a.ts:3:two");
    expect((await ws.grep({ ...params, multiline: "true" })).text).toBe(result.text);
  });

  it("takes the pattern literally with fixed_strings or its alias literal", async () => {
    const root = await tempTree({ "f.txt": "call a.b(x)\ncall axb(x)\n" });
    const ws = new Workspace({ roots: root });
    const base = { output_mode: "content" } as const;
    expect((await ws.grep({ ...base, pattern: "a.b" })).lines.map((l) => l.line)).toEqual([1, 2]);
    expect((await ws.grep({ ...base, pattern: "a.b(", fixed_strings: true })).text).toBe(
      "f.txt:1:call a.b(x)",
    );
    expect((await ws.grep({ ...base, pattern: "a.b(", literal: true })).text).toBe(
      "f.txt:1:call a.b(x)",
    );
    expect((await ws.grep({ ...base, pattern: "a.b(", fixed_strings: "true" })).text).toBe(
      "f.txt:1:call a.b(x)",
    );
  });

  it("searches one file when `path` is a file", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    expect((await ws.grep({ pattern: "alpha", path: "src/lib/b.js" })).files).toEqual([
      "src/lib/b.js",
    ]);
    const count = await ws.grep({
      pattern: "alpha",
      path: join(root, "src", "a.ts"),
      output_mode: "count",
    });
    expect(count.text).toBe("src/a.ts:2");
  });

  it("accepts numbers and booleans sent as strings", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const params = { pattern: "ALPHA BETA", path: "src/a.ts", output_mode: "content" } as const;
    const typed = await ws.grep({ ...params, "-C": 2, "-i": true });
    const strings = await ws.grep({ ...params, "-C": "2", "-i": "true" });
    expect(typed.text).toBe(
      [
        "src/a.ts-5-four",
        "src/a.ts-6-five",
        "src/a.ts:7:alpha beta",
        "src/a.ts-8-six",
        "src/a.ts-9-Alpha",
      ].join("\n"),
    );
    expect(strings.text).toBe(typed.text);
  });

  it('ignores context options outside output_mode "content", as Claude Code documents', async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const plain = await ws.grep({ pattern: "alpha" });
    const withContext = await ws.grep({ pattern: "alpha", "-A": 2 });
    expect(withContext.files).toEqual(plain.files);
    expect(withContext.text).toBe(plain.text);
    const counted = await ws.grep({ pattern: "alpha", output_mode: "count", "-C": 1 });
    const countedPlain = await ws.grep({ pattern: "alpha", output_mode: "count" });
    expect(counted.counts).toEqual(countedPlain.counts);
    expect(counted.counts.length).toBeGreaterThan(0);
  });

  it("refuses an invalid regular expression with INVALID_PATTERN", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.grep({ pattern: "foo(" }), "INVALID_PATTERN");
    expect(message).toContain("foo(");
  });

  it("refuses an unknown output_mode with INVALID_ARGUMENT", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    const params = { pattern: "alpha", output_mode: "bogus" } as unknown as GrepParams;
    const message = await rejectsWith(ws.grep(params), "INVALID_ARGUMENT");
    expect(message).toContain("output_mode");
    expect(message).toContain("files_with_matches");
  });

  it("says when nothing matches, in every mode", async () => {
    const root = await tempTree(SOURCE);
    const ws = new Workspace({ roots: root });
    for (const output_mode of ["files_with_matches", "content", "count"] as const) {
      const result = await ws.grep({ pattern: "zebra", output_mode });
      expect(result.text, output_mode).toBe("No matches for zebra.");
      expect(result.total).toBe(0);
      expect(result.truncated).toBe(false);
    }
  });

  it("leaves out gitignored files", async () => {
    const root = await repoTree({
      ".gitignore": "build/\n",
      "src/a.ts": "needle\n",
      "build/a.js": "needle\n",
    });
    const result = await new Workspace({ roots: root }).grep({ pattern: "needle" });
    expect(result.files).toEqual(["src/a.ts"]);
  });

  it("refuses a `path` outside the workspace with OUTSIDE_ROOT", async () => {
    const root = await tempTree(SOURCE);
    const elsewhere = await tempTree({ "secret.txt": "alpha\n" });
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.grep({ pattern: "alpha", path: elsewhere }), "OUTSIDE_ROOT");
    await rejectsWith(
      ws.grep({ pattern: "alpha", path: join(elsewhere, "secret.txt") }),
      "OUTSIDE_ROOT",
    );
  });
});

describe("find", () => {
  const TREE = {
    "src/components/UserProfileCard.tsx": "",
    "src/components/UserList.tsx": "",
    "src/utils/userPrefs.ts": "",
    "src/unpack.c": "",
    "docs/usage.md": "",
  };

  it("ranks the file an abbreviation means first", async () => {
    const root = await tempTree(TREE);
    const result = await new Workspace({ roots: root }).find({ query: "upc" });
    expect(result.matches[0]?.path).toBe("src/components/UserProfileCard.tsx");
    expect(result.matches[0]?.type).toBe("file");
    expect(result.text.split("\n")[0]).toBe("src/components/UserProfileCard.tsx");
  });

  it("shows directories with a trailing slash", async () => {
    const root = await tempTree(TREE);
    const result = await new Workspace({ roots: root }).find({ query: "components" });
    const dir = result.matches.find((m) => m.type === "dir");
    expect(dir?.path).toBe("src/components");
    expect(result.text.split("\n")).toContain("src/components/");
    expect(result.text.split("\n")).not.toContain("src/components");
  });

  it("shows at most `limit` matches and says there are more", async () => {
    const root = await tempTree(TREE);
    const ws = new Workspace({ roots: root });
    const all = await ws.find({ query: "u" });
    expect(all.total).toBeGreaterThan(2);
    const limited = await ws.find({ query: "u", limit: 2 });
    expect(limited.matches).toHaveLength(2);
    expect(limited.matches.map((m) => m.path)).toEqual(all.matches.slice(0, 2).map((m) => m.path));
    expect(limited.truncated).toBe(true);
    expect(limited.text).toContain(`of ${all.total} matches`);
    expect((await ws.find({ query: "u", limit: "2" })).matches).toHaveLength(2);
  });

  it("says when nothing matches", async () => {
    const root = await tempTree(TREE);
    const result = await new Workspace({ roots: root }).find({ query: "qqzz" });
    expect(result.matches).toEqual([]);
    expect(result.truncated).toBe(false);
    expect(result.text).toBe('No files match "qqzz".');
  });
});

describe("several roots", () => {
  it("glob and grep without a path search every root and show absolute paths", async () => {
    const first = await tempTree({ "x.ts": "needle\n", "sub/z.ts": "needle\n" });
    const second = await tempTree({ "y.ts": "needle\n", "w.md": "nothing\n" });
    const ws = new Workspace({ roots: [first, second] });
    const expected = [join(first, "sub", "z.ts"), join(first, "x.ts"), join(second, "y.ts")].sort();

    const globbed = await ws.glob({ pattern: "**/*.ts" });
    expect([...globbed.files].sort()).toEqual(expected);
    expect(globbed.text.split("\n").sort()).toEqual(expected);

    const files = await ws.grep({ pattern: "needle" });
    expect([...files.files].sort()).toEqual(expected);

    const content = await ws.grep({ pattern: "needle", output_mode: "content" });
    expect(content.text.split("\n").sort()).toEqual(expected.map((p) => `${p}:1:needle`));

    const counted = await ws.grep({ pattern: "needle", output_mode: "count" });
    expect(counted.text.split("\n").sort()).toEqual(expected.map((p) => `${p}:1`));
  });

  it("lists the newest files first across roots, not root by root", async () => {
    const first = await tempTree({ "old.ts": "" });
    const second = await tempTree({ "new.ts": "" });
    await age(first, "old.ts", 600);
    await age(second, "new.ts", 5);
    const ws = new Workspace({ roots: [first, second] });
    expect((await ws.glob({ pattern: "*.ts" })).files).toEqual([
      join(second, "new.ts"),
      join(first, "old.ts"),
    ]);
  });

  it("searches only the root a `path` names", async () => {
    const first = await tempTree({ "x.ts": "needle\n" });
    const second = await tempTree({ "y.ts": "needle\n" });
    const ws = new Workspace({ roots: [first, second] });
    expect((await ws.glob({ pattern: "*.ts", path: second })).files).toEqual([
      join(second, "y.ts"),
    ]);
    expect((await ws.grep({ pattern: "needle", path: second })).files).toEqual([
      join(second, "y.ts"),
    ]);
  });
});

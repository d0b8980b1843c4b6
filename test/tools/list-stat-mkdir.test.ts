/**
 * The `list`, `stat` and `mkdir` tools of `Workspace`, on real temporary trees (and real git
 * repositories, and a real second process for changes made behind the session's back): what a
 * listing shows and in which order, how `depth` and `limit` cut it, the ignore rules, `.git`,
 * links, several roots, bad input; the guard's view of a file in `stat`; `mkdir -p` and its
 * confinement; and that every answer reflects the changes made before it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, statSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, symlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  invalidateFsScanCache,
  type ListResult,
  Workspace,
  type WorkspaceOptions,
} from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { createTempRepo, type TempRepo } from "../helpers/git.js";

const repos: TempRepo[] = [];

beforeEach(() => {
  invalidateFsScanCache();
  // Unwatched listings live for a minute: a fresh answer without a watcher can only come from
  // the tools' own invalidation.
  configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 60_000 });
});

afterEach(async () => {
  liveTrees.closeAll();
  configureScanCache(undefined);
  invalidateFsScanCache();
  for (const repo of repos.splice(0)) await repo.remove();
});

function workspace(root: string | string[], options: Partial<WorkspaceOptions> = {}): Workspace {
  return new Workspace({ roots: root, ...options });
}

async function repo(tree: Record<string, string>): Promise<string> {
  const made = await createTempRepo();
  repos.push(made);
  for (const [path, content] of Object.entries(tree)) {
    const full = join(made.dir, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
  }
  return made.dir;
}

/** Runs a CommonJS script in a second node process, synchronously. */
function otherProcess(script: string): void {
  execFileSync(process.execPath, ["-e", script], { stdio: ["ignore", "ignore", "inherit"] });
}

const WHEN = new Date("2021-03-04T05:06:07.000Z");
/** As `list` prints a time: UTC, to the minute. */
const WHEN_TEXT = "2021-03-04 05:06";

/** Sets the modification (and access) time of each path, files and directories. */
async function stamp(root: string, paths: readonly string[], when: Date = WHEN): Promise<void> {
  for (const path of paths) await utimes(join(root, path), when, when);
}

const names = (result: ListResult) => result.entries.map((entry) => entry.name);
const paths = (result: ListResult) => result.entries.map((entry) => entry.path);

describe("list: one directory", () => {
  it("shows the directory's own entries with kind, size and mtime, directories first", async () => {
    const root = await tempTree({
      "zeta.txt": "12345",
      "alpha.md": "a",
      "src/main.ts": "export {};\n",
      "bin/run": "#!/bin/sh\n",
    });
    await stamp(root, ["zeta.txt", "alpha.md", "src/main.ts", "bin/run", "src", "bin"]);
    const result = await workspace(root).list();
    expect(result.path).toBe(".");
    expect(names(result)).toEqual(["bin", "src", "alpha.md", "zeta.txt"]);
    expect(result.entries.map((e) => [e.kind, e.depth, e.size])).toEqual([
      ["dir", 1, undefined],
      ["dir", 1, undefined],
      ["file", 1, 1],
      ["file", 1, 5],
    ]);
    for (const entry of result.entries) expect(entry.mtimeMs).toBe(WHEN.getTime());
    // A directory's entries are counted, not shown, at depth 1.
    expect(result.entries[0]?.hiddenEntries).toBe(1);
    expect(result.total).toBe(4);
    expect(result.truncated).toBe(false);
    expect(result.text).toBe(
      [
        "./",
        "  bin/  (1 entry not shown)",
        "  src/  (1 entry not shown)",
        `  alpha.md  1 B  ${WHEN_TEXT}`,
        `  zeta.txt  5 B  ${WHEN_TEXT}`,
      ].join("\n"),
    );
  });

  it("prints sizes in KiB and MiB", async () => {
    const root = await tempTree({
      "kib.bin": new Uint8Array(1536),
      "mib.bin": new Uint8Array(3 * 1024 * 1024),
    });
    const { text } = await workspace(root).list();
    expect(text).toMatch(/ {2}kib\.bin {2}1\.5 KiB {2}\d{4}-/);
    expect(text).toMatch(/ {2}mib\.bin {2}3\.0 MiB {2}\d{4}-/);
  });

  it("sorts by name, by mtime (newest first) and by size (largest first, directories last)", async () => {
    const root = await tempTree({
      "b.txt": "x".repeat(300),
      "d.txt": "x",
      "a/inner.txt": "",
      "c/inner.txt": "",
      "e.txt": "x".repeat(20),
    });
    await stamp(root, ["b.txt"], new Date("2020-01-01T00:00:00Z"));
    await stamp(root, ["a"], new Date("2024-01-01T00:00:00Z"));
    await stamp(root, ["c"], new Date("2019-01-01T00:00:00Z"));
    await stamp(root, ["d.txt"], new Date("2023-01-01T00:00:00Z"));
    await stamp(root, ["e.txt"], new Date("2022-01-01T00:00:00Z"));
    const ws = workspace(root);
    expect(names(await ws.list())).toEqual(["a", "c", "b.txt", "d.txt", "e.txt"]);
    expect(names(await ws.list({ sort: "kind" }))).toEqual(["a", "c", "b.txt", "d.txt", "e.txt"]);
    expect(names(await ws.list({ sort: "name" }))).toEqual(["a", "b.txt", "c", "d.txt", "e.txt"]);
    const byTime = await ws.list({ sort: "mtime" });
    expect(names(byTime)).toEqual(["a", "d.txt", "e.txt", "b.txt", "c"]);
    // The text is in the same order as the entries.
    expect(byTime.text.split("\n").slice(1)).toEqual([
      "  a/  (1 entry not shown)",
      "  d.txt  1 B  2023-01-01 00:00",
      "  e.txt  20 B  2022-01-01 00:00",
      "  b.txt  300 B  2020-01-01 00:00",
      "  c/  (1 entry not shown)",
    ]);
    expect(names(await ws.list({ sort: "size" }))).toEqual(["b.txt", "e.txt", "d.txt", "a", "c"]);
  });

  it("says (empty) for an empty directory, listed or inside a listing", async () => {
    const root = await tempTree({ "full/x.txt": "x" });
    await mkdir(join(root, "void"));
    await mkdir(join(root, "full", "hollow"));
    const ws = workspace(root);
    const empty = await ws.list({ path: "void" });
    expect(empty.entries).toEqual([]);
    expect(empty.total).toBe(0);
    expect(empty.truncated).toBe(false);
    expect(empty.text).toBe("void/\n  (empty)");
    const top = await ws.list({ depth: 2 });
    expect(top.text).toContain("\n  void/  (empty)");
    expect(top.text).toContain("\n    hollow/  (empty)");
    expect(top.entries.find((e) => e.name === "void")?.hiddenEntries).toBeUndefined();
  });

  it("shows symbolic links with their targets, without following them", async () => {
    const root = await tempTree({ "real/a.txt": "a", "target.txt": "t" });
    await symlink("target.txt", join(root, "file-link"));
    await symlink("real", join(root, "dir-link"));
    await symlink("nowhere", join(root, "dangling"));
    const result = await workspace(root).list({ depth: 2 });
    const links = result.entries.filter((e) => e.kind === "symlink");
    expect(links.map((e) => [e.name, e.target, e.depth])).toEqual([
      ["dangling", "nowhere", 1],
      ["dir-link", "real", 1],
      ["file-link", "target.txt", 1],
    ]);
    expect(result.text).toMatch(/\n {2}file-link -> target\.txt {2}\d{4}-/);
    expect(result.text).toMatch(/\n {2}dir-link -> real {2}\d{4}-/);
    expect(result.text).toMatch(/\n {2}dangling -> nowhere {2}\d{4}-/);
    // A linked directory is not drawn as a directory, nor opened.
    expect(result.text).not.toContain("dir-link/");
    expect(paths(result)).not.toContain("dir-link/a.txt");
    expect(paths(result)).toContain("real/a.txt");
  });

  it("lists each root with no path, and one root's directory by absolute path", async () => {
    const first = await tempTree({ "one.txt": "1" });
    const second = await tempTree({ "two.txt": "2", "sub/three.txt": "3" });
    const ws = workspace([first, second]);
    const all = await ws.list();
    expect(names(all)).toEqual(["one.txt", "sub", "two.txt"]);
    expect(all.total).toBe(3);
    const [head, tail] = all.text.split("\n\n");
    expect(head).toContain("one.txt");
    expect(head).not.toContain("two.txt");
    expect(tail).toContain("two.txt");
    expect(tail).toContain("sub/  (1 entry not shown)");
    const sub = await ws.list({ path: join(second, "sub") });
    expect(names(sub)).toEqual(["three.txt"]);
  });

  it("takes the aliases dir_path and directory, and stringly numbers", async () => {
    const root = await tempTree({ "d/e/f.txt": "f" });
    const ws = workspace(root);
    expect(names(await ws.list({ dir_path: "d" }))).toEqual(["e"]);
    expect(names(await ws.list({ directory: "d", depth: "2" }))).toEqual(["e", "f.txt"]);
  });
});

describe("list: depth and limit", () => {
  async function project(): Promise<string> {
    const root = await tempTree({
      "README.md": "# readme\n",
      "src/main.ts": "main\n",
      "src/lib/util.ts": "util\n",
    });
    await mkdir(join(root, "docs"));
    await stamp(root, ["README.md", "src/main.ts", "src/lib/util.ts"]);
    return root;
  }

  it("draws a tree to depth, indented two spaces a level", async () => {
    const result = await workspace(await project()).list({ depth: 3 });
    expect(result.text).toBe(
      [
        "./",
        "  docs/  (empty)",
        "  src/",
        "    lib/",
        `      util.ts  5 B  ${WHEN_TEXT}`,
        `    main.ts  5 B  ${WHEN_TEXT}`,
        `  README.md  9 B  ${WHEN_TEXT}`,
      ].join("\n"),
    );
    expect(result.entries.map((e) => [e.path, e.depth])).toEqual([
      ["docs", 1],
      ["src", 1],
      ["src/lib", 2],
      ["src/lib/util.ts", 3],
      ["src/main.ts", 2],
      ["README.md", 1],
    ]);
    expect(result.total).toBe(6);
    expect(result.truncated).toBe(false);
    expect(result.entries.every((e) => e.hiddenEntries === undefined)).toBe(true);
  });

  it("stops at depth, counting what each directory at the last level holds (not a truncation)", async () => {
    const result = await workspace(await project()).list({ depth: 2 });
    expect(result.text.split("\n")).toEqual([
      "./",
      "  docs/  (empty)",
      "  src/",
      "    lib/  (1 entry not shown)",
      `    main.ts  5 B  ${WHEN_TEXT}`,
      `  README.md  9 B  ${WHEN_TEXT}`,
    ]);
    expect(result.entries.find((e) => e.path === "src/lib")?.hiddenEntries).toBe(1);
    expect(result.total).toBe(5);
    expect(result.truncated).toBe(false);
  });

  it("lists a subdirectory's tree with depths relative to it", async () => {
    const result = await workspace(await project()).list({ path: "src", depth: 2 });
    expect(result.path).toBe("src");
    expect(result.text.split("\n")).toEqual([
      "src/",
      "  lib/",
      `    util.ts  5 B  ${WHEN_TEXT}`,
      `  main.ts  5 B  ${WHEN_TEXT}`,
    ]);
    expect(result.entries.map((e) => [e.path, e.depth])).toEqual([
      ["src/lib", 1],
      ["src/lib/util.ts", 2],
      ["src/main.ts", 1],
    ]);
  });

  it("cuts a whole level at the limit: each directory not opened says how many it holds", async () => {
    const root = await tempTree({
      "a/1.txt": "",
      "a/2.txt": "",
      "a/3.txt": "",
      "b/1.txt": "",
      "b/2.txt": "",
      "c.txt": "",
    });
    const ws = workspace(root);
    // 3 at the first level, 5 at the second: 8 do not fit in 5, so the second level is not drawn.
    const cut = await ws.list({ depth: 2, limit: 5 });
    expect(names(cut)).toEqual(["a", "b", "c.txt"]);
    expect(cut.entries.map((e) => e.hiddenEntries)).toEqual([3, 2, undefined]);
    expect(cut.truncated).toBe(true);
    expect(cut.total).toBe(8);
    expect(cut.text).toContain("\n  a/  (3 entries not shown)\n  b/  (2 entries not shown)\n");
    expect(cut.text).toContain("(Showing 3 of 8+ entries.");
    // The same tree within the limit: whole, not truncated.
    const whole = await ws.list({ depth: 2, limit: 8 });
    expect(whole.entries).toHaveLength(8);
    expect(whole.truncated).toBe(false);
    expect(whole.total).toBe(8);
    expect(whole.text).not.toContain("not shown");
    expect(whole.text).not.toContain("Showing");
  });

  it("shows the first `limit` entries of a first level past the limit, in sort order", async () => {
    const root = await tempTree({ "e.txt": "", "d.txt": "", "c.txt": "", "b.txt": "" });
    await mkdir(join(root, "z-dir"));
    const result = await workspace(root).list({ limit: 2 });
    expect(names(result)).toEqual(["z-dir", "b.txt"]);
    expect(result.truncated).toBe(true);
    expect(result.total).toBe(5);
    expect(result.text).toContain("(Showing 2 of 5+ entries.");
  });
});

describe("list: ignore, hidden, .gitignore", () => {
  async function tree(): Promise<string> {
    return tempTree({
      "app.log": "log",
      "keep.ts": "keep",
      "logs/a.log": "log",
      "logs/b.txt": "b",
      "dist/out.js": "out",
      "dist/deep/more.js": "more",
      "src/main.ts": "main",
      "src/gen/x.ts": "x",
      "src/gen/deep/y.ts": "y",
    });
  }

  it("hides entries matching a name glob at every level", async () => {
    const result = await workspace(await tree()).list({ depth: 4, ignore: ["*.log"] });
    expect(paths(result)).not.toContain("app.log");
    expect(paths(result)).not.toContain("logs/a.log");
    expect(paths(result)).toContain("logs/b.txt");
    expect(paths(result)).toContain("keep.ts");
    expect(result.text).not.toContain(".log");
  });

  it("hides a directory named `dist/` and everything below it", async () => {
    const result = await workspace(await tree()).list({ depth: 4, ignore: ["dist/"] });
    expect(paths(result).filter((p) => p.startsWith("dist"))).toEqual([]);
    expect(paths(result)).toContain("src/gen/deep/y.ts");
    expect(result.total).toBe(result.entries.length);
  });

  it("hides a path glob `src/gen/**`: the directory and all below, not its siblings", async () => {
    const result = await workspace(await tree()).list({ depth: 4, ignore: ["src/gen/**"] });
    expect(paths(result).filter((p) => p.startsWith("src"))).toEqual(["src", "src/main.ts"]);
    expect(paths(result)).toContain("dist/deep/more.js");
  });

  it("takes several patterns at once, the alias excludePatterns, and a single string", async () => {
    const root = await tree();
    const ws = workspace(root);
    const all = await ws.list({ depth: 4, ignore: ["*.log", "dist/", "src/gen/**"] });
    expect(paths(all)).toEqual(["logs", "logs/b.txt", "src", "src/main.ts", "keep.ts"]);
    expect(all.total).toBe(5);
    const aliased = await ws.list({ depth: 4, excludePatterns: ["*.log", "dist/", "src/gen/**"] });
    expect(paths(aliased)).toEqual(paths(all));
    const one = await ws.list({ ignore: "dist" });
    expect(names(one)).toEqual(["logs", "src", "app.log", "keep.ts"]);
  });

  it("refuses ignore globs that picomatch would backtrack on, as glob refuses them, and lists the next call", async () => {
    const name = `${"a".repeat(240)}.log`;
    const root = await tempTree({ [name]: "x", "keep.ts": "" });
    const ws = workspace(root);
    const stars = await rejectsWith(ws.list({ ignore: ["*a*a*a*a*a*b"] }), "INVALID_PATTERN");
    expect(stars).toContain("more than 3 wildcards in one name");
    const braces = "{a,b}".repeat(20);
    expect(await rejectsWith(ws.list({ ignore: [braces] }), "INVALID_PATTERN")).toContain(
      "brace groups",
    );
    expect(names(await ws.list({ ignore: ["*a*b"] }))).toEqual([name, "keep.ts"]);
  });

  it("shows dot entries only with hidden: true", async () => {
    const root = await tempTree({ ".env": "SECRET=1", ".config/x.json": "{}", "visible.txt": "v" });
    const ws = workspace(root);
    const plain = await ws.list({ depth: 2 });
    expect(paths(plain)).toEqual(["visible.txt"]);
    expect(plain.text).not.toContain(".env");
    const shown = await ws.list({ depth: 2, hidden: true });
    expect(paths(shown)).toEqual([".config", ".config/x.json", ".env", "visible.txt"]);
    expect((await ws.list({ hidden: "true" })).entries).toHaveLength(3);
  });

  it("leaves out what .gitignore ignores in a git repository, and shows it with gitignore: false", async () => {
    const root = await repo({
      ".gitignore": "node_modules/\ndist/\n*.log\n",
      "node_modules/pkg/index.js": "module.exports = 1;\n",
      "dist/out.js": "out\n",
      "debug.log": "log\n",
      "src/app.ts": "app\n",
      "src/trace.log": "log\n",
      "keep.ts": "keep\n",
    });
    const ws = workspace(root);
    const plain = await ws.list({ depth: 3 });
    expect(paths(plain)).toEqual(["src", "src/app.ts", "keep.ts"]);
    const everything = await ws.list({ depth: 3, gitignore: false });
    expect(paths(everything)).toEqual([
      "dist",
      "dist/out.js",
      "node_modules",
      "node_modules/pkg",
      "node_modules/pkg/index.js",
      "src",
      "src/app.ts",
      "src/trace.log",
      "debug.log",
      "keep.ts",
    ]);
    expect(everything.text).not.toContain(".gitignore");
    const withDots = await ws.list({ gitignore: false, hidden: true });
    expect(names(withDots)).toEqual([
      "dist",
      "node_modules",
      "src",
      ".gitignore",
      "debug.log",
      "keep.ts",
    ]);
  });

  it("never lists .git, whatever the options", async () => {
    const root = await repo({ "a.txt": "a\n" });
    expect(statSync(join(root, ".git")).isDirectory()).toBe(true);
    const ws = workspace(root);
    for (const options of [
      {},
      { hidden: true },
      { hidden: true, gitignore: false },
      { hidden: true, gitignore: false, depth: 4 },
    ]) {
      const result = await ws.list(options);
      expect(
        paths(result).some((p) => p === ".git" || p.startsWith(".git/")),
        JSON.stringify(options),
      ).toBe(false);
      expect(result.text).not.toMatch(/\.git\//);
    }
  });

  it("lists an ignored directory named explicitly as it is, and says it is left out of listings", async () => {
    const root = await repo({
      ".gitignore": "node_modules/\ndist\n",
      "node_modules/pkg/index.js": "x\n",
      "node_modules/pkg/.npmignore": "x\n",
      "node_modules/.bin/tool": "x\n",
      "dist/out.js": "out\n",
      "dist/nested/.gitignore": "*.js\n",
      "dist/nested/kept.js": "kept\n",
    });
    const ws = workspace(root);
    expect(names(await ws.list())).toEqual([]);
    const modules = await ws.list({ path: "node_modules", depth: 2 });
    expect(modules.path).toBe("node_modules");
    expect(paths(modules)).toEqual(["node_modules/pkg", "node_modules/pkg/index.js"]);
    expect(modules.text).toContain("node_modules is left out of listings");
    expect(modules.text.startsWith("node_modules/\n  pkg/\n    index.js  2 B")).toBe(true);
    // Hidden entries inside it still need hidden: true.
    const withDots = await ws.list({ path: "node_modules", depth: 2, hidden: true });
    expect(paths(withDots)).toEqual([
      "node_modules/.bin",
      "node_modules/.bin/tool",
      "node_modules/pkg",
      "node_modules/pkg/.npmignore",
      "node_modules/pkg/index.js",
    ]);
    // Read as it is: no ignore file inside it applies either.
    const dist = await ws.list({ path: "dist", depth: 2 });
    expect(paths(dist)).toEqual(["dist/nested", "dist/nested/kept.js", "dist/out.js"]);
    expect(dist.text).toContain("dist is left out of listings");
    // A directory the listing does hold says nothing of the kind.
    await mkdir(join(root, "src"));
    expect((await ws.list({ path: "src" })).text).not.toContain("left out of listings");
  });

  it("lists a hidden directory named explicitly, with the same note", async () => {
    const root = await tempTree({ ".github/workflows/ci.yml": "on: push\n" });
    const result = await workspace(root).list({ path: ".github", depth: 2 });
    expect(paths(result)).toEqual([".github/workflows", ".github/workflows/ci.yml"]);
    expect(result.text).toContain(".github is left out of listings");
  });
});

describe("list: bad input", () => {
  it("refuses a file, a missing path, depth out of 1-32, an unknown sort, an empty pattern, a path outside", async () => {
    const root = await tempTree({ "file.txt": "x", "dir/a.txt": "a" });
    const ws = workspace(root);
    expect(await rejectsWith(ws.list({ path: "file.txt" }), "NOT_A_DIRECTORY")).toContain(
      "file.txt",
    );
    expect(await rejectsWith(ws.list({ path: "missing" }), "NOT_FOUND")).toContain("missing");
    await rejectsWith(ws.list({ path: "dir/missing/deeper" }), "NOT_FOUND");
    await rejectsWith(ws.list({ depth: 0 }), "INVALID_ARGUMENT");
    await rejectsWith(ws.list({ depth: 33 }), "INVALID_ARGUMENT");
    await rejectsWith(ws.list({ depth: -1 }), "INVALID_ARGUMENT");
    expect((await ws.list({ depth: 32 })).entries).toHaveLength(3);
    expect(await rejectsWith(ws.list({ sort: "bogus" }), "INVALID_ARGUMENT")).toContain("bogus");
    await rejectsWith(ws.list({ ignore: [""] }), "INVALID_PATTERN");
    await rejectsWith(ws.list({ ignore: ["*.log", "   "] }), "INVALID_PATTERN");
    await rejectsWith(ws.list({ path: "../x" }), "OUTSIDE_ROOT");
    await rejectsWith(ws.list({ path: dirname(root) }), "OUTSIDE_ROOT");
    await rejectsWith(ws.list({ limit: 0 }), "INVALID_ARGUMENT");
  });

  it("refuses a path through a file with a FreshfsError, as stat does (NOT_FOUND)", async () => {
    const root = await tempTree({ "file.txt": "x" });
    const ws = workspace(root);
    await rejectsWith(ws.stat({ path: "file.txt/x" }), "NOT_FOUND");
    await rejectsWith(ws.list({ path: "file.txt/x" }), "NOT_FOUND");
  });
});

describe("list: fresh after every change", () => {
  for (const watch of [true, false]) {
    it(`shows what a second process made, on the very next call (watch: ${watch}, cache off when unwatched)`, async () => {
      const root = await tempTree({ "old.txt": "old", "pkg/a.ts": "a" });
      // Unwatched, only a walk per call can see another process's change: no cache then.
      const ws = workspace(root, watch ? {} : { watch: false, cache: false });
      expect(names(await ws.list({ depth: 2 }))).toEqual(["pkg", "a.ts", "old.txt"]);
      otherProcess(
        [
          'const fs = require("node:fs");',
          `fs.writeFileSync(${JSON.stringify(join(root, "new.txt"))}, "new");`,
          `fs.mkdirSync(${JSON.stringify(join(root, "made", "inner"))}, { recursive: true });`,
          `fs.writeFileSync(${JSON.stringify(join(root, "made", "inner", "deep.ts"))}, "d");`,
          `fs.writeFileSync(${JSON.stringify(join(root, "pkg", "b.ts"))}, "b");`,
          `fs.unlinkSync(${JSON.stringify(join(root, "old.txt"))});`,
        ].join("\n"),
      );
      const after = await ws.list({ depth: 3 });
      expect(paths(after)).toEqual([
        "made",
        "made/inner",
        "made/inner/deep.ts",
        "pkg",
        "pkg/a.ts",
        "pkg/b.ts",
        "new.txt",
      ]);
      expect(names(await ws.list({ path: "made/inner" }))).toEqual(["deep.ts"]);
      // From the watched tree, or walked for this call while it settles; never a kept listing.
      expect(["live", "walked"]).toContain(after.freshness);
    });
  }

  it("unwatched with the cache on, says an answer from the cache is `cached` (TTL policy)", async () => {
    const root = await tempTree({ "old.txt": "old" });
    const ws = workspace(root, { watch: false });
    expect((await ws.list()).freshness).toBe("walked");
    otherProcess(
      `require("node:fs").writeFileSync(${JSON.stringify(join(root, "new.txt"))}, "n");`,
    );
    const after = await ws.list();
    // The cache holds the listing for its TTL (a minute here); the answer says so.
    expect(after.freshness).toBe("cached");
    expect(names(after)).toEqual(["old.txt"]);
    invalidateFsScanCache();
    expect(names(await ws.list())).toEqual(["new.txt", "old.txt"]);
  });

  for (const watch of [true, false]) {
    it(`reflects mkdir, write, delete, rename and applyPatch on the next call (watch: ${watch})`, async () => {
      const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
      const ws = workspace(root, { watch });
      const listed = async () => paths(await ws.list({ depth: 3 }));
      expect(await listed()).toEqual(["a.txt", "b.txt"]);

      await ws.mkdir({ path: "made/deeper" });
      expect(await listed()).toEqual(["made", "made/deeper", "a.txt", "b.txt"]);

      await ws.write({ file_path: "made/deeper/w.txt", content: "written\n" });
      expect(await listed()).toEqual([
        "made",
        "made/deeper",
        "made/deeper/w.txt",
        "a.txt",
        "b.txt",
      ]);

      await ws.read({ file_path: "a.txt" });
      await ws.delete({ file_path: "a.txt" });
      expect(await listed()).toEqual(["made", "made/deeper", "made/deeper/w.txt", "b.txt"]);

      await ws.rename({ from: "b.txt", to: "made/c.txt" });
      expect(await listed()).toEqual(["made", "made/deeper", "made/deeper/w.txt", "made/c.txt"]);

      await ws.applyPatch({
        input: ["*** Begin Patch", "*** Add File: patched/p.txt", "+patched", "*** End Patch"].join(
          "\n",
        ),
      });
      expect(await listed()).toEqual([
        "made",
        "made/deeper",
        "made/deeper/w.txt",
        "made/c.txt",
        "patched",
        "patched/p.txt",
      ]);
      const sized = await ws.list({ path: "patched" });
      expect(sized.entries[0]?.size).toBe("patched\n".length);
    });
  }
});

describe("stat", () => {
  it("tells a file's size, mode, mtime and kind", async () => {
    const root = await tempTree({ "a.txt": "hello\n", "secret.txt": "s" });
    await chmod(join(root, "a.txt"), 0o644);
    await chmod(join(root, "secret.txt"), 0o600);
    await stamp(root, ["a.txt"]);
    const ws = workspace(root);
    const result = await ws.stat({ path: "a.txt" });
    expect(result).toMatchObject({
      path: join(root, "a.txt"),
      kind: "file",
      symlink: undefined,
      size: 6,
      mode: "0644",
      mtime: "2021-03-04T05:06:07.000Z",
      mtimeMs: WHEN.getTime(),
    });
    expect(result.ctime).toBe(new Date(result.ctimeMs).toISOString());
    expect(result.text).toContain("a.txt: a file, 6 bytes.");
    expect(result.text).toContain("mode 0644 (rw-r--r--)");
    const secret = await ws.stat({ file_path: "secret.txt" });
    expect(secret.mode).toBe("0600");
    expect(secret.text).toContain("(rw-------)");
    expect((await ws.stat({ filePath: join(root, "secret.txt") })).size).toBe(1);
  });

  it("tells a directory's kind and mode, with no read state", async () => {
    const root = await tempTree({ "dir/x.txt": "x" });
    await chmod(join(root, "dir"), 0o750);
    const result = await workspace(root).stat({ path: "dir" });
    expect(result.kind).toBe("directory");
    expect(result.mode).toBe("0750");
    expect(result.read).toBeUndefined();
    expect(result.editable).toBe(false);
    expect(result.text).toContain("dir: a directory.");
  });

  it("follows a link for the kind, and holds the link's text in `symlink`", async () => {
    const root = await tempTree({ "target.txt": "0123456789", "real/x.txt": "x" });
    await symlink("target.txt", join(root, "link"));
    await symlink("real", join(root, "dir-link"));
    const ws = workspace(root);
    const file = await ws.stat({ path: "link" });
    expect(file.kind).toBe("file");
    expect(file.symlink).toBe("target.txt");
    expect(file.size).toBe(10);
    expect(file.text).toContain("link -> target.txt");
    const dir = await ws.stat({ path: "dir-link" });
    expect(dir.kind).toBe("directory");
    expect(dir.symlink).toBe("real");
    expect((await ws.stat({ path: "target.txt" })).symlink).toBeUndefined();
  });

  it("refuses a missing path with NOT_FOUND and a path outside with OUTSIDE_ROOT", async () => {
    const root = await tempTree({ "a.txt": "a" });
    const outside = await tempTree({ "o.txt": "o" });
    const ws = workspace(root);
    expect(await rejectsWith(ws.stat({ path: "missing.txt" }), "NOT_FOUND")).toContain(
      "missing.txt",
    );
    await rejectsWith(ws.stat({ path: "../o.txt" }), "OUTSIDE_ROOT");
    await rejectsWith(ws.stat({ path: join(outside, "o.txt") }), "OUTSIDE_ROOT");
    await symlink(join(outside, "o.txt"), join(root, "out-link"));
    await rejectsWith(ws.stat({ path: "out-link" }), "OUTSIDE_ROOT");
  });

  for (const policy of ["strict", "warn"] as const) {
    it(`tells the guard's state: not_read, partial, fresh, stale (policy: ${policy})`, async () => {
      const root = await tempTree({ "three.txt": "one\ntwo\nthree\n" });
      const ws = workspace(root, { policy });
      const state = async () => {
        const { read, editable, text } = await ws.stat({ path: "three.txt" });
        return { read, editable, text };
      };
      const before = await state();
      expect(before).toMatchObject({ read: "not_read", editable: false });
      expect(before.text).toContain("Not read yet");

      await ws.read({ file_path: "three.txt", offset: 1, limit: 1 });
      const partial = await state();
      expect(partial).toMatchObject({ read: "partial", editable: false });
      expect(partial.text).toContain("Read only in part");

      await ws.read({ file_path: "three.txt" });
      const fresh = await state();
      expect(fresh).toMatchObject({ read: "fresh", editable: true });
      expect(fresh.text).toContain("may be edited");

      otherProcess(
        `require("node:fs").writeFileSync(${JSON.stringify(join(root, "three.txt"))}, "rewritten by another process\\n");`,
      );
      const stale = await state();
      expect(stale).toMatchObject({ read: "stale", editable: false });
      expect(stale.text).toContain("Changed on disk");
      // stat only tells: under strict the edit it advises against is indeed refused.
      if (policy === "strict") {
        await rejectsWith(
          ws.edit({ file_path: "three.txt", old_string: "rewritten", new_string: "x" }),
          "STALE",
        );
      }
      await ws.read({ file_path: "three.txt" });
      expect((await state()).read).toBe("fresh");
    });
  }

  it("refuses a file read in full and then deleted by another process with NOT_FOUND", async () => {
    const root = await tempTree({ "gone.txt": "x\n" });
    const ws = workspace(root);
    await ws.read({ file_path: "gone.txt" });
    expect((await ws.stat({ path: "gone.txt" })).read).toBe("fresh");
    otherProcess(`require("node:fs").unlinkSync(${JSON.stringify(join(root, "gone.txt"))});`);
    await rejectsWith(ws.stat({ path: "gone.txt" }), "NOT_FOUND");
  });
});

describe("mkdir", () => {
  it("makes the parents it needs; firstCreated is the topmost made", async () => {
    const root = await tempTree({ "have/x.txt": "x" });
    const ws = workspace(root);
    const nested = await ws.mkdir({ path: "a/b/c" });
    expect(nested).toMatchObject({
      path: join(root, "a", "b", "c"),
      created: true,
      firstCreated: join(root, "a"),
    });
    expect(nested.text).toContain("Created the directory a/b/c");
    expect(statSync(join(root, "a", "b", "c")).isDirectory()).toBe(true);
    const under = await ws.mkdir({ dir_path: "have/d/e" });
    expect(under.firstCreated).toBe(join(root, "have", "d"));
    const single = await ws.mkdir({ file_path: "solo" });
    expect(single.firstCreated).toBe(join(root, "solo"));
    expect(single.text).toBe("Created the directory solo.");
  });

  it("is no error for an existing directory: created false, contents untouched", async () => {
    const root = await tempTree({ "dir/keep.txt": "keep" });
    const result = await workspace(root).mkdir({ path: "dir" });
    expect(result).toMatchObject({
      path: join(root, "dir"),
      created: false,
      firstCreated: undefined,
    });
    expect(result.text).toContain("already exists");
    expect(await readdir(join(root, "dir"))).toEqual(["keep.txt"]);
  });

  it("refuses an existing file at the path with ALREADY_EXISTS, and keeps the file", async () => {
    const root = await tempTree({ "file.txt": "content" });
    const message = await rejectsWith(
      workspace(root).mkdir({ path: "file.txt" }),
      "ALREADY_EXISTS",
    );
    expect(message).toContain("file.txt");
    expect(await readFile(join(root, "file.txt"), "utf8")).toBe("content");
  });

  it("refuses a file in the middle of the path with NOT_A_DIRECTORY", async () => {
    const root = await tempTree({ "file.txt": "content" });
    const ws = workspace(root);
    await rejectsWith(ws.mkdir({ path: "file.txt/sub" }), "NOT_A_DIRECTORY");
    await rejectsWith(ws.mkdir({ path: "file.txt/sub/deeper" }), "NOT_A_DIRECTORY");
    expect(lstatSync(join(root, "file.txt")).isFile()).toBe(true);
    expect(await readdir(root)).toEqual(["file.txt"]);
  });

  it("refuses a path outside the root, and one through a link that leads out; makes nothing outside", async () => {
    const root = await tempTree({ "inside.txt": "i" });
    const outside = await tempTree({});
    const ws = workspace(root);
    const sibling = `escape-${Date.now()}`;
    await rejectsWith(ws.mkdir({ path: `../${sibling}` }), "OUTSIDE_ROOT");
    expect(existsSync(join(dirname(root), sibling))).toBe(false);
    await rejectsWith(ws.mkdir({ path: join(outside, "abs") }), "OUTSIDE_ROOT");
    await symlink(outside, join(root, "escape"));
    await rejectsWith(ws.mkdir({ path: "escape/newdir" }), "OUTSIDE_ROOT");
    await rejectsWith(ws.mkdir({ path: "escape/a/b" }), "OUTSIDE_ROOT");
    expect(await readdir(outside)).toEqual([]);
    expect((await readdir(root)).sort()).toEqual(["escape", "inside.txt"]);
  });

  it("takes a trailing slash", async () => {
    const root = await tempTree({});
    const result = await workspace(root).mkdir({ path: "x/y/" });
    expect(result.created).toBe(true);
    expect(result.firstCreated).toBe(join(root, "x"));
    expect(statSync(join(root, "x", "y")).isDirectory()).toBe(true);
    expect((await workspace(root).mkdir({ path: "x/y/" })).created).toBe(false);
  });

  for (const watch of [true, false]) {
    it(`is seen by glob, find and list at once (watch: ${watch})`, async () => {
      const root = await tempTree({ "pkg/index.ts": "export {};\n" });
      const ws = workspace(root, { watch });
      // Warm every listing first, so a stale one would be there to answer.
      expect(names(await ws.list({ path: "pkg" }))).toEqual(["index.ts"]);
      expect((await ws.glob({ pattern: "**/*.ts" })).files).toEqual(["pkg/index.ts"]);
      expect((await ws.find({ query: "widgetry" })).matches).toEqual([]);
      await rejectsWith(ws.glob({ pattern: "*", path: "pkg/widgetry" }), "NOT_FOUND");

      await ws.mkdir({ path: "pkg/widgetry" });
      const listed = await ws.list({ path: "pkg" });
      expect(names(listed)).toEqual(["widgetry", "index.ts"]);
      expect(listed.text).toContain("\n  widgetry/  (empty)");
      expect(paths(await ws.list({ depth: 2 }))).toEqual(["pkg", "pkg/widgetry", "pkg/index.ts"]);
      const found = await ws.find({ query: "widgetry" });
      expect(found.matches.map((m) => [m.path, m.type])).toEqual([["pkg/widgetry", "dir"]]);
      expect(found.text.split("\n")).toContain("pkg/widgetry/");
      const globbed = await ws.glob({ pattern: "*", path: "pkg/widgetry" });
      expect(globbed.files).toEqual([]);

      await ws.write({ file_path: "pkg/widgetry/w.ts", content: "export {};\n" });
      expect((await ws.glob({ pattern: "**/*.ts" })).files).toContain("pkg/widgetry/w.ts");
    });
  }
});

/**
 * glob: pattern semantics, options, the static-prefix walk, the
 * cache with its empty-result recheck, and agreement with tinyglobby where their rules meet.
 */

import { execFileSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { glob as tinyglob } from "tinyglobby";
import { beforeEach, describe, expect, it } from "vitest";
import { configureScanCache, getOrScan, glob, invalidateFsScanCache } from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const TREE = {
  "README.md": "",
  "src/index.ts": "",
  "src/app.tsx": "",
  "src/lib/util.ts": "",
  "src/lib/deep/more.ts": "",
  "src/a": "",
  "src/b": "",
  "src/c": "",
  "docs/guide.md": "",
  ".github/workflows/ci.yml": "",
  ".env": "",
  "src/.hidden.ts": "",
  "node_modules/pkg/index.ts": "",
  "test/a.test.ts": "",
  "test/b.spec.ts": "",
};

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

describe("glob patterns", () => {
  it("keeps * within one directory, and matches a slash-free pattern at any depth", async () => {
    const root = await tempTree(TREE);
    expect((await glob("src/*.ts", { path: root })).matches).toEqual(["src/index.ts"]);
    expect((await glob("*.ts", { path: root })).matches).toEqual([
      "src/index.ts",
      "src/lib/deep/more.ts",
      "src/lib/util.ts",
      "test/a.test.ts",
      "test/b.spec.ts",
    ]);
  });

  it("strips ./, closes an unclosed brace, and takes braces, classes and negation", async () => {
    const root = await tempTree(TREE);
    expect((await glob("./src/lib/*.ts", { path: root })).matches).toEqual(["src/lib/util.ts"]);
    expect((await glob("src/{a,b", { path: root })).matches).toEqual(["src/a", "src/b"]);
    expect((await glob("src/[ac]", { path: root })).matches).toEqual(["src/a", "src/c"]);
    expect((await glob("test/*.{test,spec}.ts", { path: root })).matches).toEqual([
      "test/a.test.ts",
      "test/b.spec.ts",
    ]);
    expect((await glob("!**/*.ts", { path: root })).matches).toEqual([
      "README.md",
      "docs/guide.md",
      "src/a",
      "src/app.tsx",
      "src/b",
      "src/c",
    ]);
  });

  it("finds hidden entries only when asked or named", async () => {
    const root = await tempTree(TREE);
    expect((await glob("**/*.yml", { path: root })).matches).toEqual([]);
    expect((await glob(".github/**", { path: root })).matches).toEqual([
      ".github/workflows/ci.yml",
    ]);
    expect((await glob("**/.env", { path: root })).matches).toEqual([".env"]);
    expect((await glob("**/*.ts", { path: root, hidden: true })).matches).toContain(
      "src/.hidden.ts",
    );
  });

  it("searches node_modules only when asked, or when the pattern names it", async () => {
    const root = await tempTree(TREE);
    expect((await glob("**/index.ts", { path: root })).matches).toEqual(["src/index.ts"]);
    expect((await glob("node_modules/**/*.ts", { path: root })).matches).toEqual([
      "node_modules/pkg/index.ts",
    ]);
    expect((await glob("**/index.ts", { path: root, includeNodeModules: true })).matches).toEqual([
      "node_modules/pkg/index.ts",
      "src/index.ts",
    ]);
  });

  it("filters by type", async () => {
    const root = await tempTree(TREE);
    expect((await glob("src/*", { path: root, fileType: "dir" })).matches).toEqual(["src/lib"]);
    expect((await glob("src/l*", { path: root, fileType: "any" })).matches).toEqual(["src/lib"]);
  });

  it("pages with limit and offset, counting everything found, and sorts by mtime on request", async () => {
    const root = await tempTree(TREE);
    const cut = await glob("**/*.ts", { path: root, limit: 2 });
    expect(cut).toMatchObject({
      matches: ["src/index.ts", "src/lib/deep/more.ts"],
      totalMatches: 5,
      truncated: true,
    });
    const all = (await glob("**/*.ts", { path: root })).matches;
    expect(all).toHaveLength(5);
    const second = await glob("**/*.ts", { path: root, limit: 2, offset: 2 });
    expect(second).toMatchObject({ matches: all.slice(2, 4), totalMatches: 5, truncated: true });
    const last = await glob("**/*.ts", { path: root, limit: 2, offset: 4 });
    expect(last).toMatchObject({ matches: all.slice(4), totalMatches: 5, truncated: false });
    const past = await glob("**/*.ts", { path: root, offset: 9 });
    expect(past).toMatchObject({ matches: [], totalMatches: 5, truncated: false });
    const times: Record<string, number> = {
      "test/a.test.ts": 3,
      "src/index.ts": 2,
      "test/b.spec.ts": 2,
    };
    for (const [path, days] of Object.entries(times)) {
      const when = new Date(Date.UTC(2026, 0, days));
      utimesSync(join(root, path), when, when);
    }
    const old = new Date(Date.UTC(2025, 0, 1));
    for (const path of ["src/lib/util.ts", "src/lib/deep/more.ts"])
      utimesSync(join(root, path), old, old);
    expect((await glob("**/*.ts", { path: root, sortByMtime: true })).matches).toEqual([
      "test/a.test.ts",
      "src/index.ts",
      "test/b.spec.ts",
      "src/lib/deep/more.ts",
      "src/lib/util.ts",
    ]);
  });

  it("refuses an empty pattern and bad options with typed errors", async () => {
    const root = await tempTree(TREE);
    await rejectsWith(glob("", { path: root }), "INVALID_PATTERN");
    await rejectsWith(glob("*", { path: root, limit: -1 }), "INVALID_ARGUMENT");
    await rejectsWith(glob("*", { path: root, offset: 1.5 }), "INVALID_ARGUMENT");
    // The name the option had: refused, not quietly ignored (every match would come back).
    const renamed = { path: root, maxResults: 1 } as Parameters<typeof glob>[1];
    expect(await rejectsWith(glob("*", renamed), "INVALID_ARGUMENT")).toContain(
      "maxResults is now limit",
    );
    await rejectsWith(glob("*", { path: join(root, "missing") }), "NOT_FOUND");
  });
});

describe("glob over gitignored trees", () => {
  async function repo() {
    const root = await tempTree({
      ...TREE,
      ".gitignore": "build/\n*.log\n",
      "build/out.ts": "",
      "src/debug.log": "",
    });
    execFileSync("git", ["init", "-q", root], { env: isolatedGitEnv(root) });
    return root;
  }

  it("answers the same with and without the cache, static head or not", async () => {
    const root = await repo();
    for (const pattern of [
      "src/**/*.ts",
      "build/**",
      "**/*.log",
      "src/lib/*",
      "docs/*.md",
      "missing/**",
    ]) {
      const cold = await glob(pattern, { path: root });
      const cached = await glob(pattern, { path: root, cache: true });
      expect(cold.matches, pattern).toEqual(cached.matches);
    }
    expect((await glob("build/**", { path: root })).matches).toEqual([]);
    expect((await glob("build/**", { path: root, gitignore: false })).matches).toEqual([
      "build/out.ts",
    ]);
  });

  it("rechecks an empty cached result once when the listing is old enough", async () => {
    const root = await repo();
    configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 60_000 });
    await getOrScan(root);
    writeFileSync(join(root, "src", "fresh.ts"), "");
    // Younger than the recheck age: the cached listing stands, stale as it is.
    expect((await glob("**/fresh.ts", { path: root, cache: true })).matches).toEqual([]);
    configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 0 });
    expect((await glob("**/fresh.ts", { path: root, cache: true })).matches).toEqual([
      "src/fresh.ts",
    ]);
  });
});

describe("glob against tinyglobby", () => {
  const PATTERNS = [
    "src/**/*.ts",
    "**/*.md",
    "src/*",
    "src/{a,b,lib}/**",
    "**/lib/**/*.ts",
    "test/?.*.ts",
    "**/[ab].*",
    "src/**",
    "docs/**/*.md",
    "**/*.{ts,tsx}",
  ];

  it.each(PATTERNS)("%s", async (pattern) => {
    const root = await tempTree(TREE);
    mkdirSync(join(root, "empty-dir"));
    const ours = await glob(pattern, { path: root, gitignore: false, includeNodeModules: true });
    const theirs = (
      await tinyglob(pattern, { cwd: root, dot: false, expandDirectories: false })
    ).sort();
    expect(ours.matches).toEqual(theirs);
  });
});

describe("glob edge cases found in review", () => {
  it("treats a pattern without wildcards as a path, with and without the cache", async () => {
    const root = await tempTree({
      "package.json": "",
      "src/index.ts": "",
      "src/[id]/page.tsx": "",
    });
    for (const cache of [false, true]) {
      expect((await glob("package.json", { path: root, cache })).matches).toEqual(["package.json"]);
      expect((await glob("src/index.ts", { path: root, cache })).matches).toEqual(["src/index.ts"]);
      expect((await glob("index.ts", { path: root, cache })).matches).toEqual(["src/index.ts"]);
      expect((await glob("src/\\[id\\]/*.tsx", { path: root, cache })).matches).toEqual([
        "src/[id]/page.tsx",
      ]);
      expect((await glob("src/./index.ts", { path: root, cache })).matches).toEqual([
        "src/index.ts",
      ]);
    }
  });

  it("matches the head directory itself, and never walks out through a symlink or ..", async () => {
    const root = await tempTree({ "src/a.ts": "", "outside/b.ts": "" });
    const { symlinkSync } = await import("node:fs");
    symlinkSync(join(root, "outside"), join(root, "src", "link"));
    for (const cache of [false, true]) {
      expect((await glob("src/**", { path: root, cache, fileType: "any" })).matches).toEqual([
        "src",
        "src/a.ts",
        "src/link",
      ]);
      expect((await glob("src/link/*.ts", { path: root, cache })).matches).toEqual([]);
      expect((await glob("src/../outside/*.ts", { path: root, cache })).matches).toEqual([]);
    }
  });

  it("refuses a pattern with more stars in one name than can be matched in bounded time", async () => {
    const root = await tempTree({ [`${"a".repeat(60)}`]: "" });
    expect(await rejectsWith(glob("*a*a*a*a*c", { path: root }), "INVALID_PATTERN")).toContain(
      "wildcards",
    );
    expect((await glob("*a*a*c", { path: root })).matches).toEqual([]);
  });
});

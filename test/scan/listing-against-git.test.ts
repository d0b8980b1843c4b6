/**
 * The walker's listing against git's own: a tree with ignore rules at several levels,
 * `.git/info/exclude` and a global excludes file, listed by freshfs and by
 * `git ls-files --cached --others --exclude-standard`. Zero differences, both ways.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { forceRescan, invalidateFsScanCache } from "../../src/index.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const IGNORE_FILES: Record<string, string> = {
  ".gitignore": [
    "# root rules",
    "*.log",
    "!keep.log",
    "/build/",
    "node_modules/",
    "*.tmp",
    "**/cache/**",
    "docs/**/*.draft.md",
    "!docs/important.draft.md",
    "/top-only.txt",
    "data-[0-9].json",
    "secret?.txt",
    "trailing\\ space ",
    "\\#hash.txt",
    "",
  ].join("\n"),
  "src/.gitignore": ["generated/", "!generated.ts", "*.js", "!index.js", "/local.ts", ""].join(
    "\n",
  ),
  "src/lib/.gitignore": ["!*.log", "*.snap", "!keep.snap", ""].join("\n"),
  "docs/.gitignore": ["*.md", "!README.md", "!*/", ""].join("\n"),
  "vendor/.gitignore": ["*", "!.gitignore", "!keep/", "!keep/**", ""].join("\n"),
};

const DIRECTORIES = [
  "",
  "src",
  "src/lib",
  "src/generated",
  "src/lib/deep/cache",
  "build",
  "build/sub",
  "docs",
  "docs/guide",
  "node_modules/pkg",
  "vendor",
  "vendor/keep",
  "vendor/drop",
  "a/b/c",
  "cache",
  ".hidden",
];

const NAMES = [
  "index.js",
  "app.js",
  "app.log",
  "keep.log",
  "x.tmp",
  "README.md",
  "notes.md",
  "important.draft.md",
  "plan.draft.md",
  "top-only.txt",
  "data-1.json",
  "data-x.json",
  "secret1.txt",
  "secret12.txt",
  "trailing space",
  "#hash.txt",
  "generated.ts",
  "local.ts",
  "a.snap",
  "keep.snap",
  ".env",
  "café.txt",
];

function git(cwd: string, home: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: isolatedGitEnv(home),
  });
}

beforeEach(() => invalidateFsScanCache());

describe("listing against git ls-files", () => {
  it("agrees with git on every file of a tree with nested ignore files", async () => {
    const root = await tempTree();
    const home = await tempTree({ ".config/git/ignore": "*.global\n" });
    git(root, home, "init", "-q");
    writeFileSync(join(root, ".git", "info", "exclude"), "*.excluded\n");
    for (const dir of DIRECTORIES) {
      mkdirSync(join(root, dir), { recursive: true });
      for (const name of [...NAMES, `${dir.replaceAll("/", "-") || "root"}.global`, "x.excluded"]) {
        writeFileSync(join(root, dir, name), `${dir}/${name}\n`);
      }
    }
    for (const [path, text] of Object.entries(IGNORE_FILES)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    symlinkSync("src/index.js", join(root, "link-to-index"));
    // Part of the tree tracked, part untracked: both kinds must agree.
    git(root, home, "add", "-A");
    git(root, home, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tracked");
    for (const dir of DIRECTORIES) writeFileSync(join(root, dir, "late.log"), "untracked\n");
    writeFileSync(join(root, "src", "late.ts"), "untracked\n");

    const ours = await (async () => {
      const saved = process.env;
      process.env = isolatedGitEnv(home);
      try {
        return await forceRescan(root, { includeHidden: true });
      } finally {
        process.env = saved;
      }
    })();
    const listed = ours.entries.filter((entry) => entry.type !== "dir").map((entry) => entry.path);
    const theirs = git(
      root,
      home,
      "-c",
      "core.quotePath=false",
      "ls-files",
      "-z",
      "--cached",
      "--others",
      "--exclude-standard",
    )
      .split("\0")
      .filter(Boolean);
    const missing = theirs.filter((path) => !listed.includes(path));
    const extra = listed.filter((path) => !theirs.includes(path));
    const everything = await forceRescan(root, { includeHidden: true, useGitignore: false });
    const total = everything.entries.filter((entry) => entry.type !== "dir").length;
    console.info(
      `gitignore listing: git lists ${theirs.length} of ${total} files, freshfs ${listed.length}`,
    );
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    // The tree exercises the rules: a good share of it is ignored, and some of it re-included.
    expect(theirs.length).toBeGreaterThan(100);
    expect(listed).toContain("src/lib/keep.log");
    expect(listed).toContain("vendor/keep/index.js");
    expect(listed).not.toContain("vendor/drop/index.js");
    expect(ours.warnings).toEqual([]);
  });
});

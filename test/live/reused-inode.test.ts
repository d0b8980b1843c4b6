/**
 * A directory removed and made again under the same inode number (ext4 hands a freed inode
 * number to the next mkdir) while a rule of the whole tree changes: the walk that follows the
 * rule change must not take the new directory for the one it watched, whose watch died with
 * it. Found by the freshness churn (`rm -rf x/delta` beside a nested repository's removal, then
 * a file made in the new `delta` and missing from every answer after).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { exact, liveRegistry } from "../helpers/live.js";

async function liveAt(root: string) {
  const trees = liveRegistry();
  await exact(trees, root, {}, "first");
  for (let i = 0; i < 100; i++) {
    if ((await exact(trees, root, {}, "warming")).freshness === "live") return trees;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the tree never went live");
}

/** Another process removes `dir` and makes it again, with whatever else `more` does (sh). */
function replaceDirectory(root: string, dir: string, more: string): boolean {
  const before = statSync(join(root, dir)).ino;
  execFileSync("sh", ["-c", `rm -rf ${dir} && mkdir -p ${dir}/inner && ${more}`], { cwd: root });
  return statSync(join(root, dir)).ino === before;
}

const RULE_CHANGES = [
  ["the root's .gitignore", "printf '*.log\\n' >> .gitignore"],
  ["the repository's info/exclude", "printf '*.log\\n' >> .git/info/exclude"],
] as const;

describe("a directory made again under its old inode number, beside a rule change", () => {
  for (const [which, change] of RULE_CHANGES) {
    it(`is watched anew (${which})`, async (context) => {
      const root = await tempTree({
        ".gitignore": "*.tmp\n",
        "a/b/delta/old.txt": "old\n",
        "a/b/delta/sub/deep.txt": "deep\n",
        "a/keep.txt": "keep\n",
      });
      execFileSync("git", ["init", "-q"], { cwd: root, env: isolatedGitEnv(root) });
      mkdirSync(join(root, ".git", "info"), { recursive: true });
      writeFileSync(join(root, ".git", "info", "exclude"), "");
      const trees = await liveAt(root);
      const reused = replaceDirectory(root, "a/b/delta", change);
      // Only a file system that reuses inode numbers at once (ext4, xfs) makes the case.
      if (!reused) context.skip("this file system gave the new directory another inode number");
      await exact(trees, root, {}, "after the replacement");
      // The new directory's own changes: heard only through a watch of the new directory.
      writeFileSync(join(root, "a/b/delta/new.txt"), "new\n");
      writeFileSync(join(root, "a/b/delta/inner/newer.txt"), "newer\n");
      const answer = await exact(trees, root, {}, "after files made in it");
      expect(answer.freshness).toBe("live");
      expect(answer.entries.map((e) => e.path)).toContain("a/b/delta/new.txt");
    });
  }
});

/**
 * A rule file outside the listing (here `.git/info/exclude`) changed while the first walk
 * runs, after the walk read it: the live tree fingerprints its sources only after the walk, so
 * it takes the new bytes for the ones its listing came from and never re-derives the rules.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forceRescan, type ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { listed, liveRegistry } from "../helpers/live.js";

describe("a rule source changed during the first walk", () => {
  it("is seen by the answers that follow", async () => {
    const tree: Record<string, string> = { "debug.log": "" };
    for (let d = 0; d < 40; d++) for (let f = 0; f < 250; f++) tree[`d${d}/f${f}.ts`] = "";
    const root = await tempTree(tree);
    execFileSync("git", ["init", "-q"], { cwd: root, env: isolatedGitEnv(root) });
    const exclude = join(root, ".git", "info", "exclude");
    writeFileSync(exclude, "");
    const trees = liveRegistry();
    let changed = false;
    // The walk (10,000 entries) takes more than one slice: between two, another writer
    // changes the exclude file the walk has already read.
    const first = await trees.query(
      root,
      {},
      {
        onProgress: () => {
          if (changed) return;
          changed = true;
          writeFileSync(exclude, "*.log\n");
        },
      },
    );
    expect(changed).toBe(true);
    expect(first?.freshness).toBe("walked");
    let answer: ScanResult | undefined;
    for (let i = 0; i < 100; i++) {
      answer = (await trees.query(root, {})) as ScanResult;
      if (answer.freshness === "live") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(answer?.freshness).toBe("live");
    const walk = await forceRescan(root, {});
    expect(listed(walk)).not.toContain("file:debug.log");
    expect(listed(answer as ScanResult)).toEqual(listed(walk));
  });
});

import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentIndexes } from "../../src/content/registry.js";
import { type GrepResult, waitForContentIndex } from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import type { ScanResult } from "../../src/scan/cache.js";
import { greps } from "../helpers/content-index.js";

let parent: string;
let root: string;
const { indexed, plain } = greps(() => root);

const DIRS = 10;
const RULES = Array.from({ length: 3000 }, (_, i) => `nothing_${i}_*.zzz\n`).join("");

/** A tree large enough that a walk of it yields (and reports progress) many times. */
function populate(dir: string): void {
  mkdirSync(dir);
  writeFileSync(join(dir, "a.txt"), "OLD_TOKEN\n");
  // Rules that match nothing, only to make a walk slow enough to report progress often.
  writeFileSync(join(dir, ".ignore"), RULES);
  for (let d = 0; d < DIRS; d++) {
    mkdirSync(join(dir, `d${d}`));
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `d${d}`, `f${f}.txt`), `file ${f}\n`);
  }
}

/** The root replaced by another directory with the same names (its subdirectories moved in). */
function replaceRoot(): void {
  rmSync(`${root}.old`, { recursive: true, force: true });
  renameSync(root, `${root}.old`);
  mkdirSync(root);
  writeFileSync(join(root, "a.txt"), "OLD_TOKEN\n");
  writeFileSync(join(root, ".ignore"), RULES);
  for (let d = 0; d < DIRS; d++) renameSync(join(`${root}.old`, `d${d}`), join(root, `d${d}`));
}

beforeAll(() => {
  parent = mkdtempSync(join(tmpdir(), "freshfs-content-index-rebuild-"));
  root = join(parent, "root");
  populate(root);
});

afterAll(() => {
  liveTrees.closeAll();
  rmSync(parent, { recursive: true, force: true });
});

describe("a run started during the walk that follows a distrust", () => {
  it("does not vouch for a file changed before the new watches were set up", async () => {
    let last: GrepResult | undefined;
    const policy = { includeHidden: true, useGitignore: true };

    /**
     * One try at the race: the tree made live and its index built, the root replaced (the tree
     * distrusts its events), then the grep that walks again. While it walks, another grep that
     * answered before finishes and runs its maintenance: a run reads the new root's files, with
     * no watch on them yet; a file is then changed before the walk ends and watches are set.
     * Whether the change lands before the walk ends is up to the machine's timing: a try that
     * misses it says so, and is made again.
     */
    const attempt = async (): Promise<boolean> => {
      for (let i = 0; i < 20 && last?.freshness !== "live"; i++) last = await indexed("warm-up");
      expect(last?.freshness).toBe("live");
      await waitForContentIndex(root);
      const tree = liveTrees.treeOf(root, policy);
      const index = tree && contentIndexes.of(tree);
      if (!index) throw new Error("no index");
      replaceRoot();
      let maintained = false;
      let changed = false;
      let before = 0;
      // What an earlier grep's `contentIndexes.maintainSoon(index, found.listing)` is given
      // (grep.ts), reduced to the one file that matters.
      const oldListing = { entries: [{ type: "file", path: "a.txt" }] } as unknown as ScanResult;
      const walked = await indexed("warm-up", {
        onProgress: () => {
          if (!maintained) {
            maintained = true;
            before = statSync(join(root, "a.txt")).atimeMs;
            contentIndexes.maintain(index, oldListing);
            return;
          }
          // Once a.txt was read (its access time moved: relatime, atime <= mtime), it changes
          // while the walk goes on: no watch on the new root yet.
          if (!changed && statSync(join(root, "a.txt")).atimeMs !== before) {
            writeFileSync(join(root, "a.txt"), "NEW_TOKEN\n");
            changed = true;
          }
        },
      });
      expect(walked.freshness).toBe("walked");
      expect(maintained).toBe(true);
      last = undefined;
      return changed;
    };

    let reached = false;
    for (let tries = 0; tries < 5 && !reached; tries++) reached = await attempt();
    expect(reached, "the change never landed during the walk in 5 tries").toBe(true);

    for (let i = 0; i < 20 && last?.freshness !== "live"; i++) last = await indexed("warm-up");
    const noIndex = await indexed("NEW_TOKEN", { index: false });
    expect(noIndex.freshness).toBe("live");
    expect(noIndex.lines.map((l) => l.path)).toEqual(["a.txt"]);
    expect((await plain("NEW_TOKEN")).lines.map((l) => l.path)).toEqual(["a.txt"]);
    const fast = await indexed("NEW_TOKEN");
    expect(fast.freshness).toBe("live");
    expect(fast.lines.map((l) => l.path)).toEqual(["a.txt"]);
  });
});

/**
 * A live tree closed by the registry (LRU eviction, a budget) while it is applying a
 * change (awaiting the walk of a new directory) goes on to commit into its emptied listing.
 */
import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forceRescan, type ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { HookedBackend, listed, liveRegistry, untilLive } from "../helpers/live.js";

function bigDir(dir: string, files: number, nestedRepo = false): void {
  mkdirSync(dir);
  if (nestedRepo) mkdirSync(join(dir, ".git"));
  for (let i = 0; i < files; i++) writeFileSync(join(dir, `f${i}.ts`), "");
}

describe("a live tree evicted while it applies a change", () => {
  it("answers (does not crash) when a removal and a new directory are applied", async () => {
    const a = await tempTree({ "old.ts": "", "keep.ts": "" });
    const b = await tempTree({ "b.ts": "" });
    const backend = new HookedBackend();
    const trees = liveRegistry(() => backend);
    await untilLive(trees, a);
    unlinkSync(join(a, "old.ts"));
    bigDir(join(a, "big"), 20_000);
    // While A's apply walks `big` (a walk of > 10 ms yields), another root is searched: with a
    // budget of one tree, A is the least recently used and is closed.
    trees.configure({ maxTrees: 1 });
    let second: Promise<unknown> | undefined;
    backend.afterSync = () => {
      second = trees.query(b, {});
    };
    const answer = (await trees.query(a, {})) as ScanResult;
    await second;
    expect(listed(answer)).toEqual(listed(await forceRescan(a, {})));
  });

  it("leaves no watch behind once every tree is closed", async () => {
    const a = await tempTree({ "keep.ts": "" });
    const b = await tempTree({ "b.ts": "" });
    const backend = new HookedBackend();
    const trees = liveRegistry(() => backend);
    await untilLive(trees, a);
    // A new directory that is the top of a nested repository: its sources get watched.
    bigDir(join(a, "big"), 20_000, true);
    trees.configure({ maxTrees: 1 });
    let second: Promise<unknown> | undefined;
    backend.afterSync = () => {
      second = trees.query(b, {});
    };
    await trees.query(a, {});
    await second;
    trees.closeAll();
    expect(backend.watchCount).toBe(0);
  });
});

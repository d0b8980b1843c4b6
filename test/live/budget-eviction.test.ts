/**
 * A tree that alone is over a budget is given up, but `#enforce` first evicts every
 * other live tree (oldest first) trying to make room it can never make.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { liveRegistry, untilLive } from "../helpers/live.js";

describe("the registry's budgets", () => {
  it("do not evict a live tree that fits to make room for one that can never fit", async () => {
    const small = await tempTree({ "a/x.ts": "" });
    const big = await tempTree({});
    for (let i = 0; i < 40; i++) mkdirSync(join(big, `d${i}`));
    const trees = liveRegistry();
    trees.configure({ maxWatches: 20 });
    await untilLive(trees, small);
    const over = (await trees.query(big, {})) as ScanResult;
    expect(over.unwatched).toMatch(/over the budget of 20/);
    // The small tree (3 watches: root, a, the root's parent) is still within the budget.
    const again = (await trees.query(small, {})) as ScanResult;
    expect(again.unwatched).toBeUndefined();
    expect(again.freshness).toBe("live");
  });
});

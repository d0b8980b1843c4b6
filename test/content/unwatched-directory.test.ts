import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForContentIndex } from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import { greps, untilLive } from "../helpers/content-index.js";

let root: string;
const { indexed, plain } = greps(() => root);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "freshfs-content-index-unwatched-"));
  mkdirSync(join(root, "X"));
  writeFileSync(join(root, "X", "f.txt"), "OLD_TOKEN here\n");
  writeFileSync(join(root, "other.txt"), "other\n");
});

afterAll(() => {
  liveTrees.closeAll();
  rmSync(root, { recursive: true, force: true });
});

describe("a directory the tree stopped watching", () => {
  it("a file changed while its directory was ignored (unwatched) is not vouched for by its old entry", async () => {
    await untilLive(indexed);
    await waitForContentIndex(root);
    expect((await indexed("OLD_TOKEN")).lines.map((l) => l.path)).toEqual(["X/f.txt"]);

    // The root's .ignore now ignores X: the tree walks again (rules of the whole tree) and
    // stops watching X. That answer is a walk: no index, no maintenance.
    writeFileSync(join(root, ".ignore"), "X/\n");
    const walked = await indexed("OLD_TOKEN");
    expect(walked.lines).toEqual([]);

    // Changed while nothing watches X.
    writeFileSync(join(root, "X", "f.txt"), "NEW_TOKEN here\n");

    // X is listed again: walked again and watched again.
    rmSync(join(root, ".ignore"));
    await indexed("warm-up");
    await untilLive(indexed);

    // The live tree alone (no index) answers right: only the index's old entry is wrong.
    const noIndex = await indexed("NEW_TOKEN", { index: false });
    expect(noIndex.freshness).toBe("live");
    expect(noIndex.lines.map((l) => l.path)).toEqual(["X/f.txt"]);
    const fast = await indexed("NEW_TOKEN");
    expect(fast.freshness).toBe("live");
    const slow = await plain("NEW_TOKEN");
    expect(slow.lines.map((l) => l.path)).toEqual(["X/f.txt"]);
    expect(fast.lines).toEqual(slow.lines);
  });
});

/**
 * A `.ignore` that is a symlink is read through (the walker follows it), but nothing
 * watches what it points at: a change of the target leaves the live tree on the old rules.
 */
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forceRescan, type ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { listed, liveRegistry, untilLive } from "../helpers/live.js";

describe("a .ignore that is a symlink", () => {
  it.each([
    ["in a watched directory of the tree", "rules.txt", "../rules.txt"],
    ["outside the tree", "../rules.txt", "../../rules.txt"],
  ])("to a file %s: a change of the target is in the next answer", async (_, file, target) => {
    const parent = await tempTree({ "root/sub/a.log": "", "root/sub/b.ts": "", "root/x": "" });
    const root = join(parent, "root");
    writeFileSync(join(root, file), "*.log\n");
    symlinkSync(target, join(root, "sub", ".ignore"));
    const trees = liveRegistry();
    await untilLive(trees, root);
    writeFileSync(join(root, file), "");
    const answer = (await trees.query(root, {})) as ScanResult;
    const walk = await forceRescan(root, {});
    expect(listed(walk)).toContain("file:sub/a.log");
    expect(listed(answer), `answered ${answer.freshness}`).toEqual(listed(walk));
  });
});

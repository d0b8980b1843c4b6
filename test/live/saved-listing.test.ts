/**
 * A saved listing (`live/saved-listing`) answering a tree's first calls while its walk runs: only cheap
 * calls that ask for it, only while the first walk is under way, and only when every walked
 * directory's stat and every rule file's print is the one saved, outside the racy window. A
 * name made in a directory, a rule file edited in place (no directory changes), or a save too
 * close to the last change: the call waits for the walk, whose answer has the change.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LiveTrees } from "../../src/live/registry.js";
import {
  SavedListing,
  type SavedListingData,
  savedListingOf,
  takeStamps,
} from "../../src/live/saved-listing.js";
import type { ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";

const POLICY = { includeHidden: false, useGitignore: true };

const registries: LiveTrees[] = [];
afterEach(() => {
  for (const registry of registries.splice(0)) registry.closeAll();
});

function registry(): LiveTrees {
  const made = new LiveTrees();
  registries.push(made);
  return made;
}

async function makeTree(): Promise<string> {
  const files: Record<string, string> = { ".ignore": "*.log\n", "top.txt": "t\n" };
  for (let d = 0; d < 5; d++) {
    files[`d${d}/a.txt`] = "a\n";
    files[`d${d}/b.log`] = "b\n";
    files[`d${d}/sub/c.ts`] = "c\n";
  }
  // Outside a git repository, `.ignore` files rule (as in rg); `.gitignore` ones do not.
  files["d0/.ignore"] = "*.ts\n";
  return tempTree(files);
}

/**
 * The tree's saved listing, as the daemon saves it: stamps, then a sync, then the listing. `age`: the
 * save dated this much later than now, so that the tree just made is out of the racy window.
 */
async function savedOf(root: string, age = 3000): Promise<SavedListingData> {
  const trees = registry();
  await trees.query(root, POLICY);
  const tree = trees.treeOf(root, POLICY);
  if (!tree) throw new Error("no tree");
  await tree.whenConfirmed(10_000);
  const parts = tree.stampParts();
  const stamps = takeStamps(tree.root, parts.dirs, parts.sources, parts.listing);
  const listing = (await trees.query(root, POLICY)) as ScanResult;
  expect(listing.freshness).toBe("live");
  const data = savedListingOf(tree, stamps, listing);
  trees.closeAll();
  return { ...data, savedAtNs: (BigInt(data.savedAtNs) + BigInt(age) * 1_000_000n).toString() };
}

const shape = (result: ScanResult | undefined) =>
  result?.entries.map((entry) => `${entry.type} ${entry.path}`);

function answered(trees: LiveTrees, root: string): number {
  return trees.describe().find((tree) => tree.root === root)?.fromSavedListing ?? 0;
}

describe("a saved listing", () => {
  it("answers the first cheap call as the walk would, and only while the first walk runs", async () => {
    const root = await makeTree();
    const data = await savedOf(root);
    const trees = registry();
    trees.plant(new SavedListing(data));
    const first = await trees.query(root, POLICY, {}, true);
    expect(answered(trees, root)).toBe(1);
    expect(first?.freshness).toBe("walked");
    const walked = await registry().query(root, POLICY);
    expect(shape(first)).toEqual(shape(walked));
    expect(first?.skipped.map((s) => s.path).sort()).toEqual(
      walked?.skipped.map((s) => s.path).sort(),
    );
    // The walk it started is done by the next call's turn: the saved listing is dropped.
    const tree = trees.treeOf(root, POLICY);
    await tree?.whenConfirmed(10_000);
    await trees.query(root, POLICY, {}, true);
    await trees.query(root, POLICY, {}, true);
    expect(answered(trees, root)).toBe(1);
  });

  it("never answers a call that does not ask for it (grep waits for the walk)", async () => {
    const root = await makeTree();
    const trees = registry();
    trees.plant(new SavedListing(await savedOf(root)));
    await trees.query(root, POLICY);
    expect(answered(trees, root)).toBe(0);
  });

  it("is not used once a name was made in a walked directory", async () => {
    const root = await makeTree();
    const data = await savedOf(root);
    writeFileSync(join(root, "d3", "sub", "new.txt"), "n\n");
    const trees = registry();
    trees.plant(new SavedListing(data));
    const first = await trees.query(root, POLICY, {}, true);
    expect(answered(trees, root)).toBe(0);
    expect(shape(first)).toContain("file d3/sub/new.txt");
  });

  it("is not used once a rule file was edited in place (its directory unchanged)", async () => {
    const root = await makeTree();
    const data = await savedOf(root);
    writeFileSync(join(root, "d0", ".ignore"), "*.txt\n");
    const trees = registry();
    trees.plant(new SavedListing(data));
    const first = await trees.query(root, POLICY, {}, true);
    expect(answered(trees, root)).toBe(0);
    expect(shape(first)).toContain("file d0/sub/c.ts");
    expect(shape(first)).not.toContain("file d0/a.txt");
    expect(shape(first)).toContain("file d1/a.txt");
  });

  it("is not used when saved within the racy window of a directory's last change", async () => {
    const root = await makeTree();
    mkdirSync(join(root, "late"));
    const data = await savedOf(root, 0);
    const trees = registry();
    trees.plant(new SavedListing(data));
    await trees.query(root, POLICY, {}, true);
    expect(answered(trees, root)).toBe(0);
  });

  it("of another format, or cut, is never planted", async () => {
    const root = await makeTree();
    const data = await savedOf(root);
    const trees = registry();
    trees.plant(new SavedListing({ ...data, format: 99 }));
    trees.plant(new SavedListing({ ...data, types: data.types.slice(1) }));
    await trees.query(root, POLICY, {}, true);
    expect(answered(trees, root)).toBe(0);
  });
});

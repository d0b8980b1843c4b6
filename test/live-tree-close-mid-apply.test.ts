/**
 * Review: a live tree closed by the registry (LRU eviction, a budget) while it is applying a
 * change (awaiting the walk of a new directory) goes on to commit into its emptied listing.
 */
import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FsWatchBackend, type WatchBackend, type WatchSubscriber } from "../src/live/backend.js";
import { LiveTrees } from "../src/live/registry.js";
import { forceRescan, type ScanResult } from "../src/scan/cache.js";
import { tempTree } from "./helpers/fs.js";

const open: LiveTrees[] = [];
afterEach(() => {
  for (const trees of open.splice(0)) trees.closeAll();
});

/** The real backend; `afterSync` runs (once) in the first check phase after a sync resolves. */
class HookedBackend implements WatchBackend {
  readonly inner = new FsWatchBackend();
  afterSync: (() => void) | undefined;
  get watchCount() {
    return this.inner.watchCount;
  }
  nextRequest() {
    return this.inner.nextRequest();
  }
  watch(s: WatchSubscriber, dirs: readonly string[], request: number) {
    this.inner.watch(s, dirs, request);
  }
  unwatch(s: WatchSubscriber, dirs: readonly string[]) {
    this.inner.unwatch(s, dirs);
  }
  async sync(signal?: AbortSignal) {
    await this.inner.sync(signal);
    const hook = this.afterSync;
    this.afterSync = undefined;
    if (hook) setImmediate(hook);
  }
}

const listed = (r: ScanResult) => r.entries.map((e) => `${e.type}:${e.path}`);

async function live(trees: LiveTrees, root: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const answer = (await trees.query(root, {})) as ScanResult;
    expect(listed(answer)).toEqual(listed(await forceRescan(root, {})));
    if (answer.freshness === "live") return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("never live");
}

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
    const trees = new LiveTrees(() => backend);
    open.push(trees);
    await live(trees, a);
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
    const trees = new LiveTrees(() => backend);
    open.push(trees);
    await live(trees, a);
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

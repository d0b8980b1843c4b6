/**
 * Test helpers for live trees: registries closed after each test, answers compared with a
 * fresh walk made right after them, and a backend that runs a hook after a sync.
 */
import { afterEach, expect } from "vitest";
import { FsWatchBackend, type WatchBackend, type WatchSubscriber } from "../../src/live/backend.js";
import { LiveTrees } from "../../src/live/registry.js";
import { forceRescan, type ScanPolicy, type ScanResult } from "../../src/scan/cache.js";
import { indexByExtension } from "../../src/scan/walk.js";

const registries: LiveTrees[] = [];

afterEach(() => {
  for (const trees of registries.splice(0)) trees.closeAll();
});

/** A registry of its own (the process's one is shared by every test), closed after the test. */
export function liveRegistry(makeBackend?: () => WatchBackend): LiveTrees {
  const trees = new LiveTrees(makeBackend);
  registries.push(trees);
  return trees;
}

export function listed(result: ScanResult): string[] {
  return result.entries.map((entry) => `${entry.type}:${entry.path}`);
}

export function skippedOf(result: ScanResult): string[] {
  return result.skipped.map(
    (file) => `${file.hidden ? "h" : "-"}${file.ignored ? "i" : "-"}:${file.path}`,
  );
}

function byExtension(index: ReadonlyMap<string, readonly { path: string }[]>) {
  return Object.fromEntries(
    [...index].map(([extension, bucket]) => [extension, bucket.map((e) => e.path)]).sort(),
  );
}

/**
 * The answer, and a fresh walk made right after it: listing, skipped files and glob's index by
 * extension must be equal.
 */
export async function exact(
  trees: LiveTrees,
  root: string,
  policy: ScanPolicy = {},
  label = "",
): Promise<ScanResult> {
  const answer = (await trees.query(root, policy)) as ScanResult;
  const walk = await forceRescan(root, policy);
  const what = `${label} answered ${answer.freshness} (hidden ${policy.includeHidden === true}): ${JSON.stringify(listed(answer))}`;
  expect(listed(answer), what).toEqual(listed(walk));
  expect(skippedOf(answer), what).toEqual(skippedOf(walk));
  if (answer.byExtension) {
    // glob's index, kept per change, is the one a fresh listing would get.
    expect(byExtension(answer.byExtension), what).toEqual(
      byExtension(indexByExtension(walk.entries)),
    );
  }
  return answer;
}

/** Calls (each answer exact) until the tree answers live: its watches set up and confirmed. */
export async function untilLive(
  trees: LiveTrees,
  root: string,
  policy: ScanPolicy = {},
): Promise<void> {
  const until = performance.now() + 10_000;
  while (performance.now() < until) {
    if ((await exact(trees, root, policy, "warm-up")).freshness === "live") return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the tree never became live");
}

/** The real backend; `afterSync` runs (once) in the first check phase after a sync resolves. */
export class HookedBackend implements WatchBackend {
  readonly inner = new FsWatchBackend();
  afterSync: (() => void) | undefined;
  get watchCount() {
    return this.inner.watchCount;
  }
  nextRequest() {
    return this.inner.nextRequest();
  }
  watch(subscriber: WatchSubscriber, dirs: readonly string[], request: number) {
    this.inner.watch(subscriber, dirs, request);
  }
  unwatch(subscriber: WatchSubscriber, dirs: readonly string[]) {
    this.inner.unwatch(subscriber, dirs);
  }
  async sync(signal?: AbortSignal) {
    await this.inner.sync(signal);
    const hook = this.afterSync;
    this.afterSync = undefined;
    if (hook) setImmediate(hook);
  }
}

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ContentIndexes } from "../../src/content/registry.js";
import type { LiveTree } from "../../src/live/tree.js";
import type { ScanResult } from "../../src/scan/cache.js";

const dirs: string[] = [];
function tree(name: string, file: string): { tree: LiveTree; listing: ScanResult; root: string } {
  const root = mkdtempSync(join(tmpdir(), `freshfs-content-index-${name}-`));
  dirs.push(root);
  writeFileSync(join(root, file), `hello from ${file}\n`);
  return {
    root,
    tree: { isClosed: false, settled: true, root, observe() {} } as unknown as LiveTree,
    listing: { entries: [{ type: "file", path: file }] } as unknown as ScanResult,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(() => {
  vi.useRealTimers();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the build thread ended by its idle timer", () => {
  it("a run dispatched before the old thread's exit event is not taken for the old thread's", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const registry = new ContentIndexes();
    registry.configure({ enabled: true });
    const a = tree("a", "a.txt");
    const b = tree("b", "b.txt");
    const indexA = registry.of(a.tree);
    if (!indexA) throw new Error("no index");
    registry.maintain(indexA, a.listing);
    await registry.waitFor(a.root);
    expect(registry.stats(a.root)[0]).toMatchObject({ files: 1, building: 0, full: false });

    // Idle for IDLE_MS: the timer calls terminate(); the thread's "exit" event comes later.
    vi.advanceTimersByTime(10_000);
    // Before it comes, a change and a grep's maintenance start a new thread with a run of A,
    // and queue one of B.
    indexA.changed("a.txt");
    registry.maintain(indexA, a.listing);
    const indexB = registry.of(b.tree);
    if (!indexB) throw new Error("no index");
    registry.maintain(indexB, b.listing);
    vi.useRealTimers();

    const waited = await Promise.race([
      Promise.all([registry.waitFor(a.root), registry.waitFor(b.root)]).then(() => "done"),
      sleep(5000).then(() => "hung"),
    ]);
    const statsA = registry.stats(a.root)[0];
    const statsB = registry.stats(b.root)[0];
    // Nothing was over any budget, and no thread failed: both indexes should be built.
    expect({ waited, statsA, statsB }).toMatchObject({
      waited: "done",
      statsA: { full: false, building: 0, files: 1 },
      statsB: { full: false, building: 0, files: 1 },
    });
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { waitForContentIndex } from "../../src/index.js";
import { FsWatchBackend } from "../../src/live/backend.js";
import { liveTrees } from "../../src/live/registry.js";
import { greps, untilLive } from "../helpers/content-index.js";

let root: string;
const { indexed, plain } = greps(() => root);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "freshfs-content-index-newdir-"));
  writeFileSync(join(root, "a.txt"), "a\n");
});

afterAll(() => {
  vi.restoreAllMocks();
  liveTrees.closeAll();
  rmSync(root, { recursive: true, force: true });
});

describe("a file in a directory whose watch is not set up yet", () => {
  it("is not vouched for by an entry read before the watch", async () => {
    await untilLive(indexed);
    await waitForContentIndex(root);

    // The watcher's thread is busy (a large setup ahead of it, say) when the next watch is
    // asked for: modelled by holding it just before the request for D is posted.
    let release: (() => void) | undefined;
    const watch = FsWatchBackend.prototype.watch;
    vi.spyOn(FsWatchBackend.prototype, "watch").mockImplementation(function (
      this: FsWatchBackend,
      subscriber,
      dirs,
      request,
    ) {
      if (!release && dirs.some((dir) => dir.endsWith("/D"))) release = this.stall(30_000);
      return watch.call(this, subscriber, dirs, request);
    });

    // Another process makes D and a file in it; the next grep applies it and answers live.
    mkdirSync(join(root, "D"));
    writeFileSync(join(root, "D", "f.txt"), "OLD_TOKEN\n");
    const first = await indexed("OLD_TOKEN");
    expect(first.freshness).toBe("live");
    expect(first.lines.map((l) => l.path)).toEqual(["D/f.txt"]);
    expect(release).toBeDefined();
    // The index reads D/f.txt after that grep.
    await waitForContentIndex(root);

    // D/f.txt changes before D's watch is in place; then the watcher gets to it.
    writeFileSync(join(root, "D", "f.txt"), "NEW_TOKEN\n");
    release?.();

    await untilLive(indexed);
    const noIndex = await indexed("NEW_TOKEN", { index: false });
    expect(noIndex.freshness).toBe("live");
    expect(noIndex.lines.map((l) => l.path)).toEqual(["D/f.txt"]);
    expect((await plain("NEW_TOKEN")).lines.map((l) => l.path)).toEqual(["D/f.txt"]);
    const fast = await indexed("NEW_TOKEN");
    expect(fast.freshness).toBe("live");
    expect(fast.lines.map((l) => l.path)).toEqual(["D/f.txt"]);
  });
});

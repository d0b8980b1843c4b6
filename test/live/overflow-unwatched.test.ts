/**
 * The watcher's thread detects an overflow by counting the events it hands on, but
 * libuv drops events of watches closed before the queue is read. When most of an overflowed
 * queue belongs to a directory unwatched meanwhile (another tree evicted), the count stays low,
 * the kernel's loss of another tree's event goes unseen, and that tree answers "live" and stale.
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsWatchBackend } from "../../src/live/backend.js";
import { forceRescan, type ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { listed, liveRegistry, untilLive } from "../helpers/live.js";

describe("an overflow of the kernel's queue", () => {
  it("is seen even when the flooded directory's watch was closed before the queue was read", async () => {
    const flooded = await tempTree({ "flood/seed": "" });
    const quiet = await tempTree({ "other/keep": "", "other/stay": "" });
    const backend = new FsWatchBackend();
    const trees = liveRegistry(() => backend);
    await untilLive(trees, flooded);
    await untilLive(trees, quiet);
    const queued = Number(
      execFileSync("cat", ["/proc/sys/fs/inotify/max_queued_events"]).toString().trim(),
    );
    const release = backend.stall(60_000);
    const fds = [0, 1].map((i) => openSync(join(flooded, "flood", `f${i}`), "w"));
    for (let i = 0; i < queued + 2000; i++) writeSync(fds[i % 2] as number, "x");
    for (const fd of fds) closeSync(fd);
    // The queue is full: this event is dropped by the kernel.
    unlinkSync(join(quiet, "other", "keep"));
    // The flooded tree is dropped (a budget of one tree; `quiet` was used last).
    trees.configure({ maxTrees: 1 });
    release();
    const answer = (await trees.query(quiet, {})) as ScanResult;
    expect(listed(answer), `answered ${answer.freshness}`).toEqual(
      listed(await forceRescan(quiet, {})),
    );
  });
});

/**
 * The per-path lock the write path runs check → write → record under.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { FreshfsError, withPathLock } from "../../src/index.js";
import { KeyedLock } from "../../src/state/lock.js";
import { tempTree } from "../helpers/fs.js";

/** Runs `users` concurrent critical sections and reports how many ever overlapped. */
async function contend(users: number, spellings: readonly string[]) {
  let inside = 0;
  let overlaps = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: users }, (_, i) =>
      withPathLock(spellings[i % spellings.length] as string, async () => {
        inside++;
        if (inside > 1) overlaps++;
        order.push(i);
        // Yield in several ways inside the section, as a real check → write → record does.
        await sleep(i % 3);
        await new Promise((done) => setImmediate(done));
        await Promise.resolve();
        inside--;
      }),
    ),
  );
  return { overlaps, order };
}

describe("withPathLock", () => {
  it("never lets 200 concurrent users of one path interleave", async () => {
    const dir = await tempTree({ "a.txt": "x" });
    const { overlaps, order } = await contend(200, [join(dir, "a.txt")]);
    expect(overlaps).toBe(0);
    expect(order).toHaveLength(200);
  });

  it("shares one lock between every spelling of a file", async () => {
    const dir = await tempTree({ "real/a.txt": "x" });
    await symlink(join(dir, "real"), join(dir, "link"));
    const spellings = [
      join(dir, "real", "a.txt"),
      join(dir, "link", "a.txt"),
      `${dir}/real/../real/a.txt`,
    ];
    expect((await contend(60, spellings)).overlaps).toBe(0);
  });

  it("lets different paths run at the same time", async () => {
    const dir = await tempTree({ "a.txt": "x", "b.txt": "y" });
    let inside = 0;
    let most = 0;
    await Promise.all(
      ["a.txt", "b.txt"].map((name) =>
        withPathLock(join(dir, name), async () => {
          most = Math.max(most, ++inside);
          await sleep(20);
          inside--;
        }),
      ),
    );
    expect(most).toBe(2);
  });

  it("locks a path that does not exist yet (a file about to be created)", async () => {
    const dir = await tempTree();
    const { overlaps } = await contend(20, [join(dir, "new", "file.txt")]);
    expect(overlaps).toBe(0);
  });

  it("passes the result and the error of the section through, and keeps serving after a throw", async () => {
    const dir = await tempTree({ "a.txt": "x" });
    const file = join(dir, "a.txt");
    await expect(withPathLock(file, () => 42)).resolves.toBe(42);
    await expect(
      withPathLock(file, () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await expect(withPathLock(file, async () => "after")).resolves.toBe("after");
  });
});

describe("KeyedLock", () => {
  it("serves a key in the order the callers asked", async () => {
    const lock = new KeyedLock();
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        lock.run("k", async () => {
          await sleep(i % 3);
          order.push(i);
        }),
      ),
    );
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it("stops a waiter on abort without breaking the queue, and leaves no state behind", async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    let releaseFirst!: () => void;
    const first = lock.run("k", async () => {
      events.push("first in");
      await new Promise<void>((done) => {
        releaseFirst = done;
      });
      events.push("first out");
    });
    const controller = new AbortController();
    const second = lock.run("k", () => events.push("second ran"), { signal: controller.signal });
    const third = lock.run("k", () => events.push("third in"));
    controller.abort();
    const error = await second.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(FreshfsError);
    expect((error as FreshfsError).code).toBe("ABORTED");
    releaseFirst();
    await Promise.all([first, third]);
    expect(events).toEqual(["first in", "first out", "third in"]);
    expect(lock.size).toBe(0);
  });

  it("refuses at once when the signal has already fired", async () => {
    const lock = new KeyedLock();
    const error = await lock.run("k", () => 1, { signal: AbortSignal.abort() }).catch((e) => e);
    expect((error as FreshfsError).code).toBe("ABORTED");
    expect(lock.size).toBe(0);
  });
});

describe("lock edge cases", () => {
  it("keeps one key for a dangling symlink before and after its target is created", async () => {
    const dir = await tempTree();
    const link = join(dir, "link.txt");
    await symlink(join(dir, "target.txt"), link);
    let inside = 0;
    let most = 0;
    const section = (body: () => Promise<void>) => async () => {
      most = Math.max(most, ++inside);
      await body();
      inside--;
    };
    const first = withPathLock(
      link,
      section(async () => {
        await writeFile(link, "created through the link\n");
        await sleep(30);
      }),
    );
    await sleep(5);
    const second = withPathLock(
      link,
      section(() => sleep(5)),
    );
    await Promise.all([first, second]);
    expect(most).toBe(1);
  });

  it("shares one lock between a path and a spelling with `..` after a symlink", async () => {
    const dir = await tempTree({ "other/config.ts": "x", "other/sub/.keep": "" });
    await mkdir(join(dir, "proj"));
    await symlink(join(dir, "other", "sub"), join(dir, "proj", "link"));
    // The kernel resolves proj/link/.. to other/, so this is other/config.ts.
    const spellings = [join(dir, "other", "config.ts"), `${dir}/proj/link/../config.ts`];
    expect((await contend(40, spellings)).overlaps).toBe(0);
  });

  it("takes several paths in one call without deadlocking against the reverse order", async () => {
    const dir = await tempTree({ "old.txt": "x" });
    const [a, b] = [join(dir, "old.txt"), join(dir, "new.txt")];
    let done = 0;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        withPathLock(i % 2 === 0 ? [a, b] : [b, a], async () => {
          await sleep(1);
          done++;
        }),
      ),
    );
    expect(done).toBe(20);
  });

  it("refuses a lock taken inside another, instead of waiting forever", async () => {
    const dir = await tempTree({ "a.txt": "x", "b.txt": "y" });
    const [a, b] = [join(dir, "a.txt"), join(dir, "b.txt")];
    for (const inner of [a, b]) {
      const error = await withPathLock(a, () => withPathLock(inner, () => "never")).catch(
        (thrown: unknown) => thrown,
      );
      expect((error as FreshfsError).code).toBe("DEADLOCK");
    }
    // Released cleanly: the path locks again at once.
    await expect(withPathLock(a, () => "again")).resolves.toBe("again");
  });

  it("serves one path in the order the callers asked", async () => {
    const dir = await tempTree({ "a.txt": "x" });
    const { order } = await contend(50, [join(dir, "a.txt")]);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});

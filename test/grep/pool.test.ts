/**
 * grep's worker pool: one per process, at most `max` threads, first come first served. Many
 * concurrent greps answer as they do one at a time, on no more threads than the pool holds; a
 * search waiting for a worker honours its abort signal and its deadline without ever taking
 * one; an abort ends a worker stuck in a regex; a long search takes turns with a short one.
 */
import { existsSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { type GrepOptions, type GrepResult, grep } from "../../src/index.js";
import { grepPoolStats } from "../../src/search/grep/pool.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { threads } from "../helpers/proc.js";

// What is tested is the pool of JavaScript workers, which the native core does not use.
process.env.FRESHFS_NATIVE = "0";

const HAS_PROC = existsSync("/proc/self/status");

/** Runs `op` with `sample` called every millisecond beside it, and once more at the end. */
async function sampled<T>(op: () => Promise<T>, sample: () => void): Promise<T> {
  const timer = setInterval(sample, 1);
  try {
    return await op();
  } finally {
    clearInterval(timer);
    sample();
  }
}

// (a+)+$, inside a lookahead (which the line prefilter cannot look into), backtracks exponentially on a run of a's that ends otherwise: it never finishes here.
const HOSTILE = `${"a".repeat(100_000)}!\n`;

/**
 * Searches that hold every worker of the pool, each stuck in a regex on its one file, until
 * `abort` ends them; resolves once the pool lends nothing more and every worker is busy.
 */
async function occupyPool(): Promise<{ abort: () => Promise<void> }> {
  const { max } = grepPoolStats();
  const controllers: AbortController[] = [];
  const searches: Promise<unknown>[] = [];
  for (let i = 0; i < max; i++) {
    const root = await tempTree({ "evil.txt": HOSTILE });
    const controller = new AbortController();
    controllers.push(controller);
    const search = grep("(?=(a+)+$)", {
      path: root,
      syntax: "javascript",
      fileTimeoutMs: 60_000,
      signal: controller.signal,
    });
    searches.push(search.catch((error: unknown) => error));
  }
  await vi.waitFor(() => {
    const stats = grepPoolStats();
    expect(stats.workers - stats.idle - stats.stopping).toBe(max);
  });
  // Let the workers load and reach the regex (each reads its one file in far less).
  await new Promise((resolve) => setTimeout(resolve, 300));
  return {
    abort: async () => {
      for (const controller of controllers) controller.abort();
      for (const outcome of await Promise.all(searches)) {
        expect(outcome).toMatchObject({ code: "ABORTED" });
      }
    },
  };
}

describe("many concurrent greps", () => {
  const QUERIES: readonly [string, GrepOptions][] = [
    ["needle", {}],
    ["needle\\d+", { outputMode: "count" }],
    ["HAYSTACK", { ignoreCase: true, outputMode: "files_with_matches" }],
    ["line [0-9]+ of", { limit: 7 }],
    ["needle", { context: 1, offset: 3, limit: 5 }],
    ["absent-from-every-file", {}],
  ];

  async function tree(): Promise<string> {
    const files: Record<string, string> = {};
    for (let f = 0; f < 50; f++) {
      const lines = Array.from({ length: 40 }, (_, i) =>
        i % (f + 3) === 0 ? `needle${f} at line ${i} of haystack` : `line ${i} of file ${f}`,
      );
      files[`dir${f % 5}/file-${String(f).padStart(2, "0")}.txt`] = `${lines.join("\n")}\n`;
    }
    return tempTree(files);
  }

  it("300 at once answer as one at a time, never with more workers than the pool's bound", async () => {
    const root = await tree();
    const alone: GrepResult[] = [];
    for (const [pattern, options] of QUERIES)
      alone.push(await grep(pattern, { path: root, ...options }));
    const before = grepPoolStats();
    let mostWaiting = 0;
    const results = await sampled(
      () =>
        Promise.all(
          Array.from({ length: 300 }, (_, i) => {
            const [pattern, options] = QUERIES[i % QUERIES.length] as [string, GrepOptions];
            return grep(pattern, { path: root, ...options });
          }),
        ),
      () => {
        mostWaiting = Math.max(mostWaiting, grepPoolStats().waiting);
      },
    );
    results.forEach((result, i) => {
      expect(result).toEqual(alone[i % QUERIES.length]);
    });
    const after = grepPoolStats();
    // The searches did queue (the bound was put to the test), and the pool never grew past it.
    expect(mostWaiting).toBeGreaterThan(0);
    expect(after.peak).toBeLessThanOrEqual(after.max);
    expect(after.lent - before.lent).toBeGreaterThanOrEqual(300);
    expect(after.terminated).toBe(before.terminated);
  });

  it.skipIf(!HAS_PROC)(
    "300 at once run on at most the pool's threads (counted by the kernel)",
    async () => {
      const root = await tree();
      await grep("needle", { path: root });
      const stats = grepPoolStats();
      // Threads that are not the pool's now; the pool may add up to `max`. The margin is for
      // the kernel's count lagging a worker that has exited (its 'exit' frees the place).
      const others = threads() - stats.workers;
      const bound = others + stats.max + 1;
      let most = 0;
      const results = await sampled(
        () =>
          Promise.all(
            Array.from({ length: 300 }, (_, i) =>
              grep(i % 2 ? "needle" : "line [0-9]+", { path: root, outputMode: "count" }),
            ),
          ),
        () => {
          most = Math.max(most, threads());
        },
      );
      expect(results.every((result) => result.counts.length > 0)).toBe(true);
      console.info(
        `300 concurrent greps: at most ${most} threads (${others} before the pool's, pool of ${stats.max})`,
      );
      expect(most).toBeLessThanOrEqual(bound);
    },
  );
});

describe("a search waiting for a worker", () => {
  it("leaves the queue with ABORTED when its signal fires, never having taken a worker", async () => {
    const blockers = await occupyPool();
    try {
      const root = await tempTree({ "a.txt": "needle\n" });
      const controller = new AbortController();
      const lentBefore = grepPoolStats().lent;
      const waiting = grep("needle", { path: root, signal: controller.signal });
      await vi.waitFor(() => expect(grepPoolStats().waiting).toBe(1));
      controller.abort();
      await rejectsWith(waiting, "ABORTED");
      expect(grepPoolStats()).toMatchObject({ waiting: 0, lent: lentBefore });
    } finally {
      await blockers.abort();
    }
  });

  it("returns at its deadline, empty and flagged partial, never having taken a worker", async () => {
    const blockers = await occupyPool();
    try {
      const root = await tempTree({ "a.txt": "needle\n", "b.txt": "needle\n" });
      const lentBefore = grepPoolStats().lent;
      const result = await grep("needle", { path: root, timeoutMs: 200 });
      expect(result).toMatchObject({ partial: true, lines: [], filesSearched: 2 });
      expect(result.warnings.join("\n")).toContain("stopped after 200 ms: results are partial");
      expect(grepPoolStats()).toMatchObject({ waiting: 0, lent: lentBefore });
    } finally {
      await blockers.abort();
    }
  });
});

describe("an abort while a worker is stuck in a regex", () => {
  it("rejects with ABORTED and terminates the worker, whose place the pool fills when needed", async () => {
    const { max } = grepPoolStats();
    const blockers = await occupyPool();
    const before = grepPoolStats();
    const threadsBefore = HAS_PROC ? threads() : 0;
    await blockers.abort();
    // Each worker was asked to stop and is within its grace: none of them answers, being deep
    // in the regex, so each is terminated.
    expect(grepPoolStats().stopping).toBe(max);
    await vi.waitFor(() =>
      expect(grepPoolStats()).toMatchObject({
        terminated: before.terminated + max,
        workers: before.workers - max,
        stopping: 0,
      }),
    );
    if (HAS_PROC) expect(threads()).toBeLessThanOrEqual(threadsBefore - max);
    const root = await tempTree({ "a.txt": "needle\n" });
    expect((await grep("needle", { path: root })).lines).toHaveLength(1);
    expect(grepPoolStats().started).toBeGreaterThan(before.started);
  });
});

describe("a long search and a short one", () => {
  it("take turns: the short one is served after one of the long one's ranges, not after all", async () => {
    // No literal, and a run of a's it backtracks over (inside a lookahead, which the line
    // prefilter cannot decide): about a millisecond per file, so each range of 512 files keeps
    // its worker for a good half second; six ranges, two lanes.
    const FILES = 6 * 512;
    const files: Record<string, string> = {};
    for (let f = 0; f < FILES; f++) {
      files[`f${String(f).padStart(4, "0")}.txt`] = `${"a".repeat(1000)}\n`;
    }
    const longRoot = await tempTree(files);
    const shortRoot = await tempTree({ "a.txt": "ab\n" });
    const { max } = grepPoolStats();
    let searched = 0;
    const long = grep("(?=[ab]*[cd])", {
      path: longRoot,
      syntax: "javascript",
      outputMode: "count",
      onProgress: (progress) => {
        if (progress.phase === "search") searched = progress.done;
      },
    });
    // The long search holds its two workers (on a pool of two, all of them) before the short asks.
    await vi.waitFor(() => {
      const stats = grepPoolStats();
      expect(stats.workers - stats.idle).toBeGreaterThanOrEqual(Math.min(2, max));
    });
    const short = await grep("b", { path: shortRoot, outputMode: "count" });
    const searchedMeanwhile = searched;
    expect(short.counts).toEqual([{ path: "a.txt", count: 1 }]);
    // Served once the first ranges were done (1,024 files, progress being reported every 100
    // ms): a pool that let the long search keep its workers would have served it after five.
    expect(searchedMeanwhile).toBeLessThan(FILES / 2);
    expect((await long).counts).toEqual([]);
  });
});

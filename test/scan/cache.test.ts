/**
 * The shared scan cache, rule by rule. A hit is recognized by identity: it returns the very array
 * the walk produced.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  FreshfsError,
  getOrScan,
  invalidateFsScanAfterDelete,
  invalidateFsScanAfterRename,
  invalidateFsScanAfterWrite,
  invalidateFsScanCache,
  scanCachePolicy,
} from "../../src/index.js";
import { ScanCache } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

afterEach(() => configureScanCache(undefined));

const files = (entries: readonly { path: string; type: string }[]) =>
  entries.filter((entry) => entry.type === "file").map((entry) => entry.path);

describe("key", () => {
  it("keeps hidden and non-hidden, gitignore and no-gitignore listings apart", async () => {
    const root = await tempTree({ ".hidden": "", "a.txt": "" });
    const plain = await getOrScan(root);
    const hidden = await getOrScan(root, { includeHidden: true });
    const raw = await getOrScan(root, { useGitignore: false });
    expect(files(plain.entries)).toEqual(["a.txt"]);
    expect(files(hidden.entries)).toEqual([".hidden", "a.txt"]);
    expect(new Set([plain.entries, hidden.entries, raw.entries]).size).toBe(3);
    expect((await getOrScan(root, { includeHidden: true })).entries).toBe(hidden.entries);
  });

  it("shares one listing between spellings of the same root", async () => {
    const root = await tempTree({ "a.txt": "" });
    const first = await getOrScan(root);
    expect((await getOrScan(`${root}/.`)).entries).toBe(first.entries);
    expect((await getOrScan(relative(process.cwd(), root))).entries).toBe(first.entries);
  });
});

describe("freshness", () => {
  it("serves the listing within the TTL, with its age, and walks again after it", async () => {
    configureScanCache({ ttlMs: 150 });
    const root = await tempTree({ "a.txt": "" });
    const first = await getOrScan(root);
    expect(first.cacheAgeMs).toBe(0);
    writeFileSync(join(root, "b.txt"), "");
    await sleep(20);
    const hit = await getOrScan(root);
    expect(hit.entries).toBe(first.entries);
    expect(hit.cacheAgeMs).toBeGreaterThanOrEqual(15);
    expect(files(hit.entries)).toEqual(["a.txt"]); // stale within the TTL, by design
    await sleep(150);
    const next = await getOrScan(root);
    expect(next.cacheAgeMs).toBe(0);
    expect(files(next.entries)).toEqual(["a.txt", "b.txt"]);
  });

  it("bypasses the cache entirely with a TTL of 0", async () => {
    const cache = new ScanCache();
    cache.configure({ ttlMs: 0 });
    const root = await tempTree({ "a.txt": "" });
    const first = await cache.getOrScan(root);
    const second = await cache.getOrScan(root);
    expect(second.entries).not.toBe(first.entries);
    expect(second.cacheAgeMs).toBe(0);
    await cache.forceRescan(root, {}, { store: true });
    expect(cache.stats.listings).toBe(0);
  });

  it("counts the TTL from the end of the walk, not its start", async () => {
    const root = await tempTree();
    for (let d = 0; d < 60; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 300; f++) writeFileSync(join(root, `d${d}`, `f${f}`), "");
    }
    const started = performance.now();
    const first = await getOrScan(root);
    const walkMs = performance.now() - started;
    const hit = await getOrScan(root);
    expect(hit.entries).toBe(first.entries);
    expect(hit.cacheAgeMs).toBeLessThan(walkMs);
  });

  it("stores a forced rescan only when asked", async () => {
    const cache = new ScanCache();
    cache.configure({ ttlMs: 60_000 });
    const root = await tempTree({ "a.txt": "" });
    await cache.forceRescan(root);
    expect(cache.stats.listings).toBe(0);
    const stored = await cache.forceRescan(root, {}, { store: true });
    expect(cache.stats.listings).toBe(1);
    expect((await cache.getOrScan(root)).entries).toBe(stored.entries);
  });
});

describe("concurrency", () => {
  it("shares one walk between concurrent callers of one key", async () => {
    const root = await tempTree({ "a.txt": "", "b/c.txt": "" });
    const results = await Promise.all(Array.from({ length: 10 }, () => getOrScan(root)));
    for (const result of results) expect(result.entries).toBe(results[0]?.entries);
  });

  it("neither stores nor hands out a walk that an invalidation overlapped", async () => {
    const root = await tempTree({ "a.txt": "" });
    const during = getOrScan(root);
    writeFileSync(join(root, "b.txt"), "");
    invalidateFsScanAfterWrite(join(root, "b.txt"));
    const after = getOrScan(root);
    const [old, fresh] = await Promise.all([during, after]);
    expect(fresh.entries).not.toBe(old.entries);
    expect(files(fresh.entries)).toEqual(["a.txt", "b.txt"]);
    expect((await getOrScan(root)).entries).toBe(fresh.entries);
  });

  it("lets a caller stop waiting while others still get the walk", async () => {
    const root = await tempTree({ "a.txt": "" });
    const controller = new AbortController();
    const leaving = getOrScan(root, {}, { signal: controller.signal });
    const staying = getOrScan(root);
    controller.abort();
    const error = await leaving.catch((thrown: unknown) => thrown);
    expect((error as FreshfsError).code).toBe("ABORTED");
    expect(files((await staying).entries)).toEqual(["a.txt"]);
  });
});

describe("bounds", () => {
  it("keeps at most maxEntries listings, evicting the oldest created", async () => {
    const cache = new ScanCache();
    cache.configure({ ttlMs: 60_000, maxEntries: 2 });
    const roots = await Promise.all([
      tempTree({ a: "" }),
      tempTree({ b: "" }),
      tempTree({ c: "" }),
    ]);
    const firsts = [];
    for (const root of roots) firsts.push(await cache.getOrScan(root));
    expect(cache.stats.listings).toBe(2);
    expect((await cache.getOrScan(roots[2] as string)).entries).toBe(firsts[2]?.entries);
    expect((await cache.getOrScan(roots[0] as string)).entries).not.toBe(firsts[0]?.entries);
  });

  it("keeps listings within the byte budget", async () => {
    const cache = new ScanCache();
    const root = await tempTree(
      Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`file-${i}.txt`, ""])),
    );
    cache.configure({ ttlMs: 60_000, maxBytes: 1000 });
    await cache.getOrScan(root);
    expect(cache.stats).toEqual({ listings: 0, bytes: 0 });
    cache.configure({ ttlMs: 60_000, maxBytes: 100_000 });
    await cache.getOrScan(root);
    expect(cache.stats.listings).toBe(1);
    expect(cache.stats.bytes).toBeGreaterThan(50 * 10);
  });
});

describe("policy from the environment", () => {
  const names = ["FS_SCAN_CACHE_TTL_MS", "FS_SCAN_EMPTY_RECHECK_MS", "FS_SCAN_CACHE_MAX_ENTRIES"];
  afterEach(() => {
    for (const name of names) delete process.env[name];
  });

  it("reads the variables, and falls back to the defaults on invalid values, saying so once", async () => {
    configureScanCache(undefined);
    expect(scanCachePolicy()).toEqual({
      ttlMs: 1000,
      emptyRecheckMs: 200,
      maxEntries: 16,
      maxBytes: 64 * 1024 * 1024,
    });
    process.env.FS_SCAN_CACHE_TTL_MS = "0";
    process.env.FS_SCAN_EMPTY_RECHECK_MS = "50";
    process.env.FS_SCAN_CACHE_MAX_ENTRIES = "4";
    expect(scanCachePolicy()).toMatchObject({ ttlMs: 0, emptyRecheckMs: 50, maxEntries: 4 });

    const warnings: string[] = [];
    const listener = (warning: Error) => warnings.push(warning.message);
    process.on("warning", listener);
    try {
      process.env.FS_SCAN_CACHE_TTL_MS = "soon";
      process.env.FS_SCAN_CACHE_MAX_ENTRIES = "-3";
      for (let i = 0; i < 3; i++)
        expect(scanCachePolicy()).toMatchObject({ ttlMs: 1000, maxEntries: 16 });
      await sleep(10); // warnings are emitted on the next tick
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toContain('FS_SCAN_CACHE_TTL_MS="soon"');
    } finally {
      process.off("warning", listener);
    }
  });

  it("rejects an invalid configuration object", () => {
    expect(() => configureScanCache({ ttlMs: -1 })).toThrow(FreshfsError);
    expect(() => configureScanCache({ maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
});

describe("invalidation", () => {
  async function cachedRoots() {
    const base = await tempTree({
      "a/b/c/file.txt": "",
      "a/bc/file.txt": "",
      "other/file.txt": "",
    });
    const roots = {
      base,
      a: join(base, "a"),
      ab: join(base, "a", "b"),
      abc: join(base, "a", "b", "c"),
      abcSibling: join(base, "a", "bc"),
      other: join(base, "other"),
    };
    const listings = new Map<string, readonly unknown[]>();
    for (const [name, root] of Object.entries(roots))
      listings.set(name, (await getOrScan(root)).entries);
    const kept = async () => {
      const out: string[] = [];
      for (const [name, root] of Object.entries(roots)) {
        if (!existsSync(root)) continue;
        if ((await getOrScan(root)).entries === listings.get(name)) out.push(name);
      }
      return out.sort();
    };
    return { roots, kept };
  }

  it("drops ancestors and descendants of the path, component-wise", async () => {
    const { roots, kept } = await cachedRoots();
    invalidateFsScanCache(roots.ab);
    expect(await kept()).toEqual(["abcSibling", "other"]);
  });

  it("resolves a relative path against the cwd", async () => {
    const { roots, kept } = await cachedRoots();
    invalidateFsScanCache(relative(process.cwd(), join(roots.other, "file.txt")));
    expect(await kept()).toEqual(["a", "ab", "abc", "abcSibling"]);
  });

  it("resolves a path that no longer exists through its parent", async () => {
    const { roots, kept } = await cachedRoots();
    rmSync(roots.abc, { recursive: true });
    invalidateFsScanAfterDelete(roots.abc);
    expect(await kept()).toEqual(["abcSibling", "other"]);
  });

  it("invalidates both sides of a rename", async () => {
    const { roots, kept } = await cachedRoots();
    renameSync(join(roots.other, "file.txt"), join(roots.abcSibling, "moved.txt"));
    invalidateFsScanAfterRename(join(roots.other, "file.txt"), join(roots.abcSibling, "moved.txt"));
    expect(await kept()).toEqual(["ab", "abc"]);
  });

  it("drops everything without a path", async () => {
    const { kept } = await cachedRoots();
    invalidateFsScanCache();
    expect(await kept()).toEqual([]);
  });
});

describe("what an invalidation reaches", () => {
  it("refreshes a listing when a symlink is created or moved in it, wherever the link points", async () => {
    const root = await tempTree({ "a.txt": "" });
    const outside = await tempTree({ "target.txt": "" });
    const first = await getOrScan(root);
    symlinkSync(join(outside, "target.txt"), join(root, "link"));
    invalidateFsScanAfterWrite(join(root, "link"));
    const second = await getOrScan(root);
    expect(second.entries).not.toBe(first.entries);
    expect(second.entries.map((e) => e.path)).toEqual(["a.txt", "link"]);
    symlinkSync(join(outside, "missing"), join(root, "dangling"));
    invalidateFsScanAfterWrite(join(root, "dangling"));
    expect((await getOrScan(root)).entries.map((e) => e.path)).toEqual([
      "a.txt",
      "dangling",
      "link",
    ]);
  });

  it("refreshes listings below an ignore file that changed, and a work tree whose .git/info changed", async () => {
    const repo = await tempTree({ "sub/a.log": "", "sub/b.txt": "" });
    execFileSync("git", ["init", "-q", repo], { env: isolatedGitEnv(repo) });
    expect(files((await getOrScan(join(repo, "sub"))).entries)).toEqual(["a.log", "b.txt"]);
    writeFileSync(join(repo, ".gitignore"), "*.log\n");
    invalidateFsScanAfterWrite(join(repo, ".gitignore"));
    expect(files((await getOrScan(join(repo, "sub"))).entries)).toEqual(["b.txt"]);
    writeFileSync(join(repo, ".git", "info", "exclude"), "b.txt\n");
    invalidateFsScanAfterWrite(join(repo, ".git", "info", "exclude"));
    expect(files((await getOrScan(join(repo, "sub"))).entries)).toEqual([]);
  });

  it("hands a new caller a new walk when the last waiter of the current one gave up", async () => {
    const root = await tempTree();
    for (let d = 0; d < 60; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 300; f++) writeFileSync(join(root, `d${d}`, `f${f}`), "");
    }
    // Rules tried on every entry and never matching: a warm walk of 18k entries could end in
    // its first 10 ms slice, before the abort.
    writeFileSync(
      join(root, ".ignore"),
      `${Array.from({ length: 300 }, (_, i) => `*never${i}*[xyz]`).join("\n")}\n`,
    );
    const controller = new AbortController();
    const leaving = getOrScan(root, {}, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await Promise.resolve();
    const arriving = getOrScan(root);
    expect(((await leaving.catch((e: unknown) => e)) as FreshfsError).code).toBe("ABORTED");
    expect((await arriving).entries).toHaveLength(60 * 301);
  });
});

/**
 * Test helpers: real temporary trees, and a counting wrapper around the real I/O seam.
 */
import type { BigIntStats } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach } from "vitest";
import { type FsSeam, nodeFs } from "../../src/io/fs.js";

/** A tree as an object literal: file path → content. */
export type Tree = Record<string, string | Uint8Array>;

const created: string[] = [];
const createdForFile: string[] = [];

afterEach(async () => {
  for (const dir of created.splice(0)) await rm(dir, { recursive: true, force: true });
});

afterAll(async () => {
  for (const dir of createdForFile.splice(0)) await rm(dir, { recursive: true, force: true });
});

/**
 * Creates a temporary directory holding `tree`, removed after the test (or, with
 * `{ lifetime: "file" }`, after the test file, for a tree made in `beforeAll`); returns its real path.
 */
export async function tempTree(
  tree: Tree = {},
  options: { lifetime?: "test" | "file" } = {},
): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "freshfs-test-")));
  (options.lifetime === "file" ? createdForFile : created).push(dir);
  for (const [path, content] of Object.entries(tree)) {
    const full = join(dir, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
  }
  return dir;
}

export interface Counts {
  stat: number;
  open: number;
  /** Path resolution calls: realpath, lstat, readlink. */
  resolve: number;
}

/** The real seam, with every call counted. */
export function countingFs(inner: FsSeam = nodeFs): { fs: FsSeam; counts: Counts; reset(): void } {
  const counts: Counts = { stat: 0, open: 0, resolve: 0 };
  const fs: FsSeam = {
    stat: (path) => {
      counts.stat++;
      return inner.stat(path);
    },
    open: (path) => {
      counts.open++;
      return inner.open(path);
    },
    realpathSync: (path) => {
      counts.resolve++;
      return inner.realpathSync(path);
    },
    readlinkSync: (path) => {
      counts.resolve++;
      return inner.readlinkSync(path);
    },
    isSymlinkSync: (path) => {
      counts.resolve++;
      return inner.isSymlinkSync(path);
    },
  };
  const reset = () => {
    counts.stat = 0;
    counts.open = 0;
    counts.resolve = 0;
  };
  return { fs, counts, reset };
}

/**
 * The real seam seen through a file system with coarse timestamps (1 s, as FAT/HFS+ and some
 * network mounts): every stat time, from `stat` and from an open handle, is floored. This
 * kernel stamps files with fine-grained times, so without it a same-size rewrite always moves
 * the fingerprint and the racy window would go untested.
 */
export function coarseFs(inner: FsSeam = nodeFs): FsSeam {
  const floor = (stats: BigIntStats): BigIntStats => {
    const second = 1_000_000_000n;
    return Object.assign(Object.create(Object.getPrototypeOf(stats)), stats, {
      mtimeNs: (stats.mtimeNs / second) * second,
      ctimeNs: (stats.ctimeNs / second) * second,
    });
  };
  return {
    ...inner,
    stat: async (path) => floor(await inner.stat(path)),
    open: async (path) => {
      const handle = await inner.open(path);
      const stat = handle.stat.bind(handle);
      return Object.assign(handle, {
        stat: async () => floor((await stat({ bigint: true })) as BigIntStats),
      });
    },
  };
}

/**
 * A content index snapshot on disk: written and read back array for array; refused whole when
 * cut, extended, changed, of another tree, policy or format; and, once read, trusted file by
 * file only where the file's stat is the one taken when it was read (a rewrite that put its
 * mtime back, a file replaced by rename, gone, or a directory now, are each read again), and
 * not within the racy window before the save.
 */
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildSegment, restore } from "../../src/content/build-thread.js";
import { type RestoreJob, UNINDEXED } from "../../src/content/format.js";
import {
  confirmSegments,
  RACY_NS,
  readSnapshot,
  SnapshotRejected,
  snapshotChunks,
} from "../../src/content/snapshot.js";
import {
  ensureSnapshotDir,
  listSnapshots,
  parseTreePolicy,
  snapshotFileFor,
  sweepTemps,
  treePolicy,
  writeSnapshot,
} from "../../src/content/snapshot-files.js";
import { FreshfsError } from "../../src/errors.js";
import { tempTree } from "../helpers/fs.js";

const POLICY = treePolicy(false, true);

/** A whole second (2020-01-01): an mtime that `utimes` can put back exactly. */
const MTIME = 1_577_836_800;

async function indexed(files: Record<string, string>) {
  const root = await tempTree(files);
  const paths = Object.keys(files).sort();
  for (const path of paths) utimesSync(join(root, path), MTIME, MTIME);
  const data = buildSegment({
    id: 1,
    root,
    paths: paths.join("\0"),
    maxFileBytes: 1 << 20,
    maxSegmentBytes: 1 << 24,
  });
  return { root, paths, data };
}

const FILES = {
  "a.txt": "alpha beta\n",
  "b.txt": "gamma delta\n",
  "c/d.txt": "epsilon\n",
  "c/e.txt": "zeta eta theta\n",
  "f.bin": "\0\0binary",
};

/** A snapshot of `FILES` saved at `savedAtNs`, written to a file in the tree's parent. */
async function saved(savedAtNs = BigInt(Date.now() + 60_000) * 1_000_000n) {
  const { root, paths, data } = await indexed(FILES);
  const dir = await tempTree();
  const file = join(dir, "x.snapshot");
  const stale = new Uint8Array(data.count);
  await writeSnapshot(file, snapshotChunks(root, POLICY, savedAtNs, [{ paths, data, stale }]));
  return { root, paths, data, file, dir };
}

function rejection(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SnapshotRejected);
    return (error as Error).message;
  }
  throw new Error("not rejected");
}

describe("a snapshot file", () => {
  it("reads back array for array, with the stamps of each file", async () => {
    const { root, paths, data, file } = await saved();
    const { segments, header } = readSnapshot(file, root, POLICY);
    expect(header.root).toBe(root);
    expect(segments).toHaveLength(1);
    const [segment] = segments;
    expect(segment?.paths).toEqual(paths);
    for (const name of ["keys", "starts", "lists", "denseKeys", "bitmaps", "flags"] as const) {
      expect(Array.from(segment?.data[name] ?? []), name).toEqual(Array.from(data[name]));
    }
    expect(Array.from(segment?.data.stamps ?? [])).toEqual(Array.from(data.stamps));
    expect(Array.from(segment?.data.sizes ?? [])).toEqual(Array.from(data.sizes));
    // The stamps are the files' own: inode and nanosecond ctime.
    const first = statSync(join(root, "a.txt"), { bigint: true });
    expect(segment?.data.stamps[1]).toBe(first.ino);
    expect(segment?.data.stamps[3]).toBe(first.ctimeNs);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("with empty arrays, over empty buffers or not, reads back whole", async () => {
    // Node's crc32 of an empty array over an empty buffer is 0, whatever it goes on from; the
    // build thread makes both kinds (one text file: no posting lists; `subarray`s of more).
    const one = await indexed({ "only.txt": "one line\n" });
    expect(one.data.lists.length).toBe(0);
    const empty = {
      denseKeys: new Uint32Array(8).subarray(0, 0),
      bitmaps: new Uint16Array(8).subarray(0, 0),
    };
    const dir = await tempTree();
    for (const data of [one.data, { ...one.data, ...empty }]) {
      const file = join(dir, "x.snapshot");
      const stale = new Uint8Array(data.count);
      await writeSnapshot(
        file,
        snapshotChunks(one.root, POLICY, 1n, [{ paths: one.paths, data, stale }]),
      );
      expect(readSnapshot(file, one.root, POLICY).segments[0]?.paths).toEqual(["only.txt"]);
    }
  });

  it("is refused whole when cut short or extended, at any length", async () => {
    const { root, file } = await saved();
    const whole = readFileSync(file);
    for (const length of [0, 5, 40, whole.length >> 1, whole.length - 13, whole.length - 1]) {
      writeFileSync(file, whole.subarray(0, length));
      expect(
        rejection(() => readSnapshot(file, root, POLICY)),
        `cut at ${length}`,
      ).toMatch(/shorter|cut short|extended|not a freshfs/);
    }
    writeFileSync(file, Buffer.concat([whole, Buffer.from([0])]));
    expect(rejection(() => readSnapshot(file, root, POLICY))).toMatch(/cut short or extended/);
  });

  it("is refused whole when any byte changed", async () => {
    const { root, file } = await saved();
    const whole = readFileSync(file);
    const places = [0, 40, 60, whole.length >> 1, whole.length - 20, whole.length - 2];
    for (const at of places) {
      const changed = Buffer.from(whole);
      changed[at] = (changed[at] as number) ^ 0x40;
      writeFileSync(file, changed);
      expect(
        rejection(() => readSnapshot(file, root, POLICY)),
        `byte ${at}`,
      ).toMatch(/checksum|not a freshfs|header|format|cut short|run past|do not fit/);
    }
  });

  it("is refused for another tree, another policy, or another format", async () => {
    const { root, file } = await saved();
    expect(rejection(() => readSnapshot(file, `${root}-other`, POLICY))).toMatch(
      /not of this tree/,
    );
    expect(rejection(() => readSnapshot(file, root, treePolicy(true, true)))).toMatch(
      /not of this tree/,
    );
    const whole = readFileSync(file);
    const text = whole.toString("latin1").replace('"format":1', '"format":9');
    writeFileSync(file, Buffer.from(text, "latin1"));
    expect(rejection(() => readSnapshot(file, root, POLICY))).toMatch(/of format 9, not 1/);
    writeFileSync(file, "not a snapshot at all, but long enough to have a trailer");
    expect(rejection(() => readSnapshot(file, root, POLICY))).toMatch(/not a freshfs|cut short/);
  });

  it("refused by the build thread's loader names the reason, never throws", async () => {
    const { root, file } = await saved();
    writeFileSync(file, readFileSync(file).subarray(0, 100));
    const job: RestoreJob = {
      kind: "restore",
      id: 7,
      root,
      policy: POLICY,
      path: file,
      maxBytes: 1 << 30,
    };
    const answer = restore(job);
    expect(answer).toMatchObject({ kind: "rejected", id: 7 });
    expect(answer.kind === "rejected" && answer.reason).toMatch(/cut short/);
    const missing = restore({ ...job, path: `${file}.gone` });
    expect(missing.kind === "rejected" && missing.reason).toMatch(/could not be read/);
  });
});

describe("confirming a snapshot's files by their stat", () => {
  it("keeps every file whose stat is unchanged", async () => {
    const { root, file } = await saved();
    const { segments, header } = readSnapshot(file, root, POLICY);
    const counts = confirmSegments(root, segments, BigInt(header.savedAtNs));
    expect(counts).toEqual({ confirmed: 5, changed: 0 });
  });

  it("reads again a rewrite that put its size and mtime back, a file renamed over, one gone, one now a directory", async () => {
    const { root, file, paths } = await saved();
    const { segments, header } = readSnapshot(file, root, POLICY);
    // Same size, same mtime (put back): only the ctime tells.
    const a = join(root, "a.txt");
    const before = statSync(a, { bigint: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(a, "ALPHA BETA\n");
    utimesSync(a, MTIME, MTIME);
    const after = statSync(a, { bigint: true });
    expect([after.mtimeNs, after.size, after.ino]).toEqual([
      before.mtimeNs,
      before.size,
      before.ino,
    ]);
    // The same bytes under a new inode.
    const b = join(root, "b.txt");
    writeFileSync(`${b}.new`, readFileSync(b));
    renameSync(`${b}.new`, b);
    unlinkSync(join(root, "c", "d.txt"));
    rmSync(join(root, "c", "e.txt"));
    mkdirSync(join(root, "c", "e.txt"));
    const counts = confirmSegments(root, segments, BigInt(header.savedAtNs));
    expect(counts).toEqual({ confirmed: 1, changed: 4 });
    const stale = segments[0]?.stale ?? new Uint8Array();
    const staleNames = paths.filter((_, i) => stale[i]);
    expect(staleNames).toEqual(["a.txt", "b.txt", "c/d.txt", "c/e.txt"]);
  });

  it("reads again a file changed within the racy window before the save, unchanged stat or not", async () => {
    const { root, paths, data } = await indexed(FILES);
    const ctime = statSync(join(root, "a.txt"), { bigint: true }).ctimeNs;
    const segment = () => [{ paths, data, stale: new Uint8Array(data.count) }];
    // Saved less than RACY_NS after the files' last change: none is trusted.
    const racy = confirmSegments(root, segment(), ctime + RACY_NS / 2n);
    expect(racy).toEqual({ confirmed: 0, changed: 5 });
    const settled = confirmSegments(root, segment(), ctime + RACY_NS + 1_000_000_000n);
    expect(settled).toEqual({ confirmed: 5, changed: 0 });
  });

  it("never trusts an entry left unindexed, or stale when saved", async () => {
    const { root, paths, data } = await indexed(FILES);
    const flags = data.flags.slice();
    flags[0] = UNINDEXED;
    const stale = new Uint8Array(data.count);
    stale[1] = 1;
    const far = BigInt(Date.now() + 60_000) * 1_000_000n;
    const counts = confirmSegments(root, [{ paths, data: { ...data, flags }, stale }], far);
    expect(counts).toEqual({ confirmed: 3, changed: 1 });
    expect(Array.from(stale.subarray(0, 2))).toEqual([1, 1]);
  });
});

describe("the snapshot directory", () => {
  it("is made private, and refused when other users may enter it", async () => {
    const base = await tempTree();
    const dir = join(base, "cache", "snapshots");
    ensureSnapshotDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(base, "cache")).mode & 0o777).toBe(0o700);
    const open = join(base, "open", "snapshots");
    mkdirSync(open, { recursive: true });
    chmodSync(open, 0o755);
    expect(() => ensureSnapshotDir(open)).toThrow(FreshfsError);
    expect(() => ensureSnapshotDir(open)).toThrow(/FRESHFS_CACHE_DIR/);
  });

  it("lists its snapshots by their headers, newest first, and sweeps dead writers' temp files", async () => {
    const { root, data, paths } = await indexed(FILES);
    const dir = await tempTree();
    const stale = new Uint8Array(data.count);
    const first = snapshotFileFor(dir, root, POLICY);
    const second = snapshotFileFor(dir, root, treePolicy(true, false));
    expect(second).not.toBe(first);
    await writeSnapshot(first, snapshotChunks(root, POLICY, 1n, [{ paths, data, stale }]));
    const hidden = treePolicy(true, false);
    await writeSnapshot(second, snapshotChunks(root, hidden, 1n, [{ paths, data, stale }]));
    utimesSync(first, new Date(), new Date(Date.now() + 1000));
    writeFileSync(join(dir, "junk.snapshot"), "junk");
    const listed = listSnapshots(dir);
    expect(listed.map((s) => [s.file, s.root, s.policy])).toEqual([
      [first, root, POLICY],
      [second, root, hidden],
    ]);
    expect(parseTreePolicy(hidden)).toEqual({ includeHidden: true, useGitignore: false });
    expect(parseTreePolicy("anything")).toBeUndefined();
    // A pid that no process has (above the kernel's pid_max), and this process's own.
    const dead = `${first}.99999999.tmp`;
    const mine = `${first}.${process.pid}.tmp`;
    writeFileSync(dead, "half");
    writeFileSync(mine, "half");
    sweepTemps(dir);
    expect(() => statSync(dead)).toThrow();
    expect(statSync(mine).size).toBe(4);
  });
});

/**
 * The read-before-write guard, rule by rule, on real files.
 */
import { once } from "node:events";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, symlink, unlink, utimes, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { FileStateTracker, FreshfsError } from "../../src/index.js";
import { type FsSeam, nodeFs } from "../../src/io/fs.js";
import { staleMessage } from "../../src/state/messages.js";
import { rejectsWith } from "../helpers/errors.js";
import { coarseFs, countingFs, tempTree } from "../helpers/fs.js";

const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("");

/** A short racy window, and a pause longer than it, so stat data can be trusted. */
const QUICK = { racyWindowMs: 50 } as const;
const settle = () => sleep(80);

function failing(inner: FsSeam, call: "open" | "stat", errno: string): FsSeam {
  const fail = () => Promise.reject(Object.assign(new Error(`injected ${errno}`), { code: errno }));
  return { ...inner, [call]: fail };
}

describe("rule 1: never read, or read partially", () => {
  it("refuses an edit of a file never read", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const message = await rejectsWith(
      new FileStateTracker().checkEdit(join(dir, "a.txt")),
      "NOT_READ",
    );
    expect(message).toContain("has not been read yet");
    expect(message).toContain(join(dir, "a.txt"));
  });

  it("refuses after a read with an offset or a limit that left lines unseen", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file, { offset: 5 });
    expect(await rejectsWith(tracker.checkEdit(file), "NOT_READ")).toContain(
      "only partially read (lines 5-10 of 10)",
    );
    await tracker.recordRead(file, { offset: 1, limit: 3 });
    expect(await rejectsWith(tracker.checkEdit(file), "NOT_READ")).toContain("lines 1-3 of 10");
  });

  it("counts a window that covered every line as a full read", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    // The read tool's default limit (2000 lines) on a short file shows all of it.
    expect((await tracker.recordRead(file, { offset: 1, limit: 2000 })).partial).toBe(false);
    expect((await tracker.recordRead(file, { offset: 0, limit: 10 })).partial).toBe(false);
    expect((await tracker.checkEdit(file)).state).toBe("fresh");
    expect((await tracker.recordRead(file, { limit: 9 })).partial).toBe(true);
  });

  it("allows an edit inside the window under allow-within-window, and nothing outside it", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker({ partialReads: "allow-within-window" });
    await tracker.recordRead(file, { offset: 3, limit: 4 });
    expect((await tracker.checkEdit(file, { lines: { start: 3, end: 6 } })).state).toBe("fresh");
    await rejectsWith(tracker.checkEdit(file, { lines: { start: 6, end: 7 } }), "NOT_READ");
    await rejectsWith(tracker.checkEdit(file), "NOT_READ");
    // The whole-file hash keeps staleness exact for a window too.
    await writeFile(file, TEN_LINES.replace("line 9", "LINE 9"));
    await rejectsWith(tracker.checkEdit(file, { lines: { start: 3, end: 6 } }), "STALE");
  });

  it("needs no read to create a file that does not exist", async () => {
    const dir = await tempTree();
    const verdict = await new FileStateTracker().checkEdit(join(dir, "new.txt"));
    expect(verdict).toMatchObject({ state: "new-file", verifiedBy: "none" });
  });
});

describe("rule 2: the fast path", () => {
  it("passes an unchanged file with exactly one stat and no read", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const file = join(dir, "a.txt");
    await settle();
    const { fs, counts, reset } = countingFs();
    const tracker = new FileStateTracker({ ...QUICK, fs });
    await tracker.recordRead(file);
    reset();
    const verdict = await tracker.checkEdit(file);
    expect(verdict).toMatchObject({ state: "fresh", verifiedBy: "stat", warnings: [] });
    expect(counts).toEqual({ stat: 1, open: 0, resolve: 0 });
  });

  it("costs one stat through a symlink spelling too", async () => {
    const dir = await tempTree({ "real/a.txt": "hello\n" });
    await symlink(join(dir, "real"), join(dir, "link"));
    const viaLink = join(dir, "link", "a.txt");
    await settle();
    const { fs, counts, reset } = countingFs();
    const tracker = new FileStateTracker({ ...QUICK, fs });
    await tracker.recordRead(viaLink);
    reset();
    expect((await tracker.checkEdit(viaLink)).verifiedBy).toBe("stat");
    expect(counts).toEqual({ stat: 1, open: 0, resolve: 0 });
  });
});

describe("rule 3: same size, same millisecond", () => {
  async function rewriteLoop(tracker: FileStateTracker, file: string, rounds: number) {
    let detected = 0;
    let sameMillisecond = 0;
    for (let i = 0; i < rounds; i++) {
      const tag = String(i).padStart(4, "0");
      await writeFile(file, `before ${tag}\n`);
      const read = await tracker.recordRead(file);
      await writeFile(file, `after! ${tag}\n`);
      const now = statSync(file);
      // What a guard on millisecond mtime and size (Claude Code's) compares.
      if (Math.trunc(now.mtimeMs) === Math.trunc(read.mtimeMs ?? -1) && now.size === read.size) {
        sameMillisecond++;
      }
      try {
        await tracker.checkEdit(file);
      } catch (error) {
        if (error instanceof FreshfsError && error.code === "STALE") detected++;
        else throw error;
      }
    }
    return { detected, sameMillisecond };
  }

  it("detects 500 of 500 rewrites", async () => {
    const dir = await tempTree();
    const result = await rewriteLoop(new FileStateTracker(), join(dir, "a.txt"), 500);
    console.info(
      `racy rewrites: ${result.detected} of 500 detected; ${result.sameMillisecond} landed in the same millisecond with the same size (a millisecond + size check misses those)`,
    );
    expect(result.detected).toBe(500);
  });

  it("detects 500 of 500 on a file system with one-second timestamps, thanks to the racy window", async () => {
    const dir = await tempTree();
    const file = join(dir, "a.txt");
    const guarded = await rewriteLoop(new FileStateTracker({ fs: coarseFs() }), file, 500);
    expect(guarded.detected).toBe(500);
    // The same loop with the window turned off misses rewrites: the window is what catches them.
    const unguarded = await rewriteLoop(
      new FileStateTracker({ fs: coarseFs(), racyWindowMs: 0 }),
      file,
      50,
    );
    expect(unguarded.detected).toBeLessThan(50);
  });
});

describe("rule 4: mtime moved, bytes identical", () => {
  async function fullyRead() {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    await settle();
    const tracker = new FileStateTracker(QUICK);
    await tracker.recordRead(file);
    return { file, tracker };
  }

  it("passes a formatter's rewrite of identical bytes", async () => {
    const { file, tracker } = await fullyRead();
    await writeFile(file, TEN_LINES);
    expect(await tracker.checkEdit(file)).toMatchObject({ state: "fresh", verifiedBy: "hash" });
  });

  it("passes touch", async () => {
    const { file, tracker } = await fullyRead();
    const now = new Date();
    await utimes(file, now, now);
    expect(await tracker.checkEdit(file)).toMatchObject({ state: "fresh", verifiedBy: "hash" });
  });

  it("passes utimes backwards", async () => {
    const { file, tracker } = await fullyRead();
    const past = new Date("2001-01-01T00:00:00Z");
    await utimes(file, past, past);
    expect(await tracker.checkEdit(file)).toMatchObject({ state: "fresh", verifiedBy: "hash" });
  });

  it("goes back to one stat once the verified file is out of the racy window", async () => {
    const { file, tracker } = await fullyRead();
    await writeFile(file, TEN_LINES);
    await settle();
    expect((await tracker.checkEdit(file)).verifiedBy).toBe("hash");
    expect((await tracker.checkEdit(file)).verifiedBy).toBe("stat");
  });

  it("still refuses after a partial read", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file, { offset: 2, limit: 3 });
    const now = new Date();
    await utimes(file, now, now);
    await rejectsWith(tracker.checkEdit(file), "NOT_READ");
  });
});

describe("rule 5: deleted or replaced", () => {
  it("refuses when the file was deleted since the read", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    await unlink(file);
    const message = await rejectsWith(tracker.checkEdit(file), "STALE");
    expect(message).toContain("has been deleted since you last read it");
  });

  it("refuses when another file with other bytes was renamed over it", async () => {
    const dir = await tempTree({ "a.txt": "hello\n", "b.txt": "world\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    await rename(join(dir, "b.txt"), file);
    await rejectsWith(tracker.checkEdit(file), "STALE");
  });

  it("passes when the file renamed over it has identical bytes", async () => {
    const dir = await tempTree({ "a.txt": "hello\n", "copy.txt": "hello\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    await rename(join(dir, "copy.txt"), file);
    expect(await tracker.checkEdit(file)).toMatchObject({ state: "fresh", verifiedBy: "hash" });
  });

  it("refuses when a directory now stands at the path", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    await unlink(file);
    await mkdir(file);
    expect(await rejectsWith(tracker.checkEdit(file), "STALE")).toContain(
      "replaced by a directory",
    );
  });
});

describe("rule 6: a chain of edits", () => {
  it("passes ten edits in a row, each recorded with recordEdit, without a re-read", async () => {
    const dir = await tempTree({ "a.txt": "v0\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    for (let i = 1; i <= 10; i++) {
      expect((await tracker.checkEdit(file)).state).toBe("fresh");
      const content = `v${i}\n`;
      await writeFile(file, content);
      // Alternate the two ways of recording: with the bytes written, and by reading them back.
      await tracker.recordEdit(file, i % 2 === 0 ? { content } : {});
    }
    expect(tracker.latest(file)).toMatchObject({ partial: false, lines: 1, size: 4 });
  });

  it("keeps guarding after an edit: an outside change after recordEdit is refused", async () => {
    const dir = await tempTree({ "a.txt": "v0\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    await writeFile(file, "v1\n");
    await tracker.recordEdit(file, { content: "v1\n" });
    await writeFile(file, "v2\n");
    await rejectsWith(tracker.checkEdit(file), "STALE");
  });
});

describe("rule 7: latest read, one record per path, bounded", () => {
  it("judges by the newest read across windows", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file);
    await tracker.recordRead(file, { offset: 4, limit: 2 });
    expect(tracker.latest(file)).toMatchObject({ offset: 4, limit: 2, partial: true });
    expect(tracker.size).toBe(1);
    await rejectsWith(tracker.checkEdit(file), "NOT_READ");
    await tracker.recordRead(file);
    expect(tracker.latest(file)).toMatchObject({ offset: 1, limit: 0, partial: false });
    expect(tracker.size).toBe(1);
  });

  it("keeps the later read when an earlier, slower read finishes last", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    let calls = 0;
    const slowFirstOpen: FsSeam = {
      ...nodeFs,
      open: async (path) => {
        if (calls++ === 0) await sleep(100);
        return nodeFs.open(path);
      },
    };
    const tracker = new FileStateTracker({ fs: slowFirstOpen });
    const slow = tracker.recordRead(file, { limit: 2 });
    await sleep(10);
    await tracker.recordRead(file);
    await slow;
    expect(tracker.latest(file)?.partial).toBe(false);
  });

  it("forgets the least recently used path beyond maxEntries", async () => {
    const dir = await tempTree({ a: "a", b: "b", c: "c", d: "d" });
    const tracker = new FileStateTracker({ maxEntries: 3 });
    for (const name of ["a", "b", "c"]) await tracker.recordRead(join(dir, name));
    await tracker.checkEdit(join(dir, "a")); // a is now more recent than b
    await tracker.recordRead(join(dir, "d"));
    expect(tracker.size).toBe(3);
    expect(tracker.latest(join(dir, "b"))).toBeUndefined();
    await rejectsWith(tracker.checkEdit(join(dir, "b")), "NOT_READ");
    expect((await tracker.checkEdit(join(dir, "a"))).state).toBe("fresh");
  });

  it("forget and clear drop records", async () => {
    const dir = await tempTree({ a: "a", b: "b" });
    const tracker = new FileStateTracker();
    await tracker.recordRead(join(dir, "a"));
    await tracker.recordRead(join(dir, "b"));
    tracker.forget(join(dir, "a"));
    await rejectsWith(tracker.checkEdit(join(dir, "a")), "NOT_READ");
    expect(tracker.size).toBe(1);
    tracker.clear();
    expect(tracker.size).toBe(0);
    await rejectsWith(tracker.checkEdit(join(dir, "b")), "NOT_READ");
  });
});

describe("rule 8: the racy window", () => {
  it("verifies a read taken right after a change by hash, never by stat alone", async () => {
    const dir = await tempTree();
    const file = join(dir, "a.txt");
    const { fs, counts, reset } = countingFs();
    const tracker = new FileStateTracker({ fs });
    await writeFile(file, "fresh bytes\n");
    await tracker.recordRead(file);
    for (let i = 0; i < 3; i++) {
      reset();
      expect((await tracker.checkEdit(file)).verifiedBy).toBe("hash");
      expect(counts.open).toBe(1);
    }
  });

  it("takes its width from racyWindowMs", async () => {
    const dir = await tempTree({ "a.txt": "bytes\n" });
    const file = join(dir, "a.txt");
    await sleep(120);
    const wide = new FileStateTracker({ racyWindowMs: 60_000 });
    const narrow = new FileStateTracker({ racyWindowMs: 60 });
    await wide.recordRead(file);
    await narrow.recordRead(file);
    expect((await wide.checkEdit(file)).verifiedBy).toBe("hash");
    expect((await narrow.checkEdit(file)).verifiedBy).toBe("stat");
  });
});

describe("rule 9: warn policy, and failing closed", () => {
  it("proceeds with a ChatCLI-shaped warning naming the file, the change and the remedy", async () => {
    const dir = await tempTree({ "a.txt": "12345" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker({ policy: "warn" });
    await tracker.recordRead(file);
    await writeFile(file, "1234567");
    const verdict = await tracker.checkEdit(file);
    expect(verdict.state).toBe("stale");
    expect(verdict.warnings).toHaveLength(1);
    expect(verdict.warnings[0]).toMatch(
      new RegExp(
        `^WARNING: File "${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}" has changed on disk since you last read it\\.\\n` +
          "Reason: content changed \\(mtime: \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z → \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, size: 5 → 7\\)\\n" +
          "You should re-read the file before making changes",
      ),
    );
    expect(verdict.warnings[0]).not.toMatch(/user|linter/i);
  });

  it("warns about a deleted file", async () => {
    const dir = await tempTree({ "a.txt": "12345" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker({ policy: "warn" });
    await tracker.recordRead(file);
    await unlink(file);
    const verdict = await tracker.checkEdit(file);
    expect(verdict.state).toBe("stale");
    expect(verdict.warnings[0]).toMatch(
      /Reason: file deleted \(mtime: \S+ → gone, size: 5 → gone\)/,
    );
  });

  it("does not warn about a file never read, and warns about a partial read", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker({ policy: "warn" });
    expect(await tracker.checkEdit(file)).toMatchObject({ state: "not-read", warnings: [] });
    await tracker.recordRead(file, { limit: 2 });
    const verdict = await tracker.checkEdit(file);
    expect(verdict.state).toBe("partial");
    expect(verdict.warnings[0]).toContain("was only partially read (lines 1-2 of 10)");
  });

  it("strict fails closed on an I/O error that is not 'gone' (a symlink loop)", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const file = join(dir, "a.txt");
    const strict = new FileStateTracker();
    const warn = new FileStateTracker({ policy: "warn" });
    await strict.recordRead(file);
    await warn.recordRead(file);
    await unlink(file);
    await symlink(file, file);
    expect(await rejectsWith(strict.checkEdit(file), "IO_ERROR")).toContain("ELOOP");
    const verdict = await warn.checkEdit(file);
    expect(verdict.state).toBe("unchecked");
    expect(verdict.warnings[0]).toContain("could not be checked for changes");
  });

  it("strict fails closed when the file cannot be read for hashing", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const file = join(dir, "a.txt");
    const cases = [
      ["EIO", "IO_ERROR"],
      ["EACCES", "PERMISSION_DENIED"],
    ] as const;
    for (const [errno, code] of cases) {
      // Root reads everything, so the failure is injected: every open fails, stat works.
      const tracker = new FileStateTracker({ fs: failing(nodeFs, "open", errno) });
      await tracker.recordRead(file, { content: "hello\n" });
      expect(await rejectsWith(tracker.checkEdit(file), code)).toContain("The edit was refused");
    }
  });
});

describe("rule 10: unknown content is not empty", () => {
  it("gives a read recorded without bytes no content exemption", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const file = join(dir, "a.txt");
    await settle();
    const tracker = new FileStateTracker({ ...QUICK, fs: failing(nodeFs, "open", "EACCES") });
    const entry = await tracker.recordRead(file);
    expect(entry.hash).toBeUndefined();
    expect((await tracker.checkEdit(file)).verifiedBy).toBe("stat");
    const now = new Date();
    await utimes(file, now, now); // same bytes, but nobody can prove it
    expect(await rejectsWith(tracker.checkEdit(file), "STALE")).toContain(
      "recorded without its bytes",
    );
  });

  it("treats an empty file as known content: touch after reading it passes", async () => {
    const dir = await tempTree({ "empty.txt": "" });
    const file = join(dir, "empty.txt");
    const tracker = new FileStateTracker();
    expect((await tracker.recordRead(file)).hash).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    const now = new Date();
    await utimes(file, now, now);
    expect((await tracker.checkEdit(file)).state).toBe("fresh");
  });

  it("takes the caller's bytes as what was seen, even if the file moved on before recording", async () => {
    const dir = await tempTree({ "a.txt": "new text\n" });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    // A shell `cat` saw the old text; the file changed before the tool recorded it.
    await tracker.recordRead(file, { content: "old text\n" });
    await rejectsWith(tracker.checkEdit(file), "STALE");
    await tracker.recordRead(file, { content: "" });
    await rejectsWith(tracker.checkEdit(file), "STALE");
    await tracker.recordRead(file, { content: new TextEncoder().encode("new text\n") });
    expect((await tracker.checkEdit(file)).state).toBe("fresh");
  });
});

describe("rule 11: path keys", () => {
  it("shares one record between relative, absolute and symlink spellings", async () => {
    const dir = await tempTree({ "real/a.txt": "hello\n" });
    await symlink(join(dir, "real"), join(dir, "dirlink"));
    await symlink(join(dir, "real", "a.txt"), join(dir, "filelink"));
    const real = join(dir, "real", "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(relative(process.cwd(), real));
    for (const spelling of [real, join(dir, "dirlink", "a.txt"), join(dir, "filelink")]) {
      expect((await tracker.checkEdit(spelling)).state).toBe("fresh");
      expect(tracker.latest(spelling)?.path).toBe(real);
    }
    expect(tracker.size).toBe(1);
  });

  it("follows a symlink that was pointed elsewhere after the read", async () => {
    const dir = await tempTree({ "a.txt": "aaa\n", "b.txt": "bbb\n" });
    const link = join(dir, "link");
    await symlink(join(dir, "a.txt"), link);
    const tracker = new FileStateTracker();
    await tracker.recordRead(link);
    await unlink(link);
    await symlink(join(dir, "b.txt"), link);
    await rejectsWith(tracker.checkEdit(link), "NOT_READ");
    await tracker.recordRead(join(dir, "b.txt"));
    expect((await tracker.checkEdit(link)).path).toBe(join(dir, "b.txt"));
  });

  it("never folds case: A.txt and a.txt are separate files here", async () => {
    const dir = await tempTree({ "A.txt": "upper\n", "a.txt": "lower\n" });
    const tracker = new FileStateTracker();
    await tracker.recordRead(join(dir, "A.txt"));
    await rejectsWith(tracker.checkEdit(join(dir, "a.txt")), "NOT_READ");
  });
});

describe("bad input", () => {
  it("rejects invalid options with INVALID_ARGUMENT", async () => {
    expect(() => new FileStateTracker({ policy: "lax" as "warn" })).toThrow(/policy/);
    expect(() => new FileStateTracker({ racyWindowMs: -1 })).toThrow(FreshfsError);
    expect(() => new FileStateTracker({ maxEntries: 0 })).toThrow(/maxEntries/);
    const dir = await tempTree({ "a.txt": "x" });
    const tracker = new FileStateTracker();
    await rejectsWith(tracker.recordRead(join(dir, "a.txt"), { offset: 1.5 }), "INVALID_ARGUMENT");
    await rejectsWith(tracker.recordRead(join(dir, "a.txt"), { limit: -1 }), "INVALID_ARGUMENT");
    await rejectsWith(
      tracker.checkEdit(join(dir, "a.txt"), { lines: { start: 3, end: 2 } }),
      "INVALID_ARGUMENT",
    );
  });

  it("refuses to record a read of a missing file or a directory", async () => {
    const dir = await tempTree({ "sub/a.txt": "x" });
    const tracker = new FileStateTracker();
    await rejectsWith(tracker.recordRead(join(dir, "missing.txt")), "NOT_FOUND");
    expect(await rejectsWith(tracker.recordRead(join(dir, "sub")), "NOT_A_FILE")).toContain(
      "a directory",
    );
    expect(tracker.size).toBe(0);
  });

  it("records a read whose file vanished, and then calls it stale", async () => {
    const dir = await tempTree();
    const file = join(dir, "gone.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file, { content: "seen once\n" });
    await rejectsWith(tracker.checkEdit(file), "STALE");
    await rm(dir, { recursive: true });
    await rejectsWith(tracker.checkEdit(file), "STALE");
  });
});

describe("spellings that change what they point at", () => {
  it("judges a symlink replaced by a regular file by the new file's own record", async () => {
    const dir = await tempTree({ "k.txt": "X\n" });
    const [k, l] = [join(dir, "k.txt"), join(dir, "l.txt")];
    await symlink(k, l);
    const tracker = new FileStateTracker();
    await tracker.recordRead(l); // records k.txt, reached through l.txt
    await unlink(l);
    await unlink(k); // ext4 hands k's inode number to the next file
    await writeFile(l, "Y\n");
    await tracker.recordRead(l);
    expect(tracker.latest(l)?.path).toBe(l);
    await writeFile(l, "X\n");
    await rejectsWith(tracker.checkEdit(l), "STALE");
  });

  it("applies the latest window of the new file, not the old target's full read", async () => {
    const dir = await tempTree({ "k.txt": TEN_LINES });
    const [k, l] = [join(dir, "k.txt"), join(dir, "l.txt")];
    await symlink(k, l);
    const tracker = new FileStateTracker();
    await tracker.recordRead(l);
    await unlink(l);
    await rename(k, l); // the same inode, now under the link's name
    await tracker.recordRead(l, { offset: 5, limit: 2 });
    expect(tracker.latest(l)?.partial).toBe(true);
    await rejectsWith(tracker.checkEdit(l), "NOT_READ");
    tracker.forget(l);
    expect(tracker.latest(l)).toBeUndefined();
  });

  it("resolves `..` after a symlink the way the kernel does", async () => {
    const dir = await tempTree({ "proj/config.ts": "read\n", "other/config.ts": "never read\n" });
    await mkdir(join(dir, "other", "sub"));
    await symlink(join(dir, "other", "sub"), join(dir, "proj", "link"));
    const spelled = `${dir}/proj/link/../config.ts`; // other/config.ts to the kernel
    const tracker = new FileStateTracker();
    await tracker.recordRead(join(dir, "proj", "config.ts"));
    await rejectsWith(tracker.checkEdit(spelled), "NOT_READ");
    expect((await tracker.recordRead(spelled)).path).toBe(join(dir, "other", "config.ts"));
  });
});

describe("writers active during a check", () => {
  /** A seam whose descriptors run `onStat(n)` right after the n-th fstat: real writes, timed. */
  function duringStats(onStat: (n: number) => void): FsSeam {
    return {
      ...nodeFs,
      open: async (path) => {
        const handle = await nodeFs.open(path);
        const stat = handle.stat.bind(handle);
        const read = handle.read.bind(handle);
        let n = 0;
        return Object.assign(handle, {
          stat: async (options: { bigint: true }) => {
            const stats = await stat(options);
            onStat(n++);
            return stats;
          },
          read: (...args: Parameters<typeof read>) => {
            reads++;
            return read(...args);
          },
        });
      },
    };
  }
  let reads = 0;

  it("reads a file that grows after its first fstat in full-size chunks", async () => {
    const dir = await tempTree({ "out.bin": "" });
    const file = join(dir, "out.bin");
    let armed = true;
    reads = 0;
    const tracker = new FileStateTracker({
      fs: duringStats(() => {
        if (armed) appendFileSync(file, Buffer.alloc(1 << 20, 0x61));
        armed = false;
      }),
    });
    const entry = await tracker.recordRead(file);
    expect(entry.size).toBe(1 << 20);
    expect(reads).toBeLessThan(10);
  });

  it("calls a file that kept changing while it was hashed stale, even if the bytes looked equal", async () => {
    const dir = await tempTree({ "a.txt": "original\n" });
    const file = join(dir, "a.txt");
    let writing = false;
    const tracker = new FileStateTracker({
      fs: duringStats((n) => {
        if (!writing) return;
        // A writer that rewrites the file and then appends, around every attempt.
        if (n === 0) writeFileSync(file, "original\n");
        else appendFileSync(file, "appended\n");
      }),
    });
    await tracker.recordRead(file);
    writing = true;
    expect(await rejectsWith(tracker.checkEdit(file), "STALE")).toContain("kept writing");
  });
});

describe("what a caller's text stands for", () => {
  it("matches decoded text to the raw bytes it came from (BOM, CRLF, Latin-1)", async () => {
    const dir = await tempTree({
      "bom.ts": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("const a = 1;\n")]),
      "crlf.ts": "one\r\ntwo\r\n",
      "latin1.txt": Buffer.from("café\n", "latin1"),
    });
    const tracker = new FileStateTracker();
    const cases = [
      ["bom.ts", new TextDecoder().decode(readFileSync(join(dir, "bom.ts")))],
      ["crlf.ts", "one\ntwo\n"],
      ["latin1.txt", "café\n"],
    ] as const;
    for (const [name, text] of cases) {
      const file = join(dir, name);
      await tracker.recordRead(file, { content: text });
      expect((await tracker.checkEdit(file)).state, name).toBe("fresh");
    }
  });

  it("counts lone carriage returns as line breaks, so a short window is partial", async () => {
    const dir = await tempTree({ "mac.txt": "line 1\rline 2\rline 3\r" });
    const entry = await new FileStateTracker().recordRead(join(dir, "mac.txt"), { limit: 1 });
    expect(entry).toMatchObject({ lines: 3, partial: true });
  });
});

describe("odd timestamps and odd files", () => {
  it("keeps the one-stat fast path for a file whose mtime is set far in the future", async () => {
    const dir = await tempTree({ "a.txt": "x\n" });
    const file = join(dir, "a.txt");
    const nextYear = new Date(Date.now() + 365 * 86_400_000);
    await utimes(file, nextYear, nextYear);
    await settle();
    const tracker = new FileStateTracker(QUICK);
    await tracker.recordRead(file);
    expect((await tracker.checkEdit(file)).verifiedBy).toBe("stat");
  });

  it("writes a readable message for times beyond the calendar", () => {
    const facts = {
      path: "/x",
      reason: "modified",
      before: { mtimeNs: -1_500_000n, size: 1 },
      after: { mtimeNs: 99_999_999_999_999n * 1_000_000_000n, size: 1 },
      nowIs: undefined,
    } as const;
    const message = staleMessage(facts);
    expect(message).toContain("1969-12-31T23:59:59.998500000Z →");
    expect(message).toContain("ns since the epoch");
  });

  it("refuses to record a read of a socket", async () => {
    const dir = await tempTree();
    const socket = join(dir, "s.sock");
    const server = createServer().listen(socket);
    await once(server, "listening");
    try {
      await rejectsWith(new FileStateTracker().recordRead(socket), "NOT_A_FILE");
    } finally {
      server.close();
    }
  });
});

describe("forget and clear against reads in flight", () => {
  for (const drop of ["forget", "clear"] as const) {
    it(`a read that began before ${drop}() does not bring the record back`, async () => {
      const dir = await tempTree({ "a.txt": "v1\n" });
      const file = join(dir, "a.txt");
      let slow = true;
      const tracker = new FileStateTracker({
        fs: {
          ...nodeFs,
          open: async (path) => {
            if (slow) await sleep(50);
            slow = false;
            return nodeFs.open(path);
          },
        },
      });
      const inFlight = tracker.recordRead(file, { content: "v1\n" });
      await sleep(10);
      if (drop === "forget") tracker.forget(file);
      else tracker.clear();
      await inFlight;
      await rejectsWith(tracker.checkEdit(file), "NOT_READ");
      await tracker.recordRead(file);
      expect((await tracker.checkEdit(file)).state).toBe("fresh");
    });
  }
});

describe("windows of one content add up", () => {
  it("counts consecutive partial windows of unchanged bytes as a full read", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file, { offset: 1, limit: 4 });
    await rejectsWith(tracker.checkEdit(file), "NOT_READ");
    await tracker.recordRead(file, { offset: 5, limit: 4 });
    expect(tracker.latest(file)).toMatchObject({ offset: 1, limit: 8, partial: true });
    await tracker.recordRead(file, { offset: 7 });
    expect(tracker.latest(file)).toMatchObject({ offset: 1, limit: 0, partial: false });
    expect((await tracker.checkEdit(file)).state).toBe("fresh");
  });

  it("does not join windows with a gap, or windows of different bytes", async () => {
    const dir = await tempTree({ "a.txt": TEN_LINES });
    const file = join(dir, "a.txt");
    const tracker = new FileStateTracker();
    await tracker.recordRead(file, { offset: 1, limit: 4 });
    await tracker.recordRead(file, { offset: 6 });
    expect(tracker.latest(file)).toMatchObject({ offset: 6, limit: 0, partial: true });
    await rejectsWith(tracker.checkEdit(file), "NOT_READ");
    await tracker.recordRead(file, { offset: 1, limit: 5 });
    await writeFile(file, TEN_LINES.replace("1", "one"));
    await tracker.recordRead(file, { offset: 6 });
    expect(tracker.latest(file)).toMatchObject({ offset: 6, partial: true });
    await rejectsWith(tracker.checkEdit(file), "NOT_READ");
  });
});

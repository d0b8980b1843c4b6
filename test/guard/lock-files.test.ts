/**
 * The lock other freshfs processes honour: every mutation holds a lock file (out
 * of the tree: `test/guard/lock-places.test.ts` says where) from before its last check until its
 * rename is done; another process waits for it (bounded, then `LOCKED` naming the holder and
 * the lock file); a lock left by a process that died is taken over. Second processes are real:
 * children running the built library (`npm run build`).
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { getOrScan, glob, grep, LOCK_STALE_MS, Workspace, withPathLock } from "../../src/index.js";
import { acquireFileLock } from "../../src/io/lockfile.js";
import { lockPlaceOf } from "../../src/io/state-dirs.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { type LibChild, libChild, lockHolder } from "../helpers/lib-child.js";

type Child = LibChild;
const child = (script: string, ...args: string[]): Child => libChild(script, args);
const holder = (file: string): Child => lockHolder(file);

/** Where the lock of `dir/name` lives (these trees are no repositories: the runtime directory). */
function lockFileOf(dir: string, name: string): string {
  const place = lockPlaceOf(join(dir, name));
  if (!place) throw new Error(`no lock place for ${name}`);
  return join(place.dir, place.name);
}

/**
 * With `lock` put in a.txt's lock file's place, a writer is refused with LOCKED while it is
 * fresh, and takes it over once it is older than LOCK_STALE_MS; returns the LOCKED message.
 */
async function refusedUntilOld(dir: string, put: (lock: string) => void): Promise<string> {
  const file = join(dir, "a.txt");
  const lock = lockFileOf(dir, "a.txt");
  put(lock);
  const message = await rejectsWith(
    withPathLock(file, () => {}, { waitMs: 100 }),
    "LOCKED",
  );
  const old = (Date.now() - LOCK_STALE_MS - 1000) / 1000;
  utimesSync(lock, old, old);
  expect(await withPathLock(file, () => "ran", { waitMs: 100 })).toBe("ran");
  expect(readdirSync(dir)).toEqual(["a.txt"]);
  expect(existsSync(lock)).toBe(false);
  return message;
}

describe("the lock file", () => {
  it("exists out of the tree while a mutation holds it, names its holder, and is removed after", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    let seen: Record<string, unknown> | undefined;
    let during: string[] = [];
    await withPathLock(
      file,
      () => {
        seen = JSON.parse(readFileSync(lockFileOf(dir, "a.txt"), "utf8"));
        during = readdirSync(dir);
      },
      { operation: "edit" },
    );
    expect(seen).toMatchObject({ pid: process.pid, operation: "edit" });
    expect(during).toEqual(["a.txt"]);
    expect(existsSync(lockFileOf(dir, "a.txt"))).toBe(false);
  });

  it("makes another process wait, then lets it in once released", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    let other: Child | undefined;
    await withPathLock(file, async () => {
      other = child(
        `process.stdout.write("asking\\n");
         await lib.withPathLock(args[0], () => process.stdout.write("got it\\n"), { waitMs: 20000 });`,
        file,
      );
      expect(await other.line()).toBe("asking");
      // Held here until the child has been refused the lock at least once (it polls).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(existsSync(lockFileOf(dir, "a.txt"))).toBe(true);
    });
    expect(await (other as Child).line()).toBe("got it");
    expect(await (other as Child).exited).toBe(0);
  });

  it("refuses another process with LOCKED naming the holder once its wait is over", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    await withPathLock(
      file,
      async () => {
        const other = child(
          `try { await lib.withPathLock(args[0], () => {}, { waitMs: 200 }); console.log("got it"); }
           catch (error) { console.log(error.code + " " + error.message); }`,
          file,
        );
        const said = await other.line();
        expect(said).toMatch(/^LOCKED /);
        expect(said).toContain(`freshfs process ${process.pid}`);
        expect(said).toContain("rename");
        expect(said).toContain(lockFileOf(dir, "a.txt"));
      },
      { operation: "rename" },
    );
  });

  it("is taken over at once when its holder was killed with SIGKILL", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    const held = holder(file);
    expect(await held.line()).toBe("held");
    held.process.kill("SIGKILL");
    await held.exited;
    expect(existsSync(lockFileOf(dir, "a.txt"))).toBe(true);
    // Far less than LOCK_STALE_MS: the pid is gone, so age does not matter.
    expect(await withPathLock(file, () => "ran", { waitMs: 2000 })).toBe("ran");
    const workspace = new Workspace({ roots: dir });
    await workspace.read({ file_path: file });
    await workspace.edit({ file_path: file, old_string: "one", new_string: "two" });
    expect(readFileSync(file, "utf8")).toBe("two\n");
    expect(readdirSync(dir)).toEqual(["a.txt"]);
  });

  it("waits for a killed holder's lock no longer than for a live one: a Workspace edit proceeds", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    const workspace = new Workspace({ roots: dir });
    await workspace.read({ file_path: file });
    const held = holder(file);
    expect(await held.line()).toBe("held");
    const edit = workspace.edit({ file_path: file, old_string: "one", new_string: "two" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    held.process.kill("SIGKILL");
    await edit;
    expect(readFileSync(file, "utf8")).toBe("two\n");
  });

  it("is not taken over while its holder lives, wherever it may be checked", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    const held = holder(file);
    try {
      expect(await held.line()).toBe("held");
      const message = await rejectsWith(
        withPathLock(file, () => {}, { waitMs: 150 }),
        "LOCKED",
      );
      expect(message).toContain(`freshfs process ${held.process.pid}`);
      expect(message).toContain("edit");
    } finally {
      held.process.kill("SIGKILL");
      await held.exited;
    }
  });

  it("from a holder it cannot check (another machine or pid namespace), only once older than LOCK_STALE_MS", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const foreign = {
      pid: 1,
      host: "elsewhere",
      boot: "another-boot-id",
      pidns: "pid:[1]",
      start: "1",
      operation: "write",
      since: Date.now(),
    };
    const message = await refusedUntilOld(dir, (lock) =>
      writeFileSync(lock, JSON.stringify(foreign)),
    );
    expect(message).toContain("freshfs process 1 on elsewhere, write");
  });

  it("whose pid now belongs to another process (a reused pid) is taken over", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    const mine = JSON.parse(
      await new Promise<string>((resolve) =>
        withPathLock(file, () => resolve(readFileSync(lockFileOf(dir, "a.txt"), "utf8"))),
      ),
    );
    const other = spawn("sleep", ["30"]);
    try {
      // Our own boot and namespace, a live pid, but not the start time that pid had.
      writeFileSync(
        lockFileOf(dir, "a.txt"),
        JSON.stringify({ ...mine, pid: other.pid, start: "1" }),
      );
      expect(await withPathLock(file, () => "ran", { waitMs: 100 })).toBe("ran");
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("that names no holder (killed between its create and its write) is judged by its age", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const message = await refusedUntilOld(dir, (lock) => writeFileSync(lock, ""));
    expect(message).toContain("names no holder");
  });

  it("in the shape of something else (a directory) is waited for, not spun on, then taken over by age", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const message = await refusedUntilOld(dir, (lock) => mkdirSync(lock));
    expect(message).toContain("names no holder");
  });

  it("stops waiting when the caller aborts", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const file = join(dir, "a.txt");
    const held = holder(file);
    try {
      expect(await held.line()).toBe("held");
      const controller = new AbortController();
      const waiting = withPathLock(file, () => {}, { signal: controller.signal, waitMs: 20000 });
      setTimeout(() => controller.abort(), 50);
      await rejectsWith(waiting, "ABORTED");
    } finally {
      held.process.kill("SIGKILL");
      await held.exited;
    }
  });

  it("is never listed by the scan, glob or grep", async () => {
    const dir = await tempTree({ "a.txt": "one\n", ".a.txt.freshfs-lockx": "not ours" });
    const file = join(dir, "a.txt");
    await withPathLock(file, async () => {
      const scan = await getOrScan(dir, { includeHidden: true });
      expect(scan.entries.map((e) => e.path)).toEqual([".a.txt.freshfs-lockx", "a.txt"]);
      expect((await glob("**", { path: dir, hidden: true })).matches).toEqual([
        ".a.txt.freshfs-lockx",
        "a.txt",
      ]);
      const found = await grep(".", { path: dir, outputMode: "files_with_matches" });
      expect(found.files).toEqual([".a.txt.freshfs-lockx", "a.txt"]);
    });
  });

  it("has a name within NAME_MAX for a file whose name is near it, as does the temp file", async () => {
    const name = `${"é".repeat(120)}.txt`; // 244 bytes
    const dir = await tempTree({ [name]: "one\n" });
    const workspace = new Workspace({ roots: dir });
    const file = join(dir, name);
    await workspace.read({ file_path: file });
    let held = "";
    await withPathLock(file, () => {
      held = lockFileOf(dir, name);
      expect(existsSync(held)).toBe(true);
    });
    expect(Buffer.byteLength(basename(held))).toBeLessThanOrEqual(255);
    await workspace.edit({ file_path: file, old_string: "one", new_string: "two" });
    expect(readFileSync(file, "utf8")).toBe("two\n");
    expect(readdirSync(dir)).toEqual([name]);
  });

  it("is not needed where the directory does not exist yet (the create is exclusive)", async () => {
    const dir = await tempTree({});
    expect(await acquireFileLock(join(dir, "missing", "a.txt"))).toBeUndefined();
    const workspace = new Workspace({ roots: dir });
    await workspace.write({ file_path: "missing/a.txt", content: "new\n" });
    expect(readFileSync(join(dir, "missing", "a.txt"), "utf8")).toBe("new\n");
  });
});

describe("two processes editing one file", () => {
  it("lose no accepted edit: 3 processes x 150 read -> edit cycles, each on its own line", async () => {
    const dir = await tempTree({ "f.txt": "slot 0: 0\nslot 1: 0\nslot 2: 0\n" });
    const script = `
      const [dir, me, rounds] = args;
      const ws = new lib.Workspace({ roots: dir });
      let accepted = 0;
      const lost = [];
      const refused = {};
      for (let i = 0; i < Number(rounds); i++) {
        try {
          const read = await ws.read({ file_path: "f.txt" });
          const value = Number(read.lines.find((l) => l.startsWith("slot " + me + ":")).split(": ")[1]);
          if (value !== accepted) lost.push([accepted, value]);
          const op = i % 3;
          const old = "slot " + me + ": " + value + "\\n";
          const next = "slot " + me + ": " + (value + 1) + "\\n";
          if (op === 0) await ws.edit({ file_path: "f.txt", old_string: old, new_string: next });
          else if (op === 1) await ws.multiEdit({ file_path: "f.txt", edits: [{ old_string: old, new_string: next }] });
          else await ws.write({ file_path: "f.txt", content: read.lines.map((l) => l + "\\n").join("").replace(old, next) });
          accepted++;
        } catch (error) {
          if (!(error instanceof lib.FreshfsError)) throw error;
          refused[error.code] = (refused[error.code] ?? 0) + 1;
        }
      }
      console.log(JSON.stringify({ accepted, lost, refused }));`;
    const children = [0, 1, 2].map((me) => child(script, dir, String(me), "150"));
    const reports = await Promise.all(children.map(async (c) => JSON.parse(await c.line())));
    const final = readFileSync(join(dir, "f.txt"), "utf8");
    for (const [me, report] of reports.entries()) {
      expect(report.lost).toEqual([]);
      expect(Object.keys(report.refused).filter((code) => code !== "STALE")).toEqual([]);
      expect(final).toContain(`slot ${me}: ${report.accepted}\n`);
    }
    expect(reports.reduce((sum, r) => sum + r.accepted, 0)).toBeGreaterThan(0);
  });
});

describe("the re-check just before the change, against writers outside freshfs", () => {
  /** A Workspace whose guard, once it has passed `path`, lets another writer replace the file. */
  async function replacedAfterCheck(policy: "strict" | "warn") {
    const dir = await tempTree({ "a.txt": "one\n", "b.txt": "bee\n" });
    const workspace = new Workspace({ roots: dir, policy });
    await workspace.read({ file_path: "a.txt" });
    const tracker = workspace.tracker;
    const checkEdit = tracker.checkEdit.bind(tracker);
    tracker.checkEdit = async (path, options) => {
      const verdict = await checkEdit(path, options);
      if (path.endsWith("a.txt")) {
        writeFileSync(join(dir, ".other"), "changed by an editor\n");
        const { renameSync } = await import("node:fs");
        renameSync(join(dir, ".other"), join(dir, "a.txt"));
      }
      return verdict;
    };
    return { dir, workspace };
  }

  for (const policy of ["strict", "warn"] as const) {
    it(`${policy}: delete refuses with STALE and deletes nothing`, async () => {
      const { dir, workspace } = await replacedAfterCheck(policy);
      const message = await rejectsWith(workspace.delete({ file_path: "a.txt" }), "STALE");
      expect(message).toMatch(/while it was being deleted/);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("changed by an editor\n");
    });

    it(`${policy}: rename with overwrite refuses with STALE and replaces nothing`, async () => {
      const { dir, workspace } = await replacedAfterCheck(policy);
      const message = await rejectsWith(
        workspace.rename({ from: "b.txt", to: "a.txt", overwrite: true }),
        "STALE",
      );
      expect(message).toMatch(/while it was being replaced/);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("changed by an editor\n");
      expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("bee\n");
    });
  }

  for (const policy of ["strict", "warn"] as const) {
    it(`${policy}: rename with overwrite onto a file read and since deleted is judged as a write would be`, async () => {
      const dir = await tempTree({ "a.txt": "one\n", "b.txt": "bee\n" });
      const workspace = new Workspace({ roots: dir, policy });
      await workspace.read({ file_path: "a.txt" });
      unlinkSync(join(dir, "a.txt"));
      const rename = workspace.rename({ from: "b.txt", to: "a.txt", overwrite: true });
      if (policy === "strict") {
        expect(await rejectsWith(rename, "STALE")).toMatch(/deleted/);
        expect(readdirSync(dir)).toEqual(["b.txt"]);
      } else {
        expect((await rename).warnings.join(" ")).toMatch(/deleted/);
        expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("bee\n");
      }
      // Never read and not there: nothing to judge.
      await workspace.write({ file_path: "c.txt", content: "sea\n" });
      await workspace.rename({ from: "c.txt", to: "d.txt", overwrite: true });
      expect(readFileSync(join(dir, "d.txt"), "utf8")).toBe("sea\n");
    });
  }

  it("a renamed file's record moves only for the bytes that were read", async () => {
    const dir = await tempTree({ "b.txt": "bee\n" });
    const workspace = new Workspace({ roots: dir });
    await workspace.read({ file_path: "b.txt" });
    const tracker = workspace.tracker;
    const checkEdit = tracker.checkEdit.bind(tracker);
    tracker.checkEdit = async (path, options) => {
      const verdict = await checkEdit(path, options);
      // An editor rewrites the source right after the rename looked at it.
      if (path.endsWith("b.txt")) writeFileSync(join(dir, "b.txt"), "changed by an editor\n");
      return verdict;
    };
    await workspace.rename({ from: "b.txt", to: "c.txt" });
    tracker.checkEdit = checkEdit;
    expect(readFileSync(join(dir, "c.txt"), "utf8")).toBe("changed by an editor\n");
    await rejectsWith(
      workspace.edit({ file_path: "c.txt", old_string: "changed", new_string: "CHANGED" }),
      "STALE",
    );
  });
});

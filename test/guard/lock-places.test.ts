/**
 * Where freshfs's own files live (`io/state-dirs`): lock files and a write's temp files out of
 * the user's tree, so git, an IDE and a build watcher never see them. In a git work tree, the
 * repository's common git directory (`freshfs/locks/`, `freshfs/tmp-<uid>/`); elsewhere, or
 * where that may not be written, the user's runtime directory. Each case of the tree (no
 * repository, a linked worktree, a read-only `.git`, a git directory on another file system,
 * two mount paths of one repository) with real git, real second processes and real mounts
 * where this process may make them.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  type FSWatcher,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { glob, grep, Workspace, withPathLock } from "../../src/index.js";
import { lockPlaceOf } from "../../src/io/state-dirs.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { createTempRepo, type TempRepo } from "../helpers/git.js";
import { libChild, lockHolder } from "../helpers/lib-child.js";
import { canRunAsNobody, runAsNobody } from "../helpers/nobody.js";

const UID = process.getuid?.() ?? 0;

/** A private runtime directory for this file's tests (and the children they start). */
let runtime: string;
const savedRuntime = process.env.FRESHFS_RUNTIME_DIR;
beforeEach(() => {
  runtime = join(realpathSync(mkdtempSync(join(tmpdir(), "freshfs-run-"))), "state");
  process.env.FRESHFS_RUNTIME_DIR = runtime;
});
afterEach(() => {
  if (savedRuntime === undefined) delete process.env.FRESHFS_RUNTIME_DIR;
  else process.env.FRESHFS_RUNTIME_DIR = savedRuntime;
  rmSync(dirname(runtime), { recursive: true, force: true });
});

const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.remove();
});

/** A repository holding `files`, committed. */
async function repoWith(files: Record<string, string>): Promise<TempRepo> {
  const repo = await createTempRepo();
  repos.push(repo);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repo.dir, path)), { recursive: true });
    writeFileSync(join(repo.dir, path), content);
  }
  await repo.git(["add", "-A"]);
  const commit = await repo.git([
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@t",
    "commit",
    "-qm",
    "0",
  ]);
  expect(commit.status).toBe(0);
  return repo;
}

function statusOf(repo: TempRepo): string {
  return spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: repo.dir,
    env: { ...process.env, HOME: repo.home, GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8",
  }).stdout;
}

function lockFile(entry: string): string {
  const place = lockPlaceOf(entry);
  if (!place) throw new Error(`no lock place for ${entry}`);
  return join(place.dir, place.name);
}

/** A directory's names, none when it does not exist (yet). */
function namesIn(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/**
 * Runs a Workspace write of `file` (read first) and calls `during` at each of the guard's
 * checks: the last runs while the temp file is flushed and not yet renamed.
 */
async function duringWrite(root: string, file: string, during: () => void): Promise<void> {
  const workspace = new Workspace({ roots: root });
  await workspace.read({ file_path: file });
  const tracker = workspace.tracker;
  const checkEdit = tracker.checkEdit.bind(tracker);
  let called = 0;
  tracker.checkEdit = async (path, options) => {
    const verdict = await checkEdit(path, options);
    called++;
    during();
    return verdict;
  };
  await workspace.write({ file_path: file, content: "rewritten\n" });
  expect(called).toBeGreaterThan(0);
  expect(readFileSync(join(root, file), "utf8")).toBe("rewritten\n");
}

/** Whether this process may make and remove mounts (root, with CAP_SYS_ADMIN). */
const canMount = (() => {
  if (UID !== 0) return false;
  const probe = mkdtempSync(join(tmpdir(), "freshfs-mount-"));
  try {
    if (spawnSync("mount", ["--bind", probe, probe]).status !== 0) return false;
    return spawnSync("umount", [probe]).status === 0;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** `/dev/shm` when it is a file system other than the temp dir's (tmpfs, usually). */
const otherFs = (() => {
  try {
    return statSync("/dev/shm").dev !== statSync(tmpdir()).dev ? "/dev/shm" : undefined;
  } catch {
    return undefined;
  }
})();

const mounts: string[] = [];
afterEach(() => {
  for (const path of mounts.splice(0).reverse()) spawnSync("umount", [path]);
});

function mount(args: string[], at: string): void {
  const done = spawnSync("mount", [...args, at], { encoding: "utf8" });
  if (done.status !== 0) throw new Error(`mount ${args.join(" ")} ${at}: ${done.stderr}`);
  mounts.push(at);
}

describe("in a git work tree", () => {
  it("keeps the lock in the git directory, named by the path in the work tree, and git status shows nothing", async () => {
    const repo = await repoWith({ "a.txt": "one\n", "sub/b.txt": "bee\n" });
    const file = join(repo.dir, "sub", "b.txt");
    const place = lockPlaceOf(file);
    expect(place).toMatchObject({
      dir: join(repo.dir, ".git", "freshfs", "locks"),
      scope: "repository",
    });
    expect(place?.name).toMatch(/^\.b\.txt\.[0-9a-f]{16}\.freshfs-lock$/);
    // Another file of the same name elsewhere in the tree has a lock of its own.
    mkdirSync(join(repo.dir, "other"));
    expect(lockPlaceOf(join(repo.dir, "other", "b.txt"))?.name).not.toBe(place?.name);
    await withPathLock(file, () => {
      expect(existsSync(lockFile(file))).toBe(true);
      expect(statusOf(repo)).toBe("");
      expect(readdirSync(join(repo.dir, "sub"))).toEqual(["b.txt"]);
    });
    expect(readdirSync(join(repo.dir, ".git", "freshfs", "locks"))).toEqual([]);
  });

  it("flushes a write's temp file in the git directory, so the tree sees one rename", async () => {
    const repo = await repoWith({ "a.txt": "one\n" });
    const staging = join(repo.dir, ".git", "freshfs", `tmp-${UID}`);
    let seen: { tree: string[]; staged: string[]; status: string } | undefined;
    await duringWrite(repo.dir, "a.txt", () => {
      seen = {
        tree: namesIn(repo.dir),
        staged: namesIn(staging),
        status: statusOf(repo),
      };
    });
    expect(seen?.tree).toEqual([".git", "a.txt"]);
    expect(seen?.staged).toHaveLength(1);
    expect(seen?.staged[0]).toMatch(/^\.a\.txt\.freshfs-[0-9a-f]{12}\.tmp$/);
    expect(seen?.status).toBe("");
    expect(statSync(staging).mode & 0o777).toBe(0o700);
    expect(readdirSync(staging)).toEqual([]);
    expect(statusOf(repo)).toBe(" M a.txt\n");
  });

  it("makes its directories with the git directory's permissions (a shared repository's too)", async () => {
    const repo = await repoWith({ "a.txt": "one\n" });
    chmodSync(join(repo.dir, ".git"), 0o2775);
    await withPathLock(join(repo.dir, "a.txt"), () => {});
    for (const dir of ["freshfs", "freshfs/locks"]) {
      expect(statSync(join(repo.dir, ".git", dir)).mode & 0o7777).toBe(0o2775);
    }
  });

  it("puts a linked worktree's locks in the common directory, apart from the main tree's", async () => {
    const repo = await repoWith({ "a.txt": "one\n" });
    const linked = join(dirname(repo.dir), "linked");
    expect((await repo.git(["worktree", "add", "-q", linked])).status).toBe(0);
    const main = lockPlaceOf(join(repo.dir, "a.txt"));
    const other = lockPlaceOf(join(linked, "a.txt"));
    expect(other?.dir).toBe(join(repo.dir, ".git", "freshfs", "locks"));
    expect(other?.name).not.toBe(main?.name);
    const held = lockHolder(join(linked, "a.txt"));
    try {
      expect(await held.line()).toBe("held");
      const message = await rejectsWith(
        withPathLock(join(linked, "a.txt"), () => {}, { waitMs: 150 }),
        "LOCKED",
      );
      expect(message).toContain(lockFile(join(linked, "a.txt")));
      // The main tree's a.txt is another file: not held.
      expect(await withPathLock(join(repo.dir, "a.txt"), () => "ran", { waitMs: 150 })).toBe("ran");
    } finally {
      held.process.kill("SIGKILL");
      await held.exited;
    }
    expect(readdirSync(linked).sort()).toEqual([".git", "a.txt"]);
  });

  it.skipIf(!canMount)(
    "names a lock the same through two mount paths of one repository, and they exclude each other",
    async () => {
      const repo = await repoWith({ "a.txt": "one\n" });
      const elsewhere = realpathSync(mkdtempSync(join(tmpdir(), "freshfs-mnt-")));
      mount(["--bind", repo.dir], elsewhere);
      try {
        expect(lockPlaceOf(join(elsewhere, "a.txt"))?.name).toBe(
          lockPlaceOf(join(repo.dir, "a.txt"))?.name,
        );
        const held = lockHolder(join(elsewhere, "a.txt"));
        try {
          expect(await held.line()).toBe("held");
          await rejectsWith(
            withPathLock(join(repo.dir, "a.txt"), () => {}, { waitMs: 150 }),
            "LOCKED",
          );
        } finally {
          held.process.kill("SIGKILL");
          await held.exited;
        }
      } finally {
        spawnSync("umount", [elsewhere]);
        mounts.splice(mounts.indexOf(elsewhere), 1);
        rmSync(elsewhere, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(!canMount)(
    "with a read-only .git (a read-only mount): locks and temp files in the user's runtime directory",
    async () => {
      const repo = await repoWith({ "a.txt": "one\n" });
      const gitDir = join(repo.dir, ".git");
      mount(["--bind", gitDir], gitDir);
      mount(["-o", "remount,bind,ro"], gitDir);
      expect(lockPlaceOf(join(repo.dir, "a.txt"))).toMatchObject({
        dir: join(runtime, "locks"),
        scope: "user",
      });
      let tree: string[] = [];
      await duringWrite(repo.dir, "a.txt", () => {
        tree = namesIn(repo.dir);
      });
      expect(tree).toEqual([".git", "a.txt"]);
      expect(existsSync(join(gitDir, "freshfs"))).toBe(false);
    },
  );

  it.skipIf(!canRunAsNobody)(
    "with a .git the user may not write: the user's runtime directory, and the edit lands",
    async () => {
      const repo = await repoWith({ "a.txt": "one\n" });
      for (const path of [dirname(repo.dir), repo.dir]) chmodSync(path, 0o777);
      chmodSync(join(repo.dir, "a.txt"), 0o666);
      // A parent nobody may write, as the temp dir is.
      chmodSync(dirname(runtime), 0o1777);
      const own = join(dirname(runtime), "nobody-state");
      const run = runAsNobody(
        `process.env.FRESHFS_RUNTIME_DIR = ${JSON.stringify(own)};
       const lib = await import("ENTRY");
       const { lockPlaceOf } = await import(new URL("./io/state-dirs.js", "ENTRY").href);
       const ws = new lib.Workspace({ roots: ${JSON.stringify(repo.dir)} });
       await ws.read({ file_path: "a.txt" });
       await ws.edit({ file_path: "a.txt", old_string: "one", new_string: "two" });
       console.log(JSON.stringify(lockPlaceOf(${JSON.stringify(join(repo.dir, "a.txt"))})));`,
      );
      expect(run.stderr).toBe("");
      expect(JSON.parse(run.stdout)).toMatchObject({ dir: join(own, "locks"), scope: "user" });
      expect(readFileSync(join(repo.dir, "a.txt"), "utf8")).toBe("two\n");
      expect(existsSync(join(repo.dir, ".git", "freshfs"))).toBe(false);
      expect(statSync(own)).toMatchObject({ uid: 65534 });
      expect(statSync(own).mode & 0o777).toBe(0o700);
      expect(readdirSync(repo.dir).sort()).toEqual([".git", "a.txt"]);
    },
  );

  it.skipIf(!otherFs)(
    "with the git directory on another file system: locks there, temp files where a rename can reach",
    async () => {
      const repo = await createTempRepo();
      repos.push(repo);
      const gitDir = mkdtempSync(join(otherFs as string, "freshfs-gitdir-"));
      try {
        rmSync(join(repo.dir, ".git"), { recursive: true, force: true });
        expect((await repo.git(["init", "-q", `--separate-git-dir=${gitDir}`])).status).toBe(0);
        writeFileSync(join(repo.dir, "a.txt"), "one\n");
        expect(lockPlaceOf(join(repo.dir, "a.txt"))).toMatchObject({
          dir: join(gitDir, "freshfs", "locks"),
          scope: "repository",
        });
        // The runtime directory shares the tree's file system: the temp file goes there.
        let tree: string[] = [];
        let staged: string[] = [];
        await duringWrite(repo.dir, "a.txt", () => {
          tree = namesIn(repo.dir);
          staged = namesIn(join(runtime, "staging"));
        });
        expect(tree).toEqual([".git", "a.txt"]);
        expect(staged).toHaveLength(1);
        // Neither shares it: beside the file, for the milliseconds of the write, as before.
        process.env.FRESHFS_RUNTIME_DIR = join(gitDir, "user-state");
        await duringWrite(repo.dir, "a.txt", () => {
          tree = namesIn(repo.dir);
        });
        expect(tree).toHaveLength(3);
        expect(tree[0]).toMatch(/^\.a\.txt\.freshfs-[0-9a-f]{12}\.tmp$/);
        expect(readdirSync(repo.dir).sort()).toEqual([".git", "a.txt"]);
      } finally {
        rmSync(gitDir, { recursive: true, force: true });
      }
    },
  );
});

describe("outside a git repository", () => {
  it("keeps the lock in the user's runtime directory, named by the device and the real path", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const place = lockPlaceOf(join(dir, "a.txt"));
    const dev = statSync(dir).dev.toString(16);
    expect(place).toMatchObject({ dir: join(runtime, "locks"), scope: "user" });
    expect(place?.name).toMatch(new RegExp(`^\\.a\\.txt\\.${dev}-[0-9a-f]{16}\\.freshfs-lock$`));
    await withPathLock(join(dir, "a.txt"), () => {
      expect(existsSync(lockFile(join(dir, "a.txt")))).toBe(true);
      expect(readdirSync(dir)).toEqual(["a.txt"]);
    });
    expect(statSync(runtime).mode & 0o777).toBe(0o700);
    let tree: string[] = [];
    await duringWrite(dir, "a.txt", () => {
      tree = namesIn(dir);
    });
    expect(tree).toEqual(["a.txt"]);
  });

  it("refuses a runtime directory other users may enter, or that is not the user's, and changes nothing", async () => {
    const dir = await tempTree({ "a.txt": "one\n" });
    const workspace = new Workspace({ roots: dir });
    await workspace.read({ file_path: "a.txt" });
    mkdirSync(runtime, { mode: 0o755 });
    chmodSync(runtime, 0o755);
    const open = await rejectsWith(
      workspace.edit({ file_path: "a.txt", old_string: "one", new_string: "two" }),
      "PERMISSION_DENIED",
    );
    expect(open).toContain(runtime);
    expect(open).toContain("mode 755");
    if (UID === 0) {
      process.env.FRESHFS_RUNTIME_DIR = join(dirname(runtime), "theirs");
      mkdirSync(process.env.FRESHFS_RUNTIME_DIR, { mode: 0o700 });
      chownSync(process.env.FRESHFS_RUNTIME_DIR, 65534, 65534);
      const theirs = await rejectsWith(
        workspace.edit({ file_path: "a.txt", old_string: "one", new_string: "two" }),
        "PERMISSION_DENIED",
      );
      expect(theirs).toContain("belongs to uid 65534");
    }
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("one\n");
  });
});

describe("what killed holders leave", () => {
  it("a dead holder's lock file is swept by the next process that locks in that directory; a live one's stays", async () => {
    const repo = await repoWith({ "a.txt": "one\n", "b.txt": "bee\n", "c.txt": "sea\n" });
    const dead = lockHolder(join(repo.dir, "a.txt"));
    const alive = lockHolder(join(repo.dir, "c.txt"));
    try {
      expect(await dead.line()).toBe("held");
      expect(await alive.line()).toBe("held");
      dead.process.kill("SIGKILL");
      await dead.exited;
      expect(existsSync(lockFile(join(repo.dir, "a.txt")))).toBe(true);
      const next = libChild(`await lib.withPathLock(args[0], () => {}); console.log("done");`, [
        join(repo.dir, "b.txt"),
      ]);
      expect(await next.line()).toBe("done");
      await next.exited;
      expect(existsSync(lockFile(join(repo.dir, "a.txt")))).toBe(false);
      expect(existsSync(lockFile(join(repo.dir, "c.txt")))).toBe(true);
    } finally {
      alive.process.kill("SIGKILL");
      await alive.exited;
    }
  });

  it("temp files and staged records a killed writer left are swept once they are old", async () => {
    const repo = await repoWith({ "a.txt": "one\n", "b.txt": "bee\n" });
    await withPathLock(join(repo.dir, "a.txt"), () => {});
    await duringWrite(repo.dir, "a.txt", () => {});
    const staging = join(repo.dir, ".git", "freshfs", `tmp-${UID}`);
    const locks = join(repo.dir, ".git", "freshfs", "locks");
    writeFileSync(join(staging, ".a.txt.freshfs-0123456789ab.tmp"), "half a write");
    writeFileSync(join(locks, ".x.freshfs-lock.freshfs-0123456789ab.tmp"), "{}");
    // A second process whose clock runs two minutes ahead: every inode looks old to it.
    const later = libChild(
      `const now = Date.now; Date.now = () => now() + 120000;
       const ws = new lib.Workspace({ roots: args[0] });
       await ws.read({ file_path: "b.txt" });
       await ws.write({ file_path: "b.txt", content: "new\\n" });
       console.log("done");`,
      [repo.dir],
    );
    expect(await later.line()).toBe("done");
    await later.exited;
    expect(readdirSync(staging)).toEqual([]);
    expect(readdirSync(locks)).toEqual([]);
    expect(readFileSync(join(repo.dir, "b.txt"), "utf8")).toBe("new\n");
  });

  it("SIGKILL at random moments of a writer: nothing left in the work tree, and the next writer proceeds", async () => {
    const names = ["a.txt", "b.txt", "c.txt"];
    const repo = await repoWith(Object.fromEntries(names.map((n) => [n, `${n}\n`])));
    for (let run = 0; run < 8; run++) {
      const writer = libChild(
        `const ws = new lib.Workspace({ roots: args[0] });
         console.log("ready");
         for (let i = 0; ; i++) {
           const file = ["a.txt", "b.txt", "c.txt"][i % 3];
           await ws.read({ file_path: file });
           await ws.write({ file_path: file, content: file + " " + i + "\\n" });
         }`,
        [repo.dir],
      );
      expect(await writer.line()).toBe("ready");
      await new Promise((resolve) => setTimeout(resolve, 20 + ((run * 37) % 60)));
      writer.process.kill("SIGKILL");
      await writer.exited;
      expect(readdirSync(repo.dir).sort()).toEqual([".git", ...names]);
      expect(
        statusOf(repo)
          .split("\n")
          .filter((line) => line.startsWith("??")),
      ).toEqual([]);
      // A lock the kill left is taken over at once: far less than LOCK_STALE_MS of waiting.
      for (const name of names) {
        expect(await withPathLock(join(repo.dir, name), () => "ran", { waitMs: 1000 })).toBe("ran");
      }
    }
  });
});

describe("freshfs's own listings and a watcher of the tree", () => {
  it("never list the runtime directory, its locks or its temp files, even under the root", async () => {
    const root = await tempTree({ "a.txt": "one\n" });
    process.env.FRESHFS_RUNTIME_DIR = join(root, "state");
    const workspace = new Workspace({ roots: root });
    await workspace.read({ file_path: "a.txt" });
    await workspace.write({ file_path: "a.txt", content: "two\n" });
    expect(readdirSync(root).sort()).toEqual(["a.txt", "state"]);
    await withPathLock(join(root, "a.txt"), async () => {
      expect(existsSync(lockFile(join(root, "a.txt")))).toBe(true);
      expect((await glob("**", { path: root, hidden: true })).matches).toEqual(["a.txt"]);
      expect((await grep(".", { path: root, outputMode: "files_with_matches" })).files).toEqual([
        "a.txt",
      ]);
    });
    const listed = await workspace.list({ depth: 3, hidden: true });
    expect(listed.entries.map((entry) => entry.path)).toEqual(["a.txt"]);
  });

  it("a watcher of every directory of the work tree hears only the files' own names while another process rewrites them", async () => {
    const names = ["a.txt", "sub/b.txt", "sub/deep/c.txt"];
    const repo = await repoWith(Object.fromEntries(names.map((n) => [n, "0\n"])));
    const heard = new Set<string>();
    const watchers: FSWatcher[] = [];
    for (const dir of ["", "sub", "sub/deep"]) {
      watchers.push(
        watch(join(repo.dir, dir), (_event, name) => {
          if (name) heard.add(dir === "" ? name : `${dir}/${name}`);
        }),
      );
    }
    try {
      const writer = libChild(
        `const ws = new lib.Workspace({ roots: args[0] });
         for (let i = 0; i < 30; i++) {
           const file = JSON.parse(args[1])[i % 3];
           const round = Math.floor(i / 3);
           await ws.read({ file_path: file });
           await ws.edit({ file_path: file, old_string: round + "\\n", new_string: round + 1 + "\\n" });
         }
         console.log("done");`,
        [repo.dir, JSON.stringify(names)],
      );
      expect(await writer.line()).toBe("done");
      await writer.exited;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      for (const watcher of watchers) watcher.close();
    }
    for (const name of names) expect(readFileSync(join(repo.dir, name), "utf8")).toBe("10\n");
    expect([...heard].sort()).toEqual([...names].sort());
  });
});

/**
 * The daemon's snapshots, with real processes: a daemon writes its tree's content index to the
 * cache directory (never the tree); the next daemon loads it, confirms each file by its stat,
 * and answers its first grep from it, as rg answers, even after 100 files changed while no
 * daemon ran (rewrites with their mtime put back, deletes, creates, a directory renamed). A
 * snapshot cut short, changed or of another tree is discarded with one warning, and the answers
 * stay right. A daemon started with no call keeps again the trees it kept.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DaemonStatus } from "../../src/daemon/methods.js";
import { BIN, envFor, freshfs, runtimeDir, stopDaemons, until } from "../helpers/daemons.js";
import { tempTree } from "../helpers/fs.js";

const MTIME = 1_577_836_800;
const DIRS = 10;
const PER_DIR = 30;

/** 300 files, each with a token of its own and one shared by every tenth. */
async function makeTree(lifetime: "test" | "file" = "test"): Promise<string> {
  const files: Record<string, string> = {};
  for (let d = 0; d < DIRS; d++) {
    for (let f = 0; f < PER_DIR; f++) {
      const n = d * PER_DIR + f;
      files[`d${d}/f${f}.txt`] = `token_${n} common\n${n % 10 === 0 ? "tenth\n" : ""}`;
    }
  }
  const root = await tempTree(files, { lifetime });
  for (const path of Object.keys(files)) utimesSync(join(root, path), MTIME, MTIME);
  return root;
}

function status(env: NodeJS.ProcessEnv, cwd: string): DaemonStatus | undefined {
  const run = freshfs(["daemon", "status", "--json"], cwd, env);
  return run.status === 0 ? (JSON.parse(run.stdout) as DaemonStatus) : undefined;
}

function snapshotOf(env: NodeJS.ProcessEnv, root: string) {
  return status(env, root)?.roots.find((r) => r.root === root)?.snapshots[0];
}

/** rg's answer for `args` in `root`, its lines sorted (rg's order is its threads'). */
function rg(args: readonly string[], root: string): string {
  // stdin not a pipe: rg searches the directory, not its input.
  const run = spawnSync("rg", [...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return run.stdout.split("\n").filter(Boolean).sort().join("\n");
}

function sorted(text: string): string {
  return text.split("\n").filter(Boolean).sort().join("\n");
}

const QUERIES: readonly (readonly string[])[] = [
  ["-l", "common"],
  ["-c", "tenth"],
  ["-l", "token_1\\b"],
  ["-n", "CHANGE|ADDED"],
  ["-l", "token_2[0-9]\\b"],
];

/** Every query answered through the daemon as rg answers it. */
function expectAsRg(root: string, env: NodeJS.ProcessEnv): void {
  for (const args of QUERIES) {
    const through = freshfs(["grep", ...args], root, env);
    expect(through.stderr, args.join(" ")).toBe("");
    expect(sorted(through.stdout), args.join(" ")).toBe(rg(args, root));
  }
}

/** Starts a daemon, builds the tree's index through two greps, waits for its snapshot, stops. */
async function saveSnapshot(root: string, env: NodeJS.ProcessEnv): Promise<string> {
  // A command answers itself a tree the daemon does not keep yet, and has it kept after it.
  freshfs(["daemon", "start"], root, env);
  await until(
    () => {
      freshfs(["grep", "-c", "common"], root, env);
      return snapshotOf(env, root)?.current === true;
    },
    "a current snapshot",
    30_000,
  );
  expect(freshfs(["daemon", "stop"], root, env).status).toBe(0);
  await until(() => status(env, root) === undefined, "the daemon to stop");
  const dir = join(env.FRESHFS_CACHE_DIR as string, "snapshots");
  const files = readdirSync(dir).filter((name) => name.endsWith(".snapshot"));
  expect(readdirSync(dir).filter((name) => name.endsWith(".listing"))).toHaveLength(1);
  expect(files).toHaveLength(1);
  return join(dir, files[0] as string);
}

/**
 * Starts the daemon (which keeps the trees of its snapshots again), then asks until `root`'s
 * snapshot is loaded or discarded: a snapshot of another tree, or none, under `root`'s name
 * brings `root` back only with a search of it.
 */
async function restart(root: string, env: NodeJS.ProcessEnv, ask = false): Promise<void> {
  expect(freshfs(["daemon", "start"], root, env).status).toBe(0);
  await until(
    () => {
      if (ask) freshfs(["grep", "-c", "common"], root, env);
      return snapshotOf(env, root)?.restore === "done";
    },
    "the snapshot's load",
    20_000,
  );
}

/** One test's daemon: a runtime directory and a cache directory of its own. */
async function setup(lifetime: "test" | "file" = "test") {
  const runtime = runtimeDir();
  const cache = await tempTree({}, { lifetime });
  const env = envFor(runtime, { FRESHFS_CACHE_DIR: cache });
  return { runtime, env, cache };
}

const started: string[] = [];
afterEach(() => {
  for (const runtime of started.splice(0)) stopDaemons(runtime);
});

describe("a daemon restarted with a snapshot", () => {
  it("loads it, reads again only what changed while it was down, and answers as rg", async () => {
    const root = await makeTree();
    const { runtime, env, cache } = await setup();
    started.push(runtime);
    const before = readdirSync(root, { recursive: true }).sort();
    const file = await saveSnapshot(root, env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Beside it, the tree's saved listing.
    expect(statSync(file.replace(/\.snapshot$/, ".listing")).mode & 0o777).toBe(0o600);
    expect(statSync(join(cache, "snapshots")).mode & 0o777).toBe(0o700);
    // Nothing of the daemon's in the tree.
    expect(readdirSync(root, { recursive: true }).sort()).toEqual(before);

    // 100 changes while no daemon runs.
    for (let n = 0; n < 40; n++) {
      // Same size, mtime put back: only the ctime (and inode, for none here) tells.
      const path = join(root, `d${n % DIRS}`, `f${Math.floor(n / DIRS)}.txt`);
      const text = readFileSync(path, "utf8");
      writeFileSync(path, text.replace("common", "CHANGE"));
      utimesSync(path, MTIME, MTIME);
    }
    for (let n = 0; n < 20; n++) {
      unlinkSync(join(root, `d${n % DIRS}`, `f${10 + Math.floor(n / DIRS)}.txt`));
    }
    for (let n = 0; n < 20; n++)
      writeFileSync(join(root, `d${n % DIRS}`, `new${n}.txt`), `ADDED ${n} common\n`);
    renameSync(join(root, "d9"), join(root, "moved"));
    mkdirSync(join(root, "d9"));
    writeFileSync(join(root, "d9", "f0.txt"), "CHANGED in a new directory\n");

    await restart(root, env);
    expectAsRg(root, env);
    const snapshot = snapshotOf(env, root);
    expect(snapshot?.outcome).toMatch(
      /^loaded in \d+ ms: \d+ files confirmed by their stat, \d+ to read again$/,
    );
    // Not trusted: the 40 rewritten, the 20 deleted, and the 24 left in the renamed directory
    // (gone from their paths; under the new ones they are new files, indexed anew).
    expect(snapshot?.outcome).toMatch(/ 216 files confirmed by their stat, 84 to read again$/);
    // A change after the load is heard as ever.
    writeFileSync(join(root, "d0", "late.txt"), "CHANGED late\n");
    expectAsRg(root, env);
  });

  it("started with no call, keeps again the trees it kept, its index loaded", async () => {
    const root = await makeTree();
    const { runtime, env } = await setup();
    started.push(runtime);
    await saveSnapshot(root, env);
    await restart(root, env);
    const snapshot = snapshotOf(env, root);
    expect(snapshot?.outcome).toMatch(/300 files confirmed by their stat, 0 to read again/);
    expect(snapshot?.current).toBe(true);
    expectAsRg(root, env);
  });

  it("started by a command (--reopen-after-ms), keeps its trees again only after that", async () => {
    const root = await makeTree();
    const { runtime, env } = await setup();
    started.push(runtime);
    await saveSnapshot(root, env);
    const daemon = spawn(process.execPath, [BIN, "daemon", "run", "--reopen-after-ms", "3000"], {
      env,
      stdio: "ignore",
    });
    try {
      await until(() => status(env, root) !== undefined, "the daemon to listen");
      // The command that started it searches alone meanwhile: no tree is kept yet.
      expect(status(env, root)?.roots.map((kept) => kept.root)).not.toContain(root);
      await until(() => snapshotOf(env, root)?.restore === "done", "the load", 15_000);
      expect(snapshotOf(env, root)?.outcome).toMatch(/^loaded in \d+ ms: 300 files confirmed/);
    } finally {
      daemon.kill("SIGKILL");
    }
  });

  it("with snapshots off (FRESHFS_SNAPSHOTS=0), writes none", async () => {
    const root = await makeTree();
    const { runtime, env, cache } = await setup();
    started.push(runtime);
    const off = { ...env, FRESHFS_SNAPSHOTS: "0" };
    freshfs(["daemon", "start"], root, off);
    await until(
      () => {
        freshfs(["grep", "-c", "common"], root, off);
        return (status(off, root)?.roots.find((r) => r.root === root)?.indexedFiles ?? 0) > 0;
      },
      "the tree indexed",
      20_000,
    );
    // Past the time a snapshot would be written (2 s after the build).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const seen = status(off, root);
    expect(seen?.pid).toBeGreaterThan(0);
    expect(seen?.snapshotDir).toBeUndefined();
    freshfs(["daemon", "stop"], root, off);
    await until(() => status(off, root) === undefined, "the daemon to stop");
    expect(readdirSync(cache)).toEqual([]);
  });
});

describe("a snapshot that cannot be trusted", () => {
  const spoil: Readonly<Record<string, (file: string, other: string) => void>> = {
    "cut short (a write cut mid-way)": (file) => truncateSync(file, statSync(file).size >> 1),
    "with a byte changed": (file) => {
      const bytes = readFileSync(file);
      const at = bytes.length >> 1;
      bytes[at] = (bytes[at] as number) ^ 0xff;
      writeFileSync(file, bytes);
    },
    "of another tree": (file, other) => cpSync(other, file),
    "not a snapshot at all": (file) => writeFileSync(file, "x".repeat(5000)),
  };

  /** A tree's snapshot, good, and another tree's, saved once for all the cases below. */
  let root: string;
  let cache: string;
  let file: string;
  let good: Buffer;
  let other: string;
  beforeAll(async () => {
    root = await makeTree("file");
    const mine = await setup("file");
    cache = mine.cache;
    file = await saveSnapshot(root, mine.env);
    good = readFileSync(file);
    const theirs = await setup("file");
    other = await saveSnapshot(await makeTree("file"), theirs.env);
  }, 90_000);

  for (const [how, damage] of Object.entries(spoil)) {
    it(`${how}: is discarded with one warning, and the answers stay right`, async () => {
      const runtime = runtimeDir();
      started.push(runtime);
      const env = envFor(runtime, { FRESHFS_CACHE_DIR: cache });
      writeFileSync(file, good);
      damage(file, other);
      expect(readFileSync(file).equals(good)).toBe(false);

      await restart(root, env, true);
      expect(snapshotOf(env, root)?.outcome).toMatch(/^discarded: /);
      expectAsRg(root, env);
      const log = readdirSync(runtime).find((name) => name.endsWith(".log"));
      const text = readFileSync(join(runtime, log as string), "utf8");
      expect(text.match(/was discarded/g)).toHaveLength(1);
      // The index is built anew and written again, whole.
      await until(() => snapshotOf(env, root)?.current === true, "a new snapshot", 30_000);
      expect(readFileSync(file).length).toBeGreaterThan(1000);
      expectAsRg(root, env);
    });
  }
});

/**
 * Nothing freshfs makes shows in the user's tree: its lock files and a write's temp files live
 * in the repository's git directory (`io/state-dirs`). Tried as a user would, in a git
 * repository:
 * - `visibility`: a child process (the built library) reads and rewrites 20 files, round after
 *   round, while another runs `git status --porcelain --untracked-files=all` again and again,
 *   and this process watches every directory of the work tree with `fs.watch`. Counted: status
 *   runs that list anything freshfs made (any untracked entry at all), and watch events for a
 *   name other than the files' own.
 * - `kills`: a writer killed with SIGKILL at a random moment, again and again; after each kill,
 *   freshfs's files left in the work tree, untracked entries in `git status`, and how soon the
 *   next writer's edit of every file lands (a dead holder's lock is taken over at once).
 * FRESHFS_DIST names another build (a checkout of an older commit) to run the same checks
 * against: the control that shows what the counts look like when files are left in the tree.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  type FSWatcher,
  mkdirSync,
  readdirSync,
  readFileSync,
  watch,
  writeFileSync,
} from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { quantile } from "../bench/lib/measure.js";
import { distDir } from "../test/fixtures/reliability/commit-log.mjs";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";

const DIRS = ["", "src", "src/lib", "test"];

/** 20 files over four directories, as a small project has them. */
function fileNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const dir = DIRS[i % DIRS.length] as string;
    return dir === "" ? `f${i}.txt` : `${dir}/f${i}.txt`;
  });
}

function git(dir: string, ...args: string[]): string {
  const run = spawnSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir },
  });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

/** A committed repository holding `names`, each `0\n`; returns its work tree. */
async function repository(names: readonly string[]): Promise<{ base: string; tree: string }> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "freshfs-out-of-tree-")));
  const tree = join(base, "repo");
  mkdirSync(tree);
  git(tree, "init", "-q");
  for (const name of names) {
    mkdirSync(join(tree, name, ".."), { recursive: true });
    writeFileSync(join(tree, name), "0\n");
  }
  git(tree, "add", "-A");
  git(tree, "-c", "user.name=s", "-c", "user.email=s@s", "commit", "-qm", "0");
  return { base, tree };
}

/** A child running the library: `rounds` rounds of read + write of every file, then `done`. */
function writer(
  dist: string,
  tree: string,
  names: readonly string[],
  rounds: number,
): ChildProcess {
  const lib = pathToFileURL(join(dist, "index.js")).href;
  const body = `const lib = await import(${JSON.stringify(lib)});
const [tree, names, rounds] = ${JSON.stringify([tree, names, rounds])};
const ws = new lib.Workspace({ roots: tree });
process.stdout.write("ready\\n");
for (let round = 0; round < rounds; round++) {
  for (const name of names) {
    await ws.read({ file_path: name });
    await ws.write({ file_path: name, content: round + 1 + "\\n" });
  }
}
process.stdout.write("done\\n");`;
  return spawn(process.execPath, ["--input-type=module", "-e", body], {
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function untracked(status: string): string[] {
  return status.split("\n").filter((line) => line.startsWith("??"));
}

/** freshfs's files in the work tree (outside `.git`): temp files, lock files. */
function ownFilesIn(tree: string): string[] {
  const found: string[] = [];
  for (const dir of DIRS) {
    for (const name of readdirSync(join(tree, dir))) {
      if (name.includes(".freshfs-")) found.push(dir === "" ? name : `${dir}/${name}`);
    }
  }
  return found;
}

export interface VisibilityReport {
  readonly files: number;
  readonly rounds: number;
  readonly writes: number;
  readonly statusRuns: number;
  /** Status runs that listed an untracked entry of freshfs's (a lock or a temp file). */
  readonly statusShowingFreshfs: number;
  /** Status runs that listed any untracked entry at all. */
  readonly statusShowingAnything: number;
  readonly events: number;
  /** Watch events for a name that is not one of the files. */
  readonly foreignEvents: number;
  /** A few of those names. */
  readonly foreignNames: readonly string[];
  /** The files' contents at the end are the last round's. */
  readonly filesAsWritten: boolean;
}

export async function visibility(options: {
  files: number;
  rounds: number;
  statusRuns: number;
  dist?: string;
}): Promise<VisibilityReport> {
  const names = fileNames(options.files);
  const { base, tree } = await repository(names);
  const events: string[] = [];
  const watchers: FSWatcher[] = DIRS.map((dir) =>
    watch(join(tree, dir), (_event, name) => {
      if (name) events.push(dir === "" ? name : `${dir}/${name}`);
    }),
  );
  try {
    const child = writer(options.dist ?? distDir(), tree, names, options.rounds);
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    let running = true;
    const said = new Promise<void>((resolve) => {
      lines.on("line", (line) => {
        if (line === "ready") resolve();
        if (line === "done") running = false;
      });
    });
    await said;
    let statusRuns = 0;
    let showingFreshfs = 0;
    let showingAnything = 0;
    // The status runs, spread over the writer's run (one every 10 ms, as long as it writes).
    while (statusRuns < options.statusRuns && running) {
      const entries = untracked(git(tree, "status", "--porcelain", "--untracked-files=all"));
      statusRuns++;
      if (entries.length > 0) showingAnything++;
      if (entries.some((line) => line.includes("freshfs"))) showingFreshfs++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const own = new Set(names);
    const foreign = events.filter((name) => !own.has(name));
    return {
      files: names.length,
      rounds: options.rounds,
      writes: names.length * options.rounds,
      statusRuns,
      statusShowingFreshfs: showingFreshfs,
      statusShowingAnything: showingAnything,
      events: events.length,
      foreignEvents: foreign.length,
      foreignNames: [...new Set(foreign)].slice(0, 5),
      filesAsWritten: names.every(
        (name) => readFileSync(join(tree, name), "utf8") === `${options.rounds}\n`,
      ),
    };
  } finally {
    for (const watcher of watchers) watcher.close();
    await rm(base, { recursive: true, force: true });
  }
}

export interface KillsReport {
  readonly kills: number;
  /** Kills after which freshfs's files were in the work tree. */
  readonly killsLeavingFiles: number;
  /** Kills after which `git status` listed an untracked entry. */
  readonly killsShowingInStatus: number;
  /** The next writer's edit of every file, from its start to the last edit landed: ms. */
  readonly nextWriterMs: { readonly median: number; readonly max: number };
  /** Next writers refused (LOCKED or another code) instead of proceeding. */
  readonly nextWriterRefused: number;
  /** freshfs's files in the work tree at the very end. */
  readonly leftAtEnd: number;
}

function spread(values: readonly number[]): KillsReport["nextWriterMs"] {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), max: sorted[sorted.length - 1] ?? 0 };
}

export async function kills(options: {
  kills: number;
  files: number;
  maxDelayMs: number;
  seed: number;
  dist?: string;
}): Promise<KillsReport> {
  const dist = options.dist ?? distDir();
  const names = fileNames(options.files);
  const { base, tree } = await repository(names);
  const random = seededRandom(options.seed);
  const lib = await import(pathToFileURL(join(dist, "index.js")).href);
  let leaving = 0;
  let showing = 0;
  let refused = 0;
  const next: number[] = [];
  try {
    for (let k = 0; k < options.kills; k++) {
      const child = writer(dist, tree, names, 1_000_000);
      const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
      await new Promise<void>((resolve) => {
        createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
          if (line === "ready") resolve();
        });
      });
      await new Promise((resolve) => setTimeout(resolve, random() * options.maxDelayMs));
      child.kill("SIGKILL");
      await exited;
      if (ownFilesIn(tree).length > 0) leaving++;
      if (untracked(git(tree, "status", "--porcelain", "--untracked-files=all")).length > 0) {
        showing++;
      }
      // The next writer: a fresh Workspace editing every file, the killed one's lock in its way.
      const ws = new lib.Workspace({ roots: tree });
      const started = performance.now();
      try {
        for (const name of names) {
          const read = await ws.read({ file_path: name });
          const value = (read.lines as string[])[0] as string;
          await ws.edit({ file_path: name, old_string: `${value}\n`, new_string: `k${k}\n` });
        }
        next.push(performance.now() - started);
      } catch (error) {
        if (!(error instanceof lib.FreshfsError)) throw error;
        refused++;
      }
    }
    return {
      kills: options.kills,
      killsLeavingFiles: leaving,
      killsShowingInStatus: showing,
      nextWriterMs: spread(next),
      nextWriterRefused: refused,
      leftAtEnd: ownFilesIn(tree).length,
    };
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

export async function run(): Promise<string> {
  const seen = await visibility({ files: 20, rounds: 400, statusRuns: 200 });
  const killed = await kills({ kills: 50, files: 20, maxDelayMs: 100, seed: 25 });
  const ms = (q: KillsReport["nextWriterMs"]) =>
    [q.median, q.max].map((v) => v.toFixed(1)).join(" / ");
  return [
    `One child process reads and rewrites ${seen.files} files (in four directories of a git repository) ${seen.rounds} times each (${seen.writes.toLocaleString("en-US")} writes), while \`git status --porcelain --untracked-files=all\` runs every 10 ms and this process watches every directory of the work tree with \`fs.watch\`.`,
    "",
    "| | |",
    "|---|---:|",
    `| \`git status\` runs during the writes | ${seen.statusRuns} |`,
    `| ... listing a file freshfs made (a lock, a temp file) | ${seen.statusShowingFreshfs} |`,
    `| ... listing any untracked entry | ${seen.statusShowingAnything} |`,
    `| watch events heard | ${seen.events.toLocaleString("en-US")} |`,
    `| ... for a name other than the files' own | ${seen.foreignEvents.toLocaleString("en-US")}${seen.foreignNames.length > 0 ? ` (${seen.foreignNames.join(", ")})` : ""} |`,
    `| files as last written | ${seen.filesAsWritten ? "yes" : "NO"} |`,
    "",
    `A writer of the same ${seen.files} files killed with SIGKILL 0-100 ms after it starts writing, ${killed.kills} times; after each kill, a fresh Workspace edits every file.`,
    "",
    "| | |",
    "|---|---:|",
    `| kills that left a file of freshfs's in the work tree | ${killed.killsLeavingFiles} |`,
    `| kills after which \`git status\` listed an untracked entry | ${killed.killsShowingInStatus} |`,
    `| the next writer's 20 edits, ms (median / max) | ${ms(killed.nextWriterMs)} |`,
    `| next writers refused (LOCKED or another code) | ${killed.nextWriterRefused} |`,
    `| freshfs's files in the work tree at the end | ${killed.leftAtEnd} |`,
  ].join("\n");
}

/**
 * The agent tools' costs (issue 5): an edit through `Workspace` (lock, guard check, atomic
 * write with the check repeated, record, cache invalidation) beside what an unguarded tool does
 * (read, replace, write in place) and the physical floor of a safe write (read, replace, temp
 * file, fsync, rename), measured in the same run; a `read` beside `readFile`; (issue 17) a
 * three-file `apply_patch` beside three edits and three safe writes, and `list` (a directory, a
 * tree) from the live listing beside `readdir` + `lstat` of the same entries.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace, withPathLock } from "../src/index.js";
import type { Chart } from "./lib/chart-types.js";
import { formatTiming, sample, type Timing, times } from "./lib/measure.js";
import type { SuiteResult } from "./lib/report.js";

export interface ToolsOptions {
  quick: boolean;
}

// A typical source file: 120 lines, about 4 KiB.
const SOURCE = Array.from(
  { length: 120 },
  (_, i) => `export const setting${i} = { name: "setting-${i}", value: ${i} };`,
).join("\n");

const METHOD = `An edit through \`Workspace\` (confinement, the path locks of this process and
of every other freshfs process, the guard check, an atomic write whose last step repeats the
check, the tracker's record of the new bytes, cache invalidation and the diff) beside two references in the same run: what an unguarded tool does (read, replace,
\`writeFile\` in place: no flush, a crash can leave half a file), and the floor of a safe write
(read, replace, temp file, \`datasync\`, rename). Each edit swaps one line of a 120-line, 4 KiB
TypeScript file in a git work tree (so the lock and the temp file live in its \`.git\`), and a chain
of edits runs inside the racy window, so every check hashes the file (a read this close to the
file's last change is never trusted to stat data). The lock
alone is timed too, for that file and for one outside any repository (its lock in the user's
runtime directory), beside a bare lock file. A patch changing one
line in each of three such files (\`apply_patch\`: every file guarded, temp files flushed, all
checked again, renamed back to back) is timed beside three \`ws.edit\` calls and three safe
writes. \`list\` answers from the root's live listing (watched, synced per call) with an
\`lstat\` per entry shown; it is timed beside \`readdirSync\` + \`lstatSync\` of the same
entries, on a tree of 40 directories of 50 files (depth 1: the root's 40 directories and 10
files; depth 2: all 2,010 entries).`;

export async function benchTools(options: ToolsOptions): Promise<SuiteResult> {
  // A git work tree, as agents' trees are: the locks and temp files live in its `.git`.
  const dir = await mkdtemp(join(tmpdir(), "freshfs-bench-tools-"));
  const outside = await mkdtemp(join(tmpdir(), "freshfs-bench-tools-plain-"));
  try {
    // Without git on the PATH (the report's missing-peer run), a plain directory, and the
    // rows say so.
    const repository = spawnSync("git", ["init", "-q", dir]).status === 0;
    return await run(dir, outside, repository, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  }
}

/** The floor of a safe edit: read, replace, temp file, `datasync`, rename. */
async function safeWrite(dir: string, file: string, { from, to }: { from: string; to: string }) {
  const text = await readFile(file, "utf8");
  const temp = join(dir, `.floor.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx");
  await handle.writeFile(text.replace(from, () => to));
  await handle.datasync();
  await handle.close();
  await rename(temp, file);
}

/** Alternates a line between two values, so every edit changes the file. */
function swap(i: number): { from: string; to: string } {
  const a = "value: 60 }";
  const b = "value: -60 }";
  return i % 2 === 0 ? { from: a, to: b } : { from: b, to: a };
}

async function run(
  dir: string,
  outside: string,
  repository: boolean,
  options: ToolsOptions,
): Promise<SuiteResult> {
  const runs = options.quick ? 3 : 7;
  const iterations = options.quick ? 20 : 300;
  const ws = new Workspace({ roots: dir });
  const files = ["freshfs.ts", "naive.ts", "floor.ts"].map((name) => join(dir, name));
  for (const file of files) writeFileSync(file, `${SOURCE}\n`);
  const [mine, naive, floor] = files as [string, string, string];
  await ws.read({ file_path: mine });

  const edit = await sample(
    {
      freshfs: async (i) => {
        const { from, to } = swap(i);
        await ws.edit({ file_path: mine, old_string: from, new_string: to });
      },
      naive: async (i) => {
        const { from, to } = swap(i);
        const text = await readFile(naive, "utf8");
        await writeFile(
          naive,
          text.replace(from, () => to),
        );
      },
      floor: (i) => safeWrite(dir, floor, swap(i)),
    },
    { runs, iterations },
  );
  // The lock alone, as every mutation takes it: this process's queue, then the lock file that
  // other freshfs processes honour (its holder's record written, linked to the lock's name,
  // both names removed), in the git directory, and for a file outside any repository in the
  // user's runtime directory.
  const plain = join(outside, "plain.ts");
  writeFileSync(plain, `${SOURCE}\n`);
  const lock = await sample(
    {
      freshfs: () => withPathLock(mine, () => undefined),
      user: () => withPathLock(plain, () => undefined),
      // Synchronous, as the lock's own calls are: a round trip through libuv's pool each would
      // cost more than the calls themselves.
      floor: async () => {
        closeSync(openSync(join(dir, ".bare.lock"), "wx"));
        unlinkSync(join(dir, ".bare.lock"));
      },
    },
    { runs, iterations },
  );
  const read = await sample(
    {
      freshfs: () => ws.read({ file_path: mine }),
      naive: () => readFile(naive, "utf8"),
    },
    { runs, iterations },
  );
  // A patch of one line in each of three files, against three edits and three safe writes.
  const trio = ["p0.ts", "p1.ts", "p2.ts"].map((name) => join(dir, name));
  const trioEdits = ["e0.ts", "e1.ts", "e2.ts"].map((name) => join(dir, name));
  const trioFloor = ["f0.ts", "f1.ts", "f2.ts"].map((name) => join(dir, name));
  for (const file of [...trio, ...trioEdits, ...trioFloor]) writeFileSync(file, `${SOURCE}\n`);
  for (const file of [...trio, ...trioEdits]) await ws.read({ file_path: file });
  const patchOf = (i: number) => {
    const { from, to } = swap(i);
    const lines = ["*** Begin Patch"];
    for (const file of trio) {
      const line = `export const setting60 = { name: "setting-60", ${from};`;
      lines.push(`*** Update File: ${file}`, "@@", `-${line}`, `+${line.replace(from, to)}`);
    }
    lines.push("*** End Patch");
    return lines.join("\n");
  };
  const patch = await sample(
    {
      freshfs: (i) => ws.applyPatch({ input: patchOf(i) }),
      edits: async (i) => {
        const { from, to } = swap(i);
        for (const file of trioEdits)
          await ws.edit({ file_path: file, old_string: from, new_string: to });
      },
      floor: async (i) => {
        for (const file of trioFloor) await safeWrite(dir, file, swap(i));
      },
    },
    { runs, iterations: Math.max(10, Math.floor(iterations / 3)) },
  );
  // list: a tree of 40 directories of 50 files, and 10 files at its top.
  const tree = join(dir, "tree");
  for (let d = 0; d < 40; d++) {
    mkdirSync(join(tree, `dir${d}`), { recursive: true });
    for (let f = 0; f < 50; f++) writeFileSync(join(tree, `dir${d}`, `file${f}.ts`), "x\n");
  }
  for (let f = 0; f < 10; f++) writeFileSync(join(tree, `top${f}.md`), "x\n");
  const treeWs = new Workspace({ roots: tree });
  const readdirTo = (depth: number) => {
    const walk = (path: string, level: number): number => {
      let count = 0;
      for (const entry of readdirSync(path, { withFileTypes: true })) {
        lstatSync(join(path, entry.name));
        count++;
        if (entry.isDirectory() && level < depth) count += walk(join(path, entry.name), level + 1);
      }
      return count;
    };
    return walk(tree, 1);
  };
  const list = await sample(
    {
      depth1: () => treeWs.list({}),
      depth2: () => treeWs.list({ depth: 2, limit: 5000 }),
      floor1: async () => readdirTo(1),
      floor2: async () => readdirTo(2),
    },
    { runs, iterations: Math.max(10, Math.floor(iterations / 3)) },
  );
  const row = (name: string, timing: Timing, base: Timing) =>
    `| ${name} | ${formatTiming(timing)} | ${times(timing.median / base.median)} |`;
  const body = [
    "| operation (4 KiB, 120-line file) | time per operation | ÷ safe floor |",
    "|---|---|---|",
    row(
      "`ws.edit` (lock, guard, atomic write, check again, record, invalidate)",
      edit.freshfs,
      edit.floor,
    ),
    row("safe floor: read, replace, temp file, `datasync`, rename", edit.floor, edit.floor),
    row("unguarded: read, replace, `writeFile` in place (no flush)", edit.naive, edit.floor),
    "",
    "| the lock alone | time per operation | ÷ bare lock file |",
    "|---|---|---|",
    row(
      `\`withPathLock\` (process queue, lock file in ${repository ? "`.git/freshfs/locks`" : "the runtime directory (no git to make a repository)"}: record written, linked, removed)`,
      lock.freshfs,
      lock.floor,
    ),
    row(
      "`withPathLock` of a file outside any repository (the runtime directory's `locks/`)",
      lock.user,
      lock.floor,
    ),
    row("bare lock file: `openSync` O_EXCL, `closeSync`, `unlinkSync`", lock.floor, lock.floor),
    "",
    "| operation | time per operation | ÷ `readFile` |",
    "|---|---|---|",
    row("`ws.read` (numbered lines, read recorded: stat, hash)", read.freshfs, read.naive),
    row("`readFile` as UTF-8", read.naive, read.naive),
    "",
    "| one line in each of three files | time per operation | ÷ three safe writes |",
    "|---|---|---|",
    row("`ws.applyPatch` (three files, all or none)", patch.freshfs, patch.floor),
    row("three `ws.edit` calls", patch.edits, patch.floor),
    row(
      "three safe writes (read, replace, temp file, `datasync`, rename)",
      patch.floor,
      patch.floor,
    ),
    "",
    "| list (tree of 2,010 entries) | time per operation | ÷ `readdirSync` + `lstatSync` |",
    "|---|---|---|",
    row("`ws.list` depth 1 (50 entries)", list.depth1, list.floor1),
    row("`readdirSync` + `lstatSync`, depth 1", list.floor1, list.floor1),
    row("`ws.list` depth 2 (2,010 entries)", list.depth2, list.floor2),
    row("`readdirSync` + `lstatSync`, depth 2", list.floor2, list.floor2),
    "",
    `Time per operation: median of ${runs} runs of ${iterations} (fastest–slowest run in brackets), the operations interleaved run by run, in a directory under the system's temp directory.`,
  ].join("\n");
  const chart: Chart = {
    name: "tools",
    title: "Agent tools: one edit, one read (4 KiB file)",
    subtitle: "Time per call beside a safe write and a bare read, same run (shorter is better)",
    unit: "time",
    groups: [
      {
        label: "edit one line",
        bars: [
          { label: "freshfs ws.edit", kind: "freshfs", timing: edit.freshfs },
          { label: "safe write (temp file + rename)", kind: "floor", timing: edit.floor },
          { label: "unguarded writeFile in place", kind: "peer", timing: edit.naive },
        ],
      },
      {
        label: "read the file",
        bars: [
          { label: "freshfs ws.read", kind: "freshfs", timing: read.freshfs },
          { label: "readFile", kind: "floor", timing: read.naive },
        ],
      },
    ],
  };
  const reading = [
    `An edit costs ${formatTiming(edit.freshfs).split(" (")[0]}, ${times(edit.freshfs.median / edit.floor.median)} the bare safe write. The difference is round trips through libuv's thread pool and the checks that make it safe: the guard hashes the file before the write, again just before the rename, and once more to record the new bytes; the directory is held open by descriptor, and the file's bytes are compared with the edit's own right before a synchronous rename (the reliability runs found another process's write landing in the gap an async check left; see RELIABILITY.md). Next to a model's turn of seconds, that is the price of an edit that cannot overwrite what it has not seen.`,
    `Of that, the lock other freshfs processes honour costs ${formatTiming(lock.freshfs).split(" (")[0]} (${((100 * lock.freshfs.median) / edit.freshfs.median).toFixed(0)}% of an edit): the work tree's git directory found from the file's directory (\`stat\`s up to the \`.git\`), the lock directory held open and checked, the holder's record written and linked to the lock's name (a digest of the path in the work tree), a refresh timer armed, and both names removed after, ${times(lock.freshfs.median / lock.floor.median)} a bare create and unlink; outside any repository (the walk up to the root finds no \`.git\`, and the name is a digest of the device and the real path) ${formatTiming(lock.user).split(" (")[0]}.`,
    `A read costs ${times(read.freshfs.median / read.naive.median)} \`readFile\`: it numbers the lines and records the read (a \`stat\` and a SHA-256 of the bytes) so that the next edit can be checked.`,
    `A three-file patch costs ${times(patch.freshfs.median / patch.edits.median)} three single edits and ${times(patch.freshfs.median / patch.floor.median)} three bare safe writes: it takes every lock at once and checks every file before it writes any, which the edits do one file at a time.`,
    `\`list\` of a directory costs ${times(list.depth1.median / list.floor1.median)} a \`readdirSync\` and an \`lstatSync\` per entry, and a tree of 2,010 entries ${times(list.depth2.median / list.floor2.median)}: the entries come from the live listing (no \`readdir\`, and gitignore already applied), a sync with the watcher first, then the \`lstat\` per entry shown and the text.`,
  ];
  return {
    heading: "Agent tools (`bench/tools.ts`)",
    method: METHOD,
    body,
    charts: [chart],
    reading,
    missing: [],
  };
}

/**
 * The agent tools' costs (issue 5): an edit through `Workspace` (lock, guard check, atomic
 * write with the check repeated, record, cache invalidation) beside what an unguarded tool does
 * (read, replace, write in place) and the physical floor of a safe write (read, replace, temp
 * file, fsync, rename), measured in the same run; and a `read` beside `readFile`.
 */
import { randomBytes } from "node:crypto";
import { closeSync, openSync, unlinkSync, writeFileSync } from "node:fs";
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
TypeScript file, so a chain of edits runs inside the racy window and every check hashes the
file (contract 1.2). The lock alone is timed too, beside a bare lock file.`;

export async function benchTools(options: ToolsOptions): Promise<SuiteResult> {
  const dir = await mkdtemp(join(tmpdir(), "freshfs-bench-tools-"));
  try {
    return await run(dir, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Alternates a line between two values, so every edit changes the file. */
function swap(i: number): { from: string; to: string } {
  const a = "value: 60 }";
  const b = "value: -60 }";
  return i % 2 === 0 ? { from: a, to: b } : { from: b, to: a };
}

async function run(dir: string, options: ToolsOptions): Promise<SuiteResult> {
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
      floor: async (i) => {
        const { from, to } = swap(i);
        const text = await readFile(floor, "utf8");
        const temp = join(dir, `.floor.${randomBytes(6).toString("hex")}.tmp`);
        const handle = await open(temp, "wx");
        await handle.writeFile(text.replace(from, () => to));
        await handle.datasync();
        await handle.close();
        await rename(temp, floor);
      },
    },
    { runs, iterations },
  );
  // The lock alone, as every mutation takes it: this process's queue, then the lock file that
  // other freshfs processes honour (its holder's record written, linked to the lock's name,
  // both names removed).
  const lock = await sample(
    {
      freshfs: () => withPathLock(mine, () => undefined),
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
      "`withPathLock` (process queue, lock file: record written, linked, removed)",
      lock.freshfs,
      lock.floor,
    ),
    row("bare lock file: `openSync` O_EXCL, `closeSync`, `unlinkSync`", lock.floor, lock.floor),
    "",
    "| operation | time per operation | ÷ `readFile` |",
    "|---|---|---|",
    row("`ws.read` (numbered lines, read recorded: stat, hash)", read.freshfs, read.naive),
    row("`readFile` as UTF-8", read.naive, read.naive),
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
    `Of that, the lock other freshfs processes honour costs ${formatTiming(lock.freshfs).split(" (")[0]} (${((100 * lock.freshfs.median) / edit.freshfs.median).toFixed(0)}% of an edit): the directory held open and checked, the holder's record written and linked to the lock's name, a refresh timer armed, and both names removed after, ${times(lock.freshfs.median / lock.floor.median)} a bare create and unlink.`,
    `A read costs ${times(read.freshfs.median / read.naive.median)} \`readFile\`: it numbers the lines and records the read (a \`stat\` and a SHA-256 of the bytes) so that the next edit can be checked.`,
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

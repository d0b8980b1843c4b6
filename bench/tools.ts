/**
 * The agent tools' costs (issue 5): an edit through `Workspace` (lock, guard check, atomic
 * write with the check repeated, record, cache invalidation) beside what an unguarded tool does
 * (read, replace, write in place) and the physical floor of a safe write (read, replace, temp
 * file, fsync, rename), measured in the same run; and a `read` beside `readFile`.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { mkdtemp, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../src/index.js";
import { formatTiming, sample, type Timing } from "./lib/measure.js";

export interface ToolsOptions {
  quick: boolean;
}

// A typical source file: 120 lines, about 4 KiB.
const SOURCE = Array.from(
  { length: 120 },
  (_, i) => `export const setting${i} = { name: "setting-${i}", value: ${i} };`,
).join("\n");

export async function benchTools(options: ToolsOptions): Promise<string> {
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

async function run(dir: string, options: ToolsOptions): Promise<string> {
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
  const read = await sample(
    {
      freshfs: () => ws.read({ file_path: mine }),
      naive: () => readFile(naive, "utf8"),
    },
    { runs, iterations },
  );
  const row = (name: string, timing: Timing, base: Timing) =>
    `| ${name} | ${formatTiming(timing)} | ${(timing.median / base.median).toFixed(2)}× |`;
  return [
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
    "| operation | time per operation | ÷ `readFile` |",
    "|---|---|---|",
    row("`ws.read` (numbered lines, read recorded: stat, hash)", read.freshfs, read.naive),
    row("`readFile` as UTF-8", read.naive, read.naive),
    "",
    `Time per operation: median of ${runs} runs of ${iterations} (fastest–slowest run in brackets), the operations interleaved run by run, in a directory under the system's temp directory.`,
  ].join("\n");
}

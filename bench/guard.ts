/**
 * The guard's costs (issue 2): checks on an unchanged file (the one-stat fast path) and on a
 * changed file (the hash path), for 4 KiB and 4 MiB files, each beside its physical floor
 * measured in the same run (a bare `stat`; a bare read + SHA-256); and heap per tracked path.
 */
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FileStateTracker, FreshfsError } from "../src/index.js";
import { retainedBytes } from "../test/helpers/heap.js";
import type { Chart } from "./lib/chart-types.js";
import { formatTiming, formatUs, sample, type Timing, times } from "./lib/measure.js";
import type { SuiteResult } from "./lib/report.js";

export interface GuardOptions {
  quick: boolean;
}

interface Row {
  case: string;
  freshfs: Timing;
  floorName: string;
  floor: Timing;
}

const METHOD = `\`checkEdit\` on a file unchanged since a full read (out of the racy window: the one-\`stat\` fast
path), and on a file rewritten with other bytes of the same size (stat data moved, so the file
is hashed and the check ends in \`STALE\`), for 4 KiB and 4 MiB files. The floors: a bare
\`fs.promises.stat\` (what the fast path cannot beat), and \`readFile\` + SHA-256 (what a hash check
cannot beat). Memory: heap and ArrayBuffer bytes retained after a GC, per tracked path.`;

const SIZES = [
  { name: "4 KiB", bytes: 4 << 10, iterations: 2000 },
  { name: "4 MiB", bytes: 4 << 20, iterations: 40 },
];

export async function benchGuard(options: GuardOptions): Promise<SuiteResult> {
  const dir = await mkdtemp(join(tmpdir(), "freshfs-bench-guard-"));
  try {
    return await run(dir, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(dir: string, options: GuardOptions): Promise<SuiteResult> {
  const runs = options.quick ? 3 : 7;
  const scale = options.quick ? 0.1 : 1;
  const rows: Row[] = [];
  for (const size of SIZES) {
    const iterations = Math.max(5, Math.round(size.iterations * scale));
    const unchanged = join(dir, `unchanged-${size.bytes}`);
    const changed = join(dir, `changed-${size.bytes}`);
    writeFileSync(unchanged, Buffer.alloc(size.bytes, 0x61));
    writeFileSync(changed, Buffer.alloc(size.bytes, 0x61));
    // Out of the racy window (a read within it is always checked by hash), so the fast path
    // may trust the stat data.
    await sleep(options.quick ? 60 : 2100);
    const tracker = new FileStateTracker({ racyWindowMs: options.quick ? 50 : 2000 });
    await tracker.recordRead(unchanged);
    await tracker.recordRead(changed);
    writeFileSync(changed, Buffer.alloc(size.bytes, 0x62)); // same size, other bytes

    const fast = await sample(
      {
        freshfs: () => tracker.checkEdit(unchanged),
        floor: () => stat(unchanged, { bigint: true }),
      },
      { runs, iterations },
    );
    rows.push({
      case: `unchanged ${size.name} (fast path)`,
      floorName: "`fs.promises.stat`",
      ...fast,
    });
    const slow = await sample(
      {
        freshfs: async () => {
          try {
            await tracker.checkEdit(changed);
          } catch (error) {
            if (!(error instanceof FreshfsError) || error.code !== "STALE") throw error;
          }
        },
        floor: async () =>
          createHash("sha256")
            .update(await readFile(changed))
            .digest(),
      },
      { runs, iterations },
    );
    rows.push({
      case: `changed ${size.name} (hash path → STALE)`,
      floorName: "`readFile` + SHA-256",
      ...slow,
    });
  }

  const memory = await memoryPerPath(dir, options.quick ? 1000 : 10_000);
  const body = [
    "| check | freshfs per check | checks/s | floor | floor per op | ratio |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (row) =>
        `| ${row.case} | ${formatTiming(row.freshfs)} | ${Math.round(1e6 / row.freshfs.median).toLocaleString("en-US")} | ${row.floorName} | ${formatTiming(row.floor)} | ${times(row.freshfs.median / row.floor.median)} |`,
    ),
    "",
    `Heap per tracked path: **${Math.round(memory.perPath)} bytes** with ${memory.paths.toLocaleString("en-US")} paths tracked (${(memory.total / 2 ** 20).toFixed(2)} MiB in all; paths of ${memory.pathLength} characters).`,
    "",
    `Time per operation: median of ${runs} runs (fastest–slowest run in brackets), freshfs and its floor interleaved run by run.`,
  ].join("\n");
  const chart: Chart = {
    name: "guard",
    title: "Read-before-write guard: one check",
    subtitle: "Time per checkEdit beside its physical floor, same run (shorter is better)",
    unit: "time",
    groups: rows.map((row) => ({
      label: row.case,
      bars: [
        { label: "freshfs checkEdit", kind: "freshfs", timing: row.freshfs },
        { label: row.floorName.replaceAll("`", ""), kind: "floor", timing: row.floor },
      ],
    })),
  };
  const [fastSmall, slowSmall, , slowLarge] = rows as [Row, Row, Row, Row];
  const reading = [
    `The fast path costs one \`stat\`${fastSmall.freshfs.median > fastSmall.floor.median ? ` plus ${formatUs(fastSmall.freshfs.median - fastSmall.floor.median)} of bookkeeping` : ""}: ${times(fastSmall.freshfs.median / fastSmall.floor.median)} a bare \`stat\` (target: tens of microseconds).`,
    `The hash path for a small file is six async calls (\`stat\`, \`open\`, \`fstat\`, \`read\`, \`fstat\`, \`close\`) plus a \`realpath\` against \`readFile\`'s four: ${times(slowSmall.freshfs.median / slowSmall.floor.median)} its floor. For a 4 MiB file it takes ${times(slowLarge.freshfs.median / slowLarge.floor.median)} its floor${slowLarge.freshfs.median <= 1.25 * slowLarge.floor.median ? ": the speed of reading and hashing" : ""}.`,
    `${memory.paths.toLocaleString("en-US")} tracked paths hold ${(memory.total / 2 ** 20).toFixed(2)} MiB (target: under 5 MB for 10,000); a record keeps a 32-byte digest and seven stat numbers, never content.`,
  ];
  return {
    heading: "Read-before-write guard (`bench/guard.ts`)",
    method: METHOD,
    body,
    charts: [chart],
    reading,
    missing: [],
  };
}

async function memoryPerPath(dir: string, count: number) {
  const root = join(dir, "many");
  const files: string[] = [];
  for (let d = 0; d < 100; d++) mkdirSync(join(root, `pkg-${d}`, "src"), { recursive: true });
  for (let i = 0; i < count; i++) {
    const file = join(root, `pkg-${i % 100}`, "src", `module-${String(i).padStart(5, "0")}.ts`);
    writeFileSync(file, `export const id = ${i};\n`);
    files.push(file);
  }
  const tracker = new FileStateTracker();
  const before = retainedBytes();
  for (const file of files) await tracker.recordRead(file);
  const total = retainedBytes() - before;
  return {
    paths: tracker.size,
    total,
    perPath: total / tracker.size,
    pathLength: files[0]?.length ?? 0,
  };
}

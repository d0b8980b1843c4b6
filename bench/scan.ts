/**
 * The walker and the scan cache (issue 3) against their peers, in one run: freshfs's cold walk
 * (gitignore on, hidden off) beside `rg --files` and `fdfind` spawned from Node (same
 * semantics), `git ls-files -co --exclude-standard` (the physical floor: git reads its index);
 * freshfs without ignore rules beside tinyglobby and fdir (which have none), for scale; the
 * warm `getOrScan` hit; and heap per listed entry.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fdir } from "fdir";
import { glob } from "tinyglobby";
import { configureScanCache, forceRescan, getOrScan } from "../src/index.js";
import { retainedBytes } from "../test/helpers/heap.js";
import type { Bar, Chart } from "./lib/chart-types.js";
import { formatTiming, formatUs, sample, type Timing, times } from "./lib/measure.js";
import { findCorpus, type Peer, peer, runPeer } from "./lib/peers.js";
import type { SuiteResult } from "./lib/report.js";

export interface ScanBenchOptions {
  quick: boolean;
}

/** A small tree with a .gitignore, for the smoke run. */
async function smallTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "freshfs-bench-scan-"));
  writeFileSync(join(root, ".gitignore"), "ignored/\n*.log\n");
  // A repository, so that the peers honour the .gitignore too; without git the smoke run
  // still runs (git is a peer like the others here).
  spawnSync("git", ["init", "-q", root], { stdio: "ignore" });
  for (let d = 0; d < 20; d++) {
    for (const sub of ["src", "ignored"]) {
      mkdirSync(join(root, `pkg${d}`, sub), { recursive: true });
      for (let f = 0; f < 50; f++) writeFileSync(join(root, `pkg${d}`, sub, `f${f}.ts`), "");
    }
  }
  return root;
}

const METHOD = `Peers are spawned from Node with the same semantics (gitignore on, hidden off) and their
output read in full; git takes tracked paths from its index, so it is the floor rather than a
peer.
tinyglobby and fdir have no ignore rules and are measured against freshfs with none, for scale.`;

export async function benchScan(options: ScanBenchOptions): Promise<SuiteResult> {
  const corpus = options.quick ? await smallTree() : findCorpus();
  if (!corpus) throw new Error("no corpus: run `npm run bench` to build it");
  try {
    return await measure(corpus, options);
  } finally {
    if (options.quick) await rm(corpus, { recursive: true, force: true });
  }
}

async function measure(corpus: string, options: ScanBenchOptions): Promise<SuiteResult> {
  const runs = options.quick ? 3 : 7;
  const rg = peer("rg");
  const fd = peer("fdfind", "fd");
  const git = peer("git");
  configureScanCache({ ttlMs: 600_000 });
  const cold = await forceRescan(corpus);
  const raw = await forceRescan(corpus, { useGitignore: false });

  const spawned = (p: Peer, args: string[]) => () => runPeer(p.command as string, args, corpus);
  /** The listing rows with ignore rules: label, bar kind, the peer (if any) and its command. */
  const listers: { label: string; kind: Bar["kind"]; peer?: Peer; args?: string[] }[] = [
    { label: "freshfs cold walk", kind: "freshfs" },
    { label: "rg --files", kind: "peer", peer: rg, args: ["--files"] },
    { label: "fd", kind: "peer", peer: fd, args: [] },
    {
      label: "git ls-files -co --exclude-standard",
      kind: "floor",
      peer: git,
      args: ["ls-files", "-co", "--exclude-standard"],
    },
  ];
  const gitignored: Record<string, () => Promise<unknown>> = {
    "freshfs cold walk": () => forceRescan(corpus),
  };
  for (const lister of listers) {
    if (lister.peer?.command) gitignored[lister.label] = spawned(lister.peer, lister.args ?? []);
  }
  const withIgnore = await sample(gitignored, { runs, iterations: 1, warmup: 1 });

  const noIgnore = await sample(
    {
      "freshfs cold walk, no ignore rules": () => forceRescan(corpus, { useGitignore: false }),
      "tinyglobby `**` (no ignore rules)": () => glob("**", { cwd: corpus, onlyFiles: false }),
      "fdir (no ignore rules)": () =>
        new fdir().withRelativePaths().withDirs().crawl(corpus).withPromise(),
    },
    { runs, iterations: 1, warmup: 1 },
  );

  await getOrScan(corpus);
  const warm = await sample({ hit: () => getOrScan(corpus) }, { runs, iterations: 1000 });

  // A few thousand entries are within the noise of a heap measurement: not in quick mode.
  const memory = options.quick ? undefined : await heapPerEntry(corpus);
  const base = withIgnore["freshfs cold walk"] as Timing;
  const baseRaw = noIgnore["freshfs cold walk, no ignore rules"] as Timing;
  const shown = (lister: (typeof listers)[number]) =>
    lister.peer
      ? `\`${[lister.peer.command ?? lister.peer.names[0], ...(lister.args ?? [])].join(" ")}\``
      : lister.label;
  const row = (name: string, timing: Timing | undefined, against: Timing) =>
    timing
      ? `| ${name} | ${formatTiming(timing)} | ${times(against.median / timing.median)} |`
      : `| ${name} | not installed: not measured | — |`;
  const missing = [rg, fd, git].filter((p) => !p.command).map((p) => `\`${p.names[0]}\``);
  const body = [
    `Listed: ${cold.entries.length.toLocaleString("en-US")} entries with gitignore on and hidden off, ${raw.entries.length.toLocaleString("en-US")} with no ignore rules.`,
    "",
    "| listing (gitignore on, hidden off) | time | freshfs ÷ this |",
    "|---|---|---|",
    ...listers.map((lister) => row(shown(lister), withIgnore[lister.label], base)),
    "",
    "| listing (no ignore rules, for scale) | time | freshfs ÷ this |",
    "|---|---|---|",
    ...Object.entries(noIgnore).map(([name, timing]) => row(name, timing, baseRaw)),
    "",
    `Warm \`getOrScan\` hit: ${formatTiming(warm.hit as Timing)}.`,
    "",
    memory
      ? `Heap per listed entry: **${Math.round(memory.perEntry)} bytes** over ${memory.entries.toLocaleString("en-US")} entries (${(memory.total / 2 ** 20).toFixed(1)} MiB).`
      : "Heap per listed entry: not measured in quick mode.",
    "",
    `Time per operation: median of ${runs} runs (fastest–slowest in brackets), all rows of a table interleaved run by run. "freshfs ÷ this" below 1 means freshfs is faster.`,
  ].join("\n");
  const chart: Chart = {
    name: "scan",
    title: "Listing a repository",
    subtitle:
      "Time for one full listing, cold, same run (shorter is better); on each tool: freshfs against it",
    unit: "time",
    groups: [
      {
        label: `gitignore on, hidden off (${cold.entries.length.toLocaleString("en-US")} entries)`,
        bars: listers.map((lister) => ({
          label:
            lister.kind === "freshfs"
              ? "freshfs walk"
              : lister.kind === "floor"
                ? "git ls-files (index)"
                : shown(lister).replaceAll("`", ""),
          kind: lister.kind,
          timing: withIgnore[lister.label],
        })),
      },
      {
        label: `no ignore rules (${raw.entries.length.toLocaleString("en-US")} entries)`,
        bars: [
          { label: "freshfs walk", kind: "freshfs", timing: baseRaw },
          {
            label: "tinyglobby **",
            kind: "peer",
            timing: noIgnore["tinyglobby `**` (no ignore rules)"],
          },
          { label: "fdir", kind: "peer", timing: noIgnore["fdir (no ignore rules)"] },
        ],
      },
    ],
  };
  const gitTiming = withIgnore["git ls-files -co --exclude-standard"];
  const against = (label: string, name: string) => {
    const timing = withIgnore[label];
    return timing
      ? `${times(base.median / timing.median)} ${name}'s time`
      : `${name}: not measured`;
  };
  const fdirTiming = noIgnore["fdir (no ignore rules)"] as Timing;
  const fdirFaster = fdirTiming.median < baseRaw.median;
  const reading = [
    `The cold walk (gitignore on) takes ${formatUs(base.median)}: ${against("rg --files", "`rg --files`")} and ${against("fd", "fd")} at the median (target: 0.7× rg's). ${gitTiming ? `git, which takes tracked paths from its index and walks the directories only for untracked ones, takes ${formatUs(gitTiming.median)}.` : "git was not measured."} Medians carry garbage collection of the listings the same process built before.`,
    `A warm hit costs a \`stat\` and a \`realpath\` of the root: ${formatUs((warm.hit as Timing).median)}.`,
    `Without ignore rules fdir takes ${times(fdirTiming.median / baseRaw.median)} freshfs's time${fdirFaster ? ": it reads directories in parallel through libuv's thread pool, where freshfs reads them one by one to keep the listing's order and the ignore stack simple" : ""}.`,
    ...(memory
      ? [
          `A listed entry costs ${Math.round(memory.perEntry)} bytes of heap (target: 150): a small object, and a flat path string (a rope would grow by a flat copy the first time a regex reads it).`,
        ]
      : []),
  ];
  return {
    heading: "Walker and scan cache (`bench/scan.ts`)",
    method: METHOD,
    body,
    charts: [chart],
    reading,
    missing,
  };
}

async function heapPerEntry(corpus: string) {
  configureScanCache({ ttlMs: 0 });
  const before = retainedBytes();
  const listing = await forceRescan(corpus, { useGitignore: false, includeHidden: true });
  const total = retainedBytes() - before;
  configureScanCache(undefined);
  return { entries: listing.entries.length, total, perEntry: total / listing.entries.length };
}

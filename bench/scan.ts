/**
 * The walker and the scan cache (issue 3) against their peers, in one run: freshfs's cold walk
 * (gitignore on, hidden off) beside `rg --files` and `fdfind` spawned from Node (same
 * semantics), `git ls-files -co --exclude-standard` (the physical floor: git reads its index);
 * freshfs without ignore rules beside tinyglobby and fdir (which have none), for scale; the
 * warm `getOrScan` hit; and heap per listed entry.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fdir } from "fdir";
import { glob } from "tinyglobby";
import { configureScanCache, forceRescan, getOrScan } from "../src/index.js";
import { retainedBytes } from "../test/helpers/heap.js";
import { formatTiming, sample, type Timing } from "./lib/measure.js";
import { findCorpus, type Peer, peer } from "./lib/peers.js";

export interface ScanBenchOptions {
  quick: boolean;
}

function run(command: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, maxBuffer: 256 * 1024 * 1024 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.length);
    });
  });
}

/** A small tree with a .gitignore, for the smoke run. */
async function smallTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "freshfs-bench-scan-"));
  writeFileSync(join(root, ".gitignore"), "ignored/\n*.log\n");
  execFileSync("git", ["init", "-q", root]);
  for (let d = 0; d < 20; d++) {
    for (const sub of ["src", "ignored"]) {
      mkdirSync(join(root, `pkg${d}`, sub), { recursive: true });
      for (let f = 0; f < 50; f++) writeFileSync(join(root, `pkg${d}`, sub, `f${f}.ts`), "");
    }
  }
  return root;
}

export async function benchScan(options: ScanBenchOptions): Promise<string> {
  const corpus = options.quick ? await smallTree() : findCorpus();
  if (!corpus) {
    return "Skipped: no corpus. Build it with `../shared/bench/make-corpus.sh bench/.corpus` (or set FRESHFS_CORPUS).";
  }
  try {
    return await measure(corpus, options);
  } finally {
    if (options.quick) await rm(corpus, { recursive: true, force: true });
  }
}

async function measure(corpus: string, options: ScanBenchOptions): Promise<string> {
  const runs = options.quick ? 3 : 7;
  const rg = peer("rg");
  const fd = peer("fdfind", "fd");
  const git = peer("git");
  configureScanCache({ ttlMs: 600_000 });
  const cold = await forceRescan(corpus);
  const raw = await forceRescan(corpus, { useGitignore: false });

  const gitignored: Record<string, () => Promise<unknown>> = {
    "freshfs cold walk": () => forceRescan(corpus),
  };
  const spawned = (p: Peer, args: string[]) => () => run(p.command as string, args, corpus);
  if (rg.command) gitignored["`rg --files`"] = spawned(rg, ["--files"]);
  if (fd.command) gitignored["`fdfind`"] = spawned(fd, []);
  if (git.command) {
    gitignored["`git ls-files -co --exclude-standard`"] = spawned(git, [
      "ls-files",
      "-co",
      "--exclude-standard",
    ]);
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

  const memory = await heapPerEntry(corpus);
  const base = withIgnore["freshfs cold walk"] as Timing;
  const baseRaw = noIgnore["freshfs cold walk, no ignore rules"] as Timing;
  const row = (name: string, timing: Timing, against: Timing) =>
    `| ${name} | ${formatTiming(timing)} | ${(against.median / timing.median).toFixed(2)}× |`;
  const missing = [rg, fd, git].filter((p) => !p.command).map((p) => `\`${p.names[0]}\``);
  return [
    `Corpus: ${cold.entries.length.toLocaleString("en-US")} entries listed with gitignore on and hidden off, ${raw.entries.length.toLocaleString("en-US")} with no ignore rules.`,
    "",
    "| listing (gitignore on, hidden off) | time | freshfs ÷ this |",
    "|---|---|---|",
    ...Object.entries(withIgnore).map(([name, timing]) => row(name, timing, base)),
    "",
    "| listing (no ignore rules, for scale) | time | freshfs ÷ this |",
    "|---|---|---|",
    ...Object.entries(noIgnore).map(([name, timing]) => row(name, timing, baseRaw)),
    "",
    `Warm \`getOrScan\` hit: ${formatTiming(warm.hit as Timing)}.`,
    "",
    `Heap per listed entry: **${Math.round(memory.perEntry)} bytes** over ${memory.entries.toLocaleString("en-US")} entries (${(memory.total / 2 ** 20).toFixed(1)} MiB).`,
    missing.length > 0
      ? `\nMissing peers (not installed, not measured): ${missing.join(", ")}.`
      : "",
    `\nTime per operation: median of ${runs} runs (fastest–slowest in brackets), all rows of a table interleaved run by run. "freshfs ÷ this" below 1 means freshfs is faster.`,
  ].join("\n");
}

async function heapPerEntry(corpus: string) {
  configureScanCache({ ttlMs: 0 });
  const before = retainedBytes();
  const listing = await forceRescan(corpus, { useGitignore: false, includeHidden: true });
  const total = retainedBytes() - before;
  configureScanCache(undefined);
  return { entries: listing.entries.length, total, perEntry: total / listing.entries.length };
}

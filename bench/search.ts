/**
 * glob, fuzzy find and grep (issue 4) against their peers, in one run: grep against `rg`
 * spawned from Node with the same semantics (hidden files off, ignore files on), for a rare
 * literal, a common literal and two regexes (one with a literal every match contains, one
 * without); glob against tinyglobby and `rg --files -g`; fuzzyFind against `fzf --filter`,
 * for speed and for ranking (mean reciprocal rank of the intended file over bench/fuzzy-queries.json).
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { glob as tinyglob } from "tinyglobby";
import {
  configureScanCache,
  fuzzyFind,
  type GrepOptions,
  getOrScan,
  glob,
  grep,
} from "../src/index.js";
import { formatTiming, sample, type Timing } from "./lib/measure.js";
import { findCorpus, peer } from "./lib/peers.js";

export interface SearchBenchOptions {
  quick: boolean;
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  input?: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      { cwd, maxBuffer: 512 * 1024 * 1024 },
      (error, stdout) => {
        // rg and fzf exit 1 when nothing matched: an answer, not a failure.
        if (error && (error as { code?: unknown }).code !== 1) reject(error);
        else resolve(stdout);
      },
    );
    // rg reads its standard input when that is not a terminal and no path is given: close it.
    child.stdin?.end(input ?? "");
  });
}

async function smallTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "freshfs-bench-search-"));
  execFileSync("git", ["init", "-q", root]);
  writeFileSync(join(root, ".gitignore"), "ignored/\n");
  for (let d = 0; d < 20; d++) {
    mkdirSync(join(root, `pkg${d}`, "src"), { recursive: true });
    for (let f = 0; f < 30; f++) {
      writeFileSync(
        join(root, `pkg${d}`, "src", `file${f}.ts`),
        `export function handler${f}() {\n  // TODO: pkg ${d}\n  return new BadRequestException("x");\n}\n`.repeat(
          5,
        ),
      );
    }
  }
  return root;
}

interface GrepRow {
  readonly name: string;
  readonly pattern: string;
  readonly options: GrepOptions;
  readonly rg: readonly string[];
}

const GREP_ROWS: readonly GrepRow[] = [
  { name: "rare literal", pattern: "BadRequestException", options: {}, rg: [] },
  {
    name: "common literal (count)",
    pattern: "function",
    options: { outputMode: "count" },
    rg: ["-c"],
  },
  { name: "regex with a literal", pattern: "\\w+Expression\\(", options: {}, rg: [] },
  {
    name: "regex without a literal (count)",
    pattern: "\\b[a-z]+_[a-z]+\\(",
    options: { outputMode: "count" },
    rg: ["-c"],
  },
];

const GLOB_PATTERNS = ["**/*.ts", "packages/rxjs/src/**/*.ts", "**/{README,readme}.md"];

export async function benchSearch(options: SearchBenchOptions): Promise<string> {
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

async function measure(root: string, options: SearchBenchOptions): Promise<string> {
  const runs = options.quick ? 3 : 7;
  const rg = peer("rg");
  const fzf = peer("fzf");
  configureScanCache({ ttlMs: 600_000 });
  const out: string[] = [];
  const ratio = (ours: Timing, theirs: Timing | undefined) =>
    theirs ? `${(ours.median / theirs.median).toFixed(2)}×` : "missing";

  // grep
  out.push(
    "| grep | freshfs cold | freshfs, listing cached | `rg` | cold ÷ rg | cached ÷ rg |",
    "|---|---|---|---|---|---|",
  );
  for (const row of GREP_ROWS) {
    const base: GrepOptions = { ...row.options, path: root, hidden: false };
    await getOrScan(root, { includeHidden: false });
    const ops: Record<string, () => Promise<unknown>> = {
      cold: () => grep(row.pattern, base),
      cached: () => grep(row.pattern, { ...base, cache: true }),
    };
    if (rg.command)
      ops.rg = () => run(rg.command as string, [...row.rg, "-e", row.pattern, "."], root);
    const t = await sample(ops, { runs, iterations: 1, warmup: 1 });
    out.push(
      `| ${row.name}: \`${row.pattern}\` | ${formatTiming(t.cold as Timing)} | ${formatTiming(t.cached as Timing)} | ${t.rg ? formatTiming(t.rg) : "missing"} | ${ratio(t.cold as Timing, t.rg)} | ${ratio(t.cached as Timing, t.rg)} |`,
    );
  }

  // glob
  out.push(
    "",
    "| glob | freshfs, listing cached | tinyglobby | `rg --files -g` | rg ÷ freshfs |",
    "|---|---|---|---|---|",
  );
  for (const pattern of GLOB_PATTERNS) {
    await glob(pattern, { path: root, cache: true });
    const ops: Record<string, () => Promise<unknown>> = {
      cached: () => glob(pattern, { path: root, cache: true }),
      tinyglobby: () => tinyglob(pattern, { cwd: root, ignore: ["**/node_modules/**"] }),
    };
    if (rg.command) ops.rg = () => run(rg.command as string, ["--files", "-g", pattern, "."], root);
    // Ten calls a run: a single sub-millisecond call is mostly timer and scheduling noise.
    const t = await sample(ops, { runs, iterations: options.quick ? 2 : 10, warmup: 3 });
    const speedup = t.rg ? `${(t.rg.median / (t.cached as Timing).median).toFixed(0)}×` : "missing";
    out.push(
      `| \`${pattern}\` | ${formatTiming(t.cached as Timing)} | ${formatTiming(t.tinyglobby as Timing)} | ${t.rg ? formatTiming(t.rg) : "missing"} | ${speedup} |`,
    );
  }

  // fuzzy find
  out.push("", await benchFuzzy(root, options, fzf.command));
  const missing = [rg, fzf].filter((p) => !p.command).map((p) => `\`${p.names[0]}\``);
  if (missing.length > 0)
    out.push("", `Missing peers (not installed, not measured): ${missing.join(", ")}.`);
  out.push(
    "",
    `Time per operation: median of ${runs} runs (fastest–slowest in brackets), the rows' operations interleaved run by run. "Cold" walks the tree first; "listing cached" reads the shared scan cache (as an agent's second call does). Below 1× freshfs is faster.`,
  );
  return out.join("\n");
}

async function benchFuzzy(
  root: string,
  options: SearchBenchOptions,
  fzf: string | undefined,
): Promise<string> {
  const listing = await getOrScan(root);
  const candidates = listing.entries
    .filter((entry) => entry.type === "file" && !/(^|\/)node_modules(\/|$)/.test(entry.path))
    .map((entry) => entry.path);
  const queries: { query: string; intended: string }[] = options.quick
    ? [{ query: "file12", intended: "pkg0/src/file12.ts" }]
    : JSON.parse(readFileSync(new URL("./fuzzy-queries.json", import.meta.url), "utf8"));
  const input = `${candidates.join("\n")}\n`;
  let ours = 0;
  let theirs = 0;
  const oursTimes: number[] = [];
  const fzfTimes: number[] = [];
  for (const { query, intended } of queries) {
    let started = performance.now();
    const found = await fuzzyFind(query, {
      path: root,
      cache: true,
      limit: 1000,
      includeDirectories: false,
    });
    oursTimes.push(performance.now() - started);
    const rank = found.matches.findIndex((match) => match.path === intended) + 1;
    ours += rank > 0 ? 1 / rank : 0;
    if (fzf) {
      started = performance.now();
      const lines = (await run(fzf, ["--filter", query], root, input)).split("\n");
      fzfTimes.push(performance.now() - started);
      const theirRank = lines.indexOf(intended) + 1;
      theirs += theirRank > 0 ? 1 / theirRank : 0;
    }
  }
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const n = queries.length;
  return [
    `| fuzzy find (${n} queries over ${candidates.length.toLocaleString("en-US")} files) | mean reciprocal rank | median latency |`,
    "|---|---|---|",
    `| freshfs \`fuzzyFind\` (listing cached) | ${(ours / n).toFixed(3)} | ${median(oursTimes).toFixed(1)} ms |`,
    fzf
      ? `| \`fzf --filter\` (spawned, candidates on stdin) | ${(theirs / n).toFixed(3)} | ${median(fzfTimes).toFixed(1)} ms |`
      : "| `fzf` | missing | missing |",
  ].join("\n");
}

/**
 * glob, fuzzy find and grep (issue 4) against their peers, in one run: grep against `rg`
 * spawned from Node with the same semantics (hidden files off, ignore files on), for a rare
 * literal, a common literal and two regexes (one with a literal every match contains, one
 * without); glob against tinyglobby and `rg --files -g`; fuzzyFind against `fzf --filter`,
 * for speed and for ranking (mean reciprocal rank of the intended file over bench/fuzzy-queries.json).
 */
import { spawnSync } from "node:child_process";
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
  waitForContentIndex,
} from "../src/index.js";
import type { BarGroup, Chart } from "./lib/chart-types.js";
import { formatTiming, formatUs, sample, type Timing, times } from "./lib/measure.js";
import { findCorpus, peer, runPeer } from "./lib/peers.js";
import type { SuiteResult } from "./lib/report.js";

export interface SearchBenchOptions {
  quick: boolean;
}

async function smallTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "freshfs-bench-search-"));
  // A repository, so that rg honours the .gitignore too; without git the smoke run still runs.
  spawnSync("git", ["init", "-q", root], { stdio: "ignore" });
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

/** The glob table's patterns (`bench/live.ts` measures the same). */
export const GLOB_PATTERNS = ["**/*.ts", "packages/rxjs/src/**/*.ts", "**/{README,readme}.md"];

const METHOD = `On the same corpus (hidden files off, ignore files on, for freshfs and its peers alike). grep
rows compare freshfs's answer object with \`rg\`'s printed output, read in full; "cold" walks
the tree first, "listing cached" reads the shared scan cache, as an agent's second and later
calls do. fuzzyFind is measured on the queries of \`bench/fuzzy-queries.json\` (realistic
\`@\`-mention queries, each with the file it means), against \`fzf --filter\` fed the same file
paths: for ranking (the mean reciprocal rank of the intended file) and for speed.`;

export async function benchSearch(options: SearchBenchOptions): Promise<SuiteResult> {
  const corpus = options.quick ? await smallTree() : findCorpus();
  if (!corpus) throw new Error("no corpus: run `npm run bench` to build it");
  try {
    return await measure(corpus, options);
  } finally {
    if (options.quick) await rm(corpus, { recursive: true, force: true });
  }
}

async function measure(root: string, options: SearchBenchOptions): Promise<SuiteResult> {
  const runs = options.quick ? 3 : 7;
  const rg = peer("rg");
  const fzf = peer("fzf");
  configureScanCache({ ttlMs: 600_000 });
  const out: string[] = [];
  const ratio = (ours: Timing, theirs: Timing | undefined) =>
    theirs ? times(ours.median / theirs.median) : "—";
  const shown = (timing: Timing | undefined) =>
    timing ? formatTiming(timing) : "not installed: not measured";

  // grep
  out.push(
    "| grep | files matching | freshfs cold | freshfs, listing cached | freshfs warm (live, indexed) | `rg` | cold ÷ rg | cached ÷ rg | warm ÷ rg |",
    "|---|---|---|---|---|---|---|---|---|",
  );
  const grepGroups: BarGroup[] = [];
  const grepRatios: {
    name: string;
    matching: number;
    cold: number | undefined;
    cached: number | undefined;
    warm: number | undefined;
  }[] = [];
  for (const row of GREP_ROWS) {
    const base: GrepOptions = { ...row.options, path: root, hidden: false };
    await getOrScan(root, { includeHidden: false });
    // Warm: the live tree answers and its content index is built, as in a long-lived agent.
    const live = { ...base, cache: true, watch: true };
    for (let i = 0; i < 20 && (await grep(row.pattern, live)).freshness !== "live"; i++);
    await waitForContentIndex(root);
    const ops: Record<string, () => Promise<unknown>> = {
      cold: () => grep(row.pattern, base),
      cached: () => grep(row.pattern, { ...base, cache: true }),
      warm: () => grep(row.pattern, live),
    };
    if (rg.command)
      ops.rg = () => runPeer(rg.command as string, [...row.rg, "-e", row.pattern, "."], root);
    const t = await sample(ops, { runs, iterations: 1, warmup: 1 });
    const cold = t.cold as Timing;
    const cached = t.cached as Timing;
    const warm = t.warm as Timing;
    const probe = await grep(row.pattern, {
      ...base,
      cache: true,
      outputMode: "files_with_matches",
    });
    const matching = probe.files.length / Math.max(1, probe.filesSearched);
    out.push(
      `| ${row.name}: \`${row.pattern}\` | ${(100 * matching).toFixed(matching < 0.01 ? 2 : 0)}% of ${probe.filesSearched.toLocaleString("en-US")} | ${formatTiming(cold)} | ${formatTiming(cached)} | ${formatTiming(warm)} | ${shown(t.rg)} | ${ratio(cold, t.rg)} | ${ratio(cached, t.rg)} | ${ratio(warm, t.rg)} |`,
    );
    grepGroups.push({
      label: `${row.name}: ${row.pattern}`,
      bars: [
        { label: "freshfs warm (live, indexed)", kind: "freshfs", timing: warm },
        { label: "freshfs, listing cached", kind: "freshfs", timing: cached },
        { label: "freshfs, cold (walks first)", kind: "freshfs", timing: cold },
        {
          label: `rg${row.rg.length > 0 ? ` ${row.rg.join(" ")}` : ""}`,
          kind: "peer",
          timing: t.rg,
        },
      ],
    });
    grepRatios.push({
      name: row.name,
      matching,
      cold: t.rg ? cold.median / t.rg.median : undefined,
      cached: t.rg ? cached.median / t.rg.median : undefined,
      warm: t.rg ? warm.median / t.rg.median : undefined,
    });
  }

  // glob
  out.push(
    "",
    "| glob | freshfs, listing cached | tinyglobby | `rg --files -g` | rg ÷ freshfs |",
    "|---|---|---|---|---|",
  );
  const globGroups: BarGroup[] = [];
  const globSpeedups: number[] = [];
  const globMedians: number[] = [];
  for (const pattern of GLOB_PATTERNS) {
    await glob(pattern, { path: root, cache: true });
    const ops: Record<string, () => Promise<unknown>> = {
      cached: () => glob(pattern, { path: root, cache: true }),
      tinyglobby: () => tinyglob(pattern, { cwd: root, ignore: ["**/node_modules/**"] }),
    };
    if (rg.command)
      ops.rg = () => runPeer(rg.command as string, ["--files", "-g", pattern, "."], root);
    // Ten calls a run: a single sub-millisecond call is mostly timer and scheduling noise.
    const t = await sample(ops, { runs, iterations: options.quick ? 2 : 10, warmup: 3 });
    const cached = t.cached as Timing;
    globMedians.push(cached.median);
    if (t.rg) globSpeedups.push(t.rg.median / cached.median);
    out.push(
      `| \`${pattern}\` | ${formatTiming(cached)} | ${formatTiming(t.tinyglobby as Timing)} | ${shown(t.rg)} | ${t.rg ? times(t.rg.median / cached.median) : "—"} |`,
    );
    globGroups.push({
      label: pattern,
      bars: [
        { label: "freshfs glob, listing cached", kind: "freshfs", timing: cached },
        { label: "tinyglobby", kind: "peer", timing: t.tinyglobby },
        { label: "rg --files -g", kind: "peer", timing: t.rg },
      ],
    });
  }

  // fuzzy find
  const fuzzy = await benchFuzzy(root, options, fzf.command, runs);
  out.push("", fuzzy.table);
  out.push(
    "",
    `Time per operation: median of ${runs} runs (fastest–slowest in brackets), the rows' operations interleaved run by run. "Cold" walks the tree (searching while it walks); "listing cached" reads the shared scan cache (as an agent's second call does); "warm" answers from the live tree with its content index built (as the Workspace and \`freshfs mcp\` do). In the grep columns below 1× freshfs is faster; the glob column says how many times faster freshfs is.`,
  );
  const missing = [rg, fzf].filter((p) => !p.command).map((p) => `\`${p.names[0]}\``);

  const charts: Chart[] = [
    {
      name: "grep",
      title: "grep over a repository",
      subtitle:
        "Time per search, same run (shorter is better); on each peer: freshfs with the listing cached against it",
      unit: "time",
      groups: grepGroups,
    },
    {
      name: "glob",
      title: "glob over a repository",
      subtitle: "Time per glob, same run (shorter is better); rg spawned, as an agent would",
      unit: "time",
      groups: globGroups,
    },
    {
      name: "fuzzy",
      title: `Fuzzy file find: ranking (${fuzzy.queries} realistic ${fuzzy.queries === 1 ? "query" : "queries"})`,
      subtitle:
        "Mean reciprocal rank of the file each query means (longer is better; 1 = always first)",
      unit: "score",
      groups: [
        {
          label: "mean reciprocal rank",
          bars: [
            { label: "freshfs fuzzyFind", kind: "freshfs", timing: score(fuzzy.ours) },
            {
              label: "fzf --filter",
              kind: "peer",
              timing: fuzzy.theirs === undefined ? undefined : score(fuzzy.theirs),
            },
          ],
        },
      ],
    },
    {
      name: "fuzzy-speed",
      title: "Fuzzy file find: time per query",
      subtitle:
        "The same queries, same run (shorter is better); fzf spawned with the paths on stdin",
      unit: "time",
      groups: [
        {
          label: `${fuzzy.queries} ${fuzzy.queries === 1 ? "query" : "queries"}, each asked once a run`,
          bars: [
            { label: "freshfs fuzzyFind, listing cached", kind: "freshfs", timing: fuzzy.oursTime },
            { label: "fzf --filter", kind: "peer", timing: fuzzy.theirsTime },
          ],
        },
      ],
    },
  ];
  const range = (values: (number | undefined)[]) => {
    const known = values.filter((v): v is number => v !== undefined);
    return known.length === 0
      ? "not measured (no rg)"
      : Math.min(...known) === Math.max(...known)
        ? times(known[0] as number)
        : `${times(Math.min(...known))} to ${times(Math.max(...known))}`;
  };
  const literal = grepRatios.slice(0, 3);
  const reading = [
    rg.command
      ? `grep with the listing cached takes ${range(literal.map((r) => r.cached))} rg's time on the three rows with a literal, and ${range([grepRatios[3]?.cached])} on the regex without one (its only literal is the one character \`_\`, which the prefilter looks for before the regex runs). Warm (the live tree, its content index built) it takes ${range(grepRatios.map((r) => r.warm))}: the index rules out the files that cannot match, and only the rest are read. Cold, freshfs searches while it walks, as rg does: ${range(literal.map((r) => r.cold))} on the literal rows. The workers spend most of their time in \`open\`, \`read\` and \`close\`, the same calls rg makes, on the same cores. On Linux a file with something to report is also checked, through /proc, to be under the root (RELIABILITY.md): that costs most on the common-literal count, where ${(100 * (grepRatios[1]?.matching ?? 0)).toFixed(0)}% of the files match.`
      : "grep was not compared: rg is not installed.",
    `glob with a warm cache answers in ${formatUs(Math.max(...globMedians))} or less${globSpeedups.length > 0 ? `: ${globSpeedups.map((x) => (x >= 1 ? `${times(x)} faster` : `${times(1 / x)} slower`)).join(", ")} than spawning \`rg --files -g\`` : " (rg is not installed: not compared)"} (target: 50× faster).`,
    `fuzzyFind ranks the intended file with a mean reciprocal rank of ${fuzzy.ours.toFixed(3)}${fuzzy.theirs === undefined ? " (fzf is not installed: not compared)" : ` against fzf's ${fuzzy.theirs.toFixed(3)}`}, in ${formatUs(fuzzy.oursTime.median)} a query${fuzzy.theirsTime === undefined ? "" : ` (fzf spawned: ${formatUs(fuzzy.theirsTime.median)})`}.`,
  ];
  return {
    heading: "glob, fuzzy find and grep (`bench/search.ts`)",
    method: METHOD,
    body: out.join("\n"),
    charts,
    reading,
    missing,
  };
}

/** A score drawn as a bar: no spread. */
function score(value: number): Timing {
  return { median: value, min: value, max: value, runs: 1 };
}

interface FuzzyResult {
  readonly table: string;
  readonly queries: number;
  /** Mean reciprocal ranks. */
  readonly ours: number;
  readonly theirs: number | undefined;
  readonly oursTime: Timing;
  readonly theirsTime: Timing | undefined;
}

async function benchFuzzy(
  root: string,
  options: SearchBenchOptions,
  fzf: string | undefined,
  runs: number,
): Promise<FuzzyResult> {
  const listing = await getOrScan(root);
  const candidates = listing.entries
    .filter((entry) => entry.type === "file" && !/(^|\/)node_modules(\/|$)/.test(entry.path))
    .map((entry) => entry.path);
  const queries: { query: string; intended: string }[] = options.quick
    ? [{ query: "file12", intended: "pkg0/src/file12.ts" }]
    : JSON.parse(readFileSync(new URL("./fuzzy-queries.json", import.meta.url), "utf8"));
  const input = `${candidates.join("\n")}\n`;
  const ours = (query: string) =>
    fuzzyFind(query, { path: root, cache: true, limit: 1000, includeDirectories: false });
  const theirs = async (query: string) =>
    (await runPeer(fzf as string, ["--filter", query], root, input)).split("\n");
  // Ranking: the reciprocal rank of the intended file, averaged over the queries.
  let oursRank = 0;
  let theirsRank = 0;
  for (const { query, intended } of queries) {
    const rank = (await ours(query)).matches.findIndex((match) => match.path === intended) + 1;
    oursRank += rank > 0 ? 1 / rank : 0;
    if (fzf) {
      const theirRank = (await theirs(query)).indexOf(intended) + 1;
      theirsRank += theirRank > 0 ? 1 / theirRank : 0;
    }
  }
  // Speed: each run asks every query once; time per query.
  const query = (i: number) => (queries[i % queries.length] as { query: string }).query;
  const ops: Record<string, (i: number) => Promise<unknown>> = { ours: (i) => ours(query(i)) };
  if (fzf) ops.fzf = (i) => theirs(query(i));
  const speed = await sample(ops, { runs, iterations: queries.length, warmup: 1 });
  const n = queries.length;
  const table = [
    `| fuzzy find (${n} ${n === 1 ? "query" : "queries"} over ${candidates.length.toLocaleString("en-US")} files) | mean reciprocal rank | time per query |`,
    "|---|---|---|",
    `| freshfs \`fuzzyFind\` (listing cached) | ${(oursRank / n).toFixed(3)} | ${formatTiming(speed.ours as Timing)} |`,
    speed.fzf
      ? `| \`fzf --filter\` (spawned, candidates on stdin) | ${(theirsRank / n).toFixed(3)} | ${formatTiming(speed.fzf)} |`
      : "| `fzf` | not installed: not measured | not installed: not measured |",
  ].join("\n");
  return {
    table,
    queries: n,
    ours: oursRank / n,
    theirs: fzf ? theirsRank / n : undefined,
    oursTime: speed.ours as Timing,
    theirsTime: speed.fzf,
  };
}

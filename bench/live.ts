/**
 * Live trees (`watch: true`): what the watched listing costs and what it buys, in one run.
 * 1. A warm glob through the live tree (a sync with the watcher's thread included) beside
 *    today's warm glob (the TTL cache, its TTL raised so it stays cached) and `rg --files -g`
 *    spawned, on the corpus, the glob patterns of `bench/search.ts`.
 * 2. The cost of one change: a file created, modified or deleted (by this process with
 *    `writeFileSync`, or by another process), then a glob through the live tree, on a generated
 *    16,000-file tree: median and p90 of single operations.
 * 3. A 1M-file generated tree (`FRESHFS_BENCH_LIVE_FILES`, 0 skips it): the first walk, the
 *    time until the tree is live, memory (RSS, heap after a GC) against the live budget's own
 *    estimate, a warm live glob, and what one watched directory costs.
 * 4. The content index on that tree (its files hold a few lines): a grep through the live tree,
 *    the index waited for, what it holds against its budget (`contentIndexPolicy().maxBytes`;
 *    lowered in quick mode, so that it fills), the memory it takes, and a warm grep with and
 *    without it.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { linkSync, mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  configureContentIndex,
  configureLiveTrees,
  configureScanCache,
  contentIndexPolicy,
  contentIndexStats,
  forceRescan,
  type GlobOptions,
  type GlobResult,
  type GrepOptions,
  type GrepResult,
  glob,
  grep,
  invalidateFsScanCache,
  liveTreePolicy,
  waitForContentIndex,
} from "../src/index.js";
import { FsWatchBackend } from "../src/live/backend.js";
import { liveTrees } from "../src/live/registry.js";
import { retainedBytes } from "../test/helpers/heap.js";
import type { BarGroup, Chart } from "./lib/chart-types.js";
import { type SummedIndexStats, sumIndexStats } from "./lib/index-stats.js";
import {
  formatTiming,
  formatUs,
  type Latencies,
  latencies,
  sample,
  type Timing,
  times,
} from "./lib/measure.js";
import { findCorpus, peer, runPeer } from "./lib/peers.js";
import { inotifyWatches } from "./lib/proc.js";
import type { SuiteResult } from "./lib/report.js";
import { GLOB_PATTERNS } from "./search.js";

export interface LiveBenchOptions {
  quick: boolean;
}

/** The literal the large tree's files hold, one inode in 100 of them. */
const NEEDLE = "FRESHFS_LIVE_NEEDLE";

const METHOD = `Live trees answer \`glob\`, \`grep\` and \`fuzzyFind\` called with
\`{ cache: true, watch: true }\`: the first call walks, the directories are then watched (\`fs.watch\`
on a thread of its own) and each watch confirmed by a read made after it; from then on every call
syncs with the watcher's thread and applies what changed (\`freshness: "live"\`). "TTL cache" is
today's warm glob (\`cache: true, watch: false\`, its TTL raised so that it stays cached): as fast
as a listing can be read, but up to a TTL stale. Each tree is polled until a call answers
\`live\` before it is measured. Generated trees are built in a temporary directory and removed
after; their files are hard links to a few files (on this kind of disk a new inode costs far
more than a name: the walker reads types from \`readdir\` and never opens a file, so the listing
is the same), empty, except in the large tree, whose files hold a few lines (one text per 1,000
files, \`${NEEDLE}\` in one text in 100) for its content index: the grep there is
\`grep("${NEEDLE}", { cache: true, watch: true, hidden: false })\` (the glob's live tree), until it
answers \`live\`, then \`waitForContentIndex\`, then warm greps with the index and with
\`index: false\`, interleaved; memory as for the live tree, before the first grep and once the
index is built. Sections 1 and 3 interleave their operations run by run (median, fastest
and slowest run); section 2 times each change and glob on its own (median and 90th percentile of
single operations).`;

/** Files of the large tree: `FRESHFS_BENCH_LIVE_FILES`, else 1,000,000 (quick: 20,000). */
function largeTreeFiles(quick: boolean): number {
  const raw = process.env.FRESHFS_BENCH_LIVE_FILES?.trim();
  if (raw) {
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new Error(`FRESHFS_BENCH_LIVE_FILES is ${raw}: a whole number >= 0 (0 skips)`);
    }
    return value;
  }
  return quick ? 20_000 : 1_000_000;
}

export async function benchLive(options: LiveBenchOptions): Promise<SuiteResult> {
  const scratch = await mkdtemp(join(tmpdir(), "freshfs-bench-live-"));
  configureLiveTrees(undefined);
  try {
    const corpus = options.quick ? smallRepo(join(scratch, "repo")) : findCorpus();
    if (!corpus) throw new Error("no corpus: run `npm run bench` to build it");
    const globs = await warmGlobs(corpus, options);
    await closeTrees();
    const changes = await perChange(join(scratch, "changes"), options);
    await closeTrees();
    const files = largeTreeFiles(options.quick);
    const large = files === 0 ? undefined : await largeTree(join(scratch, "large"), files, options);
    await closeTrees();
    return report(globs, changes, large, options);
  } finally {
    liveTrees.closeAll();
    configureScanCache(undefined);
    invalidateFsScanCache();
    await rm(scratch, { recursive: true, force: true });
  }
}

function progress(message: string): void {
  console.error(`bench: live: ${message}`);
}

const count = (n: number) => n.toLocaleString("en-US");
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
/** A growth, signed: "+2.2 MiB", "−0.4 MiB". */
const grew = (bytes: number) => `${bytes < 0 ? "−" : "+"}${mib(Math.abs(bytes))}`;
const ms = (value: number) => formatUs(value * 1000);
const signedUs = (us: number) => `${us < 0 ? "−" : "+"}${formatUs(Math.abs(us))}`;

// ---------------------------------------------------------------------------------------------
// Trees and the watcher's state

/** A small repository for the smoke run (the same shape as `bench/search.ts`'s). */
function smallRepo(root: string): string {
  mkdirSync(root, { recursive: true });
  spawnSync("git", ["init", "-q", root], { stdio: "ignore" });
  writeFileSync(join(root, ".gitignore"), "ignored/\n");
  for (let d = 0; d < 20; d++) {
    mkdirSync(join(root, `pkg${d}`, "src"), { recursive: true });
    writeFileSync(join(root, `pkg${d}`, "README.md"), `# pkg${d}\n`);
    for (let f = 0; f < 30; f++) {
      writeFileSync(join(root, `pkg${d}`, "src", `file${f}.ts`), `export const x${f} = ${d};\n`);
    }
  }
  return root;
}

/** What the files of a generated tree hold, when not nothing: the text of their shared inode. */
interface TreeContent {
  /** Files linked to each inode (so that the text changes every so many files). */
  readonly filesPerInode: number;
  readonly text: (inode: number) => string;
}

/**
 * `dirs` directories of `perDir` files under `root`, one file in `tsEvery` named `.ts` (the rest
 * `.js`): hard links to a few files kept beside the tree (a name costs ~25 µs here, a new inode
 * ~0.7 ms), or new files where a link cannot be made. Empty, unless `content` says otherwise.
 */
function buildTree(
  root: string,
  dirs: number,
  perDir: number,
  tsEvery: number,
  content?: TreeContent,
): number {
  const started = performance.now();
  const inodes = `${root}.inodes`;
  mkdirSync(root, { recursive: true });
  mkdirSync(inodes, { recursive: true });
  const total = dirs * perDir;
  const width = String(dirs - 1).length;
  let made = 0;
  let source = "";
  let text = "";
  let links = true;
  let nextReport = 0.1;
  for (let d = 0; d < dirs; d++) {
    const dir = join(root, `d${String(d).padStart(width, "0")}`);
    mkdirSync(dir);
    for (let f = 0; f < perDir; f++) {
      const path = join(dir, `f${f}.${f % tsEvery === 0 ? "ts" : "js"}`);
      // ext4 allows 65,000 links to one inode: a new one well before that.
      const every = content?.filesPerInode ?? 50_000;
      if (made % every === 0) {
        text = content?.text(made / every) ?? "";
        source = join(inodes, `i${made}`);
        writeFileSync(source, text);
      }
      if (links) {
        try {
          linkSync(source, path);
        } catch {
          links = false;
          writeFileSync(path, text);
        }
      } else writeFileSync(path, text);
      made++;
    }
    if (total >= 100_000 && made / total >= nextReport) {
      const elapsed = (performance.now() - started) / 1000;
      progress(
        `building: ${count(made)} of ${count(total)} files (${Math.round((100 * made) / total)}%, ${elapsed.toFixed(0)} s)`,
      );
      nextReport += 0.1;
    }
  }
  return performance.now() - started;
}

const sleep = (delay: number) => new Promise((resolve) => setTimeout(resolve, delay));

/** Closes every live tree and waits (up to 10 s) for the watcher's thread to drop the watches. */
async function closeTrees(): Promise<void> {
  liveTrees.closeAll();
  const until = performance.now() + 10_000;
  while ((inotifyWatches("self") ?? 0) > 0 && performance.now() < until) await sleep(10);
}

interface BecameLive {
  /** The first call: the walk, its directories recorded, the watches asked for. */
  readonly firstMs: number;
  /** From the end of the first call until a call answered `live`; undefined: it never did. */
  readonly liveAfterMs: number | undefined;
  readonly calls: number;
  /** Why not, when it never became live. */
  readonly reason: string | undefined;
  readonly last: GlobResult;
}

/**
 * Calls `glob` until it answers `live`. A call made while many watches are unconfirmed walks the
 * whole tree again, so the calls after the first wait for the kernel to hold as many watches as
 * the tree asked for (read from /proc every 10 ms); without /proc, a call every 50 ms.
 */
async function untilLive(
  pattern: string,
  options: GlobOptions,
  timeoutMs: number,
): Promise<BecameLive> {
  const started = performance.now();
  let last = await glob(pattern, options);
  const firstEnd = performance.now();
  const firstMs = firstEnd - started;
  let calls = 1;
  if (last.freshness === "live") {
    return { firstMs, liveAfterMs: 0, calls, reason: undefined, last };
  }
  while (performance.now() - firstEnd < timeoutMs) {
    if (
      last.freshness === "cached" ||
      (last.unwatched !== undefined && liveTrees.stats.trees === 0)
    )
      break;
    const expected = liveTrees.stats.watches;
    const waitUntil = performance.now() + Math.min(timeoutMs, 60_000);
    if (inotifyWatches("self") === undefined) await sleep(50);
    else {
      while ((inotifyWatches("self") ?? 0) < expected && performance.now() < waitUntil)
        await sleep(10);
      // The last slice of confirmations is reported a few ms after its watches exist.
      await sleep(10);
    }
    last = await glob(pattern, options);
    calls++;
    if (last.freshness === "live") {
      return { firstMs, liveAfterMs: performance.now() - firstEnd, calls, reason: undefined, last };
    }
  }
  return {
    firstMs,
    liveAfterMs: undefined,
    calls,
    // The page names no path of this machine: the tree is "the tree".
    reason: last.unwatched
      ? last.unwatched.replaceAll(`${last.root}/`, "").replaceAll(last.root, "the tree")
      : `still \`${last.freshness}\` after ${calls} calls over ${(timeoutMs / 1000).toFixed(0)} s`,
    last,
  };
}

// ---------------------------------------------------------------------------------------------
// 1. Warm glob: live tree vs TTL cache vs rg

interface GlobRow {
  readonly pattern: string;
  readonly matches: number;
  readonly live: Timing;
  readonly ttl: Timing;
  readonly rg: Timing | undefined;
  /** Answers of the live tree that were not `live`, and that disagreed with the TTL answer. */
  readonly notLive: number;
  readonly disagreed: number;
}

interface Globs {
  readonly rows: readonly GlobRow[];
  readonly became: BecameLive;
  readonly entries: number;
  readonly watches: number;
  readonly runs: number;
  readonly iterations: number;
  readonly rgMissing: boolean;
  /** A sync with a watcher's thread of its own, nothing watched: the floor of a live answer. */
  readonly sync: Timing;
}

async function warmGlobs(root: string, options: LiveBenchOptions): Promise<Globs> {
  const runs = options.quick ? 3 : 7;
  const iterations = options.quick ? 2 : 10;
  const rg = peer("rg");
  configureScanCache({ ttlMs: 3_600_000 });
  const live: GlobOptions = { path: root, cache: true, watch: true };
  const ttl: GlobOptions = { path: root, cache: true, watch: false };
  progress("corpus: waiting for the live tree…");
  const became = await untilLive(GLOB_PATTERNS[0] as string, live, options.quick ? 20_000 : 60_000);
  const { entries, watches } = liveTrees.stats;
  const rows: GlobRow[] = [];
  for (const pattern of GLOB_PATTERNS) {
    const reference = await glob(pattern, ttl);
    let notLive = 0;
    let disagreed = 0;
    const ops: Record<string, () => Promise<unknown>> = {
      live: async () => {
        const answer = await glob(pattern, live);
        if (answer.freshness !== "live") notLive++;
        if (answer.totalMatches !== reference.totalMatches) disagreed++;
      },
      ttl: () => glob(pattern, ttl),
    };
    if (rg.command)
      ops.rg = () => runPeer(rg.command as string, ["--files", "-g", pattern, "."], root);
    const t = await sample(ops, { runs, iterations, warmup: 3 });
    rows.push({
      pattern,
      matches: reference.totalMatches,
      live: t.live as Timing,
      ttl: t.ttl as Timing,
      rg: t.rg,
      notLive,
      disagreed,
    });
  }
  configureScanCache(undefined);
  // The round trip alone, on a backend (and so a thread) of its own: started, then timed.
  const backend = new FsWatchBackend();
  await backend.sync();
  const sync = (
    await sample({ sync: () => backend.sync() }, { runs, iterations: options.quick ? 20 : 200 })
  ).sync as Timing;
  return { rows, became, entries, watches, runs, iterations, rgMissing: !rg.command, sync };
}

// ---------------------------------------------------------------------------------------------
// 2. The cost of one change

/** For a chart: the median, whiskers from the 10th to the 90th percentile (µs). */
function spread(l: Latencies): Timing {
  return { median: l.median * 1000, min: l.p10 * 1000, max: l.p90 * 1000, runs: l.n };
}

type ChangeKind = "create" | "modify" | "delete";
const KINDS: readonly ChangeKind[] = ["create", "modify", "delete"];
const PAST: Record<ChangeKind, string> = {
  create: "created",
  modify: "modified",
  delete: "deleted",
};

interface ChangeRow {
  readonly label: string;
  /** The change alone (for another process: the request and its acknowledgement). */
  readonly change: Latencies | undefined;
  readonly glob: Latencies;
  readonly total: Latencies | undefined;
  /** Globs whose answer missed the change. */
  readonly missed: number;
  readonly notLive: number;
}

interface Changes {
  readonly rows: readonly ChangeRow[];
  readonly files: number;
  readonly dirs: number;
  readonly matches: number;
  readonly became: BecameLive;
  readonly cycles: number;
  readonly otherProcess: string | undefined;
}

/** A process that makes the changes it is told on stdin and says `ok` after each. */
const CHANGER = `
const fs = require("node:fs");
let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf("\\n")) !== -1) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    const path = line.slice(2);
    if (line[0] === "c") fs.writeFileSync(path, "");
    else if (line[0] === "m") fs.writeFileSync(path, "changed\\n");
    else fs.unlinkSync(path);
    process.stdout.write("ok\\n");
  }
});
`;

class Changer {
  readonly #child: ChildProcessWithoutNullStreams;
  #waiting: (() => void)[] = [];
  #buffer = "";

  constructor() {
    this.#child = spawn(process.execPath, ["-e", CHANGER], { stdio: "pipe" });
    this.#child.stdout.setEncoding("utf8");
    this.#child.stdout.on("data", (chunk: string) => {
      this.#buffer += chunk;
      let at = this.#buffer.indexOf("\n");
      while (at !== -1) {
        this.#buffer = this.#buffer.slice(at + 1);
        this.#waiting.shift()?.();
        at = this.#buffer.indexOf("\n");
      }
    });
  }

  /** Resolves once the other process has made the change (its system call returned). */
  change(kind: ChangeKind, path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the other process did not answer")), 5000);
      this.#waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#child.stdin.write(`${kind[0]} ${path}\n`);
    });
  }

  close(): void {
    this.#child.stdin.end();
    this.#child.kill();
  }
}

async function perChange(root: string, options: LiveBenchOptions): Promise<Changes> {
  const dirs = options.quick ? 20 : 160;
  const perDir = options.quick ? 50 : 100;
  const cycles = options.quick ? 20 : 300;
  const warmup = options.quick ? 3 : 20;
  progress(`changes: building ${count(dirs * perDir)} files…`);
  buildTree(root, dirs, perDir, 10);
  const pattern = "**/*.ts";
  const live: GlobOptions = { path: root, cache: true, watch: true };
  const became = await untilLive(pattern, live, options.quick ? 20_000 : 60_000);
  const matches = became.last.totalMatches;

  let changer: Changer | undefined;
  let otherProcess: string | undefined;
  try {
    changer = new Changer();
    await changer.change("create", join(root, "probe.ts"));
    await changer.change("delete", join(root, "probe.ts"));
  } catch (error) {
    otherProcess = `could not start another process (${(error as Error).message})`;
    changer?.close();
    changer = undefined;
  }

  const record = () => ({ change: [] as number[], glob: [] as number[], total: [] as number[] });
  const mine = new Map(KINDS.map((kind) => [kind, record()]));
  const theirs = new Map(KINDS.map((kind) => [kind, record()]));
  const quiet: number[] = [];
  const listing = record();
  const missed = new Map<string, number>();
  const notLive = new Map<string, number>();
  const checkAnswer = (key: string, answer: GlobResult, rel: string, present: boolean) => {
    if (answer.freshness !== "live") notLive.set(key, (notLive.get(key) ?? 0) + 1);
    if (answer.matches.includes(rel) !== present) missed.set(key, (missed.get(key) ?? 0) + 1);
  };
  const width = String(dirs - 1).length;
  progress(`changes: ${cycles} cycles of create, modify, delete…`);
  for (let i = 0; i < warmup + cycles; i++) {
    const keep = i >= warmup;
    const dir = `d${String((i * 37) % dirs).padStart(width, "0")}`;
    for (const [who, store] of [
      ["mine", mine],
      ["theirs", theirs],
    ] as const) {
      if (who === "theirs" && !changer) continue;
      const rel = `${dir}/new-${who}-${i}.ts`;
      const absolute = join(root, rel);
      for (const kind of KINDS) {
        const t0 = performance.now();
        if (who === "theirs") await changer?.change(kind, absolute);
        else if (kind === "delete") unlinkSync(absolute);
        else writeFileSync(absolute, kind === "create" ? "" : "changed\n");
        const t1 = performance.now();
        const answer = await glob(pattern, live);
        const t2 = performance.now();
        checkAnswer(`${who} ${kind}`, answer, rel, kind !== "delete");
        if (!keep) continue;
        const row = store.get(kind);
        row?.change.push(t1 - t0);
        row?.glob.push(t2 - t1);
        row?.total.push(t2 - t0);
      }
    }
    // The live tree's part alone: the listing after a create, without a glob over it.
    const rel = `${dir}/new-listing-${i}.ts`;
    const t0 = performance.now();
    writeFileSync(join(root, rel), "");
    const t1 = performance.now();
    const scanned = await liveTrees.query(root, { includeHidden: false, useGitignore: true });
    const t2 = performance.now();
    if (scanned?.freshness !== "live") notLive.set("listing", (notLive.get("listing") ?? 0) + 1);
    if (!scanned?.entries.some((entry) => entry.path === rel))
      missed.set("listing", (missed.get("listing") ?? 0) + 1);
    unlinkSync(join(root, rel));
    // glob keeps an index per listing array: one untimed glob builds it for the quiet one.
    await glob(pattern, live);
    if (keep) {
      listing.change.push(t1 - t0);
      listing.glob.push(t2 - t1);
      listing.total.push(t2 - t0);
    }
    const t3 = performance.now();
    const answer = await glob(pattern, live);
    if (keep) quiet.push(performance.now() - t3);
    if (answer.freshness !== "live") notLive.set("quiet", (notLive.get("quiet") ?? 0) + 1);
  }
  changer?.close();

  const rows: ChangeRow[] = [];
  for (const [who, store] of [
    ["mine", mine],
    ["theirs", theirs],
  ] as const) {
    if (who === "theirs" && !changer) continue;
    for (const kind of KINDS) {
      const r = store.get(kind) ?? record();
      const key = `${who} ${kind}`;
      rows.push({
        label:
          who === "mine"
            ? `${PAST[kind]} by this process (\`${kind === "delete" ? "unlinkSync" : "writeFileSync"}\`)`
            : `${PAST[kind]} by another process`,
        change: latencies(r.change),
        glob: latencies(r.glob),
        total: latencies(r.total),
        missed: missed.get(key) ?? 0,
        notLive: notLive.get(key) ?? 0,
      });
    }
  }
  rows.push({
    label: "created by this process, then the listing alone (`liveTrees.query`, internal: no glob)",
    change: latencies(listing.change),
    glob: latencies(listing.glob),
    total: latencies(listing.total),
    missed: missed.get("listing") ?? 0,
    notLive: notLive.get("listing") ?? 0,
  });
  rows.push({
    label: "no change (the tree quiet)",
    change: undefined,
    glob: latencies(quiet),
    total: undefined,
    missed: 0,
    notLive: notLive.get("quiet") ?? 0,
  });
  return { rows, files: dirs * perDir, dirs, matches, became, cycles, otherProcess };
}

// ---------------------------------------------------------------------------------------------
// 3. A large tree

interface Memory {
  /** Heap and ArrayBuffers after a full GC. */
  readonly heap: number;
  readonly rss: number;
  /** RSS less the main thread's committed heap: native memory, the watcher thread's heap. */
  readonly outsideHeap: number;
}

function memory(): Memory {
  const heap = retainedBytes();
  const usage = process.memoryUsage();
  return { heap, rss: usage.rss, outsideHeap: usage.rss - usage.heapTotal };
}

interface Large {
  readonly files: number;
  readonly dirs: number;
  readonly buildMs: number;
  readonly walk: Timing;
  readonly became: BecameLive;
  readonly stats: { trees: number; watches: number; bytes: number; entries: number };
  readonly before: Memory;
  readonly after: Memory;
  readonly pattern: string;
  readonly matches: number;
  readonly live: Timing | undefined;
  readonly ttl: Timing | undefined;
  /** Whether the TTL cache's default byte budget kept the listing (else raised to measure). */
  readonly ttlDefaultHolds: boolean | undefined;
  /** A file created, then a glob through the live tree; then the listing alone after one. */
  readonly changeGlob: Latencies | undefined;
  readonly changeListing: Latencies | undefined;
  readonly changeMissed: number;
  /** Warm globs, and globs after a change, that did not answer `live` (and what they said). */
  readonly notLive: number;
  readonly notLiveChange: number;
  readonly notLiveWhy: readonly string[];
  readonly maxBytes: number;
  readonly maxWatches: number;
  /** The content index on the tree (undefined: the tree never became live). */
  readonly index: LargeIndex | undefined;
  readonly removeMs: number;
}

// ---------------------------------------------------------------------------------------------
// 4. The content index on the large tree

/**
 * The large tree's text: each inode serves 1,000 files (so the index sees many texts), a few
 * lines each, and one inode in 100 holds the needle (1% of the files; in quick mode, 1,000 of
 * 20,000).
 */
const LARGE_CONTENT: TreeContent = {
  filesPerInode: 1_000,
  text: (inode) =>
    `// freshfs bench: the text of shared inode ${inode}\nexport const inode${inode} = ${inode};\n${inode % 100 === 1 ? `// ${NEEDLE}: one inode in 100 holds it\n` : ""}`,
};
/**
 * Quick mode's index budget: small enough that the 20,000-file tree fills it (about 2.3 MB
 * unbounded; runs of 4,096 files, some 0.46 MB each: two land, the third is refused), so that the
 * path of a full index (a search reading what is not indexed) runs too.
 */
const QUICK_INDEX_MAX_BYTES = 1024 * 1024;

/** Files of a `files`-file large tree that hold the needle. */
function filesWithNeedle(files: number): number {
  const every = LARGE_CONTENT.filesPerInode;
  let n = 0;
  for (let inode = 0; inode * every < files; inode++) {
    if (LARGE_CONTENT.text(inode).includes(NEEDLE)) n += Math.min(every, files - inode * every);
  }
  return n;
}

interface LargeIndex {
  readonly expected: number;
  /** The budget in force (`contentIndexPolicy().maxBytes`), and whether quick mode lowered it. */
  readonly maxBytes: number;
  readonly lowered: boolean;
  /** The first grep: the index not built yet (it starts it), every file read. */
  readonly firstMs: number;
  readonly firstRead: number;
  readonly calls: number;
  readonly waitMs: number;
  /** `contentIndexStats`, added up over the root's indexes (one per live tree). */
  readonly stats: SummedIndexStats;
  readonly before: Memory;
  readonly after: Memory;
  readonly indexed: Timing | undefined;
  readonly unindexed: Timing | undefined;
  readonly readIndexed: number;
  readonly readUnindexed: number;
  readonly searched: number;
  /** Answers that were not `live`, partial, or of another count than the files holding the needle. */
  readonly wrong: readonly string[];
}

/**
 * On the live large tree: a grep with `{ cache: true, watch: true }` (the glob's live tree:
 * `hidden: false`), until live; the index waited for; what it holds against the budget, and the
 * process's memory before and after; then the warm grep for the needle with and without it.
 */
async function largeIndex(
  root: string,
  files: number,
  options: LiveBenchOptions,
): Promise<LargeIndex> {
  const lowered = options.quick;
  if (lowered) configureContentIndex({ maxBytes: QUICK_INDEX_MAX_BYTES });
  try {
    const { maxBytes } = contentIndexPolicy();
    const expected = filesWithNeedle(files);
    const indexed: GrepOptions = {
      path: root,
      cache: true,
      watch: true,
      hidden: false,
      timeoutMs: 1_800_000,
    };
    const unindexed: GrepOptions = { ...indexed, index: false };
    const wrong: string[] = [];
    const check = (answer: GrepResult, what: string) => {
      const problems = [
        ...(answer.freshness === "live" ? [] : [`\`${answer.freshness}\``]),
        ...(answer.partial ? ["partial"] : []),
        ...(answer.totalRecords === expected
          ? []
          : [`${count(answer.totalRecords)} lines, not ${count(expected)}`]),
      ];
      if (problems.length === 0) return;
      const message = `${what}: ${problems.join(", ")}`;
      wrong.push(message);
      progress(`content index: WRONG ANSWER: ${message}`);
    };
    const before = memory();
    progress(`content index: grep ${NEEDLE} until live, then waiting for the index…`);
    const started = performance.now();
    let first = await grep(NEEDLE, indexed);
    const firstMs = performance.now() - started;
    const firstRead = first.filesRead;
    let calls = 1;
    while (first.freshness !== "live" && performance.now() - started < 60_000) {
      await sleep(100);
      first = await grep(NEEDLE, indexed);
      calls++;
    }
    check(first, "the first grep");
    const waitStarted = performance.now();
    await waitForContentIndex(root);
    const waitMs = performance.now() - waitStarted;
    const stats = sumIndexStats(contentIndexStats(root));
    const after = memory();
    progress(`content index: ${JSON.stringify(stats)} (budget ${maxBytes} bytes)`);
    progress("content index: warm greps, with and without it…");
    let readIndexed = 0;
    let readUnindexed = 0;
    let searched = 0;
    const t = await sample(
      {
        indexed: async () => {
          const answer = await grep(NEEDLE, indexed);
          check(answer, "warm grep");
          readIndexed = answer.filesRead;
          searched = answer.filesSearched;
        },
        unindexed: async () => {
          const answer = await grep(NEEDLE, unindexed);
          check(answer, "warm grep, `index: false`");
          readUnindexed = answer.filesRead;
        },
      },
      { runs: 3, iterations: 1, warmup: 1 },
    );
    return {
      expected,
      maxBytes,
      lowered,
      firstMs,
      firstRead,
      calls,
      waitMs,
      stats,
      before,
      after,
      indexed: t.indexed,
      unindexed: t.unindexed,
      readIndexed,
      readUnindexed,
      searched,
      wrong,
    };
  } finally {
    if (lowered) configureContentIndex(undefined);
  }
}

async function largeTree(root: string, files: number, options: LiveBenchOptions): Promise<Large> {
  const perDir = 100;
  const dirs = Math.max(1, Math.ceil(files / perDir));
  progress(`large tree: building ${count(dirs * perDir)} files in ${count(dirs)} directories…`);
  const buildMs = buildTree(root, dirs, perDir, 100, LARGE_CONTENT);
  const pattern = "**/*.ts";
  const live: GlobOptions = { path: root, cache: true, watch: true };
  const { maxBytes, maxWatches } = liveTreePolicy();
  // Nothing else held while the heap is measured: the TTL cache's listings of earlier sections.
  invalidateFsScanCache();
  try {
    const before = memory();
    progress("large tree: first walk, then waiting for the tree to be live…");
    const became = await untilLive(pattern, live, options.quick ? 30_000 : 300_000);
    const stats = liveTrees.stats;
    const after = memory();
    let liveTiming: Timing | undefined;
    let ttlTiming: Timing | undefined;
    let ttlDefaultHolds: boolean | undefined;
    let changeGlob: Latencies | undefined;
    let changeListing: Latencies | undefined;
    let changeMissed = 0;
    let index: LargeIndex | undefined;
    let notLive = 0;
    let notLiveChange = 0;
    const notLiveWhy = new Set<string>();
    const runs = options.quick ? 3 : 7;
    if (became.liveAfterMs !== undefined) {
      progress("large tree: warm globs…");
      configureScanCache({ ttlMs: 3_600_000 });
      const ttl: GlobOptions = { path: root, cache: true, watch: false };
      await glob(pattern, ttl);
      ttlDefaultHolds = (await glob(pattern, ttl)).freshness === "cached";
      if (!ttlDefaultHolds) {
        configureScanCache({ ttlMs: 3_600_000, maxBytes: 2 ** 31 });
        await glob(pattern, ttl);
      }
      const t = await sample(
        {
          live: async () => {
            const answer = await glob(pattern, live);
            if (answer.freshness !== "live") {
              notLive++;
              notLiveWhy.add(
                `${answer.freshness}${answer.unwatched ? `: ${answer.unwatched}` : ""}`,
              );
            }
          },
          ttl: () => glob(pattern, ttl),
        },
        { runs, iterations: options.quick ? 2 : 5, warmup: 2 },
      );
      liveTiming = t.live;
      ttlTiming = t.ttl;
      // Back to the default budget, which drops this listing from the TTL cache (an
      // invalidation would also tell the live tree to walk again).
      configureScanCache(undefined);
      progress("large tree: one change, then a glob…");
      const globs: number[] = [];
      const listings: number[] = [];
      const width = String(dirs - 1).length;
      const policy = { includeHidden: false, useGitignore: true };
      for (let i = 0; i < (options.quick ? 6 : 23); i++) {
        const dir = `d${String((i * 7919) % dirs).padStart(width, "0")}`;
        const rel = `${dir}/new-${i}.ts`;
        writeFileSync(join(root, rel), "");
        let t0 = performance.now();
        const answer = await glob(pattern, live);
        if (i >= 3) globs.push(performance.now() - t0);
        if (answer.freshness !== "live") {
          notLiveChange++;
          notLiveWhy.add(`${answer.freshness}${answer.unwatched ? `: ${answer.unwatched}` : ""}`);
        }
        if (!answer.matches.includes(rel)) changeMissed++;
        unlinkSync(join(root, rel));
        writeFileSync(join(root, `${rel}x`), "");
        t0 = performance.now();
        const scanned = await liveTrees.query(root, policy);
        if (i >= 3) listings.push(performance.now() - t0);
        if (!scanned?.entries.some((entry) => entry.path === `${rel}x`)) changeMissed++;
        unlinkSync(join(root, `${rel}x`));
        await liveTrees.query(root, policy);
      }
      changeGlob = latencies(globs);
      changeListing = latencies(listings);
      index = await largeIndex(root, dirs * perDir, options);
    }
    progress("large tree: plain walks (`forceRescan`)…");
    const walk = (
      await sample(
        { walk: () => forceRescan(root) },
        { runs: options.quick ? 1 : 3, iterations: 1, warmup: 0 },
      )
    ).walk as Timing;
    return {
      files: dirs * perDir,
      dirs,
      buildMs,
      walk,
      became,
      stats,
      before,
      after,
      pattern,
      matches: became.last.totalMatches,
      live: liveTiming,
      ttl: ttlTiming,
      ttlDefaultHolds,
      changeGlob,
      changeListing,
      changeMissed,
      notLive,
      notLiveChange,
      notLiveWhy: [...notLiveWhy],
      maxBytes,
      maxWatches,
      index,
      removeMs: await removeTree(root),
    };
  } finally {
    await closeTrees();
    invalidateFsScanCache();
  }
}

function indexTable(x: LargeIndex, files: number): string[] {
  const s = x.stats;
  const honoured = s.bytes <= x.maxBytes;
  const heap = x.after.heap - x.before.heap;
  const rss = x.after.rss - x.before.rss;
  const ratio =
    x.indexed && x.unindexed ? times(x.unindexed.median / x.indexed.median) : "not measured";
  return [
    `**The content index on the ${count(files)}-file tree** (\`${NEEDLE}\` in ${count(x.expected)} files):`,
    "",
    "| | |",
    "|---|---|",
    `| first grep (the index not built yet: it starts it) | ${ms(x.firstMs)}, ${count(x.firstRead)} files read${x.calls > 1 ? ` (live after ${x.calls} calls)` : ""} |`,
    `| then until built (\`waitForContentIndex\`) | ${ms(x.waitMs)} |`,
    `| \`contentIndexStats\`: bytes, files, segments | ${mib(s.bytes)} (${count(s.bytes)} bytes), ${count(s.files)} files, ${count(s.segments)} segments${s.indexes > 1 ? ` (${s.indexes} indexes)` : ""} |`,
    `| text indexed (\`textBytes\`), build (\`buildMs\`) | ${mib(s.textBytes)}, ${s.buildMs === undefined ? (s.full ? "— (the budget stopped it first)" : "not finished") : ms(s.buildMs)} |`,
    `| full (the budget stopped it) | ${s.full ? "yes" : "no"} |`,
    `| budget (\`contentIndexPolicy().maxBytes\`) | ${mib(x.maxBytes)}${x.lowered ? " (lowered for quick mode, so that it fills)" : ""}: ${((100 * s.bytes) / x.maxBytes).toFixed(1)}% used; **budget honoured: ${honoured ? "yes" : "no"}** |`,
    `| heap + ArrayBuffers after a GC: before the first grep → index built | ${mib(x.before.heap)} → ${mib(x.after.heap)} (**${grew(heap)}**; ${s.bytes > 0 && heap > 0 ? `the index's own count is ${times(s.bytes / heap)} that` : "—"}) |`,
    `| RSS: before → index built | ${mib(x.before.rss)} → ${mib(x.after.rss)} (${grew(rss)}: the build thread and the grep workers, threads of their own, are in it) |`,
    `| warm grep \`${NEEDLE}\`, the index | ${x.indexed ? formatTiming(x.indexed) : "not measured"}; ${count(x.readIndexed)} of ${count(x.searched)} files read |`,
    `| same, \`index: false\` | ${x.unindexed ? formatTiming(x.unindexed) : "not measured"}; ${count(x.readUnindexed)} files read |`,
    `| \`index: false\` ÷ the index | ${ratio} |`,
    ...(x.wrong.length > 0
      ? ["", `**${x.wrong.length} wrong answers**: ${x.wrong.slice(0, 3).join("; ")}.`]
      : []),
  ];
}

function indexReading(x: LargeIndex, files: number): string {
  const s = x.stats;
  const honoured = s.bytes <= x.maxBytes;
  return `The content index on the ${count(files)}-file tree: ${mib(s.bytes)} for ${count(s.files)} files (${mib(s.textBytes)} of text), ${s.buildMs === undefined ? "stopped by the budget before it was complete" : `built in ${ms(s.buildMs)} in the background`}, ${s.full ? "full" : "not full"}, against a budget of ${mib(x.maxBytes)}${x.lowered ? " (lowered for quick mode)" : ""}: **budget honoured: ${honoured ? "yes" : "no"}**. The process grew by ${grew(x.after.heap - x.before.heap)} of heap, ${grew(x.after.rss - x.before.rss)} of RSS. A warm grep for \`${NEEDLE}\` (${count(x.expected)} files hold it) takes ${x.indexed ? formatUs(x.indexed.median) : "—"} with the index (${count(x.readIndexed)} files read) against ${x.unindexed ? formatUs(x.unindexed.median) : "—"} with \`index: false\` (${count(x.readUnindexed)})${x.indexed && x.unindexed ? `: ${times(x.unindexed.median / x.indexed.median)} faster` : ""}. ${x.wrong.length === 0 ? "Every answer had the files that hold it." : `**${x.wrong.length} answers were wrong.**`}`;
}

async function removeTree(root: string): Promise<number> {
  await closeTrees();
  invalidateFsScanCache();
  progress("large tree: removing it…");
  const started = performance.now();
  await rm(root, { recursive: true, force: true });
  await rm(`${root}.inodes`, { recursive: true, force: true });
  return performance.now() - started;
}

// ---------------------------------------------------------------------------------------------
// The report

function report(
  globs: Globs,
  changes: Changes,
  large: Large | undefined,
  options: LiveBenchOptions,
): SuiteResult {
  const out: string[] = [];
  const reading: string[] = [];
  const charts: Chart[] = [];
  const shown = (timing: Timing | undefined) =>
    timing ? formatTiming(timing) : "not installed: not measured";
  const met = (ok: boolean) => (ok ? "**met**" : "**not met**");
  const became = (b: BecameLive) =>
    b.liveAfterMs === undefined
      ? `never became live (${b.reason ?? "no reason given"})`
      : `live ${ms(b.liveAfterMs)} after the first call (${b.calls} calls)`;

  // 1.
  out.push(
    `**Warm glob on ${options.quick ? "a small generated repository (quick mode)" : "the corpus"}** (${count(globs.entries)} entries listed, ${count(globs.watches)} directories watched; first call ${ms(globs.became.firstMs)}, ${became(globs.became)}, which includes starting the watcher's thread):`,
    "",
    "| glob | matches | freshfs live (sync included) | freshfs TTL cache | `rg --files -g` | live ÷ TTL | rg ÷ live |",
    "|---|---|---|---|---|---|---|",
  );
  const groups: BarGroup[] = [];
  for (const row of globs.rows) {
    out.push(
      `| \`${row.pattern}\` | ${count(row.matches)} | ${formatTiming(row.live)} | ${formatTiming(row.ttl)} | ${shown(row.rg)} | ${times(row.live.median / row.ttl.median)} | ${row.rg ? times(row.rg.median / row.live.median) : "—"} |`,
    );
    groups.push({
      label: row.pattern,
      bars: [
        { label: "freshfs glob, live (synced)", kind: "freshfs", timing: row.live },
        { label: "freshfs glob, TTL cache", kind: "freshfs", timing: row.ttl },
        { label: "rg --files -g", kind: "peer", timing: row.rg },
      ],
    });
  }
  out.push(
    "",
    `Time per glob: median of ${globs.runs} runs of ${globs.iterations} calls (fastest–slowest run in brackets), the three interleaved run by run. A sync alone with a watcher's thread (one of its own, watching nothing; the floor a live answer adds to the search when the search is shorter): ${formatTiming(globs.sync)}.`,
  );
  charts.push({
    name: "live-glob",
    title: "Warm glob: live tree, TTL cache, rg",
    subtitle:
      "Time per glob, same run (shorter is better); live includes the sync with the watcher",
    unit: "time",
    groups,
  });
  const liveRatios = globs.rows.map((row) => row.live.median / row.ttl.median);
  const rgRatios = globs.rows.flatMap((row) => (row.rg ? [row.rg.median / row.live.median] : []));
  const notLive = globs.rows.reduce((n, row) => n + row.notLive, 0);
  const disagreed = globs.rows.reduce((n, row) => n + row.disagreed, 0);
  reading.push(
    `Warm glob through the live tree takes ${liveRatios.map(times).join(", ")} the TTL cache's time (${globs.rows.map((row) => signedUs(row.live.median - row.ttl.median)).join(", ")} at the median; the sync alone ${formatUs(globs.sync.median)}; target ≤ 2×: ${met(liveRatios.every((x) => x <= 2))})${
      rgRatios.length > 0
        ? ` and is ${rgRatios.map(times).join(", ")} faster than spawning \`rg --files -g\` (target ≥ 50×: ${met(rgRatios.length === globs.rows.length && rgRatios.every((x) => x >= 50))})`
        : " (rg is not installed: not compared)"
    }. ${notLive === 0 ? "Every live answer said `live`" : `**${notLive} live answers were not \`live\`**`}${disagreed === 0 ? " and matched the TTL cache's count." : `; **${disagreed} disagreed with the TTL cache's count**.`}`,
  );

  // 2.
  const c = changes;
  out.push(
    "",
    `**One change, then \`glob("**/*.ts")\`** through the live tree of a generated tree of ${count(c.files)} files in ${count(c.dirs)} directories (${count(c.matches)} match; ${became(c.became)}), ${c.cycles} cycles of create, modify and delete, each change in another directory, the file a new \`.ts\`:`,
    "",
    "| change | the change alone: median | glob after it: median | p90 | slowest | change + glob: median | p90 | slowest | answers missing the change |",
    "|---|---|---|---|---|---|---|---|---|",
  );
  for (const row of c.rows) {
    out.push(
      `| ${row.label} | ${row.change ? ms(row.change.median) : "—"} | ${ms(row.glob.median)} | ${ms(row.glob.p90)} | ${ms(row.glob.max)} | ${row.total ? ms(row.total.median) : "—"} | ${row.total ? ms(row.total.p90) : "—"} | ${row.total ? ms(row.total.max) : "—"} | ${row.change ? row.missed : "—"}${row.notLive > 0 ? ` (${row.notLive} not \`live\`)` : ""} |`,
    );
  }
  out.push(
    "",
    `Single operations, timed one by one (the first cycles discarded as warm-up). For another process, "the change alone" is the request on its stdin and its acknowledgement after the system call returned.${c.otherProcess ? ` Another process: ${c.otherProcess}.` : ""}`,
  );
  charts.push({
    name: "live-change",
    title: "One change, then a glob through the live tree",
    subtitle: `${count(c.files)} files; single operations: median, whiskers from p10 to p90 (shorter is better)`,
    unit: "time",
    groups: c.rows
      .filter((row) => row.total !== undefined)
      .map((row) => ({
        label: row.label.replaceAll("`", ""),
        bars: [
          {
            label: "change + glob",
            kind: "freshfs" as const,
            timing: spread(row.total as Latencies),
          },
          { label: "glob after the change", kind: "freshfs" as const, timing: spread(row.glob) },
        ],
      })),
  });
  const mineRows = c.rows.slice(0, KINDS.length);
  const quietRow = c.rows[c.rows.length - 1] as ChangeRow;
  const listingRow = c.rows[c.rows.length - 2] as ChangeRow;
  const missedAll = c.rows.reduce((n, row) => n + row.missed, 0);
  const worstTotal = Math.max(...mineRows.map((row) => row.total?.median ?? 0));
  const theirRows = c.rows.filter((row) => row.label.includes("another process"));
  const create = mineRows[0];
  const createRow = create;
  reading.push(
    `A change made by this process and the glob after it take ${mineRows.map((row) => `${ms(row.total?.median ?? 0)} (${KINDS[mineRows.indexOf(row)]})`).join(", ")} at the median, p90 ${mineRows.map((row) => ms(row.total?.p90 ?? 0)).join(", ")} (target: median ≤ 1 ms: ${met(worstTotal <= 1)}). The glob alone after a change takes ${mineRows.map((row) => ms(row.glob.median)).join(", ")}, against ${ms(quietRow.glob.median)} when nothing changed; the live tree's own part (sync, change applied, the listing returned, no glob) takes ${ms(listingRow.glob.median)} after a create.${
      createRow && createRow.glob.median - listingRow.glob.median > 1.5 * quietRow.glob.median
        ? ` The rest of a glob after a change (${ms(createRow.glob.median - listingRow.glob.median)} after a create, against ${ms(quietRow.glob.median)} for a whole quiet glob) is glob's own work, twice over: the optimistic search of the listing as it was (run while the sync is in flight, and discarded when the sync brings the change), then the search of the new listing (whose index by extension the live tree kept up to date).`
        : ""
    }${create?.change && create.change.median > 0.3 ? ` Creating a file costs ${ms(create.change.median)} on this disk by itself (a new inode).` : ""}${theirRows.length > 0 ? ` Changes by another process: ${theirRows.map((row) => ms(row.glob.median)).join(", ")} for the glob after the acknowledgement (create, modify, delete).` : ""} ${missedAll === 0 ? "No answer missed a change." : `**${missedAll} answers missed the change just made.**`}`,
  );

  // 3 and 4.
  if (!large) {
    out.push("", "**Large tree**: skipped (`FRESHFS_BENCH_LIVE_FILES=0`).");
  } else {
    const l = large;
    const heapGrowth = l.after.heap - l.before.heap;
    const rssGrowth = l.after.rss - l.before.rss;
    const fitsBytes = l.stats.bytes <= l.maxBytes;
    const fitsWatches = l.stats.watches <= l.maxWatches;
    const perEntry = l.stats.entries > 0 ? l.stats.bytes / l.stats.entries : 0;
    const projected = perEntry * 1_010_000;
    const wasLive = l.became.liveAfterMs !== undefined;
    const perDirMs = wasLive ? (l.became.liveAfterMs as number) / Math.max(1, l.stats.watches) : 0;
    const outsideGrowth = l.after.outsideHeap - l.before.outsideHeap;
    const rssPerDir = outsideGrowth / Math.max(1, l.stats.watches);
    const perDirRss =
      rssPerDir > 0
        ? `${(rssPerDir / 1024).toFixed(1)} KiB of RSS outside the main heap`
        : "no RSS outside the main heap measurable";
    out.push(
      "",
      `**A generated tree of ${count(l.files)} files** of a few lines (${count(l.dirs)} directories of 100, one file in 100 a \`.ts\`; built in ${(l.buildMs / 1000).toFixed(1)} s, removed in ${(l.removeMs / 1000).toFixed(1)} s):`,
      "",
      "| | |",
      "|---|---|",
      `| plain walk (\`forceRescan\`, not stored) | ${formatTiming(l.walk)} |`,
      `| first call with \`watch: true\` (the walk, its directories recorded, the watches asked for) | ${ms(l.became.firstMs)} |`,
      `| from then until a call answers \`live\` (watches set up and confirmed by the watcher's thread) | ${wasLive ? ms(l.became.liveAfterMs as number) : `never: ${l.became.reason}`} |`,
      `| warm live glob \`${l.pattern}\` (${count(l.matches)} matches) | ${l.live ? formatTiming(l.live) : "not measured (not live)"} |`,
      `| warm TTL-cache glob, same pattern | ${l.ttl ? formatTiming(l.ttl) : "not measured"}${l.ttlDefaultHolds === false ? " (the TTL cache's default budget, 64 MiB `FS_SCAN_CACHE_MAX_BYTES`, does not keep this listing: every call walked; raised to 2 GiB for this row)" : ""} |`,
      `| a file created, then the glob (single operations) | ${l.changeGlob ? `${ms(l.changeGlob.median)} median, ${ms(l.changeGlob.p90)} p90, ${ms(l.changeGlob.max)} slowest (${l.changeGlob.n} changes)` : "not measured"} |`,
      `| a file created, then the listing alone (\`liveTrees.query\`, no glob) | ${l.changeListing ? `${ms(l.changeListing.median)} median, ${ms(l.changeListing.p90)} p90` : "not measured"}${l.changeMissed > 0 ? ` (**${l.changeMissed} answers missed the change**)` : ""} |`,
      `| listed / watched (\`liveTrees.stats\`) | ${count(l.stats.entries)} entries, ${count(l.stats.watches)} directories |`,
      `| the budget's estimate (\`liveTrees.stats.bytes\`) | ${mib(l.stats.bytes)} (${perEntry.toFixed(0)} bytes an entry) |`,
      `| heap + ArrayBuffers after a GC: before → with the live tree | ${mib(l.before.heap)} → ${mib(l.after.heap)} (**${grew(heapGrowth)}**, ${l.stats.entries > 0 ? (heapGrowth / l.stats.entries).toFixed(0) : "—"} bytes an entry) |`,
      `| RSS: before → with the live tree | ${mib(l.before.rss)} → ${mib(l.after.rss)} (${grew(rssGrowth)}; outside the main heap ${grew(outsideGrowth)}) |`,
      `| budgets (\`FS_LIVE_MAX_BYTES\`, \`FS_LIVE_MAX_WATCHES\`) | ${mib(l.maxBytes)} (${((100 * l.stats.bytes) / l.maxBytes).toFixed(0)}% used); ${count(l.maxWatches)} watches (${((100 * l.stats.watches) / Math.max(1, l.maxWatches)).toFixed(1)}% used) |`,
      `| per watched directory | ${wasLive ? `${formatUs(perDirMs * 1000)} of setup` : "—"}; ${perDirRss} |`,
      "",
      `Walk: median of ${l.walk.runs} ${l.walk.runs === 1 ? "run" : "runs"}, after the live tree was measured (page cache warm alike). Warm globs: ${l.live ? `median of ${l.live.runs} runs, live and TTL interleaved` : "not measured"}. Memory: \`process.memoryUsage()\` after three full GCs (\`test/helpers/heap.ts\`), before the first call and once live; the watcher's thread has a heap of its own, in the RSS but not in the heap figures, and the kernel's memory for the watches is in neither.`,
    );
    if (l.index) out.push("", ...indexTable(l.index, l.files));
    if (l.notLive + l.notLiveChange > 0) {
      out.push(
        "",
        `**Not \`live\`: ${l.notLive} of the warm globs, ${l.notLiveChange} of the globs after a change** (they answered ${l.notLiveWhy.map((why) => `\`${why}\``).join(", ")}).`,
      );
    }
    reading.push(
      `The ${count(l.files)}-file tree: a plain walk takes ${ms(l.walk.median / 1000)}, the first \`watch: true\` call ${ms(l.became.firstMs)}; the tree ${wasLive ? `is live ${ms(l.became.liveAfterMs as number)} later, ${formatUs(perDirMs * 1000)} a directory (watch, \`lstat\`, \`readdir\` and digest on the watcher's thread, confirmed on the main thread)` : `**never became live**: ${l.became.reason}`}.${l.live && l.ttl ? ` A warm live glob of \`${l.pattern}\` (${count(l.matches)} matches) takes ${formatUs(l.live.median)}, ${times(l.live.median / l.ttl.median)} the TTL cache's${l.ttlDefaultHolds === false ? ` (with the TTL cache's byte budget raised: by default it does not keep a listing this size, so every TTL call walks)` : ""}.` : ""}${l.changeGlob && l.changeListing ? ` After one file is created, a glob takes ${ms(l.changeGlob.median)} at the median, where the live tree's own part (the listing with the change applied) takes ${ms(l.changeListing.median)} (${ms(listingRow.glob.median)} on the ${count(c.files)}-file tree: each call that saw a change copies the listing array)${l.live && l.changeGlob.median - l.changeListing.median > 3 * (l.live.median / 1000) ? `: the rest is glob's extension index rebuilt over all ${count(l.stats.entries)} entries for the new listing array` : ""}.` : ""}`,
      `Memory with the live tree: heap ${grew(heapGrowth)}, RSS ${grew(rssGrowth)}; the budget estimates ${mib(l.stats.bytes)} (${heapGrowth > 0 ? `${times(l.stats.bytes / heapGrowth)} the measured heap growth` : "heap growth not measurable"}). ${fitsBytes && fitsWatches ? "It fits both budgets" : "**It does not fit**"}: ${((100 * l.stats.bytes) / l.maxBytes).toFixed(0)}% of ${mib(l.maxBytes)} and ${((100 * l.stats.watches) / Math.max(1, l.maxWatches)).toFixed(1)}% of ${count(l.maxWatches)} watches (half of \`max_user_watches\`).${l.files < 1_000_000 ? ` At ${perEntry.toFixed(0)} bytes an entry, a 1M-file listing (1,010,000 entries with its directories) would be estimated at ${mib(projected)}: ${projected <= l.maxBytes ? "within" : "over"} the byte budget.` : ""} A watched directory costs ${rssPerDir > 0 ? `${(rssPerDir / 1024).toFixed(1)} KiB of RSS outside the main heap (the watcher thread's \`FSWatcher\`s and libuv's handles, with allocator noise)` : "no RSS outside the main heap that this run could measure"}, besides the kernel's memory for the inotify watch.`,
    );
  }
  if (large?.index) reading.push(indexReading(large.index, large.files));
  const unsettled = [globs.became, changes.became, large?.became].filter(
    (b): b is BecameLive => b !== undefined && b.liveAfterMs === undefined,
  );
  if (unsettled.length > 0) {
    reading.push(
      `**${unsettled.length} of the trees never became live**: ${unsettled.map((b) => b.reason).join("; ")}.`,
    );
  }
  return {
    heading: "Live trees (`bench/live.ts`)",
    method: METHOD,
    body: out.join("\n"),
    charts,
    reading,
    missing: globs.rgMissing ? ["`rg`"] : [],
  };
}

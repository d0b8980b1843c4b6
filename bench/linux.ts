/**
 * grep on the Linux kernel against rg (issue 15), as ripgrep's own benchmark suite measures it:
 * its nine Linux patterns on Debian's linux-source-6.1 as a git repository (`bench/.linux`,
 * built by `bench/make-linux-corpus.sh`), three ways, each beside rg in the same run:
 * the CLI as a process (wall time and peak RSS, Node's start included) against rg as one; the
 * library in this process cold (the listing walked every call) and warm (the live tree). Every
 * way's matching lines are compared with rg's. Then the content index: what it holds, and what one
 * changed file costs the next grep (the file restored after). `--quick` runs it all on a small
 * generated tree.
 */
import { execFile, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import * as lib from "../src/index.js";
import { liveTrees } from "../src/live/registry.js";
import { measureRestart, type RestartResult, restartReport, stopDaemon } from "./daemon-restart.js";
import type { BarGroup, Chart } from "./lib/chart-types.js";
import { type SummedIndexStats, sumIndexStats } from "./lib/index-stats.js";
import {
  type Latencies,
  latencies,
  quantile,
  sample,
  summarize,
  type Timing,
  times,
} from "./lib/measure.js";
import { peer } from "./lib/peers.js";
import { loadPiNatives, type PiGrep } from "./lib/pi-natives.js";
import type { SuiteResult } from "./lib/report.js";

export interface LinuxBenchOptions {
  quick: boolean;
}

/** Where `npm run bench -- linux` builds the kernel tree (gitignored). */
export const LINUX_CORPUS_DIR = fileURLToPath(new URL("./.linux", import.meta.url));

const repo = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(repo, "dist", "cli", "main.js");
/**
 * The command a shell runs (what npm links): on Linux x64 the native relay asks the daemon, and
 * runs Node's `dist/cli/main.js` itself when the daemon cannot answer (or FRESHFS_DAEMON=0).
 */
const FRESHFS = join(repo, "bin", "freshfs");
const GNU_TIME = "/usr/bin/time";
/** The no-literal row prints most; this is far above it, and still a bound. */
const MAX_OUTPUT = 1 << 30;
/** The no-literal row takes over a minute on the CLI today: a default timeout would cut it. */
const TIMEOUT_MS = 600_000;
/**
 * rg has no file-size bound; freshfs skips files over 16 MiB by default, and the tree has one
 * (a 24 MB register header). Raised so both search the same files; memory stays bounded by the
 * largest file, since freshfs reads each file whole.
 */
const MAX_FILE_SIZE = 2 ** 30;

const HEADING = "grep on the Linux kernel, against rg (`bench/linux.ts`)";

interface Row {
  /** As ripgrep's benchmarks name it: the flags, then the pattern. */
  readonly label: string;
  readonly pattern: string;
  readonly ignoreCase: boolean;
  readonly word: boolean;
  /** The pattern has a literal every match contains (the issue's "literal-bearing" rows). */
  readonly literal: boolean;
}

const ALTERNATION = "ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT";
const NO_LITERAL = "\\w{5}\\s+\\w{5}\\s+\\w{5}\\s+\\w{5}\\s+\\w{5}";

function row(pattern: string, flag: "" | "-i" | "-w", extra: { literal?: boolean } = {}): Row {
  return {
    label: flag === "" ? pattern : `${flag} ${pattern}`,
    pattern,
    ignoreCase: flag === "-i",
    word: flag === "-w",
    literal: extra.literal ?? true,
  };
}

/** ripgrep's benchmark suite's Linux patterns (benchsuite: linux_*), in its order. */
const ROWS: readonly Row[] = [
  row("PM_RESUME", ""),
  row("PM_RESUME", "-i"),
  row("[A-Z]+_RESUME", ""),
  row("PM_RESUME", "-w"),
  row("\\p{Greek}", "", { literal: false }),
  row("\\wAh", ""),
  row(NO_LITERAL, "", { literal: false }),
  row(ALTERNATION, ""),
  row(ALTERNATION, "-i"),
];

/** The rows an in-memory index can answer from its postings alone (the issue's 10× target). */
const INDEXABLE = new Set([
  "PM_RESUME",
  "-i PM_RESUME",
  "-w PM_RESUME",
  ALTERNATION,
  `-i ${ALTERNATION}`,
]);

const WAYS = ["cli", "daemon", "cold", "warm"] as const;
type Way = (typeof WAYS)[number];
const WAY_NAMES: Record<Way, string> = {
  cli: "CLI",
  daemon: "CLI via daemon",
  cold: "library cold",
  warm: "library warm",
};

export async function benchLinux(options: LinuxBenchOptions): Promise<SuiteResult> {
  if (!options.quick && !existsSync(LINUX_CORPUS_DIR)) return skipped();
  ensureBuilt();
  const scratch = await mkdtemp(join(tmpdir(), "freshfs-bench-linux-"));
  try {
    const corpus = options.quick ? smallKernel(join(scratch, "tree")) : LINUX_CORPUS_DIR;
    return await measure(corpus, scratch, options);
  } finally {
    liveTrees.closeAll();
    lib.invalidateFsScanCache();
    await rm(scratch, { recursive: true, force: true });
  }
}

function skipped(): SuiteResult {
  return {
    heading: HEADING,
    method: METHOD,
    body: "**Skipped**: the kernel tree `bench/.linux` is not built. `npm run bench -- linux` builds it (with `bench/make-linux-corpus.sh`, from Debian's `linux-source-6.1` package, which it installs with apt-get when it is missing: root, a few minutes) and runs this suite; a full `npm run bench` then includes it.",
    charts: [],
    reading: [],
    missing: [],
  };
}

function progress(message: string): void {
  console.error(`bench: linux: ${message}`);
}

/**
 * The CLI is measured as it ships, from `dist/`: rebuilt first when a source file is newer than
 * its output (the library ways run the sources, and both must be the same code).
 */
function ensureBuilt(): void {
  const src = join(repo, "src");
  const stale = (readdirSync(src, { recursive: true }) as string[]).some((file) => {
    if (!file.endsWith(".ts") || file.endsWith(".d.ts")) return false;
    const out = join(repo, "dist", file.replace(/\.ts$/, ".js"));
    return !existsSync(out) || statSync(out).mtimeMs < statSync(join(src, file)).mtimeMs;
  });
  if (!stale) return;
  progress("dist/ is older than src/: building it (npm run build)…");
  const built = spawnSync("npm", ["run", "build"], {
    cwd: repo,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (built.status !== 0)
    throw new Error("npm run build failed (see above): the CLI cannot be measured");
}

/**
 * A small tree for the smoke run, with what the real one has that changes an answer: every row's
 * matches (and near misses: `PM_RESUMED` for `-w`, lower case for `-i`, a non-ASCII word
 * character for `\w`), an ignored directory and file, hidden ones, a binary file, CRLF lines and
 * a line far over 500 columns.
 */
function smallKernel(root: string): string {
  mkdirSync(root, { recursive: true });
  spawnSync("git", ["init", "-q", root], { stdio: "ignore" });
  writeFileSync(join(root, ".gitignore"), "*.o\nignored/\n");
  const body = [
    "#define PM_RESUME 2",
    "static int pm_resume(void) { return PM_RESUMED; }",
    "case DPM_RESUME: case RPM_RESUME:",
    "/* the λ-calculus, Ω */",
    "int xAh;",
    "int éAh;",
    "alpha bravo delta gamma omega",
    "émile bravo delta gamma omega",
    "#define ERR_SYS 1 /* err_sys, PME_TURN_OFF */",
    "LINK_REQ_RST cfg_bme_evt",
    `/* ${"x".repeat(700)} PM_RESUME */`,
    "nothing to see here",
  ].join("\n");
  for (let d = 0; d < 10; d++) {
    const dir = join(root, "drivers", `dev${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 20; f++) writeFileSync(join(dir, `pm${f}.c`), `${body}\n`);
  }
  writeFileSync(join(root, "drivers", "crlf.c"), "a PM_RESUME\r\nERR_SYS\r\n");
  writeFileSync(join(root, "drivers", "fw.bin"), `\0\0${body}\n`);
  writeFileSync(join(root, "drivers", "pm.o"), `${body}\n`);
  writeFileSync(join(root, ".hidden.c"), `${body}\n`);
  for (const dir of ["ignored", ".hidden"]) {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, "pm.c"), `${body}\n`);
  }
  return root;
}

// ---------------------------------------------------------------------------------------------
// Processes

interface ProcessRun {
  readonly status: number;
  readonly stdout: Buffer;
  readonly stderr: string;
  /** Peak resident set size in KiB (GNU time's %M), when GNU time is there to say. */
  readonly peakKb: number | undefined;
}

/** GNU time, if this machine has it (macOS's /usr/bin/time has no -f). */
function gnuTime(): string | undefined {
  const probe = spawnSync(GNU_TIME, ["-f", "%M", process.execPath, "-e", ""], { encoding: "utf8" });
  return probe.status === 0 && /^\d+\s*$/.test(probe.stderr) ? GNU_TIME : undefined;
}

/**
 * Runs a program to its end, its output on a pipe read in full (as an agent reads a tool's), and
 * under GNU time when `rssFile` is given: time waits for the child and reads its peak RSS from the
 * kernel (`wait4`), which Node cannot. Both sides are wrapped alike, so time's own fork and exec
 * (about a millisecond) lands on both. Any exit status is an answer, returned; only a failure to
 * run (or an output over the bound) is thrown.
 */
function runProcess(
  command: string,
  args: readonly string[],
  cwd: string,
  rssFile: string | undefined,
  env: NodeJS.ProcessEnv = NO_DAEMON,
): Promise<ProcessRun> {
  const [file, argv] =
    rssFile === undefined
      ? [command, [...args]]
      : [GNU_TIME, ["-f", "%M", "-o", rssFile, command, ...args]];
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      argv,
      { cwd, encoding: "buffer", maxBuffer: MAX_OUTPUT, env },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (error && typeof code !== "number") {
          reject(error);
          return;
        }
        resolve({
          status: typeof code === "number" ? code : 0,
          stdout,
          stderr: stderr.toString("utf8"),
          peakKb: rssFile === undefined ? undefined : peakKb(rssFile),
        });
      },
    );
    // rg given a path never reads its input; closed, so that neither could wait on it.
    child.stdin?.on("error", () => {});
    child.stdin?.end();
  });
}

/** The CLI column: a search in its own process, as rg's is, not through a daemon. */
const NO_DAEMON: NodeJS.ProcessEnv = { ...process.env, FRESHFS_DAEMON: "0" };

/**
 * The CLI through a daemon of the benchmark's own (its runtime directory in the scratch
 * directory, stopped at the end), warmed up before it is timed as the library's live tree is.
 */
function daemonEnv(scratch: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FRESHFS_DAEMON: "1",
    FRESHFS_RUNTIME_DIR: join(scratch, "run"),
    FRESHFS_CACHE_DIR: join(scratch, "cache"),
  };
}

interface DaemonRoot {
  readonly status: string;
  readonly indexedFiles: number;
}

/** The daemon's view of `root`, from `freshfs daemon status --json`. */
function daemonRoot(root: string, env: NodeJS.ProcessEnv): DaemonRoot | undefined {
  const run = spawnSync(process.execPath, [CLI, "daemon", "status", "--json"], {
    env,
    encoding: "utf8",
  });
  if (run.status !== 0) return undefined;
  const roots = (JSON.parse(run.stdout) as { roots: (DaemonRoot & { root: string })[] }).roots;
  return roots.find((one) => one.root === realpathSync(root));
}

interface DaemonWarm {
  readonly calls: number;
  readonly ms: number;
  readonly status: string | undefined;
  /** Files in the daemon's content index when the runs began. */
  readonly indexedFiles: number;
}

/**
 * Calls the CLI through the daemon until its tree is live and its content index holds as many
 * files as this process's own (the same tree, the same budget): an index still building answers
 * slower, and would measure the build, not the daemon.
 */
async function warmDaemon(
  root: string,
  env: NodeJS.ProcessEnv,
  indexedFiles: number,
  timeoutMs: number,
): Promise<DaemonWarm> {
  const started = performance.now();
  const first = ROWS[0] as Row;
  let calls = 0;
  for (;;) {
    await runProcess(FRESHFS, cliArgs(first.pattern, first), root, undefined, env);
    calls++;
    const seen = daemonRoot(root, env);
    if (seen?.status === "live" && seen.indexedFiles >= indexedFiles) break;
    if (performance.now() - started > timeoutMs) break;
    await sleep(1000);
  }
  const seen = daemonRoot(root, env);
  return {
    calls,
    ms: performance.now() - started,
    status: seen?.status,
    indexedFiles: seen?.indexedFiles ?? 0,
  };
}

/** time writes "Command exited with non-zero status N" first when the status is not 0. */
function peakKb(file: string): number | undefined {
  const last = readFileSync(file, "utf8").trim().split("\n").pop() ?? "";
  return /^\d+$/.test(last) ? Number(last) : undefined;
}

/** rg's output as the CLI prints it (`--sort path` aside, which would make rg single-threaded). */
function rgArgs(pattern: string, row: Row): string[] {
  return [
    "-n",
    "--no-heading",
    "--with-filename",
    "--color",
    "never",
    ...flags(row),
    "-e",
    pattern,
    ".",
  ];
}

function cliArgs(pattern: string, row: Row): string[] {
  return [
    "grep",
    ...flags(row),
    "--timeout",
    String(TIMEOUT_MS),
    "--max-filesize",
    String(MAX_FILE_SIZE),
    "--",
    pattern,
    ".",
  ];
}

function flags(row: Row): string[] {
  return [...(row.ignoreCase ? ["-i"] : []), ...(row.word ? ["-w"] : [])];
}

// ---------------------------------------------------------------------------------------------
// Output checks

/** Matching lines as `path:line:text`, a set (the order is rg's threads', not an answer). */
function printedLines(stdout: Buffer): Set<string> {
  const lines = stdout.toString("utf8").split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return new Set(lines.map((line) => (line.startsWith("./") ? line.slice(2) : line)));
}

function resultLines(result: lib.GrepResult): Set<string> {
  return new Set(result.lines.filter((l) => l.match).map((l) => `${l.path}:${l.line}:${l.text}`));
}

interface Check {
  readonly onlyRg: number;
  readonly onlyFreshfs: number;
  /** Why the answer is not the whole one, whatever it holds: a timeout, files skipped, an error. */
  readonly notes: readonly string[];
}

function compare(
  reference: Set<string>,
  ours: Set<string>,
  notes: readonly string[],
  where: string,
): Check {
  const onlyRg = [...reference].filter((line) => !ours.has(line)).sort();
  const onlyFreshfs = [...ours].filter((line) => !reference.has(line)).sort();
  const clip = (line: string) => (line.length > 160 ? `${line.slice(0, 160)}…` : line);
  for (const [side, lines] of [
    ["only in rg", onlyRg],
    ["only in freshfs", onlyFreshfs],
  ] as const) {
    if (lines.length === 0) continue;
    progress(`${where}: ${lines.length} line(s) ${side}, e.g.`);
    for (const line of lines.slice(0, 3)) console.error(`    ${clip(line)}`);
  }
  return { onlyRg: onlyRg.length, onlyFreshfs: onlyFreshfs.length, notes };
}

function libraryNotes(result: lib.GrepResult): string[] {
  const notes: string[] = [];
  if (result.partial) notes.push("partial (timeout)");
  const { timedOut, tooLarge, failed } = result.skipped;
  if (timedOut.length > 0) notes.push(`${timedOut.length} file(s) past the per-file timeout`);
  if (tooLarge.length > 0) notes.push(`${tooLarge.length} file(s) over the size bound`);
  if (failed.length > 0) notes.push(`regex failed on ${failed.length} file(s)`);
  return notes;
}

/** The CLI says on stderr what it skipped (one line a file) and why it exits 2 (its last line). */
function cliNotes(run: ProcessRun): string[] {
  const lines = run.stderr.trim().split("\n");
  const skipped = lines.filter((line) => line.includes(": skipped, ")).length;
  const notes = skipped > 0 ? [`${skipped} file(s) skipped`] : [];
  if (run.status !== 0 && run.status !== 1) {
    const last = lines[lines.length - 1] ?? "";
    notes.push(`exit ${run.status}: ${last.length > 120 ? `${last.slice(0, 120)}…` : last}`);
  }
  return notes;
}

function verdict(check: Check | undefined): string {
  if (check === undefined) return "not compared";
  const lines =
    check.onlyRg === 0 && check.onlyFreshfs === 0
      ? "identical"
      : `${check.onlyRg} only in rg, ${check.onlyFreshfs} only in freshfs`;
  return check.notes.length === 0 ? lines : `${lines} (${check.notes.join("; ")})`;
}

// ---------------------------------------------------------------------------------------------
// The content index: what it holds, and what one changed file costs

/** The content indexes of a root (one per live tree grep searched there), added up. */
type IndexSummary = SummedIndexStats & { readonly maxBytes: number };

function indexSummary(root: string): IndexSummary | undefined {
  const stats = lib.contentIndexStats(root);
  if (stats.length === 0) return undefined;
  return {
    ...sumIndexStats(stats),
    maxBytes: lib.contentIndexPolicy().maxBytes,
  };
}

const median = (values: readonly number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/** Edits timed (each after `EDIT_WARMUP` untimed ones), alternating the two tokens. */
const EDITS = 20;
const EDIT_WARMUP = 2;
const TOKENS = ["FRESHFS_BENCH_TOKEN_0", "FRESHFS_BENCH_TOKEN_1"] as const;
/** The warm literal row, timed right after an edit and with the tree quiet. */
const EDIT_LITERAL = "PM_RESUME";

interface EditResult {
  /** The file edited, relative to the root, and its size. */
  readonly file: string;
  readonly bytes: number;
  readonly write: Latencies;
  /** The grep for the token just written: its own time, and with the write. */
  readonly grep: Latencies;
  readonly total: Latencies;
  /** Files it read (median and most), of the files it searched. */
  readonly filesRead: { readonly median: number; readonly max: number };
  readonly filesSearched: number;
  /** From the end of that grep until the index had the file again (`waitForContentIndex`). */
  readonly reindex: Latencies;
  /** The warm literal grep right after an edit, and with the tree quiet (the index settled). */
  readonly literalAfter: Latencies;
  readonly literalQuiet: Latencies;
  readonly literalReadAfter: number;
  readonly literalReadQuiet: number;
  /** Wrong answers, said in full (empty: none). */
  readonly failures: readonly string[];
  /** The file has its original bytes again; the corpus's `git status` is clean (undefined: not a checkout). */
  readonly restored: boolean;
  readonly gitClean: boolean | undefined;
}

/** The first `.c` file of at most 64 KiB under `drivers/`, in name order (hidden names skipped). */
function firstDriverFile(root: string): string | undefined {
  const visit = (rel: string): string | undefined => {
    const names = readdirSync(join(root, rel), { withFileTypes: true })
      .filter((d) => !d.name.startsWith("."))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of names) {
      const path = `${rel}/${d.name}`;
      if (d.isFile() && d.name.endsWith(".c") && statSync(join(root, path)).size <= 65_536)
        return path;
      if (d.isDirectory()) {
        const found = visit(path);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  return existsSync(join(root, "drivers")) ? visit("drivers") : undefined;
}

function git(root: string, args: readonly string[]): { status: number | null; stdout: string } {
  const run = spawnSync("git", ["-C", root, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
  return { status: run.status, stdout: run.stdout ?? "" };
}

/** The tree is a git checkout with a commit (the kernel's; the quick tree has none). */
function isCheckout(root: string): boolean {
  return git(root, ["rev-parse", "--verify", "-q", "HEAD"]).status === 0;
}

function matchedFiles(result: lib.GrepResult): Set<string> {
  return new Set(result.lines.filter((l) => l.match).map((l) => l.path));
}

function loudly(failures: string[], message: string): void {
  failures.push(message);
  console.error(`bench: linux: FAILED: ${message}`);
  process.exitCode = 1;
}

/**
 * One file of the tree rewritten (its bytes, then a line with a token no other file has), then
 * the grep for that token through the live tree, which must find that file and no other; the
 * token of the edit before must be gone. Then the warm literal row right after an edit and with
 * the tree quiet. The file gets its original bytes back whatever happens.
 */
async function measureEdits(root: string, warm: lib.GrepOptions): Promise<EditResult | undefined> {
  const checkout = isCheckout(root);
  const rel = firstDriverFile(root);
  if (rel === undefined) {
    progress("edits: no small .c file under drivers/: not measured");
    return undefined;
  }
  const file = join(root, rel);
  // A run interrupted before its restore leaves the file edited: the checkout gives it back.
  if (checkout && git(root, ["status", "--porcelain", "--", rel]).stdout.trim() !== "") {
    progress(`edits: ${rel} differs from the checkout (an interrupted run?): restoring it`);
    git(root, ["checkout", "--", rel]);
  }
  const original = readFileSync(file);
  if (original.includes("FRESHFS_BENCH_TOKEN")) {
    throw new Error(`${file} already holds a FRESHFS_BENCH_TOKEN line: restore it first`);
  }
  const separator = original.length === 0 || original[original.length - 1] === 0x0a ? "" : "\n";
  const edited = (token: string) =>
    Buffer.concat([original, Buffer.from(`${separator}${token}\n`)]);
  const failures: string[] = [];
  const samples = {
    write: [] as number[],
    grep: [] as number[],
    total: [] as number[],
    read: [] as number[],
    reindex: [] as number[],
    after: [] as number[],
    quiet: [] as number[],
    readAfter: [] as number[],
    readQuiet: [] as number[],
  };
  let filesSearched = 0;
  progress(`edits: ${rel} (${original.length} bytes), ${EDITS} edits…`);
  try {
    await lib.waitForContentIndex(root);
    const baseline = resultLines(await lib.grep(EDIT_LITERAL, warm));
    const sameAsBaseline = (result: lib.GrepResult, when: string) => {
      const lines = resultLines(result);
      const same = lines.size === baseline.size && [...lines].every((l) => baseline.has(l));
      if (!same) {
        loudly(
          failures,
          `${EDIT_LITERAL} ${when}: ${lines.size} matching lines, not the ${baseline.size} of before the edits`,
        );
      }
    };
    // 1. Edit, then the grep for the token just written.
    for (let i = 0; i < EDIT_WARMUP + EDITS; i++) {
      const keep = i >= EDIT_WARMUP;
      const token = TOKENS[i % 2] as string;
      const gone = TOKENS[(i + 1) % 2] as string;
      const t0 = performance.now();
      writeFileSync(file, edited(token));
      const t1 = performance.now();
      const found = await lib.grep(token, warm);
      const t2 = performance.now();
      const files = matchedFiles(found);
      if (found.freshness !== "live" || files.size !== 1 || !files.has(rel)) {
        loudly(
          failures,
          `edit ${i}: grep ${token} answered ${found.freshness}, files [${[...files].slice(0, 5).join(", ")}]${files.size > 5 ? "…" : ""}, not [${rel}]`,
        );
      }
      await lib.waitForContentIndex(root);
      const t3 = performance.now();
      const stale = matchedFiles(await lib.grep(gone, warm));
      if (stale.size > 0) {
        loudly(
          failures,
          `edit ${i}: ${gone}, written over, still found in [${[...stale].join(", ")}]`,
        );
      }
      if (!keep) continue;
      samples.write.push(t1 - t0);
      samples.grep.push(t2 - t1);
      samples.total.push(t2 - t0);
      samples.read.push(found.filesRead);
      samples.reindex.push(t3 - t2);
      filesSearched = found.filesSearched;
    }
    // 2. The warm literal row right after an edit, then once the index has the file again.
    for (let i = 0; i < EDIT_WARMUP + EDITS; i++) {
      const keep = i >= EDIT_WARMUP;
      writeFileSync(file, edited(TOKENS[i % 2] as string));
      const t0 = performance.now();
      const after = await lib.grep(EDIT_LITERAL, warm);
      const t1 = performance.now();
      sameAsBaseline(after, `right after edit ${i}`);
      await lib.waitForContentIndex(root);
      const t2 = performance.now();
      const quiet = await lib.grep(EDIT_LITERAL, warm);
      const t3 = performance.now();
      sameAsBaseline(quiet, `after edit ${i}, the tree quiet`);
      if (!keep) continue;
      samples.after.push(t1 - t0);
      samples.quiet.push(t3 - t2);
      samples.readAfter.push(after.filesRead);
      samples.readQuiet.push(quiet.filesRead);
    }
  } finally {
    writeFileSync(file, original);
  }
  const restored = readFileSync(file).equals(original);
  let gitClean: boolean | undefined;
  if (checkout) {
    if (git(root, ["status", "--porcelain", "--", rel]).stdout.trim() !== "") {
      git(root, ["checkout", "--", rel]);
    }
    gitClean = git(root, ["status", "--porcelain"]).stdout.trim() === "";
  }
  if (!restored) loudly(failures, `${rel} does not have its original bytes back`);
  if (gitClean === false) loudly(failures, "the corpus's `git status --porcelain` is not empty");
  // The restore is a change too: the live tree and its index settle before anything else.
  await lib.grep(TOKENS[0], warm);
  await lib.waitForContentIndex(root);
  return {
    file: rel,
    bytes: original.length,
    write: latencies(samples.write),
    grep: latencies(samples.grep),
    total: latencies(samples.total),
    filesRead: { median: median(samples.read), max: Math.max(0, ...samples.read) },
    filesSearched,
    reindex: latencies(samples.reindex),
    literalAfter: latencies(samples.after),
    literalQuiet: latencies(samples.quiet),
    literalReadAfter: median(samples.readAfter),
    literalReadQuiet: median(samples.readQuiet),
    failures,
    restored,
    gitClean,
  };
}
// ---------------------------------------------------------------------------------------------
// Measuring

interface RowResult {
  readonly row: Row;
  /** Why freshfs rejected the pattern (then only rg is measured). */
  readonly rejected: string | undefined;
  /** Per way, and rg's: beside the first three (`rg`) and beside the daemon (`rgBesideDaemon`). */
  readonly timing: Partial<Record<Way | "pi" | "rg" | "rgBesideDaemon", Timing>>;
  /** Peak RSS over the row's runs (warm-up included), KiB. */
  readonly peakKb: Partial<Record<"cli" | "daemon" | "rg", number>>;
  readonly checks: Partial<Record<Way, Check>>;
  /** pi-natives' lines against rg's (a peer's, so apart from freshfs's ways). */
  readonly piCheck: Check | undefined;
  readonly freshness: string | undefined;
  readonly filesSearched: number | undefined;
  /** Files the last warm run read (the rest the content index ruled out). */
  readonly warmFilesRead: number | undefined;
  /** The row could not be measured at all (a way failed to run): why. */
  readonly error: string | undefined;
}

/** `FRESHFS_BENCH_LINUX_RUNS`, else 5 (quick: 1). */
function runCount(quick: boolean): number {
  if (quick) return 1;
  const raw = process.env.FRESHFS_BENCH_LINUX_RUNS?.trim();
  if (!raw) return 5;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`FRESHFS_BENCH_LINUX_RUNS is ${raw}: a whole number >= 1`);
  }
  return value;
}

async function measure(
  root: string,
  scratch: string,
  options: LinuxBenchOptions,
): Promise<SuiteResult> {
  const runs = runCount(options.quick);
  const rg = peer("rg");
  const time = gnuTime();
  const rssFile = time === undefined ? undefined : join(scratch, "rss");
  // rg's defaults in this tree: ignore files honoured, hidden files skipped. The library's
  // `hidden` defaults to true (the CLI's --hidden to off), so it is turned off here: all sides
  // search the same files.
  const base: lib.GrepOptions = {
    path: root,
    hidden: false,
    maxColumns: Number.POSITIVE_INFINITY,
    maxFileSize: MAX_FILE_SIZE,
    timeoutMs: TIMEOUT_MS,
  };
  const cold: lib.GrepOptions = { ...base, cache: false };
  const warm: lib.GrepOptions = { ...base, cache: true, watch: true };

  const rgFiles = rg.command
    ? printedLines((await runProcess(rg.command, ["--files", "."], root, undefined)).stdout).size
    : undefined;
  const live = await untilLive((ROWS[0] as Row).pattern, warm, options.quick ? 20_000 : 300_000);
  progress(
    live.freshness === "live"
      ? `the live tree answers after ${live.calls} call(s), ${(live.ms / 1000).toFixed(1)} s`
      : `the tree did not go live (${live.freshness}${live.unwatched ? `: ${live.unwatched}` : ""}); warm runs are what it answers instead`,
  );
  const waitStarted = performance.now();
  await lib.waitForContentIndex(live.root);
  const indexWaitMs = performance.now() - waitStarted;
  progress(`content index ready after ${indexWaitMs.toFixed(0)} ms`);
  const daemon = daemonEnv(scratch);
  mkdirSync(join(scratch, "run"), { mode: 0o700 });
  const ownIndex = lib.contentIndexStats(live.root).reduce((sum, one) => sum + one.files, 0);
  const daemonWarm = await warmDaemon(root, daemon, ownIndex, options.quick ? 20_000 : 300_000);
  progress(
    `the daemon's tree is ${daemonWarm.status ?? "not kept"} after ${daemonWarm.calls} CLI call(s), ${(daemonWarm.ms / 1000).toFixed(1)} s`,
  );

  // The seed's own core, in this process as the library is: not in the quick run (it is a
  // download of 180 MB).
  const loaded = options.quick ? { missing: "not in the quick run" } : await loadPiNatives();
  const pi = "grep" in loaded ? loaded.grep : undefined;
  progress(
    "grep" in loaded ? `pi-natives ${loaded.version} loaded` : `pi-natives: ${loaded.missing}`,
  );
  const results: RowResult[] = [];
  try {
    for (const row of ROWS) {
      progress(`${row.label}…`);
      const setup = { rg: rg.command, rssFile, runs, cold, warm, daemon, pi };
      results.push(await measureRow(row, root, setup));
    }
  } finally {
    // Stopping writes its snapshot (docs/daemon.md), which the restarts below load.
    await stopDaemon(daemon);
  }
  let restart: RestartResult | undefined;
  if (rg.command) {
    progress("the daemon restarted with its snapshot…");
    restart = measureRestart(root, daemon, options.quick ? 1 : 3);
    progress(`restarts: ${JSON.stringify(restart)}`);
  }
  // After the warm runs: what the index holds, then what one changed file costs.
  const index = indexSummary(live.root);
  progress(`content index: ${JSON.stringify(index)}`);
  const edits = live.freshness === "live" ? await measureEdits(live.root, warm) : undefined;
  if (edits) progress(`edits: ${JSON.stringify(edits)}`);

  const raw = {
    root,
    runs,
    rgFiles,
    peakRss: time === undefined ? "not measured (no GNU time)" : "GNU time %M, KiB",
    live,
    contentIndex: { waitMs: indexWaitMs, stats: index, perTree: lib.contentIndexStats(live.root) },
    edits,
    rows: results.map((r) => ({
      label: r.row.label,
      rejected: r.rejected,
      microseconds: r.timing,
      peakKb: r.peakKb,
      checks: r.checks,
      piCheck: r.piCheck,
      freshness: r.freshness,
      filesSearched: r.filesSearched,
      warmFilesRead: r.warmFilesRead,
      error: r.error,
    })),
  };
  console.error(`bench: linux: raw numbers (JSON): ${JSON.stringify(raw)}`);
  return report(results, {
    runs,
    quick: options.quick,
    rgMissing: rg.command === undefined,
    rss: time !== undefined,
    rgFiles,
    live,
    daemonWarm,
    restart,
    indexWaitMs,
    index,
    edits,
    pi: "grep" in loaded ? `pi-natives ${loaded.version}` : undefined,
  });
}

interface BecameLive {
  readonly root: string;
  readonly freshness: string;
  readonly unwatched: string | undefined;
  readonly calls: number;
  readonly ms: number;
}

/** Warm means the live tree: called until it answers `live` (or cannot), before any is timed. */
async function untilLive(
  pattern: string,
  options: lib.GrepOptions,
  timeoutMs: number,
): Promise<BecameLive> {
  const started = performance.now();
  let calls = 0;
  let last: lib.GrepResult;
  do {
    if (calls > 0) await sleep(100);
    last = await lib.grep(pattern, options);
    calls++;
  } while (
    last.freshness !== "live" &&
    last.unwatched === undefined &&
    performance.now() - started < timeoutMs
  );
  // A few more, so the warm rows start from a settled tree and a warm page cache.
  for (let i = 0; i < 2; i++) last = await lib.grep(pattern, options);
  return {
    root: last.root,
    freshness: last.freshness,
    unwatched: last.unwatched,
    calls: calls + 2,
    ms: performance.now() - started,
  };
}

const BESIDE = fileURLToPath(new URL("./lib/beside.mjs", import.meta.url));

/** The CLI via daemon and rg (if any), timed from `lib/beside.mjs`; the daemon's last answer. */
function besideDaemon(
  root: string,
  setup: RowSetup,
  daemonArgs: readonly string[],
  rgArgv: readonly string[],
): { timing: Record<string, Timing>; daemon: ProcessRun } {
  const commands: Record<string, object> = {
    daemon: { file: FRESHFS, args: daemonArgs, cwd: root, env: setup.daemon },
  };
  if (setup.rg)
    commands.rgBesideDaemon = { file: setup.rg, args: rgArgv, cwd: root, env: NO_DAEMON };
  const request = JSON.stringify({ runs: setup.runs, warmup: 1, commands });
  const ran = spawnSync(process.execPath, [BESIDE, request], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (ran.status !== 0) throw new Error(`bench/lib/beside.mjs failed: ${ran.stderr}`);
  const out = JSON.parse(ran.stdout) as {
    microseconds: Record<string, number[]>;
    last: Record<string, { status: number; stdout: string; stderr: string }>;
  };
  const timing: Record<string, Timing> = {};
  for (const [name, values] of Object.entries(out.microseconds)) timing[name] = summarize(values);
  const last = out.last.daemon as { status: number; stdout: string; stderr: string };
  return {
    timing,
    daemon: {
      status: last.status,
      stdout: Buffer.from(last.stdout, "base64"),
      stderr: last.stderr,
      peakKb: undefined,
    },
  };
}

/** Whether freshfs accepts the pattern: compiled before any file is read, so a file will do. */
async function rejection(pattern: string, row: Row): Promise<string | undefined> {
  try {
    await lib.grep(pattern, {
      path: fileURLToPath(import.meta.url),
      ignoreCase: row.ignoreCase,
      word: row.word,
    });
    return undefined;
  } catch (error) {
    if (error instanceof lib.FreshfsError && error.code === "INVALID_PATTERN") return error.message;
    throw error;
  }
}

interface RowSetup {
  readonly rg: string | undefined;
  readonly rssFile: string | undefined;
  readonly runs: number;
  readonly cold: lib.GrepOptions;
  readonly warm: lib.GrepOptions;
  /** The environment of the CLI via daemon. */
  readonly daemon: NodeJS.ProcessEnv;
  /** pi-natives' grep, where it loaded. */
  readonly pi: PiGrep | undefined;
}

async function measureRow(row: Row, root: string, setup: RowSetup): Promise<RowResult> {
  const rejected = await rejection(row.pattern, row);
  const ours = rejected === undefined ? row.pattern : undefined;
  if (rejected !== undefined) progress(`freshfs rejects ${row.pattern}: ${rejected}`);
  const flagged = { ignoreCase: row.ignoreCase, word: row.word };
  const last: {
    rg?: ProcessRun;
    cli?: ProcessRun;
    daemon?: ProcessRun;
    cold?: lib.GrepResult;
    warm?: lib.GrepResult;
    pi?: string[];
  } = {};
  const peaks: { rg: number[]; cli: number[]; daemon: number[] } = { rg: [], cli: [], daemon: [] };
  const ops: Record<string, () => Promise<unknown>> = {};
  const rg = setup.rg;
  if (rg !== undefined) {
    ops.rg = async () => {
      last.rg = await runProcess(rg, rgArgs(row.pattern, row), root, setup.rssFile);
      if (last.rg.peakKb !== undefined) peaks.rg.push(last.rg.peakKb);
    };
  }
  if (ours !== undefined) {
    ops.cli = async () => {
      last.cli = await runProcess(FRESHFS, cliArgs(ours, row), root, setup.rssFile);
      if (last.cli.peakKb !== undefined) peaks.cli.push(last.cli.peakKb);
    };
    ops.cold = async () => {
      last.cold = await lib.grep(ours, { ...setup.cold, ...flagged });
    };
    ops.warm = async () => {
      last.warm = await lib.grep(ours, { ...setup.warm, ...flagged });
    };
  }
  const pi = setup.pi;
  if (pi !== undefined) {
    // Its walk does not enter a root that is a link (bench/.linux may be one).
    const real = realpathSync(root);
    ops.pi = async () => {
      last.pi = await pi(real, row.pattern, flagged);
    };
  }
  let timing: Record<string, Timing>;
  try {
    timing = await sample(ops, { runs: setup.runs, iterations: 1, warmup: 1 });
    if (ours !== undefined) {
      // The CLI via daemon beside rg alone, after the others (this process's own searches
      // would otherwise run beside the daemon's), each started by a small process
      // (`lib/beside.mjs`): a command of 100 ms cannot hide the fork of this one.
      await sleep(500);
      const beside = besideDaemon(root, setup, cliArgs(ours, row), rgArgs(row.pattern, row));
      timing = { ...timing, ...beside.timing };
      last.daemon = beside.daemon;
      const rss = await runProcess(FRESHFS, cliArgs(ours, row), root, setup.rssFile, setup.daemon);
      if (rss.peakKb !== undefined) peaks.daemon.push(rss.peakKb);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    progress(`${row.label}: not measured: ${message}`);
    return {
      row,
      rejected,
      timing: {},
      peakKb: {},
      checks: {},
      piCheck: undefined,
      freshness: undefined,
      filesSearched: undefined,
      warmFilesRead: undefined,
      error: message.split("\n")[0] ?? message,
    };
  }

  const checks: Partial<Record<Way, Check>> = {};
  let piCheck: Check | undefined;
  if (rg !== undefined && last.rg !== undefined) {
    const reference = printedLines(last.rg.stdout);
    const where = (way: Way) => `${row.label}, ${WAY_NAMES[way]}`;
    for (const way of ["cli", "daemon"] as const) {
      const run = last[way];
      if (run)
        checks[way] = compare(reference, printedLines(run.stdout), cliNotes(run), where(way));
    }
    if (last.cold) {
      checks.cold = compare(
        reference,
        resultLines(last.cold),
        libraryNotes(last.cold),
        where("cold"),
      );
    }
    if (last.warm) {
      checks.warm = compare(
        reference,
        resultLines(last.warm),
        libraryNotes(last.warm),
        where("warm"),
      );
    }
    if (last.pi) {
      piCheck = compare(reference, new Set(last.pi), [], `${row.label}, pi-natives`);
    }
  }
  const peak = (values: number[]) => (values.length === 0 ? undefined : Math.max(...values));
  const peakKb: RowResult["peakKb"] = {};
  const rgPeak = peak(peaks.rg);
  const cliPeak = peak(peaks.cli);
  const daemonPeak = peak(peaks.daemon);
  if (rgPeak !== undefined) peakKb.rg = rgPeak;
  if (cliPeak !== undefined) peakKb.cli = cliPeak;
  if (daemonPeak !== undefined) peakKb.daemon = daemonPeak;
  return {
    row,
    rejected,
    timing,
    peakKb,
    checks,
    piCheck,
    freshness: last.warm?.freshness,
    filesSearched: last.cold?.filesSearched,
    warmFilesRead: last.warm?.filesRead,
    error: undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// The report

const METHOD = `ripgrep's own benchmark suite's Linux patterns (its \`linux_*\` benchmarks), on its
corpus: the Linux kernel, Debian's \`linux-source-6.1\` as a git repository (\`bench/.linux\`,
built by \`bench/make-linux-corpus.sh\`), searched with rg's defaults there (ignore files
honoured, hidden files skipped; freshfs given \`hidden: false\`, and its 16 MiB file-size bound
raised, since rg has none, so that both search the same files). Four ways, each beside rg: **CLI**
is \`bin/freshfs grep\` (the command npm links) spawned as a process, against \`rg -n --no-heading --with-filename\`
spawned the same way, their output read in full from a pipe, wall time including each process's
start, and peak RSS as GNU time's \`%M\` reads it from the kernel (both wrapped in \`/usr/bin/time\`),
searching in its own process (\`FRESHFS_DAEMON=0\`: the native relay hands the command to Node's
\`dist/cli/main.js\` at once); **CLI via daemon** is the same command answered through the native
relay (\`native/relay/relay.c\`, which asks the daemon without starting Node) by a daemon of the
benchmark's own (\`freshfs daemon\`, docs/daemon.md), called until its tree is live
and its content index as complete as the library's before it is timed, then timed beside rg
alone, interleaved run by run, after the other ways (the benchmark's own in-process searches
would run beside the daemon's otherwise), both started by a small process of their own
(\`bench/lib/beside.mjs\`: each process the benchmark's own starts costs a fork of its several
hundred MB, tens of ms that a 100 ms command cannot hide), the client's peak RSS from one more
run under GNU time;
**library cold** is \`grep()\` in the benchmark's process with \`cache: false\` (the listing walked
every call, as the first grep of a tree in a long-lived process; the files searched on the native
core, \`native/core\`, as the CLI's are); **library warm** is \`grep()\`
with \`cache: true, watch: true\`, the live tree, warmed up before it is timed (and the content
index waited for); **pi-natives** is the seed's own core (\`@oh-my-pi/pi-natives\`, its \`grep\`,
the pinned release installed on demand into \`bench/.pi-natives\` by \`bench/lib/pi-natives.ts\`)
called in the benchmark's process, given \`hidden: false\` as rg's defaults are. It searches a file over 4 MiB only in its first 4 MiB (29 of the kernel's amdgpu register headers) and drops trailing whitespace from the lines it returns, so its lines can differ from rg's there. rg, the CLI, the
library's two ways and pi-natives are run interleaved run by run
(one untimed warm-up each first); the figures are medians. Output: each way's matching lines, as
\`path:line:text\` sets, against rg's, every way given rg's own pattern (freshfs reads rg's regex
syntax, Unicode \`\\w\` and \`\\p{Greek}\` included). After the warm runs: what the content index holds
(\`contentIndexStats\`), then the cost of one changed file: the first \`.c\` file of at most 64 KiB
under \`drivers/\` (in name order) rewritten with \`writeFileSync\` (its bytes and a line with a token
no other file holds), then the warm grep for that token, which must find that file and no other,
timed as single operations; and the warm \`PM_RESUME\` right after an edit against the same once the
index has the file again. The file gets its original bytes back at the end, and the corpus's
\`git status\` must be clean.`;

interface ReportContext {
  readonly runs: number;
  readonly quick: boolean;
  readonly rgMissing: boolean;
  readonly rss: boolean;
  readonly rgFiles: number | undefined;
  readonly live: BecameLive;
  readonly daemonWarm: DaemonWarm;
  readonly restart: RestartResult | undefined;
  readonly indexWaitMs: number;
  readonly index: IndexSummary | undefined;
  readonly edits: EditResult | undefined;
  /** pi-natives' name and version, where it ran. */
  readonly pi: string | undefined;
}

/** Two decimals, or three significant digits under a second (the quick tree's searches). */
const seconds = (timing: Timing | undefined) => {
  if (timing === undefined) return "—";
  const s = timing.median / 1e6;
  return s >= 1 ? s.toFixed(2) : String(Number(s.toPrecision(3)));
};
const mb = (kb: number | undefined) =>
  kb === undefined ? "—" : `${((kb * 1024) / 1e6).toFixed(0)} MB`;
/** A Markdown table cell: its pipes escaped, code spans kept. */
const cell = (text: string) => text.replaceAll("|", "\\|");

function ratio(ours: Timing | undefined, rg: Timing | undefined): number | undefined {
  return ours === undefined || rg === undefined ? undefined : ours.median / rg.median;
}

function shownRatio(x: number | undefined, faster: boolean): string {
  if (x === undefined) return "—";
  return faster && x < 1 ? `${times(x)} (${times(1 / x)} faster)` : times(x);
}

function outputCell(result: RowResult): string {
  if (result.error !== undefined) return "not measured";
  if (result.rejected !== undefined) return "rejected";
  if (Object.keys(result.checks).length === 0) return "not compared (no rg)";
  const verdicts = WAYS.map((way) => verdict(result.checks[way]));
  if (verdicts.every((v) => v === verdicts[0])) return verdicts[0] as string;
  return WAYS.map((way, i) => `${WAY_NAMES[way]}: ${verdicts[i]}`).join("; ");
}

function patternCell(result: RowResult): string {
  const label = `\`${result.row.label}\``;
  return result.rejected === undefined ? label : `${label} (freshfs rejects it)`;
}

function report(results: readonly RowResult[], context: ReportContext): SuiteResult {
  const out: string[] = [
    `| pattern | rg (s) | CLI (s) | CLI ÷ rg | CLI via daemon (s) | via daemon ÷ rg | library cold (s) | cold ÷ rg | library warm (s) | warm ÷ rg | pi-natives (s) | pi ÷ rg | peak RSS: CLI / via daemon / rg | output (CLI, via daemon, cold, warm) | pi-natives' output |`,
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const groups: BarGroup[] = [];
  for (const result of results) {
    const t = result.timing;
    const peaks = result.peakKb;
    const rss = context.rss
      ? `${mb(peaks.cli)} / ${mb(peaks.daemon)} / ${mb(peaks.rg)}`
      : "not measured";
    out.push(
      `| ${cell(patternCell(result))} | ${seconds(t.rg)} | ${seconds(t.cli)} | ${shownRatio(ratio(t.cli, t.rg), false)} | ${seconds(t.daemon)} | ${shownRatio(ratio(t.daemon, t.rgBesideDaemon), true)} | ${seconds(t.cold)} | ${shownRatio(ratio(t.cold, t.rg), false)} | ${seconds(t.warm)} | ${shownRatio(ratio(t.warm, t.rg), true)} | ${seconds(t.pi)} | ${shownRatio(ratio(t.pi, t.rg), false)} | ${rss} | ${cell(outputCell(result))} | ${result.piCheck ? cell(verdict(result.piCheck)) : "—"} |`,
    );
    groups.push({
      label: result.row.label,
      bars: [
        { label: "freshfs library, warm", kind: "freshfs", timing: t.warm },
        { label: "freshfs library, cold", kind: "freshfs", timing: t.cold },
        { label: "freshfs CLI via daemon", kind: "freshfs", timing: t.daemon },
        { label: "freshfs CLI (process)", kind: "freshfs", timing: t.cli },
        ...(t.pi
          ? [{ label: "pi-natives (in process)", kind: "peer" as const, timing: t.pi }]
          : []),
        { label: "rg (process)", kind: "peer", timing: t.rg },
      ],
    });
  }
  const count = (n: number) => n.toLocaleString("en-US");
  const searched = results.find((r) => r.filesSearched !== undefined)?.filesSearched;
  const notes = [
    `Seconds per search: median of ${context.runs} run${context.runs === 1 ? "" : "s"} (the chart shows the fastest and slowest), rg, the CLI and the library interleaved run by run, then rg and the CLI via daemon. Below 1× freshfs is faster. Files searched: ${searched === undefined ? "—" : count(searched)} by freshfs, ${context.rgFiles === undefined ? "— (no rg)" : count(context.rgFiles)} listed by \`rg --files\`.`,
    context.live.freshness === "live"
      ? `Library warm: the live tree answered (\`freshness: "live"\`) after ${context.live.calls} calls in ${(context.live.ms / 1000).toFixed(1)} s, before any run was timed.`
      : `Library warm: the tree did not go live (\`freshness: "${context.live.freshness}"\`${context.live.unwatched ? `: ${context.live.unwatched}` : ""}), so the warm column is what a call answers instead.`,
    `CLI via daemon: the daemon's tree was ${context.daemonWarm.status ?? "not kept"} after ${context.daemonWarm.calls} CLI calls in ${(context.daemonWarm.ms / 1000).toFixed(1)} s, its content index holding ${context.daemonWarm.indexedFiles.toLocaleString("en-US")} files (as many as the library's own), before any run was timed.`,
  ];
  const read = results.filter((r) => r.warmFilesRead !== undefined);
  if (read.length > 0 && searched !== undefined) {
    notes.push(
      `Files the last warm run read (the content index ruled out the rest of the ${count(searched)}): ${read.map((r) => `\`${r.row.label}\` ${count(r.warmFilesRead as number)}`).join(", ")}.`,
    );
  }
  for (const result of results) {
    if (result.rejected !== undefined) {
      notes.push(`\`${result.row.label}\`: freshfs rejects it: ${result.rejected}`);
    }
    if (result.error !== undefined)
      notes.push(`\`${result.row.label}\`: not measured: ${result.error}`);
  }

  const chart: Chart = {
    name: "linux",
    title: "grep on the Linux kernel: ripgrep's nine patterns",
    subtitle: "Time per search, same run (shorter is better): rg against the CLI and the library",
    unit: "time",
    groups,
  };
  return {
    heading: HEADING,
    method: context.quick
      ? `${METHOD}\n\nQuick mode: a small tree generated at run time stands in for the kernel.`
      : METHOD,
    body: [
      out.join("\n"),
      ...notes,
      ...(context.restart ? [restartReport(context.restart)] : []),
      ...indexSection(context),
      ...editSection(context),
    ].join("\n\n"),
    charts: [chart],
    reading: reading(results, context),
    missing: context.rgMissing ? ["`rg`"] : [],
  };
}

/** Decimal units, as the README quotes the tree (1.30 GB). */
const size = (bytes: number) =>
  bytes >= 1e9
    ? `${(bytes / 1e9).toFixed(2)} GB`
    : bytes >= 1e6
      ? `${(bytes / 1e6).toFixed(1)} MB`
      : `${(bytes / 1e3).toFixed(1)} kB`;
const msText = (value: number) =>
  `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ms`;

function indexSection(context: ReportContext): string[] {
  const i = context.index;
  if (i === undefined) {
    return ["**Content index**: none (the tree did not go live, or `FS_INDEX=0`)."];
  }
  const perMb = i.textBytes > 0 ? i.bytes / (i.textBytes / 1e6) : undefined;
  return [
    [
      `**Content index** (\`contentIndexStats\`, after the warm runs${i.indexes > 1 ? `; ${i.indexes} indexes added up` : ""}):`,
      "",
      "| | |",
      "|---|---|",
      `| memory (\`bytes\`) | ${size(i.bytes)} (${Number(((100 * i.bytes) / i.maxBytes).toPrecision(2))}% of the ${(i.maxBytes / 2 ** 20).toFixed(0)} MiB budget, \`FS_INDEX_MAX_BYTES\`) |`,
      `| text indexed (\`textBytes\`) | ${size(i.textBytes)} |`,
      `| index per MB of text | ${perMb === undefined ? "—" : `${size(perMb)} (${(perMb / 1e6).toFixed(3)} bytes a byte)`} |`,
      `| files / segments | ${i.files.toLocaleString("en-US")} / ${i.segments.toLocaleString("en-US")} |`,
      `| build (\`buildMs\`: first run to last, on its own thread, in the background) | ${i.buildMs === undefined ? (i.full ? "— (the budget stopped it first)" : "not finished") : `${(i.buildMs / 1000).toFixed(2)} s`} |`,
      `| waited for before the warm runs (\`waitForContentIndex\`) | ${(context.indexWaitMs / 1000).toFixed(2)} s |`,
      `| full (the budget stopped it) | ${i.full ? "**yes**" : "no"}${i.building > 0 ? ` (${i.building} runs still being read)` : ""} |`,
    ].join("\n"),
  ];
}

function editSection(context: ReportContext): string[] {
  const e = context.edits;
  if (e === undefined) return ["**One changed file**: not measured (no live tree, or no file)."];
  const row = (label: string, l: Latencies) =>
    `| ${label} | ${msText(l.median)} | ${msText(l.p99)} |`;
  const shownFailures = e.failures.slice(0, 3).map((f) => `\`${cell(f)}\``);
  const verdictOfEdits =
    e.failures.length === 0
      ? "All did."
      : `**${e.failures.length} wrong answer(s)**: ${shownFailures.join("; ")}${e.failures.length > 3 ? "…" : ""}.`;
  return [
    [
      `**One changed file** (\`${e.file}\`, ${e.bytes.toLocaleString("en-US")} bytes), ${e.literalAfter.n} edits timed after ${EDIT_WARMUP} untimed: the file rewritten with \`writeFileSync\` (its bytes, then a line \`${TOKENS[0]}\` or \`${TOKENS[1]}\`, alternately), then \`grep\` through the live tree (warm options):`,
      "",
      `| single operations (of ${e.grep.n}) | median | p99 (the slowest) |`,
      "|---|---|---|",
      row("the write alone", e.write),
      row("grep for the token just written (its own time)", e.grep),
      row("write + grep: edit → grep sees it", e.total),
      row("from that grep until the index has the file again (`waitForContentIndex`)", e.reindex),
      row(`warm \`${EDIT_LITERAL}\` right after an edit`, e.literalAfter),
      row(`warm \`${EDIT_LITERAL}\`, no change (the index has the file again)`, e.literalQuiet),
    ].join("\n"),
    `The token's grep read ${e.filesRead.median} file(s) at the median (at most ${e.filesRead.max}) of ${e.filesSearched.toLocaleString("en-US")} searched; \`${EDIT_LITERAL}\` read ${e.literalReadAfter} right after an edit, ${e.literalReadQuiet} with the tree quiet. Each token grep had to find the edited file and no other, and the token written over had to be gone; each \`${EDIT_LITERAL}\` answer had to be the lines of before the edits. ${verdictOfEdits} The file's bytes restored: ${e.restored ? "yes" : "**no**"}${e.gitClean === undefined ? "" : `; the corpus's \`git status --porcelain\` empty after: ${e.gitClean ? "yes" : "**no**"}`}.`,
  ];
}

function reading(results: readonly RowResult[], context: ReportContext): string[] {
  if (context.rgMissing) return ["Not compared: rg is not installed."];
  const span = (values: (number | undefined)[]) => {
    const known = values.filter((v): v is number => v !== undefined);
    if (known.length === 0) return "not measured";
    const [lo, hi] = [Math.min(...known), Math.max(...known)];
    return lo === hi ? times(lo) : `${times(lo)} to ${times(hi)}`;
  };
  const literal = results.filter((r) => r.row.literal);
  const indexable = results.filter((r) => INDEXABLE.has(r.row.label));
  const slower = results.filter((r) => (ratio(r.timing.warm, r.timing.rg) ?? 0) > 1);
  const noLiteral = results.find((r) => r.row.pattern === NO_LITERAL);
  const first = results[0];
  const compared = results.flatMap((r) =>
    WAYS.flatMap((way) => (r.checks[way] ? [r.checks[way]] : [])),
  );
  const identical = compared.filter(
    (c) => c.onlyRg === 0 && c.onlyFreshfs === 0 && c.notes.length === 0,
  ).length;
  const mismatched = results.flatMap((r) =>
    WAYS.flatMap((way) => {
      const check = r.checks[way];
      return check && (check.onlyRg > 0 || check.onlyFreshfs > 0 || check.notes.length > 0)
        ? [`\`${r.row.label}\` ${WAY_NAMES[way]} (${verdict(check)})`]
        : [];
    }),
  );
  const lines = [
    `The CLI (its own process, no daemon) takes ${span(results.map((r) => ratio(r.timing.cli, r.timing.rg)))} rg's time, Node's start included (target ≤ 1.2×); the library cold ${span(results.map((r) => ratio(r.timing.cold, r.timing.rg)))} (target ≤ 0.9× on every row, the seed's own core's figure)${context.pi ? `; ${context.pi} in this process ${span(results.map((r) => ratio(r.timing.pi, r.timing.rg)))}` : ""}.`,
    `The CLI through a warm daemon takes ${span(literal.map((r) => ratio(r.timing.daemon, r.timing.rgBesideDaemon)))} rg's time on the rows with a literal, the relay's start and connection included (target ≤ 0.2×).`,
    `Library warm: ${span(indexable.map((r) => ratio(r.timing.warm, r.timing.rg)))} rg's time on the literal, \`-i\`, \`-w\` and alternation rows (target: 10× faster, ≤ 0.10×); ${slower.length === 0 ? "faster than rg on every row" : `slower than rg on ${slower.map((r) => `\`${r.row.label}\``).join(", ")}`} (target: never slower).`,
  ];
  const foldedShort = indexable.filter(
    (r) => r.row.ignoreCase && (ratio(r.timing.warm, r.timing.rg) ?? 0) > 0.1,
  );
  if (foldedShort.length > 0) {
    lines.push(
      `Short of 10× with \`-i\` (${foldedShort.map((r) => `\`${r.row.label}\``).join(", ")}): ignoring case, only folded trigrams can select, and the index keeps no follow bits for the commonest (held by more than one file in 4: \`err\`, \`sys\`, \`res\`), whose bitmaps together hold in many files (the files read, above), where the case-sensitive rows ask for the upper-case keys. Follow bits up to one file in 2 would take about 87 MB more, past the 256 MiB budget on this tree; the plan is positions for the common trigrams (as zoekt keeps) or sparse n-grams (as GitHub's code search does), within the budget.`,
    );
  }
  if (noLiteral) {
    const t = noLiteral.timing;
    lines.push(
      `The row without a literal: rg ${seconds(t.rg)} s, the CLI ${seconds(t.cli)} s, the library ${seconds(t.cold)} s cold and ${seconds(t.warm)} s warm. The index cannot narrow it (no literal), so every way reads every file; the native core runs it, in a file of ASCII bytes (96% of the kernel's), on its ASCII lane (a DFA of the pattern's classes cut to their ASCII members, scanned over two halves of the file at once; \`native/core/README.md\`), and elsewhere on Rust's regex (a lazy DFA, as rg does), where the JavaScript workers (\`FRESHFS_NATIVE=0\`) pass V8 only the lines a byte DFA lets through (\`src/search/grep/regex/prefilter.ts\`).`,
    );
  }
  if (context.rss && first) {
    const peaks = (side: "cli" | "daemon" | "rg") => results.map((r) => r.peakKb[side]);
    const range = (values: (number | undefined)[]) => {
      const known = values.filter((v): v is number => v !== undefined);
      return known.length === 0 ? "—" : `${mb(Math.min(...known))}–${mb(Math.max(...known))}`;
    };
    lines.push(
      `Peak RSS: the CLI ${range(peaks("cli"))} (${mb(first.peakKb.cli)} on \`${first.row.label}\`; target ≤ 100 MB), the CLI via daemon ${range(peaks("daemon"))} (the client's own; target ≤ 60 MB), rg ${range(peaks("rg"))}.`,
    );
  }
  const i = context.index;
  if (i !== undefined) {
    lines.push(
      `Content index: ${size(i.bytes)} for ${size(i.textBytes)} of text (${i.textBytes > 0 ? (i.bytes / i.textBytes).toFixed(3) : "—"} bytes a byte), ${i.files.toLocaleString("en-US")} files, built in ${i.buildMs === undefined ? "—" : `${(i.buildMs / 1000).toFixed(1)} s`} in the background; ${i.full ? "**full** (the budget stopped it)" : "within its budget"}.`,
    );
  }
  const e = context.edits;
  if (e !== undefined) {
    lines.push(
      `One changed file: the next grep sees it ${msText(e.total.median)} after the write began (p99 ${msText(e.total.p99)}; the grep itself ${msText(e.grep.median)}), reading ${e.filesRead.median} file(s); warm \`${EDIT_LITERAL}\` takes ${msText(e.literalAfter.median)} right after an edit against ${msText(e.literalQuiet.median)} quiet. ${e.failures.length === 0 ? "Every answer after an edit was right." : `**${e.failures.length} answer(s) after an edit were wrong.**`}`,
    );
  }
  lines.push(
    mismatched.length === 0
      ? `Output: identical to rg's in all ${compared.length} comparisons (${results.length} rows × ${WAYS.length} ways).`
      : `Output: identical to rg's in ${identical} of ${compared.length} comparisons; not: ${mismatched.join(", ")}.`,
  );
  return lines;
}

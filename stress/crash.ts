/**
 * Crashes (issue 7, item 2): a child process writing a ~300 KB file through a Workspace of the
 * built library (test/fixtures/reliability/crash-writer.mjs: write, edit, write, ... ) is
 * killed with SIGKILL at a random moment, again and again, in one directory. After each kill:
 * - the file is exactly the content before the operation in flight or the one after it (the
 *   child prints `done <i>` after each operation, through a synchronous pipe, so the parent
 *   knows which operation was in flight), never truncated or mixed; its mode is kept;
 * - temp files the kill left are counted (in the runtime directory's staging, where a write's
 *   temp file goes on the tree's mount; none may be in the tree), and glob, grep and find never
 *   list them.
 * Build first (`npm run build`): the child imports `dist/`.
 */
import { spawn } from "node:child_process";
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Workspace } from "../src/index.js";
import { contentOf, DEFAULT_LINES } from "../test/fixtures/reliability/crash-content.mjs";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";

const CHILD = fileURLToPath(
  new URL("../test/fixtures/reliability/crash-writer.mjs", import.meta.url),
);

/** `tools/atomic`'s temp name for a file: `.<name>.freshfs-<12 hex>.tmp`. */
export const FRESHFS_TEMP = /^\..+\.freshfs-[0-9a-f]{12}\.tmp$/;

const NAME = "big.txt";
const MODE = 0o640;
/** More operations than a child can finish before its kill. */
const MAX_OPERATIONS = 200;

export interface CrashOptions {
  /** An empty directory (its real path); every iteration uses it, so left temp files pile up. */
  dir: string;
  /**
   * The writer's runtime directory (`FRESHFS_RUNTIME_DIR`), of this run alone, on the same file
   * system as `dir`: its `staging/` holds the temp files, and no other process's.
   */
  runtimeDir: string;
  iterations: number;
  /** The kill comes this long (at most; uniformly random) after the child's `ready`. */
  maxDelayMs: number;
  /**
   * Operations the child does before `ready`, in turn: `[2, 3]` warms the code, then has a
   * write and an edit next in turn; `[0, 1]` kills a cold child sooner.
   */
  warmup: readonly [number, number];
  /** Lines of the file (~100 bytes each). @default 3000 */
  lines?: number;
  seed: number;
}

/** Where a kill landed in the operation in flight, told by the file and the temp files. */
export type KillMoment =
  | "before the write (old content, no temp file)"
  | "mid-write (old content, temp file left)"
  | "after the rename (new content)"
  | "after the last operation";

export interface CrashReport {
  readonly iterations: number;
  readonly moments: Readonly<Record<KillMoment, number>>;
  /** Kills while a write (whole file) or an edit (one line) was in flight. */
  readonly inFlight: Readonly<Record<"write" | "edit", number>>;
  readonly operationsCompleted: number;
  /** Files not exactly the old or the new content (must be 0). */
  readonly tornFiles: number;
  readonly modeChanged: number;
  /** Temp files left at the end, in the staging directory or the tree. */
  readonly tempFilesLeft: number;
  /** Of those, in the tree itself (must be 0: the staging directory shares its mount). */
  readonly tempFilesInTree: number;
  readonly listingsChecked: number;
  /** Listings that showed a temp file, or missed a real file (must be 0). */
  readonly listingFailures: number;
  readonly violations: readonly string[];
  readonly elapsedMs: number;
}

interface ChildRun {
  /** The last operation the child reported done (0: none). */
  readonly done: number;
  readonly finished: boolean;
  readonly ready: boolean;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/**
 * Spawns the writer and kills it `delayMs` after it says it is ready, which it does after
 * `readyAfter` operations.
 */
async function killedChild(
  dir: string,
  runtimeDir: string,
  run: number,
  lines: number,
  readyAfter: number,
  delayMs: number,
): Promise<ChildRun> {
  const child = spawn(
    process.execPath,
    [CHILD, dir, NAME, String(run), String(lines), String(MAX_OPERATIONS), String(readyAfter)],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, FRESHFS_RUNTIME_DIR: runtimeDir } },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const closed = new Promise<NodeJS.Signals | null>((done) =>
    child.on("close", (_code, signal) => done(signal)),
  );
  let done = 0;
  let finished = false;
  let ready = false;
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === "ready") {
      ready = true;
      setTimeout(() => child.kill("SIGKILL"), delayMs);
    } else if (line === "finished") {
      finished = true;
    } else if (line.startsWith("done ")) {
      done = Number(line.slice(5));
    }
  }
  const signal = await closed;
  return { done, finished, ready, signal, stderr };
}

function tempsIn(names: readonly string[]): string[] {
  return names.filter((name) => FRESHFS_TEMP.test(name));
}

/** The temp files in the tree and in the staging directory, each by its path. */
async function tempsOf(dir: string, staging: string): Promise<string[]> {
  const staged = await readdir(staging).catch(() => []);
  return [
    ...tempsIn(await readdir(dir)).map((name) => join(dir, name)),
    ...tempsIn(staged).map((name) => join(staging, name)),
  ];
}

function isTempPath(path: string): boolean {
  return FRESHFS_TEMP.test(path.split("/").pop() ?? "");
}

/** Runs glob, grep and find; returns what each got wrong (a temp shown, a real file missed). */
async function listingProblems(workspace: Workspace, run: number): Promise<string[]> {
  const problems: string[] = [];
  const expectExactly = (what: string, got: readonly string[], wanted: readonly string[]) => {
    const shown = got.filter(isTempPath);
    if (shown.length > 0) problems.push(`${what} listed ${shown.join(", ")}`);
    if (got.join("\n") !== wanted.join("\n")) {
      problems.push(`${what} gave [${got.join(", ")}], expected [${wanted.join(", ")}]`);
    }
  };
  // Names a hidden entry: the listing includes hidden files, and must still skip temp files.
  expectExactly("glob **/.*", (await workspace.glob({ pattern: "**/.*" })).files, [".keep"]);
  expectExactly("glob **/*", (await workspace.glob({ pattern: "**/*" })).files, [NAME]);
  expectExactly("glob **/*.tmp", (await workspace.glob({ pattern: "**/.*.tmp" })).files, []);
  // Every version, and any part of one a temp file holds, has this text.
  expectExactly(
    "grep",
    (await workspace.grep({ pattern: `^run ${run} line`, output_mode: "files_with_matches" }))
      .files,
    [NAME],
  );
  expectExactly(
    "grep --glob *.tmp",
    (await workspace.grep({ pattern: "line", glob: "*.tmp" })).files,
    [],
  );
  const found = (await workspace.find({ query: "freshfs" })).matches.map((m) => m.path);
  expectExactly("find freshfs", found, []);
  return problems;
}

export async function crashes(options: CrashOptions): Promise<CrashReport> {
  const started = performance.now();
  const rand = seededRandom(options.seed);
  const { dir } = options;
  const staging = join(options.runtimeDir, "staging");
  const lines = options.lines ?? DEFAULT_LINES;
  const file = join(dir, NAME);
  await writeFile(join(dir, ".keep"), "");
  const moments: Record<KillMoment, number> = {
    "before the write (old content, no temp file)": 0,
    "mid-write (old content, temp file left)": 0,
    "after the rename (new content)": 0,
    "after the last operation": 0,
  };
  const inFlight = { write: 0, edit: 0 };
  const violations: string[] = [];
  let operationsCompleted = 0;
  let tornFiles = 0;
  let modeChanged = 0;
  let listingsChecked = 0;
  let listingFailures = 0;
  // The parent's own view, with the scan cache on, as an agent's would be.
  const observer = new Workspace({ roots: dir });

  for (let iteration = 0; iteration < options.iterations; iteration++) {
    const run = options.seed * 100_000 + iteration;
    await writeFile(file, contentOf(run, 0, lines));
    await chmod(file, MODE);
    const tempsBefore = new Set(await tempsOf(dir, staging));
    const readyAfter = options.warmup[iteration % 2] as number;
    const delay = rand() * options.maxDelayMs;
    const child = await killedChild(dir, options.runtimeDir, run, lines, readyAfter, delay);
    if (!child.ready || (child.signal !== "SIGKILL" && !child.finished)) {
      violations.push(
        `iteration ${iteration}: child ended without being killed (${child.signal}): ${child.stderr.trim()}`,
      );
      continue;
    }
    operationsCompleted += child.done;
    const c = child.done;
    const bytes = await readFile(file, "utf8");
    const mode = (await stat(file)).mode & 0o7777;
    const temps = (await tempsOf(dir, staging)).filter((path) => !tempsBefore.has(path));
    if (mode !== MODE) {
      modeChanged++;
      violations.push(`iteration ${iteration}: mode ${mode.toString(8)}, expected 640`);
    }
    let moment: KillMoment;
    if (bytes === contentOf(run, c, lines)) {
      if (temps.length > 0) moment = "mid-write (old content, temp file left)";
      else if (child.finished) moment = "after the last operation";
      else moment = "before the write (old content, no temp file)";
    } else if (bytes === contentOf(run, c + 1, lines) && temps.length === 0) {
      moment = "after the rename (new content)";
    } else {
      tornFiles++;
      violations.push(
        `iteration ${iteration}: after operation ${c} the file (${bytes.length} bytes, ${temps.length} new temp files) is neither version ${c} nor ${c + 1}`,
      );
      continue;
    }
    moments[moment]++;
    if (!child.finished) inFlight[(c + 1) % 2 === 1 ? "write" : "edit"]++;
    if (temps.length > 1) {
      violations.push(`iteration ${iteration}: one kill left ${temps.length} temp files`);
    }

    const problems = await listingProblems(observer, run);
    listingsChecked += 6;
    listingFailures += problems.length;
    for (const problem of problems) violations.push(`iteration ${iteration}: ${problem}`);
  }
  const tempFilesLeft = (await tempsOf(dir, staging)).length;
  const tempFilesInTree = tempsIn(await readdir(dir)).length;
  const midWrite = moments["mid-write (old content, temp file left)"];
  // A temp file older than a minute is swept by the next writer: fewer may be left than kills
  // mid-write, never more.
  if (tempFilesLeft > midWrite) {
    violations.push(`${tempFilesLeft} temp files left, ${midWrite} kills mid-write`);
  }
  if (tempFilesInTree > 0) violations.push(`${tempFilesInTree} temp files left in the tree`);
  return {
    iterations: options.iterations,
    moments,
    inFlight,
    operationsCompleted,
    tornFiles,
    modeChanged,
    tempFilesLeft,
    tempFilesInTree,
    listingsChecked,
    listingFailures,
    violations,
    elapsedMs: performance.now() - started,
  };
}

export async function run(): Promise<string> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "freshfs-crash-")));
  const dir = join(base, "tree");
  await mkdir(dir);
  let report: CrashReport;
  try {
    report = await crashes({
      dir,
      runtimeDir: join(base, "state"),
      iterations: 200,
      maxDelayMs: 50,
      warmup: [2, 3],
      seed: 2,
    });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
  const rows: [string, string | number][] = [
    ["kills (SIGKILL)", report.iterations],
    ...Object.entries(report.moments).map(([moment, count]): [string, number] => [
      `... ${moment}`,
      count,
    ]),
    ["kills with a write (whole file) in flight", report.inFlight.write],
    ["kills with an edit (one line) in flight", report.inFlight.edit],
    ["operations completed before the kills", report.operationsCompleted],
    ["files torn or mixed (not exactly old or new)", report.tornFiles],
    ["files whose mode changed", report.modeChanged],
    ["temp files left at the end (`.big.txt.freshfs-<12 hex>.tmp`)", report.tempFilesLeft],
    [
      "... of them in the tree (the rest in the runtime directory's staging)",
      report.tempFilesInTree,
    ],
    ["listings checked (glob x3, grep x2, find, after each kill)", report.listingsChecked],
    ["listings that showed a temp file or missed a real one", report.listingFailures],
    ["invariant violations", report.violations.length],
  ];
  const parts = [
    "A child process (node, the built library) writes a 300 KB file through a Workspace, alternating " +
      "write (the whole file anew, one line in 20 changed, first to last) and edit (the first line), and " +
      "is killed with SIGKILL 0-50 ms (uniformly random) after its second or third operation (so a write " +
      "or an edit comes next, in turn); 200 times, in one directory. After each kill the file must be " +
      "exactly the version before or after the operation in flight, with its mode (0640) kept, no temp " +
      "file may be in the tree (they are flushed in the runtime directory's staging, on the same file " +
      "system), and glob, grep and find must not list the temp files left.",
    "",
    "| | |",
    "|---|---:|",
    ...rows.map(([label, value]) => `| ${label} | ${value} |`),
  ];
  if (report.violations.length > 0) {
    parts.push("", "Violations:", "", ...report.violations.slice(0, 50).map((v) => `- ${v}`));
  }
  return parts.join("\n");
}

/**
 * `npm run stress -- ignore-fuzz` (issue 7, item 6): gitignore fuzzing against git, the long
 * run. At least 5,000 generated cases (test/helpers/ignore-arbitraries.ts), each a tree of 5-40
 * paths with its ignore files built in a real repository; for every path, freshfs's verdict and
 * deciding line (`explainPath`) against `git check-ignore --no-index -v`, and the `forceRescan`
 * listing against `git ls-files -co --exclude-standard`. Two workers (one repository each) split
 * the cases. The seed is random unless given, and printed, so a failure can be replayed:
 *
 *   IGNORE_FUZZ_SEED=1234 npm run stress -- ignore-fuzz     # the same run again
 *   IGNORE_FUZZ_RUNS=20000 npm run stress -- ignore-fuzz    # a longer one
 *   IGNORE_FUZZ_SEED=1235 IGNORE_FUZZ_PATH=12:3:0 npm run stress -- ignore-fuzz
 *                              # one failing case again: a worker's seed and fast-check's path
 *
 * Bounded: each worker stops at IGNORE_FUZZ_TIME_LIMIT_S (170 s by default) and the report says
 * so if fewer cases than asked for ran.
 *
 * The repositories go to a RAM-backed directory when there is one (IGNORE_FUZZ_TMPDIR, else
 * /dev/shm), since a case is mostly creating and removing small directories: 20 times faster
 * there than on this machine's disk. Ignore rules do not depend on the file system beyond case
 * sensitivity, which both have.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import fc from "fast-check";
import { createTempRepo, type TempRepo } from "../test/helpers/git.js";
import {
  type DecidingSource,
  FuzzRepo,
  formatFailure,
  type IgnoreCase,
  ignoreCaseArb,
} from "../test/helpers/ignore-arbitraries.js";

const TARGET = 5000;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, not ${JSON.stringify(raw)}`);
  }
  return value;
}

interface Totals {
  cases: number;
  verdicts: number;
  ignored: number;
  reincluded: number;
  files: number;
  decidedBy: Record<DecidingSource, number>;
  nested: number;
  exclude: number;
  excludesFile: number;
  ignoreCase: number;
  symlinkedGitignore: number;
  crlf: number;
  lines: number;
}

function tally(totals: Totals, c: IgnoreCase): void {
  const files = [
    ...c.gitignores.map((g) => g.file),
    ...(c.exclude ? [c.exclude] : []),
    ...(c.excludesFile ? [c.excludesFile] : []),
  ];
  totals.nested += c.gitignores.length > 1 ? 1 : 0;
  totals.exclude += c.exclude ? 1 : 0;
  totals.excludesFile += c.excludesFile ? 1 : 0;
  totals.ignoreCase += c.ignoreCase ? 1 : 0;
  totals.symlinkedGitignore += c.gitignores.some((g) => g.symlink) ? 1 : 0;
  totals.crlf += files.some((file) => file.lines.some((line) => line.crlf)) ? 1 : 0;
  totals.lines += files.reduce((sum, file) => sum + file.lines.length, 0);
}

interface WorkerResult {
  readonly seed: number;
  readonly details: fc.RunDetails<[IgnoreCase]>;
}

async function worker(
  repo: TempRepo,
  seed: number,
  runs: number,
  limitMs: number,
  totals: Totals,
  path: string | undefined,
): Promise<WorkerResult> {
  const fuzz = new FuzzRepo(repo);
  const property = fc.asyncProperty(ignoreCaseArb, async (c) => {
    const outcome = await fuzz.check(c);
    totals.cases++;
    totals.verdicts += outcome.verdicts;
    totals.ignored += outcome.ignored;
    totals.reincluded += outcome.reincluded;
    totals.files += outcome.files;
    for (const [source, n] of Object.entries(outcome.decidedBy)) {
      totals.decidedBy[source as DecidingSource] += n;
    }
    tally(totals, c);
    if (outcome.disagreements.length > 0) {
      throw new Error(formatFailure(c, outcome.disagreements));
    }
  });
  const details = await fc.check(property, {
    seed,
    ...(path === undefined ? {} : { path }),
    numRuns: runs,
    interruptAfterTimeLimit: limitMs,
    markInterruptAsFailure: false,
  });
  return { seed, details };
}

const count = (n: number) => n.toLocaleString("en-US");

/** A writable RAM-backed directory for the repositories, or the usual temporary directory. */
function fastTmpdir(): string {
  const candidates = [process.env.IGNORE_FUZZ_TMPDIR, "/dev/shm"];
  for (const dir of candidates) {
    if (!dir) continue;
    try {
      if (!statSync(dir).isDirectory()) continue;
      accessSync(dir, constants.W_OK);
      return dir;
    } catch {}
  }
  return tmpdir();
}

/** `createTempRepo()` under `dir` (it places its repository with os.tmpdir(), which reads TMPDIR). */
async function createRepoIn(dir: string): Promise<TempRepo> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await createTempRepo();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

export async function run(): Promise<string> {
  const seed = envNumber("IGNORE_FUZZ_SEED", Math.floor(Math.random() * 2 ** 31));
  const runs = envNumber("IGNORE_FUZZ_RUNS", TARGET);
  const limitMs = envNumber("IGNORE_FUZZ_TIME_LIMIT_S", 170) * 1000;
  const path = process.env.IGNORE_FUZZ_PATH || undefined;
  const workers = path === undefined ? Math.max(1, Math.min(2, availableParallelism())) : 1;
  const gitVersion = execFileSync("git", ["--version"], { encoding: "utf8" }).trim();
  const where = fastTmpdir();
  console.log(
    `ignore-fuzz: seed ${seed}, ${runs} cases, ${workers} workers, repositories in ${where}`,
  );

  const totals: Totals = {
    cases: 0,
    verdicts: 0,
    ignored: 0,
    reincluded: 0,
    files: 0,
    decidedBy: {
      "top .gitignore": 0,
      "nested .gitignore": 0,
      "info/exclude": 0,
      excludesFile: 0,
    },
    nested: 0,
    exclude: 0,
    excludesFile: 0,
    ignoreCase: 0,
    symlinkedGitignore: 0,
    crlf: 0,
    lines: 0,
  };
  const repos: TempRepo[] = [];
  const started = performance.now();
  let results: WorkerResult[];
  try {
    for (let w = 0; w < workers; w++) repos.push(await createRepoIn(where));
    results = await Promise.all(
      repos.map((repo, w) => {
        const share = Math.floor(runs / workers) + (w < runs % workers ? 1 : 0);
        return worker(repo, seed + w, share, limitMs, totals, path);
      }),
    );
  } finally {
    for (const repo of repos) await repo.remove();
  }
  const seconds = (performance.now() - started) / 1000;

  const failures = results.filter((result) => result.details.failed);
  const generated = totals.cases;
  const interrupted = results.some((result) => result.details.interrupted);
  const kept = totals.verdicts - totals.ignored - totals.reincluded;
  const lines = [
    `Generated ignore files and trees checked against ${gitVersion} in real repositories`,
    `(fast-check ${fc.__version}, seed ${seed}, ${workers} workers with seeds ${seed}..${seed + workers - 1},`,
    `repositories in ${where};`,
    `replay with \`IGNORE_FUZZ_SEED=${seed} npm run stress -- ignore-fuzz\`).`,
    "",
    "| What | Count |",
    "| --- | ---: |",
    `| Generated cases checked (a tree of 5-40 paths and its ignore files) | ${count(generated)} |`,
    `| Path verdicts compared with \`git check-ignore -v\` (verdict, file, line, pattern) | ${count(totals.verdicts)} |`,
    `| … ignored | ${count(totals.ignored)} |`,
    `| … re-included by a negation | ${count(totals.reincluded)} |`,
    `| … matched by no rule | ${count(kept)} |`,
    `| … decided by the top \`.gitignore\` / a nested one / \`info/exclude\` / \`core.excludesFile\` | ${Object.values(totals.decidedBy).map(count).join(" / ")} |`,
    `| Files and links compared with \`git ls-files -co --exclude-standard\` | ${count(totals.files)} |`,
    `| Ignore-file lines generated | ${count(totals.lines)} |`,
    `| Cases with a nested \`.gitignore\` | ${count(totals.nested)} |`,
    `| Cases with \`.git/info/exclude\` | ${count(totals.exclude)} |`,
    `| Cases with a global excludes file (\`core.excludesFile\`) | ${count(totals.excludesFile)} |`,
    `| Cases with \`core.ignoreCase\` | ${count(totals.ignoreCase)} |`,
    `| Cases with a symlinked \`.gitignore\` (refused by both) | ${count(totals.symlinkedGitignore)} |`,
    `| Cases with CRLF lines | ${count(totals.crlf)} |`,
    `| **Disagreements** | **${failures.length}** |`,
    `| Time | ${seconds.toFixed(1)} s (${((seconds * 1000 * workers) / Math.max(totals.cases, 1)).toFixed(1)} ms per case and worker) |`,
  ];
  if (failures.length > 0) lines.push("", "(The counts include the cases run while shrinking.)");
  if (interrupted) {
    lines.push(
      "",
      `**Interrupted:** ${count(generated)} of ${count(runs)} cases ran before the ${limitMs / 1000} s limit (a busy machine?).`,
    );
  }
  if (generated < TARGET) {
    lines.push("", `(A short run: the issue asks for at least ${count(TARGET)} cases.)`);
  }
  for (const { seed: workerSeed, details } of failures) {
    lines.push(
      "",
      `### Disagreement (worker seed ${workerSeed}, fast-check path ${JSON.stringify(details.counterexamplePath)}, shrunk ${details.numShrinks} times)`,
      "",
      "```",
      String(
        details.errorInstance instanceof Error
          ? details.errorInstance.message
          : details.errorInstance,
      ),
      "```",
      "",
      `Replay just this case: \`IGNORE_FUZZ_SEED=${workerSeed} IGNORE_FUZZ_PATH=${details.counterexamplePath ?? ""} npm run stress -- ignore-fuzz\`.`,
    );
  }
  if (failures.length > 0) process.exitCode = 1;
  return lines.join("\n");
}

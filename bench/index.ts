/**
 * `npm run bench`: builds the corpus if it is missing, runs every suite against its peers and
 * writes BENCHMARKS.md and the charts in docs/charts/. `npm run bench -- scan search` runs the
 * named suites and prints them without writing the page (a page of some suites would drop the
 * others). `--quick` is the smoke run: small generated trees, under a minute, the report
 * written to a temp directory and removed (or kept in `--out DIR`), so CI proves the whole
 * path still works. The `linux` suite searches the Linux kernel (`bench/.linux`): named, it builds
 * the tree first if it is missing; in a full run it runs only if the tree is there.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { forceRescan } from "../src/index.js";
import { benchDaemon } from "./daemon.js";
import { benchGuard } from "./guard.js";
import { machine } from "./lib/measure.js";
import { CORPUS_DIR, findCorpus } from "./lib/peers.js";
import { type SuiteResult, writeReport } from "./lib/report.js";
import { benchLinux, LINUX_CORPUS_DIR } from "./linux.js";
import { benchLive } from "./live.js";
import { benchScan } from "./scan.js";
import { benchSearch } from "./search.js";
import { benchTools } from "./tools.js";

const SUITES = {
  guard: benchGuard,
  scan: benchScan,
  search: benchSearch,
  live: benchLive,
  tools: benchTools,
  daemon: benchDaemon,
  linux: benchLinux,
} as const;
/** Suites that read the corpus (the others build their own files). */
const ON_CORPUS = new Set<keyof typeof SUITES>(["scan", "search", "live", "daemon"]);

const repo = resolve(fileURLToPath(new URL("..", import.meta.url)));

const { values, positionals } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    out: { type: "string" },
  },
  allowPositionals: true,
});
const unknown = positionals.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  console.error(
    `bench: unknown suite ${unknown.join(", ")}; known: ${Object.keys(SUITES).join(", ")}`,
  );
  process.exit(2);
}
const all = positionals.length === 0;
const chosen = (all ? Object.keys(SUITES) : positionals) as (keyof typeof SUITES)[];
const quick = values.quick ?? false;

let corpus: string | undefined;
if (!quick && chosen.some((name) => ON_CORPUS.has(name))) {
  corpus = findCorpus() ?? buildCorpus();
}
if (!quick && positionals.includes("linux") && !existsSync(LINUX_CORPUS_DIR)) buildLinuxCorpus();

const results: SuiteResult[] = [];
for (const name of chosen) {
  console.error(`bench: ${name}…`);
  results.push(await SUITES[name]({ quick }));
}

const header = {
  date: new Date().toISOString().slice(0, 10),
  machine: machine(),
  corpus: corpus
    ? await describeCorpus(corpus)
    : quick
      ? "Corpus: small trees generated at run time (quick mode), not the benchmark corpus."
      : chosen.includes("linux")
        ? "Corpus: the Linux kernel tree of the linux suite (described in its section)."
        : "Corpus: not used by these suites (they write their own files).",
  quick,
};
if (all || values.out !== undefined) {
  // Quick mode's page is written (so the writing is exercised) where it cannot be mistaken for
  // the real one, and removed after, unless --out says where to keep it.
  const scratch = quick && values.out === undefined;
  const dir = scratch
    ? mkdtempSync(join(tmpdir(), "freshfs-bench-quick-"))
    : resolve(values.out ?? repo);
  const charts = dir === repo ? join(repo, "docs", "charts") : join(dir, "charts");
  const markdown = writeReport(dir, charts, header, results);
  if (dir === repo) formatPage(join(repo, "BENCHMARKS.md"));
  console.log(markdown);
  const count = results.flatMap((r) => r.charts).length;
  if (scratch) {
    rmSync(dir, { recursive: true, force: true });
    console.error(`bench: the page and ${count} charts were written, then removed (quick mode)`);
  } else {
    console.error(`bench: wrote ${join(dir, "BENCHMARKS.md")} and ${count} charts in ${charts}`);
  }
} else {
  console.log(`Machine: ${header.machine}\n\n${header.corpus}\n`);
  for (const [index, result] of results.entries()) {
    console.log(`## ${result.heading}\n\n${result.body}\n`);
    if (result.reading.length > 0)
      console.log(`${result.reading.map((line) => `- ${line}`).join("\n")}\n`);
    if (index === results.length - 1)
      console.log("(Printed only: run `npm run bench` for the page.)");
  }
}

/**
 * Runs bench/make-corpus.sh (a few minutes, once; needs the npm registry) into a scratch
 * directory renamed to bench/.corpus only once complete: an interrupted build leaves no
 * half-corpus to be measured next time.
 */
function buildCorpus(): string {
  const partial = `${CORPUS_DIR}.partial`;
  console.error(
    `bench: no corpus yet; building ${CORPUS_DIR} with bench/make-corpus.sh (needs the npm registry, one to three minutes)…`,
  );
  rmSync(partial, { recursive: true, force: true });
  const built = spawnSync("bash", [join(repo, "bench", "make-corpus.sh"), partial], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (built.status !== 0) {
    console.error(
      "bench: building the corpus failed (see above); set FRESHFS_CORPUS to a corpus built elsewhere.",
    );
    process.exit(1);
  }
  renameSync(partial, CORPUS_DIR);
  return CORPUS_DIR;
}

/**
 * Runs bench/make-linux-corpus.sh (minutes; Debian's linux-source-6.1, installed with
 * apt-get if missing) into bench/.scratch, renamed to bench/.linux only once complete, as
 * buildCorpus does; both places are gitignored.
 */
function buildLinuxCorpus(): void {
  const script = resolve(repo, "bench", "make-linux-corpus.sh");
  const partial = join(repo, "bench", ".scratch", "linux.partial");
  console.error(
    `bench: no Linux corpus yet; building ${LINUX_CORPUS_DIR} with ${script} (extracts Debian's linux-source-6.1, installing the package with apt-get if it is missing, which needs root; a few minutes)…`,
  );
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(dirname(partial), { recursive: true });
  const built = spawnSync("bash", [script, partial], { stdio: ["ignore", "inherit", "inherit"] });
  if (built.status !== 0) {
    console.error("bench: building the Linux corpus failed (see above).");
    process.exit(1);
  }
  renameSync(partial, LINUX_CORPUS_DIR);
  console.error(`bench: the Linux corpus is ready: ${LINUX_CORPUS_DIR}`);
}

/** The corpus's file counts, for the page. */
async function describeCorpus(dir: string): Promise<string> {
  const git = spawnSync("git", ["-C", dir, "ls-files"], { encoding: "utf8", maxBuffer: 1 << 28 });
  const tracked = git.status === 0 ? git.stdout.split("\n").filter(Boolean).length : undefined;
  const everything = await forceRescan(dir, { useGitignore: false, includeHidden: true });
  const files = everything.entries.filter((entry) => entry.type === "file").length;
  const dirs = everything.entries.filter((entry) => entry.type === "dir").length;
  const count = (n: number) => n.toLocaleString("en-US");
  return `Corpus: \`bench/make-corpus.sh\` (pinned npm packages in a git repository with nested ignore files, hidden folders, build output, CRLF and binary files, a symlink): ${tracked === undefined ? "" : `${count(tracked)} tracked files, `}${count(files)} files and ${count(dirs)} directories in all (outside \`.git\`), most of them in a gitignored \`node_modules\`.`;
}

/** The page is formatted as the repository's Markdown is (`npm run check` checks it). */
function formatPage(file: string): void {
  const biome = join(repo, "node_modules", "@biomejs", "biome", "bin", "biome");
  const formatted = spawnSync(process.execPath, [biome, "format", "--write", file], {
    stdio: "ignore",
  });
  if (formatted.status !== 0) console.error(`bench: could not format ${file} with biome`);
}

/**
 * A patch killed mid-apply (issue 17): a child process of the built library reads 300 files
 * and applies one patch that rewrites a line in each; it is killed with SIGKILL either the
 * moment the parent sees the first file change (the middle of the renames) or at a random
 * moment of the apply. After each kill every file must be whole, its old content or its new
 * one, never torn; the kill's moment is told by how many files are new; temp files (flushed in
 * the runtime directory's staging, on the tree's file system) are never in the tree, and never
 * show in glob or list. Build first (`npm run build`): the child imports `dist/`.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../src/index.js";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";

const DIST = new URL("../dist/index.js", import.meta.url).href;
const FILES = 300;
const RUNS = 60;
const name = (i: number) => `f${String(i).padStart(4, "0")}.txt`;

const childScript = (root: string) => `
import { Workspace } from ${JSON.stringify(DIST)};
const ws = new Workspace({ roots: ${JSON.stringify(root)}, watch: false });
const lines = ["*** Begin Patch"];
for (let i = 0; i < ${FILES}; i++) {
  const name = "f" + String(i).padStart(4, "0") + ".txt";
  await ws.read({ file_path: name });
  lines.push("*** Update File: " + name, "@@", " line 1 of " + i, "-old " + i, "+new " + i);
}
lines.push("*** End Patch");
process.stdout.write("ready\\n");
const started = performance.now();
await ws.applyPatch({ input: lines.join("\\n") });
process.stdout.write("done " + (performance.now() - started).toFixed(1) + "\\n");
`;

interface Run {
  readonly news: number;
  readonly torn: number;
  /** freshfs's files left in the tree. */
  readonly tempsLeft: number;
  /** Temp files left in the staging directory (swept by a later writer once a minute old). */
  readonly stagedLeft: number;
  readonly shownTemps: number;
  readonly applyMs: number | undefined;
}

async function once(delayMs: number | "first-rename"): Promise<Run> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "freshfs-patch-crash-")));
  const root = join(base, "tree");
  const state = join(base, "state");
  await mkdir(root);
  try {
    for (let i = 0; i < FILES; i++)
      await writeFile(join(root, name(i)), `line 1 of ${i}\nold ${i}\n`);
    const child = spawn(process.execPath, ["--input-type=module", "-e", childScript(root)], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, FRESHFS_RUNTIME_DIR: state },
    });
    let out = "";
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("ready")) resolve();
      });
      child.on("close", () => resolve());
    });
    if (delayMs === "first-rename") {
      const first = join(root, name(0));
      const until = performance.now() + 30_000;
      while (performance.now() < until && (await readFile(first, "utf8")).endsWith("old 0\n")) {
        // As fast as the file can be read.
      }
    } else {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    child.kill("SIGKILL");
    await exited;
    let news = 0;
    let torn = 0;
    for (let i = 0; i < FILES; i++) {
      const text = await readFile(join(root, name(i)), "utf8");
      if (text === `line 1 of ${i}\nnew ${i}\n`) news++;
      else if (text !== `line 1 of ${i}\nold ${i}\n`) torn++;
    }
    const tempsLeft = (await readdir(root)).filter((entry) => entry.includes(".freshfs-")).length;
    const stagedLeft = (await readdir(join(state, "staging")).catch(() => [])).length;
    const ws = new Workspace({ roots: root });
    const globbed = (await ws.glob({ pattern: "**/*", limit: 1000 })).files;
    const listed = (await ws.list({ limit: 1000, hidden: true })).entries.map((e) => e.name);
    const shownTemps = [...globbed, ...listed].filter((path) => path.includes(".freshfs-")).length;
    const done = /done ([\d.]+)/.exec(out);
    return {
      news,
      torn,
      tempsLeft,
      stagedLeft,
      shownTemps,
      applyMs: done ? Number(done[1]) : undefined,
    };
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

export async function run(): Promise<string> {
  // One uninterrupted apply first: how long the kills have to land in.
  const whole = await once(60_000);
  const span = whole.applyMs ?? 1000;
  const random = seededRandom(17);
  const runs: (Run & { how: string })[] = [];
  for (let k = 0; k < RUNS; k++) {
    const firstRename = k % 2 === 0;
    const delay = firstRename ? "first-rename" : Math.floor(random() * span * 1.2);
    runs.push({ ...(await once(delay)), how: firstRename ? "first rename" : "random" });
  }
  const count = (predicate: (r: Run) => boolean, how?: string) =>
    runs.filter((r) => (how === undefined || r.how === how) && predicate(r)).length;
  const row = (label: string, predicate: (r: Run) => boolean) =>
    `| ${label} | ${count(predicate, "first rename")} | ${count(predicate, "random")} |`;
  return [
    `${RUNS} SIGKILLs of a child applying one patch to ${FILES} files (an uninterrupted apply took ${span.toFixed(0)} ms: temp files flushed eight at a time, then every file checked and renamed back to back); half the kills the moment the first file changed, half at a random moment up to 1.2 times the apply's length.`,
    "",
    "| after the kill | at the first rename | at random |",
    "| --- | ---: | ---: |",
    row("every file old (killed before the renames)", (r) => r.news === 0),
    row(
      "some files new, the rest old (killed among the renames)",
      (r) => r.news > 0 && r.news < FILES,
    ),
    row("every file new (the renames were done)", (r) => r.news === FILES),
    row("**a file torn** (neither old nor new)", (r) => r.torn > 0),
    row("**files of freshfs's left in the tree**", (r) => r.tempsLeft > 0),
    row("temp files left in the staging directory, out of the tree", (r) => r.stagedLeft > 0),
    row("**a temp file shown** by glob or list", (r) => r.shownTemps > 0),
    "",
    `Files new after the kills among the renames: ${
      runs
        .filter((r) => r.news > 0 && r.news < FILES)
        .map((r) => r.news)
        .join(", ") || "none"
    } of ${FILES}.`,
  ].join("\n");
}

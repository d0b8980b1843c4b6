/**
 * Escapes (issue 7, item 3): the table of attempts to reach outside the roots, tried against
 * every path-taking tool; randomized paths built from hostile segments; and a directory swapped
 * for a link out of the root by another process while the tools run. Counts attempts, refusals
 * by code, and escapes (anything outside the root read, created, changed or removed).
 *
 * The table and the layout are exported: test/tools/escapes.test.ts runs the same table.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { FreshfsError, Workspace } from "../src/index.js";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";

/** Every file outside the root holds this: a read that shows it has escaped. */
export const SECRET = "OUTSIDE-SECRET";

/** `<base>/app` is the root; everything else under `<base>` is outside it. */
export interface Layout {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly evil: string;
}

/** Directories next to the root whose names look like its name. */
export const LOOK_ALIKES = [
  "\u0430pp", // Cyrillic а
  "\uff41\uff50\uff50", // fullwidth ａｐｐ
  "app\u0301", // p + combining acute (NFD)
  "ap\u1e55", // ṕ precomposed (NFC of the above)
  "app\u200b", // a zero-width space after the name
  "App", // another case (a different directory on a case-sensitive file system)
] as const;

/** The longest name a Linux file system takes (255 bytes): a link out of the root. */
export const LONG_LINK = "L".repeat(255);

/**
 * Builds the layout under `base` (an empty directory): the root `app` with links out of it at
 * depths 0 to 4 (absolute and relative targets), chains, dangling links, a link to the root
 * itself and one inside it; `outside`, `app-evil` (the root's name as a prefix) and the
 * look-alikes, each holding files marked with `SECRET`.
 */
export function buildLayout(base: string): Layout {
  const root = join(base, "app");
  const outside = join(base, "outside");
  const evil = join(base, "app-evil");
  const files: Record<string, string> = {
    "app/a.txt": "inside\n",
    "app/sub/keep.txt": "keep\n",
    "app/d1/d2/d3/d4/leaf.txt": "leaf\n",
    "outside/secret.txt": `${SECRET}\n`,
    "outside/deep/x.txt": `${SECRET} x\n`,
    "app-evil/secret.txt": `${SECRET} evil\n`,
  };
  for (const name of LOOK_ALIKES) files[`${name}/secret.txt`] = `${SECRET} ${name}\n`;
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), content);
  }
  const links: Record<string, string> = {
    // Directory links out, at depths 0..4, absolute and relative targets.
    lo0: outside,
    "d1/lo1": "../../outside",
    "d1/d2/lo2": outside,
    "d1/d2/d3/lo3": "../../../../outside",
    "d1/d2/d3/d4/lo4": outside,
    // File links out, at depths 0..4.
    lf0: join(outside, "secret.txt"),
    "d1/lf1": "../../outside/secret.txt",
    "d1/d2/lf2": join(outside, "secret.txt"),
    "d1/d2/d3/lf3": "../../../../outside/secret.txt",
    "d1/d2/d3/d4/lf4": "../../../../../outside/secret.txt",
    // Chains that end outside.
    "chain-a": "chain-b",
    "chain-b": "d1/chain-c",
    "d1/chain-c": join(outside, "secret.txt"),
    "chain-dir-a": "d1/chain-dir-b",
    "d1/chain-dir-b": "../lo0",
    "chain-evil": "chain-evil-2",
    "chain-evil-2": "../app-evil/secret.txt",
    "evil-dir": "../app-evil",
    // A relative target that climbs out through `.` and `..`.
    "d1/d2/weird": "./../../../outside/./deep/../secret.txt",
    // The root itself, and a directory inside it.
    toroot: root,
    insub: "d1/d2",
    // Dangling links whose targets would be outside.
    dng0: join(outside, "ghost.txt"),
    "d1/d2/dng2": "../../../outside/ghost-rel.txt",
    "dng-dir": join(outside, "ghost-dir"),
    "dng-chain": "dng0",
    "dng-evil": "../app-evil/ghost.txt",
    [LONG_LINK]: outside,
  };
  for (const [path, target] of Object.entries(links)) symlinkSync(target, join(root, path));
  return { base, root, outside, evil };
}

/**
 * What an attempt must end in. `OUTSIDE_ROOT`: refused as outside. `INVALID_ARGUMENT`: refused
 * as malformed (the row says why that is the right code). `harmless`: on Linux the path is an
 * ordinary name inside the root (`%2e%2e`, a backslash, `~`): it is created there or found
 * missing there, and nothing outside changes.
 */
export type Expected = "OUTSIDE_ROOT" | "INVALID_ARGUMENT" | "harmless";

export interface Escape {
  readonly name: string;
  readonly path: (layout: Layout) => string;
  readonly expect: Expected;
}

const out = (name: string, path: (layout: Layout) => string): Escape => ({
  name,
  path,
  expect: "OUTSIDE_ROOT",
});
const harmless = (name: string, path: string): Escape => ({
  name,
  path: () => path,
  expect: "harmless",
});
const malformed = (name: string, path: (layout: Layout) => string): Escape => ({
  name,
  path,
  expect: "INVALID_ARGUMENT",
});

export const ESCAPES: readonly Escape[] = [
  // `..` segments.
  out("`..` to an outside file", () => "../outside/secret.txt"),
  out("`..` to a new outside file", () => "../outside/new.txt"),
  out("`..` creating directories outside", () => "../outside/made/deeper/new.txt"),
  out("`..` alone", () => ".."),
  out("`..` from four levels down", () => "d1/d2/d3/d4/../../../../../outside/secret.txt"),
  out(
    "`..` past the file system's root",
    (l) => `${"../".repeat(40)}${l.outside.slice(1)}/secret.txt`,
  ),
  out("`..` mixed with `./`", () => "./sub/./../.././outside/./secret.txt"),
  out("a trailing `..`", () => "sub/../.."),
  out("a trailing `../`", () => "sub/../../"),
  out("`..` with empty segments", () => "sub//..//..//outside//secret.txt"),
  out("`..` to a name with a trailing dot", () => "../outside/secret.txt."),
  // Absolute paths.
  out("an absolute outside file", (l) => join(l.outside, "secret.txt")),
  out("an absolute new file in a new outside directory", (l) => join(l.outside, "n", "new.txt")),
  out("the file system's root", () => "/"),
  out("an absolute path through the root, then `..`", (l) => `${l.root}/../outside/secret.txt`),
  out("an absolute path with a doubled leading slash", (l) => `/${l.outside}/secret.txt`),
  out("an absolute path with empty segments", (l) => `${l.base}//outside///secret.txt`),
  // The sibling sharing the root's name as a prefix.
  out("app-evil, absolute", (l) => join(l.evil, "secret.txt")),
  out("app-evil, by `..`", () => "../app-evil/secret.txt"),
  out("a new file in app-evil", () => "../app-evil/new.txt"),
  out("the app-evil directory", (l) => l.evil),
  out("app-evil by `./../`", () => "./../app-evil/./secret.txt"),
  out("the root's path with a suffix and no separator", (l) => `${l.root}.bak/new.txt`),
  out("app-evil through the root's absolute path and `..`", (l) => `${l.root}/../app-evil`),
  // Links to directories outside, at depths 0..4.
  out("a directory link out at depth 0", () => "lo0/secret.txt"),
  out("a directory link out at depth 1 (relative)", () => "d1/lo1/secret.txt"),
  out("a directory link out at depth 2", () => "d1/d2/lo2/secret.txt"),
  out("a directory link out at depth 3 (relative)", () => "d1/d2/d3/lo3/secret.txt"),
  out("a directory link out at depth 4", () => "d1/d2/d3/d4/lo4/secret.txt"),
  out("a new file under a link out at depth 4", () => "d1/d2/d3/d4/lo4/new.txt"),
  out("a directory link out, itself", () => "lo0"),
  out("new directories under a link out", () => "lo0/deep/made/new.txt"),
  // Links to files outside, at depths 0..4.
  out("a file link out at depth 0", () => "lf0"),
  out("a file link out at depth 1 (relative)", () => "d1/lf1"),
  out("a file link out at depth 2", () => "d1/d2/lf2"),
  out("a file link out at depth 3 (relative)", () => "d1/d2/d3/lf3"),
  out("a file link out at depth 4 (relative)", () => "d1/d2/d3/d4/lf4"),
  // Chains, and relative targets that climb out.
  out("a chain of three links ending outside", () => "chain-a"),
  out("a chain of directory links ending outside", () => "chain-dir-a/secret.txt"),
  out("a chain ending in app-evil", () => "chain-evil"),
  out("a relative target climbing out through `./` and `..`", () => "d1/d2/weird"),
  out("a relative directory link into app-evil", () => "evil-dir/secret.txt"),
  // `link/..`: the kernel's parent of the link's target, not the link's directory.
  out("`link/..`", () => "lo0/.."),
  out("`link/..` to app-evil", () => "lo0/../app-evil/secret.txt"),
  out("a link to the root, then `../outside`", () => "toroot/../outside/secret.txt"),
  out("a link out at depth 2, then `../outside`", () => "d1/d2/lo2/../outside/secret.txt"),
  out("`..` after a link out, inside its target", () => "lo0/deep/../secret.txt"),
  out("`..` after an inside link, climbing out", () => "insub/../../../outside/secret.txt"),
  // Reads as app/x.txt, is app/d1/x.txt to the kernel: both inside, so not an escape, but a
  // name that stands for another file than it reads as is refused as malformed (roots.ts).
  malformed("`..` after an inside link (reads as one file, is another)", () => "insub/../x.txt"),
  // Dangling links whose targets would be outside: a write must not create them.
  out("a dangling link out", () => "dng0"),
  out("a dangling relative link out at depth 2", () => "d1/d2/dng2"),
  out("a new file under a dangling directory link out", () => "dng-dir/new.txt"),
  out("a chain ending in a dangling link out", () => "dng-chain"),
  out("a dangling link into app-evil", () => "dng-evil"),
  // NUL bytes anywhere.
  out("a NUL byte first", () => "\0../outside/secret.txt"),
  out("a NUL byte inside a directory name", () => "su\0b/keep.txt"),
  out("a NUL byte after a link's name", () => "lo0\0/secret.txt"),
  out("a lone NUL byte", () => "\0"),
  out("a NUL byte after an absolute outside path", (l) => `${join(l.outside, "secret.txt")}\0`),
  // Very long names.
  out("a 255-byte link name pointing out", () => `${LONG_LINK}/secret.txt`),
  out("4200 bytes of `./` then `..`", () => `${"./".repeat(2100)}../outside/secret.txt`),
  out("a 300-byte name, then `..` out", () => `${"x".repeat(300)}/../../outside/secret.txt`),
  out("a 300-byte name outside", () => `../outside/${"y".repeat(300)}`),
  out(
    "a 4900-byte absolute path folding out",
    (l) => `${l.root}/${"sub/../".repeat(700)}../outside/secret.txt`,
  ),
  // Names too long for the file system, inside the root: ENAMETOOLONG is a malformed path.
  malformed("a 256-byte name inside", () => "x".repeat(256)),
  malformed("a 128-character, 256-byte name inside", () => "\u00e9".repeat(128)),
  malformed("a 4140-byte path inside", () => `${"dddddddd/".repeat(460)}x`),
  // Unicode look-alikes of the root's name (each a real directory next to it).
  out("a Cyrillic а in the root's name", (l) => `${l.base}/\u0430pp/secret.txt`),
  out("a Cyrillic а, by `..`, new file", () => "../\u0430pp/new.txt"),
  out("a fullwidth root name", (l) => `${l.base}/\uff41\uff50\uff50/secret.txt`),
  out("a combining accent after the root's name (NFD)", () => "../app\u0301/secret.txt"),
  out("the precomposed accent (NFC)", () => "../ap\u1e55/secret.txt"),
  out("a zero-width space after the root's name", (l) => `${l.base}/app\u200b/secret.txt`),
  out("the root's name in another case", (l) => `${l.base}/App/secret.txt`),
  // Dots that only look like `..`: ordinary names on Linux.
  harmless("fullwidth dots", "\uff0e\uff0e/outside/secret.txt"),
  harmless("a two-dot leader", "\u2025/outside/secret.txt"),
  harmless("three dots", ".../outside/secret.txt"),
  // Backslashes: part of a name on Linux, not a separator.
  harmless("backslashed `..`", "..\\outside\\secret.txt"),
  out("a backslash after a real `..`", () => "../outside\\secret.txt"),
  harmless("backslashes after a directory", "sub\\..\\..\\outside\\secret.txt"),
  harmless("a Windows drive path", "C:\\..\\outside\\secret.txt"),
  harmless("a Windows device path", "\\\\?\\C:\\outside\\secret.txt"),
  // URL encodings: no decoding happens, so they are names.
  harmless("`%2e%2e`", "%2e%2e/outside/secret.txt"),
  harmless("`%2e%2e%2f` in one name", "%2e%2e%2foutside%2fsecret.txt"),
  harmless("`..%2f`", "..%2f..%2foutside%2fsecret.txt"),
  harmless("a file URL", "file:///etc/passwd"),
  // `~`: no shell expands it.
  harmless("`~`", "~"),
  harmless("`~user`", "~root/secret.txt"),
  out("`~` then `..` out", () => "~/../../outside/secret.txt"),
];

/**
 * One way a tool takes a path; `harmless` is what a harmless name gives (a code, or `ok`). The
 * two that create come last, so one layout serves a whole row.
 */
export interface ToolForm {
  readonly name: string;
  readonly run: (ws: Workspace, path: string) => Promise<unknown>;
  readonly harmless: "ok" | "NOT_FOUND";
  /** Where a successful call put its file (write, rename to). */
  readonly landed?: (result: unknown) => string;
  /**
   * Needs a layout of its own: it creates what an earlier form of the row made at the same
   * path (a directory, a patch's added file), which would find it there.
   */
  readonly fresh?: boolean;
}

/** A patch of one operation on `path` (paths in a patch are one line, trimmed). */
const patchOf = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

/** read_many reports a file's failure in its place: thrown here, as the other tools throw it. */
async function readManyOne(ws: Workspace, path: string): Promise<unknown> {
  const result = await ws.readMany({ paths: [path] });
  const failure = result.files[0]?.error;
  if (failure) throw new FreshfsError(failure.code as FreshfsError["code"], failure.message);
  return result;
}

export const TOOL_FORMS: readonly ToolForm[] = [
  { name: "read", run: (ws, path) => ws.read({ file_path: path }), harmless: "NOT_FOUND" },
  {
    name: "edit",
    run: (ws, path) => ws.edit({ file_path: path, old_string: SECRET, new_string: "pwned" }),
    harmless: "NOT_FOUND",
  },
  {
    name: "multiEdit",
    run: (ws, path) =>
      ws.multiEdit({ file_path: path, edits: [{ old_string: SECRET, new_string: "pwned" }] }),
    harmless: "NOT_FOUND",
  },
  { name: "delete", run: (ws, path) => ws.delete({ file_path: path }), harmless: "NOT_FOUND" },
  {
    name: "rename from",
    run: (ws, path) => ws.rename({ from: path, to: "moved-in.txt" }),
    harmless: "NOT_FOUND",
  },
  {
    name: "glob path",
    run: (ws, path) => ws.glob({ pattern: "**/*", path }),
    harmless: "NOT_FOUND",
  },
  {
    name: "grep path",
    run: (ws, path) => ws.grep({ pattern: ".", path, output_mode: "content" }),
    harmless: "NOT_FOUND",
  },
  {
    name: "find path",
    run: (ws, path) => ws.find({ query: "secret", path }),
    harmless: "NOT_FOUND",
  },
  { name: "read_many", run: readManyOne, harmless: "NOT_FOUND" },
  { name: "stat", run: (ws, path) => ws.stat({ path }), harmless: "NOT_FOUND" },
  { name: "list path", run: (ws, path) => ws.list({ path }), harmless: "NOT_FOUND" },
  {
    name: "apply_patch update",
    run: (ws, path) =>
      ws.applyPatch({
        input: patchOf(`*** Update File: ${path}`, "@@", `-${SECRET}`, "+pwned"),
      }),
    harmless: "NOT_FOUND",
  },
  {
    name: "apply_patch delete",
    run: (ws, path) => ws.applyPatch({ input: patchOf(`*** Delete File: ${path}`) }),
    harmless: "NOT_FOUND",
  },
  {
    name: "apply_patch move from",
    run: (ws, path) =>
      ws.applyPatch({ input: patchOf(`*** Update File: ${path}`, "*** Move to: moved-in.txt") }),
    harmless: "NOT_FOUND",
  },
  {
    name: "write",
    run: (ws, path) => ws.write({ file_path: path, content: "pwned\n" }),
    harmless: "ok",
    landed: (result) => (result as { path: string }).path,
  },
  {
    name: "rename to",
    run: (ws, path) => ws.rename({ from: "a.txt", to: path, overwrite: true }),
    harmless: "ok",
    landed: (result) => (result as { to: string }).to,
  },
  {
    name: "mkdir",
    run: (ws, path) => ws.mkdir({ path }),
    harmless: "ok",
    landed: (result) => (result as { path: string }).path,
    fresh: true,
  },
  {
    name: "apply_patch add",
    run: (ws, path) => ws.applyPatch({ input: patchOf(`*** Add File: ${path}`, "+pwned") }),
    harmless: "ok",
    landed: (result) => (result as { files: { path: string }[] }).files[0]?.path as string,
    fresh: true,
  },
  {
    name: "apply_patch move to",
    run: (ws, path) =>
      ws.applyPatch({ input: patchOf("*** Update File: sub/keep.txt", `*** Move to: ${path}`) }),
    harmless: "ok",
    landed: (result) => (result as { files: { path: string }[] }).files[0]?.path as string,
    fresh: true,
  },
];

/**
 * Every entry under `dir` (links not followed): type, mode, owner, bytes or link target. Synchronous:
 * a few dozen tiny entries, read between calls, many times per test.
 */
export function snapshot(
  dir: string,
  skip: (relative: string) => boolean = () => false,
): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (path: string, rel: string): void => {
    if (rel !== "" && skip(rel)) return;
    const stats = lstatSync(path);
    const mode = `${(stats.mode & 0o7777).toString(8)} ${stats.uid}:${stats.gid}`;
    if (stats.isSymbolicLink()) {
      entries[rel] = `link -> ${readlinkSync(path)}`;
    } else if (stats.isDirectory()) {
      entries[rel] = `dir ${mode}`;
      for (const name of readdirSync(path).sort()) {
        walk(join(path, name), rel === "" ? name : `${rel}/${name}`);
      }
    } else {
      entries[rel] = `file ${mode} ${readFileSync(path).toString("base64")}`;
    }
  };
  walk(dir, "");
  return entries;
}

/** Everything under the base but the root: what no attempt may change. */
export function outsideSnapshot(layout: Layout): Record<string, string> {
  return snapshot(layout.base, (rel) => rel === "app");
}

/** `path` (absolute) lands inside `root`, as written and as the kernel resolves it. */
export function landsInside(path: string, root: string): boolean {
  const inside = (p: string) => p === root || p.startsWith(`${root}${sep}`);
  if (!inside(path)) return false;
  let probe = path;
  // The nearest existing ancestor decides where a missing path would land.
  while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe);
  return inside(realpathSync(probe));
}

/** One attempt's outcome: a code (or `ok`), and whether anything outside the root was touched. */
export interface Outcome {
  readonly code: string;
  readonly escaped: string | undefined;
  readonly error: unknown;
  readonly result: unknown;
}

/** The first entry that differs between two snapshots, said for a report. */
export function differs(a: Record<string, string>, b: Record<string, string>): string | undefined {
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (a[key] !== b[key]) {
      return `${key || "(base)"}: ${a[key] === undefined ? "created" : b[key] === undefined ? "removed" : "changed"}`;
    }
  }
  return undefined;
}

/** Runs one call and says how it ended and whether it escaped. */
export async function attempt(
  layout: Layout,
  call: () => Promise<unknown>,
  landed?: (result: unknown) => string,
): Promise<Outcome> {
  const before = outsideSnapshot(layout);
  let result: unknown;
  let error: unknown;
  let code = "ok";
  try {
    result = await call();
  } catch (thrown) {
    error = thrown;
    code = thrown instanceof FreshfsError ? thrown.code : `not a FreshfsError: ${String(thrown)}`;
  }
  let escaped = differs(before, outsideSnapshot(layout));
  const text = (result as { text?: unknown } | undefined)?.text;
  if (!escaped && typeof text === "string" && text.includes(SECRET)) {
    escaped = "the result shows an outside file's content";
  }
  if (!escaped && result !== undefined && landed && !landsInside(landed(result), layout.root)) {
    escaped = `the file landed at ${landed(result)}`;
  }
  return { code, escaped, error, result };
}

// ---------------------------------------------------------------------------------------------
// The stress run.

type Tally = Record<string, number>;

function bump(tally: Tally, key: string): void {
  tally[key] = (tally[key] ?? 0) + 1;
}

function tallyLines(tally: Tally): string[] {
  return Object.entries(tally)
    .sort((a, b) => b[1] - a[1])
    .map(([key, count]) => `| ${key} | ${count} |`);
}

async function freshLayout(parent: string): Promise<Layout> {
  return buildLayout(await mkdtemp(join(parent, "l-")));
}

/** The table: every row against every tool form, each on a fresh layout. */
async function runTable(parent: string): Promise<{ lines: string[]; escapes: string[] }> {
  const tally: Tally = {};
  const escapes: string[] = [];
  const unexpected: string[] = [];
  let attempts = 0;
  for (const row of ESCAPES) {
    for (const form of TOOL_FORMS) {
      const layout = await freshLayout(parent);
      const ws = new Workspace({ roots: layout.root, policy: "warn" });
      const outcome = await attempt(layout, () => form.run(ws, row.path(layout)), form.landed);
      attempts++;
      bump(tally, outcome.code);
      if (outcome.escaped) escapes.push(`${row.name} / ${form.name}: ${outcome.escaped}`);
      const wanted = row.expect === "harmless" ? form.harmless : row.expect;
      if (outcome.code !== wanted) {
        unexpected.push(`${row.name} / ${form.name}: ${outcome.code}, expected ${wanted}`);
      }
      await rm(layout.base, { recursive: true, force: true });
    }
  }
  return {
    lines: [
      `${ESCAPES.length} escape paths x ${TOOL_FORMS.length} tool forms = ${attempts} attempts; escapes: **${escapes.length}**.`,
      "",
      "| outcome | attempts |",
      "| --- | --- |",
      ...tallyLines(tally),
      "",
      unexpected.length === 0
        ? "Every attempt ended with the expected code."
        : `Outcomes other than the expected code (${unexpected.length}):\n\n${unexpected
            .slice(0, 40)
            .map((line) => `- ${line}`)
            .join("\n")}`,
    ],
    escapes,
  };
}

const SEGMENTS = [
  "..",
  "..",
  ".",
  "",
  "sub",
  "a.txt",
  "secret.txt",
  "new.txt",
  "lo0",
  "d1",
  "d2",
  "lo1",
  "toroot",
  "insub",
  "dng0",
  "dng-dir",
  "chain-dir-a",
  "app",
  "app-evil",
  "outside",
  ...LOOK_ALIKES,
];

/** Random paths from hostile segments, joined with `/` and `\`, against write and read. */
async function runFuzz(
  parent: string,
  attempts: number,
  seed: number,
): Promise<{ lines: string[]; escapes: string[] }> {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const tally: Tally = {};
  const escapes: string[] = [];
  let layout = await freshLayout(parent);
  let ws = new Workspace({ roots: layout.root, policy: "warn" });
  let rebuilt = 0;
  for (let i = 0; i < attempts; i++) {
    const count = 1 + Math.floor(random() * 6);
    let path = "";
    for (let s = 0; s < count; s++) {
      if (s > 0) path += random() < 0.8 ? "/" : "\\";
      path += pick(SEGMENTS);
    }
    const start = random();
    if (start < 0.15) path = `${layout.root}/${path}`;
    else if (start < 0.25) path = `${layout.base}/${path}`;
    const write = i % 2 === 0;
    const outcome = await attempt(
      layout,
      () =>
        write
          ? ws.write({ file_path: path, content: `fuzz ${i}\n` })
          : ws.read({ file_path: path }),
      write ? (result) => (result as { path: string }).path : undefined,
    );
    bump(tally, `${write ? "write" : "read"} ${outcome.code}`);
    if (outcome.escaped) {
      escapes.push(`${write ? "write" : "read"} ${JSON.stringify(path)}: ${outcome.escaped}`);
    }
    // Writes fill the root with names; a fresh layout now and then keeps the links in place.
    if (outcome.escaped || (i + 1) % 500 === 0) {
      await rm(layout.base, { recursive: true, force: true });
      layout = await freshLayout(parent);
      ws = new Workspace({ roots: layout.root, policy: "warn" });
      rebuilt++;
    }
  }
  await rm(layout.base, { recursive: true, force: true });
  return {
    lines: [
      `${attempts} random paths (seed ${seed}; 1-6 segments from ${SEGMENTS.length}, joined with / or \\, 25% made absolute), alternating write and read, ${rebuilt} fresh layouts; escapes: **${escapes.length}**.`,
      "",
      "| outcome | attempts |",
      "| --- | --- |",
      ...tallyLines(tally),
    ],
    escapes,
  };
}

/** Swaps `app/sub` for a link to `outside` and back, as fast as it can, until `end`. */
function directorySwapper(sub: string, outside: string, durationMs: number): string {
  return `
const fs = require("fs");
const sub = ${JSON.stringify(sub)}, away = sub + "-real", out = ${JSON.stringify(outside)};
const end = Date.now() + ${durationMs};
const t = (f) => { try { f(); } catch {} };
let swaps = 0;
while (Date.now() < end) {
  t(() => fs.renameSync(sub, away));
  t(() => fs.symlinkSync(out, sub));
  t(() => fs.unlinkSync(sub));
  t(() => fs.rmSync(sub, { recursive: true, force: true }));
  t(() => fs.renameSync(away, sub));
  swaps++;
}
console.log(swaps);`;
}

/**
 * Swaps `app/sub/f.txt` for a link to `outside/f.txt` and back, each by a rename over it (so
 * the name is never missing), as fast as it can, until `end`.
 */
function fileSwapper(file: string, outsideFile: string, durationMs: number): string {
  return `
const fs = require("fs");
const file = ${JSON.stringify(file)}, out = ${JSON.stringify(outsideFile)};
const end = Date.now() + ${durationMs};
const t = (f) => { try { f(); } catch {} };
let swaps = 0;
while (Date.now() < end) {
  t(() => fs.symlinkSync(out, file + ".l"));
  t(() => fs.renameSync(file + ".l", file));
  t(() => fs.writeFileSync(file + ".r", "inside f\\n"));
  t(() => fs.renameSync(file + ".r", file));
  swaps++;
}
console.log(swaps);`;
}

/**
 * Another process swaps `app/sub` (or `app/sub/f.txt`) for a link to `outside` (or
 * `outside/f.txt`) and back as fast as it can, while the tools work on `sub/f.txt`. Anything
 * read from, created in, changed in or removed from `outside` is an escape.
 */
async function runSwapRace(
  parent: string,
  durationMs: number,
  swapped: "directory" | "file",
): Promise<{ lines: string[]; escapes: string[] }> {
  const layout = await freshLayout(parent);
  const sub = join(layout.root, "sub");
  const target = join(layout.outside, "f.txt");
  const original = `${SECRET} f\n`;
  await writeFile(join(sub, "f.txt"), "inside f\n");
  await writeFile(target, original);
  const initialNames = new Set(await readdir(layout.outside));
  const script =
    swapped === "directory"
      ? directorySwapper(sub, layout.outside, durationMs)
      : fileSwapper(join(sub, "f.txt"), target, durationMs);
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let swaps = "";
  child.stdout.on("data", (chunk: Buffer) => {
    swaps += chunk.toString();
  });
  let running = true;
  const exited = new Promise<void>((resolve) => {
    child.on("exit", () => {
      running = false;
      resolve();
    });
  });
  const ws = new Workspace({ roots: layout.root, policy: "warn" });
  const tally: Tally = {};
  const kinds: Tally = {};
  const escapes: string[] = [];
  const tools = [
    "read",
    "write",
    "edit",
    "delete",
    "rename from",
    "rename to",
    "grep",
    "grep file",
    "grep root",
  ] as const;
  let attempts = 0;
  while (running) {
    const tool = tools[attempts % tools.length] as (typeof tools)[number];
    attempts++;
    const call = (): Promise<unknown> => {
      switch (tool) {
        case "read":
          return ws.read({ file_path: "sub/f.txt" });
        case "write":
          return ws.write({ file_path: "sub/f.txt", content: `w${attempts}\n` });
        case "edit":
          return ws.edit({ file_path: "sub/f.txt", old_string: "\n", new_string: "e\n" });
        case "delete":
          return ws.delete({ file_path: "sub/f.txt" });
        case "rename from":
          return ws.rename({ from: "sub/f.txt", to: `in-${attempts}.txt` });
        case "rename to":
          return ws
            .write({ file_path: `src-${attempts}.txt`, content: "moving\n" })
            .then(() => ws.rename({ from: `src-${attempts}.txt`, to: "sub/moved.txt" }));
        case "grep":
          // Not the secret itself: "No matches for <pattern>" would show it without a leak.
          return ws.grep({ pattern: ".", path: "sub", output_mode: "content" });
        case "grep file":
          return ws.grep({ pattern: ".", path: "sub/f.txt", output_mode: "content" });
        case "grep root":
          // The walk and the search pass through `sub` (the root itself is never swapped).
          return ws.grep({ pattern: ".", output_mode: "content" });
      }
    };
    const outcome = await attempt(layout, call);
    bump(tally, `${tool} ${outcome.code}`);
    if (outcome.escaped) {
      const kind = outcome.escaped.replace(/freshfs-[0-9a-f]{12}\.tmp/, "freshfs-<12 hex>.tmp");
      bump(kinds, `${tool}: ${kind}`);
      escapes.push(`${tool}: ${outcome.escaped}`);
      // Put outside back as it was, for the next attempt's comparison.
      for (const name of await readdir(layout.outside)) {
        if (!initialNames.has(name)) {
          await rm(join(layout.outside, name), { recursive: true, force: true });
        }
      }
      await writeFile(target, original);
    }
  }
  await exited;
  await rm(layout.base, { recursive: true, force: true });
  return {
    lines: [
      `${(durationMs / 1000).toFixed(0)} s against a process swapping ${swapped === "directory" ? "`app/sub` for a link to `outside`" : "`app/sub/f.txt` for a link to `outside/f.txt`"} (${swaps.trim()} swaps): ${attempts} tool calls on \`sub/f.txt\`; escapes: **${escapes.length}**.`,
      "",
      "| tool outcome | calls |",
      "| --- | --- |",
      ...tallyLines(tally),
      "",
      ...(escapes.length === 0
        ? ["No escapes."]
        : ["| escape | times |", "| --- | --- |", ...tallyLines(kinds)]),
    ],
    escapes,
  };
}

export async function run(): Promise<string> {
  const parent = await realpath(await mkdtemp(join(tmpdir(), "freshfs-stress-escapes-")));
  try {
    const table = await runTable(parent);
    const fuzz = await runFuzz(parent, 4000, 7);
    const race = await runSwapRace(parent, 20_000, "directory");
    const fileRace = await runSwapRace(parent, 20_000, "file");
    const total =
      table.escapes.length + fuzz.escapes.length + race.escapes.length + fileRace.escapes.length;
    return [
      `Escapes found: **${total}** (table ${table.escapes.length}, fuzz ${fuzz.escapes.length}, directory swap race ${race.escapes.length}, file swap race ${fileRace.escapes.length}).`,
      "",
      "### The table",
      "",
      ...table.lines,
      ...(table.escapes.length > 0 ? ["", ...table.escapes.map((e) => `- ${e}`)] : []),
      "",
      "### Random paths",
      "",
      ...fuzz.lines,
      ...(fuzz.escapes.length > 0 ? ["", ...fuzz.escapes.slice(0, 20).map((e) => `- ${e}`)] : []),
      "",
      "### A directory swapped for a link out while the tools run",
      "",
      ...race.lines,
      "",
      "### A file swapped for a link out while the tools run",
      "",
      ...fileRace.lines,
    ].join("\n");
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

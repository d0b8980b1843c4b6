/**
 * Gitignore fuzzing, shared by test/scan/ignore-fuzz.test.ts and
 * stress/ignore-fuzz.ts: fast-check arbitraries for ignore files and small trees, and the oracle
 * that builds one generated case in a real repository and compares freshfs with git.
 *
 * A case is a tree of files, directories and a few symlinks, named from a small alphabet (so
 * that patterns hit), a root `.gitignore`, up to three nested ones (sometimes a symlink, which git
 * refuses to read), sometimes `.git/info/exclude`, sometimes a global excludes file (named by
 * `core.excludesFile` in the repository's config), sometimes `core.ignoreCase`. Most patterns are
 * bent from the tree's own paths (a `?`, a `*`, a class, an escape, a case change), the rest
 * random. Everything stays untracked, no name is `.git` or `.ignore`, and the walk starts at the
 * top of the work tree: the places where freshfs follows ripgrep rather than git (README, "The
 * scan cache") never arise.
 *
 * Two levels are compared: every path's verdict and deciding line (`explainPath` against
 * `git check-ignore --no-index -v`), and the listing (`forceRescan` files against
 * `git ls-files -co --exclude-standard`).
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative, resolve } from "node:path";
import fc from "fast-check";
import { explainPath, forceRescan } from "../../src/index.js";
import { checkIgnore, isolatedGitEnv, type TempRepo } from "./git.js";

/** One line of an ignore file and the end it is written with. */
export interface IgnoreLine {
  readonly text: string;
  readonly crlf: boolean;
}

export interface IgnoreFileSpec {
  readonly lines: readonly IgnoreLine[];
  /**
   * The last line ends with its line end; else the file stops right after its text (after a
   * lone CR, for a CRLF last line).
   */
  readonly finalNewline: boolean;
  /** Starts with a UTF-8 byte order mark (git skips it). */
  readonly bom: boolean;
}

export type EntryKind = "file" | "dir" | "link";

export interface TreeEntry {
  /** Relative to the work tree, `/`-separated. */
  readonly path: string;
  readonly kind: EntryKind;
  /** A link's target: "." (a directory), a sibling or nothing; neither git nor the walker follows. */
  readonly target?: string | undefined;
}

export interface GitignoreSpec {
  /** The directory holding it ("" for the top). */
  readonly dir: string;
  readonly file: IgnoreFileSpec;
  /** `.gitignore` is a symlink to `gitignore.txt` beside it, holding `file`: never read. */
  readonly symlink: boolean;
}

export interface IgnoreCase {
  /** Every entry of the tree (parent directories included), sorted by path. */
  readonly tree: readonly TreeEntry[];
  /** `.gitignore` files, the top one first. */
  readonly gitignores: readonly GitignoreSpec[];
  /** `.git/info/exclude`, if any. */
  readonly exclude: IgnoreFileSpec | undefined;
  /** A global excludes file (`core.excludesFile`, kept in `.git/fuzz-excludes`), if any. */
  readonly excludesFile: IgnoreFileSpec | undefined;
  /** `core.ignoreCase = true` in the repository's config. */
  readonly ignoreCase: boolean;
}

// ---------------------------------------------------------------------------------------------
// Generators

/** `arb` in `weight` draws of `outOf`, else null; shrinks to null. */
function sometimes<T>(arb: fc.Arbitrary<T>, weight: number, outOf: number): fc.Arbitrary<T | null> {
  return fc
    .tuple(fc.integer({ min: 0, max: outOf - 1 }), arb)
    .map(([draw, value]) => (draw >= outOf - weight ? value : null));
}

/** True once in `n` draws; shrinks to false, so a counterexample keeps only what it needs. */
function rarely(n: number): fc.Arbitrary<boolean> {
  return fc.integer({ min: 0, max: n - 1 }).map((draw) => draw === n - 1);
}

/** Names the tree is made of: plain ones often, awkward ones (escapes, Unicode, spaces) less. */
const PLAIN_NAMES = ["a", "b", "ab", "a.b", "b.c", "x.log", "a-b", "A"] as const;
const AWKWARD_NAMES = [
  ".h",
  "é",
  "日本",
  "!a",
  "#a",
  "a ",
  " a",
  "a b",
  "c*",
  "[a]",
  "a\\b",
  "ä.log",
  "Ab",
] as const;

/** Four plain names to one awkward one; shrinks towards "a" (an index, not a oneof branch). */
const NAME_POOL = [
  ...PLAIN_NAMES,
  ...PLAIN_NAMES,
  ...PLAIN_NAMES,
  ...PLAIN_NAMES,
  ...AWKWARD_NAMES,
];
const nameArb = fc.nat({ max: NAME_POOL.length - 1 }).map((i) => NAME_POOL[i] as string);

const treeArb = fc.array(
  fc.record({
    path: fc.array(nameArb, { minLength: 1, maxLength: 4 }).map((names) => names.join("/")),
    kind: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<EntryKind>("file", "dir") },
      { weight: 1, arbitrary: fc.constant<EntryKind>("link") },
    ),
    target: fc.constantFrom(".", "a", "none"),
  }),
  { minLength: 5, maxLength: 40 },
);

/** A name as a pattern: as is, fully escaped, or with an ordinary character escaped. */
function escapeName(name: string, mode: "none" | "special" | "all"): string {
  if (mode === "none") return name;
  if (mode === "all") return [...name].map((c) => `\\${c}`).join("");
  let out = name.replace(/[*?[\\]/g, (c) => `\\${c}`);
  if (out.startsWith("!") || out.startsWith("#")) out = `\\${out}`;
  if (out.endsWith(" ")) out = `${out.slice(0, -1)}\\ `;
  return out;
}

const literalSegmentArb = fc
  .tuple(nameArb, fc.constantFrom<"none" | "special" | "all">("none", "none", "special", "all"))
  .map(([name, mode]) => escapeName(name, mode));

/** Pieces of a glob segment: literal fragments and wildmatch's constructs. */
const FRAGMENTS = ["a", "b", "A", ".", "-", "log", "é", "x", ".b", "日"] as const;
const GLOB_PARTS = [
  "*",
  "*",
  "?",
  "??",
  "[ab]",
  "[!a]",
  "[^a]",
  "[a-c]",
  "[A-Z]",
  "[]a]",
  "[!]a]",
  "[[:alpha:]]",
  "[[:upper:]]",
  "[.]",
  "[é]",
  "[-a]",
  "[a-]",
  "\\*",
  "\\?",
  "\\[",
  "\\a",
  "[a",
  "**",
  "[[:space:]]",
  "[[:lower:]]",
  "[[:digit:]x]",
  "[[:alpha:]-z]",
  "[[:foo:]]",
  "[[:]",
  "[[]",
  "[\\]]",
  "[\\a-c]",
  "[a-\\z]",
  "[a-c-e]",
  "[z-a]",
  "[A-z]",
  "[!-]",
  "[]-a]",
] as const;

const globSegmentArb = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...FRAGMENTS) },
      { weight: 3, arbitrary: fc.constantFrom(...GLOB_PARTS) },
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((parts) => parts.join(""));

const segmentArb = fc.oneof(
  { weight: 5, arbitrary: literalSegmentArb },
  { weight: 5, arbitrary: globSegmentArb },
  { weight: 1, arbitrary: fc.constant("**") },
  { weight: 1, arbitrary: fc.constant("*") },
);

const negatedArb = rarely(4);
const tailArb = fc.constantFrom("", "", "", "", "/", "/", "/**", "/*");
const spacesArb = fc.constantFrom("", "", "", "", "", " ", "  ", "\\ ", "\\  ", " \\ ", "\\ \\ ");

/** A pattern line built from parts: `!`, an anchor, 1-3 segments, a tail, trailing spaces. */
const randomPatternArb = fc
  .record({
    negated: negatedArb,
    lead: fc.constantFrom("", "", "", "/", "**/"),
    segments: fc.array(segmentArb, { minLength: 1, maxLength: 3 }),
    tail: tailArb,
    spaces: spacesArb,
  })
  .map(
    ({ negated, lead, segments, tail, spaces }) =>
      `${negated ? "!" : ""}${lead}${segments.join("/")}${tail}${spaces}`,
  );

/** How a path component becomes a pattern segment. */
const MUTATIONS = [
  "keep",
  "keep",
  "escape",
  "question",
  "star-head",
  "star-tail",
  "class",
  "negated-class",
  "range",
  "star",
  "globstar",
  "case",
  "backslash",
] as const;
type Mutation = (typeof MUTATIONS)[number];

/** `name` turned into a segment that may or may not still match it (git decides). */
function mutate(name: string, mutation: Mutation, position: number): string {
  const chars = [...name];
  const i = position % chars.length;
  const c = chars[i] as string;
  const around = (middle: string) =>
    escapeName(chars.slice(0, i).join(""), "special") +
    middle +
    escapeName(chars.slice(i + 1).join(""), "special");
  switch (mutation) {
    case "keep":
      return name;
    case "escape":
      return escapeName(name, "special");
    case "question":
      return around("?");
    case "star-head":
      return `*${escapeName(chars.slice(i).join(""), "special")}`;
    case "star-tail":
      return `${escapeName(chars.slice(0, i + 1).join(""), "special")}*`;
    case "class":
      return around(`[${c === "]" ? "]" : c}x]`);
    case "negated-class":
      return around(`[!${c === "b" ? "a" : "b"}]`);
    case "range":
      return around(c >= "a" && c <= "z" ? "[a-z]" : c >= "A" && c <= "Z" ? "[A-Z]" : "[ -~]");
    case "star":
      return "*";
    case "globstar":
      return "**";
    case "case":
      return around(c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
    case "backslash":
      return around(`\\${c}`);
  }
}

/**
 * A pattern aimed at the tree, before the tree is known: which path (an index, taken modulo the
 * paths below the ignore file), which part of it, how each component is bent, and the rest of
 * the line. Kept apart from the tree so that fast-check shrinks the tree and the lines alike.
 */
interface DerivedDraft {
  readonly pick: number;
  readonly from: number;
  readonly length: number;
  readonly mutations: readonly (readonly [Mutation, number])[];
  readonly negated: boolean;
  readonly lead: string;
  readonly tail: string;
  readonly spaces: string;
}

const derivedDraftArb: fc.Arbitrary<DerivedDraft> = fc.record({
  pick: fc.nat(),
  from: fc.nat(),
  length: fc.nat(),
  mutations: fc.array(fc.tuple(fc.constantFrom(...MUTATIONS), fc.nat()), {
    minLength: 4,
    maxLength: 4,
  }),
  negated: negatedArb,
  lead: fc.constantFrom("", "", "/", "**/"),
  tail: tailArb,
  spaces: spacesArb,
});

/** The pattern `draft` makes of one of `paths` (relative to the ignore file's directory). */
function resolveDerived(draft: DerivedDraft, paths: readonly string[]): string {
  const path = paths.length === 0 ? "a" : (paths[draft.pick % paths.length] as string);
  const names = path.split("/");
  const start = draft.from % names.length;
  const end = start + 1 + (draft.length % (names.length - start));
  const segments = names
    .slice(start, end)
    .map((name, i) => mutate(name, ...(draft.mutations[i] ?? (["keep", 0] as const))));
  return `${draft.negated ? "!" : ""}${draft.lead}${segments.join("/")}${draft.tail}${draft.spaces}`;
}

/** Whole lines worth trying as they are: edge cases of the syntax. */
const SPECIAL_LINES = [
  "*",
  "**",
  "/",
  "!",
  "!/",
  "*/",
  "!*/",
  "/*",
  "**/",
  "/**",
  "!**",
  "**/**",
  "a/**/b",
  "***",
  "a**",
  "**a",
  "\\",
  "a\\",
  " a",
  "\\#a",
  "\\!a",
  "!\\!a",
  "!#a",
  "\\ ",
  "a\\ \\ ",
  "\\a\\ ",
  "a\\/b",
  "**\\/a",
  "a/**\\/b",
  "a/**/",
  "**/a/**",
  "/**/a",
  "!a/",
  "a/*/",
  "a//",
  "//a",
  "./a",
  "a/./b",
  "../a",
  "a/../a",
  "a\t",
  "a\r",
] as const;
/** Comments and blank lines. */
const COMMENT_LINES = ["", "", "   ", "#", "# comment", "#a", "#!a"] as const;

/** A line as drawn: its text, or a pattern to aim at the tree. */
type LineDraft = string | DerivedDraft;

const lineDraftArb: fc.Arbitrary<LineDraft> = fc.oneof(
  { weight: 10, arbitrary: derivedDraftArb },
  { weight: 3, arbitrary: randomPatternArb },
  { weight: 1, arbitrary: fc.constantFrom(...SPECIAL_LINES) },
  { weight: 1, arbitrary: fc.constantFrom(...COMMENT_LINES) },
);

interface IgnoreFileDraft {
  readonly lines: readonly { readonly text: LineDraft; readonly crlf: boolean }[];
  readonly finalNewline: boolean;
  readonly bom: boolean;
}

/** 1-8 lines, LF or CRLF (mixed, even), with or without a final newline, rarely a BOM. */
const ignoreFileDraftArb: fc.Arbitrary<IgnoreFileDraft> = fc.record({
  lines: fc.array(fc.record({ text: lineDraftArb, crlf: rarely(4) }), {
    minLength: 1,
    maxLength: 8,
  }),
  finalNewline: rarely(5).map((missing) => !missing),
  bom: rarely(10),
});

function resolveFile(draft: IgnoreFileDraft, paths: readonly string[]): IgnoreFileSpec {
  return {
    lines: draft.lines.map(({ text, crlf }) => ({
      text: typeof text === "string" ? text : resolveDerived(text, paths),
      crlf,
    })),
    finalNewline: draft.finalNewline,
    bom: draft.bom,
  };
}

/**
 * An ignore file of 1-8 lines: patterns (mostly aimed at `paths`, relative to its directory),
 * edge cases of the syntax, comments and blank lines; LF or CRLF, with or without a final
 * newline.
 */
export function ignoreFileArb(paths: readonly string[] = []): fc.Arbitrary<IgnoreFileSpec> {
  return ignoreFileDraftArb.map((draft) => resolveFile(draft, paths));
}

/** The paths of `tree` below `dir` ("" for all), relative to it. */
function pathsUnder(tree: readonly TreeEntry[], dir: string): string[] {
  if (dir === "") return tree.map((entry) => entry.path);
  return tree
    .filter((entry) => entry.path.startsWith(`${dir}/`))
    .map((entry) => entry.path.slice(dir.length + 1));
}

/**
 * A whole case: a tree, a root `.gitignore`, up to three nested ones in its directories (the
 * busier a directory, the likelier, and top-level ones most), maybe `info/exclude`, a global
 * excludes file and `core.ignoreCase`.
 */
export const ignoreCaseArb: fc.Arbitrary<IgnoreCase> = fc
  .record({
    entries: treeArb,
    root: ignoreFileDraftArb,
    rootSymlink: rarely(20),
    nested: fc.array(
      fc.record({
        pick: fc.nat(),
        top: rarely(3).map((any) => !any),
        file: ignoreFileDraftArb,
        symlink: rarely(10),
      }),
      { maxLength: 3 },
    ),
    exclude: sometimes(ignoreFileDraftArb, 2, 3),
    excludesFile: sometimes(ignoreFileDraftArb, 1, 3),
    ignoreCase: rarely(8),
  })
  .map(({ entries, root, rootSymlink, nested, exclude, excludesFile, ignoreCase }) => {
    const tree = normaliseTree(entries);
    const all = pathsUnder(tree, "");
    // A directory once for every path below it, so that busy directories are picked more.
    const tops: string[] = [];
    const parents: string[] = [];
    for (const { path } of tree) {
      const slash = path.lastIndexOf("/");
      if (slash === -1) continue;
      tops.push(path.slice(0, path.indexOf("/")));
      parents.push(path.slice(0, slash));
    }
    const gitignores: GitignoreSpec[] = [
      { dir: "", file: resolveFile(root, all), symlink: rootSymlink },
    ];
    for (const { pick, top, file, symlink } of nested) {
      const pool = top ? tops : parents;
      const dir = pool[pick % Math.max(pool.length, 1)];
      if (dir === undefined || gitignores.some((other) => other.dir === dir)) continue;
      gitignores.push({ dir, file: resolveFile(file, pathsUnder(tree, dir)), symlink });
    }
    const value: IgnoreCase = {
      tree,
      gitignores,
      exclude: exclude === null ? undefined : resolveFile(exclude, all),
      excludesFile: excludesFile === null ? undefined : resolveFile(excludesFile, all),
      ignoreCase,
    };
    // fast-check prints a counterexample with this.
    return Object.assign(value, { [fc.toStringMethod]: () => describeCase(value) });
  });

/** Parents become directories, and so does an entry that something sits under; sorted, unique. */
function normaliseTree(entries: readonly TreeEntry[]): TreeEntry[] {
  const kinds = new Map<string, TreeEntry>();
  for (const entry of entries) {
    const names = entry.path.split("/");
    for (let i = 1; i < names.length; i++) {
      const path = names.slice(0, i).join("/");
      kinds.set(path, { path, kind: "dir" });
    }
    if (kinds.get(entry.path)?.kind !== "dir") {
      const { path, kind, target } = entry;
      kinds.set(path, kind === "link" ? { path, kind, target } : { path, kind });
    }
  }
  return [...kinds.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** The bytes of an ignore file, as written to disk. */
export function renderIgnoreFile(spec: IgnoreFileSpec): string {
  let text = spec.bom ? "\uFEFF" : "";
  spec.lines.forEach((line, i) => {
    const last = i === spec.lines.length - 1;
    text += line.text;
    if (!last || spec.finalNewline) text += line.crlf ? "\r\n" : "\n";
    else if (line.crlf) text += "\r";
  });
  return text;
}

function inDir(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** A tree entry in messages: a directory ends with "/", a link with "@" (and "->" its target). */
function label(entry: TreeEntry, target = false): string {
  if (entry.kind === "dir") return `${entry.path}/`;
  if (entry.kind === "file") return entry.path;
  return target ? `${entry.path}@->${entry.target ?? "?"}` : `${entry.path}@`;
}

/** A case as text: the ignore files (JSON strings, so CR and spaces show) and the tree. */
export function describeCase(c: IgnoreCase): string {
  const out: string[] = [];
  for (const { dir, file, symlink } of c.gitignores) {
    const link = symlink ? ` (a symlink to ${inDir(dir, "gitignore.txt")})` : "";
    out.push(`${inDir(dir, ".gitignore")}${link}: ${JSON.stringify(renderIgnoreFile(file))}`);
  }
  if (c.exclude) out.push(`.git/info/exclude: ${JSON.stringify(renderIgnoreFile(c.exclude))}`);
  if (c.excludesFile) {
    const text = JSON.stringify(renderIgnoreFile(c.excludesFile));
    out.push(`core.excludesFile = .git/fuzz-excludes: ${text}`);
  }
  if (c.ignoreCase) out.push("core.ignoreCase = true");
  out.push(`tree: ${c.tree.map((entry) => JSON.stringify(label(entry, true))).join(" ")}`);
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------
// The oracle

export interface Disagreement {
  readonly level: "rule" | "listing";
  readonly path: string;
  readonly git: string;
  readonly freshfs: string;
}

/** Where a deciding line came from. */
export type DecidingSource =
  | "top .gitignore"
  | "nested .gitignore"
  | "info/exclude"
  | "excludesFile";

export interface CaseOutcome {
  /** Paths whose verdict and deciding line were compared (tree entries and ignore files). */
  readonly verdicts: number;
  /** Of those, how many git ignores. */
  readonly ignored: number;
  /** Of those, how many a negation re-included. */
  readonly reincluded: number;
  /** Files and links in the work tree, compared at the listing level. */
  readonly files: number;
  /** Verdicts by the source of git's deciding line. */
  readonly decidedBy: Record<DecidingSource, number>;
  readonly disagreements: readonly Disagreement[];
}

export interface CheckOptions {
  /**
   * Runs after git has answered and before freshfs is asked: a test of the oracle itself
   * changes the tree here, and every disagreement that follows must be reported.
   */
  readonly betweenGitAndFreshfs?: ((root: string) => void) | undefined;
}

// The walk reads HOME and XDG_CONFIG_HOME from process.env: while any check is listing,
// process.env is an isolated one (every FuzzRepo's home is empty, so any of them will do).
let isolatedListings = 0;
let savedEnv: NodeJS.ProcessEnv | undefined;

async function withEnv<T>(env: NodeJS.ProcessEnv, body: () => Promise<T>): Promise<T> {
  if (isolatedListings++ === 0) {
    savedEnv = process.env;
    process.env = env;
  }
  try {
    return await body();
  } finally {
    if (--isolatedListings === 0 && savedEnv) {
      process.env = savedEnv;
      savedEnv = undefined;
    }
  }
}

/** What one path of the work tree is: a directory, a file and its text, or a link and its target. */
type Node =
  | { readonly kind: "dir" }
  | { readonly kind: "file"; readonly text: string }
  | { readonly kind: "link"; readonly target: string };

function sameNode(a: Node, b: Node): boolean {
  if (a.kind === "file" && b.kind === "file") return a.text === b.text;
  if (a.kind === "link" && b.kind === "link") return a.target === b.target;
  return a.kind === b.kind;
}

/** The work tree under `root` as it is on disk, `.git` left out, sorted by path. */
function readTree(root: string): Map<string, Node> {
  const nodes: [string, Node][] = [];
  const visit = (dir: string, prefix: string) => {
    for (const dirent of readdirSync(dir, { withFileTypes: true })) {
      if (prefix === "" && dirent.name === ".git") continue;
      const path = prefix + dirent.name;
      const full = join(dir, dirent.name);
      if (dirent.isDirectory()) {
        nodes.push([path, { kind: "dir" }]);
        visit(full, `${path}/`);
      } else if (dirent.isSymbolicLink()) {
        nodes.push([path, { kind: "link", target: readlinkSync(full) }]);
      } else {
        nodes.push([path, { kind: "file", text: readFileSync(full, "utf8") }]);
      }
    }
  };
  visit(root, "");
  return new Map(nodes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * A work tree reused from case to case: `.git` stays (one `git init` for a whole run), and the
 * rest is brought from one case's tree to the next by removing and creating only what differs
 * (directory churn is most of a case's cost on a slow disk).
 */
export class FuzzRepo {
  readonly repo: TempRepo;
  readonly #config: string;
  readonly #env: NodeJS.ProcessEnv;
  /** The work tree as the last build left it; undefined when unknown (then it is read). */
  #current: Map<string, Node> | undefined;
  #configText: string | undefined;
  #excludeText: string | undefined;

  constructor(repo: TempRepo) {
    this.repo = repo;
    this.#config = readFileSync(join(repo.dir, ".git", "config"), "utf8");
    this.#env = isolatedGitEnv(repo.home);
  }

  /** The work tree `c` describes, path by path, sorted (a directory before what it holds). */
  #nodes(c: IgnoreCase): Map<string, Node> {
    const nodes: [string, Node][] = c.tree.map((entry) => [
      entry.path,
      entry.kind === "dir"
        ? { kind: "dir" }
        : entry.kind === "file"
          ? { kind: "file", text: "" }
          : { kind: "link", target: entry.target ?? "none" },
    ]);
    for (const { dir, file, symlink } of c.gitignores) {
      const text = renderIgnoreFile(file);
      if (symlink) {
        nodes.push([inDir(dir, "gitignore.txt"), { kind: "file", text }]);
        nodes.push([inDir(dir, ".gitignore"), { kind: "link", target: "gitignore.txt" }]);
      } else {
        nodes.push([inDir(dir, ".gitignore"), { kind: "file", text }]);
      }
    }
    return new Map(nodes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  #build(c: IgnoreCase): void {
    const root = this.repo.dir;
    let config = this.#config;
    if (c.ignoreCase) config += "[core]\n\tignorecase = true\n";
    if (c.excludesFile) {
      const path = join(root, ".git", "fuzz-excludes");
      writeFileSync(path, renderIgnoreFile(c.excludesFile));
      config += `[core]\n\texcludesFile = "${path.replace(/[\\"]/g, (c) => `\\${c}`)}"\n`;
    }
    if (config !== this.#configText) writeFileSync(join(root, ".git", "config"), config);
    this.#configText = config;
    const exclude = c.exclude ? renderIgnoreFile(c.exclude) : "";
    if (exclude !== this.#excludeText)
      writeFileSync(join(root, ".git", "info", "exclude"), exclude);
    this.#excludeText = exclude;

    const wanted = this.#nodes(c);
    const current = this.#current ?? readTree(root);
    // Away with what differs, a directory with everything under it.
    const removed = new Set<string>();
    for (const [path, node] of current) {
      const names = path.split("/");
      let gone = false;
      for (let i = 1; i < names.length && !gone; i++)
        gone = removed.has(names.slice(0, i).join("/"));
      if (gone) {
        current.delete(path);
        continue;
      }
      const want = wanted.get(path);
      if (want && sameNode(want, node)) continue;
      if (want?.kind === "file" && node.kind === "file") continue; // rewritten below
      rmSync(join(root, path), { recursive: true, force: true });
      current.delete(path);
      removed.add(path);
    }
    // Then what is missing, parents first.
    for (const [path, node] of wanted) {
      const have = current.get(path);
      if (have && sameNode(have, node)) continue;
      const full = join(root, path);
      if (node.kind === "dir") mkdirSync(full);
      else if (node.kind === "file") writeFileSync(full, node.text);
      else symlinkSync(node.target, full);
    }
    this.#current = wanted;
  }

  /** Every entry the case puts in the work tree, ignore files included. */
  #entries(c: IgnoreCase): TreeEntry[] {
    const entries = [...c.tree];
    for (const { dir, symlink } of c.gitignores) {
      entries.push({ path: inDir(dir, ".gitignore"), kind: symlink ? "link" : "file" });
      if (symlink) entries.push({ path: inDir(dir, "gitignore.txt"), kind: "file" });
    }
    return entries;
  }

  /** Builds `c` in the work tree and compares freshfs with git on it. */
  async check(c: IgnoreCase, options: CheckOptions = {}): Promise<CaseOutcome> {
    this.#build(c);
    const root = this.repo.dir;
    const entries = this.#entries(c);
    const answers = await checkIgnore(
      this.repo,
      entries.map((entry) => entry.path),
    );
    const run = await this.repo.git([
      "ls-files",
      "-z",
      "--cached",
      "--others",
      "--exclude-standard",
    ]);
    if (run.status !== 0) throw new Error(`git ls-files failed (${run.status}): ${run.stderr}`);
    const gitListing = new Set(run.stdout.toString("utf8").split("\0").filter(Boolean));
    if (options.betweenGitAndFreshfs) {
      options.betweenGitAndFreshfs(root);
      // Changed behind the build's back: the next build reads what is there.
      this.#current = undefined;
      this.#configText = undefined;
      this.#excludeText = undefined;
    }

    // The rule level: every entry's verdict and deciding line.
    const disagreements: Disagreement[] = [];
    let ignored = 0;
    let reincluded = 0;
    const decidedBy: Record<DecidingSource, number> = {
      "top .gitignore": 0,
      "nested .gitignore": 0,
      "info/exclude": 0,
      excludesFile: 0,
    };
    entries.forEach((entry, i) => {
      const theirs = answers[i];
      if (!theirs) throw new Error(`git check-ignore gave no answer for ${entry.path}`);
      if (theirs.ignored) ignored++;
      else if (theirs.match) reincluded++;
      const source = theirs.match?.source;
      if (source === ".gitignore") decidedBy["top .gitignore"]++;
      else if (source?.endsWith("/.gitignore")) decidedBy["nested .gitignore"]++;
      else if (source === ".git/info/exclude") decidedBy["info/exclude"]++;
      else if (source !== undefined) decidedBy.excludesFile++;
      const ours = explainPath(root, entry.path, entry.kind === "dir", this.#env);
      const git = theirs.match
        ? `${theirs.ignored ? "ignores" : "re-includes"} it by ${relative(root, resolve(root, theirs.match.source))}:${theirs.match.line} ${JSON.stringify(theirs.match.pattern)}`
        : "matches nothing";
      const rule = ours.rule;
      const freshfs = rule
        ? `${ours.ignored ? "ignores" : "re-includes"} it by ${relative(root, rule.source)}:${rule.line} ${JSON.stringify(rule.pattern)}`
        : ours.ignored
          ? "ignores it (no rule)"
          : "matches nothing";
      if (git !== freshfs) disagreements.push({ level: "rule", path: label(entry), git, freshfs });
    });

    // The listing level: files and links (git lists no directories).
    const listing = await withEnv(this.#env, () =>
      forceRescan(root, { includeHidden: true, useGitignore: true }),
    );
    const listed = new Set(
      listing.entries.filter((entry) => entry.type !== "dir").map((entry) => entry.path),
    );
    for (const path of gitListing) {
      if (!listed.has(path)) {
        disagreements.push({ level: "listing", path, git: "lists it", freshfs: "leaves it out" });
      }
    }
    for (const path of listed) {
      if (!gitListing.has(path)) {
        disagreements.push({ level: "listing", path, git: "leaves it out", freshfs: "lists it" });
      }
    }
    const files = entries.filter((entry) => entry.kind !== "dir").length;
    return { verdicts: entries.length, ignored, reincluded, files, decidedBy, disagreements };
  }
}

/** Disagreements as a readable list, with the case that produced them. */
export function formatFailure(c: IgnoreCase, disagreements: readonly Disagreement[]): string {
  const rows = disagreements.map(
    (d) => `  [${d.level}] ${JSON.stringify(d.path)}: git ${d.git}; freshfs ${d.freshfs}`,
  );
  return [
    `${disagreements.length} disagreement(s) with git:`,
    ...rows,
    "case:",
    describeCase(c),
  ].join("\n");
}

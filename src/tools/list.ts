/**
 * The `list` tool: a directory's entries (kind, size, mtime; directories first, or as `ls`
 * sorts), or a tree of them to `depth`, cut level by level at `limit` with what was left out
 * said per directory. It reads the root's listing (the live tree where the root is watched, so
 * it is as fresh as the call and costs no walk), the same listing glob answers from: ignored
 * and hidden entries are left out unless asked for. A directory the listing leaves out
 * (ignored, hidden) that the model names is read as it is, and the text says so. Depends on
 * `search/`, `live/`, `scan/`, `tools/`.
 */
import { type Dirent, lstatSync, readdirSync, readlinkSync, type Stats, statSync } from "node:fs";
import { join, relative } from "node:path";
import picomatch from "picomatch";
import { FreshfsError, fromFsError, isGone } from "../errors.js";
import { isFreshfsSidecar } from "../io/names.js";
import { isRuntimeDir } from "../io/runtime-dir.js";
import type { Freshness } from "../scan/cache.js";
import { comparePaths, lowerBound, subtreeEnd } from "../scan/order.js";
import type { ScanEntry } from "../scan/walk.js";
import { globRisk } from "../search/glob.js";
import { searchListing } from "../search/listing.js";
import { type Aliases, Args } from "./args.js";
import type { CallOptions, ToolContext } from "./commit.js";
import { LIST_DEFAULT_LIMIT, LIST_MAX_DEPTH, LIST_MAX_LIMIT, MAX_RESULT_BYTES } from "./limits.js";
import { fitting, NOTES_RESERVE_BYTES } from "./output.js";
import type { ListingParams } from "./search.js";
import { humanSize } from "./stat.js";

export type ListSort = "kind" | "name" | "mtime" | "size";

export interface ListParams extends ListingParams {
  /** The directory (inside a root). Aliases: `dir_path`, `directory`. @default every root */
  path?: string;
  /** Levels shown: 1 is the directory's own entries, more draws a tree. @default 1 */
  depth?: number | string;
  /** Globs of entries to leave out (`node_modules`, `*.log`, `dist/`); a directory left out hides all below it. Alias: `excludePatterns`. */
  ignore?: readonly string[] | string;
  /** Show entries whose name starts with a dot. @default false */
  hidden?: boolean | string;
  /** Leave out what `.gitignore`, `.ignore` and `.rgignore` ignore. @default true */
  gitignore?: boolean | string;
  /** `kind` (directories first, then by name), `name`, `mtime` (newest first) or `size` (largest first). @default "kind" */
  sort?: ListSort | string;
  /** Most entries shown (at most 10,000). @default 1000 */
  limit?: number | string;
  dir_path?: string;
  directory?: string;
  excludePatterns?: readonly string[] | string;
}

export interface ListEntry {
  /** As the model should name it (relative to the root with one root). */
  readonly path: string;
  readonly name: string;
  readonly kind: "file" | "dir" | "symlink";
  /** 1 for the directory's own entries. */
  readonly depth: number;
  /** Bytes of a file (of a link itself for a link); undefined for a directory. */
  readonly size: number | undefined;
  readonly mtimeMs: number;
  /** A link's target, as written. */
  readonly target: string | undefined;
  /** A directory whose entries are not shown (depth or limit): how many it has. */
  readonly hiddenEntries: number | undefined;
}

export interface ListResult {
  /** The directory listed (the first root's, with several roots and no path). */
  readonly path: string;
  readonly entries: readonly ListEntry[];
  /** Entries within `depth` (counted as far as the listing was drawn). */
  readonly total: number;
  /** Entries within `depth` were left out (the limit, or the output cap). */
  readonly truncated: boolean;
  /** Which mode answered: `live`, `walked` (read for this call) or `cached`. */
  readonly freshness: Freshness;
  readonly text: string;
}

/** One directory's children, sorted, from wherever the entries come. */
interface Source {
  children(dir: string): Child[];
}

interface Child {
  /** Relative to the directory listed, `/`-separated. */
  readonly rel: string;
  readonly name: string;
  readonly kind: ListEntry["kind"];
}

const MAX_IGNORE_PATTERNS = 100;
const MAX_IGNORE_LENGTH = 1024;
/**
 * Children of a directory in a sorted listing, found by binary search, each child's own
 * descendants jumped over: a level costs its entries times a logarithm, whatever lies below.
 */
function listingSource(entries: readonly ScanEntry[], base: string): Source {
  const prefix = base === "" ? "" : `${base}/`;
  return {
    children(dir) {
      const path = dir === "" ? base : prefix + dir;
      const whole = path === "";
      const start = whole ? 0 : lowerBound(entries, `${path}/`);
      const end = whole ? entries.length : subtreeEnd(entries, start, path);
      const out: Child[] = [];
      for (let i = start; i < end; ) {
        const entry = entries[i] as ScanEntry;
        const rel = entry.path.slice(prefix.length);
        out.push({ rel, name: rel.slice(rel.lastIndexOf("/") + 1), kind: entry.type });
        i = entry.type === "dir" ? subtreeEnd(entries, i + 1, entry.path) : i + 1;
      }
      return out;
    },
  };
}

/** A directory the listing leaves out, read as it is (no ignore files; `.git` and freshfs's own files never). */
function directSource(real: string, hidden: boolean): Source {
  return {
    children(dir) {
      let names: Dirent[];
      try {
        names = readdirSync(dir === "" ? real : join(real, dir), { withFileTypes: true });
      } catch {
        return [];
      }
      const out: Child[] = [];
      for (const item of names) {
        const name = item.name;
        if (name === ".git" || isFreshfsSidecar(name) || (!hidden && name.startsWith(".")))
          continue;
        if (item.isDirectory() && isRuntimeDir(dir === "" ? real : join(real, dir), name)) continue;
        const kind = item.isDirectory() ? "dir" : item.isSymbolicLink() ? "symlink" : "file";
        out.push({ rel: dir === "" ? name : `${dir}/${name}`, name, kind });
      }
      out.sort((a, b) => comparePaths(a.name, b.name));
      return out;
    },
  };
}

function ignoreMatcher(patterns: readonly string[]): (child: Child) => boolean {
  if (patterns.length > MAX_IGNORE_PATTERNS) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `list: ignore holds ${patterns.length} patterns; at most ${MAX_IGNORE_PATTERNS}.`,
    );
  }
  const tests = patterns.map((given) => {
    if (given.length > MAX_IGNORE_LENGTH || given.trim() === "") {
      throw new FreshfsError(
        "INVALID_PATTERN",
        `list: the ignore pattern ${JSON.stringify(given.slice(0, 40))} is empty or longer than ${MAX_IGNORE_LENGTH} characters.`,
      );
    }
    // `dist/` and `dist/**` (opencode's and the reference server's spellings) mean the directory.
    const pattern = given.replace(/^\.\//, "").replace(/(\/\*\*)+$|\/+$/, "");
    const risk = globRisk(pattern);
    if (risk) {
      throw new FreshfsError(
        "INVALID_PATTERN",
        `list: the ignore pattern ${JSON.stringify(given.slice(0, 40))} is refused: ${risk}.`,
      );
    }
    let regex: RegExp;
    try {
      regex = picomatch.makeRe(pattern, { dot: true });
    } catch (error) {
      throw new FreshfsError(
        "INVALID_PATTERN",
        `list: the ignore pattern ${JSON.stringify(given)} is not a valid glob (${(error as Error).message}).`,
      );
    }
    return pattern.includes("/")
      ? (child: Child) => regex.test(child.rel)
      : (child: Child) => regex.test(child.name);
  });
  return (child) => tests.some((test) => test(child));
}

interface Drawn {
  readonly child: Child;
  readonly depth: number;
  stats: Stats | undefined;
  /** Shown children, sorted; undefined when its entries are not shown. */
  children: Drawn[] | undefined;
  hiddenEntries: number | undefined;
}

function statOf(real: string, rel: string): Stats | undefined {
  try {
    return lstatSync(join(real, rel));
  } catch {
    return undefined;
  }
}

function sorter(sort: ListSort): (a: Drawn, b: Drawn) => number {
  const byName = (a: Drawn, b: Drawn) => comparePaths(a.child.name, b.child.name);
  switch (sort) {
    case "name":
      return byName;
    case "mtime":
      return (a, b) => (b.stats?.mtimeMs ?? 0) - (a.stats?.mtimeMs ?? 0) || byName(a, b);
    case "size":
      return (a, b) => sizeOf(b) - sizeOf(a) || byName(a, b);
    default:
      return (a, b) =>
        Number(b.child.kind === "dir") - Number(a.child.kind === "dir") || byName(a, b);
  }
}

function sizeOf(node: Drawn): number {
  return node.child.kind === "dir" ? -1 : (node.stats?.size ?? 0);
}

interface Tree {
  readonly top: Drawn[];
  /** Entries within depth that were counted. */
  readonly total: number;
  readonly truncated: boolean;
}

/**
 * The tree to `depth`, level by level: a level is drawn whole or not at all, so a cut tree
 * shows every directory down to some depth and says how many entries each hides (the first
 * level alone past the limit shows its first `limit` entries in sort order).
 */
function drawTree(
  source: Source,
  real: string,
  depth: number,
  limit: number,
  sort: ListSort,
  ignored: (child: Child) => boolean,
): Tree {
  const compare = sorter(sort);
  const make = (child: Child, level: number, stat: boolean): Drawn => ({
    child,
    depth: level,
    stats: stat ? statOf(real, child.rel) : undefined,
    children: undefined,
    hiddenEntries: undefined,
  });
  const visible = (dir: string) => source.children(dir).filter((child) => !ignored(child));
  // A directory of 100,000 files is an `lstat` each only when its order needs them.
  const byStats = sort === "mtime" || sort === "size";
  let top = visible("").map((child) => make(child, 1, byStats));
  top.sort(compare);
  let total = top.length;
  let truncated = false;
  if (top.length > limit) {
    truncated = true;
    top = top.slice(0, limit);
  }
  for (const node of top) node.stats ??= statOf(real, node.child.rel);
  let shown = top.length;
  let frontier = top.filter((node) => node.child.kind === "dir");
  for (let level = 2; frontier.length > 0; level++) {
    const next = frontier.map((node) => visible(node.child.rel));
    const count = next.reduce((sum, list) => sum + list.length, 0);
    if (level > depth || shown + count > limit) {
      frontier.forEach((node, index) => {
        node.hiddenEntries = (next[index] as Child[]).length;
      });
      if (level <= depth) {
        total += count;
        truncated = truncated || count > 0;
      }
      break;
    }
    total += count;
    shown += count;
    const deeper: Drawn[] = [];
    frontier.forEach((node, index) => {
      const children = (next[index] as Child[]).map((child) => make(child, level, true));
      children.sort(compare);
      node.children = children;
      for (const child of children) if (child.child.kind === "dir") deeper.push(child);
    });
    frontier = deeper;
  }
  return { top, total, truncated };
}

const STAMP = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace("T", " ");

function lineOf(node: Drawn, real: string): string {
  const indent = "  ".repeat(node.depth - 1);
  const name = node.child.name;
  const when = node.stats ? `  ${STAMP(node.stats.mtimeMs)}` : "";
  if (node.child.kind === "dir") {
    const count = node.hiddenEntries ?? node.children?.length;
    const hidden =
      count === 0
        ? "  (empty)"
        : node.hiddenEntries === undefined
          ? ""
          : `  (${count} entr${count === 1 ? "y" : "ies"} not shown)`;
    return `${indent}${name}/${hidden}`;
  }
  if (node.child.kind === "symlink") {
    let target = "?";
    try {
      target = readlinkSync(join(real, node.child.rel));
    } catch {
      // Gone since the listing: shown without its target.
    }
    return `${indent}${name} -> ${target}${when}`;
  }
  return `${indent}${name}  ${humanSize(node.stats?.size ?? 0)}${when}`;
}

function flatten(nodes: readonly Drawn[], into: Drawn[] = []): Drawn[] {
  for (const node of nodes) {
    into.push(node);
    if (node.children) flatten(node.children, into);
  }
  return into;
}

/** No arguments at all (`undefined`, not `null`) lists every root with every default. */
export async function listTool(
  context: ToolContext,
  input: ListParams | undefined,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<ListResult> {
  const args = new Args("list", input === undefined ? {} : input, aliases);
  const path = args.string("path");
  const depth = args.integer("depth", { min: 1, max: LIST_MAX_DEPTH }) ?? 1;
  const limit = args.integer("limit", { min: 1, max: LIST_MAX_LIMIT }) ?? LIST_DEFAULT_LIMIT;
  const hidden = args.boolean("hidden") ?? false;
  const useGitignore = args.boolean("gitignore") ?? true;
  const sort = args.choice("sort", ["kind", "name", "mtime", "size"]) ?? "kind";
  const ignored = ignoreMatcher(args.strings("ignore") ?? []);
  const bases =
    path === undefined || path === ""
      ? context.roots.real.length === 0
        ? [context.roots.confine(".", "path").real]
        : [...context.roots.real]
      : [context.roots.confine(path, "path").real];
  const parts: string[] = [];
  const entries: ListEntry[] = [];
  let total = 0;
  let truncated = false;
  let freshness: Freshness = "live";
  for (const real of bases) {
    const listed = await listOne(
      context,
      real,
      { depth, limit, hidden, useGitignore, sort, ignored },
      call,
    );
    if (listed.freshness === "cached" || (listed.freshness === "walked" && freshness === "live")) {
      freshness = listed.freshness;
    }
    total += listed.total;
    truncated ||= listed.truncated;
    entries.push(...listed.entries);
    parts.push(listed.text);
  }
  const text = parts.join("\n\n");
  return {
    path: context.roots.display(bases[0] as string),
    entries,
    total,
    truncated,
    freshness,
    text,
  };
}

interface ListOptions {
  readonly depth: number;
  readonly limit: number;
  readonly hidden: boolean;
  readonly useGitignore: boolean;
  readonly sort: ListSort;
  readonly ignored: (child: Child) => boolean;
}

async function listOne(
  context: ToolContext,
  real: string,
  options: ListOptions,
  call: CallOptions,
): Promise<Omit<ListResult, "path">> {
  const shown = context.roots.display(real);
  let stats: Stats | undefined;
  try {
    stats = statSync(real, { throwIfNoEntry: false });
  } catch (error) {
    if (!isGone(error)) throw fromFsError(error, "list", shown);
  }
  if (!stats) {
    throw new FreshfsError("NOT_FOUND", `${shown} does not exist.`, { path: real });
  }
  if (!stats.isDirectory()) {
    throw new FreshfsError(
      "NOT_A_DIRECTORY",
      `${shown} is a file, not a directory; stat tells its size and times, read shows it.`,
      { path: real },
    );
  }
  const root = context.roots.real.find((r) => real === r || real.startsWith(`${r}/`)) ?? real;
  const base = relative(root, real);
  const searched = await searchListing(
    {
      root,
      policy: { includeHidden: options.hidden, useGitignore: options.useGitignore },
      cache: context.cache,
      watch: context.watch,
      cheap: true,
      signal: call.signal,
      onProgress: call.onProgress,
    },
    (listing) => {
      const inListing =
        base === "" || listing.entries[lowerBound(listing.entries, base)]?.path === base;
      const source = inListing
        ? listingSource(listing.entries, base)
        : directSource(real, options.hidden);
      return {
        inListing,
        tree: drawTree(source, real, options.depth, options.limit, options.sort, options.ignored),
      };
    },
    () => false,
  );
  const { tree, inListing } = searched.value;
  const nodes = flatten(tree.top);
  const head = shown === "." ? "./" : `${shown}/`;
  const notes: string[] = [];
  if (!inListing) {
    notes.push(
      `(${shown} is left out of listings (ignored, or hidden); its entries are shown as they are, without ignore rules.)`,
    );
  }
  const lines = nodes.map((node) => lineOf(node, real));
  const budget = MAX_RESULT_BYTES - NOTES_RESERVE_BYTES;
  const fit = fitting(lines.length, (n) => lines.slice(0, n).join("\n"), budget);
  const cut = fit < lines.length;
  const kept = nodes.slice(0, fit);
  const truncated = tree.truncated || cut;
  if (truncated) {
    notes.push(
      `(Showing ${kept.length} of ${tree.total}${tree.truncated ? "+" : ""} entries${cut ? `; output is capped at ${MAX_RESULT_BYTES / 1024} KiB` : ""}. List a subdirectory, lower depth, or raise limit for the rest.)`,
    );
  }
  const body =
    kept.length === 0
      ? "  (empty)"
      : lines
          .slice(0, fit)
          .map((line) => `  ${line}`)
          .join("\n");
  // Every entry is under `real`: its shown path is the directory's and its own relative one.
  const under = shown === "." ? "" : `${shown}/`;
  const entries: ListEntry[] = kept.map((node) => ({
    path: under + node.child.rel,
    name: node.child.name,
    kind: node.child.kind,
    depth: node.depth,
    size: node.child.kind === "dir" ? undefined : node.stats?.size,
    mtimeMs: node.stats?.mtimeMs ?? 0,
    target: node.child.kind === "symlink" ? linkTarget(join(real, node.child.rel)) : undefined,
    hiddenEntries: node.hiddenEntries,
  }));
  return {
    entries,
    total: tree.total,
    truncated,
    freshness: inListing ? searched.freshness : "walked",
    text: [head, body, ...notes].join("\n"),
  };
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

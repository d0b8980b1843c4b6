/**
 * Which files a grep reads, in listing order: the one file named, or the files of a
 * directory's listing that pass the filters, with rg's overrides (a file an include glob names
 * is searched though ignored or hidden; one a type names, though hidden), the files behind
 * links with `follow`, and, for a live answer, only those the content index cannot rule out.
 * Depends on `content/`, `live/registry`, `scan/`, `io/` and `search/listing`.
 */
import { realpathSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { contentIndexes } from "../../content/registry.js";
import type { ContentIndex } from "../../content/store.js";
import { fromFsError } from "../../errors.js";
import { fsPath, hasEscapedBytes } from "../../io/bytes.js";
import { nodeFs } from "../../io/fs.js";
import { absolutePath, canonicalPath } from "../../io/paths.js";
import { liveTrees } from "../../live/registry.js";
import { type Freshness, forceRescan, type ScanResult } from "../../scan/cache.js";
import { comparePaths } from "../../scan/order.js";
import { resolveScanRoot, type ScanEntry } from "../../scan/walk.js";
import { searchListing } from "../listing.js";
import type { FileHints } from "./feed.js";
import type { ResolvedGrep } from "./options.js";
import { planRegex } from "./regex/index.js";

/** What a search's path names. */
export type Target =
  | {
      readonly kind: "file";
      /** The file's directory: the worker opens the file relative to it. */
      readonly root: string;
      readonly name: string;
      /** Where the file is now: a link named as the file is followed, and only there. */
      readonly named: string;
      readonly follow: boolean;
    }
  | { readonly kind: "directory"; readonly root: string };

/**
 * The file or directory `path` names. A confined path (the Workspace's) is canonical already: a
 * link found there now was swapped in after the confinement, and is not followed (as `grep`
 * follows a link the caller names, to where it leads now, as rg does).
 */
export function resolveTarget(path: string, confined: boolean): Target {
  const target = absolutePath(path);
  let isFile: boolean;
  try {
    isFile = statSync(fsPath(target)).isFile();
  } catch (error) {
    throw fromFsError(error, "search", target);
  }
  if (!isFile) return { kind: "directory", root: resolveScanRoot(target) };
  const root = resolveScanRoot(dirname(target));
  let named: string;
  try {
    // A name that is not UTF-8 (escaped bytes) is canonical in its directory's path.
    named = confined
      ? target
      : hasEscapedBytes(basename(target))
        ? `${canonicalPath(dirname(target), nodeFs)}/${basename(target)}`
        : canonicalPath(target, nodeFs);
  } catch (error) {
    throw fromFsError(error, "search", target);
  }
  return { kind: "file", root, name: basename(target), named, follow: !confined };
}

/** Directories down to a listed file: 1 for a file of the root itself. */
function depthOf(path: string): number {
  let depth = 1;
  for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) depth++;
  return depth;
}

/** The filters that choose a directory's files, from grep's options. */
export class Selection {
  readonly #options: ResolvedGrep;

  constructor(options: ResolvedGrep) {
    this.#options = options;
  }

  /** Within the depth, and outside node_modules unless it is searched. */
  within(path: string): boolean {
    const { includeNodeModules, maxDepth } = this.#options;
    return (
      (includeNodeModules || !/(^|\/)node_modules(\/|$)/.test(path)) &&
      (maxDepth === Number.POSITIVE_INFINITY || depthOf(path) <= maxDepth)
    );
  }

  /** Within, and passed by the globs and the types. */
  passes(path: string): boolean {
    const { globs, types } = this.#options;
    return this.within(path) && (!globs || globs.passes(path)) && (!types || types.passes(path));
  }

  /**
   * The listing's files that pass, in listing order, and rg's overrides among the files the
   * listing skipped: a file an include glob names is searched though ignored or hidden, and
   * one a type names though hidden (not though ignored); in directories walked, that is.
   */
  select(listing: ScanResult): string[] {
    const out: string[] = [];
    for (const entry of listing.entries) {
      if (entry.type === "file" && this.passes(entry.path)) out.push(entry.path);
    }
    const { globs, types } = this.#options;
    const before = out.length;
    for (const file of listing.skipped) {
      if (!this.within(file.path)) continue;
      const typed = types ? types.passes(file.path) : true;
      const byGlob = globs?.verdict(file.path) === "include";
      const byType =
        (types?.selects(file.path) ?? false) &&
        file.hidden &&
        !file.ignored &&
        (globs?.passes(file.path) ?? true);
      if (typed && (byGlob || byType)) out.push(file.path);
    }
    return out.length === before ? out : out.sort(comparePaths);
  }

  /**
   * Whether the files can be searched while the walk lists them (in final order): not with
   * globs or types, whose overrides add skipped files the walk reports only at its end, nor
   * with links followed, whose files come after it.
   */
  get streams(): boolean {
    const { globs, types, followLinks } = this.#options;
    return globs === undefined && types === undefined && !followLinks;
  }
}

/** A directory's candidates, and where they came from. */
export interface Listed {
  readonly candidates: readonly string[];
  readonly listing: ScanResult | undefined;
  readonly freshness: Freshness;
  readonly unwatched: string | undefined;
}

/**
 * The candidates of the directory `root`. `onListed`, when given, receives the files that pass
 * as the walk lists them, in order (each file once), before the listing is complete.
 */
export async function listCandidates(
  root: string,
  options: ResolvedGrep,
  selection: Selection,
  onListed: ((files: string[]) => void) | undefined,
): Promise<Listed> {
  let seen = 0;
  const onEntries = (entries: readonly ScanEntry[]) => {
    const fresh: string[] = [];
    for (; seen < entries.length; seen++) {
      const entry = entries[seen] as ScanEntry;
      if (entry.type === "file" && selection.within(entry.path)) fresh.push(entry.path);
    }
    onListed?.(fresh);
  };
  let listing: ScanResult | undefined;
  const searched = await searchListing(
    {
      root,
      policy: options.policy,
      cache: options.cache,
      watch: options.watch,
      signal: options.signal,
      onProgress: options.onProgress,
      onListed: onListed ? onEntries : undefined,
    },
    (found) => {
      listing = found;
      return selection.select(found);
    },
    (files) => files.length === 0,
  );
  let candidates = searched.value;
  if (options.followLinks && listing) {
    const linked = await linkedFiles(root, listing, options);
    const more = linked.filter((path) => selection.passes(path));
    if (more.length > 0) candidates = [...candidates, ...more].sort(comparePaths);
  }
  return { candidates, listing, freshness: searched.freshness, unwatched: searched.unwatched };
}

/**
 * `-L`: the files behind the listing's links, by the links' paths: a link to a file is the file;
 * a link to a directory is walked with the same rules (its own ignore files; those above the
 * link do not reach into it), and its links followed in turn. A directory already on the way
 * down (a link back up) is not walked again; a broken link is passed over.
 */
async function linkedFiles(
  root: string,
  listing: ScanResult,
  options: ResolvedGrep,
): Promise<string[]> {
  const out: string[] = [];
  const visit = async (entries: readonly ScanEntry[], base: string, above: ReadonlySet<string>) => {
    for (const entry of entries) {
      if (entry.type === "file" && base !== "") out.push(base + entry.path);
      if (entry.type !== "symlink") continue;
      const path = `${root}/${base}${entry.path}`;
      let real: string;
      let isDirectory: boolean;
      try {
        real = realpathSync(path);
        isDirectory = statSync(real).isDirectory();
      } catch {
        continue;
      }
      if (!isDirectory) {
        out.push(base + entry.path);
        continue;
      }
      if (above.has(real)) continue;
      const walked = await forceRescan(real, options.policy, { signal: options.signal });
      await visit(walked.entries, `${base}${entry.path}/`, new Set([...above, real]));
    }
  };
  await visit(listing.entries, "", new Set([realpathSync(root)]));
  return out;
}

/**
 * The root's content index, when it may vouch for files: only for a live answer (the index is
 * exact as the live tree is), and not where every file must be read (an inverted or
 * without-match search) or files are reached through links (they are not indexed).
 */
export function indexFor(
  root: string,
  options: ResolvedGrep,
  freshness: Freshness,
): ContentIndex | undefined {
  if (freshness !== "live") return undefined;
  if (!options.index || options.invert || options.withoutMatch || options.followLinks) {
    return undefined;
  }
  const tree = liveTrees.treeOf(root, options.policy);
  return tree ? contentIndexes.of(tree) : undefined;
}

/** The files to read of the candidates, and what the index told of them. */
export interface Reading {
  readonly files: readonly string[];
  /** For each file to read, its index among the candidates. */
  readonly positions: readonly number[];
  /** Candidates the index knows to be binary (not read, counted as if read), ascending. */
  readonly knownBinary: readonly number[];
  readonly hints: FileHints;
}

/** Asks the index which candidates can hold a match, and where in them. */
export function consultIndex(
  index: ContentIndex,
  candidates: readonly string[],
  options: ResolvedGrep,
): Reading {
  const { pattern } = options;
  const plan = planRegex(pattern.planned, {
    fixedStrings: pattern.fixedStrings,
    ignoreCase: pattern.ignoreCase,
    unicode: pattern.flags.includes("u"),
    multiline: pattern.multiline,
  });
  const consulted = index.consult(candidates, plan.query, {
    requiresNonAscii: plan.requiresNonAscii,
    exactCase: !plan.folded,
    foldsAside: plan.foldsAside,
    maxFileSize: options.maxFileSize,
    // Blocks hold whole lines: a match within a line is within one (context is not).
    blocks: !pattern.multiline && options.before === 0 && options.after === 0,
    multiline: pattern.multiline,
    readsBinary: options.binary === "report" || options.binary === "text",
  });
  const stretches = new Map<number, readonly number[]>();
  const branches = new Map<number, number>();
  consulted.read.forEach((candidate, at) => {
    const these = consulted.blocks.get(candidate);
    if (these) stretches.set(at, these);
    const mask = consulted.branches.get(candidate);
    if (mask !== undefined) branches.set(at, mask);
  });
  return {
    files: consulted.read.map((candidate) => candidates[candidate] as string),
    positions: consulted.read,
    knownBinary: consulted.binary,
    hints: { stretches, branches },
  };
}

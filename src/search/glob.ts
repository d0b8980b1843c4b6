/**
 * glob: the paths of a listing that match a pattern. Depends on `scan/`,
 * `search/listing` and picomatch (glob semantics are picomatch's, as in tinyglobby and fast-glob;
 * not hand-rolled).
 */
import { existsSync, lstatSync, realpathSync } from "node:fs";
import { join } from "node:path";
import picomatch from "picomatch";
import { FreshfsError, quoted } from "../errors.js";
import type { ScanResult } from "../scan/cache.js";
import { explainPath } from "../scan/explain.js";
import { indexByExtension, resolveScanRoot, ScanEntry } from "../scan/walk.js";
import {
  cheapRequest,
  checkedOptions,
  type ListingAnswer,
  type ListingOptions,
  pageOf,
  type Searched,
  searchListing,
} from "./listing.js";

export type GlobFileType = "file" | "dir" | "symlink" | "any";

export interface GlobOptions extends ListingOptions {
  /** @default "file" */
  fileType?: GlobFileType | undefined;
  /** Newest first (modification time), ties by path; else by path. @default false */
  sortByMtime?: boolean | undefined;
}

export interface GlobResult extends ListingAnswer {
  /** Matching paths, relative to `root`, `/`-separated. */
  readonly matches: readonly string[];
  /** Matches found in all, before `offset` and `limit` cut the page. */
  readonly totalMatches: number;
}

function invalidPattern(pattern: string, why: string): FreshfsError {
  return new FreshfsError("INVALID_PATTERN", `Invalid glob pattern ${quoted(pattern)}: ${why}.`);
}

/**
 * A model's pattern, made what it meant: `./` stripped, a root-relative absolute path made
 * relative, an unclosed `{` closed.
 */
export function normalizePattern(pattern: string, root: string): string {
  let out = pattern;
  if (out.startsWith(`${root}/`)) out = out.slice(root.length + 1);
  while (out.startsWith("./")) out = out.slice(2);
  // `a//b` and `a/./b` name `a/b`.
  out = out
    .replace(/(^|\/)\.(?=\/)/g, "$1")
    .replace(/\/{2,}/g, "/")
    .replace(/^\//, "");
  let open = 0;
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    if (c === "\\") i++;
    else if (c === "{") open++;
    else if (c === "}" && open > 0) open--;
  }
  return out + "}".repeat(open);
}

/** A segment that starts with a dot (not `.` or `..`): the pattern asks for hidden entries. */
function namesHidden(pattern: string): boolean {
  return pattern.split("/").some((segment) => /^\.[^./]/.test(segment));
}

/** Matching paths (as the caller sees them) and their entries, in listing order. */
interface Found {
  readonly paths: string[];
  readonly entries: ScanEntry[];
}

/** Entries by the extension of their name, per listing (listings never change). */
const extensionIndexes = new WeakMap<
  readonly ScanEntry[],
  ReadonlyMap<string, readonly ScanEntry[]>
>();

/** A live listing keeps its own index up to date; any other is indexed once. */
function extensionIndex(listing: ScanResult): ReadonlyMap<string, readonly ScanEntry[]> {
  if (listing.byExtension) return listing.byExtension;
  let index = extensionIndexes.get(listing.entries);
  if (!index) {
    index = indexByExtension(listing.entries);
    extensionIndexes.set(listing.entries, index);
  }
  return index;
}

/**
 * The extension every path matching `pattern` must end with: the pattern's trailing literal text
 * (after its last special character) ends in `.ext`. Undefined when it does not say.
 */
function requiredExtension(pattern: string): string | undefined {
  let tail = pattern.length;
  while (tail > 0 && !/[*?[\]{}()!+@\\]/.test(pattern[tail - 1] as string)) tail--;
  const literal = pattern.slice(tail);
  const dot = literal.lastIndexOf(".");
  if (dot === -1 || dot === literal.length - 1 || literal.slice(dot).includes("/"))
    return undefined;
  return literal.slice(dot + 1);
}

const MAX_STARS_PER_NAME = 3;
const MAX_PATTERN_LENGTH = 1024;
const MAX_BRACE_GROUPS = 16;

/**
 * Why a glob could take minutes to match, or undefined: picomatch compiles to backtracking
 * regexes, and parses nested braces in time by the square of their depth (measured: 24 groups
 * of `{?,?}` took seconds, 40 never ended), and several stars in one name cost O(n^k) on a long
 * name (6 stars: seconds). A model's pattern never needs more than these bounds. Every glob a
 * caller gives picomatch goes through here (glob's patterns, list's `ignore`).
 */
export function globRisk(pattern: string): string | undefined {
  return sizeRisk(pattern) ?? starRisk(pattern);
}

/** The pattern's length and brace groups: checked before it is parsed at all. */
function sizeRisk(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `it is ${pattern.length} characters long; patterns are at most ${MAX_PATTERN_LENGTH}`;
  }
  if (pattern.split("{").length - 1 > MAX_BRACE_GROUPS) {
    return `more than ${MAX_BRACE_GROUPS} brace groups could take minutes to match; use fewer`;
  }
  return undefined;
}

/** Stars in one name: checked on the pattern as it will be matched (its root prefix gone). */
function starRisk(pattern: string): string | undefined {
  for (const segment of pattern.split("/")) {
    if (segment !== "**" && (segment.match(/\*+/g) ?? []).length > MAX_STARS_PER_NAME) {
      return `more than ${MAX_STARS_PER_NAME} wildcards in one name (${JSON.stringify(segment)}) could take minutes to match; use fewer`;
    }
  }
  return undefined;
}

const matchers = new Map<string, (path: string) => boolean>();
// Agents repeat patterns: compiled matchers are kept, a few dozen at most.
const MATCHER_CACHE = 64;

/**
 * A matcher for a normalized pattern. `*.ext`, `**\/*.ext` and `head/**\/*.ext` (a name ending
 * under a literal head) take string tests; everything else is picomatch, with a pattern
 * without `/` matched against the last path component, as at any depth.
 */
function matcherFor(pattern: string, dot: boolean): (path: string) => boolean {
  const key = `${dot ? "." : "-"}${pattern}`;
  let matcher = matchers.get(key);
  if (matcher) return matcher;
  // `*.ext`, `**/*.ext` or `dir/sub/**/*.ext`: a literal head, any depth, a name ending.
  const simple = /^((?:[^*?[\]{}()!+@\\/]+\/)*?)(?:\*\*\/)?\*([^*?[\]{}()!+@\\/]+)$/.exec(pattern);
  const head = simple?.[1] ?? "";
  const ending = simple?.[2];
  const deep = head === "" || pattern.slice(head.length).startsWith("**/");
  if (ending !== undefined && deep && (dot || !/(^|\/)\./.test(head))) {
    // `*` never matches a leading dot unless `dot`; the listing holds no other hidden entries
    // (a head naming a hidden directory is left to picomatch).
    matcher = (path) => {
      if (!path.endsWith(ending) || !path.startsWith(head)) return false;
      return dot || path.charCodeAt(path.lastIndexOf("/") + 1) !== 0x2e;
    };
  } else {
    const regex = dotAll(picomatch.makeRe(pattern, { dot }));
    // A pattern without `/` is matched against the name (picomatch's basename mode, without
    // its path.basename call on every path).
    matcher = pattern.includes("/")
      ? (path) => regex.test(path)
      : (path) => regex.test(path.slice(path.lastIndexOf("/") + 1));
  }
  // V8 compiles a regex when it first runs: a pattern too large for it fails here, typed.
  matcher("");
  if (matchers.size >= MATCHER_CACHE) matchers.delete(matchers.keys().next().value as string);
  matchers.set(key, matcher);
  return matcher;
}

/**
 * picomatch's regex with `.` matching a line break too: its `**` is written with `.`, so a name
 * holding a newline (legal on Linux) would never match it, where `*` (`[^/]`) does.
 */
function dotAll(regex: RegExp): RegExp {
  return regex.flags.includes("s") ? regex : new RegExp(regex.source, `${regex.flags}s`);
}

function typeMatches(entry: ScanEntry, fileType: GlobFileType): boolean {
  return typeMatchesType(entry.type, fileType);
}

function typeMatchesType(type: ScanEntry["type"], fileType: GlobFileType): boolean {
  return fileType === "any" || type === fileType;
}

/**
 * The pattern's literal directory head (`src/lib` of `src/lib/**\/*.ts`), or "" when there is
 * none. A pattern without wildcards is a path: its head is its directory. An escaped character
 * in the head leaves it to the matcher.
 */
function staticHead(pattern: string): string {
  const scan = picomatch.scan(pattern);
  const head = scan.isGlob
    ? scan.base
    : pattern.includes("/")
      ? pattern.slice(0, pattern.lastIndexOf("/"))
      : "";
  return head.includes("\\") ? "" : head;
}

function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory() && realpathSync.native(path) === path;
  } catch {
    return false;
  }
}

export async function glob(pattern: string, given: GlobOptions = {}): Promise<GlobResult> {
  const options = checkedOptions(given);
  if (typeof pattern !== "string" || pattern.trim() === "") {
    throw invalidPattern(String(pattern), "it is empty");
  }
  const root = resolveScanRoot(options.path ?? process.cwd());
  const tooBig = sizeRisk(pattern);
  if (tooBig) throw invalidPattern(pattern, tooBig);
  const normalized = normalizePattern(pattern, root);
  const fileType = options.fileType ?? "file";
  if (!["file", "dir", "symlink", "any"].includes(fileType)) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `fileType must be file, dir, symlink or any, not ${fileType}.`,
    );
  }
  const { limit, offset } = pageOf(options);
  const hidden = options.hidden ?? false;
  const useGitignore = options.gitignore ?? true;
  const includeNodeModules = options.includeNodeModules ?? normalized.includes("node_modules");
  const tooManyStars = starRisk(normalized);
  if (tooManyStars) throw invalidPattern(pattern, tooManyStars);
  let isMatch: (path: string) => boolean;
  try {
    isMatch = matcherFor(normalized, hidden);
  } catch (error) {
    throw invalidPattern(pattern, error instanceof Error ? error.message : String(error));
  }
  // A listing with hidden entries when the pattern names one; picomatch (dot: hidden) still
  // keeps out the hidden entries it does not name.
  const policy = { includeHidden: hidden || namesHidden(normalized), useGitignore };

  const negated = normalized.startsWith("!");
  const head = negated ? "" : staticHead(normalized);
  const extension = negated ? undefined : requiredExtension(normalized);
  const filter = (listing: ScanResult, prefix: string): Found => {
    const entries = listing.entries;
    const out: Found = { paths: [], entries: [] };
    const under = prefix === "" && head !== "" ? `${head}/` : "";
    // Only the entries with the extension every match ends with, when there is one.
    const candidates =
      extension === undefined ? undefined : (extensionIndex(listing).get(extension) ?? []);
    const count = candidates ? candidates.length : entries.length;
    for (let k = 0; k < count; k++) {
      const entry = (candidates ? candidates[k] : entries[k]) as ScanEntry;
      if (under !== "" && !entry.path.startsWith(under) && entry.path !== head) continue;
      if (!typeMatches(entry, fileType)) continue;
      const path = prefix + entry.path;
      if (
        !includeNodeModules &&
        path.includes("node_modules") &&
        /(^|\/)node_modules(\/|$)/.test(path)
      ) {
        continue;
      }
      if (isMatch(path)) {
        out.paths.push(path);
        out.entries.push(entry);
      }
    }
    return out;
  };

  // Without the cache, a pattern with a static head (`src/**/*.ts`) walks only under it, unless
  // the walker would have left that directory out, so the answer never depends on the cache.
  const base = options.cache ? "" : head;
  let found: Searched<Found>;
  // The head must lead where its name says: no `..`, no symlinked directory on the way (the
  // cached listing never goes through one, and the two answers must agree).
  const under = base === "" ? undefined : join(root, base);
  if (under !== undefined && !base.split("/").includes("..") && isRealDirectory(under)) {
    if (
      base.split("/").includes(".git") ||
      (useGitignore && explainPath(root, base, true).ignored)
    ) {
      found = { value: { paths: [], entries: [] }, freshness: "walked", unwatched: undefined };
    } else {
      found = await searchListing(
        {
          root: under,
          policy,
          cache: false,
          signal: options.signal,
          onProgress: options.onProgress,
        },
        (listing) => {
          const inside = filter(listing, `${base}/`);
          // The head directory itself is a match too (`src/**` matches `src`).
          if (typeMatchesType("dir", fileType) && isMatch(base)) {
            inside.paths.unshift(base);
            inside.entries.unshift(new ScanEntry({ root, type: "dir" }, base));
          }
          return inside;
        },
        (matches) => matches.paths.length === 0,
      );
    }
  } else if (under !== undefined && !existsSync(under)) {
    found = { value: { paths: [], entries: [] }, freshness: "walked", unwatched: undefined };
  } else {
    found = await searchListing(
      cheapRequest(root, policy, options),
      (listing) => filter(listing, ""),
      (matches) => matches.paths.length === 0,
    );
  }

  let paths = found.value.paths;
  if (options.sortByMtime) {
    const mtimes: number[] = [];
    for (let i = 0; i < found.value.entries.length; i++) {
      mtimes.push((found.value.entries[i] as ScanEntry).mtimeMs);
      // An lstat each: yield now and then, for a pattern that matches a whole tree.
      if (i % 2048 === 2047) await new Promise((resolve) => setImmediate(resolve));
    }
    const order = paths.map((_, i) => i);
    order.sort((a, b) => {
      const byTime = (mtimes[b] as number) - (mtimes[a] as number);
      const pa = paths[a] as string;
      const pb = paths[b] as string;
      return byTime || (pa < pb ? -1 : pa > pb ? 1 : 0);
    });
    paths = order.map((i) => found.value.paths[i] as string);
  }
  const matches =
    offset === 0 && paths.length <= limit ? paths : paths.slice(offset, offset + limit);
  return {
    root,
    matches,
    totalMatches: paths.length,
    truncated: offset + matches.length < paths.length,
    freshness: found.freshness,
    unwatched: found.unwatched,
  };
}

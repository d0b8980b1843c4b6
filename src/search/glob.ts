/**
 * glob: the paths of a listing that match a pattern (contract Part 3). Depends on `scan/`,
 * `search/listing` and picomatch (glob semantics are picomatch's, as in tinyglobby and fast-glob;
 * not hand-rolled).
 */
import { join } from "node:path";
import picomatch from "picomatch";
import { FreshfsError } from "../errors.js";
import { explainPath } from "../scan/explain.js";
import { resolveScanRoot, type ScanEntry } from "../scan/walk.js";
import { searchListing } from "./listing.js";

export type GlobFileType = "file" | "dir" | "symlink" | "any";

export interface GlobOptions {
  /** The directory searched; relative paths resolve against the cwd. @default process.cwd() */
  path?: string | undefined;
  /** Match entries whose name starts with a dot; a pattern naming one (`.github/**`) always does. @default false */
  hidden?: boolean | undefined;
  /** Leave out what .gitignore, .ignore and git's excludes leave out. @default true */
  gitignore?: boolean | undefined;
  /** Use the shared scan cache (and fill it). @default false */
  cache?: boolean | undefined;
  /** Search node_modules. @default true when the pattern names node_modules, else false */
  includeNodeModules?: boolean | undefined;
  /** @default "file" */
  fileType?: GlobFileType | undefined;
  /** Most paths returned; `totalMatches` still counts them all. @default unlimited */
  maxResults?: number | undefined;
  /** Newest first (modification time), ties by path; else by path. @default false */
  sortByMtime?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

export interface GlobResult {
  /** The canonical directory searched. */
  readonly root: string;
  /** Matching paths, relative to `root`, `/`-separated. */
  readonly matches: readonly string[];
  /** Matches found before `maxResults` cut the list. */
  readonly totalMatches: number;
  readonly truncated: boolean;
}

function invalidPattern(pattern: string, why: string): FreshfsError {
  return new FreshfsError(
    "INVALID_PATTERN",
    `Invalid glob pattern ${JSON.stringify(pattern)}: ${why}.`,
  );
}

/**
 * A model's pattern, made what it meant: `./` stripped, a root-relative absolute path made
 * relative, an unclosed `{` closed.
 */
export function normalizePattern(pattern: string, root: string): string {
  let out = pattern;
  if (out.startsWith(`${root}/`)) out = out.slice(root.length + 1);
  while (out.startsWith("./")) out = out.slice(2);
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

interface Found {
  readonly path: string;
  readonly entry: ScanEntry;
  mtimeMs: number;
}

function typeMatches(entry: ScanEntry, fileType: GlobFileType): boolean {
  return fileType === "any" || entry.type === fileType;
}

export async function glob(pattern: string, options: GlobOptions = {}): Promise<GlobResult> {
  if (typeof pattern !== "string" || pattern.trim() === "") {
    throw invalidPattern(String(pattern), "it is empty");
  }
  const root = resolveScanRoot(options.path ?? process.cwd());
  const normalized = normalizePattern(pattern, root);
  const fileType = options.fileType ?? "file";
  if (!["file", "dir", "symlink", "any"].includes(fileType)) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `fileType must be file, dir, symlink or any, not ${fileType}.`,
    );
  }
  const maxResults = options.maxResults ?? Number.POSITIVE_INFINITY;
  if (!(maxResults >= 0)) {
    throw new FreshfsError("INVALID_ARGUMENT", `maxResults must be 0 or more, not ${maxResults}.`);
  }
  const hidden = options.hidden ?? false;
  const useGitignore = options.gitignore ?? true;
  const includeNodeModules = options.includeNodeModules ?? normalized.includes("node_modules");
  let isMatch: (path: string) => boolean;
  try {
    isMatch = picomatch(normalized, { dot: hidden, basename: !normalized.includes("/") });
  } catch (error) {
    throw invalidPattern(pattern, error instanceof Error ? error.message : String(error));
  }
  // A listing with hidden entries when the pattern names one; picomatch (dot: hidden) still
  // keeps out the hidden entries it does not name.
  const policy = { includeHidden: hidden || namesHidden(normalized), useGitignore };

  const filter = (entries: readonly ScanEntry[], prefix: string): Found[] => {
    const out: Found[] = [];
    for (const entry of entries) {
      if (!typeMatches(entry, fileType)) continue;
      const path = prefix + entry.path;
      if (!includeNodeModules && /(^|\/)node_modules(\/|$)/.test(path)) continue;
      if (isMatch(path)) out.push({ path, entry, mtimeMs: 0 });
    }
    return out;
  };

  // Without the cache, a pattern with a static head (`src/**/*.ts`) walks only under it, unless
  // the walker would have left that directory out, so the answer never depends on the cache.
  const base = options.cache ? "" : picomatch.scan(normalized).base;
  let found: Found[];
  if (base !== "" && !normalized.startsWith("!")) {
    if (
      base.split("/").includes(".git") ||
      (useGitignore && explainPath(root, base, true).ignored)
    ) {
      found = [];
    } else {
      let under: string;
      try {
        under = resolveScanRoot(join(root, base));
      } catch {
        return { root, matches: [], totalMatches: 0, truncated: false };
      }
      found = await searchListing(
        { root: under, policy, cache: false, signal: options.signal },
        (listing) => filter(listing.entries, `${base}/`),
        (matches) => matches.length === 0,
      );
    }
  } else {
    found = await searchListing(
      { root, policy, cache: options.cache ?? false, signal: options.signal },
      (listing) => filter(listing.entries, ""),
      (matches) => matches.length === 0,
    );
  }

  if (options.sortByMtime) {
    for (let i = 0; i < found.length; i++) {
      const match = found[i] as Found;
      match.mtimeMs = match.entry.mtimeMs;
      // An lstat each: yield now and then, for a pattern that matches a whole tree.
      if (i % 2048 === 2047) await new Promise((resolve) => setImmediate(resolve));
    }
    found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
  const matches = found.slice(0, maxResults).map((entry) => entry.path);
  return { root, matches, totalMatches: found.length, truncated: found.length > matches.length };
}

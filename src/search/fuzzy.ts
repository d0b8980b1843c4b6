/**
 * fuzzyFind: the files a person means from a few letters, for `@`-mentions and autocomplete
 * (contract Part 3). Depends on `scan/` and `search/listing`.
 *
 * Ranking: the seed's tiers are the floor (exact basename 120, basename prefix 100, basename
 * contains 80, path contains 60, basename subsequence 50, path subsequence 30, directories
 * +10); inside a tier, an alignment score in the manner of fzf (a match at a word boundary,
 * `/`, `-`, `_`, `.` or a camelCase hump, scores more; runs of consecutive letters score more;
 * gaps cost), then the shorter path, then the path. Query letters are case-insensitive unless
 * the query has a capital (smart case); words separated by spaces must all match.
 */
import { FreshfsError } from "../errors.js";
import { resolveScanRoot, type ScanEntry } from "../scan/walk.js";
import { searchListing } from "./listing.js";

export interface FuzzyFindOptions {
  /** The directory searched; relative paths resolve against the cwd. @default process.cwd() */
  path?: string | undefined;
  /** @default false */
  hidden?: boolean | undefined;
  /** @default true */
  gitignore?: boolean | undefined;
  /** @default false */
  cache?: boolean | undefined;
  /** @default true when the query names node_modules, else false */
  includeNodeModules?: boolean | undefined;
  /** Offer directories as well as files. @default true */
  includeDirectories?: boolean | undefined;
  /** Most matches returned. @default 100 */
  limit?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface FuzzyMatch {
  /** Relative to the root, `/`-separated. */
  readonly path: string;
  readonly type: "file" | "dir" | "symlink";
  readonly score: number;
}

export interface FuzzyFindResult {
  readonly root: string;
  readonly matches: readonly FuzzyMatch[];
  /** Matches found before `limit` cut the list. */
  readonly totalMatches: number;
  readonly truncated: boolean;
}

/** What a listing needs for fast queries, built once per listing (listings are immutable). */
interface FuzzyIndex {
  readonly lower: string[];
  readonly baseStart: Int32Array;
  readonly masks: Int32Array;
}

const indexes = new WeakMap<readonly ScanEntry[], FuzzyIndex>();

/** One bit per letter, one for digits, one for everything else: a path lacking a bit of the query cannot match it. */
function maskOf(text: string): number {
  let mask = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) mask |= 1 << (c - 0x61);
    else if (c >= 0x30 && c <= 0x39) mask |= 1 << 26;
    else if (c !== 0x2f && c !== 0x20) mask |= 1 << 27;
  }
  return mask;
}

function indexOf(entries: readonly ScanEntry[]): FuzzyIndex {
  let index = indexes.get(entries);
  if (index) return index;
  const lower = new Array<string>(entries.length);
  const baseStart = new Int32Array(entries.length);
  const masks = new Int32Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const path = (entries[i] as ScanEntry).path;
    const low = path.toLowerCase();
    lower[i] = low;
    baseStart[i] = path.lastIndexOf("/") + 1;
    masks[i] = maskOf(low);
  }
  index = { lower, baseStart, masks };
  indexes.set(entries, index);
  return index;
}

// fzf's weights.
const SCORE_MATCH = 16;
const GAP_START = -3;
const GAP_EXTENSION = -1;
const BONUS_SLASH = 9;
const BONUS_BOUNDARY = 8;
const BONUS_CAMEL = 7;
const BONUS_CONSECUTIVE = 4;
const FIRST_CHAR_MULTIPLIER = 2;

function isLower(c: number): boolean {
  return c >= 0x61 && c <= 0x7a;
}
function isUpper(c: number): boolean {
  return c >= 0x41 && c <= 0x5a;
}
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The bonus for matching `original[j]`, from the character before it. */
function bonusAt(original: string, j: number): number {
  if (j === 0) return BONUS_BOUNDARY;
  const previous = original.charCodeAt(j - 1);
  const current = original.charCodeAt(j);
  if (previous === 0x2f) return BONUS_SLASH;
  if (previous === 0x2d || previous === 0x5f || previous === 0x2e || previous === 0x20) {
    return BONUS_BOUNDARY;
  }
  if ((isLower(previous) && isUpper(current)) || (!isDigit(previous) && isDigit(current))) {
    return BONUS_CAMEL;
  }
  return 0;
}

let rowA = new Float64Array(256);
let rowB = new Float64Array(256);

/**
 * The best alignment of `query` as a subsequence of `text[from..]` (the same length strings
 * `text`, already in the query's case, and `original`, for case-based bonuses), or -Infinity.
 */
function align(query: string, text: string, original: string, from: number): number {
  const n = text.length - from;
  if (n > rowA.length) {
    rowA = new Float64Array(n * 2);
    rowB = new Float64Array(n * 2);
  }
  let previous = rowA;
  let current = rowB;
  for (let i = 0; i < query.length; i++) {
    const q = query.charCodeAt(i);
    let gap = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < n; k++) {
      const j = from + k;
      if (i > 0 && k >= 2)
        gap = Math.max(gap + GAP_EXTENSION, (previous[k - 2] as number) + GAP_START);
      let best = Number.NEGATIVE_INFINITY;
      if (text.charCodeAt(j) === q) {
        const bonus = bonusAt(original, j);
        if (i === 0) {
          best = SCORE_MATCH + bonus * FIRST_CHAR_MULTIPLIER;
        } else if (k >= 1) {
          const run = (previous[k - 1] as number) + Math.max(bonus, BONUS_CONSECUTIVE);
          best = SCORE_MATCH + Math.max(run, gap + bonus);
        }
      }
      current[k] = best;
    }
    [previous, current] = [current, previous];
  }
  let result = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < n; k++) result = Math.max(result, previous[k] as number);
  return result;
}

function isSubsequence(query: string, text: string, from: number): boolean {
  let at = from;
  for (let i = 0; i < query.length; i++) {
    at = text.indexOf(query[i] as string, at);
    if (at === -1) return false;
    at++;
  }
  return true;
}

interface Term {
  readonly text: string;
  readonly caseSensitive: boolean;
  readonly mask: number;
  readonly hasSlash: boolean;
}

/** The tier and alignment of one term against one path, or undefined when it does not match. */
function scoreTerm(term: Term, path: string, lower: string, baseStart: number): number | undefined {
  const text = term.caseSensitive ? path : lower;
  const q = term.text;
  if (!term.hasSlash) {
    const base = text.slice(baseStart);
    const dot = base.lastIndexOf(".");
    const stem = dot > 0 ? base.slice(0, dot) : base;
    let tier = 0;
    if (base === q || stem === q) tier = 120;
    else if (base.startsWith(q)) tier = 100;
    else if (base.includes(q)) tier = 80;
    if (tier > 0 || isSubsequence(q, text, baseStart)) {
      const inBase = align(q, text, path, baseStart);
      if (tier === 0) tier = text.includes(q) ? 60 : 50;
      return tier * 1000 + inBase;
    }
  }
  if (!isSubsequence(q, text, 0)) return undefined;
  const tier = text.includes(q) ? 60 : 30;
  return tier * 1000 + align(q, text, path, 0);
}

export async function fuzzyFind(
  query: string,
  options: FuzzyFindOptions = {},
): Promise<FuzzyFindResult> {
  if (typeof query !== "string") {
    throw new FreshfsError("INVALID_ARGUMENT", "The query must be a string.");
  }
  const limit = options.limit ?? 100;
  if (!(Number.isSafeInteger(limit) && limit >= 0)) {
    throw new FreshfsError("INVALID_ARGUMENT", `limit must be a whole number >= 0, not ${limit}.`);
  }
  const root = resolveScanRoot(options.path ?? process.cwd());
  const words = query.trim().split(/\s+/).filter(Boolean);
  const terms: Term[] = words.map((word) => {
    const caseSensitive = /[A-Z]/.test(word);
    return {
      text: caseSensitive ? word : word.toLowerCase(),
      caseSensitive,
      mask: maskOf(word.toLowerCase()),
      hasSlash: word.includes("/"),
    };
  });
  const includeNodeModules = options.includeNodeModules ?? query.includes("node_modules");
  const includeDirectories = options.includeDirectories ?? true;
  const policy = {
    includeHidden: options.hidden ?? false,
    useGitignore: options.gitignore ?? true,
  };

  const search = (entries: readonly ScanEntry[]): FuzzyMatch[] => {
    const index = indexOf(entries);
    const found: FuzzyMatch[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as ScanEntry;
      if (entry.type === "dir" && !includeDirectories) continue;
      const masks = index.masks[i] as number;
      if (terms.some((term) => (masks & term.mask) !== term.mask)) continue;
      const lower = index.lower[i] as string;
      if (!includeNodeModules && lower.includes("node_modules")) {
        if (/(^|\/)node_modules(\/|$)/.test(entry.path)) continue;
      }
      let score = 0;
      for (const term of terms) {
        const termScore = scoreTerm(term, entry.path, lower, index.baseStart[i] as number);
        if (termScore === undefined) {
          score = Number.NaN;
          break;
        }
        score += termScore;
      }
      if (Number.isNaN(score)) continue;
      if (entry.type === "dir") score += 10_000;
      found.push({ path: entry.path, type: entry.type, score });
    }
    found.sort(
      (a, b) =>
        b.score - a.score ||
        a.path.length - b.path.length ||
        (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
    );
    return found;
  };

  // An empty query ranks nothing: the listing's first entries, in path order, as fzf shows them.
  const found =
    terms.length === 0
      ? await searchListing(
          { root, policy, cache: options.cache ?? false, signal: options.signal },
          (listing) =>
            listing.entries
              .filter(
                (entry) =>
                  (includeDirectories || entry.type !== "dir") &&
                  (includeNodeModules || !/(^|\/)node_modules(\/|$)/.test(entry.path)),
              )
              .map((entry) => ({ path: entry.path, type: entry.type, score: 0 })),
          () => false,
        )
      : await searchListing(
          { root, policy, cache: options.cache ?? false, signal: options.signal },
          (listing) => search(listing.entries),
          (matches) => matches.length === 0,
        );
  const matches = found.slice(0, limit);
  return { root, matches, totalMatches: found.length, truncated: found.length > matches.length };
}

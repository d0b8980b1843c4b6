/**
 * fuzzyFind: the files a person means from a few letters, for `@`-mentions and autocomplete
 * Depends on `scan/` and `search/listing`.
 *
 * Ranking: tiers first, as oh-my-pi's file finder ranks (exact basename 120, basename prefix 100, basename
 * contains 80, path contains 60, basename subsequence 50, path subsequence 30, directories
 * +10); inside a tier, an alignment score in the manner of fzf (a match at a word boundary,
 * `/`, `-`, `_`, `.` or a camelCase hump, scores more; runs of consecutive letters score more;
 * gaps cost), then the shorter path, then the path. Query letters are case-insensitive unless
 * the query has a capital (smart case); words separated by spaces must all match.
 */
import { FreshfsError } from "../errors.js";
import { resolveScanRoot, type ScanEntry } from "../scan/walk.js";
import {
  cheapRequest,
  checkedOptions,
  type ListingAnswer,
  type ListingOptions,
  pageOf,
  searchListing,
} from "./listing.js";

/** Matches fuzzyFind returns when no `limit` is given. */
export const FUZZY_DEFAULT_LIMIT = 100;

export interface FuzzyFindOptions extends ListingOptions {
  /** Offer directories as well as files. @default true */
  includeDirectories?: boolean | undefined;
}

export interface FuzzyMatch {
  /** Relative to the root, `/`-separated. */
  readonly path: string;
  readonly type: "file" | "dir" | "symlink";
  readonly score: number;
}

export interface FuzzyFindResult extends ListingAnswer {
  readonly matches: readonly FuzzyMatch[];
  /** Matches found in all, before `offset` and `limit` cut the page. */
  readonly totalMatches: number;
}

/** What a listing needs for fast queries, built once per listing (listings are immutable). */
interface FuzzyIndex {
  readonly lower: string[];
  /** Lower-cased basename, and the same without its last extension. */
  readonly base: string[];
  readonly stem: string[];
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
  const base = new Array<string>(entries.length);
  const stem = new Array<string>(entries.length);
  const baseStart = new Int32Array(entries.length);
  const masks = new Int32Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const path = (entries[i] as ScanEntry).path;
    const low = path.toLowerCase();
    lower[i] = low;
    const start = path.lastIndexOf("/") + 1;
    baseStart[i] = start;
    const name = low.slice(start);
    base[i] = name;
    const dot = name.lastIndexOf(".");
    stem[i] = dot > 0 ? name.slice(0, dot) : name;
    masks[i] = maskOf(low);
  }
  index = { lower, base, stem, baseStart, masks };
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
  // The start of the path begins its first segment, as a "/" begins the others.
  if (j === 0) return BONUS_SLASH;
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

/** The best contiguous alignment of `query` in `text` at or after `from`: each occurrence scored. */
function contiguous(query: string, text: string, original: string, from: number): number {
  let best = Number.NEGATIVE_INFINITY;
  for (let at = text.indexOf(query, from); at !== -1; at = text.indexOf(query, at + 1)) {
    let score = SCORE_MATCH + bonusAt(original, at) * FIRST_CHAR_MULTIPLIER;
    for (let k = 1; k < query.length; k++) {
      score += SCORE_MATCH + Math.max(bonusAt(original, at + k), BONUS_CONSECUTIVE);
    }
    best = Math.max(best, score);
  }
  return best;
}

/** What `tierOf` found: the term's tier, and its alignment when cheap (NaN when left for later). */
let foundTier = 0;
let foundAlignment = 0;

/**
 * One term against one path: its tier and, for the tiers where the letters stand together, its
 * alignment when `aligned` (cheap: each occurrence scored), in `foundTier` and `foundAlignment`. A subsequence
 * tier's alignment needs the full alignment search and is left NaN, to be computed only if the
 * path may make the cut. False when the term does not match. (Results go to module variables,
 * not a returned pair: this runs for every path, and the pairs were most of the garbage.)
 */
function tierOf(term: Term, path: string, index: FuzzyIndex, i: number, aligned: boolean): boolean {
  const lower = index.lower[i] as string;
  const baseStart = index.baseStart[i] as number;
  const text = term.caseSensitive ? path : lower;
  const q = term.text;
  if (!term.hasSlash) {
    let base = index.base[i] as string;
    let stem = index.stem[i] as string;
    if (term.caseSensitive) {
      base = path.slice(baseStart);
      const dot = base.lastIndexOf(".");
      stem = dot > 0 ? base.slice(0, dot) : base;
    }
    let tier = 0;
    if (base === q || stem === q) tier = 120;
    else if (base.startsWith(q)) tier = 100;
    else if (base.includes(q)) tier = 80;
    if (tier > 0) {
      foundTier = tier;
      foundAlignment = aligned ? contiguous(q, text, path, baseStart) : 0;
      return true;
    }
    if (isSubsequence(q, text, baseStart)) {
      const together = text.includes(q);
      foundTier = together ? 60 : 50;
      foundAlignment = together && aligned ? contiguous(q, text, path, 0) : Number.NaN;
      return true;
    }
  }
  if (text.includes(q)) {
    foundTier = 60;
    foundAlignment = aligned ? contiguous(q, text, path, 0) : 0;
    return true;
  }
  if (!isSubsequence(q, text, 0)) return false;
  foundTier = 30;
  foundAlignment = Number.NaN;
  return true;
}

export async function fuzzyFind(
  query: string,
  given: FuzzyFindOptions = {},
): Promise<FuzzyFindResult> {
  const options = checkedOptions(given);
  if (typeof query !== "string") {
    throw new FreshfsError("INVALID_ARGUMENT", "The query must be a string.");
  }
  const page = pageOf(options, FUZZY_DEFAULT_LIMIT);
  // The best `offset + limit` are ranked; the page is the last `limit` of them.
  const limit = page.offset + page.limit;
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

  /** The full score of path `i`: its tiers and every alignment, the costly ones included. */
  const fullScore = (entries: readonly ScanEntry[], index: FuzzyIndex, i: number): number => {
    const entry = entries[i] as ScanEntry;
    let score = entry.type === "dir" ? 10_000 : 0;
    for (const term of terms) {
      tierOf(term, entry.path, index, i, true);
      const alignment = Number.isNaN(foundAlignment)
        ? align(
            term.text,
            term.caseSensitive ? entry.path : (index.lower[i] as string),
            entry.path,
            foundTier === 50 ? (index.baseStart[i] as number) : 0,
          )
        : foundAlignment;
      score += foundTier * 1000 + alignment;
    }
    return score;
  };

  const search = (entries: readonly ScanEntry[]): { matches: FuzzyMatch[]; total: number } => {
    const index = indexOf(entries);
    // Phase one, every path: does it match, and in which tiers. Tiers decide the order between
    // paths (an alignment never reaches 1000 points), so the alignments are computed only for
    // the tiers that reach the cut.
    const matched: number[] = [];
    const tierSums: number[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as ScanEntry;
      if (entry.type === "dir" && !includeDirectories) continue;
      const masks = index.masks[i] as number;
      let possible = true;
      for (const term of terms) if ((masks & term.mask) !== term.mask) possible = false;
      if (!possible) continue;
      const lower = index.lower[i] as string;
      if (
        !includeNodeModules &&
        lower.includes("node_modules") &&
        /(^|\/)node_modules(\/|$)/.test(entry.path)
      ) {
        continue;
      }
      let tierSum = entry.type === "dir" ? 10 : 0;
      for (const term of terms) {
        if (!tierOf(term, entry.path, index, i, false)) {
          tierSum = -1;
          break;
        }
        tierSum += foundTier;
      }
      if (tierSum < 0) continue;
      matched.push(i);
      tierSums.push(tierSum);
    }
    // Phase two, from the best tier down: score the paths of each tier until `limit` are in.
    const picked: FuzzyMatch[] = [];
    const levels = [...new Set(tierSums)].sort((a, b) => b - a);
    for (const level of levels) {
      if (picked.length >= limit) break;
      const top = new TopK(limit - picked.length);
      for (let k = 0; k < matched.length; k++) {
        if (tierSums[k] !== level) continue;
        const i = matched[k] as number;
        const entry = entries[i] as ScanEntry;
        top.offer({ path: entry.path, type: entry.type, score: fullScore(entries, index, i) });
      }
      picked.push(...top.sorted());
    }
    return { matches: picked, total: matched.length };
  };

  const request = cheapRequest(root, policy, options);
  // An empty query ranks nothing: the listing's first entries, in path order, as fzf shows them.
  const found =
    terms.length === 0
      ? await searchListing(
          request,
          (listing) => {
            const all = listing.entries
              .filter(
                (entry) =>
                  (includeDirectories || entry.type !== "dir") &&
                  (includeNodeModules || !/(^|\/)node_modules(\/|$)/.test(entry.path)),
              )
              .map((entry) => ({ path: entry.path, type: entry.type, score: 0 }));
            return { matches: all.slice(0, limit), total: all.length };
          },
          () => false,
        )
      : await searchListing(
          request,
          (listing) => search(listing.entries),
          (result) => result.total === 0,
        );
  const matches = found.value.matches.slice(page.offset);
  return {
    root,
    matches,
    totalMatches: found.value.total,
    truncated: page.offset + matches.length < found.value.total,
    freshness: found.freshness,
    unwatched: found.unwatched,
  };
}

/**
 * The best `k` matches offered, kept in a heap with the worst at the top: a tier can hold tens of
 * thousands of paths, and sorting them all to keep a hundred was most of a short query's time.
 */
class TopK {
  readonly #k: number;
  readonly #heap: FuzzyMatch[] = [];

  constructor(k: number) {
    this.#k = k;
  }

  offer(match: FuzzyMatch): void {
    const heap = this.#heap;
    if (heap.length < this.#k) {
      heap.push(match);
      this.#up(heap.length - 1);
    } else if (heap.length > 0 && byRank(match, heap[0] as FuzzyMatch) < 0) {
      heap[0] = match;
      this.#down(0);
    }
  }

  sorted(): FuzzyMatch[] {
    return [...this.#heap].sort(byRank);
  }

  // The heap's order is reversed rank: the top is the match that ranks last.
  #worse(a: number, b: number): boolean {
    return byRank(this.#heap[a] as FuzzyMatch, this.#heap[b] as FuzzyMatch) > 0;
  }

  #swap(a: number, b: number): void {
    const heap = this.#heap;
    [heap[a], heap[b]] = [heap[b] as FuzzyMatch, heap[a] as FuzzyMatch];
  }

  #up(at: number): void {
    for (let i = at; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.#worse(i, parent)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(at: number): void {
    const n = this.#heap.length;
    for (let i = at; ; ) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < n && this.#worse(left, worst)) worst = left;
      if (right < n && this.#worse(right, worst)) worst = right;
      if (worst === i) return;
      this.#swap(i, worst);
      i = worst;
    }
  }
}

function byRank(a: FuzzyMatch, b: FuzzyMatch): number {
  return (
    b.score - a.score ||
    a.path.length - b.path.length ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

/**
 * The literals a regex requires, as an AND/OR query: Russ Cox's analysis for codesearch
 * ("Regular Expression Matching with a Trigram Index", index/regexp.go), with literals where
 * it has trigrams. Each node of the tree is summarized by whether it matches the empty string,
 * its exact set of strings (when small), else sets of prefixes and suffixes its matches start
 * and end with, and a query every match satisfies; every set and query is bounded, and what
 * no longer fits is moved into the query or forgotten (a weaker query, never a wrong one).
 * Depends on `parse` (types) and `charset`.
 */
import type { CharSets } from "./charset.js";
import type { Node } from "./parse.js";

export type LiteralQuery =
  /** No constraint known. */
  | { readonly kind: "all" }
  /** Nothing can match. */
  | { readonly kind: "none" }
  /** The text contains `text`. */
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "and"; readonly of: readonly LiteralQuery[] }
  | { readonly kind: "or"; readonly of: readonly LiteralQuery[] }
  /**
   * The text holds a non-ASCII character (planRegex's branch for the matches its literals,
   * read as ASCII, say nothing of), right before `then` (ASCII) when that is given.
   */
  | { readonly kind: "nonAscii"; readonly then?: string | undefined };

export const ALL: LiteralQuery = { kind: "all" };
const NONE: LiteralQuery = { kind: "none" };

/** Shortest literal worth a leaf: a trigram. Shorter ones say nothing to a trigram index. */
const MIN_LITERAL = 3;
/** Most strings in an exact, prefix or suffix set (`\wAh` has 63 exact strings). */
const MAX_SET = 256;
/** Longest string kept in a set; a longer one is moved into the query, its ends kept. */
const MAX_LENGTH = 64;
/** Most literal leaves in one query: past it an OR is given up (all), an AND term dropped. */
const MAX_LEAVES = 512;
/** Repeats up to this count are expanded exactly (`x{2,4}` is `xx|xxx|xxxx`). */
const REPEAT_EXPANSION = 4;
/**
 * An OR of more literals than this that all share a substring of MIN_LITERAL or more is
 * replaced by that substring: `[A-Z]+_RESUME`'s 26 `X_RESUME` say little more than `_RESUME`.
 */
const FACTOR_ABOVE = 8;
/** The common substring of an OR is looked for only over this many characters in all. */
const FACTOR_BUDGET = 8192;

function leaves(q: LiteralQuery): number {
  if (q.kind === "literal") return 1;
  if (q.kind === "and" || q.kind === "or") {
    let n = 0;
    for (const sub of q.of) n += leaves(sub);
    return n;
  }
  return 0;
}

/** Whether every text satisfying `q` satisfies `r`; false when unsure. */
function implies(q: LiteralQuery, r: LiteralQuery): boolean {
  if (q.kind === "none" || r.kind === "all") return true;
  if (q.kind === "all" || r.kind === "none") return false;
  if (r.kind === "and") return r.of.every((sub) => implies(q, sub));
  if (q.kind === "or") return q.of.every((sub) => implies(sub, r));
  if (q.kind === "and") return q.of.some((sub) => implies(sub, r));
  if (q.kind === "nonAscii" || r.kind === "nonAscii") {
    if (q.kind !== "nonAscii" || r.kind !== "nonAscii") return false;
    return r.then === undefined || q.then === r.then;
  }
  if (r.kind === "literal") return q.text.includes(r.text);
  return r.of.some((sub) => implies(q, sub));
}

function and(terms: readonly LiteralQuery[]): LiteralQuery {
  const kept: LiteralQuery[] = [];
  let size = 0;
  const add = (term: LiteralQuery): boolean => {
    if (term.kind === "none") return false;
    if (term.kind === "all") return true;
    if (term.kind === "and") return term.of.every(add);
    if (kept.some((k) => implies(k, term))) return true;
    const n = leaves(term);
    // An AND with a term left out is implied by the whole: a weaker, correct query.
    if (size + n > MAX_LEAVES) return true;
    for (let i = kept.length - 1; i >= 0; i--) {
      if (implies(term, kept[i] as LiteralQuery)) {
        size -= leaves(kept[i] as LiteralQuery);
        kept.splice(i, 1);
      }
    }
    kept.push(term);
    size += n;
    return true;
  };
  for (const term of terms) if (!add(term)) return NONE;
  if (kept.length === 0) return ALL;
  return kept.length === 1 ? (kept[0] as LiteralQuery) : { kind: "and", of: kept };
}

function or(terms: readonly LiteralQuery[]): LiteralQuery {
  const kept: LiteralQuery[] = [];
  let size = 0;
  const add = (term: LiteralQuery): boolean => {
    if (term.kind === "all") return false;
    if (term.kind === "none") return true;
    if (term.kind === "or") return term.of.every(add);
    if (kept.some((k) => implies(term, k))) return true;
    for (let i = kept.length - 1; i >= 0; i--) {
      if (implies(kept[i] as LiteralQuery, term)) {
        size -= leaves(kept[i] as LiteralQuery);
        kept.splice(i, 1);
      }
    }
    kept.push(term);
    size += leaves(term);
    // Too big to be worth it; leaving an alternative out would be wrong, so: no constraint.
    return size <= MAX_LEAVES;
  };
  for (const term of terms) if (!add(term)) return ALL;
  if (kept.length === 0) return NONE;
  if (kept.length === 1) return kept[0] as LiteralQuery;
  if (kept.length > FACTOR_ABOVE && kept.every((k) => k.kind === "literal")) {
    const common = commonSubstring(kept.map((k) => (k as { text: string }).text));
    if (common.length >= MIN_LITERAL) return { kind: "literal", text: common };
  }
  return { kind: "or", of: kept };
}

/**
 * The longest string that is a substring of every one (binary search on its length: a common
 * substring's substrings are common too), or "" when they are too many characters to look.
 */
function commonSubstring(texts: readonly string[]): string {
  let total = 0;
  for (const text of texts) total += text.length;
  if (texts.length === 0 || total > FACTOR_BUDGET) return "";
  const shortest = texts.reduce((a, b) => (b.length < a.length ? b : a));
  const commonOf = (length: number): string | undefined => {
    for (let at = 0; at + length <= shortest.length; at++) {
      const candidate = shortest.slice(at, at + length);
      if (texts.every((text) => text.includes(candidate))) return candidate;
    }
    return undefined;
  };
  let best = "";
  let low = 1;
  let high = shortest.length;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const found = commonOf(mid);
    if (found === undefined) {
      high = mid - 1;
    } else {
      best = found;
      low = mid + 1;
    }
  }
  return best;
}

/**
 * A leaf for "the text contains `text`". Only well-formed UTF-16 without U+FFFD can be found as
 * the UTF-8 bytes it encodes (a lone surrogate is half of a pair in any decoded text; U+FFFD
 * also stands for invalid bytes), so the literal is cut around those into the pieces every
 * match still contains; pieces shorter than MIN_LITERAL are no constraint.
 */
function literal(text: string): LiteralQuery {
  const pieces: LiteralQuery[] = [];
  let start = 0;
  const cut = (end: number) => {
    if (end - start >= MIN_LITERAL) pieces.push({ kind: "literal", text: text.slice(start, end) });
  };
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(at + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        at++;
        continue;
      }
    } else if (unit < 0xdc00 || (unit > 0xdfff && unit !== 0xfffd)) {
      continue;
    }
    cut(at);
    start = at + 1;
  }
  cut(text.length);
  return and(pieces);
}

/** One node, summarized (Cox's regexpInfo). */
interface Info {
  readonly emptyable: boolean;
  /** Every string the node matches, when known; otherwise `prefix` and `suffix` hold. */
  readonly exact: readonly string[] | undefined;
  /** Every match starts with one of these ([""] when nothing is known). */
  readonly prefix: readonly string[];
  /** Every match ends with one of these. */
  readonly suffix: readonly string[];
  /** Every match satisfies this, besides what the sets say. */
  readonly match: LiteralQuery;
}

const EMPTY_STRING: Info = {
  emptyable: true,
  exact: [""],
  prefix: [""],
  suffix: [""],
  match: ALL,
};
const ANY_STRING: Info = {
  emptyable: true,
  exact: undefined,
  prefix: [""],
  suffix: [""],
  match: ALL,
};
const ANY_CHAR: Info = { ...ANY_STRING, emptyable: false };
const NO_MATCH: Info = { emptyable: false, exact: [], prefix: [], suffix: [], match: NONE };

function unique(strings: Iterable<string>): string[] {
  return [...new Set(strings)].sort();
}

/** A prefix or suffix set: one that holds "" says nothing more than [""]. */
function affixes(strings: Iterable<string>): string[] {
  const set = unique(strings);
  return set.includes("") ? [""] : set;
}

function cross(xs: readonly string[], ys: readonly string[]): string[] | undefined {
  if (xs.length * ys.length > MAX_SET) return undefined;
  const out: string[] = [];
  for (const x of xs) for (const y of ys) out.push(x + y);
  return unique(out);
}

function longest(strings: readonly string[]): number {
  let n = 0;
  for (const s of strings) n = Math.max(n, s.length);
  return n;
}

class Analysis {
  constructor(private readonly sets: CharSets) {}

  /** The OR of the literals of a set of strings (ALL when any is too short). */
  private anyOf(strings: readonly string[]): LiteralQuery {
    return or(strings.map((s) => literal(s)));
  }

  /** Everything `info` says, as one query. */
  query(info: Info): LiteralQuery {
    if (info.exact) return and([info.match, this.anyOf(info.exact)]);
    return and([info.match, this.anyOf(info.prefix), this.anyOf(info.suffix)]);
  }

  analyze(node: Node): Info {
    switch (node.kind) {
      case "empty":
      case "lineStart":
      case "lineEnd":
      case "wordBoundary":
        return EMPTY_STRING;
      case "look":
        // A lookaround's text is in the input too, so what a positive one requires is.
        return node.positive
          ? { ...EMPTY_STRING, match: this.query(this.analyze(node.item)) }
          : EMPTY_STRING;
      case "backreference":
        return ANY_STRING;
      case "atom": {
        const set = this.sets.of(node.atom);
        if (set.asciiCount === 0 && !set.nonAscii) return NO_MATCH;
        if (set.members === undefined) return ANY_CHAR;
        return { emptyable: false, exact: set.members, prefix: [], suffix: [], match: ALL };
      }
      case "concat": {
        let info = EMPTY_STRING;
        for (const item of node.items) info = this.concat(info, this.analyze(item));
        return info;
      }
      case "alt":
        return this.alternate(node.items.map((item) => this.analyze(item)));
      case "repeat":
        return this.repeat(this.analyze(node.item), node.min, node.max);
    }
  }

  private concat(x: Info, y: Info): Info {
    const match = and([x.match, y.match]);
    const emptyable = x.emptyable && y.emptyable;
    if (x.exact && y.exact) {
      const exact = cross(x.exact, y.exact);
      if (exact) return this.simplify({ emptyable, exact, prefix: [], suffix: [], match });
    }
    // Every match has some x suffix followed by some y prefix.
    const xs = x.exact ?? x.suffix;
    const yp = y.exact ?? y.prefix;
    const boundary = cross(xs, yp);
    let prefix: readonly string[];
    let suffix: readonly string[];
    if (x.exact) prefix = boundary ?? x.exact;
    else prefix = x.emptyable ? [""] : x.prefix;
    if (y.exact) suffix = boundary ?? y.exact;
    else suffix = y.emptyable ? [""] : y.suffix;
    // What the new sets no longer carry goes into the query.
    const dropped: LiteralQuery[] = [match];
    if (!x.exact && !y.exact) {
      dropped.push(boundary ? this.anyOf(boundary) : and([this.anyOf(xs), this.anyOf(yp)]));
    } else if (!boundary) {
      if (!y.exact) dropped.push(this.anyOf(yp));
      if (!x.exact) dropped.push(this.anyOf(xs));
    }
    return this.simplify({
      emptyable,
      exact: undefined,
      prefix: affixes(prefix),
      suffix: affixes(suffix),
      match: and(dropped),
    });
  }

  private alternate(infos: readonly Info[]): Info {
    if (infos.every((info) => info.exact !== undefined)) {
      return this.simplify({
        emptyable: infos.some((info) => info.emptyable),
        exact: unique(infos.flatMap((info) => info.exact as readonly string[])),
        prefix: [],
        suffix: [],
        match: or(infos.map((info) => info.match)),
      });
    }
    // Each side's query is whole before the OR (`a.*b|c.*d` is (a AND b) OR (c AND d)); the
    // joint sets are kept for what is concatenated next.
    return this.simplify({
      emptyable: infos.some((info) => info.emptyable),
      exact: undefined,
      prefix: affixes(infos.flatMap((info) => info.exact ?? info.prefix)),
      suffix: affixes(infos.flatMap((info) => info.exact ?? info.suffix)),
      match: or(infos.map((info) => this.query(info))),
    });
  }

  private power(x: Info, count: number): Info {
    let info = EMPTY_STRING;
    for (let i = 0; i < count; i++) info = this.concat(info, x);
    return info;
  }

  private repeat(x: Info, min: number, max: number): Info {
    if (max === 0) return EMPTY_STRING;
    if (min === 0) return this.alternate([this.repeat(x, 1, max), EMPTY_STRING]);
    if (max <= REPEAT_EXPANSION) {
      const powers: Info[] = [];
      for (let count = min; count <= max; count++) powers.push(this.power(x, count));
      return this.alternate(powers);
    }
    // x{n,m} starts and ends with x{k} for any k <= n, and contains it: Cox's x+ (k = 1).
    const base = this.power(x, Math.min(min, REPEAT_EXPANSION));
    if (!base.exact) return base;
    return { ...base, exact: undefined, prefix: affixes(base.exact), suffix: affixes(base.exact) };
  }

  /** Keeps the sets within bounds, moving what does not fit into the query. */
  private simplify(info: Info): Info {
    let { exact, prefix, suffix, match } = info;
    if (exact) {
      if (exact.length <= MAX_SET && longest(exact) <= MAX_LENGTH) return info;
      prefix = affixes(exact);
      suffix = affixes(exact);
      exact = undefined;
    }
    if (prefix.length > MAX_SET || longest(prefix) > MAX_LENGTH) {
      match = and([match, this.anyOf(prefix)]);
      prefix = shorten(prefix, (s, n) => s.slice(0, n), MIN_LITERAL - 1);
    }
    if (suffix.length > MAX_SET || longest(suffix) > MAX_LENGTH) {
      match = and([match, this.anyOf(suffix)]);
      suffix = shorten(suffix, (s, n) => s.slice(Math.max(0, s.length - n)), MIN_LITERAL - 1);
    }
    return { emptyable: info.emptyable, exact, prefix, suffix, match };
  }
}

/**
 * A set whose strings are in the query already, cut to their outer `keep` characters (fewer
 * while the set is too big): enough for a literal across the boundary with what comes next.
 */
function shorten(
  strings: readonly string[],
  cut: (s: string, n: number) => string,
  keep: number,
): string[] {
  for (let n = keep; ; n--) {
    const set = affixes(strings.map((s) => cut(s, n)));
    if (set.length <= MAX_SET || n === 0) return set;
  }
}

/** The query every match of `node` satisfies. */
export function literalQuery(node: Node, sets: CharSets): LiteralQuery {
  const analysis = new Analysis(sets);
  return analysis.query(analysis.analyze(node));
}

/**
 * The longest text a query says every match contains (for a byte search such as
 * `Buffer.indexOf`), or undefined: a literal, the longest one an AND holds, or what all the
 * literals an OR chooses from have in common.
 */
export function requiredText(q: LiteralQuery): string | undefined {
  switch (q.kind) {
    case "literal":
      return q.text;
    case "and": {
      let best: string | undefined;
      for (const sub of q.of) {
        const text = requiredText(sub);
        if (text !== undefined && (best === undefined || text.length > best.length)) best = text;
      }
      return best;
    }
    case "or": {
      const texts: string[] = [];
      for (const sub of q.of) {
        const text = requiredText(sub);
        if (text === undefined) return undefined;
        texts.push(text);
      }
      const common = commonSubstring(texts);
      return common === "" ? undefined : common;
    }
    default:
      return undefined;
  }
}

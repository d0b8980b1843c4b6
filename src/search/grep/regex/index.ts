/**
 * What a grep regex requires of a line, worked out before any file is read: the literals every
 * match contains (an AND/OR query, for a trigram index and a byte search), a byte-level line
 * prefilter (a lazy DFA) for regexes without a useful literal, and whether every match needs a
 * non-ASCII character. Every answer is a superset: a line the real RegExp matches is never
 * ruled out. Pure; depends on the rest of `regex/`.
 *
 * The RegExp meant is the one compilePattern (../pattern.ts) builds from the pattern, run on
 * each line's text decoded from UTF-8 (invalid bytes as U+FFFD): `^`/`$` at the line's ends,
 * `.` any character but `\n`, the `i` and `u` flags as given. Word mode's lookarounds only
 * narrow the matches, so they are left out.
 */
import { CharSets } from "./charset.js";
import { groupCount, literalNode, type Node, parseRegex, UnsupportedRegex } from "./parse.js";
import { type LinePrefilter, linePrefilter } from "./prefilter.js";
import { ALL, type LiteralQuery, literalQuery, requiredText } from "./query.js";

export type { LinePrefilter } from "./prefilter.js";
export type { LiteralQuery } from "./query.js";

export interface PlanOptions {
  /** The pattern is a literal string (`-F`). */
  readonly fixedStrings: boolean;
  /** The RegExp has the `i` flag (smart case already resolved). */
  readonly ignoreCase: boolean;
  /** The RegExp has the `u` flag (compilePattern's flags: `\p{`, `\u{`, or word mode). */
  readonly unicode: boolean;
  /** Matches may span lines (`-U`): the query is then about the whole text, and no prefilter. */
  readonly multiline: boolean;
}

export interface RegexPlan {
  /**
   * What every matching line contains (with multiline, the text a match is in): literals of
   * MIN_LITERAL (3) UTF-16 code units or more, well-formed, never U+FFFD, so that each is found
   * as its UTF-8 bytes. When `folded`, they are ASCII, lower-case, and to be found ignoring
   * ASCII case; otherwise as written.
   */
  readonly query: LiteralQuery;
  /** The search ignores case: the literals are folded (lower-case ASCII). */
  readonly folded: boolean;
  /**
   * The longest text every matching line contains, 2 characters or more (folded like the
   * query's literals), for a byte search such as `Buffer.indexOf`; undefined when none is known.
   */
  readonly required: string | undefined;
  /**
   * A line prefilter, given when the regex has no `required` literal to search for (a byte
   * search for one is faster: 2-8 GB/s against the prefilter's ~400 MB/s on Linux C sources,
   * where V8 runs 100-200 MB/s per line), could fail to match at some line's start (`a*`
   * cannot), and matches may not span lines.
   */
  readonly prefilter: LinePrefilter | undefined;
  /** Every matching line holds a non-ASCII character, so a byte of 0x80 or more. */
  readonly requiresNonAscii: boolean;
  /**
   * The folded literals (`iu`) hold `k` or `s`, which also match U+212A and U+017F: they say
   * nothing of a text holding either (`FOLDED_ASIDE`), which must be searched without them.
   */
  readonly foldsAside: boolean;
}

/** A `required` literal shorter than this is not worth a byte search (pattern.ts's rule). */
const MIN_REQUIRED = 2;

function unknown(options: PlanOptions): RegexPlan {
  return {
    query: ALL,
    folded: options.ignoreCase,
    required: undefined,
    prefilter: undefined,
    requiresNonAscii: false,
    foldsAside: false,
  };
}

/**
 * `query`, narrowed where non-ASCII characters made it vague: a match is either all ASCII, and
 * then holds what the regex read as ASCII requires (`\\wAh`: one of 63 trigrams, where rg's
 * Unicode `\\w` alone allows any `?Ah`), or it holds a non-ASCII character, and then `query`.
 */
function withAsciiBranch(
  query: LiteralQuery,
  root: Node,
  sets: CharSets,
  options: PlanOptions,
): LiteralQuery {
  if (!options.unicode || query.kind === "none") return query;
  const ascii = literalQuery(root, new CharSets({ ...options, asciiOnly: true }));
  if (ascii.kind === "all" || JSON.stringify(ascii) === JSON.stringify(query)) return query;
  // No match is all ASCII: `requiresNonAscii` says so already.
  if (ascii.kind === "none") return query;
  const then = textAfterNonAscii(root, sets);
  const nonAscii: LiteralQuery =
    then === undefined ? { kind: "nonAscii" } : { kind: "nonAscii", then };
  const other: LiteralQuery =
    query.kind === "all" ? nonAscii : { kind: "and", of: [nonAscii, query] };
  return { kind: "or", of: [...(ascii.kind === "or" ? ascii.of : [ascii]), other] };
}

/**
 * Where every match of `root` that holds a non-ASCII character holds it right before an ASCII
 * text of two or more characters, that text (`\\wAh`: `Ah`): `root` is characters, and the
 * only one that can be non-ASCII is followed by those. The index then asks for a continuation
 * byte and the text, where it would read every file with a non-ASCII byte.
 */
function textAfterNonAscii(root: Node, sets: CharSets): string | undefined {
  if (root.kind !== "concat") return undefined;
  let at = -1;
  for (let i = 0; i < root.items.length; i++) {
    const item = root.items[i] as Node;
    if (item.kind !== "atom") return undefined;
    if (!sets.of(item.atom).nonAscii) continue;
    if (at !== -1) return undefined;
    at = i;
  }
  let text = "";
  for (const item of root.items.slice(at + 1)) {
    if (item.kind !== "atom" || item.atom.kind !== "char" || item.atom.code >= 0x80) break;
    text += String.fromCharCode(item.atom.code);
  }
  return at !== -1 && text.length >= 2 ? text : undefined;
}

/** Whether a literal of `query` holds one of `letters`. */
function mentions(query: LiteralQuery, letters: RegExp): boolean {
  if (query.kind === "literal") return letters.test(query.text);
  if (query.kind === "and" || query.kind === "or") {
    return query.of.some((part) => mentions(part, letters));
  }
  return false;
}

/**
 * Whether V8 counts the groups the parser counted: a cheap check that both read the pattern's
 * structure alike. A pattern that does not compile alone here (compilePattern rewrites `^`,
 * `$` and `.` first) is left to the parser.
 */
function sameGroups(pattern: string, flags: string): boolean {
  let captures: number;
  try {
    captures = (new RegExp(`(?:${pattern})|`, flags).exec("") as RegExpExecArray).length - 1;
  } catch {
    return true;
  }
  return captures === groupCount(pattern);
}

/** Whether some match of `node` is ASCII only. */
function asciiPossible(node: Node, sets: CharSets): boolean {
  switch (node.kind) {
    case "atom":
      return sets.of(node.atom).asciiCount > 0;
    case "concat":
      return node.items.every((item) => asciiPossible(item, sets));
    case "alt":
      return node.items.some((item) => asciiPossible(item, sets));
    case "repeat":
      return node.min === 0 || asciiPossible(node.item, sets);
    case "look":
      return !node.positive || asciiPossible(node.item, sets);
    default:
      return true;
  }
}

/** The plan for a grep pattern; never throws for a pattern compilePattern accepts. */
export function planRegex(pattern: string, options: PlanOptions): RegexPlan {
  const flags = `${options.ignoreCase ? "i" : ""}${options.unicode ? "u" : ""}`;
  try {
    const root = options.fixedStrings
      ? literalNode(pattern, options.unicode)
      : parseRegex(pattern, options.unicode);
    if (!options.fixedStrings && !sameGroups(pattern, flags)) return unknown(options);
    const sets = new CharSets(options);
    const query = withAsciiBranch(literalQuery(root, sets), root, sets, options);
    const found = requiredText(query);
    const required = found !== undefined && found.length >= MIN_REQUIRED ? found : undefined;
    return {
      query,
      folded: options.ignoreCase,
      required,
      prefilter:
        options.multiline || required !== undefined || query.kind === "none"
          ? undefined
          : linePrefilter(root, sets, options.unicode),
      requiresNonAscii: !asciiPossible(root, sets),
      foldsAside:
        options.ignoreCase &&
        options.unicode &&
        (mentions(query, /[ks]/) || /[ks]/.test(required ?? "")),
    };
  } catch (error) {
    // RangeError: a pattern nested deeper than this parser's stack (V8's own goes deeper).
    if (error instanceof UnsupportedRegex || error instanceof RangeError) return unknown(options);
    throw error;
  }
}

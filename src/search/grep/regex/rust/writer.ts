/**
 * The writer: the parsed tree as compilePattern's JavaScript (the `u` flag; `^`/`$` a line's
 * ends, `.` any character but `\n`). `\w`, `\d`, `\s` and `\b` as Unicode classes and
 * lookarounds, class set operations as lookaheads over one character, case folding spelled out
 * where only part of the pattern ignores case. Pure; depends on `tree`, `classes` and `folding`.
 */
import { POSIX } from "./classes.js";
import { caseOrbits } from "./folding.js";
import type { ClassExpr, RNode } from "./tree.js";

/** Unicode's word characters, as Rust's `\w` (UTS#18 Annex C), as a class body: `\b`'s and -w's. */
export const UNICODE_WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
const ASCII_WORD = "0-9A-Za-z_";

/**
 * A code point written for JavaScript (`u` flag): controls as `\\u{..}`, and every syntax
 * character escaped; `-` too in a class (outside one, `\\-` is a syntax error under `u`).
 */
function jsChar(cp: number, inClass = false): string {
  if (cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0) || cp === 0x2028 || cp === 0x2029) {
    return `\\u{${cp.toString(16)}}`;
  }
  const char = String.fromCodePoint(cp);
  return "\\^$.*+?()[]{}|/".includes(char) || (inClass && char === "-") ? `\\${char}` : char;
}

/** The JavaScript for `set` (one character), `fold` applying case folding by hand. */
class ClassWriter {
  readonly #fold: boolean;

  constructor(fold: boolean) {
    this.#fold = fold;
  }

  /** A class body of positive leaves (to sit in `[...]`), or undefined when it needs more. */
  #flat(set: ClassExpr): string | undefined {
    switch (set.t) {
      case "ranges": {
        let body = set.ranges
          .map(([from, to]) =>
            from === to ? jsChar(from, true) : `${jsChar(from, true)}-${jsChar(to, true)}`,
          )
          .join("");
        if (this.#fold) body += this.#foldExtra(`[${body}]`);
        return body;
      }
      case "prop": {
        let body = `\\p{${set.name}}`;
        if (this.#fold) body += this.#foldExtra(`[${body}]`);
        return body;
      }
      case "perl":
        // Closed under case folding: nothing to add.
        if (set.kind === "d") return set.unicode ? "\\p{Nd}" : "0-9";
        if (set.kind === "s") return set.unicode ? "\\p{White_Space}" : "\\t\\n\\v\\f\\r ";
        return set.unicode ? UNICODE_WORD : ASCII_WORD;
      case "union": {
        const parts = set.items.map((item) => this.#flat(item));
        return parts.every((part) => part !== undefined) ? parts.join("") : undefined;
      }
      default:
        return undefined;
    }
  }

  /** The characters case folding adds to the class `probe` (JavaScript, `u`), as a body. */
  #foldExtra(probe: string): string {
    const test = new RegExp(probe, "u");
    let extra = "";
    for (const [cp, orbit] of caseOrbits()) {
      if (test.test(String.fromCodePoint(cp))) continue;
      if (orbit.some((other) => test.test(String.fromCodePoint(other)))) extra += jsChar(cp, true);
    }
    return extra;
  }

  /** An expression matching exactly one character of `set`. */
  write(set: ClassExpr): string {
    const flat = this.#flat(set);
    if (flat !== undefined) return `[${flat}]`;
    switch (set.t) {
      case "not": {
        const inner = this.#flat(set.item);
        // A bracket's negation comes after case folding, as in Rust (for `\P{..}` too).
        return inner !== undefined ? `[^${inner}]` : `(?:(?!${this.write(set.item)})[^])`;
      }
      case "union":
        return `(?:${set.items.map((item) => this.write(item)).join("|")})`;
      case "and":
        return `(?:(?=${this.write(set.a)})${this.write(set.b)})`;
      case "minus":
        return `(?:(?!${this.write(set.b)})${this.write(set.a)})`;
      case "xor": {
        const a = this.write(set.a);
        const b = this.write(set.b);
        return `(?:(?!${b})${a}|(?!${a})${b})`;
      }
      default:
        throw new Error("unreachable: a flat class");
    }
  }
}

const IS_WORD = new RegExp(`^[${UNICODE_WORD}]$`, "u");
const IS_ASCII_WORD = new RegExp(`^[${ASCII_WORD}]$`);

/**
 * Whether every match of `node` begins (`first`) or ends (`last`) with a word character:
 * Unicode's, or with `unicode` false, ASCII's.
 */
function wordy(node: RNode, side: "first" | "last", unicode: boolean): boolean {
  switch (node.t) {
    case "lit":
      return (unicode ? IS_WORD : IS_ASCII_WORD).test(String.fromCodePoint(node.cp));
    case "class": {
      const { set } = node;
      if (set.t === "perl")
        return (set.kind === "w" || set.kind === "d") && (unicode || !set.unicode);
      // ASCII word ranges only (case folding keeps a letter a letter).
      const word = POSIX.word as readonly (readonly [number, number])[];
      return (
        set.t === "ranges" &&
        set.ranges.every(([from, to]) => word.some(([lo, hi]) => from >= lo && to <= hi))
      );
    }
    case "repeat":
      return node.min >= 1 && wordy(node.item, side, unicode);
    case "group":
      return wordy(node.item, side, unicode);
    case "concat": {
      const edge = side === "first" ? node.items[0] : node.items[node.items.length - 1];
      return edge !== undefined && wordy(edge, side, unicode);
    }
    case "alt":
      return node.items.every((item) => wordy(item, side, unicode));
    default:
      return false;
  }
}

/** The JavaScript for a parsed pattern; `byHand` spells case folding out. */
export function write(node: RNode, options: { byHand: boolean; multiline: boolean }): string {
  const w = (n: RNode) => write(n, options);
  switch (node.t) {
    case "empty":
      return "";
    case "lit": {
      if (!options.byHand || !node.fold) return jsChar(node.cp);
      const orbit = caseOrbits().get(node.cp);
      return orbit ? `[${orbit.map((cp) => jsChar(cp, true)).join("")}]` : jsChar(node.cp);
    }
    case "dot":
      // compilePattern reads `.` as any character but `\n`.
      return node.all ? "[^]" : ".";
    case "class":
      return new ClassWriter(options.byHand && node.fold).write(node.set);
    case "start":
      // In a line, `\A` is the line's start, as in rg; over a whole text (`-U`), its start.
      return node.multi || !options.multiline ? "^" : "(?<![^])";
    case "end":
      return node.multi || !options.multiline ? "$" : "(?![^])";
    case "word": {
      const word = `[${node.unicode ? UNICODE_WORD : ASCII_WORD}]`;
      return node.negated
        ? `(?:(?<=${word})(?=${word})|(?<!${word})(?!${word}))`
        : `(?:(?<=${word})(?!${word})|(?<!${word})(?=${word}))`;
    }
    case "group": {
      const inner = w(node.item);
      if (!node.capture) return `(?:${inner})`;
      return node.name === undefined ? `(${inner})` : `(?<${node.name}>${inner})`;
    }
    case "concat":
      return node.items
        .map((item, i) => {
          if (item.t === "word" && !item.negated) {
            // Beside a part that always begins (or ends) with a word character, a boundary is
            // one lookaround: `\b[a-z]+` runs 3× faster so than with the two-sided form.
            const word = `[${item.unicode ? UNICODE_WORD : ASCII_WORD}]`;
            const next = node.items[i + 1];
            const previous = node.items[i - 1];
            if (next && wordy(next, "first", item.unicode)) return `(?<!${word})`;
            if (previous && wordy(previous, "last", item.unicode)) return `(?!${word})`;
          }
          const text = w(item);
          return item.t === "alt" ? `(?:${text})` : text;
        })
        .join("");
    case "alt":
      return node.items.map(w).join("|");
    case "repeat": {
      const item = w(node.item);
      const single =
        node.item.t === "lit" ||
        node.item.t === "dot" ||
        (node.item.t === "group" && node.item.capture) ||
        (node.item.t === "class" && item.startsWith("[") && item.endsWith("]"));
      const base = single ? item : `(?:${item})`;
      const count =
        node.min === 0 && node.max === Number.POSITIVE_INFINITY
          ? "*"
          : node.min === 1 && node.max === Number.POSITIVE_INFINITY
            ? "+"
            : node.min === 0 && node.max === 1
              ? "?"
              : node.max === Number.POSITIVE_INFINITY
                ? `{${node.min},}`
                : node.min === node.max
                  ? `{${node.min}}`
                  : `{${node.min},${node.max}}`;
      return `${base}${count}${node.greedy ? "" : "?"}`;
    }
  }
}

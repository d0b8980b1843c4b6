/**
 * JavaScript regular expressions, read as V8 reads them (strictly with the `u` flag, with
 * Annex B's legacy syntax without it), into the small tree that the literal analysis (`query`)
 * and the byte automaton (`prefilter`) work on. Syntax only: which characters an atom matches
 * is `charset`'s question. Pure; depends on nothing.
 */

/** What one character of input may be: the leaves of the tree. */
export type Atom =
  /** One character: a UTF-16 code unit, or a code point with the `u` flag. */
  | { readonly kind: "char"; readonly code: number }
  /** `.`, which in a grep pattern is any character but `\n` (pattern.ts's withLineSemantics). */
  | { readonly kind: "dot" }
  /** `\d \D \s \S \w \W`, or `\p{…} \P{…}` (letter `p`/`P`); `source` as written. */
  | { readonly kind: "escape"; readonly letter: string; readonly source: string }
  /** `[…]`; `source` as written, brackets included. */
  | {
      readonly kind: "class";
      readonly source: string;
      readonly negated: boolean;
      readonly items: readonly ClassItem[];
    };

export type ClassItem =
  /** A character (`from === to`) or a range of them. */
  | { readonly kind: "range"; readonly from: number; readonly to: number }
  /** A class escape inside the class (`\d`, `\p{…}`...). */
  | { readonly kind: "escape"; readonly letter: string };

export type Node =
  | { readonly kind: "empty" }
  | { readonly kind: "atom"; readonly atom: Atom }
  | { readonly kind: "concat"; readonly items: readonly Node[] }
  | { readonly kind: "alt"; readonly items: readonly Node[] }
  /** `max` is Infinity when unbounded. */
  | { readonly kind: "repeat"; readonly min: number; readonly max: number; readonly item: Node }
  /** `^` and `$`: a line's start and end (`\n` only) in a grep pattern. */
  | { readonly kind: "lineStart" }
  | { readonly kind: "lineEnd" }
  /** A lookahead or lookbehind: zero-width; a positive one's text is in the input too. */
  | { readonly kind: "look"; readonly positive: boolean; readonly item: Node }
  /** `\b`, `\B` */
  | { readonly kind: "wordBoundary" }
  /** `\1`, `\k<name>`: the text a group matched, unknown here. */
  | { readonly kind: "backreference" };

/** A construct this parser does not know (such as `(?i:…)`): the caller knows nothing then. */
export class UnsupportedRegex extends Error {}

const EMPTY: Node = { kind: "empty" };
/** Counts above this are clamped (V8 clamps too): a superset's bounds only need to be loose. */
const MAX_COUNT = 2 ** 31 - 1;

const QUANTIFIER = /\{(\d+)(?:(,)(\d*))?\}/y;
const DIGITS = /\d+/y;
const LOW_SURROGATE = /\\u([dD][c-fC-F][0-9a-fA-F]{2})/y;
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { f: 12, n: 10, r: 13, t: 9, v: 11 };
const CLASS_ESCAPES = "dDsSwW";

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

function isOctal(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "7";
}

function isHex(text: string): boolean {
  return /^[0-9a-fA-F]+$/.test(text);
}

function isAsciiLetter(c: string | undefined): boolean {
  return c !== undefined && /^[A-Za-z]$/.test(c);
}

/**
 * Capturing groups, counted as V8 counts them before it parses (a `\2` is a backreference only
 * when the pattern has two groups, wherever they are), and whether any is named.
 */
function scanGroups(source: string): { count: number; named: boolean } {
  let count = 0;
  let named = false;
  for (let i = 0; i < source.length; ) {
    const c = source[i];
    if (c === "\\") {
      i += 2;
    } else if (c === "[") {
      i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
      i++;
    } else {
      if (c === "(") {
        if (source[i + 1] !== "?") {
          count++;
        } else if (source[i + 2] === "<" && source[i + 3] !== "=" && source[i + 3] !== "!") {
          count++;
          named = true;
        }
      }
      i++;
    }
  }
  return { count, named };
}

class Parser {
  private at = 0;
  private readonly groups: number;
  private readonly named: boolean;

  constructor(
    private readonly source: string,
    private readonly unicode: boolean,
  ) {
    ({ count: this.groups, named: this.named } = scanGroups(source));
  }

  parse(): Node {
    const node = this.disjunction();
    if (this.at < this.source.length) throw new UnsupportedRegex(`unexpected ${this.peek()}`);
    return node;
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.at + offset];
  }

  private fail(what: string): never {
    throw new UnsupportedRegex(`${what} at ${this.at}`);
  }

  private expect(c: string): void {
    if (this.peek() !== c) this.fail(`expected ${c}`);
    this.at++;
  }

  private disjunction(): Node {
    const alternatives = [this.alternative()];
    while (this.peek() === "|") {
      this.at++;
      alternatives.push(this.alternative());
    }
    return alternatives.length === 1
      ? (alternatives[0] as Node)
      : { kind: "alt", items: alternatives };
  }

  private alternative(): Node {
    const items: Node[] = [];
    for (let c = this.peek(); c !== undefined && c !== "|" && c !== ")"; c = this.peek()) {
      const term = this.term();
      const count = this.quantifier();
      items.push(count ? { kind: "repeat", min: count.min, max: count.max, item: term } : term);
    }
    if (items.length === 0) return EMPTY;
    return items.length === 1 ? (items[0] as Node) : { kind: "concat", items };
  }

  private term(): Node {
    const c = this.peek();
    switch (c) {
      case "^":
        this.at++;
        return { kind: "lineStart" };
      case "$":
        this.at++;
        return { kind: "lineEnd" };
      case ".":
        this.at++;
        return { kind: "atom", atom: { kind: "dot" } };
      case "(":
        return this.group();
      case "[":
        return { kind: "atom", atom: this.characterClass() };
      case "\\":
        return this.atomEscape();
      case "*":
      case "+":
      case "?":
        return this.fail("nothing to repeat");
      default:
        // Annex B lets `{`, `}` and `]` stand for themselves; with `u` they do not compile.
        return { kind: "atom", atom: { kind: "char", code: this.literalCharacter() } };
    }
  }

  /** The character at `at` as it stands: a code point with `u`, else a code unit. */
  private literalCharacter(): number {
    const code = this.unicode
      ? (this.source.codePointAt(this.at) as number)
      : this.source.charCodeAt(this.at);
    this.at += code > 0xffff ? 2 : 1;
    return code;
  }

  private quantifier(): { min: number; max: number } | undefined {
    const c = this.peek();
    let count: { min: number; max: number };
    if (c === "*") count = { min: 0, max: Infinity };
    else if (c === "+") count = { min: 1, max: Infinity };
    else if (c === "?") count = { min: 0, max: 1 };
    else if (c === "{") {
      QUANTIFIER.lastIndex = this.at;
      const m = QUANTIFIER.exec(this.source);
      // Not a quantifier's shape: a literal `{` (Annex B), read as the next term.
      if (!m) return undefined;
      const min = Math.min(Number(m[1]), MAX_COUNT);
      const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      this.at += m[0].length - 1;
      count = { min, max: max > MAX_COUNT ? Infinity : max };
    } else return undefined;
    this.at++;
    if (this.peek() === "?") this.at++; // lazy: the same strings
    return count;
  }

  private group(): Node {
    this.at++; // (
    let make: (inner: Node) => Node = (inner) => inner;
    if (this.peek() === "?") {
      const kind = this.peek(1);
      const next = this.peek(2);
      if (kind === ":") {
        this.at += 2;
      } else if (kind === "=" || kind === "!") {
        this.at += 2;
        make = (inner) => ({ kind: "look", positive: kind === "=", item: inner });
      } else if (kind === "<" && (next === "=" || next === "!")) {
        this.at += 3;
        make = (inner) => ({ kind: "look", positive: next === "=", item: inner });
      } else if (kind === "<") {
        const close = this.source.indexOf(">", this.at);
        if (close === -1) this.fail("unterminated group name");
        this.at = close + 1;
      } else {
        // Modifiers (`(?i:…)`) and whatever a later engine adds.
        this.fail("unknown group");
      }
    }
    const inner = this.disjunction();
    this.expect(")");
    return make(inner);
  }

  /** After a `\` outside a class. */
  private atomEscape(): Node {
    this.at++; // backslash
    const c = this.peek();
    if (c === undefined) this.fail("trailing backslash");
    if (c === "b" || c === "B") {
      this.at++;
      return { kind: "wordBoundary" };
    }
    if (CLASS_ESCAPES.includes(c) || (this.unicode && (c === "p" || c === "P"))) {
      return { kind: "atom", atom: this.classEscape(c) };
    }
    if (c === "k" && (this.unicode || this.named)) {
      const close = this.source.indexOf(">", this.at);
      if (this.peek(1) !== "<" || close === -1) this.fail("bad \\k");
      this.at = close + 1;
      return { kind: "backreference" };
    }
    if (c >= "1" && c <= "9") {
      DIGITS.lastIndex = this.at;
      const digits = DIGITS.exec(this.source)?.[0] as string;
      if (Number(digits) <= this.groups) {
        this.at += digits.length;
        return { kind: "backreference" };
      }
      if (this.unicode) this.fail("bad backreference");
      // Annex B: not a group's number, so an octal escape, or `8`/`9` as themselves.
    }
    return { kind: "atom", atom: { kind: "char", code: this.characterEscape(false) } };
  }

  /** `\d`…, `\p{…}` at `at` (after the backslash). */
  private classEscape(letter: string): Atom {
    const start = this.at - 1;
    this.at++;
    if (letter === "p" || letter === "P") {
      const close = this.source.indexOf("}", this.at);
      if (this.peek() !== "{" || close === -1) this.fail("bad property escape");
      this.at = close + 1;
    }
    return { kind: "escape", letter, source: this.source.slice(start, this.at) };
  }

  /**
   * The character an escape stands for, `at` just after the backslash (digits here are never a
   * backreference). Annex B's forms without `u`: octal escapes, `\c` without a letter (then the
   * backslash is itself and the `c` is read next), `\x`/`\u` without their digits (the letter).
   */
  private characterEscape(inClass: boolean): number {
    const c = this.peek() as string;
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) {
      this.at++;
      return control;
    }
    if (c === "c") {
      const letter = this.peek(1);
      if (
        isAsciiLetter(letter) ||
        (inClass && !this.unicode && (isDigit(letter) || letter === "_"))
      ) {
        this.at += 2;
        return (letter as string).charCodeAt(0) % 32;
      }
      if (this.unicode) this.fail("bad \\c");
      return 0x5c;
    }
    if (c === "0" && !isDigit(this.peek(1))) {
      this.at++;
      return 0;
    }
    if (isDigit(c)) {
      if (this.unicode) this.fail("bad decimal escape");
      if (c === "8" || c === "9") {
        this.at++;
        return c.charCodeAt(0);
      }
      return this.octal();
    }
    if (c === "x") {
      const hex = this.source.slice(this.at + 1, this.at + 3);
      if (hex.length === 2 && isHex(hex)) {
        this.at += 3;
        return Number.parseInt(hex, 16);
      }
      if (this.unicode) this.fail("bad \\x");
      this.at++;
      return 0x78;
    }
    if (c === "u") return this.unicodeEscape();
    return this.literalCharacter();
  }

  /** V8's legacy octal escape: `\[0-3][0-7][0-7]?` or `\[0-7][0-7]?`. */
  private octal(): number {
    let value = Number(this.peek());
    this.at++;
    if (isOctal(this.peek())) {
      value = value * 8 + Number(this.peek());
      this.at++;
      if (value < 32 && isOctal(this.peek())) {
        value = value * 8 + Number(this.peek());
        this.at++;
      }
    }
    return value;
  }

  /** `\uHHHH`, and with `u` `\u{H…}` and a surrogate pair written as two escapes. */
  private unicodeEscape(): number {
    if (this.unicode && this.peek(1) === "{") {
      const close = this.source.indexOf("}", this.at);
      const hex = this.source.slice(this.at + 2, close);
      if (close === -1 || !isHex(hex)) this.fail("bad \\u{}");
      this.at = close + 1;
      return Number.parseInt(hex, 16);
    }
    const hex = this.source.slice(this.at + 1, this.at + 5);
    if (hex.length !== 4 || !isHex(hex)) {
      if (this.unicode) this.fail("bad \\u");
      this.at++;
      return 0x75;
    }
    this.at += 5;
    const unit = Number.parseInt(hex, 16);
    if (this.unicode && unit >= 0xd800 && unit <= 0xdbff) {
      LOW_SURROGATE.lastIndex = this.at;
      const low = LOW_SURROGATE.exec(this.source);
      if (low) {
        this.at += 6;
        return 0x10000 + ((unit - 0xd800) << 10) + (Number.parseInt(low[1] as string, 16) - 0xdc00);
      }
    }
    return unit;
  }

  private characterClass(): Atom {
    const start = this.at;
    this.at++; // [
    const negated = this.peek() === "^";
    if (negated) this.at++;
    const items: ClassItem[] = [];
    while (this.peek() !== "]") {
      if (this.peek() === undefined) this.fail("unterminated class");
      const first = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== undefined) {
        this.at++;
        const last = this.classAtom();
        if (first.kind === "escape" || last.kind === "escape") {
          // Annex B: a range with a class escape at either end is its ends and a `-`.
          items.push(first, { kind: "range", from: 0x2d, to: 0x2d }, last);
        } else {
          items.push({ kind: "range", from: first.from, to: last.from });
        }
      } else {
        items.push(first);
      }
    }
    this.at++; // ]
    return { kind: "class", source: this.source.slice(start, this.at), negated, items };
  }

  private classAtom(): ClassItem {
    if (this.peek() !== "\\") {
      const code = this.literalCharacter();
      return { kind: "range", from: code, to: code };
    }
    this.at++;
    const c = this.peek();
    if (c === undefined) this.fail("trailing backslash");
    if (CLASS_ESCAPES.includes(c) || (this.unicode && (c === "p" || c === "P"))) {
      this.classEscape(c);
      return { kind: "escape", letter: c };
    }
    let code: number;
    if (c === "b") {
      this.at++;
      code = 8;
    } else if (c === "-") {
      this.at++;
      code = 0x2d;
    } else {
      code = this.characterEscape(true);
    }
    return { kind: "range", from: code, to: code };
  }
}

/** The tree of a regex source; throws UnsupportedRegex on what it cannot read. */
export function parseRegex(source: string, unicode: boolean): Node {
  return new Parser(source, unicode).parse();
}

/** The tree of a literal string (`-F`): its characters in a row. */
export function literalNode(text: string, unicode: boolean): Node {
  const items: Node[] = [];
  for (let at = 0; at < text.length; ) {
    const code = unicode ? (text.codePointAt(at) as number) : text.charCodeAt(at);
    at += code > 0xffff ? 2 : 1;
    items.push({ kind: "atom", atom: { kind: "char", code } });
  }
  if (items.length === 0) return EMPTY;
  return items.length === 1 ? (items[0] as Node) : { kind: "concat", items };
}

/** Capturing groups in the source, for checking the parse against V8's count. */
export function groupCount(source: string): number {
  return scanGroups(source).count;
}

/**
 * The parser of rg's syntax: one pass over the pattern's code points, with the flags as they
 * stand at each point, into the tree of `tree.ts`; rg's errors where rg refuses the pattern.
 * Pure; depends on `errors`, `tree` and `classes`.
 */
import type { FreshfsError } from "../../../../errors.js";
import { POSIX, resolveProperty } from "./classes.js";
import { BYTE_CLASS, BYTE_DOT, BYTE_ESCAPE, lineBreakError, syntaxError } from "./errors.js";
import { type ClassExpr, concat, type Flags, type RNode } from "./tree.js";

/** Rust's escapable meta characters (regex-syntax `is_meta_character`). */
const META = new Set("\\.+*?()|[]{}^$#&-~");

const HEX = /^[0-9a-fA-F]+$/;

/** The parser: one pass over the pattern, flags as they stand at each point. */
export class Parser {
  readonly #pattern: string;
  /** The pattern's code points: positions (and carets) count them, as rg counts characters. */
  readonly #chars: readonly string[];
  #at = 0;
  #names = new Set<string>();
  /** Upper-case literal characters seen (rg's smart case looks at literals only). */
  upperCase = false;

  /** Lines are searched one at a time: a literal line break is refused (rg's rule). */
  readonly #lines: boolean;

  constructor(pattern: string, lines: boolean) {
    this.#pattern = pattern;
    this.#chars = Array.from(pattern);
    this.#lines = lines;
  }

  parse(flags: Flags): RNode {
    const node = this.#alternation(flags, 0);
    if (this.#at < this.#chars.length) throw this.#error(this.#at, this.#at + 1, "unopened group");
    return node;
  }

  #error(from: number, to: number, message: string): FreshfsError {
    return syntaxError(this.#pattern, from, to, message);
  }

  #incomplete(start: number): FreshfsError {
    return this.#error(
      start,
      this.#at,
      "incomplete escape sequence, reached end of pattern prematurely",
    );
  }

  /** What stands between the `{` here and its `}` (both passed), for the escape at `start`. */
  #braced(start: number): string {
    this.#at++;
    const from = this.#at;
    while (this.#peek() !== undefined && this.#peek() !== "}") this.#at++;
    if (this.#peek() === undefined) throw this.#incomplete(start);
    const inside = this.#chars.slice(from, this.#at).join("");
    this.#at++;
    return inside;
  }

  #peek(offset = 0): string | undefined {
    return this.#chars[this.#at + offset];
  }

  /** Skips white space and `#` comments in `(?x)` mode. */
  #skipSpace(flags: Flags): void {
    if (!flags.x) return;
    for (;;) {
      const c = this.#peek();
      if (c !== undefined && /\s/u.test(c)) this.#at++;
      else if (c === "#") {
        while (this.#peek() !== undefined && this.#peek() !== "\n") this.#at++;
      } else return;
    }
  }

  /** Alternatives up to `)` or the end; `depth` 0 at the top. Flags set inside stay inside. */
  #alternation(outer: Flags, depth: number): RNode {
    const flags = { ...outer };
    const branches: RNode[] = [];
    let items: RNode[] = [];
    // A flag group (`(?i)`) just read: nothing there to repeat.
    let afterFlags = false;
    for (;;) {
      this.#skipSpace(flags);
      const c = this.#peek();
      if (c === undefined || (c === ")" && depth > 0)) break;
      if (c === ")") throw this.#error(this.#at, this.#at + 1, "unopened group");
      if (c === "|") {
        this.#at++;
        branches.push(concat(items));
        items = [];
        afterFlags = false;
        continue;
      }
      if ("*+?{".includes(c)) {
        const previous = afterFlags ? undefined : items.pop();
        if (!previous) {
          throw this.#error(this.#at, this.#at + 1, "repetition operator missing expression");
        }
        items.push(this.#repetition(previous, flags));
        continue;
      }
      const atom = this.#atom(flags);
      afterFlags = atom === undefined;
      if (atom) items.push(atom);
    }
    branches.push(concat(items));
    return branches.length === 1 ? (branches[0] as RNode) : { t: "alt", items: branches };
  }

  #repetition(item: RNode, flags: Flags): RNode {
    const start = this.#at;
    const c = this.#peek() as string;
    this.#at++;
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Number.POSITIVE_INFINITY];
    else if (c === "+") [min, max] = [1, Number.POSITIVE_INFINITY];
    else if (c === "?") [min, max] = [0, 1];
    else {
      [min, max] = this.#counted(start);
    }
    let greedy = true;
    if (this.#peek() === "?") {
      this.#at++;
      greedy = false;
    }
    return { t: "repeat", min, max, greedy: flags.U ? !greedy : greedy, item };
  }

  /** `{n}`, `{n,}`, `{n,m}` after the `{` at `start`. */
  #counted(start: number): [number, number] {
    const space = () => {
      while (this.#peek() !== undefined && /\s/u.test(this.#peek() as string)) this.#at++;
    };
    const decimal = (): number => {
      space();
      const from = this.#at;
      while (/^[0-9]$/.test(this.#peek() ?? "")) this.#at++;
      if (this.#at === from) {
        if (this.#peek() === undefined) {
          throw this.#error(start, this.#at, "unclosed counted repetition");
        }
        throw this.#error(from, from + 1, "repetition quantifier expects a valid decimal");
      }
      const value = Number(this.#chars.slice(from, this.#at).join(""));
      space();
      return value;
    };
    const min = decimal();
    let max = min;
    if (this.#peek() === ",") {
      this.#at++;
      space();
      max = this.#peek() === "}" ? Number.POSITIVE_INFINITY : decimal();
    }
    if (this.#peek() !== "}") throw this.#error(start, this.#at, "unclosed counted repetition");
    this.#at++;
    if (max < min) {
      throw this.#error(
        start,
        this.#at,
        "invalid repetition count range, the start must be <= the end",
      );
    }
    return [min, max];
  }

  /** One atom; undefined for a flag group that only sets flags (`(?i)`). */
  #atom(flags: Flags): RNode | undefined {
    const start = this.#at;
    const c = this.#peek() as string;
    if (c === "(") return this.#group(flags);
    if (c === "[") {
      const set = this.#class(flags);
      return { t: "class", set, fold: flags.i };
    }
    this.#at++;
    if (c === ".") {
      if (!flags.u) throw this.#error(start, this.#at, BYTE_DOT);
      return { t: "dot", all: flags.s };
    }
    if (c === "^") return { t: "start", multi: flags.m };
    if (c === "$") return { t: "end", multi: flags.m };
    if (c === "\\") return this.#escape(start, flags);
    return this.#literal(c.codePointAt(0) as number, start, flags);
  }

  #literal(cp: number, start: number, flags: Flags): RNode {
    if (!flags.u && cp > 0x7f) throw this.#error(start, this.#at, "Unicode not allowed here");
    if (cp === 0x0a && this.#lines) throw lineBreakError(this.#pattern);
    const char = String.fromCodePoint(cp);
    if (char !== char.toLowerCase()) this.upperCase = true;
    return { t: "lit", cp, fold: flags.i };
  }

  #group(outer: Flags): RNode | undefined {
    const start = this.#at;
    this.#at++;
    let capture = true;
    let name: string | undefined;
    const flags = { ...outer };
    if (this.#peek() === "?") {
      this.#at++;
      const next = this.#peek();
      if (next === "P" && this.#peek(1) === "<") {
        this.#at += 2;
        const from = this.#at;
        while (this.#peek() !== undefined && this.#peek() !== ">") this.#at++;
        if (this.#peek() === undefined) {
          throw this.#error(from, this.#at, "unclosed capture group name");
        }
        name = this.#chars.slice(from, this.#at).join("");
        if (name === "") throw this.#error(from, from + 1, "empty capture group name");
        const bad = [...name].findIndex((ch, k) =>
          k === 0 ? !/^[_A-Za-z]$/.test(ch) : !/^[_A-Za-z0-9]$/.test(ch),
        );
        if (bad !== -1) {
          throw this.#error(from + bad, from + bad + 1, "invalid capture group character");
        }
        if (this.#names.has(name)) {
          throw this.#error(from, this.#at, "duplicate capture group name");
        }
        this.#names.add(name);
        this.#at++;
      } else if (
        next === "=" ||
        next === "!" ||
        (next === "<" && "=!".includes(this.#peek(1) ?? ""))
      ) {
        throw this.#error(
          start,
          this.#at + (next === "<" ? 2 : 1),
          "look-around, including look-ahead and look-behind, is not supported",
        );
      } else {
        capture = false;
        const scoped = this.#flags(flags);
        if (!scoped) {
          // `(?flags)`: they hold until the enclosing group ends.
          Object.assign(outer, flags);
          return undefined;
        }
      }
    }
    const item = this.#alternation(flags, 1);
    if (this.#peek() !== ")") throw this.#error(start, start + 1, "unclosed group");
    this.#at++;
    return name === undefined ? { t: "group", capture, item } : { t: "group", capture, name, item };
  }

  /** The flags of `(?flags)` or `(?flags:`, applied to `flags`; true when a `:` scope follows. */
  #flags(flags: Flags): boolean {
    const seen = new Set<string>();
    let negate = false;
    let negation = -1;
    let any = false;
    for (;;) {
      const c = this.#peek();
      const at = this.#at;
      if (c === undefined) throw this.#error(at, at, "unclosed group");
      if (c === ")" || c === ":") {
        if (negate && negation === this.#at - 1) {
          throw this.#error(negation, negation + 1, "dangling flag negation operator");
        }
        if (c === ")" && !any && !negate) {
          throw this.#error(at, at + 1, "repetition operator missing expression");
        }
        this.#at++;
        return c === ":";
      }
      this.#at++;
      if (c === "-") {
        if (negate) throw this.#error(at, at + 1, "repeated negation");
        negate = true;
        negation = at;
        continue;
      }
      if (!"imsUux".includes(c)) throw this.#error(at, at + 1, "unrecognized flag");
      if (seen.has(c)) throw this.#error(at, at + 1, "duplicate flag");
      seen.add(c);
      any = true;
      (flags as unknown as Record<string, boolean>)[c] = !negate;
    }
  }

  /** After `\` at `start`. */
  #escape(start: number, flags: Flags): RNode {
    const c = this.#peek();
    if (c === undefined) {
      throw this.#incomplete(start);
    }
    this.#at++;
    switch (c) {
      case "A":
        return { t: "start", multi: false };
      case "z":
        return { t: "end", multi: false };
      case "b":
        return { t: "word", negated: false, unicode: flags.u };
      case "B":
        return { t: "word", negated: true, unicode: flags.u };
      default: {
        const set = this.#classEscape(start, c, flags);
        if (set) return { t: "class", set, fold: flags.i };
        return this.#literal(this.#charEscape(start, c, flags, false), start, flags);
      }
    }
  }

  /** `\d \s \w` (and negations), `\p…`, `\P…` after `\` at `start`; undefined for others. */
  #classEscape(start: number, c: string, flags: Flags): ClassExpr | undefined {
    if (/^[dswDSW]$/.test(c)) {
      const lower = c.toLowerCase() as "d" | "s" | "w";
      const set: ClassExpr = { t: "perl", kind: lower, unicode: flags.u };
      return c === lower ? set : { t: "not", item: set };
    }
    if (c !== "p" && c !== "P") return undefined;
    if (!flags.u) throw this.#error(start, this.#at, "Unicode not allowed here");
    let raw: string;
    if (this.#peek() === "{") raw = this.#braced(start);
    else {
      const letter = this.#peek();
      if (letter === undefined) {
        throw this.#incomplete(start);
      }
      this.#at++;
      raw = letter;
    }
    if (raw.includes("!=")) {
      // rg 13 reads `\p{sc!=Latin}` as `\p{sc=Latin}` (its regex crate's bug): refused, so
      // that neither reading answers silently.
      throw this.#error(
        start,
        this.#at,
        "`!=` in a Unicode property: rg 13 matches it as `=`; write \\P{...} for the negation",
      );
    }
    const negated = c === "P";
    const name = resolveProperty(raw, (message) => this.#error(start, this.#at, message));
    if (name === undefined) throw this.#error(start, this.#at, "Unicode property not found");
    const set: ClassExpr = { t: "prop", name };
    return negated ? { t: "not", item: set } : set;
  }

  /** The code point of a literal escape after `\` at `start` (`c` read). */
  #charEscape(start: number, c: string, flags: Flags, inClass: boolean): number {
    const simple: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };
    if (simple[c] !== undefined) return simple[c] as number;
    if (META.has(c)) return c.codePointAt(0) as number;
    if (flags.x && /\s/u.test(c)) return c.codePointAt(0) as number;
    if (c === "x" || c === "u" || c === "U") {
      const digits = c === "x" ? 2 : c === "u" ? 4 : 8;
      let hex: string;
      if (this.#peek() === "{") {
        hex = this.#braced(start);
        if (hex === "") throw this.#error(start, this.#at, "hexadecimal literal empty");
        if (!HEX.test(hex)) throw this.#error(start, this.#at, "invalid hexadecimal digit");
      } else {
        const from = this.#at;
        for (let k = 0; k < digits; k++) {
          const d = this.#peek();
          if (d === undefined) {
            throw this.#incomplete(start);
          }
          if (!HEX.test(d)) throw this.#error(this.#at, this.#at + 1, "invalid hexadecimal digit");
          this.#at++;
        }
        hex = this.#chars.slice(from, this.#at).join("");
      }
      const cp = Number.parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || hex.length > 8) {
        throw this.#error(start, this.#at, "hexadecimal literal is not a Unicode scalar value");
      }
      if (!flags.u && cp > 0x7f) {
        throw this.#error(start, this.#at, BYTE_ESCAPE);
      }
      return cp;
    }
    if (/^[0-9]$/.test(c)) throw this.#error(start, this.#at, "backreferences are not supported");
    if (inClass) {
      throw this.#error(start, this.#at, "invalid escape sequence found in character class");
    }
    throw this.#error(start, this.#at, "unrecognized escape sequence");
  }

  /** A bracketed class at `[`: its set, negation applied. */
  #class(flags: Flags): ClassExpr {
    const start = this.#at;
    this.#at++;
    let negated = false;
    if (this.#peek() === "^") {
      this.#at++;
      negated = true;
    }
    const set = this.#classSet(start, flags);
    if (negated && !flags.u) throw this.#error(start, this.#at, BYTE_CLASS);
    return negated ? { t: "not", item: set } : set;
  }

  /** Items and set operations up to this class's `]` (consumed). */
  #classSet(start: number, flags: Flags): ClassExpr {
    let left: ClassExpr | undefined;
    let op: "and" | "minus" | "xor" | undefined;
    let items: ClassExpr[] = [];
    let first = true;
    const operand = (): ClassExpr => {
      if (items.length === 0) {
        throw this.#error(start, this.#at, "empty character classes are not allowed");
      }
      const set: ClassExpr = items.length === 1 ? (items[0] as ClassExpr) : { t: "union", items };
      items = [];
      return set;
    };
    for (;;) {
      this.#skipClassSpace(flags);
      const c = this.#peek();
      if (c === undefined) throw this.#error(start, this.#at, "unclosed character class");
      if (c === "]" && !first) {
        this.#at++;
        break;
      }
      if (first && c === "-") {
        // A `-` first in the class is itself (and never a range's start), as in regex-syntax.
        this.#at++;
        first = false;
        items.push({ t: "ranges", ranges: [[0x2d, 0x2d]] });
        continue;
      }
      const two = `${c}${this.#peek(1) ?? ""}`;
      if (two === "&&" || two === "~~" || two === "--") {
        const right = operand();
        left = left && op ? { t: op, a: left, b: right } : right;
        op = two === "&&" ? "and" : two === "--" ? "minus" : "xor";
        this.#at += 2;
        first = false;
        continue;
      }
      first = false;
      items.push(this.#classItem(flags));
    }
    const last = operand();
    return left && op ? { t: op, a: left, b: last } : last;
  }

  #skipClassSpace(flags: Flags): void {
    if (!flags.x) return;
    while (this.#peek() !== undefined && /\s/u.test(this.#peek() as string)) this.#at++;
  }

  /** One item: a nested class, `[:name:]`, an escape, a character or a range. */
  #classItem(flags: Flags): ClassExpr {
    const c = this.#peek() as string;
    if (c === "[") {
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(
        this.#chars.slice(this.#at, this.#at + 16).join(""),
      );
      if (posix && POSIX[posix[2] as string]) {
        this.#at += posix[0].length;
        const ranges = POSIX[posix[2] as string] as readonly (readonly [number, number])[];
        for (const [from, to] of ranges) this.#noteUpper(from, to);
        const set: ClassExpr = { t: "ranges", ranges };
        return posix[1] ? { t: "not", item: set } : set;
      }
      return this.#class(flags);
    }
    const from = this.#classChar(flags);
    if (typeof from !== "number") return from;
    // A range, unless the `-` ends the class or starts an operator.
    if (
      this.#peek() === "-" &&
      this.#peek(1) !== "]" &&
      this.#peek(1) !== "-" &&
      this.#peek(1) !== undefined
    ) {
      const dash = this.#at;
      this.#at++;
      this.#skipClassSpace(flags);
      const to = this.#classChar(flags);
      if (typeof to !== "number") {
        throw this.#error(dash - 1, this.#at, "invalid range boundary, must be a literal");
      }
      if (to < from) {
        throw this.#error(
          dash - 1,
          this.#at,
          "invalid character class range, the start must be <= the end",
        );
      }
      this.#noteUpper(from, to);
      return { t: "ranges", ranges: [[from, to]] };
    }
    if (from === 0x0a && this.#lines) throw lineBreakError(this.#pattern);
    this.#noteUpper(from, from);
    return { t: "ranges", ranges: [[from, from]] };
  }

  #noteUpper(from: number, to: number): void {
    for (const cp of [from, to]) {
      const char = String.fromCodePoint(cp);
      if (char !== char.toLowerCase()) this.upperCase = true;
    }
  }

  /** A character in a class (a code point), or a class escape's set. */
  #classChar(flags: Flags): number | ClassExpr {
    const start = this.#at;
    const c = this.#peek() as string;
    this.#at++;
    if (c !== "\\") {
      const cp = c.codePointAt(0) as number;
      if (!flags.u && cp > 0x7f) throw this.#error(start, this.#at, "Unicode not allowed here");
      return cp;
    }
    const e = this.#peek();
    if (e === undefined) {
      throw this.#incomplete(start);
    }
    this.#at++;
    const set = this.#classEscape(start, e, flags);
    if (set) {
      if (
        set.t === "perl" &&
        this.#peek() === "-" &&
        this.#peek(1) !== "]" &&
        this.#peek(1) !== undefined &&
        this.#peek(1) !== "-"
      ) {
        throw this.#error(start, this.#at + 2, "invalid range boundary, must be a literal");
      }
      return set;
    }
    return this.#charEscape(start, e, flags, true);
  }
}

/**
 * ripgrep's regex syntax (Rust's `regex` crate, as rg 13 reads it) translated into the
 * JavaScript regex that compilePattern runs: the same matches, or an `INVALID_PATTERN` error,
 * never a silent difference. Models write grep patterns for rg (Claude Code's Grep passes them
 * to it); read as JavaScript, `[[:alpha:]]`, `\pL`, `\x{41}` or `foo\z` silently match nothing,
 * and `\w`, `\d`, `\b` are ASCII where rg's are Unicode. Pure; depends on `errors`.
 *
 * Written by hand: the parsers that exist read JavaScript's syntax (`regjsparser`, `regexpp`) or
 * RE2's (`re2js`, whose engine runs ~5 MB/s here against V8's ~40 MB/s and more); Rust's
 * differs from both (set operations in classes, `(?x)`, loose property names, which escapes
 * are errors), and rg's behaviour is the oracle (test/rust-syntax.test.ts runs it).
 *
 * The output is compilePattern's dialect of JavaScript, always with the `u` flag: `^` and `$`
 * are a line's ends and `.` any character but `\n` (compilePattern rewrites them), so the
 * literal analysis reads it as it reads any pattern. What does not translate:
 * - `i` for part of a pattern (`a(?i)b`, `(?-i)` under `-i`): V8 in Node 20 has no scoped
 *   flags, so the part is spelled out (each letter as the class of its case variants, each
 *   class closed under case folding); the whole pattern ignoring case gets the `i` flag.
 * - `(?-u)`: ASCII `\w`, `\d`, `\s`, `\b`, as rg. Its `.` and negated classes match one byte
 *   in rg, one character here (they differ on non-ASCII text), so they are refused, as are
 *   bytes above `\x7F`, which only a byte search can find.
 */

import propertyAliases from "unicode-property-aliases-ecmascript";
import valueAliases from "unicode-property-value-aliases-ecmascript";
import { FreshfsError, quoted } from "../../../errors.js";

export interface RustOptions {
  /** `-i`: the whole pattern ignores case (unless a flag group says otherwise). */
  readonly ignoreCase: boolean;
  /** `-S`: ignore case unless the pattern has an upper-case literal character. */
  readonly smartCase: boolean;
  /** `-U`: the text is the whole file, not one line (`\A`, `\z`, `(?s)`, `(?-m)` matter). */
  readonly multiline: boolean;
}

export interface RustTranslation {
  /** compilePattern's dialect: `^`/`$` a line's ends, `.` any character but `\n`; flag `u`. */
  readonly source: string;
  /** The translation needs the `i` flag (every part of the pattern ignores case). */
  readonly ignoreCase: boolean;
}

/** One character from a set: the tree of a class, leaves and set operations. */
type ClassExpr =
  /** Code point ranges, inclusive. */
  | { readonly t: "ranges"; readonly ranges: readonly (readonly [number, number])[] }
  /** A Unicode property, as JavaScript names it (`Script=Greek`, `Lu`, `Alphabetic`). */
  | { readonly t: "prop"; readonly name: string }
  /** `\d`, `\s`, `\w`: Unicode, or ASCII under `(?-u)`. */
  | { readonly t: "perl"; readonly kind: "d" | "s" | "w"; readonly unicode: boolean }
  | { readonly t: "union"; readonly items: readonly ClassExpr[] }
  | { readonly t: "not"; readonly item: ClassExpr }
  | {
      readonly t: "and" | "minus" | "xor";
      readonly a: ClassExpr;
      readonly b: ClassExpr;
    };

type RNode =
  | { readonly t: "empty" }
  | { readonly t: "lit"; readonly cp: number; readonly fold: boolean }
  | { readonly t: "dot"; readonly all: boolean }
  | { readonly t: "class"; readonly set: ClassExpr; readonly fold: boolean }
  /** `^` (`multi` true) or `\A`; `$` or `\z`. */
  | { readonly t: "start" | "end"; readonly multi: boolean }
  | { readonly t: "word"; readonly negated: boolean; readonly unicode: boolean }
  | { readonly t: "group"; readonly capture: boolean; readonly name?: string; readonly item: RNode }
  | { readonly t: "concat" | "alt"; readonly items: readonly RNode[] }
  | {
      readonly t: "repeat";
      readonly min: number;
      readonly max: number;
      readonly greedy: boolean;
      readonly item: RNode;
    };

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
  u: boolean;
  x: boolean;
}

/** A pattern that asks for a line break, in a search of lines (rg refuses it too). */
export function lineBreakError(pattern: string): FreshfsError {
  return new FreshfsError(
    "INVALID_PATTERN",
    `The pattern ${quoted(pattern)} matches a line break, which no single line holds; search with multiline (-U) to match across lines.`,
  );
}

/** Characters of the pattern an error shows on either side of the place (rg shows it all). */
const SHOWN_AROUND = 60;

/**
 * A parse error, reported as rg reports it: the pattern, a caret under the place (`from` and
 * `to` count code points), the reason; then how to search otherwise. A long pattern is shown
 * around the place only, so that the error stays small whatever was sent.
 */
function syntaxError(pattern: string, from: number, to: number, message: string): FreshfsError {
  const chars = Array.from(pattern);
  const first = Math.max(0, from - SHOWN_AROUND);
  const last = Math.min(chars.length, Math.max(to, from + 1) + SHOWN_AROUND);
  const head = first > 0 ? "…" : "";
  const shown = `${head}${chars.slice(first, last).join("")}${last < chars.length ? "…" : ""}`;
  const width = Math.max(1, Math.min(to, last) - from);
  const caret = `${" ".repeat(from - first + head.length)}${"^".repeat(width)}`;
  return new FreshfsError(
    "INVALID_PATTERN",
    `regex parse error:\n    ${shown}\n    ${caret}\nerror: ${message}\n${HINT}`,
  );
}

const HINT =
  '(Patterns use rg\'s regex syntax. To search for the text as it is, pass fixedStrings (-F); for lookaround or backreferences, syntax "javascript" (-P).)';

/** Rust's escapable meta characters (regex-syntax `is_meta_character`). */
const META = new Set("\\.+*?()|[]{}^$#&-~");
const POSIX: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

/** UAX44-LM3, as regex-syntax matches property names: case, spaces, `_`, `-` and an `is` prefix ignored. */
function loose(name: string): string {
  const out = name.toLowerCase().replace(/[\s_-]/g, "");
  return out.startsWith("is") && out.length > 2 ? out.slice(2) : out;
}

/** Loose names of JavaScript's properties and values, to their JavaScript spelling. */
interface PropertyTables {
  readonly binary: ReadonlyMap<string, string>;
  readonly category: ReadonlyMap<string, string>;
  readonly script: ReadonlyMap<string, string>;
}

let tables: PropertyTables | undefined;

function propertyTables(): PropertyTables {
  if (tables) return tables;
  const binary = new Map<string, string>();
  const nonBinary = new Set(["General_Category", "Script", "Script_Extensions"]);
  for (const [alias, canonical] of propertyAliases) {
    if (nonBinary.has(canonical)) continue;
    binary.set(loose(alias), canonical);
    binary.set(loose(canonical), canonical);
  }
  // Not in PropertyAliases.txt, and binary properties in ECMAScript (and names in Rust).
  for (const name of ["Any", "ASCII", "Assigned"]) binary.set(loose(name), name);
  const values = (property: string) => {
    const out = new Map<string, string>();
    for (const [alias, canonical] of valueAliases.get(property) ?? []) {
      out.set(loose(alias), canonical);
      out.set(loose(canonical), canonical);
    }
    return out;
  };
  tables = { binary, category: values("General_Category"), script: values("Script") };
  return tables;
}

/**
 * `\p{name}` as JavaScript spells it, resolved as regex-syntax resolves it: a lone name is a
 * binary property, else a general category, else a script (not its extensions); `key=value`
 * (or `key:value`) for `gc`, `sc` and `scx`. Undefined when Rust knows no such property; a
 * property Rust has and JavaScript lacks (Age, the break properties) throws.
 */
function resolveProperty(raw: string, fail: (message: string) => FreshfsError): string | undefined {
  const t = propertyTables();
  const split = /^([^=:!]*)(?:!?[=:])(.*)$/s.exec(raw);
  if (split) {
    const key = loose(split[1] as string);
    const value = loose(split[2] as string);
    if (key === "gc" || key === "generalcategory") {
      const name = t.category.get(value);
      return name === undefined ? undefined : `General_Category=${name}`;
    }
    if (key === "sc" || key === "script") {
      const name = t.script.get(value);
      return name === undefined ? undefined : `Script=${name}`;
    }
    if (key === "scx" || key === "scriptextensions") {
      const name = t.script.get(value);
      return name === undefined ? undefined : `Script_Extensions=${name}`;
    }
    const unsupported = [
      "age",
      "gcb",
      "graphemeclusterbreak",
      "wb",
      "wordbreak",
      "sb",
      "sentencebreak",
    ];
    if (unsupported.includes(key)) {
      throw fail(
        `the Unicode property ${split[1]} is one JavaScript's regex engine does not have (rg has it); match the characters with a class instead`,
      );
    }
    return undefined;
  }
  const name = loose(raw);
  // regex-syntax's special case: `cf` is the Format category, not Case_Folding.
  if (name !== "cf") {
    const binary = t.binary.get(name);
    if (binary !== undefined) return binary;
  }
  const category = t.category.get(name);
  if (category !== undefined) return category;
  const script = t.script.get(name);
  return script === undefined ? undefined : `Script=${script}`;
}

const HEX = /^[0-9a-fA-F]+$/;

/** The parser: one pass over the pattern, flags as they stand at each point. */
class Parser {
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

const BYTE_DOT =
  "under (?-u), `.` matches any byte, and freshfs matches decoded characters: drop (?-u), or match the bytes with ASCII classes";
const BYTE_CLASS =
  "under (?-u), a negated class matches single bytes, and freshfs matches decoded characters: drop (?-u), or list what to match";
const BYTE_ESCAPE =
  "under (?-u), an escape above \\x7F is a raw byte, which freshfs cannot match in decoded text";

function concat(items: RNode[]): RNode {
  if (items.length === 0) return { t: "empty" };
  return items.length === 1 ? (items[0] as RNode) : { t: "concat", items };
}

/** Whether a character has a case (folding changes it). */
function hasCase(cp: number): boolean {
  const char = String.fromCodePoint(cp);
  return char.toLowerCase() !== char.toUpperCase();
}

/** Whether a literal or class can match a character that has a case. */
function cased(node: RNode): boolean {
  if (node.t === "lit") return hasCase(node.cp);
  if (node.t !== "class") return false;
  const anyCased = (set: ClassExpr): boolean => {
    switch (set.t) {
      case "perl":
        return set.kind === "w";
      case "ranges":
        // A wide range is taken to hold one; a narrow one is looked through.
        return set.ranges.some(([from, to]) => {
          if (to - from > 0x7f) return true;
          for (let cp = from; cp <= to; cp++) if (hasCase(cp)) return true;
          return false;
        });
      case "prop":
        return true;
      case "union":
        return set.items.some(anyCased);
      case "not":
        return true;
      default:
        return anyCased(set.a) || anyCased(set.b);
    }
  };
  return anyCased(node.set);
}

/** Counts the literals and classes with a case that fold, and those that do not. */
function literalsAndClasses(node: RNode, out: { folded: number; plain: number }): void {
  switch (node.t) {
    case "lit":
    case "class":
      if (!cased(node)) return;
      if (node.fold) out.folded++;
      else out.plain++;
      return;
    case "group":
    case "repeat":
      literalsAndClasses(node.item, out);
      return;
    case "concat":
    case "alt":
      for (const item of node.items) literalsAndClasses(item, out);
      return;
    default:
      return;
  }
}

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

/** Case folding's orbits (simple case folding, as V8's `iu` applies it), built on first use. */
let orbits: Map<number, readonly number[]> | undefined;

function caseOrbits(): Map<number, readonly number[]> {
  if (orbits) return orbits;
  /** Union-find over the code points a case mapping joins: each non-root to a smaller one. */
  const parent = new Map<number, number>();
  const root = (x: number): number => {
    let r = x;
    for (let up = parent.get(r); up !== undefined; up = parent.get(r)) r = up;
    return r;
  };
  const joined = new Set<number>();
  // Every cased letter is below U+20000; single code point case mappings join the orbits.
  for (let cp = 0; cp < 0x20000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const char = String.fromCodePoint(cp);
    for (const other of [char.toLowerCase(), char.toUpperCase()]) {
      const o = other.codePointAt(0) as number;
      if (o === cp || other.length !== String.fromCodePoint(o).length) continue;
      const [a, b] = [root(cp), root(o)];
      if (a !== b) parent.set(Math.max(a, b), Math.min(a, b));
      joined.add(cp);
      joined.add(o);
    }
  }
  const groups = new Map<number, number[]>();
  for (const cp of joined) {
    const r = root(cp);
    const group = groups.get(r) ?? [];
    group.push(cp);
    groups.set(r, group);
  }
  orbits = new Map();
  for (const group of groups.values()) {
    // Kept where V8's case-insensitive matching agrees: simple case folding, not the full
    // mappings that may have joined them.
    for (const cp of group) {
      const probe = new RegExp(jsChar(cp), "iu");
      const same = group.filter((other) => probe.test(String.fromCodePoint(other)));
      if (same.length > 1) orbits.set(cp, same);
    }
  }
  return orbits;
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
function write(node: RNode, options: { byHand: boolean; multiline: boolean }): string {
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

/** Parses `pattern` as rg does and writes it as compilePattern's JavaScript. */
export function translateRust(pattern: string, options: RustOptions): RustTranslation {
  const base: Flags = { i: false, m: true, s: false, U: false, u: true, x: false };
  // Smart case needs the literals read first; the flag is known without them otherwise.
  let ignoreCase = options.ignoreCase;
  if (!ignoreCase && options.smartCase) {
    const probe = new Parser(pattern, !options.multiline);
    probe.parse({ ...base });
    ignoreCase = !probe.upperCase;
  }
  const root = new Parser(pattern, !options.multiline).parse({ ...base, i: ignoreCase });
  const counts = { folded: 0, plain: 0 };
  literalsAndClasses(root, counts);
  // The `i` flag when the whole pattern ignores case; spelled out where only part of it does.
  const whole = counts.folded > 0 && counts.plain === 0;
  const byHand = counts.folded > 0 && counts.plain > 0;
  return {
    source: write(root, { byHand, multiline: options.multiline }),
    ignoreCase: whole,
  };
}

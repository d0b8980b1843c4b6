/**
 * What one atom of a regex (a character, `.`, an escape, a class) may match, as the literal
 * analysis and the byte automaton need it: exactly which ASCII characters, whether any
 * non-ASCII one, and when few, every one. Depends on `parse` (types) and V8's own RegExp, which
 * decides ASCII membership, so that case folding, `\s`, `\b` in a class and the rest agree with
 * the regex that really runs.
 */
import { type Atom, UnsupportedRegex } from "./parse.js";

export interface CharSet {
  /** 1 for each ASCII character (by code) it matches; never `\n` unless multiline. */
  readonly ascii: Uint8Array;
  readonly asciiCount: number;
  /**
   * It may match a non-ASCII character (a code unit of one without `u`). Conservative: true
   * unless provably not.
   */
  readonly nonAscii: boolean;
  /**
   * Every one-character string it matches, when known and at most MAX_MEMBERS; lower-cased,
   * and then ASCII only, when case is ignored. With `iu`, U+212A and U+017F are left aside:
   * `k` and `s` are ASCII pairs here, and a text that holds either is searched without the
   * literals these members make (`FOLDED_ASIDE`).
   */
  readonly members: readonly string[] | undefined;
}

export interface CharSetFlags {
  readonly ignoreCase: boolean;
  readonly unicode: boolean;
  readonly multiline: boolean;
  /**
   * The members (the literals) are the ASCII ones only: for the plan of the matches that are
   * all ASCII (planRegex's ASCII branch).
   */
  readonly asciiOnly?: boolean | undefined;
}

/** Classes up to this size are expanded into their characters (`\w` has 63). */
const MAX_MEMBERS = 64;

const NEWLINE = 10;
/**
 * With `iu`, ECMAScript's simple case folding maps exactly two non-ASCII characters to ASCII
 * letters: U+212A KELVIN SIGN to `k` and U+017F LONG S to `s` (checked over every code point
 * in test/grep/regex-charset.test.ts). Without `u`, Canonicalize never crosses ASCII's border.
 * The byte automaton counts them; the members (the literals) leave them aside, and a search
 * reads a text that holds either of them without its literals (content/format.ts's
 * `FOLDED_ASIDE`).
 */
const FOLDS_FROM_NON_ASCII = "kKsS";

function hex4(code: number): string {
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

export class CharSets {
  private readonly cache = new Map<Atom | number, CharSet>();
  private readonly asciiBySource = new Map<string, Uint8Array>();
  private readonly regexFlags: string;

  constructor(private readonly flags: CharSetFlags) {
    this.regexFlags = `${flags.ignoreCase ? "i" : ""}${flags.unicode ? "u" : ""}`;
  }

  of(atom: Atom): CharSet {
    // Characters are most atoms, and the same few over and over: one set per character.
    const key = atom.kind === "char" ? atom.code : atom;
    let set = this.cache.get(key);
    if (set === undefined) {
      set = this.resolve(atom);
      this.cache.set(key, set);
    }
    return set;
  }

  /** The ASCII characters a regex of one atom matches, asked of V8 (cached per source). */
  private asciiOf(source: string): Uint8Array {
    let ascii = this.asciiBySource.get(source);
    if (ascii === undefined) {
      let regex: RegExp;
      try {
        regex = new RegExp(source, this.regexFlags);
      } catch {
        // An atom read differently from V8: nothing can be said about this pattern.
        throw new UnsupportedRegex(`atom ${source}`);
      }
      ascii = new Uint8Array(128);
      for (let code = 0; code < 128; code++) {
        if (code === NEWLINE && !this.flags.multiline) continue;
        if (regex.test(String.fromCharCode(code))) ascii[code] = 1;
      }
      this.asciiBySource.set(source, ascii);
    }
    return ascii;
  }

  private resolve(atom: Atom): CharSet {
    const { ignoreCase, unicode } = this.flags;
    const foldsIn = ignoreCase && unicode;
    let ascii: Uint8Array;
    let nonAscii: boolean;
    // Whether it may match non-ASCII beyond the two characters folding to `k` and `s`.
    let otherNonAscii: boolean | undefined;
    // Non-ASCII members, when they are known (undefined: unknown).
    let wide: string[] | undefined = [];
    switch (atom.kind) {
      case "char": {
        const { code } = atom;
        const escaped = code > 0xffff ? `\\u{${code.toString(16)}}` : hex4(code);
        if (code < 128 && !ignoreCase) {
          ascii = new Uint8Array(128);
          if (code !== NEWLINE || this.flags.multiline) ascii[code] = 1;
        } else {
          ascii = this.asciiOf(escaped);
        }
        otherNonAscii = code >= 128;
        nonAscii =
          code >= 128 || (foldsIn && FOLDS_FROM_NON_ASCII.includes(String.fromCharCode(code)));
        if (code >= 128) wide = [unicode ? String.fromCodePoint(code) : String.fromCharCode(code)];
        break;
      }
      case "dot":
        ascii = this.asciiOf("[^\\n]");
        nonAscii = true;
        wide = undefined;
        break;
      case "escape":
        ascii = this.asciiOf(atom.source);
        nonAscii = escapeMayBeNonAscii(atom.letter, foldsIn);
        otherNonAscii = escapeMayBeNonAscii(atom.letter, false);
        if (otherNonAscii) wide = undefined;
        break;
      case "class": {
        ascii = this.asciiOf(atom.source);
        nonAscii = atom.negated;
        if (atom.negated) wide = undefined;
        for (const item of atom.items) {
          if (item.kind === "escape") {
            if (escapeMayBeNonAscii(item.letter, foldsIn)) {
              nonAscii = true;
              wide = undefined;
            }
          } else if (item.to >= 128) {
            nonAscii = true;
            const from = Math.max(item.from, 128);
            if (wide !== undefined && wide.length + item.to - from < MAX_MEMBERS) {
              for (let code = from; code <= item.to; code++) {
                wide.push(unicode ? String.fromCodePoint(code) : String.fromCharCode(code));
              }
            } else {
              wide = undefined;
            }
          }
        }
        otherNonAscii = nonAscii;
        if (foldsIn && [...FOLDS_FROM_NON_ASCII].some((c) => ascii[c.charCodeAt(0)] === 1)) {
          nonAscii = true;
        }
        break;
      }
    }
    let asciiCount = 0;
    for (const bit of ascii) asciiCount += bit;
    const forMembers = this.flags.asciiOnly ? false : (otherNonAscii ?? nonAscii);
    const members = membersOf(ascii, forMembers, this.flags.asciiOnly ? [] : wide, ignoreCase);
    return { ascii, asciiCount, nonAscii, members };
  }
}

/**
 * `\d` is ASCII digits in every mode; `\w` is ASCII too, except that `iu` adds the two
 * characters that fold to `k` and `s`; `\s` has U+00A0, U+FEFF, U+2028...; the negated ones
 * and `\p` may match anything.
 */
function escapeMayBeNonAscii(letter: string, foldsIn: boolean): boolean {
  if (letter === "d") return false;
  if (letter === "w") return foldsIn;
  return true;
}

function membersOf(
  ascii: Uint8Array,
  nonAscii: boolean,
  wide: readonly string[] | undefined,
  ignoreCase: boolean,
): readonly string[] | undefined {
  const members = new Set<string>();
  if (ignoreCase) {
    // A literal's case is folded as ASCII only (the index and the byte search fold bytes).
    if (nonAscii) return undefined;
    for (let code = 0; code < 128; code++) {
      if (ascii[code] === 1) members.add(String.fromCharCode(code).toLowerCase());
    }
  } else {
    if (wide === undefined) return undefined;
    for (let code = 0; code < 128; code++) {
      if (ascii[code] === 1) members.add(String.fromCharCode(code));
    }
    for (const char of wide) members.add(char);
  }
  return members.size <= MAX_MEMBERS ? [...members] : undefined;
}

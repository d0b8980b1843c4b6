/**
 * The character sets behind the regex plan, checked over every code point: with `iu` exactly
 * two non-ASCII characters match ASCII letters (U+212A KELVIN SIGN and U+017F LONG S), without
 * `u` none do; and every atom the sets call ASCII-only matches no non-ASCII character (code
 * point with `u`, code unit without) under its flags.
 */
import { describe, expect, it } from "vitest";
import { CharSets } from "../../src/search/grep/regex/charset.js";
import { type Node, parseRegex } from "../../src/search/grep/regex/parse.js";

const FLAG_SETS = [
  { ignoreCase: false, unicode: false },
  { ignoreCase: true, unicode: false },
  { ignoreCase: false, unicode: true },
  { ignoreCase: true, unicode: true },
] as const;

/**
 * Every non-ASCII character in one string: code points with `u` (surrogates left out), else
 * code units (a regex without `u` reads each unit alone). One global scan beats a million tests.
 */
const nonAsciiText = new Map<boolean, string>();

function nonAscii(unicode: boolean): string {
  const known = nonAsciiText.get(unicode);
  if (known !== undefined) return known;
  const chars: string[] = [];
  const last = unicode ? 0x10ffff : 0xffff;
  for (let code = 0x80; code <= last; code++) {
    if (unicode && code >= 0xd800 && code <= 0xdfff) continue;
    chars.push(unicode ? String.fromCodePoint(code) : String.fromCharCode(code));
  }
  const text = chars.join("");
  nonAsciiText.set(unicode, text);
  return text;
}

/** The characters of `text` that `source` matches, as hex code points. */
function matchedIn(text: string, source: string, flags: string): string[] {
  return [...text.matchAll(new RegExp(source, `g${flags}`))].map((m) =>
    (m[0].codePointAt(0) as number).toString(16),
  );
}

function flagString(flags: { ignoreCase: boolean; unicode: boolean }): string {
  return `${flags.ignoreCase ? "i" : ""}${flags.unicode ? "u" : ""}`;
}

describe("case folding across ASCII's border", () => {
  it("with iu, only U+017F and U+212A match an ASCII letter (and \\w)", () => {
    const all = nonAscii(true);
    expect(matchedIn(all, "[A-Za-z]", "iu")).toEqual(["17f", "212a"]);
    expect(matchedIn(all, "\\w", "iu")).toEqual(["17f", "212a"]);
    expect(/k/iu.test("\u212a") && /s/iu.test("\u017f")).toBe(true);
  });

  it("with i alone, no non-ASCII code unit matches an ASCII character", () => {
    expect(matchedIn(nonAscii(false), "[\\0-\\x7f]", "i")).toEqual([]);
  });
});

const ATOMS = [
  "a",
  "k",
  "s",
  "K",
  "_",
  "\\x41",
  "\\u006b",
  "\\d",
  "\\w",
  "\\D",
  "\\s",
  "[a-z]",
  "[a-j]",
  "[A-Z]",
  "[\\d_]",
  "[\\w.]",
  "[\\x00-\\x7f]",
  "[\\0-\\x7e]",
  "[^a]",
  "[ks]",
  "[0-9a-f]",
  "[\\b]",
  ".",
  "é",
  "[é]",
];

describe("ASCII-only claims", () => {
  it.each(FLAG_SETS)("hold over every non-ASCII character (%o)", (flags) => {
    const sets = new CharSets({ ...flags, multiline: false });
    const claimed: string[] = [];
    for (const source of ATOMS) {
      const node = parseRegex(source, flags.unicode) as Extract<Node, { kind: "atom" }>;
      expect(node.kind).toBe("atom");
      const set = sets.of(node.atom);
      // The ASCII part is V8's own answer (or, for a character without `i`, the character).
      // A grep pattern's `.` is any character but `\n` (compilePattern's line semantics).
      const regex = new RegExp(`^(?:${source === "." ? "[^\\n]" : source})$`, flagString(flags));
      for (let code = 0; code < 128; code++) {
        if (code === 10) continue;
        expect(set.ascii[code] === 1, `${source} ${code}`).toBe(
          regex.test(String.fromCharCode(code)),
        );
      }
      if (!set.nonAscii) claimed.push(source);
    }
    expect(claimed.length).toBeGreaterThan(5);
    for (const source of claimed) {
      expect(matchedIn(nonAscii(flags.unicode), source, flagString(flags)), source).toEqual([]);
    }
  });

  it("lists a small class's members, folded to lower case when case is ignored", () => {
    const atomOf = (source: string, unicode = false) =>
      (parseRegex(source, unicode) as Extract<Node, { kind: "atom" }>).atom;
    const plain = new CharSets({ ignoreCase: false, unicode: false, multiline: false });
    expect(plain.of(atomOf("[a-cé]")).members).toEqual(["a", "b", "c", "é"]);
    expect(plain.of(atomOf("\\w")).members?.length).toBe(63);
    expect(plain.of(atomOf("\\s")).members).toBeUndefined();
    expect(plain.of(atomOf("[^a]")).members).toBeUndefined();
    const folded = new CharSets({ ignoreCase: true, unicode: false, multiline: false });
    expect(folded.of(atomOf("[A-C]")).members).toEqual(["a", "b", "c"]);
    expect(folded.of(atomOf("é")).members).toBeUndefined();
    const foldedU = new CharSets({ ignoreCase: true, unicode: true, multiline: false });
    expect(foldedU.of(atomOf("[a-j]", true)).members).toHaveLength(10);
    // `k` also matches U+212A under `iu`: the set says so, and its members leave it aside
    // (the search reads a text holding it without the literals, see grep-folds-aside.test.ts).
    const withK = foldedU.of(atomOf("[a-k]", true));
    expect(withK.nonAscii).toBe(true);
    expect(withK.members).toHaveLength(11);
    expect(foldedU.of(atomOf("[a-cé]", true)).members).toBeUndefined();
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anyFinder, exactFinder, foldedFinder } from "../../src/search/grep/finder.js";

/** Every occurrence, as a fold of the whole text finds them. */
function foldedOccurrences(text: Buffer, lower: string): number[] {
  const folded = text.toString("latin1").toLowerCase();
  const out: number[] = [];
  for (let at = folded.indexOf(lower); at !== -1; at = folded.indexOf(lower, at + 1)) out.push(at);
  return out;
}

function found(finder: ReturnType<typeof foldedFinder>, text: Buffer): number[] {
  const out: number[] = [];
  for (let at = finder.find(text, 0); at !== -1; at = finder.find(text, at + 1)) out.push(at);
  return out;
}

describe("foldedFinder", () => {
  it("finds the literal in any ASCII case, at every place a fold of the file finds it", () => {
    const text = Buffer.from("pm_resume PM_RESUME Pm_ReSuMe pm-resume xPM_RESUMEx PM_RESUM");
    expect(found(foldedFinder("pm_resume"), text)).toEqual(foldedOccurrences(text, "pm_resume"));
    expect(found(foldedFinder("pm_resume"), text)).toHaveLength(4);
  });

  it("agrees with a fold of the file on random texts and literals (letters, digits, _ and bytes above 0x7f)", () => {
    const alphabet = "aAbBkKsS_0-\u00e9";
    const char = fc.constantFrom(...alphabet.split(""));
    fc.assert(
      fc.property(
        fc.array(char, { minLength: 1, maxLength: 7 }).map((c) => c.join("").toLowerCase()),
        fc.array(char, { maxLength: 200 }).map((c) => c.join("")),
        (literal, body) => {
          // The literal is ASCII, as compilePattern guarantees for a folded one.
          const ascii = literal.replace(/[^\x20-\x7e]/g, "a");
          const text = Buffer.from(body, "utf8");
          expect(found(foldedFinder(ascii), text)).toEqual(foldedOccurrences(text, ascii));
        },
      ),
      { numRuns: 2000, seed: 15 },
    );
  });

  it("gives up on a rare byte that turns out common, and finds the rest with its window", () => {
    // Every letter of the literal recurs in near misses: the rare-byte search gives up early.
    for (const text of [
      Buffer.from(`${"zQz ".repeat(100)}zqZx ${"qZ".repeat(70)}ZQZX zqzx`),
      Buffer.from(`${"x".repeat(300)}ZQZX${"zqz".repeat(30)}`),
    ]) {
      expect(found(foldedFinder("zqzx"), text)).toEqual(foldedOccurrences(text, "zqzx"));
    }
    expect(found(foldedFinder("zqzx"), Buffer.from(`${"zQz ".repeat(100)}zqZx`))).toEqual([400]);
    // Its seventeenth miss (on `z`, its rarest byte) right before the literal.
    expect(found(foldedFinder("zqzx"), Buffer.from(`${"zQz ".repeat(8)}zzqzx`))).toEqual([33]);
  });

  it("starts over on another buffer, and when asked to search from an earlier place", () => {
    const finder = foldedFinder("abc");
    expect(finder.find(Buffer.from("xxABC"), 0)).toBe(2);
    expect(finder.find(Buffer.from("aBcxx"), 0)).toBe(0);
    const same = Buffer.from("abc abc");
    expect(finder.find(same, 1)).toBe(4);
    expect(finder.find(same, 0)).toBe(0);
  });
});

describe("exactFinder", () => {
  /** Every occurrence from `from` on, as Buffer.indexOf finds them. */
  const occurrences = (text: Buffer, literal: Buffer, from: number): number[] => {
    const out: number[] = [];
    for (let at = text.indexOf(literal, from); at !== -1; at = text.indexOf(literal, at + 1)) {
      out.push(at);
    }
    return out;
  };
  const foundFrom = (literal: Buffer, text: Buffer, from: number): number[] => {
    const finder = exactFinder(literal);
    const out: number[] = [];
    for (let at = finder.find(text, from); at !== -1; at = finder.find(text, at + 1)) out.push(at);
    return out;
  };

  it("finds every place Buffer.indexOf finds, from any start (its rare byte common or not)", () => {
    // A small alphabet: the literal's rarest byte recurs everywhere, near misses abound, and
    // long texts make the finder give up on its rare byte and search for the literal whole.
    const char = fc.constantFrom(..."abU_\n\u00e9".split(""));
    fc.assert(
      fc.property(
        fc.array(char, { minLength: 1, maxLength: 6 }).map((c) => Buffer.from(c.join(""))),
        fc.array(char, { maxLength: 3000 }).map((c) => Buffer.from(c.join(""))),
        fc.nat(3000),
        (literal, text, start) => {
          const from = Math.min(start, text.length);
          expect(foundFrom(literal, text, from)).toEqual(occurrences(text, literal, from));
        },
      ),
      { numRuns: 3000, seed: 15 },
    );
  });

  it("finds a literal by its rarest byte, and the literal ending the text", () => {
    const text = Buffer.from(`${"UUUU_".repeat(500)}PM_RESUME`);
    expect(foundFrom(Buffer.from("PM_RESUME"), text, 0)).toEqual([2500]);
    expect(foundFrom(Buffer.from("b"), Buffer.from("abab"), 2)).toEqual([3]);
    // Sixteen misses on `U`, then a seventeenth right before the literal: the search goes on
    // for the whole literal from the byte after that miss.
    expect(foundFrom(Buffer.from("Ub"), Buffer.from(`${"Ux".repeat(16)}UUb`), 0)).toEqual([33]);
  });
});

describe("anyFinder", () => {
  it("finds the earliest of several literals, at every place one occurs, moving forward", () => {
    const text = Buffer.from("xx ERR_SYS yy pme_turn_off ERR_SYS zz LINK");
    const finder = anyFinder([
      exactFinder(Buffer.from("ERR_SYS")),
      foldedFinder("pme_turn_off"),
      exactFinder(Buffer.from("LINK_REQ")),
    ]);
    const out: number[] = [];
    for (let at = finder.find(text, 0); at !== -1; at = finder.find(text, at + 1)) out.push(at);
    expect(out).toEqual([3, 14, 27]);
  });

  it("agrees with searching each literal alone, on random texts", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("ab", "ba", "abc", "ca"), { minLength: 1, maxLength: 3 }),
        fc.array(fc.constantFrom("a", "b", "c", "A"), { maxLength: 80 }).map((c) => c.join("")),
        (literals, body) => {
          const text = Buffer.from(body);
          const expected = new Set<number>();
          for (const literal of literals) {
            for (let at = body.indexOf(literal); at !== -1; at = body.indexOf(literal, at + 1)) {
              expected.add(at);
            }
          }
          const finder = anyFinder(literals.map((l) => exactFinder(Buffer.from(l))));
          const out: number[] = [];
          for (let at = finder.find(text, 0); at !== -1; at = finder.find(text, at + 1))
            out.push(at);
          expect(out).toEqual([...expected].sort((a, b) => a - b));
        },
      ),
      { numRuns: 1000, seed: 15 },
    );
  });
});

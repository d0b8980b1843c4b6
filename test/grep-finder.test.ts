import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exactFinder, foldedFinder } from "../src/search/grep/finder.js";

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

  it("starts over on another buffer, and when asked to search from an earlier place", () => {
    const finder = foldedFinder("abc");
    expect(finder.find(Buffer.from("xxABC"), 0)).toBe(2);
    expect(finder.find(Buffer.from("aBcxx"), 0)).toBe(0);
    const same = Buffer.from("abc abc");
    expect(finder.find(same, 1)).toBe(4);
    expect(finder.find(same, 0)).toBe(0);
  });

  it("exactFinder is Buffer.indexOf", () => {
    expect(exactFinder(Buffer.from("b")).find(Buffer.from("abab"), 2)).toBe(3);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareByEntries,
  compareNames,
  comparePaths,
  lowerBound,
  subtreeEnd,
} from "../../src/scan/order.js";

// Names from a small alphabet with `/`'s neighbours in code-unit order, so that the cases where
// component order and plain string order part (`a/b` against `a-b`, `a.b`, `a0`) come up often.
const name = fc
  .array(fc.constantFrom("a", "b", "-", ".", "0", "é", "\u{1F600}"), { minLength: 1, maxLength: 3 })
  .map((chars) => chars.join(""));
const path = fc.array(name, { minLength: 1, maxLength: 4 }).map((names) => names.join("/"));

/** The order spelled out: component by component, a directory before what it holds. */
function byComponents(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = compareNames(x[i] as string, y[i] as string);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

describe("the listing order (scan/order)", () => {
  it("comparePaths is component by component, a directory's entries right after it", () => {
    expect(["a-b", "a/b", "a", "a.b", "a/a/z", "b"].sort(comparePaths)).toEqual([
      "a",
      "a/a/z",
      "a/b",
      "a-b",
      "a.b",
      "b",
    ]);
    fc.assert(
      fc.property(path, path, (a, b) => {
        expect(Math.sign(comparePaths(a, b))).toBe(Math.sign(byComponents(a, b)));
      }),
      { numRuns: 2000 },
    );
  });

  it("compareByEntries with names as the entry order is comparePaths", () => {
    fc.assert(
      fc.property(path, path, (a, b) => {
        expect(Math.sign(compareByEntries(a, b, compareNames))).toBe(Math.sign(comparePaths(a, b)));
      }),
      { numRuns: 2000 },
    );
  });

  it("compareByEntries keeps a directory's contents together after it, whatever the entry order", () => {
    const reversed = (a: string, b: string) => -compareNames(a, b);
    expect(
      ["a/x", "b", "a", "b/y", "a/y"].sort((a, b) => compareByEntries(a, b, reversed)),
    ).toEqual(["b", "b/y", "a", "a/y", "a/x"]);
  });

  it("lowerBound and subtreeEnd find a directory's run, over paths or entries", () => {
    fc.assert(
      fc.property(fc.uniqueArray(path, { maxLength: 40 }), path, (paths, dir) => {
        const sorted = [...paths].sort(comparePaths);
        const entries = sorted.map((p) => ({ path: p }));
        const from = lowerBound(sorted, `${dir}/`);
        const end = subtreeEnd(sorted, from, dir);
        expect(lowerBound(entries, `${dir}/`)).toBe(from);
        expect(subtreeEnd(entries, from, dir)).toBe(end);
        expect(sorted.slice(from, end)).toEqual(sorted.filter((p) => p.startsWith(`${dir}/`)));
        const at = lowerBound(sorted, dir);
        expect(sorted.slice(0, at).every((p) => comparePaths(p, dir) < 0)).toBe(true);
        expect(sorted.slice(at).every((p) => comparePaths(p, dir) >= 0)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

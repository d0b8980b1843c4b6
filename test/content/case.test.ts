import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSegment } from "../../src/content/build-thread.js";
import { type SegmentData, UNINDEXED } from "../../src/content/format.js";
import { Segment } from "../../src/content/store.js";
import { followBit, trigramKey } from "../../src/content/trigrams.js";

/**
 * The index's keys against the files themselves: a segment built from random text in a small
 * alphabet of letters in both cases (so that every trigram recurs in every case shape) must
 * select every file holding a literal, as written or in any case, and the upper-case keys must
 * rule out files that hold the literal only in another case.
 */
let root: string;
let bodies: string[];
let data: SegmentData;

/** A small deterministic generator (xorshift), so that a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

const ALPHABET = "aAbBcC_1 \n";

function text(next: () => number, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[Math.floor(next() * ALPHABET.length)];
  return out;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "freshfs-index-case-"));
  const next = random(0x5eed);
  bodies = [];
  const paths: string[] = [];
  for (let f = 0; f < 300; f++) {
    const body = text(next, Math.floor(next() * 120));
    const path = `f${String(f).padStart(3, "0")}.txt`;
    writeFileSync(join(root, path), body);
    bodies.push(body);
    paths.push(path);
  }
  data = buildSegment({
    id: 1,
    root,
    paths: paths.join("\0"),
    maxFileBytes: 1 << 20,
    maxSegmentBytes: 1 << 25,
  });
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("the content index's keys", () => {
  it("select every file holding a literal, as written or in any case, and rule out by case", () => {
    expect(data.count).toBe(bodies.length);
    // Both kinds of posting are met: bitmaps of common trigrams (with upper-case keys beside
    // them, odd) and lists of the rest.
    expect(data.denseKeys.length).toBeGreaterThan(10);
    expect([...data.keys].filter((key) => key & 1).length).toBeGreaterThan(10);
    expect([...data.keys].filter((key) => !(key & 1)).length).toBeGreaterThan(10);
    const segment = new Segment(1, 0, [], data);
    const next = random(0xca5e);
    let missed = 0;
    let narrowedByCase = 0;
    let checked = 0;
    for (let q = 0; q < 400; q++) {
      // Half from the files (literals that occur), half random.
      const from = bodies[Math.floor(next() * bodies.length)] as string;
      const length = 3 + Math.floor(next() * 4);
      const start = Math.floor(next() * Math.max(1, from.length - length));
      const literal =
        q % 2 === 0 && from.length >= length
          ? from.slice(start, start + length)
          : text(next, length);
      for (const exactCase of [true, false]) {
        const selected = segment.evaluate({ kind: "literal", text: literal }, exactCase);
        for (let f = 0; f < bodies.length; f++) {
          const body = bodies[f] as string;
          const holds = exactCase
            ? body.includes(literal)
            : body.toLowerCase().includes(literal.toLowerCase());
          const chosen = selected === true || ((selected[f >>> 4] as number) >>> (f & 15)) & 1;
          checked++;
          if (holds && !chosen) missed++;
          if (
            exactCase &&
            !chosen &&
            body.toLowerCase().includes(literal.toLowerCase()) &&
            /[A-Z]/.test(literal)
          ) {
            narrowedByCase++;
          }
        }
      }
    }
    expect(checked).toBe(400 * 2 * bodies.length);
    expect(missed).toBe(0);
    // The upper-case keys have effect: files holding the literal only in another case go.
    expect(narrowedByCase).toBeGreaterThan(100);
  });

  it("leaves a file with too many distinct trigrams to keep unindexed, and takes its postings back", () => {
    // 20 MiB of random printable text: ~160,000 distinct keys a 128 KiB block, past the
    // build's 16 Mi pairs; then a small file, indexed as usual.
    const next = random(0xb16);
    const big = Buffer.allocUnsafe(20 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) {
      big[i] = i % 80 === 79 ? 0x0a : 0x21 + Math.floor(next() * 94);
    }
    writeFileSync(join(root, "big.txt"), big);
    writeFileSync(join(root, "small.txt"), "a line with PM_RESUME in it\n");
    const both = buildSegment({
      id: 2,
      root,
      paths: "big.txt\0small.txt",
      maxFileBytes: 64 * 1024 * 1024,
      maxSegmentBytes: 1 << 30,
    });
    expect(both.count).toBe(2);
    expect(both.flags[0]).toBe(UNINDEXED);
    expect(both.flags[1]).toBe(0);
    // One unit each: the big file's blocks are gone, and so are its keys.
    expect(both.units).toBe(2);
    expect(both.keys.length + both.denseKeys.length).toBeLessThan(100);
    const segment = new Segment(2, 0, [], both);
    const selected = segment.evaluate({ kind: "literal", text: "PM_RESUME" }, true);
    expect(selected).not.toBe(true);
    expect(((selected as Uint16Array)[0] as number) & 0b11).toBe(0b10);
  });

  it("keeps upper-case keys beside every common folded key, bitmap or list, empty where none is in capitals", () => {
    // 64 files: `xyz` in half (a bitmap), `qrs` and `klm` in 8 (one in 8: a list with follow
    // bits, and upper-case keys), `tuv` in 2 (rare: no upper-case key).
    const bands = mkdtempSync(join(tmpdir(), "freshfs-index-bands-"));
    try {
      const paths: string[] = [];
      for (let f = 0; f < 64; f++) {
        let body = `file ${f}\n`;
        if (f < 32) body += "xyz.\n";
        if (f < 8) body += "qrsa klm.\n";
        if (f < 2) body += "tuv.\n";
        if (f === 40) body += "XYZ.\n";
        if (f === 50) body += "KLM.\n";
        if (f === 60) body += "TUV.\n";
        const path = `f${String(f).padStart(2, "0")}.txt`;
        writeFileSync(join(bands, path), body);
        paths.push(path);
      }
      const built = buildSegment({
        id: 3,
        root: bands,
        paths: paths.join("\0"),
        maxFileBytes: 1 << 20,
        maxSegmentBytes: 1 << 25,
      });
      const key = (t: string) =>
        trigramKey((t.charCodeAt(0) << 16) | (t.charCodeAt(1) << 8) | t.charCodeAt(2));
      const keys = new Set(built.keys);
      expect(new Set(built.denseKeys).has(key("xyz"))).toBe(true);
      for (const t of ["qrs", "klm", "tuv"]) expect(keys.has(key(t))).toBe(true);
      // Upper-case keys beside the common ones (the one of `qrs` empty), none beside `tuv`.
      for (const t of ["xyz", "qrs", "klm"]) expect(keys.has(key(t) | 1)).toBe(true);
      expect(keys.has(key("tuv") | 1)).toBe(false);
      const segment = new Segment(3, 0, [], built);
      const files = (literal: string, exactCase: boolean) => {
        const selected = segment.evaluate({ kind: "literal", text: literal }, exactCase);
        if (selected === true) return "all";
        return paths.flatMap((_, f) =>
          ((selected[f >>> 4] as number) >>> (f & 15)) & 1 ? [f] : [],
        );
      };
      const range = (n: number) => Array.from({ length: n }, (_, f) => f);
      expect(files("XYZ", true)).toEqual([40]);
      expect(files("xyz", false)).toEqual([...range(32), 40]);
      expect(files("QRS", true)).toEqual([]);
      expect(files("qrs", true)).toEqual(range(8));
      expect(files("KLM", true)).toEqual([50]);
      expect(files("klm", false)).toEqual([...range(8), 50]);
      // A rare key has no upper-case one: its folded postings answer, as they must.
      expect(files("TUV", true)).toEqual([0, 1, 60]);
      // The list's follow bits narrow where a bitmap's cannot.
      expect(followBit("a".charCodeAt(0))).not.toBe(followBit("z".charCodeAt(0)));
      expect(files("qrsa", false)).toEqual(range(8));
      expect(files("qrsz", false)).toEqual([]);
    } finally {
      rmSync(bands, { recursive: true, force: true });
    }
  });
});

/**
 * grep's own rules, beyond what the ripgrep comparison covers: binary files, the size
 * and column bounds, paging, a regex that never finishes, aborts, one file as the path, the
 * cache's recheck, and bad input.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { configureScanCache, getOrScan, grep, invalidateFsScanCache } from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

describe("grep bounds", () => {
  it("skips binary files (a NUL byte, in the first 8 KiB or later, as rg) and counts them", async () => {
    const root = await tempTree({
      "a.txt": "needle\n",
      "b.bin": Buffer.concat([Buffer.from("needle\n"), Buffer.from([0, 0, 0])]),
      "late.bin": Buffer.concat([
        Buffer.alloc(9000, 0x61),
        Buffer.from("\nneedle\n"),
        Buffer.from([0]),
      ]),
    });
    const result = await grep("needle", { path: root });
    expect(result.lines.map((l) => l.path)).toEqual(["a.txt"]);
    expect(result.skipped.binary).toBe(2);
  });

  it("names files over the size bound instead of searching them", async () => {
    const root = await tempTree({
      "small.txt": "needle\n",
      "big.txt": `${"x".repeat(5000)}\nneedle\n`,
    });
    const result = await grep("needle", { path: root, maxFileSize: 1000 });
    expect(result.lines.map((l) => l.path)).toEqual(["small.txt"]);
    expect(result.skipped.tooLarge).toEqual([{ path: "big.txt", size: 5008 }]);
    expect(result.warnings[0]).toContain("larger than 1000 bytes");
  });

  it("reads files of every size whole, and never sees one file's bytes in the next", async () => {
    const KiB = 1024;
    const filler = (bytes: number) => `${"x".repeat(99)}\n`.repeat(Math.ceil(bytes / 100));
    const root = await tempTree({
      // Path order is reading order: each small file follows a bigger one that has the needle
      // where the small one has no bytes.
      "a-300k.txt": `${filler(300 * KiB)}needle\n`,
      "b-small.txt": "x\n",
      "c-64k.txt": `${"y".repeat(64 * KiB - 7)}needle`,
      "d-64k-plus-one.txt": `${"y".repeat(64 * KiB - 6)}needle`,
      "e-70k.txt": `${filler(70 * KiB)}needle\n`,
      "f-small.txt": "y\n",
    });
    const result = await grep("needle", { path: root, outputMode: "count" });
    expect(result.counts).toEqual([
      { path: "a-300k.txt", count: 1 },
      { path: "c-64k.txt", count: 1 },
      { path: "d-64k-plus-one.txt", count: 1 },
      { path: "e-70k.txt", count: 1 },
    ]);
    const lines = await grep("needle", { path: join(root, "a-300k.txt") });
    expect(lines.lines.map((l) => l.line)).toEqual([Math.ceil((300 * KiB) / 100) + 1]);
  });

  it("cuts long lines at the column bound, saying how much was left out", async () => {
    const root = await tempTree({ "long.txt": `needle ${"z".repeat(600)}\n` });
    const [line] = (await grep("needle", { path: root })).lines;
    expect(line?.text).toBe(`needle ${"z".repeat(493)} [… 107 more characters]`);
    expect((await grep("needle", { path: root, maxColumns: 10 })).lines[0]?.text).toBe(
      "needle zzz [… 597 more characters]",
    );
  });

  it("pages with offset and limit over lines, files and counts", async () => {
    const tree = Object.fromEntries(
      Array.from({ length: 5 }, (_, i) => [`f${i}.txt`, "hit one\nmiss\nhit two\n"]),
    );
    const root = await tempTree(tree);
    const page = await grep("hit", { path: root, offset: 3, limit: 4 });
    expect(page.lines.map((l) => `${l.path}:${l.line}`)).toEqual([
      "f1.txt:3",
      "f2.txt:1",
      "f2.txt:3",
      "f3.txt:1",
    ]);
    expect(page.truncated).toBe(true);
    const files = await grep("hit", { path: root, outputMode: "files_with_matches", limit: 2 });
    expect(files).toMatchObject({ files: ["f0.txt", "f1.txt"], truncated: true });
    const all = await grep("hit", { path: root, outputMode: "count" });
    expect(all).toMatchObject({ totalRecords: 5, truncated: false });
    expect(all.counts[0]).toEqual({ path: "f0.txt", count: 2 });
  });
});

describe("grep under a hostile regex", () => {
  // `(a+)+$` backtracks without end on a line of a's that does not end there; the line
  // prefilter (a DFA, linear) rules such lines out before the regex runs, so these tests hide
  // the backtracking inside a lookahead, which the prefilter cannot look into.
  const HOSTILE = "(?=(a+)+$)";

  it("answers at once where the line prefilter can rule the lines out, as rg does", async () => {
    const root = await tempTree({ "hostile.txt": `${"a".repeat(40)}!\n`, "ok.txt": "aaaa\n" });
    // Run by the regex, the hostile line would pass the 300 ms budget and be named timed out.
    const result = await grep("(a+)+$", { path: root, fileTimeoutMs: 300 });
    expect(result.lines.map((l) => l.path)).toEqual(["ok.txt"]);
    expect(result.skipped.timedOut).toEqual([]);
  });

  it("abandons a file on which the regex never finishes, reports it, and searches the rest", async () => {
    const root = await tempTree({
      "a-before.txt": "aaa!\n",
      "b-hostile.txt": `${"a".repeat(40)}!\n`,
      "c-after.txt": "aaa!\n",
    });
    const result = await grep(HOSTILE, { path: root, syntax: "javascript", fileTimeoutMs: 300 });
    expect(result.skipped.timedOut).toEqual(["b-hostile.txt"]);
    expect(result.warnings[0]).toContain("ran longer than 300 ms");
    // The process keeps serving: the next search answers at once.
    expect((await grep("aaa", { path: root })).lines.map((l) => l.path)).toEqual([
      "a-before.txt",
      "b-hostile.txt",
      "c-after.txt",
    ]);
  });

  it("stops at the overall budget with a partial result", async () => {
    const tree = Object.fromEntries(
      Array.from({ length: 3 }, (_, i) => [`h${i}.txt`, `${"a".repeat(40)}!\n`]),
    );
    const root = await tempTree(tree);
    const result = await grep(HOSTILE, {
      path: root,
      syntax: "javascript",
      fileTimeoutMs: 60_000,
      timeoutMs: 500,
    });
    expect(result.partial).toBe(true);
    expect(result.warnings.join("\n")).toContain("results are partial");
  });
});

describe("grep input", () => {
  it("searches one file given as the path", async () => {
    const root = await tempTree({ "dir/one.ts": "needle\n", "dir/two.ts": "needle\n" });
    const result = await grep("needle", { path: join(root, "dir", "one.ts") });
    expect(result.lines).toEqual([{ path: "one.ts", line: 1, text: "needle", match: true }]);
  });

  it("refuses bad input with typed errors, and an aborted search with ABORTED", async () => {
    const root = await tempTree({ "a.txt": "x\n" });
    expect(await rejectsWith(grep("(unclosed", { path: root }), "INVALID_PATTERN")).toContain(
      "fixedStrings",
    );
    // An empty pattern matches every line, as in rg.
    expect((await grep("", { path: root })).lines).toEqual([
      { path: "a.txt", line: 1, text: "x", match: true },
    ]);
    await rejectsWith(grep("x", { path: root, type: "klingon" }), "INVALID_ARGUMENT");
    await rejectsWith(grep("x", { path: root, before: -1 }), "INVALID_ARGUMENT");
    const renamed = { path: root, headLimit: 1 } as Parameters<typeof grep>[1];
    expect(await rejectsWith(grep("x", renamed), "INVALID_ARGUMENT")).toContain(
      "headLimit is now limit",
    );
    await rejectsWith(grep("x", { path: join(root, "missing") }), "NOT_FOUND");
    await rejectsWith(grep("x", { path: root, signal: AbortSignal.abort() }), "ABORTED");
    expect((await grep("(unclosed", { path: root, fixedStrings: true })).lines).toEqual([]);
  });

  it("rechecks an empty candidate list once when the cached listing is old enough", async () => {
    const root = await tempTree({ "a.md": "x\n" });
    configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 0 });
    await getOrScan(root, { includeHidden: true });
    writeFileSync(join(root, "new.ts"), "needle\n");
    const result = await grep("needle", { path: root, cache: true, type: "ts" });
    expect(result.lines.map((l) => l.path)).toEqual(["new.ts"]);
  });
});

describe("grep edge cases found in review", () => {
  it("never hands the next search a worker still stuck in a regex", async () => {
    const tree: Record<string, string> = { "a-first.txt": "aaa\n" };
    for (let i = 0; i < 3; i++) tree[`b-hostile-${i}.txt`] = `${"a".repeat(40)}!\n`;
    const root = await tempTree(tree);
    // Stops after the first file: the worker may be deep in a hostile one by then.
    const paged = await grep("(a+)+$", {
      path: root,
      outputMode: "files_with_matches",
      limit: 1,
      fileTimeoutMs: 300,
    });
    expect(paged.files).toEqual(["a-first.txt"]);
    const next = await grep("!", { path: root, outputMode: "count", timeoutMs: 20_000 });
    expect(next.partial).toBe(false);
    expect(next.counts).toHaveLength(3); // every hostile file, searched by a sound worker
  });

  it("reports a file on which the regex itself fails, and searches the others", async () => {
    const root = await tempTree({ "a.txt": `${"x".repeat(200_000)}\n`, "b.txt": "x\n" });
    const result = await grep("(?:x|y)*$", { path: root, outputMode: "count" });
    expect(result.counts.map((c) => c.path)).toContain("b.txt");
    const failedOrCounted = [
      ...result.skipped.failed.map((f) => f.path),
      ...result.counts.map((c) => c.path),
    ];
    expect(failedOrCounted).toContain("a.txt");
  });

  it("refuses malformed options with typed errors", async () => {
    const root = await tempTree({ "a.txt": "x\n" });
    await rejectsWith(grep("x", { path: root, type: "toString" }), "INVALID_ARGUMENT");
    await rejectsWith(
      grep("x", { path: root, glob: [42 as unknown as string] }),
      "INVALID_ARGUMENT",
    );
    await rejectsWith(grep(123 as unknown as string, { path: root }), "INVALID_PATTERN");
  });
});

describe("binary files found late", () => {
  it("skips a file whose NUL byte comes after the first 8 KiB once it matches, as rg does", async () => {
    const root = await tempTree({
      "late.txt": `foo\n${"x".repeat(9000)}\n\u0000tail foo\n`,
      "clean.txt": "foo\n",
    });
    const result = await grep("foo", { path: root, outputMode: "files_with_matches" });
    expect(result.files).toEqual(["clean.txt"]);
    expect(result.skipped.binary).toBe(1);
  });
});

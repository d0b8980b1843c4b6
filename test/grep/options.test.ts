/**
 * The library's grep options behind rg's flags: several patterns, invert,
 * whole lines, only the matches, replace, submatches (byte offsets), counted matches, files
 * without a match, types not wanted, depth, case-insensitive globs, links followed, binary
 * modes, and `grepFiles`; cold and through the content index (which must not rule files out
 * where an inverted or without-match search needs them). Bad values are typed errors.
 */
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FreshfsError, type GrepOptions, grep, grepFiles } from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import { answer, greps, warmIndex } from "../helpers/content-index.js";
import { tempTree } from "../helpers/fs.js";

const TREE: Record<string, string | Uint8Array> = {
  "a.txt": "foo bar\nbaz\nfoo foo\nqux\n",
  "b.md": "nothing here\n",
  "c.rs": "fn foo() {}\n",
  "deep/x/y.txt": "foo deep\n",
  "uni.txt": "straße foo\n",
  "bin.dat": new Uint8Array([0x66, 0x6f, 0x6f, 0x0a, 0x00, 0x66, 0x6f, 0x6f, 0x0a]),
};

let root: string;
const { indexed, plain } = greps(() => root);
const lines = (r: Awaited<ReturnType<typeof grep>>) =>
  r.lines.map((l) => `${l.path}:${l.line}:${l.text}`);

beforeAll(async () => {
  root = await tempTree(TREE, { lifetime: "file" });
  await warmIndex(root, indexed);
});

afterAll(() => {
  liveTrees.closeAll();
});

describe("grep's rg options", () => {
  const both = async (pattern: string | string[], options: GrepOptions) => {
    const cold = await plain(pattern as string, options);
    const warm = await indexed(pattern as string, options);
    expect(answer(warm)).toEqual(answer(cold));
    return cold;
  };

  it("takes several patterns, and none", async () => {
    expect(lines(await both(["baz", "qux"], {}))).toEqual(["a.txt:2:baz", "a.txt:4:qux"]);
    expect((await both([], {})).totalRecords).toBe(0);
    expect(lines(await both(["a.c", "baz"], { fixedStrings: true, lineRegexp: true }))).toEqual([
      "a.txt:2:baz",
    ]);
  });

  it("inverts, through the index too", async () => {
    expect(lines(await both("o", { invert: true, glob: "*.txt" }))).toEqual([
      "a.txt:2:baz",
      "a.txt:4:qux",
    ]);
    const without = await both("foo", { outputMode: "files_without_match" });
    expect(without.files).toEqual(["b.md"]);
  });

  it("gives only the matches, replaced, with byte columns and offsets", async () => {
    const only = await both("fo+", { onlyMatching: true, glob: "a.txt" });
    expect(only.lines.map((l) => [l.line, l.text, l.column])).toEqual([
      [1, "foo", 1],
      [3, "foo", 1],
      [3, "foo", 5],
    ]);
    const replaced = await both("f(o+)", { replace: "<$1>", glob: "a.txt" });
    expect(replaced.lines.map((l) => l.text)).toEqual(["<oo> bar", "<oo> <oo>"]);
    const placed = await both("foo", { submatches: true, glob: "uni.txt" });
    // "straße " is 8 bytes: ß takes two.
    expect(placed.lines[0]?.submatches).toEqual([{ start: 8, end: 11, text: "foo" }]);
    expect(placed.lines[0]?.column).toBe(9);
    expect(placed.lines[0]?.offset).toBe(0);
  });

  it("counts matches, not lines, with countMatches", async () => {
    const counted = await both("foo", { outputMode: "count", countMatches: true, glob: "a.txt" });
    expect(counted.counts).toEqual([{ path: "a.txt", count: 3 }]);
  });

  it("filters by types not wanted, depth and case-insensitive globs", async () => {
    const files = async (options: GrepOptions) =>
      (await both("foo", { outputMode: "files_with_matches", ...options })).files;
    expect(await files({ typeNot: ["txt"] })).toEqual(["c.rs"]);
    expect(await files({ type: ["all"], typeNot: ["rust"] })).toEqual([
      "a.txt",
      "deep/x/y.txt",
      "uni.txt",
    ]);
    expect(await files({ maxDepth: 1 })).toEqual(["a.txt", "c.rs", "uni.txt"]);
    expect(await files({ iglob: ["*.TXT"] })).toEqual(["a.txt", "deep/x/y.txt", "uni.txt"]);
    expect(await files({ glob: ["A.*"], globCaseInsensitive: true })).toEqual(["a.txt"]);
  });

  it("follows links only when asked", async () => {
    const dir = await tempTree({ "real/f.txt": "foo\n" });
    symlinkSync("real", join(dir, "link"));
    symlinkSync("real/f.txt", join(dir, "file-link.txt"));
    const found = async (follow: boolean) =>
      (await grep("foo", { path: dir, follow, outputMode: "files_with_matches" })).files;
    expect(await found(false)).toEqual(["real/f.txt"]);
    expect(await found(true)).toEqual(["file-link.txt", "link/f.txt", "real/f.txt"]);
  });

  it("searches a binary file as rg does in each mode", async () => {
    const at = (binary: GrepOptions["binary"]) =>
      grep("foo", { path: join(root, "bin.dat"), binary });
    expect((await at("skip")).lines).toEqual([]);
    expect((await at("skip")).skipped.binary).toBe(1);
    // The NUL is in rg's first read: rg searches nothing of the file.
    expect((await at("quit")).lines).toEqual([]);
    const reported = await at("report");
    expect(reported.lines).toEqual([
      { path: "bin.dat", line: 0, text: "", match: true, binary: { offset: 4, stopped: false } },
    ]);
    expect(lines(await at("text"))).toEqual(["bin.dat:1:foo", "bin.dat:2:\u0000foo"]);
  });

  it("lists the files a search would read, with grepFiles", async () => {
    const listed = await grepFiles({ path: root, type: ["txt"], maxDepth: 2 });
    expect(listed.files).toEqual(["a.txt", "uni.txt"]);
  });

  it("refuses bad values with a typed error", async () => {
    for (const options of [
      { outputMode: "nope" },
      { maxDepth: -1 },
      { binary: "sometimes" },
      { typeNot: ["no-such-type"] },
      { replace: 3 },
    ] as unknown as GrepOptions[]) {
      await expect(grep("foo", { path: root, ...options })).rejects.toBeInstanceOf(FreshfsError);
    }
    await expect(grep([1] as unknown as string[], { path: root })).rejects.toMatchObject({
      code: "INVALID_PATTERN",
    });
  });
});

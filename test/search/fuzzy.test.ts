/**
 * fuzzyFind: the ranking tiers as the floor, boundaries and camelCase humps, smart
 * case, several words, ties, limits, and the cache's empty-result recheck. Ranking quality
 * against fzf on real queries is measured by `npm run bench -- search`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  fuzzyFind,
  getOrScan,
  invalidateFsScanCache,
} from "../../src/index.js";
import { tempTree } from "../helpers/fs.js";

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

async function ranked(tree: Record<string, string>, query: string, options = {}) {
  const root = await tempTree(tree);
  return (await fuzzyFind(query, { path: root, ...options })).matches.map((match) => match.path);
}

describe("fuzzyFind ranking", () => {
  it("orders the tiers: exact, prefix, contains, path contains, subsequences", async () => {
    const order = await ranked(
      {
        "a/xmapx.ts": "", // basename contains
        "a/map.ts": "", // exact stem
        "a/mapping.ts": "", // basename prefix
        "map-dir/other.ts": "", // path contains
        "a/mXaXp.ts": "", // basename subsequence
        "m/a/p/zzz.ts": "", // path subsequence
      },
      "map",
      { includeDirectories: false },
    );
    expect(order).toEqual([
      "a/map.ts",
      "a/mapping.ts",
      "a/xmapx.ts",
      "map-dir/other.ts",
      "a/mXaXp.ts",
      "m/a/p/zzz.ts",
    ]);
  });

  it("prefers a match at word boundaries and camelCase humps to one in the middle of words", async () => {
    expect(await ranked({ "src/getOrScan.ts": "", "src/gooseReelstand.ts": "" }, "gOS")).toEqual([
      "src/getOrScan.ts",
    ]);
    expect(await ranked({ "x/fetchuser.ts": "", "x/fetch-user.ts": "" }, "fu")).toEqual([
      "x/fetch-user.ts",
      "x/fetchuser.ts",
    ]);
    const swmap = await ranked({ "a/b/switchmap.ts": "", "a/b/sawitchmap.ts": "" }, "swmap");
    expect(swmap[0]).toBe("a/b/switchmap.ts");
  });

  it("is smart about case, needs every word, and breaks ties by shorter path then path", async () => {
    const tree = {
      "src/Button.tsx": "",
      "src/button.css": "",
      "lib/deeper/button.css": "",
      "src/b/button.css": "",
    };
    expect(await ranked(tree, "Button")).toEqual(["src/Button.tsx"]);
    expect(await ranked(tree, "button css")).toEqual([
      "src/button.css",
      "src/b/button.css",
      "lib/deeper/button.css",
    ]);
  });

  it("ranks directories ten points up, or leaves them out", async () => {
    const tree = { "src/parser/index.ts": "", "src/parser.ts": "" };
    expect(await ranked(tree, "parser")).toEqual([
      "src/parser",
      "src/parser.ts",
      "src/parser/index.ts",
    ]);
    expect(await ranked(tree, "parser", { includeDirectories: false })).toEqual([
      "src/parser.ts",
      "src/parser/index.ts",
    ]);
  });

  it("cuts at the limit, leaves node_modules out unless named, and lists in order for an empty query", async () => {
    const tree = { "a.ts": "", "b.ts": "", "c.ts": "", "node_modules/x/a.ts": "" };
    const root = await tempTree(tree);
    const cut = await fuzzyFind("ts", { path: root, limit: 2, includeDirectories: false });
    expect(cut).toMatchObject({ totalMatches: 3, truncated: true });
    const ranked = (await fuzzyFind("ts", { path: root, includeDirectories: false })).matches;
    const rest = await fuzzyFind("ts", {
      path: root,
      limit: 2,
      offset: 2,
      includeDirectories: false,
    });
    expect(rest).toMatchObject({ matches: ranked.slice(2), totalMatches: 3, truncated: false });
    expect((await fuzzyFind("", { path: root, limit: 1, offset: 1 })).matches).toMatchObject([
      { path: "b.ts" },
    ]);
    expect((await fuzzyFind("node_modules a", { path: root })).matches.map((m) => m.path)).toEqual([
      "node_modules/x/a.ts",
    ]);
    expect((await fuzzyFind("", { path: root })).matches.map((m) => m.path)).toEqual([
      "a.ts",
      "b.ts",
      "c.ts",
    ]);
  });

  it("rechecks an empty cached result once the listing is old enough", async () => {
    const root = await tempTree({ "a.ts": "" });
    configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 0 });
    await getOrScan(root);
    writeFileSync(join(root, "brand-new.ts"), "");
    expect(
      (await fuzzyFind("brandnew", { path: root, cache: true })).matches.map((m) => m.path),
    ).toEqual(["brand-new.ts"]);
  });
});

describe("fuzzyFind edge cases found in review", () => {
  it("ranks a file at the root above the same name deeper down", async () => {
    const tree = {
      "package.json": "",
      "packages/a/package.json": "",
      "README.md": "",
      "docs/README.md": "",
    };
    expect((await ranked(tree, "package.json"))[0]).toBe("package.json");
    expect((await ranked(tree, "readme"))[0]).toBe("README.md");
  });

  it("refuses malformed options with a typed error", async () => {
    const root = await tempTree({ "a.ts": "" });
    const error = await fuzzyFind("a", { path: root, signal: {} as AbortSignal }).catch(
      (e: unknown) => e,
    );
    expect((error as { code?: string }).code).toBe("INVALID_ARGUMENT");
  });
});

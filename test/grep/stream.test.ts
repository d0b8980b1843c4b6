import { spawnSync } from "node:child_process";
import { getEventListeners } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GrepOptions, getOrScan, grep, type SearchProgress } from "../../src/index.js";

let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "freshfs-grep-stream-"));
  // Patterns that never match make every entry slow to judge: the walk takes many slices, and
  // the search has files to go through before it ends. Their literal head `f` is every file's,
  // so the walker's precheck on a name's head cannot reject them before the glob runs (with
  // `never-` as the head, the walk took 86 ms, and under load the search's first report came
  // after it).
  const never = Array.from({ length: 3000 }, (_, i) => `f*never-${i}-*.x`).join("\n");
  writeFileSync(join(root, ".ignore"), `${never}\nskipped/\n`);
  for (let d = 0; d < 40; d++) {
    mkdirSync(join(root, `d${String(d).padStart(2, "0")}`, "sub"), { recursive: true });
    for (let f = 0; f < 100; f++) {
      const dir = join(root, `d${String(d).padStart(2, "0")}`, f % 3 ? "" : "sub");
      writeFileSync(join(dir, `f${f}.txt`), f % 9 === 0 ? `one\nTOKEN ${d} ${f}\nthree\n` : "x\n");
    }
  }
  mkdirSync(join(root, "skipped"));
  writeFileSync(join(root, "skipped", "TOKEN.txt"), "TOKEN\n");
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("grep while the walk lists the tree", () => {
  it("starts searching before the walk ends, and answers as a search of the finished listing", async () => {
    // Workers started (under tsx, a start takes longer than this walk), as in a process that
    // has searched before.
    await grep("TOKEN", { path: root });
    const phases: SearchProgress["phase"][] = [];
    const streamed = await grep("TOKEN", {
      path: root,
      onProgress: (progress) => phases.push(progress.phase),
    });
    // Searching began while walking: a "search" report before the last "walk" one.
    expect(phases.indexOf("search")).toBeGreaterThan(-1);
    expect(phases.indexOf("search")).toBeLessThan(phases.lastIndexOf("walk"));
    // The same search over a listing already made (nothing to stream).
    await getOrScan(root, { includeHidden: true, useGitignore: true });
    const cases: GrepOptions[] = [
      {},
      { outputMode: "count" },
      { outputMode: "files_with_matches" },
      { limit: 5, offset: 3 },
      { context: 1 },
    ];
    for (const options of cases) {
      const fresh = await grep("TOKEN", { path: root, ...options });
      const listed = await grep("TOKEN", { path: root, cache: true, ...options });
      expect(fresh.freshness).toBe("walked");
      const strip = (r: typeof fresh) => ({ ...r, freshness: undefined, warnings: r.warnings });
      expect(strip(fresh), JSON.stringify(options)).toEqual({
        ...strip(listed),
        freshness: undefined,
      });
    }
    expect(streamed.lines.map((l) => l.path)).toEqual(
      (await grep("TOKEN", { path: root, cache: true })).lines.map((l) => l.path),
    );
    expect(streamed.totalRecords).toBe(40 * 12);
  });

  it("agrees with rg", async () => {
    const rg = spawnSync("rg", ["-n", "--no-heading", "TOKEN", "."], {
      cwd: root,
      encoding: "utf8",
    });
    if (rg.error) return;
    const ours = await grep("TOKEN", { path: root });
    const theirs = rg.stdout
      .trim()
      .split("\n")
      .map((line) => line.replace(/^\.\//, ""))
      .sort();
    expect(ours.lines.map((l) => `${l.path}:${l.line}:${l.text}`).sort()).toEqual(theirs);
  });

  it("leaves no listener on the caller's signal, whether it streamed, walked or answered live", async () => {
    // One signal for many calls, as a long-lived caller (an MCP server's session) may keep.
    const controller = new AbortController();
    const { signal } = controller;
    const calls: GrepOptions[] = [
      {}, // walked, streamed while walking
      { glob: "*.txt" }, // walked, not streamed (globs)
      { cache: true, watch: true }, // live: the first call walks the tree, streamed
      { cache: true, watch: true }, // live, from the watched tree: no walk, the index asked
      { cache: true, watch: true, outputMode: "count" },
    ];
    for (const options of calls) {
      const found = await grep("TOKEN", { path: root, signal, ...options });
      expect(found.totalRecords, JSON.stringify(options)).toBe(40 * 12);
      expect(getEventListeners(signal, "abort"), JSON.stringify(options)).toEqual([]);
    }
  });
});

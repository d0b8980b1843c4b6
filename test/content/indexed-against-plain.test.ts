import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  configureContentIndex,
  contentIndexStats,
  type GrepOptions,
  waitForContentIndex,
} from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import { answer, greps, warmIndex as warmIndexOf } from "../helpers/content-index.js";

let root: string;

const { indexed, plain } = greps(() => root);

/** Runs a script in another process, to completion: its changes are made before the next call. */
function inChild(script: string): void {
  const done = spawnSync(process.execPath, ["-e", script], { cwd: root, encoding: "utf8" });
  expect(done.status, done.stderr).toBe(0);
}

const warmIndex = () => warmIndexOf(root, indexed);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "freshfs-content-index-"));
  writeFileSync(join(root, ".gitignore"), "ignored/\n");
  for (let d = 0; d < 6; d++) {
    mkdirSync(join(root, `dir${d}`, "deep"), { recursive: true });
    for (let f = 0; f < 40; f++) {
      const body =
        f % 7 === 0
          ? `line one\nconst PM_RESUME = ${f};\npm_runtime_resume(dev);\n`
          : f % 5 === 0
            ? `Pm_Resume here\nnothing\npm_restore then resume\n`
            : `plain text ${d} ${f}\nERR_SYS in ${f}\n`;
      writeFileSync(join(root, `dir${d}`, f % 2 ? "deep" : "", `file${f}.c`), body);
    }
  }
  // Over 256 KiB: indexed in blocks, and read in part. Matches in the first, a middle and the
  // last block, one on a line that straddles where a block would begin.
  const lines: string[] = [];
  for (let i = 0; i < 40_000; i++) {
    if (i === 3 || i === 17_003 || i === 39_999) lines.push(`match PM_RESUME at ${i}`);
    else lines.push(`filler line number ${i} with some words`);
  }
  writeFileSync(join(root, "big.h"), `${lines.join("\n")}\n`);
  writeFileSync(join(root, "binary.bin"), Buffer.from([0x50, 0x4d, 0, 1, 2, 3]));
  // Unicode word characters before `Ah`, and a long s where -i reads `s`.
  writeFileSync(join(root, "units.h"), "5\u00b5Ah\n3 \u03bcAh\nxAh\npm_re\u017fume\n");
  mkdirSync(join(root, "ignored"));
  writeFileSync(join(root, "ignored", "x.c"), "PM_RESUME\n");
});

afterEach(() => {
  configureContentIndex(undefined);
});

afterAll(() => {
  liveTrees.closeAll();
  rmSync(root, { recursive: true, force: true });
});

describe("the content index", () => {
  it("answers as a grep that reads every file, while reading only the files that can match", async () => {
    await warmIndex();
    const [stats] = contentIndexStats(root);
    expect(stats?.files).toBeGreaterThan(240);
    expect(stats?.building).toBe(0);
    const cases: [string, GrepOptions][] = [
      ["PM_RESUME", {}],
      ["PM_RESUME", { ignoreCase: true }],
      ["pm_resume", { smartCase: true }],
      ["PM_RESUME", { word: true }],
      ["[A-Z]+_RESUME", {}],
      ["PM_RESUME", { outputMode: "count" }],
      ["PM_RESUME", { outputMode: "files_with_matches" }],
      ["PM_RESUME", { maxCount: 1 }],
      ["PM_RESUME", { context: 2 }],
      ["PM_RESUME", { limit: 2 }],
      ["PM_RE", { fixedStrings: true }],
      ["ERR_SYS|PM_RESUME", {}],
      // Alternations the index narrows file by file (each file searched for the literals it
      // can hold): in either order, with one that is nowhere, ignoring case.
      ["PM_RESUME|nowhere_at_all|ERR_SYS", {}],
      ["ERR_SYS|pm_resume", { ignoreCase: true }],
      ["Pm_Resume|ERR_SYS|line one", {}],
      ["resume", { ignoreCase: true, outputMode: "count" }],
      ["no such text anywhere", {}],
      // rg's Unicode \w: one of 63 trigrams, or a file with a non-ASCII byte.
      ["\\wAh", {}],
      ["(?-u)\\wAh", {}],
      ["\\bµAh", {}],
      // A binary file (binary.bin: PM, then a NUL) is read when binary files are searched.
      ["PM", { binary: "text" }],
      ["PM", { text: true, outputMode: "count" }],
      ["PM", { binary: "report" }],
      ["PM", { binary: "quit" }],
      ["PM", { binary: "skip" }],
    ];
    for (const [pattern, options] of cases) {
      const fast = await indexed(pattern, options);
      expect(fast.freshness).toBe("live");
      expect(answer(fast), `${pattern} ${JSON.stringify(options)}`).toEqual(
        answer(await plain(pattern, options)),
      );
    }
    // The rare literal: only the files holding all its trigrams are read, not the 240 others.
    const rare = await indexed("PM_RESUME");
    expect(rare.filesRead).toBeLessThan(rare.filesSearched / 3);
    expect(rare.lines.length).toBeGreaterThan(6);
  });

  it("reads, of the files with a non-ASCII byte, only those that can hold `\\wAh`'s match", async () => {
    await warmIndex();
    const pattern = "\\wAh";
    const before = await indexed(pattern);
    // Non-ASCII text, and `Ah` after no word character: files `\wAh` never needs to read.
    const made = Array.from({ length: 12 }, (_, i) => join(root, `dir0/accents${i}.txt`));
    for (const [i, file] of made.entries()) writeFileSync(file, `caf\u00e9 ${i} Ah\n`);
    await indexed(pattern);
    await waitForContentIndex(root);
    const after = await indexed(pattern);
    expect(answer(after)).toEqual(answer(await plain(pattern)));
    expect(after.lines.map((line) => line.path)).toContain("units.h");
    expect(after.filesSearched).toBe(before.filesSearched + 12);
    expect(after.filesRead).toBe(before.filesRead);
    for (const file of made) rmSync(file);
  });

  it("finds the matches of a large file in its blocks, with their line numbers", async () => {
    await warmIndex();
    const result = await indexed("PM_RESUME", { path: join(root, "big.h") });
    expect(result.lines.map((line) => line.line)).toEqual([4, 17_004, 40_000]);
    const all = await indexed("PM_RESUME");
    expect(all.lines.filter((line) => line.path === "big.h").map((line) => line.line)).toEqual([
      4, 17_004, 40_000,
    ]);
  });

  it("sees every change another process made before the call: edits, creates, deletes", async () => {
    await warmIndex();
    for (let round = 0; round < 12; round++) {
      const file = `dir${round % 6}/file${round + 1}.c`;
      inChild(`require("fs").writeFileSync(${JSON.stringify(file)}, "FRESH_TOKEN_${round}\\n")`);
      const found = await indexed(`FRESH_TOKEN_${round}`);
      expect(found.lines.map((line) => line.path)).toEqual([file]);
      inChild(`require("fs").writeFileSync(${JSON.stringify(file)}, "gone\\n")`);
      expect((await indexed(`FRESH_TOKEN_${round}`)).lines).toEqual([]);
      inChild(`require("fs").writeFileSync("new-${round}.c", "NEW_TOKEN_${round}\\n")`);
      expect((await indexed(`NEW_TOKEN_${round}`)).lines.map((line) => line.path)).toEqual([
        `new-${round}.c`,
      ]);
      inChild(`require("fs").rmSync("new-${round}.c")`);
      expect((await indexed(`NEW_TOKEN_${round}`)).lines).toEqual([]);
    }
    // Indexed again in the background after each change: the answers stayed exact meanwhile,
    // and stay so once the re-indexing is done.
    await waitForContentIndex(root);
    expect(answer(await indexed("FRESH_TOKEN|PM_RESUME"))).toEqual(
      answer(await plain("FRESH_TOKEN|PM_RESUME")),
    );
  });

  it("sees a directory replaced by another process (every file below it is read again)", async () => {
    await warmIndex();
    inChild(
      `const fs = require("fs"); fs.renameSync("dir5", "dir5-old"); fs.mkdirSync("dir5/deep", { recursive: true }); fs.writeFileSync("dir5/file0.c", "REPLACED_TOKEN\\n");`,
    );
    expect((await indexed("REPLACED_TOKEN")).lines.map((line) => line.path)).toEqual([
      "dir5/file0.c",
    ]);
    inChild(
      `const fs = require("fs"); fs.rmSync("dir5", { recursive: true }); fs.renameSync("dir5-old", "dir5");`,
    );
    expect((await indexed("REPLACED_TOKEN")).lines).toEqual([]);
    expect(answer(await indexed("PM_RESUME"))).toEqual(answer(await plain("PM_RESUME")));
  });

  it("stays exact when files change while it is being built", async () => {
    liveTrees.closeAll();
    for (let round = 0; round < 3; round++) {
      // The first live call starts the build; the child's edits land while it runs.
      await indexed("warm-up");
      await indexed("warm-up");
      inChild(
        `const fs = require("fs"); for (let f = 0; f < 40; f += 3) fs.writeFileSync("dir${round}/file" + f + ".c", "DURING_BUILD_${round}\\n");`,
      );
      await waitForContentIndex(root);
      expect(answer(await indexed(`DURING_BUILD_${round}`))).toEqual(
        answer(await plain(`DURING_BUILD_${round}`)),
      );
      expect((await indexed(`DURING_BUILD_${round}`)).totalRecords).toBeGreaterThan(0);
    }
  });

  it("stops growing at its budget, and the files beyond it are read from disk", async () => {
    liveTrees.closeAll();
    configureContentIndex({ maxBytes: 64 * 1024 });
    await warmIndex();
    const [stats] = contentIndexStats(root);
    expect(stats?.full).toBe(true);
    expect(stats?.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(answer(await indexed("PM_RESUME"))).toEqual(answer(await plain("PM_RESUME")));
  });

  it("can be turned off: every file is read", async () => {
    liveTrees.closeAll();
    configureContentIndex({ enabled: false });
    await warmIndex();
    const result = await indexed("PM_RESUME");
    expect(result.filesRead).toBe(result.filesSearched);
    expect(contentIndexStats(root)).toEqual([]);
    const off = await indexed("PM_RESUME", { index: false });
    expect(off.filesRead).toBe(off.filesSearched);
  });
});

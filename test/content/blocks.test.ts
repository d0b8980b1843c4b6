import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentIndexStats, type GrepOptions } from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import { answer, greps, warmIndex as warmIndexOf } from "../helpers/content-index.js";

let root: string;

const { indexed, plain } = greps(() => root);
const warmIndex = () => warmIndexOf(root, indexed);

/** ~400 KiB of filler lines (indexed in blocks of ~128 KiB), `head` first. */
function bigFile(head: string, middle?: { at: number; text: string }): string {
  const lines: string[] = [head];
  let size = head.length + 1;
  while (size < 400 * 1024) {
    const line = `filler line ${lines.length} with some words`;
    lines.push(line);
    size += line.length + 1;
  }
  let text = `${lines.join("\n")}\n`;
  if (middle) {
    // Put `middle.text` so that its first newline is the first one at or after `middle.at`:
    // the byte where the build thread ends a block (BLOCK_BYTES = 128 KiB).
    const cut = text.lastIndexOf("\n", middle.at - middle.text.indexOf("\n") - 1) + 1; // a line start
    const pad = "x".repeat(middle.at - cut - middle.text.indexOf("\n"));
    text = `${text.slice(0, cut)}${pad}${middle.text}${text.slice(cut)}`;
  }
  return text;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "freshfs-content-index-blocks-"));
  // A UTF-8 byte order mark, then a match on line 1 only: the index reads only block 0.
  writeFileSync(join(root, "bom.txt"), `\uFEFF${bigFile("BOMNEEDLE on the first line")}`);
  // "FOO_END\nBAR_START" across the first block boundary (the newline at byte 131072).
  writeFileSync(
    join(root, "span.txt"),
    bigFile("first line", { at: 128 * 1024, text: "FOO_END\nBAR_START\n" }),
  );
  // A match from the first block to the last (multiline): no block holds both literals.
  writeFileSync(join(root, "far.txt"), `ALPHA_OPEN\n${bigFile("x")}OMEGA_CLOSE\n`);
});

afterAll(() => {
  liveTrees.closeAll();
  rmSync(root, { recursive: true, force: true });
});

describe("blocks of large files", () => {
  it("the files are really indexed in blocks (sanity)", async () => {
    await warmIndex();
    const [stats] = contentIndexStats(root);
    expect(stats?.files).toBe(3);
    // The span fixture: the newline of FOO_END is the first at or after 128 KiB.
    const text = (await import("node:fs")).readFileSync(join(root, "span.txt"), "latin1");
    expect(text.indexOf("\n", 128 * 1024)).toBe(text.indexOf("FOO_END") + 7);
  });

  for (const [pattern, options] of [
    ["BOMNEEDLE", {}],
    ["^BOMNEEDLE", {}],
    ["^BOMNEEDLE", { outputMode: "count" }],
  ] as [string, GrepOptions][]) {
    it(`a byte order mark at the start of a file read in blocks is stripped: ${pattern} ${JSON.stringify(options)}`, async () => {
      await warmIndex();
      const slow = await plain(pattern, options);
      expect(slow.totalRecords).toBe(1);
      const fast = await indexed(pattern, options);
      expect(fast.freshness).toBe("live");
      expect(fast.filesRead).toBe(1);
      expect(answer(fast)).toEqual(answer(slow));
    });
  }

  it("rg strips the byte order mark too", () => {
    const rg = spawnSync("rg", ["-n", "^BOMNEEDLE", "bom.txt"], { cwd: root, encoding: "utf8" });
    expect(rg.stdout).toBe("1:BOMNEEDLE on the first line\n");
    const rg2 = spawnSync("rg", ["-U", "-l", "FOO_END\\nBAR_START", "."], {
      cwd: root,
      encoding: "utf8",
    });
    expect(rg2.stdout).toBe("./span.txt\n");
  });

  for (const pattern of ["FOO_END\\nBAR_START", "ALPHA_OPEN[\\s\\S]*OMEGA_CLOSE"]) {
    it(`a multiline match across blocks is found: ${pattern}`, async () => {
      await warmIndex();
      const options: GrepOptions = { multiline: true, outputMode: "files_with_matches" };
      const slow = await plain(pattern, options);
      expect(slow.files.length).toBe(1);
      const fast = await indexed(pattern, options);
      expect(fast.freshness).toBe("live");
      expect(answer(fast)).toEqual(answer(slow));
    });
  }
});

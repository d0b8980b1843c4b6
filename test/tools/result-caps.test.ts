/**
 * Every tool's text stays under MAX_RESULT_BYTES: the records that fit with a note on
 * how to page on, a diff over the cap summarized by its changed lines, a pattern never echoed
 * in full, and a last cut with a note for anything else.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { boundText, grep, MAX_RESULT_BYTES, Workspace } from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";

const size = (text: string) => Buffer.byteLength(text);

/** A minified bundle: one line of 627 KB. */
function minified(): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < 627_000; i++) {
    const part = `var a${i}=function(b){return b+${i}};`;
    parts.push(part);
    length += part.length;
  }
  return parts.join("");
}

describe("the result cap", () => {
  it("summarizes the diff of a 30-character edit in a 627 KB one-line file by its changed lines", async () => {
    const dir = await tempTree({ "bundle.min.js": minified() });
    const ws = new Workspace({ roots: dir });
    await ws.read({ file_path: "bundle.min.js" });
    const edit = await ws.edit({
      file_path: "bundle.min.js",
      old_string: "var a5000=function(b){return b+5000};",
      new_string: "var a5000=function(b){return b-5000};",
    });
    expect(size(edit.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(edit.text).toContain("first changed line 1");
    expect(edit.text).toMatch(/The diff is \d+ bytes, over the \d+ KiB a result may show/);
    expect(edit.text).toContain("covers, each hunk with up to 3 lines of context: 1.");
    // The library still hands the whole diff to a caller that wants it.
    expect(edit.diff?.length).toBeGreaterThan(1_000_000);
  });

  it("keeps replace_all on an 8 MiB file under the cap", async () => {
    const line = "const value = compute(input) + offset; // the same line over and over\n";
    const dir = await tempTree({
      "big.ts": line.repeat(Math.ceil((8 * 1024 * 1024) / line.length)),
    });
    const ws = new Workspace({ roots: dir });
    for (let offset = 1; ; ) {
      const page = await ws.read({ file_path: "big.ts", offset });
      expect(size(page.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
      if (!page.truncated) break;
      offset = page.endLine + 1;
    }
    const edit = await ws.edit({
      file_path: "big.ts",
      old_string: "offset;",
      new_string: "offset2;",
      replace_all: true,
    });
    expect(edit.replacements).toBeGreaterThan(100_000);
    expect(size(edit.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
  });

  it("keeps an overwrite's diff of a long line under the cap", async () => {
    const dir = await tempTree({ "one.txt": `${"x".repeat(400_000)}\n` });
    const ws = new Workspace({ roots: dir });
    await ws.read({ file_path: "one.txt" });
    const write = await ws.write({ file_path: "one.txt", content: `${"y".repeat(400_000)}\n` });
    expect(size(write.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(write.text).toContain("first changed line 1");
  });

  it("cuts a NO_MATCH message's closest lines as read cuts lines", async () => {
    const line = "let x = 1; ".repeat(600);
    const dir = await tempTree({ "long.js": `${line}\n` });
    const ws = new Workspace({ roots: dir });
    await ws.read({ file_path: "long.js" });
    const message = await rejectsWith(
      ws.edit({ file_path: "long.js", old_string: line.replace("1", "2"), new_string: "x" }),
      "NO_MATCH",
    );
    expect(message).toContain("[line cut: 4600 more characters]");
    expect(size(message)).toBeLessThan(2 * line.length);
  });

  it("shows the grep records that fit and says where the next page starts", async () => {
    const long = `match ${"z".repeat(480)}\n`;
    const dir = await tempTree(
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, long.repeat(40)])),
    );
    const ws = new Workspace({ roots: dir });
    const first = await ws.grep({ pattern: "match", output_mode: "content", head_limit: 0 });
    expect(size(first.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(first.truncated).toBe(true);
    expect(first.lines.length).toBeLessThan(1600);
    const next = first.text.match(/Use offset=(\d+) for more/);
    expect(Number(next?.[1])).toBe(first.lines.length);
    const second = await ws.grep({
      pattern: "match",
      output_mode: "content",
      head_limit: 0,
      offset: first.lines.length,
    });
    // The library's own grep is not capped: the two pages are its records, in order, unbroken.
    const all = await grep("match", { path: dir, outputMode: "content" });
    const key = (l: { path: string; line: number }) => `${l.path}:${l.line}`;
    expect(first.lines.map(key)).toEqual(all.lines.slice(0, first.lines.length).map(key));
    expect(second.lines.slice(0, 3).map(key)).toEqual(
      all.lines.slice(first.lines.length, first.lines.length + 3).map(key),
    );
  });

  it("never echoes a 1 MB pattern back", async () => {
    const dir = await tempTree({ "a.txt": "nothing here\n" });
    const ws = new Workspace({ roots: dir });
    const pattern = "q".repeat(1_000_000);
    const grep = await ws.grep({ pattern, fixed_strings: true });
    expect(size(grep.text)).toBeLessThan(500);
    const glob = await ws.glob({ pattern: `${"q".repeat(1000)}*` }).catch((error) => error);
    expect(size(String(glob.text ?? glob.message))).toBeLessThan(1000);
  });

  it("shows the glob paths that fit", async () => {
    const dir = await tempTree({});
    const deep = "d".repeat(200);
    for (let i = 0; i < 1500; i++) {
      const { mkdirSync } = await import("node:fs");
      mkdirSync(join(dir, deep), { recursive: true });
      writeFileSync(join(dir, deep, `${"n".repeat(200)}${i}.txt`), "");
    }
    const ws = new Workspace({ roots: dir });
    const glob = await ws.glob({ pattern: "**/*.txt", limit: 5000 });
    expect(size(glob.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(glob.truncated).toBe(true);
    expect(glob.text).toContain(`Use offset=${glob.files.length} for more.`);
  });
});

describe("boundText", () => {
  it("leaves text under the cap alone and cuts longer text at a line end, saying how much is left out", () => {
    expect(boundText("short")).toBe("short");
    const text = `${"line of text\n".repeat(30_000)}`;
    const cut = boundText(text);
    expect(size(cut)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(cut).toMatch(
      /\n\(Output cut at the 256 KiB a result may hold: \d+ more bytes not shown\.\)$/,
    );
    const kept = cut.slice(0, cut.lastIndexOf("\n("));
    expect(text.startsWith(kept)).toBe(true);
    expect(kept.endsWith("line of text")).toBe(true);
  });

  it("never splits a character", () => {
    const text = "é".repeat(MAX_RESULT_BYTES);
    const cut = boundText(text);
    expect(size(cut)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(cut).not.toContain("\uFFFD");
  });
});

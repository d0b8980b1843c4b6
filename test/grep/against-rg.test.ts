/**
 * grep against ripgrep: one generated tree, a table of patterns and option sets, and
 * for each the same answer from freshfs and from `rg` (files, line numbers, line text, counts).
 * Skipped, with a visible message, when `rg` is not installed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type GrepOptions, grep } from "../../src/index.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { generatedSource } from "../helpers/source.js";

const hasRg = spawnSync("rg", ["--version"]).status === 0;
if (!hasRg) console.warn("SKIPPED: grep conformance needs ripgrep (`apt-get install -y ripgrep`).");

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "TODO",
  "todo",
  "FIXME",
  "foo",
  "foobar",
  "bar_baz",
  "fooBar",
];

function generated(seed: number, lines: number): string {
  return generatedSource(seed, lines, WORDS, 6);
}

const TREE: Record<string, string | Uint8Array> = {
  ".gitignore": "ignored/\n*.log\n",
  "src/app.ts": generated(1, 120),
  "src/util.ts": generated(2, 80),
  "src/deep/nested.tsx": generated(3, 60),
  "src/style.css": ".foo { color: red; }\n.bar { color: blue; }\n/* TODO: dark mode */\n",
  "lib/index.js": generated(4, 100),
  "lib/data.json": '{ "foo": 1,\n  "bar": [1, 2, 3],\n  "todo": "yes" }\n',
  "docs/readme.md": "# Title\n\nSome foo text.\nTODO: write more\n\n## Another\nfoo bar baz\n",
  "docs/unicode.md": "café au lait\nnaïve façade\nÜber alles\nfoo—bar\n",
  "crlf.txt": "first foo\r\nsecond bar\r\nthird foo bar\r\n",
  "noeol.txt": "no newline foo at end",
  "empty.txt": "",
  "ignored/secret.ts": "foo TODO secret\n",
  "debug.log": "foo in a log\n",
  ".hidden/config.ts": "foo hidden\nTODO hidden\n",
  "bin/blob.bin": Buffer.concat([
    Buffer.from("foo before nul\n"),
    Buffer.from([0, 1, 2]),
    Buffer.from("\nfoo after\n"),
  ]),
  "multi.txt": "start foo\nmiddle\nend bar\nfoo\nbar\n",
  "src/dash.ts": "opt -x value\nopt-x value\n-x\nx-x-x\n",
};

interface Case {
  readonly name: string;
  readonly pattern: string;
  /** The same pattern in ripgrep's syntax, where the two differ. */
  readonly rgPattern?: string;
  readonly options?: GrepOptions;
  readonly rg: readonly string[];
}

const CASES: readonly Case[] = [
  { name: "plain literal", pattern: "foo", rg: [] },
  { name: "rare literal", pattern: "FIXME", rg: [] },
  { name: "literal with punctuation", pattern: "();", options: { fixedStrings: true }, rg: ["-F"] },
  { name: "regex with required literal", pattern: "\\w+Bar", rg: [] },
  { name: "regex without literal", pattern: "^\\s+[a-z]+$", rg: [] },
  { name: "alternation", pattern: "alpha|gamma", rg: [] },
  { name: "character class", pattern: "[Tt]odo", rg: [] },
  { name: "anchored start", pattern: "^foo", rg: [] },
  { name: "anchored end", pattern: "\\);$", rg: [] },
  { name: "ignore case", pattern: "todo", options: { ignoreCase: true }, rg: ["-i"] },
  { name: "smart case, lower", pattern: "todo", options: { smartCase: true }, rg: ["-S"] },
  { name: "smart case, upper", pattern: "Todo", options: { smartCase: true }, rg: ["-S"] },
  {
    name: "smart case, escape is not upper",
    pattern: "\\Wfoo",
    options: { smartCase: true },
    rg: ["-S"],
  },
  { name: "word", pattern: "foo", options: { word: true }, rg: ["-w"] },
  {
    name: "word, ignore case",
    pattern: "foobar",
    options: { word: true, ignoreCase: true },
    rg: ["-w", "-i"],
  },
  {
    name: "fixed string with regex characters",
    pattern: "(x) {",
    options: { fixedStrings: true },
    rg: ["-F"],
  },
  {
    name: "fixed string, ignore case",
    pattern: "FOOBAR",
    options: { fixedStrings: true, ignoreCase: true },
    rg: ["-F", "-i"],
  },
  { name: "context after", pattern: "FIXME", options: { after: 2 }, rg: ["-A", "2"] },
  { name: "context before", pattern: "FIXME", options: { before: 2 }, rg: ["-B", "2"] },
  { name: "context both", pattern: "gamma delta", options: { context: 1 }, rg: ["-C", "1"] },
  { name: "context overlapping matches", pattern: "foo", options: { context: 3 }, rg: ["-C", "3"] },
  {
    name: "files with matches",
    pattern: "TODO",
    options: { outputMode: "files_with_matches" },
    rg: ["-l"],
  },
  { name: "count", pattern: "foo", options: { outputMode: "count" }, rg: ["-c"] },
  {
    name: "count, ignore case",
    pattern: "todo",
    options: { outputMode: "count", ignoreCase: true },
    rg: ["-c", "-i"],
  },
  { name: "max count", pattern: "foo", options: { maxCount: 2 }, rg: ["-m", "2"] },
  {
    name: "max count with count",
    pattern: "foo",
    options: { maxCount: 3, outputMode: "count" },
    rg: ["-m", "3", "-c"],
  },
  { name: "glob include", pattern: "foo", options: { glob: "*.ts" }, rg: ["-g", "*.ts"] },
  { name: "glob exclude", pattern: "foo", options: { glob: "!*.ts" }, rg: ["-g", "!*.ts"] },
  {
    name: "glob with a directory",
    pattern: "foo",
    options: { glob: "src/**" },
    rg: ["-g", "src/**"],
  },
  { name: "type ts", pattern: "foo", options: { type: "ts" }, rg: ["-t", "ts"] },
  { name: "type md", pattern: "TODO", options: { type: "md" }, rg: ["-t", "md"] },
  {
    name: "two types",
    pattern: "foo",
    options: { type: ["js", "json"] },
    rg: ["-t", "js", "-t", "json"],
  },
  { name: "hidden", pattern: "hidden", options: { hidden: true }, rg: ["--hidden"] },
  {
    name: "no ignore",
    pattern: "foo",
    options: { gitignore: false, hidden: false },
    rg: ["--no-ignore"],
  },
  { name: "unicode literal", pattern: "façade", rg: [] },
  { name: "unicode, ignore case", pattern: "über", options: { ignoreCase: true }, rg: ["-i"] },
  { name: "crlf line", pattern: "foo bar", rg: [] },
  { name: "last line without newline", pattern: "end$", rg: [] },
  { name: "dot matches within a line", pattern: "f.o", rg: [] },
  {
    name: "multiline across lines",
    pattern: "foo\\nmiddle",
    options: { multiline: true },
    rg: ["-U"],
  },
  {
    name: "multiline span",
    pattern: "start[\\s\\S]*?bar",
    options: { multiline: true },
    rg: ["-U"],
  },
  {
    name: "multiline files",
    pattern: "middle\\nend",
    options: { multiline: true, outputMode: "files_with_matches" },
    rg: ["-U", "-l"],
  },
  { name: "no match", pattern: "qqqzzz", rg: [] },
  { name: "quantified literal", pattern: "fo+bar", rg: [] },
  { name: "optional part", pattern: "colou?r", rg: [] },
  { name: "escaped dot", pattern: "\\.foo", rg: [] },
  { name: "digits", pattern: "\\d", rg: [] },
  { name: "json key", pattern: '"todo"', rg: [] },
  // One rare character (here `_`, `(`, `—`) narrows these to candidate lines.
  { name: "regex around one rare character", pattern: "[a-z]+_[a-z]+", rg: [] },
  {
    name: "one rare character, count",
    pattern: "\\w+\\(\\w\\)",
    options: { outputMode: "count" },
    rg: ["-c"],
  },
  {
    name: "one rare character, ignore case",
    pattern: "BAR_[a-z]",
    options: { ignoreCase: true },
    rg: ["-i"],
  },
  { name: "one non-ASCII character", pattern: "\\w—\\w", rg: [] },
  { name: "fixed one character", pattern: "(", options: { fixedStrings: true }, rg: ["-F"] },
  // Literal patterns are matched without the regex: these check that shortcut.
  {
    name: "escaped literal, count",
    pattern: "\\(x\\) \\{",
    options: { outputMode: "count" },
    rg: ["-c"],
  },
  {
    name: "literal, smart case, count",
    pattern: "foobar",
    options: { smartCase: true, outputMode: "count" },
    rg: ["-S", "-c"],
  },
  {
    name: "literal, files",
    pattern: "bar_baz",
    options: { outputMode: "files_with_matches" },
    rg: ["-l"],
  },
  // Found by review: each of these once disagreed with rg.
  {
    name: "glob excludes a directory",
    pattern: "foo",
    options: { glob: "!src" },
    rg: ["-g", "!src"],
  },
  {
    name: "anchored glob",
    pattern: "foo",
    options: { glob: "/src/*.ts" },
    rg: ["-g", "/src/*.ts"],
  },
  {
    name: "glob braces",
    pattern: "foo",
    options: { glob: "*.{md,json}" },
    rg: ["-g", "*.{md,json}"],
  },
  {
    name: "later glob wins",
    pattern: "foo",
    options: { glob: ["!*.ts", "*.ts"] },
    rg: ["-g", "!*.ts", "-g", "*.ts"],
  },
  {
    name: "negated class glob",
    pattern: "foo",
    options: { glob: "[!a]*.ts" },
    rg: ["-g", "[!a]*.ts"],
  },
  { name: "unicode escape", pattern: "\\u0061lpha", rgPattern: "\\x{61}lpha", rg: [] },
  { name: "alternation inside a group", pattern: "(\\(x\\)|FIXME) \\w", rg: [] },
  { name: "literal brace", pattern: "\\.foo \\{", rg: [] },
  {
    name: "max count with context",
    pattern: "foo",
    options: { maxCount: 1, after: 3 },
    rg: ["-m", "1", "-A", "3"],
  },
  {
    name: "multiline count",
    pattern: "foo\\nmiddle",
    options: { multiline: true, outputMode: "count" },
    rg: ["-U", "-c"],
  },
  {
    name: "multiline, every line",
    pattern: "^",
    options: { multiline: true, outputMode: "count" },
    rg: ["-U", "-c"],
  },
  {
    name: "word with punctuation at its edge",
    pattern: "-x",
    options: { word: true, fixedStrings: true },
    rg: ["-w", "-F"],
  },
];

type Record3 = readonly [string, number, string, boolean];

function parseRgContent(output: string): Record3[] {
  const records: Record3[] = [];
  for (const line of output.split("\n")) {
    if (line === "" || line === "--") continue;
    const m = /^(.*?)([:-])(\d+)\2([\s\S]*)$/.exec(line);
    if (!m) throw new Error(`unparsed rg line: ${line}`);
    records.push([m[1] as string, Number(m[3]), m[4] as string, m[2] === ":"]);
  }
  return records;
}

describe.skipIf(!hasRg)("grep against ripgrep", () => {
  let root = "";
  beforeAll(async () => {
    root = await tempTree(TREE, { lifetime: "file" });
    execFileSync("git", ["init", "-q", root], { env: isolatedGitEnv(root) });
    writeFileSync(join(root, "src", "long.ts"), `${"x".repeat(50)} foo ${"y".repeat(50)}\n`);
  });

  it("has at least 40 cases", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const options: GrepOptions = { hidden: false, ...c.options, path: root };
      const ours = await grep(c.pattern, options);
      const run = spawnSync(
        "rg",
        [
          "--no-heading",
          "--with-filename",
          "--line-number",
          "--color",
          "never",
          "--sort",
          "path",
          ...c.rg,
          "-e",
          c.rgPattern ?? c.pattern,
          ".",
        ],
        { cwd: root, encoding: "utf8", env: isolatedGitEnv(root) },
      );
      expect(run.status === 0 || run.status === 1, run.stderr).toBe(true);
      // rg names files as reached from the "." it was given.
      const rgOut = run.stdout.replace(/^\.\//gm, "");
      const mode = c.options?.outputMode ?? "content";
      if (mode === "files_with_matches") {
        expect(ours.files).toEqual(rgOut.split("\n").filter(Boolean));
      } else if (mode === "count") {
        const theirs = rgOut
          .split("\n")
          .filter(Boolean)
          .map((line) => {
            const at = line.lastIndexOf(":");
            return { path: line.slice(0, at), count: Number(line.slice(at + 1)) };
          });
        expect(ours.counts).toEqual(theirs);
      } else {
        const mine: Record3[] = ours.lines.map((l) => [l.path, l.line, l.text, l.match]);
        expect(mine).toEqual(parseRgContent(rgOut));
      }
    });
  }
});

/**
 * rg's regex syntax, row by row against real rg (13): every pattern is run by both on the same
 * file, and freshfs must give rg's lines, or refuse the pattern where rg refuses it. A row rg
 * answers and freshfs refuses is allowed only where it is listed as unsupported, with the
 * reason; a row where freshfs answers differently without an error (a silent miss, or extra
 * lines) fails. Skipped where rg is not installed (.ci/run installs it).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FreshfsError, type GrepOptions, grep } from "../../src/index.js";
import { tempTree } from "../helpers/fs.js";

const LINES = [
  "foo",
  "xfoo bar",
  "Foo Bar baz",
  "FOO",
  "fooo fo f.o",
  "a.b axb a\tb",
  "AA aa Aa",
  "αβγ Ωμέγα ΣΊΣΥΦΟΣ σίσυφος ς",
  "Привет мир",
  "5µAh 10mAh 3 µAh",
  "\u212a kelvin K k \u017f long s S s",
  "digits 123 ٣٤٥ ０１",
  "tab\there nbsp\u00a0here",
  "emoji 😀 grin",
  "πfooπ éfooé _foo_ 1foo1",
  "under_score CamelCase snake_case_name",
  "a-b a_b a+b a*b a?b a(b) a[b] a{b} a|b a^b a$b a\\b a/b",
  "#hash &amp ~tilde %percent",
  "ab aab aaab aaaab",
  "ǅ ǆ Ǆ dž",
  "0x41 A \u0041 \u00e9 é",
  "end",
  "",
  "   leading spaces",
  "x{2,3} literal braces",
  "only \u212a and \u017f here",
];

/** Where freshfs refuses what rg answers, and why (README, "Regex syntax"). */
const UNSUPPORTED: Record<string, string> = {
  "(?-u).": "(?-u) makes `.` one byte; freshfs matches decoded characters",
  "(?-u)[^a]": "a negated class under (?-u) is one byte",
  "(?-u)^.{3}$": "(?-u) makes `.` one byte",
  "\\p{Age=3.0}": "JavaScript has no Age property",
  "(?-u)\\xFF": "under (?-u), \\xFF is a raw byte; freshfs matches decoded text",
  "\\p{sc!=Latin}": "rg 13 matches `!=` as `=` (a bug of its regex crate): refused, not guessed",
};

const PATTERNS = [
  // Literals, anchors, repetition
  "foo",
  "f.o",
  "^foo",
  "foo$",
  "foo\\z",
  "\\Afoo",
  "(?m)^foo",
  "(?-m)^foo",
  "(?s)a.b",
  "fo+",
  "fo{2}",
  "fo{1,}",
  "fo{1,2}",
  "fo*?",
  "(?U)fo+",
  "a{ 2 }",
  "a**",
  "a*+",
  "x{0}y",
  "(foo){1}",
  "^*foo",
  "a{2}b",
  "x\\{2,3\\}",
  // Classes
  "[[:alpha:]]+",
  "[[:digit:]]",
  "^[[:^alpha:]]+$",
  "[[:upper:]][[:lower:]]",
  "[[:space:]]here",
  "[[:punct:]]{2}",
  "[[:word:]]+_",
  "[[:xdigit:]]{2}",
  "[[:blank:]]b",
  "[[:cntrl:]]",
  "[[:graph:]]{4}",
  "[[:print:]]",
  "[[:ascii:]]",
  "[a-z&&[^aeiou]]{3}",
  "[\\w--\\d]+",
  "[a-c~~b-d]",
  "[[a-c][x-z]]{2}",
  "[^[:alpha:][:space:]]",
  "[\\p{Greek}&&\\p{Lu}]",
  "[-a]b",
  "[a-]b",
  "[]a]",
  "[^]a]",
  "[a-c-e]",
  "[--a]",
  "[:alpha:]",
  "[[:foo:]]",
  "[\\[\\]]",
  "[\\^x]",
  "[a&b]",
  "[a~b]",
  // Unicode classes and properties
  "\\pL",
  "\\PL",
  "\\p{Greek}",
  "\\p{greek}",
  "\\p{Script=Greek}",
  "\\p{sc=Cyrillic}",
  "\\p{scx=Greek}",
  "\\p{Lu}",
  "\\p{Uppercase_Letter}",
  "\\p{uppercase letter}",
  "\\p{gc=Nd}",
  "\\p{Nd}",
  "\\pN",
  "\\p{Emoji}",
  "\\p{Alphabetic}",
  "\\p{White_Space}",
  "\\p{Any}",
  "\\P{ASCII}",
  "\\p{sc!=Latin}",
  "\\p{IsGreek}",
  "\\p{Age=3.0}",
  "\\p{Assigned}",
  // Escapes
  "\\x{41}",
  "\\x41",
  "\\u0041",
  "\\u{3bc}",
  "\\U0001F600",
  "\\x{1F600}",
  "\\t",
  "\\.",
  "\\-",
  "\\#",
  "\\&",
  "\\~",
  "a\\+b",
  "a\\*b",
  "a\\\\b",
  "a/b",
  // Perl classes and boundaries
  "\\w+Ah",
  "\\wAh",
  "\\d+",
  "\\d",
  "\\s+h",
  "\\W",
  "^\\D+$",
  "\\S+",
  "\\bfoo\\b",
  "\\Bfoo",
  "foo\\B",
  "(?-u)\\w+Ah",
  "(?-u)\\bfoo\\b",
  "\\b\\w+\\b",
  "\\b[a-z]+_[a-z]+\\b",
  "\\bαβγ\\b",
  "\\bfoo|bar\\b",
  "(?-u)\\bµAh",
  "(?-u)\\b\\w+Ah",
  "\\b(foo|xfoo)\\b",
  "\\b\\d+\\b",
  "(?-u)\\d",
  "(?-u)\\s",
  "(?-u).",
  "(?-u)[^a]",
  "(?-u)^.{3}$",
  // Flags
  "(?i)foo",
  "(?i)FOO",
  "(?i)k",
  "(?i)s",
  "(?i)σ",
  "(?i)ǅ",
  "a(?i)B",
  "(?i)a(?-i)B",
  "(?i:a)A",
  "(?i)foo(?-i)$",
  "(?x) f o o # comment",
  "(?x)f\\ o",
  "(?x)[ f]oo",
  "(?ix)F O O",
  "(?s:.)",
  "(?i)\\p{Lu}",
  "(?i)\\P{Ll}",
  "(?i)[^a]",
  "(?i)[k]",
  "x(?i)[k]",
  "(?i)[a-c]",
  "A(?i)[a-c]",
  "(?i)Σ",
  // Groups and alternation
  "(?P<n>foo)",
  "(foo)|(bar)",
  "(?:foo|ba)r",
  "a||b",
  "()",
  "(?i)(?-i)",
  "foo|",
  "x{2}{3}",
  "(?i)*",
  "a(?i)+",
  // What rg refuses
  "(?<n>foo)",
  "a{,3}",
  "\\Qa.b\\E",
  "\\h",
  "\\0",
  "\\1",
  "(?=a)",
  "(?!a)",
  "(?<=a)b",
  "(?<!a)b",
  "\\<foo",
  "\\b{start}",
  "\\%",
  "\\y",
  "\\e",
  "(?z)",
  "(?i-i)",
  "(?-)",
  "(?)",
  "(?P<1a>x)",
  "(?P<a>x)(?P<a>y)",
  "(?P<>x)",
  "[z-a]",
  "[\\d-z]",
  "[&&a]",
  "[a&&]",
  "[]",
  "[^]",
  "[\\b]",
  "\\p{Foo}",
  "\\p{^Lu}",
  "\\pX",
  "\\p{}",
  "\\x{110000}",
  "\\x{D800}",
  "\\x{}",
  "\\xG0",
  "\\x4",
  "a{2,1}",
  "a{",
  "x{3",
  "*a",
  "a|*",
  "a)",
  "(a",
  "\\",
  "(?-u)é",
  "(?-u)\\xFF",
  "a\\nb",
];

let file: string;
let rgAvailable = false;

beforeAll(async () => {
  const dir = await tempTree({}, { lifetime: "file" });
  file = join(dir, "t.txt");
  writeFileSync(file, `${LINES.join("\n")}\n`);
  rgAvailable = spawnSync("rg", ["--version"]).status === 0;
});

type Answer = { error: string } | { lines: number[] };

function rg(pattern: string, flags: readonly string[]): Answer {
  const run = spawnSync(
    "rg",
    ["--no-config", "-n", "--no-heading", ...flags, "-e", pattern, file],
    {
      encoding: "utf8",
    },
  );
  if (run.status === 2) return { error: run.stderr.trim() };
  const lines = run.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => Number(line.slice(0, line.indexOf(":"))));
  return { lines };
}

async function ours(pattern: string, options: GrepOptions): Promise<Answer> {
  try {
    const result = await grep(pattern, { path: file, ...options });
    return { lines: result.lines.map((line) => line.line) };
  } catch (error) {
    if (error instanceof FreshfsError && error.code === "INVALID_PATTERN") {
      return { error: error.message };
    }
    throw error;
  }
}

async function compare(pattern: string, flags: readonly string[], options: GrepOptions) {
  const theirs = rg(pattern, flags);
  const mine = await ours(pattern, options);
  return { theirs, mine };
}

describe("rg's regex syntax, against rg", () => {
  it("gives rg's lines for every pattern rg runs, and refuses what rg refuses", async () => {
    if (!rgAvailable) return;
    const disagreements: string[] = [];
    let agreed = 0;
    for (const pattern of PATTERNS) {
      const { theirs, mine } = await compare(pattern, [], {});
      const unsupported = UNSUPPORTED[pattern];
      if ("error" in theirs) {
        if ("error" in mine) agreed++;
        else disagreements.push(`${pattern}: rg refuses it (${theirs.error}), freshfs answers`);
        continue;
      }
      if ("error" in mine) {
        if (unsupported === undefined) {
          disagreements.push(`${pattern}: freshfs refuses it (${mine.error}), rg answers`);
        } else agreed++;
        continue;
      }
      if (unsupported !== undefined) {
        disagreements.push(`${pattern}: listed unsupported, but freshfs answers`);
      } else if (JSON.stringify(mine.lines) === JSON.stringify(theirs.lines)) agreed++;
      else {
        disagreements.push(
          `${pattern}: rg lines ${theirs.lines.join(",")}, freshfs lines ${mine.lines.join(",")}`,
        );
      }
    }
    expect(disagreements).toEqual([]);
    expect(agreed).toBe(PATTERNS.length);
  });

  it("agrees with rg under -i, -S, -w and -F", async () => {
    if (!rgAvailable) return;
    const cases: [string, readonly string[], GrepOptions][] = [
      ["foo", ["-i"], { ignoreCase: true }],
      ["ΣΊΣΥΦΟΣ", ["-i"], { ignoreCase: true }],
      ["k", ["-i"], { ignoreCase: true }],
      ["(?-i)Foo", ["-i"], { ignoreCase: true }],
      ["[a-c]b", ["-i"], { ignoreCase: true }],
      ["\\p{Lu}", ["-i"], { ignoreCase: true }],
      ["foo", ["-S"], { smartCase: true }],
      ["Foo", ["-S"], { smartCase: true }],
      ["\\p{Lu}oo", ["-S"], { smartCase: true }],
      ["\\x46oo", ["-S"], { smartCase: true }],
      ["foo", ["-w"], { word: true }],
      ["\\w+", ["-w"], { word: true }],
      ["a.b", ["-F"], { fixedStrings: true }],
      ["(?i)", ["-F"], { fixedStrings: true }],
      ["K", ["-F", "-i"], { fixedStrings: true, ignoreCase: true }],
      ["long S", ["-F", "-i"], { fixedStrings: true, ignoreCase: true }],
      ["foo", ["-F", "-w"], { fixedStrings: true, word: true }],
    ];
    const disagreements: string[] = [];
    for (const [pattern, flags, options] of cases) {
      const { theirs, mine } = await compare(pattern, flags, options);
      if (
        JSON.stringify(theirs) !== JSON.stringify(mine) &&
        !("error" in theirs && "error" in mine)
      ) {
        disagreements.push(
          `${flags.join(" ")} ${pattern}: rg ${JSON.stringify(theirs)}, freshfs ${JSON.stringify(mine)}`,
        );
      }
    }
    expect(disagreements).toEqual([]);
  });

  it("reports a refused pattern as rg does: the pattern, a caret, the reason", async () => {
    const mine = await ours("(?z)", {});
    expect(mine).toEqual({
      error: expect.stringMatching(
        /^regex parse error:\n {4}\(\?z\)\n {6}\^\nerror: unrecognized flag\n/,
      ),
    });
    // A long pattern is shown around the place (60 characters before the flag), caret and all.
    const long = await ours(`${"x".repeat(5000)}(?z)`, {});
    expect("error" in long && long.error.length).toBeLessThan(400);
    expect("error" in long && long.error.split("\n").slice(1, 3)).toEqual([
      `    …${"x".repeat(58)}(?z)`,
      `    ${" ".repeat(61)}^`,
    ]);
  });
});

/**
 * The wildmatch port (src/scan/ignore/wildmatch.ts) against git's own test table, in the four
 * modes git's t3070 runs it in, and against the shapes that were exponential before git's
 * 1f2e05f0b7 ("wildmatch: fix exponential behavior", git 2.41).
 *
 * The table is the data of git's t/t3070-wildmatch.sh at 1a3e64c6c4a623626ff0687008732a8e007e2a1c
 * (git's master; the script's last change is 8c84e6802c): each `match` call's four wildmatch
 * verdicts, text and pattern as sh passes them, in fixtures/t3070-wildmatch.json (its ls-files
 * columns, which differ, are left out).
 * The exponential shapes, and walks of trees that hold them, run in a worker thread: a
 * regression then fails at vitest's timeout rather than blocking the test process for hours.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { byteForm, longestLiteral } from "../../src/scan/ignore/pattern.js";
import { type WildmatchFlags, wildmatch } from "../../src/scan/ignore/wildmatch.js";
import { createTempRepo, isolatedGitEnv } from "../helpers/git.js";
import { inWorker } from "../helpers/worker.js";

const TABLE = fileURLToPath(new URL("../fixtures/t3070-wildmatch.json", import.meta.url));
const WILDMATCH = new URL("../../src/scan/ignore/wildmatch.ts", import.meta.url).href;
const INDEX = new URL("../../src/index.ts", import.meta.url).href;

/** `grep -c '^match ' t/t3070-wildmatch.sh` at that commit: one call per line. */
const GIT_CASES = 190;

/** test-tool's modes, in the order of t3070's columns. */
const MODES: readonly { readonly name: string; readonly flags: WildmatchFlags }[] = [
  { name: "wildmatch", flags: { pathname: true, casefold: false } },
  { name: "iwildmatch", flags: { pathname: true, casefold: true } },
  { name: "pathmatch", flags: { pathname: false, casefold: false } },
  { name: "ipathmatch", flags: { pathname: false, casefold: true } },
];

interface TableCase {
  /** The case's place in the table (1-based) and its arguments, for the test's name. */
  readonly name: string;
  readonly text: string;
  readonly pattern: string;
  /** wildmatch's verdict per mode, in MODES order (not ls-files'). */
  readonly expected: readonly boolean[];
}

/** What t/helper/test-wildmatch.c does to each argument before matching. */
function asTestTool(argument: string): string {
  if (argument.startsWith("/")) throw new Error(`test-tool refuses a leading /: ${argument}`);
  return argument.startsWith("XXX/") ? argument.slice(3) : argument;
}

/** The table's `match` calls. */
function readTable(): TableCase[] {
  const table = JSON.parse(readFileSync(TABLE, "utf8")) as { cases: [string, string, string][] };
  return table.cases.map(([verdicts, text, pattern], index) => {
    if (!/^[01]{4}$/.test(verdicts)) throw new Error(`verdicts ${verdicts} in case ${index + 1}`);
    return {
      name: `#${index + 1} '${text}' '${pattern}'`,
      text: asTestTool(text),
      pattern: asTestTool(pattern),
      expected: [...verdicts].map((v) => v === "1"),
    };
  });
}

const CASES = readTable();

describe("git's t3070 table", () => {
  it("holds every case of git's script", () => {
    expect(CASES.length).toBe(GIT_CASES);
  });

  describe.each(MODES.map((mode, column) => ({ ...mode, column })))(
    "$name",
    ({ flags, column }) => {
      it.each(CASES)("$name", ({ text, pattern, expected }) => {
        expect(wildmatch(byteForm(pattern), byteForm(text), flags)).toBe(expected[column]);
      });
    },
  );
});

describe("the literal an ignore rule looks for before wildmatch runs", () => {
  it("is the longest run between stars, brackets and slashes, escapes read", () => {
    expect(longestLiteral("*.o.*")).toBe(".o.");
    expect(longestLiteral("*.c.[012]*.*")).toBe(".c.");
    expect(longestLiteral("*.asn1.[ch]")).toBe(".asn1.");
    expect(longestLiteral("*/include/generated")).toBe("generated");
    expect(longestLiteral("\\#*#")).toBe("#");
    expect(longestLiteral("[[:alpha:]]x[]]yz")).toBe("yz");
    expect(longestLiteral("a[b")).toBe("");
    expect(longestLiteral("**")).toBe("");
  });

  it("is held by every text git's t3070 matches with case", () => {
    let checked = 0;
    for (const { text, pattern, expected } of CASES) {
      for (const column of [0, 2]) {
        if (!expected[column]) continue;
        expect(byteForm(text)).toContain(longestLiteral(byteForm(pattern)));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it("is held by every text a generated glob matches (2,000 globs)", () => {
    const piece = fc.constantFrom(
      "a",
      "b",
      ".",
      "/",
      "*",
      "**",
      "?",
      "[ab]",
      "[!a]",
      "\\*",
      "[]a]",
      "[[:alpha:]]",
    );
    const glob = fc.array(piece, { minLength: 1, maxLength: 7 }).map((parts) => parts.join(""));
    const text = fc
      .array(fc.constantFrom("a", "b", ".", "/", "*", "]"), { maxLength: 9 })
      .map((c) => c.join(""));
    fc.assert(
      fc.property(glob, fc.array(text, { minLength: 20, maxLength: 20 }), (pattern, texts) => {
        const needle = longestLiteral(pattern);
        for (const subject of texts) {
          for (const flags of [MODES[0], MODES[2]]) {
            if (wildmatch(pattern, subject, (flags as (typeof MODES)[number]).flags)) {
              expect(subject).toContain(needle);
            }
          }
        }
      }),
      { seed: 3070, numRuns: 2000 },
    );
  });
});

const A60 = "a".repeat(60);
const STARS = "*a".repeat(16);

/**
 * Shapes that backtrack exponentially without the aborts, with git master's verdicts per mode
 * (as its wildmatch.c, compiled, gives them). Each fails behind a different kind of star.
 */
const EXPONENTIAL: readonly { pattern: string; text: string; expected: readonly boolean[] }[] = [
  // t3070's own case: the last literal is not in the rest of the text.
  { pattern: STARS, text: `${A60}b`, expected: [false, false, false, false] },
  // The text runs out before the pattern's last literal.
  { pattern: `${STARS}*b`, text: A60, expected: [false, false, false, false] },
  // A single star then `/`, and no `/` left in the text.
  { pattern: `${STARS}*/x`, text: A60, expected: [false, false, false, false] },
  // A trailing single star with a `/` still to come (a star crosses it without WM_PATHNAME).
  { pattern: `${STARS}*`, text: `${A60}/b`, expected: [false, false, true, true] },
  // The stars after a `**/`, which may retry them in every directory below.
  { pattern: `**/${STARS}`, text: `x/y/${A60}b`, expected: [false, false, false, false] },
  { pattern: `${STARS}*/x`, text: `${A60}b/y`, expected: [false, false, false, false] },
  // Case folding: the literal is found only when the text is lowered.
  { pattern: STARS, text: `${"A".repeat(60)}B`, expected: [false, false, false, false] },
  { pattern: STARS, text: "A".repeat(60), expected: [false, true, false, true] },
  // The same stars where they match.
  { pattern: `${STARS}b`, text: `${A60}b`, expected: [true, true, true, true] },
  { pattern: `${STARS}*/x`, text: `${A60}b/x`, expected: [true, true, true, true] },
];

describe("the shapes that were exponential", () => {
  it("answers each in every mode as git >= 2.41 does", async () => {
    const verdicts = await inWorker<boolean[][]>(
      `const { wildmatch } = await load(data.module);
       return data.shapes.map((s) => data.modes.map((flags) => wildmatch(s.pattern, s.text, flags)));`,
      { module: WILDMATCH, shapes: EXPONENTIAL, modes: MODES.map((mode) => mode.flags) },
    );
    expect(verdicts).toEqual(EXPONENTIAL.map((shape) => shape.expected));
  });
});

const A59 = "a".repeat(59);
const A16 = "a".repeat(16);
const A15 = "a".repeat(15);

/**
 * A tree whose ignore lines are the failing shapes above with `stars` times `*a`: a name rule;
 * a path rule ending in `*` then `/x`; an anchored rule ending in a star, with a negation that
 * re-includes a directory it matches, so the paths below it reach that trailing star.
 */
function starTree(stars: number): Record<string, string> {
  const s = "*a".repeat(stars);
  return {
    "names/.gitignore": `${s}\n`,
    [`names/${A60}b`]: "",
    [`names/${A60}`]: "",
    [`names/${A16}`]: "",
    [`names/${A15}`]: "",
    [`names/${A59}b/c`]: "",
    [`names/${A59}/c`]: "",
    "dirs/.gitignore": `${s}*/x\n`,
    [`dirs/${A60}c`]: "",
    [`dirs/${A60}b/x`]: "",
    [`dirs/${A60}b/y`]: "",
    "anchored/.gitignore": `/${s}*\n!/${A60}\n`,
    [`anchored/${A60}/b`]: "",
    [`anchored/${A60}/${A60}`]: "",
    [`anchored/${A16}x`]: "",
    [`anchored/${A15}`]: "",
  };
}

/** The files freshfs's walker lists under `root`, walked in a worker with git isolated. */
async function walkedFiles(root: string, home: string): Promise<string[]> {
  const files = await inWorker<string[]>(
    `const { forceRescan } = await load(data.index);
     const listing = await forceRescan(data.root, { includeHidden: true });
     return listing.entries.filter((entry) => entry.type !== "dir").map((entry) => entry.path);`,
    { index: INDEX, root },
    isolatedGitEnv(home),
  );
  return files.sort();
}

describe("a walk over a .gitignore of many stars", () => {
  it("lists what git lists where git 2.39 can answer (three stars)", async () => {
    const repo = await createTempRepo();
    try {
      for (const [path, text] of Object.entries(starTree(3))) {
        await mkdir(dirname(join(repo.dir, path)), { recursive: true });
        await writeFile(join(repo.dir, path), text);
      }
      const git = await repo.git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"]);
      expect(git.status).toBe(0);
      const theirs = git.stdout.toString("utf8").split("\0").filter(Boolean).sort();
      const ours = await walkedFiles(repo.dir, repo.home);
      expect(ours).toEqual(theirs);
      // Every rule decides something: each directory keeps some files and loses others.
      for (const dir of ["names", "dirs", "anchored"]) {
        const all = Object.keys(starTree(3)).filter((path) => path.startsWith(`${dir}/`));
        const kept = ours.filter((path) => path.startsWith(`${dir}/`));
        expect(kept.length).toBeGreaterThan(1);
        expect(kept.length).toBeLessThan(all.length);
      }
    } finally {
      await repo.remove();
    }
  });

  it("lists what git >= 2.41 lists with sixteen stars, which git 2.39 never finishes", async () => {
    const repo = await createTempRepo();
    try {
      for (const [path, text] of Object.entries(starTree(16))) {
        await mkdir(dirname(join(repo.dir, path)), { recursive: true });
        await writeFile(join(repo.dir, path), text);
      }
      // git's verdicts by the fixed algorithm: a name matches `*a` sixteen times when it has
      // sixteen a's and ends in one; `*a…*/x` needs a directory of sixteen a's, then x; the
      // anchored line's single stars stay in the first directory, so nothing below the
      // re-included one matches it.
      expect(await walkedFiles(repo.dir, repo.home)).toEqual(
        [
          "anchored/.gitignore",
          `anchored/${A15}`,
          `anchored/${A60}/${A60}`,
          `anchored/${A60}/b`,
          "dirs/.gitignore",
          `dirs/${A60}b/y`,
          `dirs/${A60}c`,
          "names/.gitignore",
          `names/${A15}`,
          `names/${A59}b/c`,
          `names/${A60}b`,
        ].sort(),
      );
    } finally {
      await repo.remove();
    }
  });
});

/**
 * Gitignore fuzzing against git, the fixed-seed run: 200 generated cases
 * (seed 42; 5,825 path verdicts, 1,690 files and links listed), each a tree of 5-40 paths with
 * a root `.gitignore`, up to three nested ones, maybe `.git/info/exclude`, a global excludes file
 * and `core.ignoreCase` (test/helpers/ignore-arbitraries.ts), built in a real repository. For
 * every path, freshfs's `explainPath` must give git check-ignore's verdict and deciding line
 * (file, line, pattern); the `forceRescan` listing must be `git ls-files -co --exclude-standard`'s.
 * Any disagreement fails the run, and fast-check prints the shrunk case. The long run is
 * `npm run stress -- ignore-fuzz`.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempRepo, type TempRepo } from "../helpers/git.js";
import {
  describeCase,
  FuzzRepo,
  formatFailure,
  type IgnoreCase,
  ignoreCaseArb,
} from "../helpers/ignore-arbitraries.js";

const SEED = 42;
const RUNS = 200;

let repo: TempRepo;
let fuzz: FuzzRepo;

beforeAll(async () => {
  repo = await createTempRepo();
  fuzz = new FuzzRepo(repo);
});

afterAll(async () => {
  await repo?.remove();
});

describe("gitignore fuzzing against git", () => {
  it(`agrees with git on every path and every listing of ${RUNS} generated cases (seed ${SEED})`, async () => {
    const totals = { cases: 0, verdicts: 0, ignored: 0, reincluded: 0, files: 0 };
    await fc.assert(
      fc.asyncProperty(ignoreCaseArb, async (c) => {
        const outcome = await fuzz.check(c);
        totals.cases++;
        totals.verdicts += outcome.verdicts;
        totals.ignored += outcome.ignored;
        totals.reincluded += outcome.reincluded;
        totals.files += outcome.files;
        if (outcome.disagreements.length > 0) {
          throw new Error(formatFailure(c, outcome.disagreements));
        }
      }),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
    console.info(
      `ignore fuzz: ${totals.cases} cases, ${totals.verdicts} path verdicts (${totals.ignored} ignored, ${totals.reincluded} re-included by a negation), ${totals.files} files and links compared with git's listing, 0 disagreements`,
    );
    expect(totals.cases).toBe(RUNS);
    // The generator reaches the rules: a fair share ignored, some of it re-included.
    expect(totals.ignored).toBeGreaterThan(totals.verdicts / 10);
    expect(totals.ignored).toBeLessThan(totals.verdicts * 0.9);
    expect(totals.reincluded).toBeGreaterThan(totals.verdicts / 50);
  });

  it("reports a disagreement when freshfs sees other rules than git did (the oracle can fail)", async () => {
    const [c] = fc.sample(ignoreCaseArb, { seed: SEED, numRuns: 1 }) as [IgnoreCase];
    const honest = await fuzz.check(c);
    expect(honest.disagreements).toEqual([]);
    // After git has answered, the top .gitignore becomes "*": freshfs now leaves out every
    // path git kept, at both levels.
    const tampered = await fuzz.check(c, {
      betweenGitAndFreshfs: (root) => {
        rmSync(join(root, ".gitignore"));
        writeFileSync(join(root, ".gitignore"), "*\n");
      },
    });
    const kept = honest.verdicts - honest.ignored;
    expect(kept).toBeGreaterThan(0);
    expect(tampered.disagreements.filter((d) => d.level === "rule").length).toBeGreaterThan(0);
    expect(tampered.disagreements.filter((d) => d.level === "listing").length).toBeGreaterThan(0);
    expect(formatFailure(c, tampered.disagreements)).toMatch(/^\d+ disagreement\(s\) with git:/);
  });

  it("shrinks a failing case to what it needs, and prints it", () => {
    // The shrinking of the generator itself, on a cheap property: no link below a directory.
    // What a disagreement reports is shrunk the same way: tree and lines alike, rare features
    // (exclude files, case folding, symlinked ignore files, CRLF, BOM) dropped unless needed.
    const details = fc.check(
      fc.property(
        ignoreCaseArb,
        (c) => !c.tree.some((e) => e.kind === "link" && e.path.includes("/")),
      ),
      { seed: SEED },
    );
    expect(details.failed).toBe(true);
    const shrunk = details.counterexample?.[0] as IgnoreCase;
    expect(shrunk.tree.map((e) => `${e.path}:${e.kind}`)).toEqual(["a:dir", "a/a:link"]);
    expect(shrunk.gitignores).toHaveLength(1);
    const top = shrunk.gitignores[0];
    expect(top?.symlink).toBe(false);
    expect(top?.file.lines).toHaveLength(1);
    expect(top?.file.bom).toBe(false);
    expect(top?.file.lines[0]?.crlf).toBe(false);
    expect({ exclude: shrunk.exclude, excludesFile: shrunk.excludesFile }).toEqual({
      exclude: undefined,
      excludesFile: undefined,
    });
    expect(shrunk.ignoreCase).toBe(false);
    // The counterexample prints as the case: its ignore files as JSON strings, then the tree.
    expect(fc.stringify(shrunk)).toBe(describeCase(shrunk));
    expect(describeCase(shrunk)).toMatch(/^\.gitignore: ".*"\ntree: "a\/" "a\/a@->.*"$/);
  });
});

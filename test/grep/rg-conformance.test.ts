/**
 * freshfs grep against ripgrep's own integration tests (test/grep/rg-conformance/): each case's
 * files in a temporary directory, real `rg` and the built CLI (npm test builds it first) with
 * the case's arguments, stdout and exit status compared. Only supported cases run here (no
 * skip, every flag in SUPPORTED); `npx tsx test/grep/rg-conformance/report.ts` runs them all.
 * Skipped, with a visible message, when `rg` is not installed.
 *
 * A case in KNOWN_DIFFERENCES must still differ from rg; one with `expected` (a bug rg 13 has
 * and a later ripgrep fixed, where freshfs prints what ripgrep's test asserts) must print
 * exactly that, and counts as agreeing with ripgrep's own test in the ratio.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { CASES } from "./rg-conformance/cases.js";
import { ISSUE_FLAGS, SUPPORTED } from "./rg-conformance/flags.js";
import { KNOWN_DIFFERENCES, type KnownDifference } from "./rg-conformance/known.js";
import {
  type CaseResult,
  formatSummary,
  hasRg,
  isSupported,
  runCases,
  summarize,
} from "./rg-conformance/run.js";

const rgPresent = hasRg();
if (!rgPresent)
  console.warn("SKIPPED: the rg conformance suite needs ripgrep (`apt-get install -y ripgrep`).");

/**
 * The share of supported cases that must agree: with rg 13, or, for a known difference with
 * `expected`, with ripgrep's own test of a bug rg 13 has since had fixed.
 */
const MIN_AGREEMENT = 0.95;

const SUPPORTED_CASES = CASES.filter(isSupported);

/** freshfs printed exactly the `expected` of a known difference. */
function matchesExpected(known: KnownDifference | undefined, result: CaseResult): boolean {
  const expected = known?.expected;
  return (
    expected !== undefined &&
    !result.freshfs.timedOut &&
    result.freshfs.status === expected.status &&
    result.freshfs.stdout === expected.stdout
  );
}

function share(count: number, total: number): string {
  return `${count}/${total} (${((100 * count) / total).toFixed(1)}%)`;
}

describe.skipIf(!rgPresent)("freshfs grep on ripgrep's own test cases", () => {
  const results = new Map<string, CaseResult>();

  beforeAll(async () => {
    for (const result of await runCases(SUPPORTED_CASES)) results.set(result.id, result);
    console.log(formatSummary(summarize(CASES, [...results.values()])));
    // A few hundred short processes: well within this on a small machine, even beside other files.
  }, 240_000);

  for (const c of SUPPORTED_CASES) {
    const known = KNOWN_DIFFERENCES[c.id];
    it(known === undefined ? c.id : `${c.id} (known difference)`, () => {
      const result = results.get(c.id);
      if (result === undefined) throw new Error(`${c.id} was not run`);
      if (known !== undefined) {
        expect(result.agree, `${c.id} agrees with rg now: take it out of KNOWN_DIFFERENCES`).toBe(
          false,
        );
        if (known.expected !== undefined) {
          // What ripgrep's test asserts, so it must not change silently.
          const context = `${c.id}: freshfs no longer prints the expected of KNOWN_DIFFERENCES`;
          expect(result.freshfs.timedOut, context).toBe(false);
          expect(result.freshfs.status, context).toBe(known.expected.status);
          expect(result.freshfs.stdout, context).toBe(known.expected.stdout);
        }
        return;
      }
      if (!result.agree) {
        const context = `${JSON.stringify(c.args)}\nfreshfs stderr: ${result.freshfs.stderr}`;
        // Field by field first, for a readable diff; then `agree`, which compares bytes.
        expect(result.freshfs.status, context).toBe(result.rg.status);
        expect(result.freshfs.stdout, context).toBe(result.rg.stdout);
        expect(result.freshfs.timedOut, context).toBe(false);
        expect(result.agree, `${context}\nstdout differs in bytes that do not decode`).toBe(true);
      }
    });
  }

  it(`agrees with rg or ripgrep's tests on ${100 * MIN_AGREEMENT}% of the supported cases`, () => {
    let withRg = 0;
    let withTests = 0;
    for (const c of SUPPORTED_CASES) {
      const result = results.get(c.id);
      if (result === undefined) continue;
      if (result.agree) withRg++;
      else if (matchesExpected(KNOWN_DIFFERENCES[c.id], result)) withTests++;
    }
    const total = SUPPORTED_CASES.length;
    const withBoth = share(withRg + withTests, total);
    console.log(
      [
        `agreement with rg 13 alone: ${share(withRg, total)}`,
        `with ripgrep's tests where rg 13 has since-fixed bugs: ${withBoth}`,
      ].join("\n"),
    );
    expect((withRg + withTests) / total).toBeGreaterThanOrEqual(MIN_AGREEMENT);
  });

  it("supports every flag agents reach for", () => {
    expect(ISSUE_FLAGS.filter((flag) => !SUPPORTED.has(flag))).toEqual([]);
  });

  it("lists only supported cases as known differences", () => {
    const ids = new Set(SUPPORTED_CASES.map((c) => c.id));
    expect(Object.keys(KNOWN_DIFFERENCES).filter((id) => !ids.has(id))).toEqual([]);
  });
});

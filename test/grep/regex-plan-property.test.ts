/**
 * The regex plan is a superset, checked against V8 on generated cases (fixed seed): random
 * patterns from a small grammar (literal characters ASCII, non-ASCII and astral, `k`/`s` and
 * the two characters that fold to them, classes, escapes, `.`, anchors, groups, lookarounds,
 * backreferences, alternation, quantifiers), under each of the four `i`/`u` flag sets, against
 * random lines of ASCII, UTF-8 and invalid bytes. Whenever the RegExp compilePattern builds
 * matches a line's decoded text, the line must hold the query's literals and the required text
 * (as bytes, ASCII case folded when the plan is), pass the prefilter (also one with a tiny
 * state cache, which flushes and gives up), and hold a non-ASCII byte if the plan says so; the
 * same for the pattern taken as a fixed string (-F); and a whole text the regex matches must
 * hold the multiline (-U) plan's query.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePattern } from "../../src/search/grep/pattern.js";
import { CharSets } from "../../src/search/grep/regex/charset.js";
import { type LiteralQuery, planRegex } from "../../src/search/grep/regex/index.js";
import { parseRegex } from "../../src/search/grep/regex/parse.js";
import { type LinePrefilter, linePrefilter } from "../../src/search/grep/regex/prefilter.js";

const SEED = 20240611;
const RUNS = 1500;

/** Characters the grammar writes literally (escaped when special). */
const CHARS = [
  ..."abcksxyzAKSZ_0 9-,;:",
  "é",
  "ü",
  "ſ",
  "\u212a",
  "α",
  "Ω",
  "\u00a0",
  "\ufffd",
  "😀",
];
const ESCAPES = [
  "\\d",
  "\\D",
  "\\w",
  "\\W",
  "\\s",
  "\\S",
  "\\b",
  "\\B",
  "\\.",
  "\\x41",
  "\\x6b",
  "\\u0073",
  "\\u00e9",
  "\\t",
  "\\0",
  "\\-",
  "\\p{L}",
  "\\P{L}",
  "\\p{Script=Greek}",
  "\\u{1F600}",
  "\\uD83D\\uDE00",
  "\\uD83D",
  "\\1",
  "\\2",
  "\\8",
  "\\c",
  "\\cJ",
  "\\k",
  "{",
  "}",
  "]",
];
const CLASSES = [
  "[abc]",
  "[a-z]",
  "[^a-z]",
  "[A-Z]",
  "[k]",
  "[S-T]",
  "[\\w.]",
  "[\\d\\s]",
  "[éa-c]",
  "[^\\n]",
  "[\\s\\S]",
  "[ſ]",
  "[\\u212a]",
  "[α-ω]",
  "[😀x]",
  "[^]",
  "[]",
  "[\\b]",
  "[\\d-z]",
  "[\\x00-\\x7f]",
  "[^\\x00-\\x7f]",
  "[\\p{Lu}]",
  "[\\cA-\\c_]",
];

function escapeChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

const atomArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...CHARS).map(escapeChar) },
  { weight: 2, arbitrary: fc.constantFrom(...ESCAPES) },
  { weight: 2, arbitrary: fc.constantFrom(...CLASSES) },
  { weight: 2, arbitrary: fc.constantFrom(".", ".", "^", "$") },
);

const quantifierArb = fc.constantFrom(
  "",
  "",
  "",
  "*",
  "+",
  "?",
  "{2}",
  "{0,2}",
  "{1,3}",
  "{2,}",
  "{5}",
  "+?",
  "{0,40}",
);

/** Bounded only: an unbounded group around an unbounded atom backtracks without end in V8. */
const groupQuantifierArb = fc.constantFrom("", "", "?", "{2}", "{0,2}", "{1,3}", "??");

const { regex: innerArb } = fc.letrec<{ regex: string; term: string; group: string }>((tie) => ({
  regex: fc.oneof(
    {
      weight: 3,
      arbitrary: fc.array(tie("term"), { minLength: 1, maxLength: 5 }).map((t) => t.join("")),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(tie("term"), { minLength: 1, maxLength: 3 })
        .chain((a) =>
          fc
            .array(tie("term"), { minLength: 0, maxLength: 3 })
            .map((b) => `${a.join("")}|${b.join("")}`),
        ),
    },
  ),
  term: fc.oneof(
    { weight: 5, arbitrary: fc.tuple(atomArb, quantifierArb).map(([a, q]) => a + q) },
    {
      weight: 1,
      depthSize: "small",
      arbitrary: fc.tuple(tie("group"), groupQuantifierArb).map(([g, q]) => g + q),
    },
  ),
  group: fc
    .tuple(fc.constantFrom("(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>"), tie("regex"))
    .map(([open, inner]) => `${open}${inner})`),
}));

/** Anchored at both ends half of the time: whole lines test how many bytes a character is. */
const regexArb = fc.oneof(
  innerArb,
  innerArb.map((r) => `^(?:${r})$`),
);

/** Bytes a line is made of: ASCII, whole UTF-8 characters, and invalid sequences. */
const PIECES: readonly (readonly number[])[] = [
  ...[..."abcksxyzAKSZ_09 \t\r-,.;:{}[]()\\"].map((c) => [c.charCodeAt(0)]),
  ...["é", "ü", "ſ", "\u212a", "α", "Ω", "\u00a0", "\ufeff", "\u2028", "\ufffd", "😀"].map((c) => [
    ...Buffer.from(c, "utf8"),
  ]),
  [0x80],
  [0xc3],
  [0xff],
  [0xed, 0xa0, 0x80],
  [0xf0, 0x9f, 0x98],
  [0xe2, 0x84],
];

const lineArb = fc
  .array(fc.constantFrom(...PIECES), { maxLength: 14 })
  .map((pieces) => pieces.flat());

const textArb = fc.array(lineArb, { minLength: 1, maxLength: 10 }).chain((lines) =>
  fc.boolean().map((finalNewline) => {
    const bytes: number[] = [];
    lines.forEach((line, i) => {
      if (i > 0) bytes.push(10);
      bytes.push(...line);
    });
    if (finalNewline) bytes.push(10);
    return Buffer.from(bytes);
  }),
);

const FLAG_SETS = [
  { ignoreCase: false, unicode: false },
  { ignoreCase: true, unicode: false },
  { ignoreCase: false, unicode: true },
  { ignoreCase: true, unicode: true },
] as const;

function foldAscii(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const b = out[i] as number;
    if (b >= 0x41 && b <= 0x5a) out[i] = b + 32;
  }
  return out;
}

/** Whether `bytes` satisfy the query, literals searched as UTF-8 (folded bytes when folded). */
function satisfies(q: LiteralQuery, bytes: Buffer): boolean {
  switch (q.kind) {
    case "all":
      return true;
    case "none":
      return false;
    case "literal":
      return bytes.includes(Buffer.from(q.text, "utf8"));
    case "and":
      return q.of.every((sub) => satisfies(sub, bytes));
    case "or":
      return q.of.some((sub) => satisfies(sub, bytes));
    case "nonAscii":
      return bytes.some((b) => b >= 0x80);
  }
}

function lines(text: Buffer): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf(10, start);
    if (end === -1) end = text.length;
    out.push({ start, end });
    start = end + 1;
  }
  return out;
}

/** The line starts a consumer visits: each candidate, then on from the line after it. */
function candidates(prefilter: LinePrefilter, text: Buffer): Set<number> {
  const found = new Set<number>();
  for (let from = 0; from < text.length; ) {
    const at = prefilter.nextCandidateLine(text, from, text.length);
    if (at === -1) break;
    expect(at).toBeGreaterThanOrEqual(from);
    found.add(at);
    const end = text.indexOf(10, at);
    if (end === -1) break;
    from = end + 1;
  }
  return found;
}

interface Totals {
  cases: number;
  compiled: number;
  matches: number;
  filtered: number;
  withQuery: number;
  withPrefilter: number;
  rejectedLines: number;
  nonAscii: number;
}

function check(
  pattern: string,
  flags: (typeof FLAG_SETS)[number],
  texts: Buffer[],
  totals: Totals,
) {
  totals.cases++;
  let compiled: { source: string };
  let regex: RegExp;
  try {
    compiled = compilePattern(pattern, {
      fixedStrings: false,
      ignoreCase: false,
      smartCase: false,
      word: false,
      multiline: false,
      // The generated patterns are JavaScript's, as the planner reads them.
      syntax: "javascript",
    });
    regex = new RegExp(
      compiled.source,
      `${flags.ignoreCase ? "i" : ""}${flags.unicode ? "u" : ""}`,
    );
  } catch {
    return;
  }
  totals.compiled++;
  const options = { fixedStrings: false, multiline: false, ...flags };
  const plan = planRegex(pattern, options);
  if (plan.query.kind !== "all") totals.withQuery++;
  if (plan.prefilter) totals.withPrefilter++;
  if (plan.requiresNonAscii) totals.nonAscii++;
  // The same automaton with a cache of 3 states: flushed all the time, then given up.
  let tiny: LinePrefilter | undefined;
  try {
    tiny = linePrefilter(parseRegex(pattern, flags.unicode), new CharSets(options), flags.unicode, {
      maxStates: 3,
      maxNodes: 20_000,
    });
  } catch {
    tiny = undefined;
  }
  // Fixed strings (-F): the pattern's text itself, escaped by compilePattern.
  const fixed = planRegex(pattern, { ...options, fixedStrings: true });
  const fixedRegex = new RegExp(
    compilePattern(pattern, {
      fixedStrings: true,
      ignoreCase: false,
      smartCase: false,
      word: false,
      multiline: false,
    }).source,
    regex.flags,
  );
  for (const text of texts) {
    for (const { start, end } of lines(text)) {
      if (!fixedRegex.test(text.toString("utf8", start, end))) continue;
      const bytes = text.subarray(start, end);
      const searched = fixed.folded ? foldAscii(bytes) : bytes;
      expect(satisfies(fixed.query, searched), `-F ${JSON.stringify(pattern)}`).toBe(true);
      if (fixed.prefilter) expect(fixed.prefilter.nextCandidateLine(text, start, end)).toBe(start);
    }
  }
  // Multiline (-U): the regex runs over the whole text, which must hold the query.
  const whole = planRegex(pattern, { ...options, multiline: true });
  for (const text of texts) {
    regex.lastIndex = 0;
    if (regex.test(text.toString("utf8"))) {
      const why = `${JSON.stringify(pattern)} /${regex.flags} -U on ${text.toString("hex")}`;
      const searched = whole.folded ? foldAscii(text) : text;
      expect(satisfies(whole.query, searched), `multiline query: ${why}`).toBe(true);
      if (whole.requiresNonAscii)
        expect(
          text.some((b) => b >= 0x80),
          why,
        ).toBe(true);
    }
  }
  for (const text of texts) {
    const visited = plan.prefilter ? candidates(plan.prefilter, text) : undefined;
    const visitedTiny = tiny ? candidates(tiny, text) : undefined;
    for (const { start, end } of lines(text)) {
      const decoded = text.toString("utf8", start, end);
      const bytes = text.subarray(start, end);
      if (!regex.test(decoded)) {
        if (visited && !visited.has(start)) totals.rejectedLines++;
        continue;
      }
      totals.matches++;
      const why = `${JSON.stringify(pattern)} /${regex.flags} on ${JSON.stringify(decoded)} (${bytes.toString("hex")})`;
      const searched = plan.folded ? foldAscii(bytes) : bytes;
      expect(satisfies(plan.query, searched), `query ${JSON.stringify(plan.query)}: ${why}`).toBe(
        true,
      );
      if (plan.required !== undefined) {
        expect(searched.includes(Buffer.from(plan.required)), `required: ${why}`).toBe(true);
      }
      if (visited) {
        expect(visited.has(start), `prefilter skipped: ${why}`).toBe(true);
        expect(plan.prefilter?.nextCandidateLine(text, start, text.length), why).toBe(start);
      }
      if (visitedTiny) expect(visitedTiny.has(start), `tiny cache skipped: ${why}`).toBe(true);
      if (plan.requiresNonAscii) {
        expect(
          bytes.some((b) => b >= 0x80),
          `non-ASCII claimed: ${why}`,
        ).toBe(true);
      }
      if (visited) totals.filtered++;
    }
  }
}

describe("regex plan: a superset of V8's matches", () => {
  it(`holds on ${RUNS} generated patterns x 4 flag sets (seed ${SEED})`, () => {
    const totals: Totals = {
      cases: 0,
      compiled: 0,
      matches: 0,
      filtered: 0,
      withQuery: 0,
      withPrefilter: 0,
      rejectedLines: 0,
      nonAscii: 0,
    };
    fc.assert(
      fc.property(regexArb, fc.array(textArb, { minLength: 1, maxLength: 3 }), (pattern, texts) => {
        for (const flags of FLAG_SETS) check(pattern, flags, texts, totals);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.info(
      `regex plan property: ${totals.compiled}/${totals.cases} compiled, ${totals.matches} matching lines checked, ${totals.withQuery} with a query, ${totals.withPrefilter} with a prefilter (${totals.rejectedLines} non-matching lines rejected by it), ${totals.nonAscii} non-ASCII claims`,
    );
    // The generator reaches what it tests.
    expect(totals.compiled).toBeGreaterThan(RUNS * 2);
    expect(totals.withQuery).toBeGreaterThan(RUNS / 4);
    expect(totals.withPrefilter).toBeGreaterThan(RUNS / 4);
    expect(totals.rejectedLines).toBeGreaterThan(1000);
    expect(totals.nonAscii).toBeGreaterThan(20);
    expect(totals.matches).toBeGreaterThan(RUNS);
  });
});

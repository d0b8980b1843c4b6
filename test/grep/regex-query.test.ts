/**
 * The regex plan's literal query, row by row: ripgrep's nine Linux benchmark patterns with their
 * flags as compilePattern sets them, then the constructs the analysis must get right (groups,
 * optional parts, repeats, classes, escapes, anchors, lookarounds, backreferences, case folding
 * with `k`/`s` under `iu`, non-ASCII and ill-formed literals, Annex B's legacy syntax) and bounds
 * on pathological patterns. The superset property itself is test/grep/regex-plan-property.test.ts.
 */
import { describe, expect, it } from "vitest";
import { compilePattern } from "../../src/search/grep/pattern.js";
import { type LiteralQuery, planRegex, type RegexPlan } from "../../src/search/grep/regex/index.js";

/** A query as compact text: `"lit"`, `and(…)`, `or(…)`, `all`, `none`. */
function show(q: LiteralQuery): string {
  switch (q.kind) {
    case "literal":
      return JSON.stringify(q.text);
    case "and":
    case "or":
      return `${q.kind}(${q.of.map(show).join(", ")})`;
    default:
      return q.kind;
  }
}

/** The plan with the flags compilePattern gives the RegExp (smart case off). */
function planAs(pattern: string, flags: { ignoreCase?: boolean; word?: boolean } = {}): RegexPlan {
  const compiled = compilePattern(pattern, {
    fixedStrings: false,
    ignoreCase: flags.ignoreCase ?? false,
    smartCase: false,
    word: flags.word ?? false,
    multiline: false,
  });
  // The planner reads the pattern as compilePattern translated it from rg's syntax.
  return planRegex(compiled.planned, {
    fixedStrings: false,
    ignoreCase: compiled.ignoreCase,
    unicode: compiled.flags.includes("u"),
    multiline: false,
  });
}

/** The plan for explicit flags: any of "i" (ignore case), "u", "m" (multiline), "F" (fixed). */
function plan(pattern: string, flags = ""): RegexPlan {
  return planRegex(pattern, {
    fixedStrings: flags.includes("F"),
    ignoreCase: flags.includes("i"),
    unicode: flags.includes("u"),
    multiline: flags.includes("m"),
  });
}

const W = [..."0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"];
const ALTERNATION = "ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT";

describe("ripgrep's Linux patterns", () => {
  it.each<[string, { ignoreCase?: boolean; word?: boolean }, string, string | undefined, boolean]>([
    ["PM_RESUME", {}, '"PM_RESUME"', "PM_RESUME", false],
    ["PM_RESUME", { ignoreCase: true }, '"pm_resume"', "pm_resume", false],
    ["[A-Z]+_RESUME", {}, '"_RESUME"', "_RESUME", false],
    ["PM_RESUME", { word: true }, '"PM_RESUME"', "PM_RESUME", false],
    ["\\p{Script=Greek}", {}, "all", undefined, true],
    // rg's \w is Unicode's: a match is one of 63 ASCII trigrams, or holds a non-ASCII
    // character (`µAh`); the ASCII form has the 63 only.
    ["\\wAh", {}, `or(${W.map((c) => `"${c}Ah"`).join(", ")}, nonAscii)`, undefined, true],
    ["(?-u)\\wAh", {}, `or(${W.map((c) => `"${c}Ah"`).join(", ")})`, "Ah", false],
    ["\\w{5}\\s+\\w{5}\\s+\\w{5}\\s+\\w{5}\\s+\\w{5}", {}, "all", undefined, true],
    [
      ALTERNATION,
      {},
      'or("CFG_BME_EVT", "ERR_SYS", "LINK_REQ_RST", "PME_TURN_OFF")',
      undefined,
      true,
    ],
    [
      ALTERNATION,
      { ignoreCase: true },
      'or("cfg_bme_evt", "err_sys", "link_req_rst", "pme_turn_off")',
      undefined,
      true,
    ],
  ])("%s %o: %s", (pattern, flags, query, required, prefilter) => {
    const p = planAs(pattern, flags);
    expect(show(p.query)).toBe(query);
    expect(p.required).toBe(required);
    expect(p.prefilter !== undefined).toBe(prefilter);
    expect(p.folded).toBe(flags.ignoreCase === true);
  });

  it("says every \\p{Script=Greek} line has a non-ASCII byte, and no other row's", () => {
    expect(planAs("\\p{Script=Greek}").requiresNonAscii).toBe(true);
    expect(planAs("\\wAh").requiresNonAscii).toBe(false);
    expect(planAs("[A-Z]+_RESUME").requiresNonAscii).toBe(false);
  });

  it("reads rg's \\p{Greek} as translated (Script=Greek)", () => {
    expect(show(planAs("\\p{Greek}").query)).toBe("all");
    expect(planAs("\\p{Greek}").requiresNonAscii).toBe(true);
  });

  it("-i: under `iu` an S may be U+017F: the literal stays whole, and the plan says so", () => {
    const folded = planAs("PM_RESUME", { ignoreCase: true, word: true });
    expect(show(folded.query)).toBe('"pm_resume"');
    expect(folded.foldsAside).toBe(true);
    expect(planAs("PM_RESUME", { word: true }).foldsAside).toBe(false);
    expect(planAs("PME_TURN_OFF", { ignoreCase: true }).foldsAside).toBe(false);
    expect(plan("make", "i").foldsAside).toBe(false);
    expect(plan("make", "iu").foldsAside).toBe(true);
  });
});

describe("constructs", () => {
  it.each<[string, string, string]>([
    // alternation inside groups, optional parts, repeats
    ["(foo|bar)baz", "", 'or("barbaz", "foobaz")'],
    ["foo(bar)?baz", "", 'or("foobarbaz", "foobaz")'],
    ["ab{0,3}cde", "", 'or("abbbcde", "abbcde", "abcde", "acde")'],
    ["foo.*bar", "", 'and("foo", "bar")'],
    ["foo(x|y)*bar", "", 'and("foo", "bar")'],
    ["foo.*bar|baz.*qux", "", 'or(and("foo", "bar"), and("baz", "qux"))'],
    ["a|bcd", "", "all"],
    ["abc|", "", "all"],
    ["fo+bar", "", '"obar"'],
    ["(abc){2}", "", '"abcabc"'],
    ["(abc){5,}", "", '"abcabcabcabc"'],
    ["(?:ab|cd){2}", "", 'or("abab", "abcd", "cdab", "cdcd")'],
    ["a{3}", "", '"aaa"'],
    ["\\w{5}", "", "all"],
    // classes
    ["[ab][cd][ef]", "", 'or("ace", "acf", "ade", "adf", "bce", "bcf", "bde", "bdf")'],
    ["[a-c]xy", "i", 'or("axy", "bxy", "cxy")'],
    ["[^a]bcd", "", '"bcd"'],
    ["[]abc", "", "none"],
    ["[\\d-z]bc", "", `or(${[..."-0123456789z"].map((c) => `"${c}bc"`).join(", ")})`],
    ["[\\b]bcd", "", '"\\bbcd"'],
    // escapes
    ["\\x41BC", "", '"ABC"'],
    ["\\u0041BC", "", '"ABC"'],
    ["a\\.b\\.c", "", '"a.b.c"'],
    ["\\0abc", "", '"\\u0000abc"'],
    ["\\u{1F600}abc", "u", '"😀abc"'],
    // Annex B without `u`: \u{…} is `u` and braces; \8 is 8; \1 with no group is octal 1;
    // \12 is octal 10, `\n`, which no line holds; a bad \x or \k or quantifier is literal.
    ["\\u{1F600}abc", "", '"u{1F600}abc"'],
    ["\\8ab9", "", '"8ab9"'],
    ["\\1abc", "", '"\\u0001abc"'],
    ["\\12abc", "", "none"],
    ["\\cAabc", "", '"\\u0001abc"'],
    ["\\c_abc", "", '"\\\\c_abc"'],
    ["\\x4gabc", "", '"x4gabc"'],
    ["\\k<a>bcd", "", '"k<a>bcd"'],
    ["a{,2}bcd", "", '"a{,2}bcd"'],
    // anchors, boundaries, lookarounds (a positive one's text is in the line too)
    ["^foo$", "", '"foo"'],
    ["\\bfoo\\b", "", '"foo"'],
    ["(?<=abc)def", "", 'and("abc", "def")'],
    ["(?<!abc)def", "", '"def"'],
    ["x(?=abc|abd)", "", 'or("abc", "abd")'],
    ["x(?!abc)", "", "all"],
    // backreferences match unknown text
    ["(a)\\1bcd", "", '"bcd"'],
    ["(?<n>x)\\k<n>yz", "", "all"],
    // case: folded to lower-case ASCII; under `iu`, `k`/`s` also match U+212A and U+017F, which
    // the literals leave aside (the plan says so: a text holding either is searched without)
    ["make", "i", '"make"'],
    ["make", "iu", '"make"'],
    ["kiss", "iu", '"kiss"'],
    ["(?:k|s)ab", "i", 'or("kab", "sab")'],
    ["[K]abc", "iu", '"kabc"'],
    // non-ASCII: kept as written; dropped when folded; never U+FFFD or half a pair
    ["café", "", '"café"'],
    ["café", "i", '"caf"'],
    ["Straße", "i", '"stra"'],
    ["😀😀", "u", '"😀😀"'],
    ["😀x", "", '"😀x"'],
    ["[😀]ab", "", "all"],
    ["\\ufffdabc", "", '"abc"'],
    // fixed strings, multiline (literals may hold `\n` there)
    ["a.b", "F", '"a.b"'],
    ["A.B", "Fi", '"a.b"'],
    ["a\\cJbcd", "m", '"a\\nbcd"'],
    // what the parser does not know: no constraint
    ["abc(?i:def)", "", "all"],
  ])("%s /%s -> %s", (pattern, flags, query) => {
    expect(show(plan(pattern, flags).query)).toBe(query);
  });

  it("folds only when case is ignored, and says so", () => {
    expect(plan("ABC").folded).toBe(false);
    expect(plan("ABC", "i").folded).toBe(true);
    expect(show(plan("ABC", "i").query)).toBe('"abc"');
  });

  it("gives the longest literal all matches share as `required`", () => {
    expect(plan("foo(bar)?baz").required).toBe("fooba");
    expect(plan("(foo|bar)baz").required).toBe("baz");
    expect(plan("foo.*barbaz").required).toBe("barbaz");
    expect(plan("[ab][cd][ef]").required).toBeUndefined();
  });

  it("claims non-ASCII only when no ASCII-only match exists", () => {
    expect(plan("café").requiresNonAscii).toBe(true);
    expect(plan("caf[éa]").requiresNonAscii).toBe(false);
    expect(plan("\\p{L}", "u").requiresNonAscii).toBe(false);
    expect(plan("[^\\x00-\\x7f]").requiresNonAscii).toBe(true);
    expect(plan("(?=é)").requiresNonAscii).toBe(true);
    expect(plan("é?").requiresNonAscii).toBe(false);
  });
});

describe("bounds", () => {
  it.each<[string, string]>([
    ["3000-word alternation", Array.from({ length: 3000 }, (_, i) => `word${i}x`).join("|")],
    ["3000 nested groups", `${"(".repeat(3000)}a${")".repeat(3000)}`],
    ["20,000 characters", "x".repeat(20_000)],
    ["repeated classes", "[a-z][0-9][A-Z]".repeat(300)],
    ["a large repeat of an alternation", "(a|b|c|d){50}(e|f){50}"],
    ["200 nested stars", `${"(?:".repeat(200)}ab${")*".repeat(200)}`],
  ])("plans %s quickly, with a bounded query", (_, pattern) => {
    const started = performance.now();
    const p = plan(pattern);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(JSON.stringify(p.query).length).toBeLessThan(64 * 1024);
  });

  it("cuts a long literal into overlapping pieces of at most 65 characters", () => {
    const text = Array.from({ length: 200 }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
    const q = plan(text).query;
    if (q.kind !== "and") throw new Error(`expected an AND, got ${show(q)}`);
    const pieces = q.of.map((p) => (p.kind === "literal" ? p.text : show(p)));
    for (const piece of pieces) {
      expect(text).toContain(piece);
      expect(piece.length).toBeLessThanOrEqual(65);
    }
  });
});

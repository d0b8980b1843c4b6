/**
 * The line prefilter's contract on hand-made texts: the first candidate line at or after
 * `from`, -1 when none; `^` and `$` at a line's ends, the last line with or without a final
 * newline; non-ASCII characters as runs of high bytes, invalid ones too; V8's `u`-mode quirk
 * of `^`/`$` between the halves of an astral character; when a plan gives none; and a cache
 * too small to hold the automaton, which flushes, then gives up and passes every line.
 */
import { describe, expect, it } from "vitest";
import { compilePattern } from "../../src/search/grep/pattern.js";
import { CharSets } from "../../src/search/grep/regex/charset.js";
import { type LinePrefilter, planRegex } from "../../src/search/grep/regex/index.js";
import { parseRegex } from "../../src/search/grep/regex/parse.js";
import { linePrefilter } from "../../src/search/grep/regex/prefilter.js";

function prefilterOf(pattern: string, flags = ""): LinePrefilter {
  const prefilter = planRegex(pattern, {
    fixedStrings: false,
    ignoreCase: flags.includes("i"),
    unicode: flags.includes("u"),
    multiline: false,
  }).prefilter;
  if (prefilter === undefined) throw new Error(`no prefilter for ${pattern}`);
  return prefilter;
}

/** The numbers (1-based) of the lines a consumer is sent to, walking the text. */
function candidateLines(prefilter: LinePrefilter, text: Buffer, from = 0): number[] {
  const numbers: number[] = [];
  let number = 1;
  let counted = 0;
  for (let at = from; at < text.length; ) {
    const found = prefilter.nextCandidateLine(text, at, text.length);
    if (found === -1) break;
    for (; counted < found; counted++) if (text[counted] === 10) number++;
    numbers.push(number);
    const end = text.indexOf(10, found);
    if (end === -1) break;
    at = end + 1;
  }
  return numbers;
}

const lines = (...text: string[]) => Buffer.from(text.join("\n"));

describe("line prefilter", () => {
  it("finds the lines that may match, and -1 past the last", () => {
    const text = lines("int x;", "alpha beta gamma delta epsil", "short", "one two", "");
    const prefilter = prefilterOf("\\w{5}\\s+\\w{4}\\s+\\w{5}");
    expect(candidateLines(prefilter, text)).toEqual([2]);
    expect(prefilter.nextCandidateLine(text, 0, text.length)).toBe(7);
    expect(prefilter.nextCandidateLine(text, text.indexOf("short"), text.length)).toBe(-1);
    expect(prefilter.nextCandidateLine(text, text.length, text.length)).toBe(-1);
  });

  it("treats an alternation of literals like Aho-Corasick", () => {
    const text = lines("a PME_TURN_OFF", "ERR_SY", "xCFG_BME_EVTx", "LINK_REQ_RS", "ERR_SYS");
    expect(
      candidateLines(prefilterOf("ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT"), text),
    ).toEqual([1, 3, 5]);
    expect(
      candidateLines(prefilterOf("err_sys|pme_turn_off|link_req_rst|cfg_bme_evt", "i"), text),
    ).toEqual([1, 3, 5]);
  });

  it("anchors ^ and $ at each line's ends, the last line with or without a newline", () => {
    const text = lines("ab", "xab", "abx", "", "ab");
    expect(candidateLines(prefilterOf("^ab|^$"), text)).toEqual([1, 3, 4, 5]);
    expect(candidateLines(prefilterOf("ab$"), text)).toEqual([1, 2, 5]);
    expect(candidateLines(prefilterOf("ab$"), Buffer.concat([text, Buffer.from("\n")]))).toEqual([
      1, 2, 5,
    ]);
    // No line after a final newline, and an empty line's start is a line start.
    expect(candidateLines(prefilterOf("^$"), Buffer.from("a\n\nb\n"))).toEqual([2]);
  });

  it("takes `end` as a line's end", () => {
    const text = Buffer.from("xxab\nab");
    expect(prefilterOf("ab$").nextCandidateLine(text, 0, 3)).toBe(-1);
    expect(prefilterOf("ab$").nextCandidateLine(text, 0, 4)).toBe(0);
  });

  it("lets non-ASCII characters be 1 to 4 high bytes, invalid ones included", () => {
    const greek = prefilterOf("\\p{Script=Greek}", "u");
    const text = Buffer.concat([
      Buffer.from("plain\nλ\n"),
      Buffer.from([0x61, 0xff, 0x0a]),
      Buffer.from("ascii only\n"),
    ]);
    expect(candidateLines(greek, text)).toEqual([2, 3]);
    // `.` is one character: 😀 is one with `u`, two code units without, each 1 to 4 bytes.
    const oneChar = lines("😀", "ab", "é", "a");
    expect(candidateLines(prefilterOf("^.$", "u"), oneChar)).toEqual([1, 3, 4]);
    expect(candidateLines(prefilterOf("^..$"), oneChar)).toEqual([1, 2, 3]);
  });

  it("passes lines with an astral character for `u` patterns that match an empty line", () => {
    // V8's classes never match half a surrogate pair, so compilePattern's `^` and `$`
    // (lookarounds on [^\n]) both hold between the halves.
    const compiled = compilePattern("^$", {
      fixedStrings: false,
      ignoreCase: false,
      smartCase: false,
      word: false,
      multiline: false,
    });
    expect(new RegExp(compiled.source, "u").test("😀")).toBe(true);
    expect(candidateLines(prefilterOf("^$", "u"), lines("😀", "é", "", "x"))).toEqual([1, 3]);
    expect(candidateLines(prefilterOf("^$"), lines("😀", "é", "", "x"))).toEqual([3]);
  });

  it("is not given when it could not reject a line, or a literal does better", () => {
    const none = (pattern: string, multiline = false) =>
      planRegex(pattern, { fixedStrings: false, ignoreCase: false, unicode: false, multiline })
        .prefilter;
    expect(none("a*")).toBeUndefined();
    expect(none("^")).toBeUndefined();
    expect(none("x?|y")).toBeUndefined();
    expect(none("x|y")).toBeDefined();
    expect(none("(?:)")).toBeUndefined();
    expect(none("\\w{5}\\s+\\w{5}", true)).toBeUndefined();
    expect(none("PM_RESUME")).toBeUndefined();
    expect(none("[]")).toBeUndefined();
    expect(none(Array.from({ length: 3000 }, (_, i) => `w${i}x|y${i}z`).join("|"))).toBeUndefined();
  });

  it("flushes a cache too small for the automaton, then gives up and passes every line", () => {
    const pattern = "(a|b)*a(a|b){12}";
    const options = { ignoreCase: false, unicode: false, multiline: false };
    const tiny = linePrefilter(parseRegex(pattern, false), new CharSets(options), false, {
      maxStates: 8,
      maxNodes: 20_000,
    }) as LinePrefilter;
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const text = Buffer.from(
      Array.from({ length: 2000 }, () =>
        Array.from({ length: 20 }, () => (random() < 0.5 ? "a" : "b")).join(""),
      ).join("\nc\n"),
    );
    const regex = new RegExp(pattern);
    const matching = text
      .toString()
      .split("\n")
      .flatMap((line, i) => (regex.test(line) ? [i + 1] : []));
    const found = candidateLines(tiny, text);
    for (const line of matching) expect(found).toContain(line);
    // Given up: every line from there on is a candidate, "c" lines too.
    expect(found.length).toBeGreaterThan(matching.length);
    const late = text.lastIndexOf("\nc\n") + 1;
    expect(tiny.nextCandidateLine(text, late, text.length)).toBe(late);
  });
});

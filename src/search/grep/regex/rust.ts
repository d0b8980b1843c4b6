/**
 * ripgrep's regex syntax (Rust's `regex` crate, as rg 13 reads it) translated into the
 * JavaScript regex that compilePattern runs: the same matches, or an `INVALID_PATTERN` error,
 * never a silent difference. Models write grep patterns for rg (Claude Code's Grep passes them
 * to it); read as JavaScript, `[[:alpha:]]`, `\pL`, `\x{41}` or `foo\z` silently match nothing,
 * and `\w`, `\d`, `\b` are ASCII where rg's are Unicode. Pure; depends on `rust/`: its parser
 * (`parser`, with `classes` for the named classes and `errors` for rg's messages) reads the
 * pattern into a tree (`tree`), and its writer (`writer`, with `folding`) writes the tree out.
 *
 * Written by hand: the parsers that exist read JavaScript's syntax (`regjsparser`, `regexpp`) or
 * RE2's (`re2js`, whose engine runs ~5 MB/s here against V8's ~40 MB/s and more); Rust's
 * differs from both (set operations in classes, `(?x)`, loose property names, which escapes
 * are errors), and rg's behaviour is the oracle (test/grep/rust-syntax.test.ts runs it).
 *
 * The output is compilePattern's dialect of JavaScript, always with the `u` flag: `^` and `$`
 * are a line's ends and `.` any character but `\n` (compilePattern rewrites them), so the
 * literal analysis reads it as it reads any pattern. What does not translate:
 * - `i` for part of a pattern (`a(?i)b`, `(?-i)` under `-i`): V8 in Node 20 has no scoped
 *   flags, so the part is spelled out (each letter as the class of its case variants, each
 *   class closed under case folding); the whole pattern ignoring case gets the `i` flag.
 * - `(?-u)`: ASCII `\w`, `\d`, `\s`, `\b`, as rg. Its `.` and negated classes match one byte
 *   in rg, one character here (they differ on non-ASCII text), so they are refused, as are
 *   bytes above `\x7F`, which only a byte search can find.
 */

import { literalsAndClasses } from "./rust/folding.js";
import { Parser } from "./rust/parser.js";
import type { Flags } from "./rust/tree.js";
import { write } from "./rust/writer.js";

export { lineBreakError } from "./rust/errors.js";
export { UNICODE_WORD } from "./rust/writer.js";

export interface RustOptions {
  /** `-i`: the whole pattern ignores case (unless a flag group says otherwise). */
  readonly ignoreCase: boolean;
  /** `-S`: ignore case unless the pattern has an upper-case literal character. */
  readonly smartCase: boolean;
  /** `-U`: the text is the whole file, not one line (`\A`, `\z`, `(?s)`, `(?-m)` matter). */
  readonly multiline: boolean;
}

export interface RustTranslation {
  /** compilePattern's dialect: `^`/`$` a line's ends, `.` any character but `\n`; flag `u`. */
  readonly source: string;
  /** The translation needs the `i` flag (every part of the pattern ignores case). */
  readonly ignoreCase: boolean;
}

/** Parses `pattern` as rg does and writes it as compilePattern's JavaScript. */
export function translateRust(pattern: string, options: RustOptions): RustTranslation {
  const base: Flags = { i: false, m: true, s: false, U: false, u: true, x: false };
  // Smart case needs the literals read first; the flag is known without them otherwise.
  let ignoreCase = options.ignoreCase;
  if (!ignoreCase && options.smartCase) {
    const probe = new Parser(pattern, !options.multiline);
    probe.parse({ ...base });
    ignoreCase = !probe.upperCase;
  }
  const root = new Parser(pattern, !options.multiline).parse({ ...base, i: ignoreCase });
  const counts = { folded: 0, plain: 0 };
  literalsAndClasses(root, counts);
  // The `i` flag when the whole pattern ignores case; spelled out where only part of it does.
  const whole = counts.folded > 0 && counts.plain === 0;
  const byHand = counts.folded > 0 && counts.plain > 0;
  return {
    source: write(root, { byHand, multiline: options.multiline }),
    ignoreCase: whole,
  };
}

/**
 * A grep query, compiled: the JavaScript RegExp that finds matches, and the literal that every
 * match must contain, searched first on the raw bytes so that files and lines without it are
 * never decoded (V8's regex engine backtracks; the literal keeps it off long lines that cannot
 * match). Pure; depends on `errors` and `regex/rust` (rg's syntax).
 */
import { FreshfsError, quoted } from "../../errors.js";
import { lineBreakError, translateRust, UNICODE_WORD } from "./regex/rust.js";

export interface PatternOptions {
  /** The pattern is a literal string, not a regex (`-F`). */
  readonly fixedStrings: boolean;
  /** Case-insensitive (`-i`). */
  readonly ignoreCase: boolean;
  /** Case-insensitive unless the pattern has an upper-case letter (`-S`). */
  readonly smartCase: boolean;
  /** Matches must be whole words (`-w`). */
  readonly word: boolean;
  /** Matches may span lines (`-U`). */
  readonly multiline: boolean;
  /** Matches must be whole lines (`-x`; it overrides `word`). */
  readonly lineRegexp?: boolean | undefined;
  /**
   * The regex syntax: rg's (Rust's `regex` crate, the default), or JavaScript's, an extension
   * with lookaround and backreferences (as rg's `-P` runs PCRE2).
   */
  readonly syntax?: "rust" | "javascript" | undefined;
}

export interface CompiledPattern {
  /** Source and flags, for the worker to rebuild the RegExp (always global, `^`/`$` per line). */
  readonly source: string;
  readonly flags: string;
  /**
   * Text every match contains, case as written (lower-cased when matching ignores case), or
   * undefined when none can be found.
   */
  readonly literal: string | undefined;
  /**
   * The literal is the whole pattern: a line matches exactly when it contains the literal, and
   * the regex need not run to say so.
   */
  readonly exact: boolean;
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
  /** `planned` is a literal string, not a regex (one `-F` pattern). */
  readonly fixedStrings: boolean;
  /**
   * The pattern as this module's JavaScript dialect (`^`/`$` a line's ends, `.` any character
   * but `\n`), before those are rewritten: what the literal analysis (`planRegex`) reads.
   */
  readonly planned: string;
  /**
   * The folded literal holds `k` or `s`, which `iu` also matches as U+212A and U+017F: a text
   * holding either (`FOLDED_ASIDE`) is searched without the literal.
   */
  readonly foldsAside: boolean;
  /**
   * The query as rg's syntax gives it (undefined for `syntax: "javascript"` and multiline): the
   * native search core compiles it with Rust's regex unchanged, rather than this translation.
   */
  readonly rust?: RustQuery | undefined;
}

/** A query in rg's own terms: its patterns as given, and the flags rg's matcher is built with. */
export interface RustQuery {
  readonly patterns: readonly string[];
  readonly fixedStrings: boolean;
  readonly ignoreCase: boolean;
  readonly smartCase: boolean;
  readonly word: boolean;
  readonly lineRegexp: boolean;
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/g;

function escapeRegex(text: string): string {
  return text.replace(REGEX_SPECIAL, "\\$&");
}

/**
 * rg's smart case: an upper-case letter in the pattern, not counting escapes such as `\W`, `\S`,
 * `\D` (but counting the characters `\x46` or `\u0046` stand for).
 */
function hasUpperCase(pattern: string, fixed: boolean): boolean {
  for (let i = 0; i < pattern.length; ) {
    let c = pattern[i] as string;
    if (!fixed && c === "\\") {
      const atom = atomAt(pattern, i);
      i = atom.end;
      if (atom.char === undefined) continue;
      c = atom.char;
    } else {
      i++;
    }
    if (c !== c.toLowerCase()) return true;
  }
  return false;
}

/** Escapes that stand for one literal character. */
const LITERAL_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", f: "\f", v: "\v" };

/**
 * One atom of a regex source at `i`: its end, and the character it stands for when it is a
 * single literal character (undefined for classes, groups, assertions, backreferences...).
 */
function atomAt(source: string, i: number): { end: number; char: string | undefined } {
  const c = source[i] as string;
  if (c === "\\") {
    const e = source[i + 1];
    if (e === undefined) return { end: i + 1, char: undefined };
    if (LITERAL_ESCAPES[e] !== undefined) return { end: i + 2, char: LITERAL_ESCAPES[e] };
    const hex = (digits: number) => {
      const text = source.slice(i + 2, i + 2 + digits);
      return new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(text)
        ? String.fromCharCode(Number.parseInt(text, 16))
        : undefined;
    };
    if (e === "x") {
      const char = hex(2);
      return char === undefined ? { end: i + 2, char: undefined } : { end: i + 4, char };
    }
    if (e === "u") {
      if (source[i + 2] === "{") return { end: skipPast(source, i + 2, "}"), char: undefined };
      const char = hex(4);
      return char === undefined ? { end: i + 2, char: undefined } : { end: i + 6, char };
    }
    if (e === "c") return { end: i + 3, char: undefined };
    if (e === "k")
      return { end: source[i + 2] === "<" ? skipPast(source, i + 2, ">") : i + 2, char: undefined };
    if (e === "p" || e === "P") {
      return { end: source[i + 2] === "{" ? skipPast(source, i + 2, "}") : i + 2, char: undefined };
    }
    if (/[0-9]/.test(e)) {
      let end = i + 2;
      while (end < source.length && /[0-9]/.test(source[end] as string)) end++;
      return { end, char: undefined };
    }
    // Escaped punctuation is itself; any other letter is a class, an assertion or unknown.
    return { end: i + 2, char: /[A-Za-z0-9_]/.test(e) ? undefined : e };
  }
  if (c === "[") return { end: classEnd(source, i), char: undefined };
  if (c === "(") return { end: groupEnd(source, i), char: undefined };
  if (c === "{" && quantifierAt(source, i) === undefined) return { end: i + 1, char: "{" };
  if (/[.^$*+?{}|)]/.test(c)) return { end: i + 1, char: undefined };
  return { end: i + 1, char: c };
}

function skipPast(source: string, from: number, close: string): number {
  const at = source.indexOf(close, from);
  return at === -1 ? source.length : at + 1;
}

/** The index after the class starting at `i` (`[`), escapes and all. */
function classEnd(source: string, i: number): number {
  let j = i + 1;
  while (j < source.length && source[j] !== "]") j += source[j] === "\\" ? 2 : 1;
  return j + 1;
}

/** The index after the group starting at `i` (`(`), over nested groups, classes and escapes. */
function groupEnd(source: string, i: number): number {
  let depth = 0;
  for (let j = i; j < source.length; ) {
    const c = source[j];
    if (c === "\\") j += 2;
    else if (c === "[") j = classEnd(source, j);
    else {
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return j + 1;
      j++;
    }
  }
  return source.length;
}

/**
 * A quantifier at `i` (`?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`): its end, its least count, and how
 * many copies of its atom a compiler that copies counted repetitions makes (the larger bound of
 * `{n,m}`; 1 for the others).
 */
function quantifierAt(
  source: string,
  i: number,
): { end: number; least: number; copies: number } | undefined {
  const c = source[i];
  let end: number;
  let least: number;
  let copies = 1;
  if (c === "?" || c === "*") [end, least] = [i + 1, 0];
  else if (c === "+") [end, least] = [i + 1, 1];
  else if (c === "{") {
    const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i));
    if (!m) return undefined;
    [end, least] = [i + m[0].length, Number(m[1])];
    copies = Math.max(least, Number(m[2] || 0));
  } else return undefined;
  if (source[end] === "?") end++; // lazy
  return { end, least, copies };
}

/**
 * How many copies of its atoms a pattern's counted repetitions make: the sum over atoms of the
 * product of the bounds around each, nested groups multiplied. An estimate read from the source
 * (an escape or a class is one atom), for what Rust's regex would compile (`search/grep/native`).
 */
export function repeated(source: string): number {
  /** Per open group: the weight of its contents so far. */
  const groups: number[] = [0];
  const add = (weight: number) => {
    groups[groups.length - 1] = (groups.at(-1) as number) + weight;
  };
  let last = 0;
  for (let i = 0; i < source.length; ) {
    const c = source[i] as string;
    const quantifier = c === "{" ? quantifierAt(source, i) : undefined;
    if (quantifier) {
      add(last * (quantifier.copies - 1));
      last *= quantifier.copies;
      i = quantifier.end;
    } else if (c === "(") {
      groups.push(0);
      last = 0;
      i++;
    } else if (c === ")") {
      last = groups.length > 1 ? (groups.pop() as number) : 0;
      add(last);
      i++;
    } else {
      i = c === "\\" ? i + 2 : c === "[" ? classEnd(source, i) : i + 1;
      last = 1;
      add(1);
    }
  }
  while (groups.length > 1) {
    const inner = groups.pop() as number;
    add(inner);
  }
  return groups[0] as number;
}

/** Whether `source` has an alternation outside any group (then no single literal is required). */
function hasTopLevelAlternation(source: string): boolean {
  for (let i = 0; i < source.length; ) {
    const c = source[i];
    if (c === "|") return true;
    if (c === "\\") i += 2;
    else if (c === "[") i = classEnd(source, i);
    else if (c === "(") i = groupEnd(source, i);
    else i++;
  }
  return false;
}

/**
 * ASCII punctuation from most to least frequent in source code (measured over 51k JavaScript,
 * TypeScript, Python, Rust, Go, Java, C and CSS files of npm packages). Letters, digits and white
 * space are too common for one of them to narrow a search; most punctuation is rare enough, and
 * `Buffer.indexOf` finds one byte at memory speed.
 */
const PUNCTUATION_BY_FREQUENCY = `":.,*}{/();=-_'?|\`[]>&@!<\\+$^#%~`;

/** How rare one character is as a prefilter: higher is rarer; 0 for one not worth using. */
function rarity(char: string): number {
  if (char.charCodeAt(0) > 0x7f) return PUNCTUATION_BY_FREQUENCY.length + 1;
  return PUNCTUATION_BY_FREQUENCY.indexOf(char) + 1;
}

/** Whether a one-character literal is rare enough to search lines by. */
export function worthSearchingFor(literal: string): boolean {
  return literal.length > 1 || rarity(literal) > 0;
}

/**
 * The longest run of characters that any match of `source` must contain, read off the regex's
 * top-level sequence: literal characters join a run; anything optional, a class, a group, an
 * assertion or a backreference ends it; a top-level alternation means there is none.
 * Conservative: when in doubt, no literal (every line is then a candidate: correct, slower).
 */
export function requiredLiteral(source: string): string | undefined {
  if (hasTopLevelAlternation(source)) return undefined;
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run !== "") runs.push(run);
    run = "";
  };
  for (let i = 0; i < source.length; ) {
    const atom = atomAt(source, i);
    const quantifier = quantifierAt(source, atom.end);
    if (atom.char === undefined || (quantifier && quantifier.least === 0)) {
      end();
    } else {
      run += atom.char;
      if (quantifier) end(); // required, but how many times is unknown
    }
    i = quantifier ? quantifier.end : Math.max(atom.end, i + 1);
  }
  end();
  let best: string | undefined;
  for (const candidate of runs) {
    if (!best || candidate.length > best.length) best = candidate;
    else if (candidate.length === 1 && best.length === 1 && rarity(candidate) > rarity(best)) {
      best = candidate;
    }
  }
  return best;
}

/**
 * ripgrep's line semantics in a JavaScript regex: `^` and `$` at `\n` (and the text's ends)
 * only, where JavaScript's `m` flag also stops at `\r`, U+2028 and U+2029 (so `foo$` would
 * match in a CRLF file, where rg does not); and `.` matching anything but `\n`, where
 * JavaScript's also refuses `\r`, U+2028 and U+2029. Escapes and character classes are kept.
 */
function withLineSemantics(source: string, dotAll = false): string {
  let out = "";
  let inClass = false;
  for (let at = 0; at < source.length; at++) {
    const char = source[at] as string;
    if (char === "\\") {
      out += source.slice(at, at + 2);
      at++;
    } else if (inClass) {
      if (char === "]") inClass = false;
      out += char;
    } else if (char === "[") {
      inClass = true;
      out += char;
    } else if (char === "^") out += "(?<![^\\n])";
    else if (char === "$") out += "(?![^\\n])";
    else if (char === ".") out += dotAll ? "[\\s\\S]" : "[^\\n]";
    else out += char;
  }
  return out;
}

/** rg's metacharacters (the regex crate's `escape`): escaped, each is itself. */
const RUST_SPECIAL = /[\\.+*?()|[\]{}^$#&\-~]/g;

/** A never-matching regex: the answer to no patterns at all (`-f` of an empty file), as rg's. */
const NOTHING: CompiledPattern = {
  source: "(?!)",
  flags: "gu",
  literal: undefined,
  exact: false,
  ignoreCase: false,
  multiline: false,
  planned: "(?!)",
  foldsAside: false,
  fixedStrings: false,
};

/**
 * Compiles a grep query (several patterns: a line matching any of them matches, as rg's `-e`
 * and `-f`); throws `INVALID_PATTERN` with the engine's reason.
 */
export function compilePattern(
  pattern: string | readonly string[],
  options: PatternOptions,
): CompiledPattern {
  const patterns = typeof pattern === "string" ? [pattern] : pattern;
  if (!Array.isArray(patterns) || patterns.some((one) => typeof one !== "string")) {
    throw new FreshfsError(
      "INVALID_PATTERN",
      "The search pattern must be a string or a list of strings.",
    );
  }
  const compiled = compileAll(patterns, options);
  if ((options.syntax ?? "rust") !== "rust" || options.multiline) return compiled;
  const rust: RustQuery = {
    patterns,
    fixedStrings: options.fixedStrings,
    ignoreCase: options.ignoreCase,
    smartCase: options.smartCase,
    word: options.word,
    lineRegexp: options.lineRegexp ?? false,
  };
  return { ...compiled, rust };
}

function compileAll(patterns: readonly string[], options: PatternOptions): CompiledPattern {
  if (patterns.length === 0) return { ...NOTHING, multiline: options.multiline };
  if (patterns.length === 1 && !options.lineRegexp) {
    return compileOne(patterns[0] as string, options);
  }
  // As rg joins them: one alternation of the patterns, each in a group of its own (so that
  // inline flags stay within it), whole lines for `-x`; literals escaped into the syntax.
  const rust = (options.syntax ?? "rust") === "rust";
  const own = patterns.map((one) =>
    options.fixedStrings ? one.replace(rust ? RUST_SPECIAL : REGEX_SPECIAL, "\\$&") : one,
  );
  if (!options.multiline) {
    for (const [at, one] of patterns.entries()) {
      if (one.includes("\n") || (!options.fixedStrings && /(^|[^\\])(\\\\)*\\n/.test(one))) {
        throw lineBreakError(own[at] as string);
      }
    }
  }
  const joined = own.length === 1 ? (own[0] as string) : own.map((one) => `(?:${one})`).join("|");
  return compileOne(options.lineRegexp ? `^(?:${joined})$` : joined, {
    ...options,
    fixedStrings: false,
    word: options.word && !options.lineRegexp,
  });
}

/**
 * JavaScript's syntax has no inline flags, where PCRE2's (rg's `-P`) has: a pattern that
 * begins with `(?i)`, `(?s)`, `(?m)` or several of them gets them as the regex's own.
 */
function leadingFlags(pattern: string): { pattern: string; i: boolean; s: boolean } {
  const m = /^\(\?([ims]+)\)/.exec(pattern);
  if (!m) return { pattern, i: false, s: false };
  const flags = m[1] as string;
  return { pattern: pattern.slice(m[0].length), i: flags.includes("i"), s: flags.includes("s") };
}

function compileOne(given: string, options: PatternOptions): CompiledPattern {
  const javascript = (options.syntax ?? "rust") === "javascript" && !options.fixedStrings;
  const inline = javascript ? leadingFlags(given) : { pattern: given, i: false, s: false };
  const pattern = inline.pattern;
  // Lines never hold a line break: such a pattern could only ever fail, silently (rg refuses it).
  if (
    !options.multiline &&
    (pattern.includes("\n") || (!options.fixedStrings && /(^|[^\\])(\\\\)*\\n/.test(pattern)))
  ) {
    throw lineBreakError(pattern);
  }
  // rg's semantics (Unicode folding and word characters), for its regexes and its -F alike.
  const rg = (options.syntax ?? "rust") === "rust";
  const rust = rg && !options.fixedStrings;
  let planned = pattern;
  let ignoreCase: boolean;
  if (rust) {
    const translated = translateRust(pattern, options);
    planned = translated.source;
    ignoreCase = translated.ignoreCase;
  } else {
    ignoreCase =
      inline.i ||
      options.ignoreCase ||
      (options.smartCase && !hasUpperCase(pattern, options.fixedStrings));
  }
  const base = options.fixedStrings ? escapeRegex(pattern) : withLineSemantics(planned, inline.s);
  let source = base;
  let unicode = rg || /\\[pP]\{|\\u\{/.test(base);
  if (options.word && rg) {
    // A word is bounded by what is not a word character (rg's Unicode `\w`), or by the line's
    // ends (rg's -w), written with lookarounds so the match itself is the word.
    source = `(?<![${UNICODE_WORD}])(?:${base})(?![${UNICODE_WORD}])`;
  } else if (options.word) {
    // The same in JavaScript syntax, with Unicode letters where the pattern allows the `u`
    // flag; else ASCII ones.
    source = `(?<![\\p{L}\\p{N}_])(?:${base})(?![\\p{L}\\p{N}_])`;
    unicode = true;
    try {
      new RegExp(source, "gu");
    } catch {
      source = `(?<!\\w)(?:${base})(?!\\w)`;
      unicode = /\\[pP]\{|\\u\{/.test(base);
    }
  }
  const flags = `g${ignoreCase ? "i" : ""}${unicode ? "u" : ""}`;
  try {
    new RegExp(source, flags);
  } catch (error) {
    const reason =
      error instanceof Error
        ? error.message.replace(/^Invalid regular expression: (\/.*\/[a-z]*: )?/s, "")
        : String(error);
    throw new FreshfsError(
      "INVALID_PATTERN",
      rust
        ? `The pattern ${quoted(pattern)} is valid for rg, but JavaScript's regex engine cannot run it as translated: ${reason}.`
        : `Invalid regular expression ${quoted(pattern)}: ${reason}. Patterns use JavaScript regex syntax here; pass fixedStrings (-F) to search for the text as it is.`,
    );
  }
  const found = options.fixedStrings ? pattern : requiredLiteral(planned);
  // A literal is worth searching for from 2 characters, or a rare one; with case folding, only
  // ASCII (folded by lower-casing bytes read as Latin-1).
  let literal = found !== undefined && worthSearchingFor(found) ? found : undefined;
  if (literal !== undefined && ignoreCase) {
    literal = /^[\x20-\x7e\t]*$/.test(literal) ? literal.toLowerCase() : undefined;
  }
  const foldsAside = ignoreCase && unicode && literal !== undefined && /[ks]/.test(literal);
  // A pattern of literal characters only (as written, or escaped), searched without word
  // bounds, within lines, and folded (if at all) as the ASCII folding above does.
  // A text holding U+212A or U+017F (where `iu` folds) is searched without the literal.
  const exact =
    literal !== undefined &&
    found !== undefined &&
    (found === planned || escapeRegex(found) === planned || options.fixedStrings === true) &&
    !options.word &&
    !options.multiline &&
    !found.includes("\n") &&
    !found.includes("\r") &&
    (!unicode || !/[^\x20-\x7e\t]/.test(found));
  return {
    source,
    flags,
    literal,
    exact,
    ignoreCase,
    multiline: options.multiline,
    fixedStrings: options.fixedStrings,
    planned,
    foldsAside,
  };
}

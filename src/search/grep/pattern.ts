/**
 * A grep query, compiled: the JavaScript RegExp that finds matches, and the literal that every
 * match must contain, searched first on the raw bytes so that files and lines without it are
 * never decoded (V8's regex engine backtracks; the literal keeps it off long lines that cannot
 * match). Pure; depends on `errors`.
 */
import { FreshfsError } from "../../errors.js";

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
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/g;

function escapeRegex(text: string): string {
  return text.replace(REGEX_SPECIAL, "\\$&");
}

/** rg's smart case: an upper-case letter that is not part of an escape (`\W`, `\S`, `\D`). */
function hasUpperCase(pattern: string, fixed: boolean): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (!fixed && c === "\\") {
      i++;
      continue;
    }
    if (c !== c.toLowerCase()) return true;
  }
  return false;
}

/** Escapes that stand for one literal character. */
const LITERAL_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  f: "\f",
  v: "\v",
  "0": "\0",
};

/**
 * The longest run of characters that any match of `source` must contain, read off the regex's
 * top-level sequence: literal characters and escaped punctuation join a run; anything optional,
 * repeated zero times, grouped, a class or an alternation ends it. Conservative: when in doubt,
 * no literal (then every line is a candidate, which is correct, only slower).
 */
export function requiredLiteral(source: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return undefined; // any branch may match
  }
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run !== "") runs.push(run);
    run = "";
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i] as string;
    let atom: string | undefined;
    let next = i + 1;
    if (c === "\\") {
      const e = source[i + 1];
      next = i + 2;
      if (e === undefined) return undefined;
      if (LITERAL_ESCAPES[e] !== undefined) atom = LITERAL_ESCAPES[e];
      else if (/[^A-Za-z0-9]/.test(e)) atom = e;
      else if (e === "x" && /^[0-9a-fA-F]{2}$/.test(source.slice(i + 2, i + 4))) {
        atom = String.fromCharCode(Number.parseInt(source.slice(i + 2, i + 4), 16));
        next = i + 4;
      }
    } else if (c === "[") {
      let j = i + 1;
      for (; j < source.length && source[j] !== "]"; j++) if (source[j] === "\\") j++;
      next = j + 1;
    } else if (c === "(") {
      let level = 0;
      let j = i;
      for (; j < source.length; j++) {
        if (source[j] === "\\") j++;
        else if (source[j] === "(") level++;
        else if (source[j] === ")" && --level === 0) break;
      }
      next = j + 1;
    } else if (!/[.^$*+?{}|)]/.test(c)) {
      atom = c;
    }
    // What follows the atom decides whether it is required, and whether the run goes on.
    const q = source[next];
    const optional = q === "?" || q === "*" || (q === "{" && /^\{0[,}]/.test(source.slice(next)));
    const repeated = q === "+" || q === "{";
    if (atom === undefined || optional) {
      end();
    } else if (repeated) {
      run += atom;
      end();
    } else {
      run += atom;
    }
    i = next;
    if (q === "?" || q === "*" || q === "+") {
      i++;
      if (source[i] === "?") i++; // lazy
    } else if (q === "{") {
      const close = source.indexOf("}", next);
      i = close === -1 ? next + 1 : close + 1;
      if (source[i] === "?") i++;
    }
  }
  end();
  let best: string | undefined;
  for (const candidate of runs) if (!best || candidate.length > best.length) best = candidate;
  return best;
}

/** Compiles a grep query; throws `INVALID_PATTERN` with the engine's reason. */
export function compilePattern(pattern: string, options: PatternOptions): CompiledPattern {
  if (typeof pattern !== "string" || pattern === "") {
    throw new FreshfsError("INVALID_PATTERN", "The search pattern is empty.");
  }
  const ignoreCase =
    options.ignoreCase || (options.smartCase && !hasUpperCase(pattern, options.fixedStrings));
  let source = options.fixedStrings ? escapeRegex(pattern) : pattern;
  // A word is bounded by something that is not a word character, or by the line's ends
  // (rg's -w), written with lookarounds so the match itself is the word.
  if (options.word) source = `(?<![\\p{L}\\p{N}_])(?:${source})(?![\\p{L}\\p{N}_])`;
  const unicode = options.word || /\\[pP]\{|\\u\{/.test(source);
  const flags = `gm${ignoreCase ? "i" : ""}${unicode ? "u" : ""}`;
  try {
    new RegExp(source, flags);
  } catch (error) {
    const reason =
      error instanceof Error
        ? error.message.replace(/^Invalid regular expression: /, "")
        : String(error);
    throw new FreshfsError(
      "INVALID_PATTERN",
      `Invalid regular expression ${JSON.stringify(pattern)}: ${reason}. Patterns use JavaScript regex syntax; pass fixedStrings (-F) to search for the text as it is.`,
    );
  }
  const found = options.fixedStrings ? pattern : requiredLiteral(pattern);
  // A literal is worth searching for from 2 characters; with case folding, only ASCII (folded
  // by lower-casing bytes read as Latin-1).
  let literal = found !== undefined && found.length >= 2 ? found : undefined;
  if (literal !== undefined && ignoreCase) {
    literal = /^[\x20-\x7e\t]*$/.test(literal) ? literal.toLowerCase() : undefined;
  }
  return { source, flags, literal, ignoreCase, multiline: options.multiline };
}

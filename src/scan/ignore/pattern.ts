/**
 * One ignore file, compiled: pattern text in, `match(path, isDir)` out, with provenance. Pure:
 * no file system. Depends on nothing.
 *
 * Written by hand rather than taken from a glob library because gitignore is not glob: git's
 * wildmatch has its own rules for `**`, bracket expressions, escapes, and `?` matching one
 * byte of UTF-8, and the answer must name the file, line and pattern that decided it. The
 * table in test/ignore-conformance.test.ts checks every rule here against `git check-ignore`.
 *
 * Paths are matched in "byte form": each UTF-8 byte as one character (a Latin-1 string), so
 * `?` and bracket expressions see bytes as git does. ASCII paths are their own byte form.
 */

/** One line of an ignore file that can match. */
export interface IgnoreRule {
  /** The ignore file the rule came from (absolute path, or a label such as "core.excludesFile"). */
  readonly source: string;
  /** 1-based line number in that file. */
  readonly line: number;
  /** The pattern as written, after git's trimming (trailing spaces, CR). */
  readonly pattern: string;
  /** `!pattern`: a match re-includes the path. */
  readonly negated: boolean;
  /** `pattern/`: matches directories only. */
  readonly dirOnly: boolean;
  /** No `/` but a trailing one: matched against the last path component at any depth. */
  readonly basenameOnly: boolean;
}

/** A line that can never match (git's wildmatch aborts on it), reported as a warning. */
export interface PatternProblem {
  readonly source: string;
  readonly line: number;
  readonly pattern: string;
  readonly message: string;
}

interface CompiledRule extends IgnoreRule {
  readonly index: number;
  /** Exact basename (byte form; lower-cased ASCII when case-folding), when the pattern is literal. */
  readonly literal: string | undefined;
  /** For `*literal` basename patterns (git's ENDSWITH): the literal, tested with `endsWith`. */
  readonly suffix: string | undefined;
  readonly regex: RegExp | undefined;
}

export interface CompileOptions {
  /** `core.ignoreCase`: fold ASCII case, as git does. @default false */
  ignoreCase?: boolean | undefined;
}

export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** The byte form of a path or pattern (see the module comment). */
export function byteForm(text: string): string {
  return isAscii(text) ? text : Buffer.from(text, "utf8").toString("latin1");
}

/** Text again from its byte form. */
export function fromByteForm(bytes: string): string {
  return isAscii(bytes) ? bytes : Buffer.from(bytes, "latin1").toString("utf8");
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

const GLOB_SPECIAL = /[*?[\\]/;
const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/;

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

/** A literal character, both cases when folding ASCII. */
function literalChar(c: string, ignoreCase: boolean): string {
  if (ignoreCase && /[A-Za-z]/.test(c)) return `[${c.toLowerCase()}${c.toUpperCase()}]`;
  return escapeChar(c);
}

/**
 * A single character inside a bracket expression. Folding, wildmatch lowers the text but not
 * the member: a lower-case letter matches both cases, an upper-case one nothing.
 */
function classMember(c: string, ignoreCase: boolean): string {
  if (!ignoreCase) return escapeChar(c);
  if (/[A-Z]/.test(c)) return "";
  return /[a-z]/.test(c) ? `${c}${c.toUpperCase()}` : escapeChar(c);
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: "a-zA-Z0-9",
  alpha: "a-zA-Z",
  blank: " \\t",
  cntrl: "\\x00-\\x1f\\x7f",
  digit: "0-9",
  graph: "\\x21-\\x7e",
  lower: "a-z",
  print: "\\x20-\\x7e",
  punct: "!-\\/:-@\\[-`{-~",
  space: " \\t\\n\\x0b\\f\\r",
  upper: "A-Z",
  xdigit: "0-9a-fA-F",
};

class Abort extends Error {}

/**
 * Translates a bracket expression starting at `body[start]` (`[`), following wildmatch:
 * `!` or `^` negates, a leading `]` is literal, `\` escapes, `a-z` ranges by byte, `[:class:]`,
 * and never a `/`. Returns the regex and the index after the closing `]`.
 */
function bracket(body: string, start: number, ignoreCase: boolean): [string, number] {
  let j = start + 1;
  const negated = body[j] === "!" || body[j] === "^";
  if (negated) j++;
  const members: string[] = [];
  let previous: string | undefined;
  let first = true;
  for (;;) {
    if (j >= body.length) throw new Abort("unclosed [");
    let c = body[j] as string;
    if (c === "]" && !first) break;
    first = false;
    if (c === "\\") {
      j++;
      if (j >= body.length) throw new Abort("unclosed [");
      c = body[j] as string;
      members.push(classMember(c, ignoreCase));
      previous = c;
      j++;
      continue;
    }
    if (c === "-" && previous !== undefined && j + 1 < body.length && body[j + 1] !== "]") {
      j++;
      let high = body[j] as string;
      if (high === "\\") {
        j++;
        if (j >= body.length) throw new Abort("unclosed [");
        high = body[j] as string;
      }
      const low = previous;
      if (low <= high) {
        members.push(`${escapeChar(low)}-${escapeChar(high)}`);
        if (ignoreCase) members.push(...otherCaseRange(low, high));
      }
      previous = undefined;
      j++;
      continue;
    }
    if (c === "[" && body[j + 1] === ":") {
      let k = j + 2;
      while (k < body.length && body[k] !== "]") k++;
      if (k >= body.length) throw new Abort("unclosed [");
      if (k - (j + 2) - 1 < 0 || body[k - 1] !== ":") {
        // No ":]": the "[" is an ordinary member and ":" comes next.
        members.push(escapeChar("["));
        previous = "[";
        j++;
        continue;
      }
      const name = body.slice(j + 2, k - 1);
      const classMembers = POSIX_CLASSES[name];
      if (classMembers === undefined) throw new Abort(`unknown character class [:${name}:]`);
      // Folding: wildmatch lowers the text first, so lower matches upper, and upper lower.
      if (ignoreCase && (name === "lower" || name === "upper")) members.push("a-zA-Z");
      else members.push(classMembers);
      previous = undefined;
      j = k + 1;
      continue;
    }
    members.push(classMember(c, ignoreCase));
    previous = c;
    j++;
  }
  const set = members.join("");
  if (negated) return [`[^${set}/]`, j + 1];
  return [set === "" ? "(?!)" : `(?!/)[${set}]`, j + 1];
}

/** The other case of the ASCII letters in a byte range, as class members. */
function otherCaseRange(low: string, high: string): string[] {
  const out: string[] = [];
  for (let code = low.charCodeAt(0); code <= high.charCodeAt(0); code++) {
    const c = String.fromCharCode(code);
    if (/[A-Za-z]/.test(c)) out.push(c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  }
  return out;
}

/**
 * Translates a wildmatch pattern to a regex source. `pathname`: WM_PATHNAME, where `*` and `?`
 * stop at `/` and only a whole `**` path segment crosses directories.
 */
function translate(body: string, pathname: boolean, ignoreCase: boolean): string {
  let out = "";
  for (let i = 0; i < body.length; ) {
    const c = body[i] as string;
    if (c === "\\") {
      // A trailing backslash escapes nothing: wildmatch compares it with the end of the text.
      if (i + 1 >= body.length) throw new Abort("trailing backslash");
      out += literalChar(body[i + 1] as string, ignoreCase);
      i += 2;
    } else if (c === "?") {
      out += "[^/]";
      i++;
    } else if (c === "*") {
      let end = i;
      while (body[end] === "*") end++;
      const next = body[end];
      const wholeSegment =
        end - i >= 2 &&
        (i === 0 || body[i - 1] === "/") &&
        (next === undefined || next === "/" || (next === "\\" && body[end + 1] === "/"));
      if (pathname && wholeSegment && next === "/") {
        out += "(?:[^]*/)?"; // zero or more whole directories
        i = end + 1;
      } else if (pathname && wholeSegment) {
        out += "[^]*";
        i = end;
      } else {
        // Without WM_PATHNAME a star crosses "/", but then the text is a basename without one.
        out += "[^/]*";
        i = end;
      }
    } else if (c === "[") {
      const [regex, next] = bracket(body, i, ignoreCase);
      out += regex;
      i = next;
    } else {
      out += literalChar(c, ignoreCase);
      i++;
    }
  }
  return out;
}

/**
 * The regex source of a pattern. With a slash, git compares the pattern's literal head (up to
 * the first special character) as a string and hands only the rest to wildmatch, for which
 * that rest starts a pattern: in `a**` followed by `/b`, the stars begin the rest, so they form
 * a whole segment and cross directories.
 */
function pathRegex(body: string, pathname: boolean, ignoreCase: boolean): string {
  if (!pathname) return translate(body, false, ignoreCase);
  const special = body.search(GLOB_SPECIAL);
  if (special === -1) return translate(body, true, ignoreCase);
  let head = "";
  for (const c of body.slice(0, special)) head += literalChar(c, ignoreCase);
  return head + translate(body.slice(special), true, ignoreCase);
}

/** git's trim_trailing_spaces: unescaped trailing spaces go; a "\ " keeps its space. */
function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === " ") {
      if (lastSpace === -1) lastSpace = i;
    } else {
      if (c === "\\") {
        i++;
        if (i >= line.length) return line;
      }
      lastSpace = -1;
    }
  }
  return lastSpace === -1 ? line : line.slice(0, lastSpace);
}

export class IgnoreFile {
  readonly source: string;
  readonly rules: readonly IgnoreRule[];
  readonly problems: readonly PatternProblem[];
  readonly #ignoreCase: boolean;
  /** Literal basename rules by basename, indices ascending. */
  readonly #literals = new Map<string, CompiledRule[]>();
  /** The other rules, in file order. */
  readonly #general: CompiledRule[] = [];
  /** Some rule matches whole paths, not only basenames. */
  #needsPath = false;

  private constructor(
    source: string,
    rules: CompiledRule[],
    problems: PatternProblem[],
    ignoreCase: boolean,
  ) {
    this.source = source;
    this.rules = rules;
    this.problems = problems;
    this.#ignoreCase = ignoreCase;
    for (const rule of rules) {
      if (rule.literal === undefined) {
        if (rule.regex || rule.suffix !== undefined) this.#general.push(rule);
        if (rule.regex && !rule.basenameOnly) this.#needsPath = true;
        continue;
      }
      const bucket = this.#literals.get(rule.literal);
      if (bucket) bucket.push(rule);
      else this.#literals.set(rule.literal, [rule]);
    }
  }

  /**
   * Compiles one ignore file (`source` names it in matches and problems): its text, or its raw
   * bytes as read from disk (git reads bytes; a file that is not UTF-8 still matches).
   */
  static compile(
    content: string | Uint8Array,
    source: string,
    options: CompileOptions = {},
  ): IgnoreFile {
    const ignoreCase = options.ignoreCase ?? false;
    const rules: CompiledRule[] = [];
    const problems: PatternProblem[] = [];
    const bytes =
      typeof content === "string"
        ? byteForm(content)
        : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString("latin1");
    const lines = bytes.replace(/^\xef\xbb\xbf/, "").split("\n");
    for (let n = 0; n < lines.length; n++) {
      let line = lines[n] as string;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "" || line.startsWith("#")) continue;
      line = trimTrailingSpaces(line);
      if (line === "") continue;
      let body = line;
      const negated = body.startsWith("!");
      if (negated) body = body.slice(1);
      const dirOnly = body.endsWith("/");
      if (dirOnly) body = body.slice(0, -1);
      if (body === "") continue;
      const basenameOnly = !body.includes("/");
      if (!basenameOnly && body.startsWith("/")) body = body.slice(1);
      const pattern = fromByteForm(line);
      let literal: string | undefined;
      let suffix: string | undefined;
      let regex: RegExp | undefined;
      if (basenameOnly && !GLOB_SPECIAL.test(body)) {
        literal = ignoreCase ? asciiLower(body) : body;
      } else if (
        basenameOnly &&
        !ignoreCase &&
        body[0] === "*" &&
        !GLOB_SPECIAL.test(body.slice(1))
      ) {
        suffix = body.slice(1);
      } else {
        try {
          regex = new RegExp(`^${pathRegex(body, !basenameOnly, ignoreCase)}$`);
        } catch (error) {
          const message = error instanceof Abort ? error.message : String(error);
          problems.push({ source, line: n + 1, pattern, message: `never matches: ${message}` });
        }
      }
      rules.push({
        source,
        line: n + 1,
        pattern,
        negated,
        dirOnly,
        basenameOnly,
        index: rules.length,
        literal,
        suffix,
        regex,
      });
    }
    return new IgnoreFile(source, rules, problems, ignoreCase);
  }

  /**
   * The rule that decides a path, if any: the last matching line, as git reads a file. The
   * path, in byte form and relative to the ignore file's directory, is `prefix + path` when
   * `strip` is 0 and `path.slice(strip)` otherwise; it is built only if a rule needs it. `name`
   * is its last component.
   */
  match(
    name: string,
    isDir: boolean,
    path: string,
    prefix = "",
    strip = 0,
  ): IgnoreRule | undefined {
    let best: CompiledRule | undefined;
    const bucket = this.#literals.get(this.#ignoreCase ? asciiLower(name) : name);
    if (bucket) {
      for (let i = bucket.length - 1; i >= 0; i--) {
        const rule = bucket[i] as CompiledRule;
        if (!rule.dirOnly || isDir) {
          best = rule;
          break;
        }
      }
    }
    const floor = best?.index ?? -1;
    let relative: string | undefined;
    if (this.#needsPath) relative = strip === 0 ? prefix + path : path.slice(strip);
    for (let i = this.#general.length - 1; i >= 0; i--) {
      const rule = this.#general[i] as CompiledRule;
      if (rule.index <= floor) break;
      if (rule.dirOnly && !isDir) continue;
      const hit =
        rule.suffix !== undefined
          ? name.endsWith(rule.suffix)
          : (rule.regex as RegExp).test(rule.basenameOnly ? name : (relative as string));
      if (hit) return rule;
    }
    return best;
  }
}

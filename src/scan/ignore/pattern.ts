/**
 * One ignore file, compiled: pattern text in, `match(name, isDir, path)` out, with provenance.
 * Pure: no file system. Depends on `wildmatch`.
 *
 * Written by hand rather than taken from a glob library because gitignore is not glob: git's
 * wildmatch has its own rules for `**`, bracket expressions, escapes, and `?` matching one
 * byte of UTF-8, and the answer must name the file, line and pattern that decided it. The
 * table in test/scan/ignore-against-git.test.ts checks every rule here against `git check-ignore`.
 * Lines are sorted into git's own fast paths (a literal name, a `*literal` suffix, a literal
 * head compared before wildmatch runs), so most rules never reach the matcher.
 *
 * Paths are matched in "byte form": each UTF-8 byte as one character (a Latin-1 string), so
 * `?` and bracket expressions see bytes as git does. ASCII paths are their own byte form.
 */
import { decodeName, encodeName } from "../../io/bytes.js";
import { bracketEnd, neverMatches, type WildmatchFlags, wildmatch } from "./wildmatch.js";

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
  /** For the rest: the literal head (compared as a string, as git does), then the wildmatch part. */
  readonly head: string;
  readonly glob: string;
  /**
   * For basename globs: the literal text before their first special character (byte form;
   * lower-cased ASCII when case-folding), which a matching name starts with.
   */
  readonly namePrefix: string;
  /**
   * For path globs: the glob has no `/` and no `**`, so it never matches a rest of the path
   * with a `/` in it (with WM_PATHNAME, `*`, `?` and brackets never match one).
   */
  readonly oneSegment: boolean;
  /**
   * The longest run of literal text in `glob` (no `/`), which every path or name it matches
   * holds: most names are refused by one `includes` before wildmatch runs (the Linux tree's root
   * `.gitignore` has `*.o.*`, `*.tab.[ch]` and the like, asked of each of its 83,000 entries).
   * "" when the glob has none, or when case is folded.
   */
  readonly needle: string;
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
  // A name's escaped bytes (io/bytes) are its bytes again, as git matches them.
  return isAscii(text) ? text : encodeName(text).toString("latin1");
}

/** Text again from its byte form. */
export function fromByteForm(bytes: string): string {
  return isAscii(bytes) ? bytes : decodeName(Buffer.from(bytes, "latin1"));
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

const GLOB_SPECIAL = /[*?[\\]/;

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

/**
 * Of a bucket's rules (indices ascending), the last that applies to the entry (a directory-only
 * rule only to a directory), if it comes after `best`; else `best`.
 */
function latest(
  bucket: readonly CompiledRule[] | undefined,
  isDir: boolean,
  best: CompiledRule | undefined,
): CompiledRule | undefined {
  if (!bucket) return best;
  for (let i = bucket.length - 1; i >= 0; i--) {
    const rule = bucket[i] as CompiledRule;
    if (best && rule.index <= best.index) break;
    if (!rule.dirOnly || isDir) return rule;
  }
  return best;
}

export class IgnoreFile {
  readonly source: string;
  readonly rules: readonly IgnoreRule[];
  readonly problems: readonly PatternProblem[];
  readonly #ignoreCase: boolean;
  readonly #pathFlags: WildmatchFlags;
  readonly #nameFlags: WildmatchFlags;
  /** Literal basename rules by basename, indices ascending. */
  readonly #literals = new Map<string, CompiledRule[]>();
  /** The other rules that can match, in file order. */
  readonly #general: CompiledRule[] = [];
  /**
   * `*.ext` rules (one dot, no other special character) by their extension: a name can only
   * match those of its own last extension, so a tree's many `*.o`-like lines cost one lookup a
   * name instead of a test each (the Linux tree's root `.gitignore` has dozens).
   */
  readonly #extensions = new Map<string, CompiledRule[]>();
  /**
   * Literal path rules (`/vmlinux`, `Documentation/foo.txt`: a slash, no special character) by
   * their path: a path matches only the rules that spell it, one lookup instead of a test each
   * (the Linux tree's root `.gitignore` has dozens, asked of every one of its 83,000 entries).
   */
  readonly #paths = new Map<string, CompiledRule[]>();
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
    this.#pathFlags = { pathname: true, casefold: ignoreCase };
    this.#nameFlags = { pathname: false, casefold: ignoreCase };
    const broken = new Set(problems.map((problem) => problem.line));
    for (const rule of rules) {
      if (broken.has(rule.line)) continue;
      const { suffix } = rule;
      if (suffix?.startsWith(".") && suffix.indexOf(".", 1) === -1) {
        const bucket = this.#extensions.get(suffix);
        if (bucket) bucket.push(rule);
        else this.#extensions.set(suffix, [rule]);
        continue;
      }
      if (!rule.basenameOnly && rule.glob === "") {
        const bucket = this.#paths.get(rule.head);
        if (bucket) bucket.push(rule);
        else this.#paths.set(rule.head, [rule]);
        this.#needsPath = true;
        continue;
      }
      if (rule.literal === undefined) {
        this.#general.push(rule);
        if (!rule.basenameOnly) this.#needsPath = true;
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
      const never = neverMatches(body);
      if (never)
        problems.push({ source, line: n + 1, pattern, message: `never matches: ${never}` });
      const special = body.search(GLOB_SPECIAL);
      let literal: string | undefined;
      let suffix: string | undefined;
      // git compares a path rule's literal head as a string and hands wildmatch the rest, for
      // which that rest starts a pattern: in `a**` then `/b`, the stars form a whole segment.
      let head = "";
      let glob = body;
      if (basenameOnly && special === -1) {
        literal = ignoreCase ? asciiLower(body) : body;
      } else if (
        basenameOnly &&
        !ignoreCase &&
        special === 0 &&
        body[0] === "*" &&
        !GLOB_SPECIAL.test(body.slice(1))
      ) {
        suffix = body.slice(1);
      } else if (!basenameOnly) {
        head = special === -1 ? body : body.slice(0, special);
        glob = special === -1 ? "" : body.slice(special);
        if (ignoreCase) head = asciiLower(head);
      }
      const namePrefix = basenameOnly && special > 0 ? body.slice(0, special) : "";
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
        head,
        glob,
        namePrefix: ignoreCase ? asciiLower(namePrefix) : namePrefix,
        oneSegment: !basenameOnly && !glob.includes("/") && !glob.includes("**"),
        needle: ignoreCase ? "" : longestLiteral(glob),
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
    let best = latest(
      this.#literals.get(this.#ignoreCase ? asciiLower(name) : name),
      isDir,
      undefined,
    );
    const dot = this.#extensions.size > 0 ? name.lastIndexOf(".") : -1;
    if (dot !== -1) best = latest(this.#extensions.get(name.slice(dot)), isDir, best);
    let relative = "";
    if (this.#needsPath) relative = strip === 0 ? prefix + path : path.slice(strip);
    if (this.#paths.size > 0) {
      best = latest(
        this.#paths.get(this.#ignoreCase ? asciiLower(relative) : relative),
        isDir,
        best,
      );
    }
    const floor = best?.index ?? -1;
    for (let i = this.#general.length - 1; i >= 0; i--) {
      const rule = this.#general[i] as CompiledRule;
      if (rule.index <= floor) break;
      if (rule.dirOnly && !isDir) continue;
      if (this.#test(rule, name, relative)) return rule;
    }
    return best;
  }

  #test(rule: CompiledRule, name: string, relative: string): boolean {
    if (rule.suffix !== undefined) return name.endsWith(rule.suffix);
    if (rule.basenameOnly) {
      const { namePrefix } = rule;
      if (namePrefix !== "") {
        if (name.length < namePrefix.length) return false;
        const start = name.slice(0, namePrefix.length);
        if ((this.#ignoreCase ? asciiLower(start) : start) !== namePrefix) return false;
      }
      if (rule.needle !== "" && !name.includes(rule.needle)) return false;
      return wildmatch(rule.glob, name, this.#nameFlags);
    }
    const { head, glob } = rule;
    if (relative.length < head.length) return false;
    if (rule.oneSegment && relative.indexOf("/", head.length) !== -1) return false;
    if (head !== "") {
      const start = relative.slice(0, head.length);
      if ((this.#ignoreCase ? asciiLower(start) : start) !== head) return false;
    }
    const rest = relative.slice(head.length);
    if (glob === "") return rest === "";
    if (rule.needle !== "" && !rest.includes(rule.needle)) return false;
    return wildmatch(glob, rest, this.#pathFlags);
  }
}

/**
 * The longest literal run of a wildmatch glob: its text between `*`, `?`, bracket expressions
 * and `/` (a `/` beside `**` may match nothing: `**` + `/foo` matches `foo`), an escaped
 * character being itself. "" when it has none, or a bracket is not closed (git never matches
 * such a glob, and then there is nothing to spare).
 */
export function longestLiteral(glob: string): string {
  let longest = "";
  let run = "";
  const end = () => {
    if (run.length > longest.length) longest = run;
    run = "";
  };
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "\\") {
      if (i + 1 >= glob.length) return "";
      run += glob[++i];
    } else if (c === "*" || c === "?" || c === "/") {
      end();
    } else if (c === "[") {
      end();
      const close = bracketEnd(glob, i);
      if (typeof close === "string") return "";
      i = close;
    } else {
      run += c;
    }
  }
  end();
  return longest;
}

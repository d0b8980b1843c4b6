/**
 * grep's arguments as said (ripgrep's lowargs): rg 13's flag grammar, producing a plain record
 * that nothing has checked against the filesystem yet. Short flags clustered (`-inw`, `-A3`,
 * `-uu`), long ones with `=` or a separate value, options anywhere among the operands, `--` to
 * end them, and the later of two flags that override each other winning (so a default can be
 * given first and changed after, as rg's config files do). rg's flags freshfs lacks are named
 * as such. Pure; depends on nothing but the error type.
 *
 * Written by hand, not with `util.parseArgs`: that has no clusters of a counted flag (`-uu`),
 * no values glued to short flags (`-A3`), and no last-wins between opposite flags.
 */
import { FreshfsError } from "../../errors.js";

export type CaseMode = "sensitive" | "insensitive" | "smart";

/** `--sort` / `--sortr`: what the files are ordered by, and whether backwards. */
export interface FileSort {
  readonly by: "path" | "modified" | "accessed" | "created" | "none";
  readonly reverse: boolean;
}

/** Everything the grep command was told, flag by flag, the later of two opposite flags kept. */
export interface GrepArgs {
  /** From `-e` and `-f` (in order); when there are none, the first operand is the pattern. */
  readonly patterns: string[];
  readonly patternFiles: string[];
  /** Whether any `-e` or `-f` was given (then every operand is a path). */
  patternsGiven: boolean;
  readonly operands: string[];
  caseMode: CaseMode;
  fixedStrings: boolean;
  word: boolean;
  lineRegexp: boolean;
  invert: boolean;
  onlyMatching: boolean;
  /** The last of -c, --count-matches, -l, --files-without-match: what is printed per file. */
  summary: "count" | "count-matches" | "with-matches" | "without-match" | undefined;
  lineNumber: boolean;
  withFilename: boolean;
  heading: boolean;
  nul: boolean;
  /** undefined: as `--vimgrep` says. */
  column: boolean | undefined;
  vimgrep: boolean;
  files: boolean;
  typeList: boolean;
  follow: boolean;
  hidden: boolean;
  noIgnore: boolean;
  /** `-u` given this many times. */
  unrestricted: number;
  text: boolean;
  /** `--binary`: every file with a NUL searched whole and reported as matching, as a named file is. */
  binary: boolean;
  /** `--passthru`: every line printed, the matching ones as matches. */
  passthru: boolean;
  multiline: boolean;
  multilineDotall: boolean;
  javascript: boolean;
  globCaseInsensitive: boolean;
  quiet: boolean;
  noMessages: boolean;
  trim: boolean;
  /** `--json`: rg's JSON Lines; `--json-result`: freshfs's one document. */
  json: boolean;
  jsonResult: boolean;
  sort: FileSort;
  after: number | undefined;
  before: number | undefined;
  context: number | undefined;
  maxCount: number | undefined;
  /** `-g` and `--iglob`, in the order given. */
  readonly globs: { glob: string; insensitive: boolean }[];
  readonly types: string[];
  readonly typesNot: string[];
  maxDepth: number | undefined;
  maxColumns: number | undefined;
  maxColumnsPreview: boolean;
  replace: string | undefined;
  maxFileSize: number | undefined;
  timeoutMs: number | undefined;
  limit: number | undefined;
  /** undefined: none (`--no-context-separator`). */
  contextSeparator: string | undefined;
  fieldMatchSeparator: string;
  fieldContextSeparator: string;
  /** `--no-daemon`: search in this process, not through the user's daemon (freshfs's flag). */
  noDaemon: boolean;
  help: boolean;
}

function bad(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", message);
}

function whole(value: string, flag: string): number {
  if (!/^\d+$/.test(value)) throw bad(`${flag} needs a whole number, not '${value}'.`);
  return Number(value);
}

const SIZE_SUFFIXES: Record<string, number> = { "": 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 };

/** rg's NUM+SUFFIX?: digits, then K, M or G (powers of 1024), upper case only, as rg takes them. */
function fileSize(value: string, flag: string): number {
  const [, digits = "", suffix = ""] = /^(\d+)([KMG]?)$/.exec(value) ?? [];
  const bytes = digits === "" ? Number.NaN : Number(digits) * (SIZE_SUFFIXES[suffix] ?? 1);
  if (!Number.isSafeInteger(bytes)) {
    throw bad(`${flag} needs a whole number of bytes with an optional K, M or G, not '${value}'.`);
  }
  return bytes;
}

type Action = (args: GrepArgs, value: string, flag: string) => void;

interface Flag {
  readonly short?: string;
  readonly long: readonly string[];
  /** Takes a value (the next argument, or glued: `-A3`, `--context=3`). */
  readonly value?: boolean;
  /** What the flag sets, or what it does with its value. */
  readonly set?: Partial<GrepArgs>;
  readonly act?: Action;
}

type NumberKey =
  | "after"
  | "before"
  | "context"
  | "maxCount"
  | "maxDepth"
  | "maxColumns"
  | "timeoutMs"
  | "limit";

/** A flag whose value is a whole number kept under `key` (with what else it sets). */
const number =
  (key: NumberKey, also: Partial<GrepArgs> = {}): Action =>
  (args, value, flag) => {
    Object.assign(args, { [key]: whole(value, flag) }, also);
  };

const sort =
  (reverse: boolean): Action =>
  (args, value, flag) => {
    if (!["path", "modified", "accessed", "created", "none"].includes(value)) {
      throw bad(`${flag} takes path, modified, accessed, created or none, not '${value}'.`);
    }
    args.sort = { by: value as FileSort["by"], reverse };
  };

/** rg's flags that freshfs reads, each with what it does to the arguments. */
const FLAGS: readonly Flag[] = [
  { short: "e", long: ["regexp"], value: true, act: (a, v) => pattern(a, v) },
  { short: "f", long: ["file"], value: true, act: (a, v) => patternFile(a, v) },
  { short: "i", long: ["ignore-case"], set: { caseMode: "insensitive" } },
  { short: "s", long: ["case-sensitive"], set: { caseMode: "sensitive" } },
  { short: "S", long: ["smart-case"], set: { caseMode: "smart" } },
  { short: "F", long: ["fixed-strings"], set: { fixedStrings: true } },
  { long: ["no-fixed-strings"], set: { fixedStrings: false } },
  { short: "w", long: ["word-regexp"], set: { word: true, lineRegexp: false } },
  { short: "x", long: ["line-regexp"], set: { lineRegexp: true, word: false } },
  { short: "v", long: ["invert-match"], set: { invert: true } },
  { short: "o", long: ["only-matching"], set: { onlyMatching: true } },
  { short: "c", long: ["count"], set: { summary: "count" } },
  { long: ["count-matches"], set: { summary: "count-matches" } },
  { short: "l", long: ["files-with-matches"], set: { summary: "with-matches" } },
  { long: ["files-without-match"], set: { summary: "without-match" } },
  { short: "n", long: ["line-number"], set: { lineNumber: true } },
  { short: "N", long: ["no-line-number"], set: { lineNumber: false } },
  { short: "H", long: ["with-filename"], set: { withFilename: true } },
  { short: "I", long: ["no-filename"], set: { withFilename: false } },
  { long: ["heading"], set: { heading: true } },
  { long: ["no-heading"], set: { heading: false } },
  { short: "0", long: ["null"], set: { nul: true } },
  { long: ["column"], set: { column: true } },
  { long: ["no-column"], set: { column: false } },
  { long: ["vimgrep"], set: { vimgrep: true } },
  { long: ["files"], set: { files: true } },
  { long: ["type-list"], set: { typeList: true } },
  { short: "L", long: ["follow"], set: { follow: true } },
  { long: ["no-follow"], set: { follow: false } },
  { short: ".", long: ["hidden"], set: { hidden: true } },
  { long: ["no-hidden"], set: { hidden: false } },
  { long: ["no-ignore"], set: { noIgnore: true } },
  { long: ["ignore"], set: { noIgnore: false } },
  {
    short: "u",
    long: ["unrestricted"],
    act: (a) => {
      a.unrestricted++;
    },
  },
  { short: "a", long: ["text"], set: { text: true } },
  { long: ["binary"], set: { binary: true } },
  { long: ["no-binary"], set: { binary: false } },
  {
    long: ["passthru", "passthrough"],
    set: { passthru: true, after: undefined, before: undefined, context: undefined },
  },
  { long: ["no-context-separator"], set: { contextSeparator: undefined } },
  { long: ["sort-files"], set: { sort: { by: "path", reverse: false } } },
  { long: ["no-text"], set: { text: false } },
  { short: "U", long: ["multiline"], set: { multiline: true } },
  { long: ["no-multiline"], set: { multiline: false } },
  { long: ["multiline-dotall"], set: { multilineDotall: true } },
  { long: ["no-multiline-dotall"], set: { multilineDotall: false } },
  { short: "P", long: ["pcre2"], set: { javascript: true } },
  { long: ["no-pcre2"], set: { javascript: false } },
  { long: ["glob-case-insensitive"], set: { globCaseInsensitive: true } },
  { long: ["no-glob-case-insensitive"], set: { globCaseInsensitive: false } },
  { short: "q", long: ["quiet"], set: { quiet: true } },
  { long: ["no-messages"], set: { noMessages: true } },
  { long: ["messages"], set: { noMessages: false } },
  { long: ["trim"], set: { trim: true } },
  { long: ["no-trim"], set: { trim: false } },
  { long: ["json"], set: { json: true } },
  { long: ["no-json"], set: { json: false } },
  { long: ["json-result"], set: { jsonResult: true } },
  { long: ["no-daemon"], set: { noDaemon: true } },
  { long: ["daemon"], set: { noDaemon: false } },
  { long: ["sort"], value: true, act: sort(false) },
  { long: ["sortr"], value: true, act: sort(true) },
  {
    short: "A",
    long: ["after-context"],
    value: true,
    act: number("after", { passthru: false }),
  },
  {
    short: "B",
    long: ["before-context"],
    value: true,
    act: number("before", { passthru: false }),
  },
  {
    short: "C",
    long: ["context"],
    value: true,
    act: number("context", { passthru: false }),
  },
  {
    short: "m",
    long: ["max-count"],
    value: true,
    act: number("maxCount"),
  },
  {
    short: "g",
    long: ["glob"],
    value: true,
    act: (a, v) => {
      a.globs.push({ glob: v, insensitive: false });
    },
  },
  {
    long: ["iglob"],
    value: true,
    act: (a, v) => {
      a.globs.push({ glob: v, insensitive: true });
    },
  },
  {
    short: "t",
    long: ["type"],
    value: true,
    act: (a, v) => a.types.push(v),
  },
  {
    short: "T",
    long: ["type-not"],
    value: true,
    act: (a, v) => a.typesNot.push(v),
  },
  {
    long: ["max-depth", "maxdepth"],
    value: true,
    act: number("maxDepth"),
  },
  {
    short: "M",
    long: ["max-columns"],
    value: true,
    act: number("maxColumns"),
  },
  { long: ["max-columns-preview"], set: { maxColumnsPreview: true } },
  { long: ["no-max-columns-preview"], set: { maxColumnsPreview: false } },
  {
    short: "r",
    long: ["replace"],
    value: true,
    act: (a, v) => {
      a.replace = v;
    },
  },
  {
    long: ["max-filesize"],
    value: true,
    act: (a, v, f) => {
      a.maxFileSize = fileSize(v, f);
    },
  },
  {
    long: ["timeout"],
    value: true,
    act: number("timeoutMs"),
  },
  {
    long: ["limit"],
    value: true,
    act: number("limit"),
  },
  {
    long: ["context-separator"],
    value: true,
    act: (a, v) => Object.assign(a, { contextSeparator: separator(v) }),
  },
  {
    long: ["field-match-separator"],
    value: true,
    act: (a, v) => Object.assign(a, { fieldMatchSeparator: separator(v) }),
  },
  {
    long: ["field-context-separator"],
    value: true,
    act: (a, v) => Object.assign(a, { fieldContextSeparator: separator(v) }),
  },
  {
    long: ["color", "colour"],
    value: true,
    act: (_a, v, f) => {
      if (v === "always" || v === "ansi") throw bad(`${f} ${v}: freshfs prints no colors.`);
      if (v !== "never" && v !== "auto")
        throw bad(`${f} takes never, auto, always or ansi, not '${v}'.`);
    },
  },
  // Accepted and without effect here: freshfs reads no config file, reads files (no memory
  // maps), picks its own threads and writes its output in one piece.
  { long: ["no-config"], act: () => undefined },
  { long: ["mmap"], act: () => undefined },
  { long: ["no-mmap"], act: () => undefined },
  { long: ["line-buffered"], act: () => undefined },
  { long: ["block-buffered"], act: () => undefined },
  {
    short: "j",
    long: ["threads"],
    value: true,
    act: (_a, v, f) => {
      whole(v, f);
    },
  },
  { short: "h", long: ["help"], set: { help: true } },
];

/** rg's flags freshfs does not have: named as such, not as unknown. */
const NOT_SUPPORTED = new Set([
  "pre",
  "pre-glob",
  "search-zip",
  "z",
  "byte-offset",
  "b",
  "stats",
  "debug",
  "trace",
  "ignore-file",
  "encoding",
  "E",
  "crlf",
  "no-require-git",
  "path-separator",
  "one-file-system",
  "type-add",
  "type-clear",
  "engine",
  "auto-hybrid-regex",
  "pretty",
  "p",
  "colors",
  "no-ignore-vcs",
  "no-ignore-dot",
  "no-ignore-parent",
  "no-ignore-global",
  "no-ignore-exclude",
  "no-ignore-files",
  "ignore-file-case-insensitive",
  "dfa-size-limit",
  "regex-size-limit",
  "null-data",
  "unicode",
  "no-unicode",
  "pcre2-unicode",
  "files-with-matches-count",
  "max-columns-preview-len",
  "hyperlink-format",
  "include-zero",
  "vimgrep-column",
]);

const BY_SHORT = new Map(FLAGS.filter((f) => f.short).map((f) => [f.short as string, f]));
const BY_LONG = new Map(FLAGS.flatMap((f) => f.long.map((name) => [name, f] as const)));

/** rg's escapes in a separator: `\t`, `\n`, `\x7F`, `\\`. */
function separator(value: string): string {
  return value.replace(/\\(x[0-9A-Fa-f]{2}|.)/g, (whole, e: string) => {
    if (e.startsWith("x") && e.length === 3)
      return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    return { t: "\t", n: "\n", r: "\r", "0": "\0", "\\": "\\" }[e] ?? whole;
  });
}

function pattern(args: GrepArgs, value: string): void {
  args.patterns.push(value);
  args.patternsGiven = true;
}

function patternFile(args: GrepArgs, value: string): void {
  args.patternFiles.push(value);
  args.patternsGiven = true;
}

/**
 * What is said before any flag: rg's defaults, but one. Lines are printed as `rg --no-heading
 * --with-filename --line-number` prints them, whether or not the output is a terminal, because
 * a program reading the output is the usual reader here; `-N`, `-I` and `--heading` change each.
 */
function emptyGrepArgs(): GrepArgs {
  return {
    patterns: [],
    patternFiles: [],
    patternsGiven: false,
    operands: [],
    caseMode: "sensitive",
    fixedStrings: false,
    word: false,
    lineRegexp: false,
    invert: false,
    onlyMatching: false,
    summary: undefined,
    lineNumber: true,
    withFilename: true,
    heading: false,
    nul: false,
    column: undefined,
    vimgrep: false,
    files: false,
    typeList: false,
    follow: false,
    hidden: false,
    noIgnore: false,
    unrestricted: 0,
    text: false,
    binary: false,
    passthru: false,
    multiline: false,
    multilineDotall: false,
    javascript: false,
    globCaseInsensitive: false,
    quiet: false,
    noMessages: false,
    trim: false,
    json: false,
    jsonResult: false,
    sort: { by: "path", reverse: false },
    after: undefined,
    before: undefined,
    context: undefined,
    maxCount: undefined,
    globs: [],
    types: [],
    typesNot: [],
    maxDepth: undefined,
    maxColumns: undefined,
    maxColumnsPreview: false,
    replace: undefined,
    maxFileSize: undefined,
    timeoutMs: undefined,
    limit: undefined,
    contextSeparator: "--",
    fieldMatchSeparator: ":",
    fieldContextSeparator: "-",
    noDaemon: false,
    help: false,
  };
}

function unknown(flag: string, name: string): FreshfsError {
  if (NOT_SUPPORTED.has(name)) {
    return bad(`rg's ${flag} is not supported by freshfs grep (see 'freshfs grep --help').`);
  }
  return bad(`unknown option ${flag} for grep. See 'freshfs grep --help'.`);
}

function apply(flag: Flag, args: GrepArgs, value: string, name: string): void {
  if (flag.set) Object.assign(args, flag.set);
  flag.act?.(args, value, name);
}

/** Reads grep's arguments (everything after `grep`). */
export function parseGrepArgs(argv: readonly string[]): GrepArgs {
  const args = emptyGrepArgs();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const valueFor = (flag: string): string => {
      const next = argv[i + 1];
      if (next === undefined) throw bad(`${flag} needs a value. See 'freshfs grep --help'.`);
      i++;
      return next;
    };
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const flag = BY_LONG.get(name);
      if (!flag) throw unknown(`--${name}`, name);
      if (flag.value) {
        apply(flag, args, eq === -1 ? valueFor(`--${name}`) : arg.slice(eq + 1), `--${name}`);
      } else if (eq !== -1) throw bad(`--${name} takes no value, not '${arg.slice(eq + 1)}'.`);
      else apply(flag, args, "", `--${name}`);
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j] as string;
        const flag = BY_SHORT.get(letter);
        if (!flag) throw unknown(`-${letter}`, letter);
        if (flag.value) {
          const glued = arg.slice(j + 1);
          apply(flag, args, glued !== "" ? glued : valueFor(`-${letter}`), `-${letter}`);
          break;
        }
        apply(flag, args, "", `-${letter}`);
      }
      continue;
    }
    positional.push(arg);
  }
  args.operands.push(...positional);
  return args;
}

/**
 * Which ripgrep flags a case uses, and which of them freshfs's `grep` is meant to support.
 *
 * A flag's value must be known to take an argument, or `-r -n` (the replacement "-n", as
 * regression.rs:r568 relies on) would be read as two flags; so the tables below follow
 * ripgrep 13's own parser (clap: a short flag taking a value swallows the rest of its cluster
 * or the next argument).
 */

/** Short flags that take a value: `-A3`, `-A 3`, `-e-baz`, `-rni` (replacement "ni"). */
const SHORT_WITH_VALUE = new Set([
  "A",
  "B",
  "C",
  "E",
  "M",
  "T",
  "d",
  "e",
  "f",
  "g",
  "j",
  "m",
  "r",
  "t",
]);

/** Long flags that take a value (`--glob x` or `--glob=x`), ripgrep 13 plus newer ones the tests name. */
const LONG_WITH_VALUE = new Set([
  "--after-context",
  "--before-context",
  "--color",
  "--colors",
  "--context",
  "--context-separator",
  "--dfa-size-limit",
  "--encoding",
  "--engine",
  "--field-context-separator",
  "--field-match-separator",
  "--file",
  "--glob",
  "--hostname-bin",
  "--hyperlink-format",
  "--iglob",
  "--ignore-file",
  "--max-columns",
  "--max-count",
  "--max-depth",
  "--maxdepth",
  "--max-filesize",
  "--path-separator",
  "--pre",
  "--pre-glob",
  "--regex-size-limit",
  "--regexp",
  "--replace",
  "--sort",
  "--sortr",
  "--threads",
  "--type",
  "--type-add",
  "--type-clear",
  "--type-not",
]);

/**
 * The flag names (as written: `-i`, `--ignore-case`, `--glob` for `--glob=x`) that `args` uses,
 * each once, in order of first use. Positional arguments (pattern, paths) and values are left
 * out; everything after `--` is positional.
 */
export function flagsOf(args: readonly string[]): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg : arg.slice(0, eq);
      seen.add(name);
      if (eq === -1 && LONG_WITH_VALUE.has(name)) i++;
      continue;
    }
    // A lone "-" is a path (stdin), not a flag.
    if (!arg.startsWith("-") || arg === "-") continue;
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j] as string;
      seen.add(`-${letter}`);
      if (SHORT_WITH_VALUE.has(letter)) {
        if (j === arg.length - 1) i++;
        break;
      }
    }
  }
  return [...seen];
}

/**
 * The flags freshfs's `grep` supports (both spellings, and the aliases it takes); a case using
 * any other flag is unsupported: freshfs refuses it with an error.
 */
export const SUPPORTED: ReadonlySet<string> = new Set([
  "-e",
  "--regexp",
  "-f",
  "--file",
  "-v",
  "--invert-match",
  "-o",
  "--only-matching",
  "-m",
  "--max-count",
  "-n",
  "--line-number",
  "-N",
  "--no-line-number",
  "-H",
  "--with-filename",
  "-I",
  "--no-filename",
  "-l",
  "--files-with-matches",
  "--files-without-match",
  "-c",
  "--count",
  "--count-matches",
  "-x",
  "--line-regexp",
  "-w",
  "--word-regexp",
  "-r",
  "--replace",
  "-L",
  "--follow",
  "-t",
  "--type",
  "-T",
  "--type-not",
  "--type-list",
  "--max-depth",
  "-.",
  "--hidden",
  "-u",
  "--unrestricted",
  "--no-ignore",
  "--glob-case-insensitive",
  "--iglob",
  "-g",
  "--glob",
  "--sort",
  "--sortr",
  "-0",
  "--null",
  "--column",
  "--vimgrep",
  "--files",
  "-M",
  "--max-columns",
  "--max-columns-preview",
  "--no-column",
  "--maxdepth",
  "--no-pcre2",
  "--sort-files",
  "--no-context-separator",
  "--passthru",
  "--mmap",
  "--no-mmap",
  "--binary",
  "--json",
  "-i",
  "--ignore-case",
  "-s",
  "--case-sensitive",
  "-S",
  "--smart-case",
  "-F",
  "--fixed-strings",
  "-U",
  "--multiline",
  "--multiline-dotall",
  "-A",
  "--after-context",
  "-B",
  "--before-context",
  "-C",
  "--context",
  "-a",
  "--text",
  "--max-filesize",
  "-P",
  "--pcre2",
  "--no-heading",
  "--heading",
  "--color",
  "--no-messages",
  "-q",
  "--quiet",
  "--trim",
  "--no-config",
  "--line-buffered",
  "--block-buffered",
  "-j",
  "--threads",
  "--context-separator",
  "--field-match-separator",
  "--field-context-separator",
]);

/** The flags of `args` that are not in SUPPORTED. */
export function unsupportedFlags(args: readonly string[]): string[] {
  return flagsOf(args).filter((flag) => !SUPPORTED.has(flag));
}

/** The flags agents reach for, which freshfs must support; SUPPORTED must not drop any of them. */
export const ISSUE_FLAGS = [
  "-e",
  "-f",
  "-v",
  "-o",
  "-m",
  "-n",
  "-N",
  "-H",
  "--no-filename",
  "-l",
  "--files-without-match",
  "-c",
  "--count-matches",
  "-x",
  "-r",
  "-L",
  "-T",
  "--type-list",
  "--max-depth",
  "-.",
  "--hidden",
  "-u",
  "--glob-case-insensitive",
  "--iglob",
  "--sort",
  "-0",
  "--column",
  "--vimgrep",
  "--files",
  "-M",
  "--json",
];

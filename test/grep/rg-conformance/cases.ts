/**
 * ripgrep's own integration tests (tests/feature.rs, regression.rs, misc.rs, multiline.rs and
 * binary.rs of BurntSushi/ripgrep), re-created as data: the files each test makes and the
 * arguments it passes. No expected output is kept here: the oracle is the real `rg` run live
 * (see run.ts), so a case is only as good as its files and arguments being the test's own.
 *
 * Provenance. Cases present at the 13.0.0 tag are transcribed from that tag, since rg 13 is the
 * installed oracle and the target freshfs follows. Cases added to those files after 13.0.0 are
 * transcribed from the repository's newest commit and marked `newer`: for them the Rust test's
 * assertion is what later ripgrep does, while the comparison here is still with rg 13.
 *
 * Conventions:
 * - One Rust test that runs several commands becomes one case per distinct command: the first
 *   keeps the test's name, the next ones are `name#2`, `name#3`... A `TestCommand` keeps its
 *   arguments between runs, so a later step repeats the earlier arguments, as ripgrep's does.
 * - ripgrep's harness adds `--path-separator /` to every command; that is a no-op on Unix and
 *   not part of the test, so it is left out here.
 * - ripgrep runs every test a second time with `--pcre2` when built with PCRE2. That variant
 *   is not duplicated, except for tests that do nothing without PCRE2 ("Only PCRE2 supports
 *   look-around"): their PCRE2 run is the test, so their args start with `--pcre2`, where the
 *   harness puts it.
 * - Tests that only assert a property of the output (`!stdout.is_empty()`, "contains") are
 *   still compared exactly; a live oracle makes that possible.
 */

/** A file's content: text (written as UTF-8), raw bytes, a file in ./data, or `size` NUL bytes. */
export type Content =
  | string
  | { readonly base64: string }
  | { readonly fixture: string }
  | { readonly size: number };

/** Why a case cannot be a CLI comparison at all. */
export type SkipKind =
  /** Reads a pipe on stdin; the harness closes stdin. */
  | "stdin"
  /** Needs RIPGREP_CONFIG_PATH or another environment variable. */
  | "env"
  /** Runs an external program (--pre, -z decompressors). */
  | "external"
  /** Asserts on colored output (--color always/ansi, --colors). */
  | "color"
  /** Output holds wall-clock times (--stats), so no two runs agree. */
  | "nondeterministic"
  /** Uses a flag rg 13 does not have, so the oracle only prints a usage error. */
  | "rg13-lacks-flag";

export interface Skip {
  readonly kind: SkipKind;
  readonly why: string;
}

/** Seconds after the harness's base time; one number sets atime and mtime, a pair sets each. */
export type Time = number | readonly [atime: number, mtime: number];

export interface Case {
  /** `<file>.rs:<test name>`, with `#N` for the Nth command of a multi-command test. */
  readonly id: string;
  /** Relative path → content; parent directories are made as needed. */
  readonly files?: Readonly<Record<string, Content>>;
  /** Directories that must exist even when empty (`.git`, say). */
  readonly dirs?: readonly string[];
  /** Symlink path → the path it points to, both relative to the case directory (made absolute, as ripgrep's `link_dir` does). */
  readonly links?: Readonly<Record<string, string>>;
  /** Access and modification times, set before each tool runs (for --sort accessed/modified). */
  readonly times?: Readonly<Record<string, Time>>;
  /** The rg arguments of the test, in order. CASE_DIR stands for the case directory's absolute path. */
  readonly args: readonly string[];
  /** The sub-directory the command runs in. */
  readonly cwd?: string;
  readonly skip?: Skip;
  /** Added to ripgrep's tests after 13.0.0. */
  readonly newer?: true;
}

/** Replaced in args by the absolute path of the case directory. */
export const CASE_DIR = "{CASE_DIR}";

const SHERLOCK = `For the Doctor Watsons of this world, as opposed to the Sherlock
Holmeses, success in the province of detective work must always
be, to a very large extent, the result of luck. Sherlock Holmes
can extract a clew from a wisp of straw or a flake of cigar ash;
but Doctor Watson has to have it taken out for him and dusted,
and exhibited clearly, with a label attached.
`;

const SHERLOCK_CRLF = SHERLOCK.replace(/\n/g, "\r\n");

/** The variant of SHERLOCK in feature.rs's f917 tests: leading whitespace to trim. */
const SHERLOCK_INDENTED =
  "zzz\n" +
  "    For the Doctor Watsons of this world, as opposed to the Sherlock\n" +
  "  Holmeses, success in the province of detective work must always\n" +
  "\tbe, to a very large extent, the result of luck. Sherlock Holmes\n" +
  "     can extract a clew from a wisp of straw or a flake of cigar ash;\n" +
  "but Doctor Watson has to have it taken out for him and dusted,\n" +
  " and exhibited clearly, with a label attached.\n";

/** feature.rs's f917 haystack (no trailing newline). */
const TRIM_HAYSTACK = "     0123456789abcdefghijklmnopqrstuvwxyz";

/** binary.rs's haystack (13.0.0): "A Study in Scarlet" with one NUL byte past the first 64 KiB. */
const HAY: Content = { fixture: "sherlock-nul.txt" };

/** "Шерлок Холмс" in three encodings (feature.rs f1_*). */
const SJIS = { base64: "hFmEdYSChHyEgIR7IIRWhICEfIR9hIM=" };
const UTF16LE_BOM = { base64: "//4oBDUEQAQ7BD4EOgQgACUEPgQ7BDwEQQQ=" };
const EUCJP = { base64: "p7qn1qfip92n4KfcIKe3p+Cn3afep+M=" };

/** A UTF-16LE BOM then NUL, 'b' (feature.rs f1207_*). */
const BOM_NUL_B = { base64: "//4AYg==" };

type Setup = Omit<Case, "id" | "args" | "cwd">;
type Step = readonly string[] | { readonly args: readonly string[]; readonly cwd?: string };

/** One case per command of a multi-command test, all on the same files. */
function steps(id: string, setup: Setup, list: readonly Step[]): Case[] {
  return list.map((step, index) => {
    const { args, cwd } = Array.isArray(step)
      ? { args: step as readonly string[], cwd: undefined }
      : (step as { readonly args: readonly string[]; readonly cwd?: string });
    const name = index === 0 ? id : `${id}#${index + 1}`;
    return cwd === undefined ? { id: name, ...setup, args } : { id: name, ...setup, args, cwd };
  });
}

const sherlock = { sherlock: SHERLOCK };

const F45_RELATIVE_CWD: Setup = {
  files: {
    ".not-an-ignore": "foo\n/bar",
    "bar/test": "test",
    "baz/bar/test": "test",
    "baz/baz/bar/test": "test",
    "baz/foo": "test",
    "baz/test": "test",
    foo: "test",
    test: "test",
  },
};

const CONTEXT_SEP_FILE = { test: "foo\nctx\nbar\nctx\nfoo\nctx" };

const FEATURE: Case[] = [
  { id: "feature.rs:f1_sjis", files: { foo: SJIS }, args: ["-Esjis", "Шерлок Холмс"] },
  { id: "feature.rs:f1_utf16_auto", files: { foo: UTF16LE_BOM }, args: ["Шерлок Холмс"] },
  {
    id: "feature.rs:f1_utf16_explicit",
    files: { foo: UTF16LE_BOM },
    args: ["-Eutf-16le", "Шерлок Холмс"],
  },
  { id: "feature.rs:f1_eucjp", files: { foo: EUCJP }, args: ["-Eeuc-jp", "Шерлок Холмс"] },
  { id: "feature.rs:f1_unknown_encoding", args: ["-Efoobar"] },
  { id: "feature.rs:f1_replacement_encoding", args: ["-Ecsiso2022kr"] },
  {
    id: "feature.rs:f7",
    files: { ...sherlock, pat: "Sherlock\nHolmes" },
    args: ["-fpat", "sherlock"],
  },
  {
    id: "feature.rs:f7_stdin",
    files: sherlock,
    args: ["-f-"],
    skip: { kind: "stdin", why: "reads the patterns from a pipe on stdin (-f-)" },
  },
  {
    id: "feature.rs:f20_no_filename",
    files: sherlock,
    args: ["--no-filename", "--no-filename", "Sherlock"],
  },
  { id: "feature.rs:f34_only_matching", files: sherlock, args: ["-o", "Sherlock"] },
  {
    id: "feature.rs:f34_only_matching_line_column",
    files: sherlock,
    args: ["-o", "--column", "-n", "Sherlock"],
  },
  ...steps("feature.rs:f45_relative_cwd", F45_RELATIVE_CWD, [
    ["-l", "test"],
    ["-l", "test", "--ignore-file", ".not-an-ignore"],
    { args: ["--ignore-file", "../.not-an-ignore", "-l", "test"], cwd: "baz" },
  ]),
  {
    id: "feature.rs:f45_precedence_with_others",
    files: {
      ".not-an-ignore": "*.log",
      ".ignore": "!imp.log",
      "imp.log": "test",
      "wat.log": "test",
    },
    args: ["--ignore-file", ".not-an-ignore", "test"],
  },
  {
    id: "feature.rs:f45_precedence_internal",
    files: {
      ".not-an-ignore1": "*.log",
      ".not-an-ignore2": "!imp.log",
      "imp.log": "test",
      "wat.log": "test",
    },
    args: ["--ignore-file", ".not-an-ignore1", "--ignore-file", ".not-an-ignore2", "test"],
  },
  {
    id: "feature.rs:f68_no_ignore_vcs",
    dirs: [".git"],
    files: { ".gitignore": "foo", ".ignore": "bar", foo: "test", bar: "test" },
    args: ["--no-ignore-vcs", "test"],
  },
  { id: "feature.rs:f70_smart_case", files: sherlock, args: ["-S", "sherlock"] },
  {
    id: "feature.rs:f89_files_with_matches",
    files: sherlock,
    args: ["--null", "--files-with-matches", "Sherlock"],
  },
  {
    id: "feature.rs:f89_files_without_match",
    files: { ...sherlock, "file.py": "foo" },
    args: ["--null", "--files-without-match", "Sherlock"],
  },
  { id: "feature.rs:f89_count", files: sherlock, args: ["--null", "--count", "Sherlock"] },
  { id: "feature.rs:f89_files", files: sherlock, args: ["--null", "--files"] },
  { id: "feature.rs:f89_match", files: sherlock, args: ["--null", "-C1", "Sherlock"] },
  {
    id: "feature.rs:f109_max_depth",
    files: { "one/pass": "far", "one/too/many": "far" },
    args: ["--maxdepth", "2", "far"],
  },
  {
    id: "feature.rs:f109_case_sensitive_part1",
    files: { foo: "tEsT" },
    args: ["--smart-case", "--case-sensitive", "test"],
  },
  {
    id: "feature.rs:f109_case_sensitive_part2",
    files: { foo: "tEsT" },
    args: ["--ignore-case", "--case-sensitive", "test"],
  },
  {
    id: "feature.rs:f129_matches",
    files: { foo: "test\ntest abcdefghijklmnopqrstuvwxyz test" },
    args: ["-M26", "test"],
  },
  {
    id: "feature.rs:f129_context",
    files: { foo: "test\nabcdefghijklmnopqrstuvwxyz" },
    args: ["-M20", "-C1", "test"],
  },
  {
    id: "feature.rs:f129_replace",
    files: { foo: "test\ntest abcdefghijklmnopqrstuvwxyz test" },
    args: ["-M26", "-rfoo", "test"],
  },
  { id: "feature.rs:f159_max_count", files: { foo: "test\ntest" }, args: ["-m1", "test"] },
  { id: "feature.rs:f159_max_count_zero", files: { foo: "test\ntest" }, args: ["-m0", "test"] },
  // The first run is before the config file exists; the second needs RIPGREP_CONFIG_PATH.
  { id: "feature.rs:f196_persistent_config", files: sherlock, args: ["sherlock", "sherlock"] },
  {
    id: "feature.rs:f196_persistent_config#2",
    files: { ...sherlock, ".ripgreprc": "--ignore-case" },
    args: ["sherlock", "sherlock"],
    skip: { kind: "env", why: "reads its flags from RIPGREP_CONFIG_PATH=.ripgreprc" },
  },
  { id: "feature.rs:f243_column_line", files: { foo: "test" }, args: ["--column", "test"] },
  {
    id: "feature.rs:f263_sort_files",
    files: { foo: "test", abc: "test", zoo: "test", bar: "test" },
    args: ["--sort-files", "test"],
  },
  {
    id: "feature.rs:f263_sort_files_reverse",
    newer: true,
    files: { foo: "test", abc: "test", zoo: "test", bar: "test" },
    args: ["--sortr=path", "test"],
  },
  {
    id: "feature.rs:f275_pathsep",
    files: { "foo/bar": "test" },
    args: ["test", "--path-separator", "Z"],
  },
  {
    id: "feature.rs:f362_dfa_size_limit",
    files: sherlock,
    args: ["--dfa-size-limit", "10", "For\\s", "sherlock"],
  },
  {
    id: "feature.rs:f362_exceeds_regex_size_limit",
    args: ["--regex-size-limit", "10K", "[0-9]\\w+"],
  },
  {
    id: "feature.rs:f411_single_threaded_search_stats",
    files: sherlock,
    args: ["--stats", "Sherlock"],
    skip: { kind: "nondeterministic", why: "--stats prints elapsed seconds" },
  },
  {
    id: "feature.rs:f411_parallel_search_stats",
    files: { sherlock_1: SHERLOCK, sherlock_2: SHERLOCK },
    args: ["--stats", "Sherlock"],
    skip: { kind: "nondeterministic", why: "--stats prints elapsed seconds" },
  },
  {
    id: "feature.rs:f411_single_threaded_quiet_search_stats",
    newer: true,
    files: sherlock,
    args: ["--quiet", "-j1", "--stats", "Sherlock"],
    skip: { kind: "nondeterministic", why: "--stats prints elapsed seconds" },
  },
  {
    id: "feature.rs:f411_parallel_quiet_search_stats",
    newer: true,
    files: { sherlock_1: SHERLOCK, sherlock_2: SHERLOCK },
    args: ["-j2", "--quiet", "--stats", "Sherlock"],
    skip: { kind: "nondeterministic", why: "--stats prints elapsed seconds" },
  },
  {
    id: "feature.rs:f416_crlf",
    files: { sherlock: SHERLOCK_CRLF },
    args: ["--crlf", "Sherlock$", "sherlock"],
  },
  {
    id: "feature.rs:f416_crlf_multiline",
    files: { sherlock: SHERLOCK_CRLF },
    args: ["--crlf", "-U", "Sherlock$", "sherlock"],
  },
  {
    id: "feature.rs:f416_crlf_only_matching",
    files: { sherlock: SHERLOCK_CRLF },
    args: ["--crlf", "-o", "Sherlock$", "sherlock"],
  },
  {
    id: "feature.rs:f419_zero_as_shortcut_for_null",
    files: sherlock,
    args: ["-0", "--count", "Sherlock"],
  },
  ...steps(
    "feature.rs:f740_passthru",
    { files: { file: "\nfoo\nbar\nfoobar\n\nbaz\n", patterns: "foo\nbar\n" } },
    [
      ["-n", "--passthru", "foo", "file"],
      ["-n", "--passthru", "-e", "foo", "-e", "bar", "file"],
      ["-n", "--passthru", "-f", "patterns", "file"],
      ["-n", "--passthru", "-c", "foo", "file"],
      ["-n", "--passthru", "-o", "foo", "file"],
      ["-n", "--passthru", "-r", "wat", "foo", "file"],
    ],
  ),
  { id: "feature.rs:f948_exit_code_match", files: sherlock, args: ["."] },
  { id: "feature.rs:f948_exit_code_no_match", files: sherlock, args: ["NADA"] },
  { id: "feature.rs:f948_exit_code_error", files: sherlock, args: ["*"] },
  {
    id: "feature.rs:f917_trim",
    files: { sherlock: SHERLOCK_INDENTED },
    args: ["-n", "-B1", "-A2", "--trim", "Holmeses", "sherlock"],
  },
  {
    id: "feature.rs:f917_trim_match",
    files: { sherlock: SHERLOCK_INDENTED },
    args: ["-n", "-B1", "-A2", "--trim", "\\s+Holmeses", "sherlock"],
  },
  {
    id: "feature.rs:f917_trim_multi_standard",
    newer: true,
    files: { haystack: TRIM_HAYSTACK },
    args: ["--multiline", "--trim", "-r$0", "--no-filename", "a\\n?bc"],
  },
  {
    id: "feature.rs:f917_trim_max_columns_normal",
    newer: true,
    files: { haystack: TRIM_HAYSTACK },
    args: ["--trim", "--max-columns-preview", "-M8", "--no-filename", "abc"],
  },
  {
    id: "feature.rs:f917_trim_max_columns_matches",
    newer: true,
    files: { haystack: TRIM_HAYSTACK },
    args: [
      "--trim",
      "--max-columns-preview",
      "-M8",
      "--color=always",
      "--colors=path:none",
      "--no-filename",
      "abc",
    ],
    skip: { kind: "color", why: "--color=always: the match is printed with escape sequences" },
  },
  {
    id: "feature.rs:f917_trim_max_columns_multi_standard",
    newer: true,
    files: { haystack: TRIM_HAYSTACK },
    args: [
      "--multiline",
      "--trim",
      "--max-columns-preview",
      "-M8",
      "--color=always",
      "--colors=path:none",
      "--no-filename",
      "a\\n?bc",
    ],
    skip: { kind: "color", why: "--color=always: the match is printed with escape sequences" },
  },
  {
    id: "feature.rs:f917_trim_max_columns_multi_only_matching",
    newer: true,
    files: { haystack: TRIM_HAYSTACK },
    args: [
      "--multiline",
      "--trim",
      "--max-columns-preview",
      "-M8",
      "--only-matching",
      "--no-filename",
      ".*a\\n?bc.*",
    ],
  },
  {
    id: "feature.rs:f917_trim_max_columns_multi_per_match",
    newer: true,
    files: { haystack: TRIM_HAYSTACK },
    args: [
      "--multiline",
      "--trim",
      "--max-columns-preview",
      "-M8",
      "--vimgrep",
      "--no-filename",
      ".*a\\n?bc.*",
    ],
  },
  {
    id: "feature.rs:f993_null_data",
    files: { test: "foo\x00bar\x00\x00\x00baz\x00" },
    args: ["--null-data", ".+", "test"],
  },
  {
    id: "feature.rs:f1078_max_columns_preview1",
    files: sherlock,
    args: ["-M46", "--max-columns-preview", "exhibited|dusted|has to have it"],
  },
  {
    id: "feature.rs:f1078_max_columns_preview2",
    files: sherlock,
    args: ["-M43", "--max-columns-preview", "-rxxx", "exhibited|dusted|has to have it"],
  },
  ...steps(
    "feature.rs:f1138_no_ignore_dot",
    {
      dirs: [".git"],
      files: {
        ".gitignore": "foo",
        ".ignore": "bar",
        ".fzf-ignore": "quux",
        foo: "",
        bar: "",
        quux: "",
      },
    },
    [
      ["--sort", "path", "--files"],
      ["--sort", "path", "--files", "--no-ignore-dot"],
      ["--sort", "path", "--files", "--no-ignore-dot", "--ignore-file", ".fzf-ignore"],
    ],
  ),
  // Does nothing without PCRE2; its PCRE2 run is the test.
  {
    id: "feature.rs:f1155_auto_hybrid_regex",
    files: sherlock,
    args: ["--pcre2", "--no-pcre2", "--auto-hybrid-regex", "(?<=the )Sherlock"],
  },
  { id: "feature.rs:f1207_auto_encoding", files: { foo: BOM_NUL_B }, args: ["-a", "\\x00", "foo"] },
  {
    id: "feature.rs:f1207_ignore_encoding",
    files: { foo: BOM_NUL_B },
    args: ["--encoding", "none", "-a", "\\x00", "foo"],
  },
  ...steps(
    "feature.rs:f1414_no_require_git",
    { files: { ".gitignore": "foo", foo: "", bar: "" } },
    [
      ["--sort", "path", "--files"],
      ["--sort", "path", "--files", "--sort", "path", "--files", "--no-require-git"],
      [
        "--sort",
        "path",
        "--files",
        "--sort",
        "path",
        "--files",
        "--no-require-git",
        "--sort",
        "path",
        "--files",
        "--no-require-git",
        "--require-git",
      ],
    ],
  ),
  ...steps(
    "feature.rs:f1420_no_ignore_exclude",
    { files: { ".git/info/exclude": "foo", bar: "", foo: "" } },
    [
      ["--sort", "path", "--files"],
      ["--sort", "path", "--files", "--no-ignore-exclude"],
    ],
  ),
  ...steps(
    "feature.rs:f1466_no_ignore_files",
    { files: { ".myignore": "bar", bar: "", foo: "" } },
    [
      ["--sort", "path", "--files"],
      ["--sort", "path", "--files", "--ignore-file", ".myignore"],
      ["--sort", "path", "--files", "--ignore-file", ".myignore", "--no-ignore-files"],
      [
        "--sort",
        "path",
        "--files",
        "--ignore-file",
        ".myignore",
        "--no-ignore-files",
        "--ignore-files",
      ],
      ["--sort", "path", "--files", "--ignore-file", ".myignore"],
      ["--sort", "path", "--files", "--ignore-file", ".myignore", "-u"],
    ],
  ),
  {
    id: "feature.rs:f1404_nothing_searched_warning",
    files: { ".ignore": "ignored-dir/**", "ignored-dir/foo": "needle" },
    args: ["needle"],
  },
  {
    id: "feature.rs:f1404_nothing_searched_ignored",
    files: { ".ignore": "ignored-dir/**", "ignored-dir/foo": "needle" },
    args: ["--no-messages", "needle"],
  },
  ...steps("feature.rs:f1842_field_context_separator", { files: sherlock }, [
    ["-n", "-A1", "Doctor Watsons", "sherlock"],
    ["--field-context-separator", "!", "-n", "-A1", "Doctor Watsons", "sherlock"],
    ["--field-context-separator", "!!", "-n", "-A1", "Doctor Watsons", "sherlock"],
    ["--field-context-separator", "\\x7F", "-n", "-A1", "Doctor Watsons", "sherlock"],
    ["--field-context-separator", "", "-n", "-A1", "Doctor Watsons", "sherlock"],
  ]),
  ...steps("feature.rs:f1842_field_match_separator", { files: sherlock }, [
    ["-n", "Doctor Watsons", "sherlock"],
    ["--field-match-separator", "!", "-n", "Doctor Watsons", "sherlock"],
    ["--field-match-separator", "!!", "-n", "Doctor Watsons", "sherlock"],
    ["--field-match-separator", "\\x7F", "-n", "Doctor Watsons", "sherlock"],
    ["--field-match-separator", "", "-n", "Doctor Watsons", "sherlock"],
  ]),
  {
    id: "feature.rs:f2361_sort_nested_files",
    newer: true,
    files: { foo: "1", "dir/bar": "1" },
    times: { foo: 0, dir: [1, 2], "dir/bar": 2 },
    args: ["--sort", "accessed", "--files"],
  },
  // Both files rewritten: their mtime moves on, their atime does not.
  {
    id: "feature.rs:f2361_sort_nested_files#2",
    newer: true,
    files: { foo: "2", "dir/bar": "2" },
    times: { foo: [0, 3], dir: [1, 2], "dir/bar": [2, 4] },
    args: ["--sort", "accessed", "--files", "--sort", "accessed", "--files"],
  },
  {
    id: "feature.rs:no_context_sep",
    files: CONTEXT_SEP_FILE,
    args: ["-A1", "--no-context-separator", "foo", "test"],
  },
  {
    id: "feature.rs:no_context_sep_overrides",
    files: CONTEXT_SEP_FILE,
    args: ["-A1", "--context-separator", "AAA", "--no-context-separator", "foo", "test"],
  },
  {
    id: "feature.rs:no_context_sep_overridden",
    files: CONTEXT_SEP_FILE,
    args: ["-A1", "--no-context-separator", "--context-separator", "AAA", "foo", "test"],
  },
  {
    id: "feature.rs:context_sep",
    files: CONTEXT_SEP_FILE,
    args: ["-A1", "--context-separator", "AAA", "foo", "test"],
  },
  { id: "feature.rs:context_sep_default", files: CONTEXT_SEP_FILE, args: ["-A1", "foo", "test"] },
  {
    id: "feature.rs:context_sep_empty",
    files: CONTEXT_SEP_FILE,
    args: ["-A1", "--context-separator", "", "foo", "test"],
  },
  {
    id: "feature.rs:f2288_context_partial_override",
    newer: true,
    files: { test: "1\n2\n3\n4\n5\n6\n7\n8\n9\n" },
    args: ["-C1", "-A2", "5", "test"],
  },
  {
    id: "feature.rs:f2288_context_partial_override_rev",
    newer: true,
    files: { test: "1\n2\n3\n4\n5\n6\n7\n8\n9\n" },
    args: ["-A2", "-C1", "5", "test"],
  },
  { id: "feature.rs:no_unicode", files: { test: "δ" }, args: ["-i", "--no-unicode", "Δ"] },
  {
    id: "feature.rs:stop_on_nonmatch",
    newer: true,
    files: { test: "line1\nline2\nline3\nline4\nline5" },
    args: ["--stop-on-nonmatch", "[235]"],
    skip: { kind: "rg13-lacks-flag", why: "--stop-on-nonmatch arrived in ripgrep 14" },
  },
];

const R156 = `#parse('widgets/foo_bar_macros.vm')
#parse ( 'widgets/mobile/foo_bar_macros.vm' )
#parse ("widgets/foobarhiddenformfields.vm")
#parse ( "widgets/foo_bar_legal.vm" )
#include( 'widgets/foo_bar_tips.vm' )
#include('widgets/mobile/foo_bar_macros.vm')
#include ("widgets/mobile/foo_bar_resetpw.vm")
#parse('widgets/foo-bar-macros.vm')
#parse ( 'widgets/mobile/foo-bar-macros.vm' )
#parse ("widgets/foo-bar-hiddenformfields.vm")
#parse ( "widgets/foo-bar-legal.vm" )
#include( 'widgets/foo-bar-tips.vm' )
#include('widgets/mobile/foo-bar-macros.vm')
#include ("widgets/mobile/foo-bar-resetpw.vm")
`;

const R1559 =
  "type A struct {\n" +
  '\tTaskID int `json:"taskID"`\n' +
  "}\n" +
  "\n" +
  "type B struct {\n" +
  '\tObjectID string `json:"objectID"`\n' +
  '\tTaskID   int    `json:"taskID"`\n' +
  "}\n";

const R2095 =
  "#!/usr/bin/env bash\n\nzero=one\n\na=one\n\nif true; then\n" +
  "\ta=(\n\t\ta\n\t\tb\n\t\tc\n\t)\n\ttrue\nfi\n\na=two\n\nb=one\n});\n";

const R2208 = [
  "# Compile requirements.txt files from all found or specified requirements.in files (compile).",
  "# Use -h to include hashes, -u dep1,dep2... to upgrade specific dependencies, and -U to upgrade all.",
  "pipc () {  # [-h] [-U|-u <pkgspec>[,<pkgspec>...]] [<reqs-in>...] [-- <pip-compile-arg>...]",
  "    emulate -L zsh",
  "    unset REPLY",
  "    if [[ $1 == --help ]] { zpy $0; return }",
  "    [[ $ZPY_PROCS ]] || return",
  "",
  "    local gen_hashes upgrade upgrade_csv",
  "    while [[ $1 == -[hUu] ]] {",
  "        if [[ $1 == -h ]] { gen_hashes=--generate-hashes; shift   }",
  "        if [[ $1 == -U ]] { upgrade=1;                    shift   }",
  "        if [[ $1 == -u ]] { upgrade=1; upgrade_csv=$2;    shift 2 }",
  "    }",
  "}",
  "",
].join("\n");

const R3139 = `Start \n   \n\n   ${"X".repeat(26)}\n   ${"Y".repeat(74)}\n   \n      thing2 \n\n`;

const R1159: Setup = { files: { foo: "test" } };

const R1868: Setup = { files: { test: "foo\nbar\nbaz\nquux\n" } };

const R2711: Setup = { files: { "a/.ignore": ".foo", "a/b/.foo": "" } };

const R3108: Setup = { files: { "yes-match": "abc", "non-match": "xyz" } };

const REGRESSION: Case[] = [
  {
    id: "regression.rs:r16",
    dirs: [".git"],
    files: { ".gitignore": "ghi/", "ghi/toplevel.txt": "xyz", "def/ghi/subdir.txt": "xyz" },
    args: ["xyz"],
  },
  ...steps(
    "regression.rs:r25",
    { dirs: [".git"], files: { ".gitignore": "/llvm/", "src/llvm/foo": "test" } },
    [["test"], { args: ["test"], cwd: "src" }],
  ),
  {
    id: "regression.rs:r30",
    files: { ".gitignore": "vendor/**\n!vendor/manifest", "vendor/manifest": "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r49",
    files: { ".gitignore": "foo/bar", "test/foo/bar/baz": "test" },
    args: ["xyz"],
  },
  {
    id: "regression.rs:r50",
    files: { ".gitignore": "XXX/YYY/", "abc/def/XXX/YYY/bar": "test", "ghi/XXX/YYY/bar": "test" },
    args: ["xyz"],
  },
  {
    id: "regression.rs:r64",
    files: { "dir/abc": "", "foo/abc": "" },
    args: ["--files", "foo"],
  },
  {
    id: "regression.rs:r65",
    dirs: [".git"],
    files: { ".gitignore": "a/", "a/foo": "xyz", "a/bar": "xyz" },
    args: ["xyz"],
  },
  {
    id: "regression.rs:r67",
    dirs: [".git"],
    files: { ".gitignore": "/*\n!/dir", "foo/bar": "test", "dir/bar": "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r87",
    dirs: [".git"],
    files: { ".gitignore": "foo\n**no-vcs**", foo: "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r90",
    dirs: [".git"],
    files: { ".gitignore": "!.foo", ".foo": "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r93",
    files: { foo: "192.168.1.1" },
    args: ["(\\d{1,3}\\.){3}\\d{1,3}"],
  },
  {
    id: "regression.rs:r99",
    files: { foo1: "test", foo2: "zzz", bar: "test" },
    args: ["-j1", "--heading", "test"],
  },
  { id: "regression.rs:r105_part1", files: { foo: "zztest" }, args: ["--vimgrep", "test"] },
  { id: "regression.rs:r105_part2", files: { foo: "zztest" }, args: ["--column", "test"] },
  {
    id: "regression.rs:r127",
    dirs: [".git"],
    files: { ".gitignore": "foo/sherlock\n", "foo/sherlock": SHERLOCK, "foo/watson": SHERLOCK },
    args: ["Sherlock"],
  },
  {
    id: "regression.rs:r128",
    files: { foo: "01234567\x0b\n\x0b\n\x0b\n\x0b\nx" },
    args: ["-n", "x"],
  },
  {
    id: "regression.rs:r131",
    dirs: [".git"],
    files: { ".gitignore": "TopÑapa", TopÑapa: "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r137",
    files: sherlock,
    links: { sym1: "sherlock", sym2: "sherlock" },
    args: ["-j1", "Sherlock", "./", "sym1", "sym2"],
  },
  {
    id: "regression.rs:r156",
    files: { "testcase.txt": R156 },
    args: ["-N", "#(?:parse|include)\\s*\\(\\s*(?:\"|')[./A-Za-z_-]+(?:\"|')", "testcase.txt"],
  },
  ...steps("regression.rs:r184", { files: { ".gitignore": ".*", "foo/bar/baz": "test" } }, [
    ["test"],
    { args: ["test"], cwd: "foo/bar" },
  ]),
  { id: "regression.rs:r199", files: { foo: "tEsT" }, args: ["--smart-case", "\\btest\\b"] },
  { id: "regression.rs:r206", files: { "foo/bar.txt": "test" }, args: ["test", "-g", "*.txt"] },
  { id: "regression.rs:r228", dirs: ["foo"], args: ["--ignore-file", "foo", "test"] },
  { id: "regression.rs:r229", files: { foo: "economie" }, args: ["-S", "[E]conomie"] },
  {
    id: "regression.rs:r251",
    files: { foo: "привет\nПривет\nПрИвЕт" },
    args: ["-i", "привет"],
  },
  {
    id: "regression.rs:r256",
    files: { "bar/baz": "test" },
    links: { foo: "bar" },
    args: ["test", "foo"],
  },
  {
    id: "regression.rs:r256_j1",
    files: { "bar/baz": "test" },
    links: { foo: "bar" },
    args: ["-j1", "test", "foo"],
  },
  { id: "regression.rs:r270", files: { foo: "-test" }, args: ["-e", "-test"] },
  { id: "regression.rs:r279", files: { foo: "test" }, args: ["-q", "test"] },
  {
    id: "regression.rs:r391",
    dirs: [".git"],
    files: { lock: "", "bar.py": "", ".git/packed-refs": "", ".git/description": "" },
    args: [
      "--no-ignore",
      "--hidden",
      "--follow",
      "--files",
      "--glob",
      "!{.git,node_modules,plugged}/**",
      "--glob",
      "*.{js,json,php,md,styl,scss,sass,pug,html,config,py,cpp,c,go,hs}",
    ],
  },
  {
    id: "regression.rs:r405",
    files: { "foo/bar/file1.txt": "test", "bar/foo/file2.txt": "test" },
    args: ["-g", "!/foo/**", "test"],
  },
  {
    id: "regression.rs:r428_color_context_path",
    files: { sherlock: "foo\nbar" },
    args: ["-A1", "-H", "--no-heading", "-N", "--colors=match:none", "--color=always", "foo"],
    skip: { kind: "color", why: "asserts the escape sequences around a colored path" },
  },
  {
    id: "regression.rs:r428_unrecognized_style",
    files: { "file.txt": "Sherlock" },
    args: ["--colors=match:style:", "Sherlock"],
  },
  {
    id: "regression.rs:r451_only_matching_as_in_issue",
    files: { "digits.txt": "1 2 3\n" },
    args: ["--only-matching", "[0-9]+", "digits.txt"],
  },
  {
    id: "regression.rs:r451_only_matching",
    files: { "digits.txt": "1 2 3\n123\n" },
    args: ["--only-matching", "--column", "[0-9]", "digits.txt"],
  },
  {
    id: "regression.rs:r483_matching_no_stdout",
    files: { "file.py": "" },
    args: ["--quiet", "--files", "--glob", "*.py"],
  },
  {
    id: "regression.rs:r483_non_matching_exit_code",
    files: { "file.rs": "" },
    args: ["--quiet", "--files", "--glob", "*.py"],
  },
  {
    id: "regression.rs:r493",
    files: { "input.txt": "peshwaship 're seminomata" },
    args: ["-o", "\\b 're \\b", "input.txt"],
  },
  {
    id: "regression.rs:r506_word_not_parenthesized",
    files: { "wb.txt": "min minimum amin\nmax maximum amax" },
    args: ["-w", "-o", "min|max", "wb.txt"],
  },
  ...steps("regression.rs:r553_switch", { files: sherlock }, [
    ["-i", "sherlock"],
    ["-i", "sherlock", "-i"],
  ]),
  ...steps("regression.rs:r553_flag", { files: sherlock }, [
    ["-C", "1", "world|attached", "sherlock"],
    ["-C", "1", "world|attached", "sherlock", "-C", "0"],
  ]),
  ...steps("regression.rs:r568_leading_hyphen_option_args", { files: { file: "foo bar -baz\n" } }, [
    ["-e-baz", "-e", "-baz", "file"],
    ["-rni", "bar", "file"],
    ["-r", "-n", "-i", "bar", "file"],
  ]),
  {
    id: "regression.rs:r599",
    files: { "input.txt": "\n\ntest\n" },
    args: [
      "--color",
      "ansi",
      "--colors",
      "path:none",
      "--colors",
      "line:none",
      "--colors",
      "match:fg:red",
      "--colors",
      "match:style:nobold",
      "--line-number",
      "^$",
      "input.txt",
    ],
    skip: { kind: "color", why: "asserts the escape sequences of --color ansi" },
  },
  {
    id: "regression.rs:r693_context_in_contextless_mode",
    files: { foo: "xyz\n", bar: "xyz\n" },
    args: ["-C1", "-c", "--sort-files", "xyz"],
  },
  {
    id: "regression.rs:r807",
    dirs: [".git"],
    files: { ".gitignore": ".a/b", ".a/b/file": "test", ".a/c/file": "test" },
    args: ["--hidden", "test"],
  },
  { id: "regression.rs:r900", files: { ...sherlock, pat: "" }, args: ["-fpat", "sherlock"] },
  { id: "regression.rs:r1064", files: { input: "abc" }, args: ["a(.*c)"] },
  {
    id: "regression.rs:r1098",
    dirs: [".git"],
    files: { ".gitignore": "a**b", afoob: "test" },
    args: ["test"],
  },
  ...steps("regression.rs:r1130", { files: { foo: "test" } }, [
    ["--files-with-matches", "test", "foo"],
    ["--files-without-match", "nada", "foo"],
  ]),
  { id: "regression.rs:r1159_invalid_flag", args: ["--wat"] },
  ...steps("regression.rs:r1159_exit_status", R1159, [
    ["test"],
    ["-q", "test"],
    ["test", "no-file"],
    ["-q", "test", "foo", "no-file"],
    ["nada"],
    ["-q", "nada"],
    ["nada", "no-file"],
    ["-q", "nada", "foo", "no-file"],
  ]),
  { id: "regression.rs:r1163", files: { "bom.txt": "\uFEFFtest123\ntest123" }, args: ["^test123"] },
  ...steps(
    "regression.rs:r1164",
    { dirs: [".git"], files: { ".gitignore": "myfile", MYFILE: "test" } },
    [
      ["--ignore-file-case-insensitive", "test"],
      ["--ignore-file-case-insensitive", "test", "--no-ignore-file-case-insensitive"],
    ],
  ),
  {
    id: "regression.rs:r1173",
    dirs: [".git"],
    files: { ".gitignore": "**", foo: "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r1174",
    dirs: [".git"],
    files: { ".gitignore": "**/**/*", "a/foo": "test" },
    args: ["test"],
  },
  {
    id: "regression.rs:r1176_literal_file",
    files: { patterns: "foo(bar\n", test: "foo(bar" },
    args: ["-F", "-f", "patterns", "test"],
  },
  {
    id: "regression.rs:r1176_line_regex",
    files: { patterns: "foo\n", test: "foobar\nfoo\nbarfoo\n" },
    args: ["-x", "-f", "patterns", "test"],
  },
  ...steps("regression.rs:r1203_reverse_suffix_literal", { files: { test: "153.230000\n" } }, [
    ["\\d\\d\\d00", "test"],
    ["\\d\\d\\d000", "test"],
  ]),
  {
    id: "regression.rs:r1223_no_dir_check_for_default_path",
    dirs: ["-"],
    files: { "a.json": "{}", "a.txt": "some text" },
    args: ["a"],
    skip: { kind: "stdin", why: "searches text piped on stdin while a directory named '-' exists" },
  },
  ...steps(
    "regression.rs:r1259_drop_last_byte_nonl",
    { files: { "patterns-nonl": "[foo]", "patterns-nl": "[foo]\n", test: "fz" } },
    [
      ["-f", "patterns-nonl", "test"],
      ["-f", "patterns-nl", "test"],
    ],
  ),
  {
    id: "regression.rs:r1311_multi_line_term_replace",
    files: { input: "hello\nworld\n" },
    args: ["-U", "-r?", "-n", "\n", "input"],
  },
  {
    id: "regression.rs:r1319",
    files: { input: "CCAGCTACTCGGGAGGCTGAGGCTGGAGGATCGCTTGAGTCCAGGAGTTC" },
    args: ["TTGAGTCCAGGAG[ATCG]{2}C"],
  },
  {
    id: "regression.rs:r1334_crazy_literals",
    files: { patterns: "1.208.0.0/12\n".repeat(40), corpus: "1.208.0.0/12\n" },
    args: ["-Ff", "patterns", "corpus"],
  },
  ...steps(
    "regression.rs:r1334_invert_empty_patterns",
    {
      newer: true,
      files: { "zero-patterns": "", "one-pattern": "\n", haystack: "one\ntwo\nthree\n" },
    },
    [
      ["-f", "zero-patterns", "haystack"],
      ["-f", "one-pattern", "haystack"],
      ["-vf", "zero-patterns", "haystack"],
      ["-vf", "one-pattern", "haystack"],
    ],
  ),
  {
    id: "regression.rs:r1380",
    files: { foo: "a\nb\nc\nd\ne\nd\ne\nd\ne\nd\ne\n" },
    args: ["-A2", "-m1", "d", "foo"],
  },
  {
    id: "regression.rs:r1389_bad_symlinks_no_biscuit",
    files: { "mydir/file.txt": "test" },
    links: { mylink: "mydir" },
    args: ["test", "--no-ignore", "--sort", "path", "mylink"],
  },
  // r1401, r1412, r1573, r3139: no-ops without PCRE2; their PCRE2 run is the test.
  ...steps(
    "regression.rs:r1401_look_ahead_only_matching_1",
    { files: { "ip.txt": "foo 42\nxoyz\ncat\tdog\n" } },
    [
      ["--pcre2", "-No", ".*o(?!.*\\s)", "ip.txt"],
      ["--pcre2", "-No", ".*o(?!.*[ \\t])", "ip.txt"],
    ],
  ),
  {
    id: "regression.rs:r1401_look_ahead_only_matching_2",
    files: { "ip.txt": "foo 42\nxoyz\ncat\tdog\nfoo" },
    args: ["--pcre2", "-No", ".*o(?!.*\\s)", "ip.txt"],
  },
  {
    id: "regression.rs:r1412_look_behind_no_replacement",
    files: { test: "foo\nbar\n" },
    args: ["--pcre2", "-nU", "-rquux", "(?<=foo\\n)bar", "test"],
  },
  {
    id: "regression.rs:r1446_respect_excludes_in_worktree",
    files: {
      "repo/.git/info/exclude": "ignored",
      "repo/.git/worktrees/repotree/commondir": "../..",
      "repotree/.git": "gitdir: repo/.git/worktrees/repotree",
      "repotree/ignored": "",
      "repotree/not-ignored": "",
    },
    args: ["--sort", "path", "--files", "repotree"],
  },
  { id: "regression.rs:r1537", files: { foo: "abc;de,fg" }, args: [";(.*,){1}"] },
  { id: "regression.rs:r1559", files: { foo: R1559 }, args: ["TaskID +int"] },
  ...steps("regression.rs:r1573", { files: { foo: "def A;\ndef B;\nuse A;\nuse B;\n" } }, [
    ["--pcre2", "--pcre2", "--multiline", "--count", "(?s)def (\\w+);(?=.*use \\w+)", "foo"],
    [
      "--pcre2",
      "--pcre2",
      "--multiline",
      "--count-matches",
      "(?s)def (\\w+);(?=.*use \\w+)",
      "foo",
    ],
  ]),
  { id: "regression.rs:r1638", files: { foo: { base64: "77u/eA==" } }, args: ["--column", "x"] },
  {
    id: "regression.rs:r1739_replacement_lineterm_match",
    files: { test: "a\n" },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ripgrep's replacement syntax, not JavaScript's.
    args: ["-r${0}f", ".*", "test"],
  },
  ...steps(
    "regression.rs:f1757",
    {
      newer: true,
      files: {
        ".ignore": "rust/target",
        "rust/source.rs": "needle",
        "rust/target/rustdoc-output.html": "needle",
      },
    },
    [
      ["--files-with-matches", "needle", "rust"],
      ["--files-with-matches", "needle", "./rust"],
    ],
  ),
  // The test then overwrites .ignore and adds rust1/ next to rust/.
  ...steps(
    "regression.rs:f1757",
    {
      newer: true,
      files: {
        ".ignore": "rust1/target/onemore",
        "rust/source.rs": "needle",
        "rust/target/rustdoc-output.html": "needle",
        "rust1/source.rs": "needle",
        "rust1/target/onemore/rustdoc-output.html": "needle",
      },
    },
    [
      ["--files-with-matches", "needle", "rust1"],
      ["--files-with-matches", "needle", "./rust1"],
    ],
  ).map((c, index) => ({ ...c, id: `regression.rs:f1757#${index + 3}` })),
  {
    id: "regression.rs:r1765",
    files: { test: "\n" },
    args: ["x?", "--crlf", "--color", "always"],
    skip: { kind: "color", why: "the bug only showed with --color always; output is colored" },
  },
  ...steps(
    "regression.rs:r1838_nul_error_with_binary_detection",
    { newer: true, files: { test: "foo\n" } },
    [["foo\\x00?"], ["-a", "foo\\x00?"]],
  ),
  {
    id: "regression.rs:r1866",
    files: { test: "foobar\nfoobar\nfoo quux" },
    args: ["--multiline", "--vimgrep", "foobar\\nfoobar\\nfoo|quux", "test"],
  },
  ...steps("regression.rs:r1868_context_passthru_override", R1868, [
    ["-C1", "bar", "test"],
    ["--passthru", "bar", "test"],
    ["--passthru", "-C1", "bar", "test"],
    ["-C1", "--passthru", "bar", "test"],
    ["--passthru", "-B1", "bar", "test"],
    ["-B1", "--passthru", "bar", "test"],
    ["--passthru", "-A1", "bar", "test"],
    ["-A1", "--passthru", "bar", "test"],
  ]),
  ...steps("regression.rs:r1878", { files: { test: "a\nbaz\nabc\n" } }, [
    ["-U", "--no-mmap", "^baz", "test"],
    ["-U", "--mmap", "^baz", "test"],
    ["-U", "--no-mmap", "(?-m)^baz", "test"],
    ["-U", "--mmap", "(?-m)^baz", "test"],
    ["-U", "--no-mmap", "\\Abaz", "test"],
    ["-U", "--mmap", "\\Abaz", "test"],
  ]),
  { id: "regression.rs:r1891", newer: true, files: { test: "\n##\n" }, args: ["-won", "", "test"] },
  {
    id: "regression.rs:r2094",
    newer: true,
    files: { haystack: "a\nb\nc\na\nb\nc" },
    args: [
      "--no-line-number",
      "--no-filename",
      "--multiline",
      "--max-count=1",
      "--passthru",
      "--replace=B",
      "b",
      "haystack",
    ],
  },
  {
    id: "regression.rs:r2095",
    newer: true,
    files: { test: R2095 },
    args: [
      "--line-number",
      "--multiline",
      "--only-matching",
      "--replace",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: ripgrep's replacement syntax, not JavaScript's.
      "${value}",
      "^(?P<indent>\\s*)a=(?P<value>(?ms:[(].*?[)])|.*?)$",
      "test",
    ],
  },
  ...steps(
    "regression.rs:r2198",
    { newer: true, files: { ".ignore": "a", ".rgignore": "b", a: "", b: "", c: "" } },
    [
      ["--files", "--sort", "path"],
      ["--files", "--sort", "path", "--no-ignore-dot"],
    ],
  ),
  {
    id: "regression.rs:r2208",
    newer: true,
    files: { test: R2208 },
    args: [
      "-N",
      "-U",
      "-r",
      "$usage",
      '^(?P<predoc>\\n?(# .*\\n)*)(alias (?P<aname>pipc)="[^"]+"|(?P<fname>pipc) \\(\\) \\{)(  #(?P<usage> .+))?',
      "test",
    ],
  },
  {
    id: "regression.rs:r2236",
    newer: true,
    files: { ".ignore": "foo\\/", "foo/bar": "test\n" },
    args: ["test"],
  },
  ...steps("regression.rs:r2480", { newer: true, files: { file: "FooBar\n" } }, [
    ["-e", "", "file"],
    ["-e", ")(", "file"],
    ["--only-matching", "-e", "Foo", "-e", "Bar", "file"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ripgrep's replacement syntax, not JavaScript's.
    ["-e", "Fo(oB)a(r)", "--replace", "${0}_${1}_${2}${3}", "file"],
    ["--only-matching", "-e", "(?i)foo", "-e", "bar", "file"],
    ["--only-matching", "-e", "(?i)notfoo", "-e", "bar", "file"],
  ]),
  {
    id: "regression.rs:r2574",
    newer: true,
    files: { haystack: "some.domain.com\nsome.domain.com/x\n" },
    args: ["--no-filename", "--no-unicode", "-w", "-o", "(\\w+\\.)*domain\\.(\\w+)"],
  },
  {
    id: "regression.rs:r2658_null_data_line_regexp",
    newer: true,
    files: { haystack: "foo\x00bar\x00quux\x00" },
    args: ["--null-data", "--line-regexp", "bar"],
  },
  ...steps("regression.rs:r2711", { newer: true, ...R2711 }, [
    ["--hidden", "--files"],
    ["--hidden", "--files", "./"],
    ["--hidden", "--files", "a"],
    ["--hidden", "--files", "a/b"],
    ["--hidden", "--files", "./a"],
    { args: ["--hidden", "--files"], cwd: "a" },
    { args: ["--hidden", "--files"], cwd: "a/b" },
    { args: ["--hidden", "--files"], cwd: "./a" },
  ]),
  ...steps(
    "regression.rs:r2770_gitignore_error",
    { newer: true, files: { ".git": "", ".gitignore": "**/bar/*", "foo/bar/baz": "quux" } },
    [["-l", "quux"], { args: ["-l", "quux"], cwd: "foo" }],
  ),
  {
    id: "regression.rs:r2944_incorrect_bytes_searched",
    newer: true,
    files: { haystack: "foo1\nfoo2\nfoo3\nfoo4\nfoo5\n" },
    args: ["--stats", "-m2", "foo", "."],
    skip: { kind: "nondeterministic", why: "--stats prints elapsed seconds" },
  },
  ...steps(
    "regression.rs:r2990_trip_over_trailing_dot",
    { newer: true, files: { "asdf/foo": "", "asdf./foo": "" } },
    [
      ["--files", "-g", "!asdf/"],
      ["--files", "-g", "!asdf./"],
    ],
  ),
  {
    id: "regression.rs:r3067_gitignore_error",
    newer: true,
    dirs: ["foobar/debug"],
    files: {
      ".git": "",
      ".gitignore": "foobar/debug",
      "foobar/some/debug/flag": "baz",
      "foobar/debug/flag2": "baz",
    },
    args: ["baz"],
  },
  // Commands the Rust test runs twice (once for the status, once for stdout) appear once.
  ...steps("regression.rs:r3108_files_without_match_quiet_exit", { newer: true, ...R3108 }, [
    ["-q", "abc", "non-match"],
    ["-q", "abc", "yes-match"],
    ["--files-with-matches", "-q", "abc", "non-match"],
    ["--files-with-matches", "-q", "abc", "yes-match"],
    ["--files-without-match", "abc", "non-match"],
    ["--files-without-match", "abc", "yes-match"],
    ["--files-without-match", "-q", "abc", "non-match"],
    ["--files-without-match", "-q", "abc", "yes-match"],
  ]),
  {
    id: "regression.rs:r3127_gitignore_allow_unclosed_class",
    newer: true,
    dirs: [".git"],
    files: { ".gitignore": "[abc", "[abc": "", test: "" },
    args: ["--files"],
  },
  {
    id: "regression.rs:r3127_glob_flag_not_allow_unclosed_class",
    newer: true,
    files: { "[abc": "", test: "" },
    args: ["--files", "-g", "[abc"],
  },
  ...steps(
    "regression.rs:r3139_multiline_lookahead_files_with_matches",
    { newer: true, files: { test: R3139 } },
    [
      ["--pcre2", "--multiline", "--pcre2", "(?s)Start(?=.*thing2)", "test"],
      [
        "--pcre2",
        "--multiline",
        "--pcre2",
        "--files-with-matches",
        "(?s)Start(?=.*thing2)",
        "test",
      ],
    ],
  ),
  ...steps(
    "regression.rs:r3173_hidden_whitelist_only_dot",
    { newer: true, files: { "subdir/.foo.txt": "text", ".ignore": "!.foo.txt" } },
    [
      ["--files"],
      ["--files", "."],
      ["--files", "./"],
      { args: ["--files"], cwd: "subdir" },
      { args: ["--files", "."], cwd: "subdir" },
      { args: ["--files", "./"], cwd: "subdir" },
    ],
  ),
  {
    id: "regression.rs:r3179_global_gitignore_cwd",
    newer: true,
    files: { "a/b/c/haystack": "", ".test.gitignore": "/haystack" },
    args: ["--files", "--ignore-file", `${CASE_DIR}/.test.gitignore`, CASE_DIR],
    cwd: "a/b/c",
  },
  {
    id: "regression.rs:r3180_look_around_panic",
    newer: true,
    files: { haystack: " b b b b b b b b\nc\n" },
    args: ["(^|[^a-z])((([a-z]+)?)\\s)?b(\\s([a-z]+)?)($|[^a-z])", "haystack", "-U", "-rx"],
  },
  {
    id: "regression.rs:r3275_git_global_config_env",
    newer: true,
    dirs: ["foo"],
    files: {
      ".git": "",
      "foo/foo1": "",
      "foo/foo2": "",
      "global-excludes-nonstandard": "foo2",
      "global-config-nonstandard":
        "[core]\n\texcludesFile = <case dir>/global-excludes-nonstandard",
    },
    args: ["--files", "foo"],
    skip: { kind: "env", why: "points GIT_CONFIG_GLOBAL at a git config naming an excludes file" },
  },
  ...steps(
    "regression.rs:r829_original",
    { newer: true, files: { ".ignore": "/a/b", "a/b/test.txt": "Sample text" } },
    [["Sample"], ["Sample", "a"], { args: ["Sample"], cwd: "a" }],
  ),
  ...steps(
    "regression.rs:r829_2731",
    {
      newer: true,
      files: { "some_dir/build/foo": "string", ".ignore": "build/\n!/some_dir/build/" },
    },
    [
      ["-l", "string"],
      ["-l", "string", "some_dir"],
      ["-l", "string", "./some_dir"],
      ["-l", "string", "some_dir/build"],
      ["-l", "string", "./some_dir/build"],
    ],
  ),
  ...steps(
    "regression.rs:r829_2747",
    { newer: true, files: { "a/c/b/foo": "", "a/src/f/b/foo": "", ".ignore": "/a/*/b" } },
    [["--files"], ["--files", "a/src"], { args: ["--files"], cwd: "a/src" }],
  ),
  ...steps(
    "regression.rs:r829_2778",
    {
      newer: true,
      files: {
        ".ignore": "/parent/*.txt",
        "parent/ignore-me.txt": "",
        "parent/subdir/dont-ignore-me.txt": "",
      },
    },
    [["--files"], { args: ["--files"], cwd: "parent" }],
  ),
  ...steps(
    "regression.rs:r829_2836",
    { newer: true, files: { ".ignore": "/testdir/sub/sub2/\n", "testdir/sub/sub2/foo": "" } },
    [["--files"], { args: ["--files"], cwd: "testdir" }],
  ),
  {
    id: "regression.rs:r829_2933",
    newer: true,
    files: { ".ignore": "/testdir/sub/sub2/", "testdir/sub/sub2/testfile": "needle" },
    args: ["--files-with-matches", "needle"],
    cwd: "testdir",
  },
];

/** misc.rs's sort_setup: a, dir, dir/c, b, dir/d made in that order, 100 ms apart. */
const SORT_SETUP: Setup = {
  files: { a: "test", "dir/c": "test", b: "test", "dir/d": "test" },
  // Making dir/c and dir/d moves dir's mtime on, not its atime.
  times: { a: 0, dir: [1, 4], "dir/c": 2, b: 3, "dir/d": 4 },
};

const ZIP_SKIP = (tool: string): Skip => ({
  kind: "external",
  why: `-z runs ${tool} on ripgrep's compressed fixture`,
});

const MISC: Case[] = [
  { id: "misc.rs:single_file", files: sherlock, args: ["Sherlock", "sherlock"] },
  { id: "misc.rs:dir", files: sherlock, args: ["Sherlock"] },
  { id: "misc.rs:line_numbers", files: sherlock, args: ["-n", "Sherlock", "sherlock"] },
  { id: "misc.rs:columns", files: sherlock, args: ["--column", "Sherlock", "sherlock"] },
  { id: "misc.rs:with_filename", files: sherlock, args: ["-H", "Sherlock", "sherlock"] },
  {
    id: "misc.rs:with_heading",
    files: sherlock,
    args: ["--with-filename", "--heading", "Sherlock", "sherlock"],
  },
  {
    id: "misc.rs:with_heading_default",
    files: { ...sherlock, foo: "Sherlock Holmes lives on Baker Street." },
    args: ["-j1", "--heading", "Sherlock"],
  },
  { id: "misc.rs:inverted", files: sherlock, args: ["-v", "Sherlock", "sherlock"] },
  {
    id: "misc.rs:inverted_line_numbers",
    files: sherlock,
    args: ["-n", "-v", "Sherlock", "sherlock"],
  },
  { id: "misc.rs:case_insensitive", files: sherlock, args: ["-i", "sherlock", "sherlock"] },
  { id: "misc.rs:word", files: sherlock, args: ["-w", "as", "sherlock"] },
  {
    id: "misc.rs:word_period",
    newer: true,
    files: { haystack: "..." },
    args: ["-ow", ".", "haystack"],
  },
  {
    id: "misc.rs:line",
    files: sherlock,
    args: ["-x", "Watson|and exhibited clearly, with a label attached.", "sherlock"],
  },
  {
    id: "misc.rs:literal",
    files: { ...sherlock, file: "blib\n()\nblab\n" },
    args: ["-F", "()", "file"],
  },
  { id: "misc.rs:quiet", files: sherlock, args: ["-q", "Sherlock", "sherlock"] },
  { id: "misc.rs:replace", files: sherlock, args: ["-r", "FooBar", "Sherlock", "sherlock"] },
  {
    id: "misc.rs:replace_groups",
    files: sherlock,
    args: ["-r", "$2, $1", "([A-Z][a-z]+) ([A-Z][a-z]+)", "sherlock"],
  },
  {
    id: "misc.rs:replace_named_groups",
    files: sherlock,
    args: ["-r", "$last, $first", "(?P<first>[A-Z][a-z]+) (?P<last>[A-Z][a-z]+)", "sherlock"],
  },
  {
    id: "misc.rs:replace_with_only_matching",
    files: sherlock,
    args: ["-o", "-r", "$1", "of (\\w+)", "sherlock"],
  },
  {
    id: "misc.rs:file_types",
    files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock" },
    args: ["-t", "rust", "Sherlock"],
  },
  {
    id: "misc.rs:file_types_all",
    files: { ...sherlock, "file.py": "Sherlock" },
    args: ["-t", "all", "Sherlock"],
  },
  // The test makes sherlock and removes it again.
  {
    id: "misc.rs:file_types_negate",
    files: { "file.py": "Sherlock", "file.rs": "Sherlock" },
    args: ["-T", "rust", "Sherlock"],
  },
  {
    id: "misc.rs:file_types_negate_all",
    files: { ...sherlock, "file.py": "Sherlock" },
    args: ["-T", "all", "Sherlock"],
  },
  {
    id: "misc.rs:file_type_clear",
    files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock" },
    args: ["--type-clear", "rust", "-t", "rust", "Sherlock"],
  },
  {
    id: "misc.rs:file_type_add",
    files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock", "file.wat": "Sherlock" },
    args: ["--type-add", "wat:*.wat", "-t", "wat", "Sherlock"],
  },
  {
    id: "misc.rs:file_type_add_compose",
    files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock", "file.wat": "Sherlock" },
    args: [
      "--type-add",
      "wat:*.wat",
      "--type-add",
      "combo:include:wat,py",
      "-t",
      "combo",
      "Sherlock",
    ],
  },
  {
    id: "misc.rs:glob",
    files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock" },
    args: ["-g", "*.rs", "Sherlock"],
  },
  // The test makes sherlock and removes it again.
  {
    id: "misc.rs:glob_negate",
    files: { "file.py": "Sherlock", "file.rs": "Sherlock" },
    args: ["-g", "!*.rs", "Sherlock"],
  },
  {
    id: "misc.rs:glob_case_insensitive",
    files: { ...sherlock, "file.HTML": "Sherlock" },
    args: ["--iglob", "*.html", "Sherlock"],
  },
  {
    id: "misc.rs:glob_case_sensitive",
    files: { ...sherlock, "file1.HTML": "Sherlock", "file2.html": "Sherlock" },
    args: ["--glob", "*.html", "Sherlock"],
  },
  {
    id: "misc.rs:glob_always_case_insensitive",
    files: { ...sherlock, "file.HTML": "Sherlock" },
    args: ["--glob-case-insensitive", "--glob", "*.html", "Sherlock"],
  },
  { id: "misc.rs:byte_offset_only_matching", files: sherlock, args: ["-b", "-o", "Sherlock"] },
  { id: "misc.rs:count", files: sherlock, args: ["--count", "Sherlock"] },
  { id: "misc.rs:count_matches", files: sherlock, args: ["--count-matches", "the"] },
  {
    id: "misc.rs:count_matches_inverted",
    files: sherlock,
    args: ["--count-matches", "--invert-match", "Sherlock"],
  },
  {
    id: "misc.rs:count_matches_via_only",
    files: sherlock,
    args: ["--count", "--only-matching", "the"],
  },
  { id: "misc.rs:include_zero", files: sherlock, args: ["--count", "--include-zero", "nada"] },
  {
    id: "misc.rs:include_zero_override",
    files: sherlock,
    args: ["--count", "--include-zero", "--no-include-zero", "nada"],
  },
  { id: "misc.rs:files_with_matches", files: sherlock, args: ["--files-with-matches", "Sherlock"] },
  {
    id: "misc.rs:files_without_match",
    files: { ...sherlock, "file.py": "foo" },
    args: ["--files-without-match", "Sherlock"],
  },
  { id: "misc.rs:after_context", files: sherlock, args: ["-A", "1", "Sherlock", "sherlock"] },
  {
    id: "misc.rs:after_context_line_numbers",
    files: sherlock,
    args: ["-A", "1", "-n", "Sherlock", "sherlock"],
  },
  { id: "misc.rs:before_context", files: sherlock, args: ["-B", "1", "Sherlock", "sherlock"] },
  {
    id: "misc.rs:before_context_line_numbers",
    files: sherlock,
    args: ["-B", "1", "-n", "Sherlock", "sherlock"],
  },
  { id: "misc.rs:context", files: sherlock, args: ["-C", "1", "world|attached", "sherlock"] },
  {
    id: "misc.rs:context_line_numbers",
    files: sherlock,
    args: ["-C", "1", "-n", "world|attached", "sherlock"],
  },
  {
    id: "misc.rs:max_filesize_parse_error_length",
    args: ["--max-filesize", "44444444444444444444"],
  },
  { id: "misc.rs:max_filesize_parse_error_suffix", args: ["--max-filesize", "45k"] },
  {
    id: "misc.rs:max_filesize_parse_no_suffix",
    files: { foo: { size: 40 }, bar: { size: 60 } },
    args: ["--max-filesize", "50", "--files"],
  },
  {
    id: "misc.rs:max_filesize_parse_k_suffix",
    files: { foo: { size: 3048 }, bar: { size: 4100 } },
    args: ["--max-filesize", "4K", "--files"],
  },
  {
    id: "misc.rs:max_filesize_parse_m_suffix",
    files: { foo: { size: 1000000 }, bar: { size: 1400000 } },
    args: ["--max-filesize", "1M", "--files"],
  },
  {
    id: "misc.rs:max_filesize_suffix_overflow",
    files: { foo: { size: 1000000 } },
    args: ["--max-filesize", "34359738368G", "--files"],
  },
  { id: "misc.rs:ignore_hidden", files: { ".sherlock": SHERLOCK }, args: ["Sherlock"] },
  {
    id: "misc.rs:no_ignore_hidden",
    files: { ".sherlock": SHERLOCK },
    args: ["--hidden", "Sherlock"],
  },
  {
    id: "misc.rs:ignore_git",
    dirs: [".git"],
    files: { ...sherlock, ".gitignore": "sherlock\n" },
    args: ["Sherlock"],
  },
  {
    id: "misc.rs:ignore_generic",
    files: { ...sherlock, ".ignore": "sherlock\n" },
    args: ["Sherlock"],
  },
  {
    id: "misc.rs:ignore_ripgrep",
    files: { ...sherlock, ".rgignore": "sherlock\n" },
    args: ["Sherlock"],
  },
  {
    id: "misc.rs:no_ignore",
    files: { ...sherlock, ".gitignore": "sherlock\n" },
    args: ["--no-ignore", "Sherlock"],
  },
  {
    id: "misc.rs:ignore_git_parent",
    dirs: [".git"],
    files: { ".gitignore": "sherlock\n", "foo/sherlock": SHERLOCK },
    args: ["Sherlock"],
    cwd: "foo",
  },
  {
    id: "misc.rs:ignore_git_parent_stop",
    dirs: ["foo/.git"],
    files: { ".gitignore": "sherlock\n", "foo/bar/sherlock": SHERLOCK },
    args: ["Sherlock"],
    cwd: "foo/bar",
  },
  {
    id: "misc.rs:ignore_git_parent_stop_file",
    files: { ".gitignore": "sherlock\n", "foo/.git": "", "foo/bar/sherlock": SHERLOCK },
    args: ["Sherlock"],
    cwd: "foo/bar",
  },
  {
    id: "misc.rs:ignore_ripgrep_parent_no_stop",
    dirs: ["foo/.git"],
    files: { ".rgignore": "sherlock\n", "foo/bar/sherlock": SHERLOCK },
    args: ["Sherlock"],
    cwd: "foo/bar",
  },
  {
    id: "misc.rs:no_parent_ignore_git",
    dirs: [".git"],
    files: {
      ".gitignore": "sherlock\n",
      "foo/.gitignore": "watson\n",
      "foo/sherlock": SHERLOCK,
      "foo/watson": SHERLOCK,
    },
    args: ["--no-ignore-parent", "Sherlock"],
    cwd: "foo",
  },
  {
    id: "misc.rs:symlink_nofollow",
    files: { "foo/baz/sherlock": SHERLOCK },
    dirs: ["foo/bar"],
    links: { "foo/bar/baz": "foo/baz" },
    args: ["Sherlock"],
    cwd: "foo/bar",
  },
  {
    id: "misc.rs:symlink_follow",
    files: { "foo/baz/sherlock": SHERLOCK },
    dirs: ["foo/bar"],
    links: { "foo/bar/baz": "foo/baz" },
    args: ["-L", "Sherlock"],
    cwd: "foo/bar",
  },
  {
    id: "misc.rs:unrestricted1",
    files: { ...sherlock, ".gitignore": "sherlock\n" },
    args: ["-u", "Sherlock"],
  },
  { id: "misc.rs:unrestricted2", files: { ".sherlock": SHERLOCK }, args: ["-uu", "Sherlock"] },
  {
    id: "misc.rs:unrestricted3",
    files: { ...sherlock, hay: "foo\x00bar\nfoo\x00baz\n" },
    args: ["-uuu", "foo"],
  },
  { id: "misc.rs:vimgrep", files: sherlock, args: ["--vimgrep", "Sherlock|Watson"] },
  { id: "misc.rs:vimgrep_no_line", files: sherlock, args: ["--vimgrep", "-N", "Sherlock|Watson"] },
  {
    id: "misc.rs:vimgrep_no_line_no_column",
    files: sherlock,
    args: ["--vimgrep", "-N", "--no-column", "Sherlock|Watson"],
  },
  {
    id: "misc.rs:preprocessing",
    args: ["--pre", "xzcat", "Sherlock", "sherlock.xz"],
    skip: { kind: "external", why: "--pre runs xzcat on ripgrep's compressed fixture" },
  },
  {
    id: "misc.rs:preprocessing_glob",
    args: ["--pre", "xzcat", "--pre-glob", "*.xz", "Sherlock"],
    skip: { kind: "external", why: "--pre runs xzcat on ripgrep's compressed fixture" },
  },
  {
    id: "misc.rs:compressed_gzip",
    args: ["-z", "Sherlock", "sherlock.gz"],
    skip: ZIP_SKIP("gzip"),
  },
  {
    id: "misc.rs:compressed_bzip2",
    args: ["-z", "Sherlock", "sherlock.bz2"],
    skip: ZIP_SKIP("bzip2"),
  },
  {
    id: "misc.rs:compressed_xz",
    args: ["-z", "Sherlock", "sherlock.xz"],
    skip: ZIP_SKIP("xz"),
  },
  {
    id: "misc.rs:compressed_lz4",
    args: ["-z", "Sherlock", "sherlock.lz4"],
    skip: ZIP_SKIP("lz4"),
  },
  {
    id: "misc.rs:compressed_lzma",
    args: ["-z", "Sherlock", "sherlock.lzma"],
    skip: ZIP_SKIP("xz"),
  },
  {
    id: "misc.rs:compressed_brotli",
    args: ["-z", "Sherlock", "sherlock.br"],
    skip: ZIP_SKIP("brotli"),
  },
  {
    id: "misc.rs:compressed_zstd",
    args: ["-z", "Sherlock", "sherlock.zst"],
    skip: ZIP_SKIP("zstd"),
  },
  {
    id: "misc.rs:compressed_uncompress",
    args: ["-z", "Sherlock", "sherlock.Z"],
    skip: ZIP_SKIP("uncompress"),
  },
  {
    id: "misc.rs:compressed_failing_gzip",
    files: { "sherlock.gz": SHERLOCK },
    args: ["-z", "Sherlock", "sherlock.gz"],
    skip: { kind: "external", why: "-z runs gzip, which must fail on a file that is not gzip" },
  },
  {
    id: "misc.rs:binary_convert",
    files: { file: "foo\x00bar\nfoo\x00baz\n" },
    args: ["--no-mmap", "foo", "file"],
  },
  {
    id: "misc.rs:binary_convert_mmap",
    files: { file: "foo\x00bar\nfoo\x00baz\n" },
    args: ["--mmap", "foo", "file"],
  },
  {
    id: "misc.rs:binary_quit",
    files: { file: "foo\x00bar\nfoo\x00baz\n" },
    args: ["--no-mmap", "foo", "-gfile"],
  },
  {
    id: "misc.rs:binary_quit_mmap",
    files: { file: "foo\x00bar\nfoo\x00baz\n" },
    args: ["--mmap", "foo", "-gfile"],
  },
  {
    id: "misc.rs:binary_search_mmap",
    files: { file: "foo\x00bar\nfoo\x00baz\n" },
    args: ["-a", "--mmap", "foo", "file"],
  },
  {
    id: "misc.rs:binary_search_no_mmap",
    files: { file: "foo\x00bar\nfoo\x00baz\n" },
    args: ["-a", "--no-mmap", "foo", "file"],
  },
  { id: "misc.rs:files", files: { file: "", "dir/file": "" }, args: ["--files"] },
  { id: "misc.rs:type_list", args: ["--type-list"] },
  ...steps(
    "misc.rs:ignore_git_multi_root_order",
    {
      newer: true,
      dirs: [".git", "src", "tests"],
      files: {
        ".gitignore": "src/invalid\n",
        "src/invalid": "this\n",
        "src/valid": "this\n",
        "tests/valid": "this\n",
      },
    },
    [
      ["--files-with-matches", "this", "src", "tests"],
      ["--files-with-matches", "this", "tests", "src"],
    ],
  ),
  ...steps(
    "misc.rs:ignore_rgignore_multi_root_order",
    {
      newer: true,
      files: { ".rgignore": "beta/**/*.svg\n", "alpha/a.txt": "AWS\n", "beta/x.svg": "AWS\n" },
    },
    [
      ["--files-with-matches", "AWS", "alpha", "beta"],
      ["--files-with-matches", "AWS", "beta", "alpha"],
    ],
  ),
  { id: "misc.rs:sort_files", newer: true, ...SORT_SETUP, args: ["--sort", "path", "test"] },
  { id: "misc.rs:sort_accessed", newer: true, ...SORT_SETUP, args: ["--sort", "accessed", "test"] },
  {
    id: "misc.rs:sortr_accessed",
    newer: true,
    ...SORT_SETUP,
    args: ["--sortr", "accessed", "test"],
  },
];

const MULTILINE: Case[] = [
  {
    id: "multiline.rs:overlap1",
    files: { test: "xxx\nabc\ndefxxxabc\ndefxxx\nxxx" },
    args: ["-n", "-U", "abc\ndef", "test"],
  },
  {
    id: "multiline.rs:overlap2",
    files: { test: "xxx\nabc\ndefabc\ndefxxx\nxxx" },
    args: ["-n", "-U", "abc\ndef", "test"],
  },
  {
    id: "multiline.rs:dot_no_newline",
    files: sherlock,
    args: ["-n", "-U", "of this world.+detective work", "sherlock"],
  },
  {
    id: "multiline.rs:dot_all",
    files: sherlock,
    args: ["-n", "-U", "--multiline-dotall", "of this world.+detective work", "sherlock"],
  },
  {
    id: "multiline.rs:only_matching",
    files: sherlock,
    args: ["-n", "-U", "--only-matching", "Watson|Sherlock\\p{Any}+?Holmes", "sherlock"],
  },
  {
    id: "multiline.rs:vimgrep",
    files: sherlock,
    args: ["-n", "-U", "--vimgrep", "Watson|Sherlock\\p{Any}+?Holmes", "sherlock"],
  },
  {
    id: "multiline.rs:stdin",
    args: ["-n", "-U", "of this world\\p{Any}+?detective work"],
    skip: { kind: "stdin", why: "searches SHERLOCK piped on stdin" },
  },
  {
    id: "multiline.rs:context",
    files: sherlock,
    args: ["-n", "-U", "-C1", "detective work\\p{Any}+?result of luck", "sherlock"],
  },
];

/** binary.rs (13.0.0): every test searches the one haystack, found implicitly (-g) or named. */
function binary(name: string, args: readonly string[], skip?: Skip): Case {
  const id = `binary.rs:${name}`;
  return skip === undefined ? { id, files: { hay: HAY }, args } : { id, files: {}, args, skip };
}

const BINARY: Case[] = [
  binary("after_match1_implicit", ["--no-mmap", "-n", "Project Gutenberg EBook", "-g", "hay"]),
  binary("after_match1_explicit", ["--no-mmap", "-n", "Project Gutenberg EBook", "hay"]),
  binary("after_match1_stdin", ["--no-mmap", "-n", "Project Gutenberg EBook"], {
    kind: "stdin",
    why: "searches the haystack piped on stdin",
  }),
  binary("after_match1_implicit_binary", [
    "--no-mmap",
    "-n",
    "--binary",
    "Project Gutenberg EBook",
    "-g",
    "hay",
  ]),
  binary("after_match1_implicit_text", [
    "--no-mmap",
    "-n",
    "--text",
    "Project Gutenberg EBook",
    "-g",
    "hay",
  ]),
  binary("after_match1_explicit_text", [
    "--no-mmap",
    "-n",
    "--text",
    "Project Gutenberg EBook",
    "hay",
  ]),
  binary("after_match1_implicit_path", ["--no-mmap", "-l", "Project Gutenberg EBook", "-g", "hay"]),
  binary("after_match1_implicit_quiet", [
    "--no-mmap",
    "-q",
    "Project Gutenberg EBook",
    "-g",
    "hay",
  ]),
  binary("after_match1_implicit_count", [
    "--no-mmap",
    "-c",
    "Project Gutenberg EBook",
    "-g",
    "hay",
  ]),
  binary("after_match1_implicit_count_binary", [
    "--no-mmap",
    "-c",
    "--binary",
    "Project Gutenberg EBook",
    "-g",
    "hay",
  ]),
  binary("after_match1_explicit_count", ["--no-mmap", "-c", "Project Gutenberg EBook", "hay"]),
  binary("after_match2_implicit", [
    "--no-mmap",
    "-n",
    "Project Gutenberg EBook|a medical student",
    "-g",
    "hay",
  ]),
  binary("after_match2_implicit_text", [
    "--no-mmap",
    "-n",
    "--text",
    "Project Gutenberg EBook|a medical student",
    "-g",
    "hay",
  ]),
  binary("before_match1_implicit", ["--no-mmap", "-n", "Heaven", "-g", "hay"]),
  binary("before_match1_explicit", ["--no-mmap", "-n", "Heaven", "hay"]),
  binary("before_match1_implicit_binary", ["--no-mmap", "-n", "--binary", "Heaven", "-g", "hay"]),
  binary("before_match1_implicit_text", ["--no-mmap", "-n", "--text", "Heaven", "-g", "hay"]),
  binary("before_match2_implicit", ["--no-mmap", "-n", "a medical student", "-g", "hay"]),
  binary("before_match2_explicit", ["--no-mmap", "-n", "a medical student", "hay"]),
  binary("before_match2_implicit_text", [
    "--no-mmap",
    "-n",
    "--text",
    "a medical student",
    "-g",
    "hay",
  ]),
];

export const CASES: readonly Case[] = [...FEATURE, ...REGRESSION, ...MISC, ...MULTILINE, ...BINARY];

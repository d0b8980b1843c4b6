/**
 * Supported cases on which freshfs differs from rg on purpose or for now: case id → why. The
 * suite expects every other supported case to agree, and fails on an entry here that agrees
 * again, so the map only ever lists real, explained differences.
 *
 * Most entries are cases added to ripgrep's tests after 13.0.0 for a bug rg 13 still has and a
 * later ripgrep fixed: freshfs prints what that Rust test asserts (the fixed behaviour), so it
 * cannot also match the rg 13 oracle. Copying a bug ripgrep itself has since fixed is out of
 * scope. Such an entry has `expected`: freshfs's exact stdout and exit status, checked against
 * the Rust test's assertion when the entry was written. The comparison allowed for exactly one
 * thing: ripgrep's test harness runs rg without --with-filename and --line-number (a single file
 * prints no name), while freshfs's defaults print the `path:` and `N:` prefixes (`path-`, `N-`
 * on context lines), so those prefixes are in `expected` and not in the Rust test. The suite
 * holds freshfs to `expected`, and counts the case as agreeing with ripgrep's own test.
 *
 * An entry without `expected` is a difference from ripgrep's test as well, and counts as a
 * disagreement.
 */
export interface KnownDifference {
  readonly why: string;
  /** What freshfs prints: what the Rust test asserts, up to the prefixes described above. */
  readonly expected?: { readonly stdout: string; readonly status: number };
}

const ANCHORED_BELOW_ROOT =
  "ripgrep #829/#1757 (tests added in 14 and 15): rg 13 drops an .ignore rule with a slash " +
  "(/a/b, rust/target, !/some_dir/build/) when the search starts below the .ignore's " +
  "directory; freshfs keeps applying it, matching the Rust test's assertion";

const CONTEXT_OVERRIDE =
  "ripgrep #2288 (fixed in 14): in rg 13 a later -A/-C replaces an earlier -C/-A outright; " +
  "freshfs lets -A/-B override only their own side of -C, matching the Rust test's assertion";

const INLINE_FLAG_LEAK =
  "ripgrep #2480 (fixed in 14): rg 13 lets one -e pattern's inline flag (?i) leak into the next " +
  "pattern; freshfs keeps it to its own pattern, matching the Rust test's assertion";

const MULTI_ROOT_BASE =
  "ripgrep #3376 (fixed in 15.2): with several search roots rg 13 matches the parent " +
  ".gitignore against the wrong base, so src/invalid is not ignored; freshfs ignores it, " +
  "matching the Rust test's assertion (no invalid, both valid files)";

export const KNOWN_DIFFERENCES: Readonly<Record<string, KnownDifference>> = {
  "feature.rs:f2288_context_partial_override": {
    why: CONTEXT_OVERRIDE,
    expected: { stdout: "test-4-4\ntest:5:5\ntest-6-6\ntest-7-7\n", status: 0 },
  },
  "feature.rs:f2288_context_partial_override_rev": {
    why: CONTEXT_OVERRIDE,
    expected: { stdout: "test-4-4\ntest:5:5\ntest-6-6\ntest-7-7\n", status: 0 },
  },
  "regression.rs:r829_original#2": {
    why:
      `${ANCHORED_BELOW_ROOT} (this step asserts only a failing exit: freshfs searches nothing ` +
      "and exits 2, as rg 13 does when it searches nothing)",
    expected: { stdout: "", status: 2 },
  },
  "regression.rs:r829_2731#2": {
    why: ANCHORED_BELOW_ROOT,
    expected: { stdout: "some_dir/build/foo\n", status: 0 },
  },
  "regression.rs:r829_2731#3": {
    why: ANCHORED_BELOW_ROOT,
    expected: { stdout: "./some_dir/build/foo\n", status: 0 },
  },
  "regression.rs:f1757": {
    why: ANCHORED_BELOW_ROOT,
    expected: { stdout: "rust/source.rs\n", status: 0 },
  },
  "regression.rs:f1757#2": {
    why: ANCHORED_BELOW_ROOT,
    expected: { stdout: "./rust/source.rs\n", status: 0 },
  },
  "regression.rs:f1757#3": {
    why: ANCHORED_BELOW_ROOT,
    expected: { stdout: "rust1/source.rs\n", status: 0 },
  },
  "regression.rs:f1757#4": {
    why: ANCHORED_BELOW_ROOT,
    expected: { stdout: "./rust1/source.rs\n", status: 0 },
  },
  "regression.rs:r1334_invert_empty_patterns#3": {
    why:
      "ripgrep #1332 (fixed in 15): rg 13 matches nothing for -v with an empty pattern file; " +
      "freshfs matches every line, matching the Rust test's assertion",
    expected: { stdout: "haystack:1:one\nhaystack:2:two\nhaystack:3:three\n", status: 0 },
  },
  "regression.rs:r1446_respect_excludes_in_worktree": {
    why:
      "Not a later fix (rg 13 passes this test): ripgrep reads the relative `gitdir:` of " +
      "repotree/.git against its working directory and applies repo/.git/info/exclude; freshfs " +
      "resolves it against the .git file's directory, as git does, finds no git directory " +
      "there, and also lists repotree/ignored",
  },
  "regression.rs:r1891": {
    why:
      "ripgrep #1891 (fixed in 14): with -w and an empty pattern rg 13 finds the empty match " +
      "on line 2 ('##') twice, ripgrep 14 and freshfs three times, matching the Rust test's " +
      "assertion",
    expected: { stdout: "test:1:\ntest:2:\ntest:2:\ntest:2:\n", status: 0 },
  },
  "regression.rs:r2095": {
    why:
      "ripgrep #2095 (fixed in 14): rg 13 misnumbers and repeats multi-line -o -r matches; " +
      "freshfs prints each once on its own line number, matching the Rust test's assertion",
    expected: {
      stdout:
        "test:4:one\ntest:8:(\ntest:9:\t\ta\ntest:10:\t\tb\ntest:11:\t\tc\ntest:12:\t)\n" +
        "test:15:two\n",
      status: 0,
    },
  },
  "regression.rs:r2208": {
    why:
      "ripgrep #2208 (fixed in 14, with #2095): after a multiline -r match whose optional " +
      "groups are unset, rg 13 also prints text of the following lines (cut off mid-line); " +
      "freshfs prints only the replacement, matching the Rust test's assertion",
    expected: {
      stdout:
        "test: [-h] [-U|-u <pkgspec>[,<pkgspec>...]] [<reqs-in>...] [-- <pip-compile-arg>...]\n",
      status: 0,
    },
  },
  "regression.rs:r2480#5": {
    why: INLINE_FLAG_LEAK,
    expected: { stdout: "file:1:Foo\n", status: 0 },
  },
  "regression.rs:r2480#6": {
    why: `${INLINE_FLAG_LEAK} (this step asserts only a failing exit: freshfs exits 1)`,
    expected: { stdout: "", status: 1 },
  },
  "regression.rs:r2990_trip_over_trailing_dot#2": {
    why:
      "ripgrep #2990 (fixed in 15): rg 13 ignores the glob !asdf./ (it trips over the " +
      "trailing dot); freshfs excludes asdf./, matching the Rust test's assertion",
    expected: { stdout: "asdf/foo\n", status: 0 },
  },
  "regression.rs:r3139_multiline_lookahead_files_with_matches#2": {
    why:
      "ripgrep #3139 (fixed in 15): with --pcre2 --multiline and a look-ahead past the line, " +
      "rg 13's -l lists nothing and exits 1; freshfs lists test, matching the Rust test's " +
      "assertion",
    expected: { stdout: "test\n", status: 0 },
  },
  "misc.rs:word_period": {
    why:
      "ripgrep 14 reworked -w: rg 13 finds two of the three dots of '...' with -ow '.', ripgrep " +
      "14 and freshfs all three, matching the Rust test's assertion",
    expected: { stdout: "haystack:1:.\nhaystack:1:.\nhaystack:1:.\n", status: 0 },
  },
  "misc.rs:ignore_git_multi_root_order": {
    why: MULTI_ROOT_BASE,
    expected: { stdout: "src/valid\ntests/valid\n", status: 0 },
  },
  "misc.rs:ignore_git_multi_root_order#2": {
    why: MULTI_ROOT_BASE,
    expected: { stdout: "tests/valid\nsrc/valid\n", status: 0 },
  },
  "misc.rs:ignore_rgignore_multi_root_order": {
    why:
      "ripgrep #3320 (fixed in 15.2): with roots alpha then beta rg 13 matches the parent " +
      ".rgignore against the wrong base and lists beta/x.svg; freshfs ignores it, matching the " +
      "Rust test's assertion",
    expected: { stdout: "alpha/a.txt\n", status: 0 },
  },
};

/**
 * Conformance table for `apply_patch`: the patch grammar of OpenAI Codex (the format GPT-family
 * models emit, which opencode's `apply_patch` tool also takes), as data. Each case is a tree
 * before, one patch, and what freshfs must do: the whole tree after, or the error code (and a few
 * substrings of the message) with the tree left exactly as it was.
 *
 * Sources, read and re-created here as data (no code copied):
 * - openai/codex, codex-rs/apply-patch: the end-to-end fixtures tests/fixtures/scenarios/NNN_*
 *   (input/, patch.txt, expected/), the unit tests of src/lib.rs, src/parser.rs and
 *   tests/suite/tool.rs, the matcher src/seek_sequence.rs and apply_patch_tool_instructions.md.
 *   (The stored fixture copies carry an added first comment line naming their own path; that
 *   line is not part of the fixtures and is left out.)
 * - sst/opencode (now anomalyco/opencode): packages/opencode/test/tool/apply_patch.test.ts, the
 *   older test/tool/patch.test.ts, and the parser in packages/opencode/src/patch/index.ts.
 * - "grammar": cases written here from the documented grammar and freshfs's decided semantics.
 *
 * Semantics the expectations encode (freshfs):
 * - Grammar as Codex: `*** Begin Patch` ... `*** End Patch`; `*** Add File: p` then `+` lines
 *   (content: the lines joined with \n plus a final \n; a lone `+` is an empty line; any other
 *   line ends the section, so an unprefixed line there is malformed); `*** Delete File: p`;
 *   `*** Update File: p`, optionally `*** Move to: q`, then one or more chunks. A chunk starts
 *   with `@@` or `@@ <context line>` (the first chunk of a file may omit it); its lines start
 *   with ' ', '-' or '+'; an entirely empty line is an empty context line; `*** End of File`
 *   after a chunk anchors it at the file's end (its old lines must be the file's last lines).
 *   Whitespace around marker lines is ignored, and a patch wrapped in a heredoc is unwrapped: a
 *   first line `<<EOF`, `<<'EOF'` or `<<"EOF"` (optionally after a command word, as in
 *   `apply_patch <<'EOF'` or `cat <<'EOF'`) and a last line `EOF`.
 * - Matching a chunk's old lines (context and removed lines), from after the previous chunk of
 *   the same file, first occurrence wins: each pass over the whole remaining file in turn,
 *   exact, then typographic quotes and dashes read as ASCII, then differences only in trailing
 *   whitespace, then (Codex's last pass) in whitespace at both ends; the new lines are written
 *   as the patch gives them. A `@@ context` line is found first (the same way), the chunk after
 *   it.
 * - As Codex: a chunk with no old lines (only `+` lines) is added at the end of the file and does
 *   not move where the next chunk is searched from; a chunk whose last old line is an empty
 *   context line (a blank line left before the next header) that is not found is retried
 *   without that line.
 * - An updated file keeps its line endings (CRLF stays CRLF) and, as Codex writes it, ends with
 *   one, whether or not it did before.
 * - An add over an existing file and a move onto one replace it, as Codex does, when a guarded
 *   `write` of it would be allowed: the harness reads every file of `files` in full first, except
 *   those in `unread` (NOT_READ).
 * - All or nothing: on any failure nothing is changed. INVALID_PATCH: malformed text, an empty
 *   patch, an update with no chunks (and no move), two operations on one path. NO_MATCH: a chunk (hunk N,
 *   1-based within its file) or its `@@` context not found. NOT_FOUND: update or delete of a
 *   missing file. NOT_READ: a file the patch changes, removes or replaces that was not read.
 *   NOT_A_FILE: a delete of a directory.
 *
 * Where freshfs differs from Codex (each such case says why in `differs`): a failure leaves no
 * partial result (Codex applies operations one by one and stops at the first failure, keeping
 * the earlier ones); two operations on one path are refused (Codex runs them in turn); a
 * heredoc line with a command before `<<` is unwrapped (Codex takes only a bare `<<EOF`);
 * punctuation read as ASCII is tried before whitespace, and indentation ignored last (Codex's
 * passes: exact, line ends, both ends, then punctuation); an add over a file keeps that file's
 * line ending. More lenient than Codex without a case of its own: whitespace around every
 * marker line is accepted (Codex trims only the Begin, End and file header lines).
 *
 * Skipped (the table cannot express them, or the behaviour is not decided):
 * - opencode "rejects delete when target is a directory": the same as codex scenario 012.
 * - codex lib.rs test_apply_patch_fails_on_write_error: needs a read-only file (its patch text,
 *   which holds `*** End Patch` twice and fails to parse first, is "codex-doubled-end-patch").
 * - codex parser.rs/lib.rs absolute-path tests: absolute paths are out of this table.
 * - codex lib.rs shell-invocation tests (bash -lc / powershell / cmd heredoc extraction,
 *   `cd dir &&` prefixes, implicit invocation): they are about the shell command around a
 *   patch, not the patch text.
 * - codex parser.rs streaming tests: partial input parsed for progress display only (the large
 *   streaming patch is kept, applied whole, as "codex-large-multi-file-patch").
 * - codex lib.rs cwd-resolution tests, and the tool.rs tests restating scenarios 002 to 015.
 * - codex cli.rs test_apply_patch_cli_normalizes_crlf_without_flag, from the version that had a
 *   `--preserve-crlf` flag: without it, that Codex turned a CRLF file to LF. The newest Codex
 *   (text_file.rs) keeps CRLF, as freshfs does.
 * - opencode "requires patchText" (an empty input is argument validation, not grammar), the
 *   permission-metadata tests, and tests restating Codex scenarios (folded into those cases;
 *   their newer versions agree with freshfs on 015).
 * - opencode "matches with trailing/leading whitespace differences": the changed line matches
 *   exactly there, so nothing is tested beyond "trailing-whitespace-match" and
 *   "leading-whitespace-last-pass"; "EOF anchor matches from end of file first": the lines occur
 *   only at the end, see "eof-anchor-picks-last-occurrence" instead.
 * - opencode patch.test.ts (the older `patch` tool): its add cases expect no final newline, the
 *   difference shown once in "opencode-add-explicit-trailing-newline"; the rest check output.
 * - Several consecutive `@@` headers (apply_patch_tool_instructions.md documents them; Codex's
 *   parser rejects them), and a `+`-only chunk under a `@@ context` header (Codex finds the
 *   context, then still appends at the end of the file): not decided.
 * - Where the new lines of a chunk matched through the quote map get their quotes (freshfs's
 *   edit tool restyles them, Codex and opencode write the patch's ASCII): not decided, so
 *   "opencode-unicode-punctuation" is adapted to replace the line with one without quotes.
 */
export interface PatchCase {
  /** Unique, short, kebab-case. */
  readonly name: string;
  /** Where it comes from: "codex scenario 001_add_file", "codex lib.rs test_update_file_hunk_...", "opencode test ...", or "grammar" for cases written from the documented grammar. */
  readonly source: string;
  /** The tree before: relative path -> file content (UTF-8). Every one of these files is read in full by the harness before the patch is applied (so the guard allows updates/deletes), except those in `unread`. */
  readonly files: Readonly<Record<string, string>>;
  /** Files of `files` the harness does not read first. */
  readonly unread?: readonly string[];
  /** The patch text given to apply_patch as `input`. */
  readonly patch: string;
  readonly expect:
    | {
        readonly ok: true;
        /** The whole tree after (every regular file, relative path -> content); files not listed must not exist. */
        readonly files: Readonly<Record<string, string>>;
      }
    | {
        readonly ok: false;
        /** The FreshfsError code: "INVALID_PATCH" (malformed patch text), "NO_MATCH" (a hunk's old lines not found), "NOT_FOUND" (update/delete of a missing file), "NOT_READ" (a file in `unread` that the patch changes, removes or replaces), "NOT_A_FILE" (a delete of a directory). */
        readonly code: "INVALID_PATCH" | "NO_MATCH" | "NOT_FOUND" | "NOT_READ" | "NOT_A_FILE";
        /** Substrings the error message must contain (e.g. the file path, "hunk 2"). Keep them to things any good message would say: the file's relative path; for NO_MATCH the hunk number as "hunk N" (1-based within that file). */
        readonly message?: readonly string[];
      };
  /** When freshfs's expectation differs from what Codex does, why (e.g. Codex keeps the operations before a failure; freshfs changes nothing). */
  readonly differs?: string;
}

export const PATCH_CASES: readonly PatchCase[] = [
  // ---------------------------------------------------------------------------------------------
  // Codex end-to-end scenarios (codex-rs/apply-patch/tests/fixtures/scenarios).
  // ---------------------------------------------------------------------------------------------
  {
    name: "s001-add-file",
    source: "codex scenario 001_add_file",
    files: {},
    patch: "*** Begin Patch\n*** Add File: bar.md\n+This is a new file\n*** End Patch\n",
    expect: { ok: true, files: { "bar.md": "This is a new file\n" } },
  },
  {
    name: "s002-multiple-operations",
    source: "codex scenario 002_multiple_operations",
    files: { "delete.txt": "obsolete\n", "modify.txt": "line1\nline2\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Add File: nested/new.txt\n" +
      "+created\n" +
      "*** Delete File: delete.txt\n" +
      "*** Update File: modify.txt\n" +
      "@@\n" +
      "-line2\n" +
      "+changed\n" +
      "*** End Patch\n",
    expect: {
      ok: true,
      files: { "nested/new.txt": "created\n", "modify.txt": "line1\nchanged\n" },
    },
  },
  {
    name: "s003-multiple-chunks",
    source: "codex scenario 003_multiple_chunks",
    files: { "multi.txt": "line1\nline2\nline3\nline4\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: multi.txt\n" +
      "@@\n" +
      "-line2\n" +
      "+changed2\n" +
      "@@\n" +
      "-line4\n" +
      "+changed4\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "multi.txt": "line1\nchanged2\nline3\nchanged4\n" } },
  },
  {
    name: "s004-move-to-new-directory",
    source: "codex scenario 004_move_to_new_directory",
    files: { "old/name.txt": "old content\n", "old/other.txt": "unrelated file\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: old/name.txt\n" +
      "*** Move to: renamed/dir/name.txt\n" +
      "@@\n" +
      "-old content\n" +
      "+new content\n" +
      "*** End Patch\n",
    expect: {
      ok: true,
      files: { "old/other.txt": "unrelated file\n", "renamed/dir/name.txt": "new content\n" },
    },
  },
  {
    name: "s005-rejects-empty-patch",
    source: "codex scenario 005_rejects_empty_patch",
    files: { "foo.txt": "stable\n" },
    patch: "*** Begin Patch\n*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "s006-rejects-missing-context",
    source: "codex scenario 006_rejects_missing_context",
    files: { "modify.txt": "line1\nline2\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: modify.txt\n" +
      "@@\n" +
      "-missing\n" +
      "+changed\n" +
      "*** End Patch\n",
    expect: { ok: false, code: "NO_MATCH", message: ["modify.txt", "hunk 1"] },
  },
  {
    name: "s007-rejects-missing-file-delete",
    source: "codex scenario 007_rejects_missing_file_delete",
    files: { "foo.txt": "stable\n" },
    patch: "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n",
    expect: { ok: false, code: "NOT_FOUND", message: ["missing.txt"] },
  },
  {
    name: "s008-rejects-empty-update-hunk",
    source: "codex scenario 008_rejects_empty_update_hunk",
    files: { "foo.txt": "stable\n" },
    patch: "*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH", message: ["foo.txt"] },
  },
  {
    name: "s009-requires-existing-file-for-update",
    source: "codex scenario 009_requires_existing_file_for_update",
    files: { "foo.txt": "stable\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: missing.txt\n" +
      "@@\n" +
      "-old\n" +
      "+new\n" +
      "*** End Patch\n",
    expect: { ok: false, code: "NOT_FOUND", message: ["missing.txt"] },
  },
  {
    name: "s010-move-onto-existing-destination",
    source: "codex scenario 010_move_overwrites_existing_destination",
    files: {
      "old/name.txt": "from\n",
      "old/other.txt": "unrelated file\n",
      "renamed/dir/name.txt": "existing\n",
    },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: old/name.txt\n" +
      "*** Move to: renamed/dir/name.txt\n" +
      "@@\n" +
      "-from\n" +
      "+new\n" +
      "*** End Patch\n",
    expect: {
      ok: true,
      files: { "old/other.txt": "unrelated file\n", "renamed/dir/name.txt": "new\n" },
    },
  },
  {
    name: "s011-add-over-existing-file",
    source: "codex scenario 011_add_overwrites_existing_file",
    files: { "duplicate.txt": "old content\n" },
    patch: "*** Begin Patch\n*** Add File: duplicate.txt\n+new content\n*** End Patch\n",
    expect: { ok: true, files: { "duplicate.txt": "new content\n" } },
  },
  {
    name: "s012-delete-directory-fails",
    source: "codex scenario 012_delete_directory_fails",
    files: { "dir/foo.txt": "stay\n" },
    patch: "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n",
    expect: { ok: false, code: "NOT_A_FILE", message: ["dir"] },
  },
  {
    name: "s013-rejects-invalid-hunk-header",
    source: "codex scenario 013_rejects_invalid_hunk_header",
    files: { "foo.txt": "stable\n" },
    patch: "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "s014-update-file-without-trailing-newline",
    source: "codex scenario 014_update_file_appends_trailing_newline",
    files: { "no_newline.txt": "no newline at end" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: no_newline.txt\n" +
      "@@\n" +
      "-no newline at end\n" +
      "+first line\n" +
      "+second line\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "no_newline.txt": "first line\nsecond line\n" } },
  },
  {
    name: "s015-failure-after-partial-success",
    source: "codex scenario 015_failure_after_partial_success_leaves_changes",
    files: {},
    patch:
      "*** Begin Patch\n" +
      "*** Add File: created.txt\n" +
      "+hello\n" +
      "*** Update File: missing.txt\n" +
      "@@\n" +
      "-old\n" +
      "+new\n" +
      "*** End Patch\n",
    expect: { ok: false, code: "NOT_FOUND", message: ["missing.txt"] },
    differs:
      'Codex applies the add before failing on the update and leaves created.txt behind; freshfs is all or nothing, so created.txt must not exist (opencode\'s test "verification failure leaves no side effects" expects the same as freshfs).',
  },
  {
    name: "s016-pure-addition-update-chunk",
    source: "codex scenario 016_pure_addition_update_chunk",
    files: { "input.txt": "line1\nline2\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: input.txt\n" +
      "@@\n" +
      "+added line 1\n" +
      "+added line 2\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "input.txt": "line1\nline2\nadded line 1\nadded line 2\n" } },
  },
  {
    name: "s017-whitespace-padded-hunk-header",
    source: "codex scenario 017_whitespace_padded_hunk_header",
    files: { "foo.txt": "old\n" },
    patch: "*** Begin Patch\n  *** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\n",
    expect: { ok: true, files: { "foo.txt": "new\n" } },
  },
  {
    name: "s018-whitespace-padded-patch-markers",
    source: "codex scenario 018_whitespace_padded_patch_markers",
    files: { "file.txt": "one\n" },
    patch: " *** Begin Patch\n*** Update File: file.txt\n@@\n-one\n+two\n*** End Patch \n",
    expect: { ok: true, files: { "file.txt": "two\n" } },
  },
  {
    name: "s019-unicode-simple",
    source: "codex scenario 019_unicode_simple",
    files: { "foo.txt": "line1\nnaïve café\nline3\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: foo.txt\n" +
      "@@\n" +
      " line1\n" +
      "-naïve café\n" +
      "+naïve café ✅\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "foo.txt": "line1\nnaïve café ✅\nline3\n" } },
  },
  {
    name: "s020-delete-file-success",
    source: "codex scenario 020_delete_file_success",
    files: { "keep.txt": "keep\n", "obsolete.txt": "obsolete\n" },
    patch: "*** Begin Patch\n*** Delete File: obsolete.txt\n*** End Patch\n",
    expect: { ok: true, files: { "keep.txt": "keep\n" } },
  },
  {
    name: "s020-whitespace-padded-marker-lines",
    source: "codex scenario 020_whitespace_padded_patch_marker_lines",
    files: { "file.txt": "one\n" },
    patch: "*** Begin Patch \n*** Update File: file.txt\n@@\n-one\n+two\n *** End Patch\n",
    expect: { ok: true, files: { "file.txt": "two\n" } },
  },
  {
    name: "s021-update-file-deletion-only",
    source: "codex scenario 021_update_file_deletion_only",
    files: { "lines.txt": "line1\nline2\nline3\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: lines.txt\n" +
      "@@\n" +
      " line1\n" +
      "-line2\n" +
      " line3\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "lines.txt": "line1\nline3\n" } },
  },
  {
    name: "s022-update-file-end-of-file-marker",
    source: "codex scenario 022_update_file_end_of_file_marker",
    files: { "tail.txt": "first\nsecond\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: tail.txt\n" +
      "@@\n" +
      " first\n" +
      "-second\n" +
      "+second updated\n" +
      "*** End of File\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "tail.txt": "first\nsecond updated\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex unit tests: src/lib.rs and tests/suite/tool.rs.
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-add-file-two-lines",
    source: "codex lib.rs test_add_file_hunk_creates_file_with_contents",
    files: {},
    patch: "*** Begin Patch\n*** Add File: add.txt\n+ab\n+cd\n*** End Patch",
    expect: { ok: true, files: { "add.txt": "ab\ncd\n" } },
  },
  {
    name: "codex-interleaved-changes",
    source: "codex lib.rs test_update_file_hunk_interleaved_changes",
    files: { "interleaved.txt": "a\nb\nc\nd\ne\nf\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: interleaved.txt\n" +
      "@@\n" +
      " a\n" +
      "-b\n" +
      "+B\n" +
      "@@\n" +
      " c\n" +
      " d\n" +
      "-e\n" +
      "+E\n" +
      "@@\n" +
      " f\n" +
      "+g\n" +
      "*** End of File\n" +
      "*** End Patch",
    expect: { ok: true, files: { "interleaved.txt": "a\nB\nc\nd\nE\nf\ng\n" } },
  },
  {
    name: "codex-crlf-update-and-append",
    source: "codex lib.rs test_preserve_crlf_line_endings_on_update",
    files: { "crlf.txt": "a\r\nb\r\nc\r\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: crlf.txt\n" +
      "@@\n" +
      " a\n" +
      "-b\n" +
      "+B\n" +
      "@@\n" +
      " c\n" +
      "+d\n" +
      "*** End of File\n" +
      "*** End Patch",
    expect: { ok: true, files: { "crlf.txt": "a\r\nB\r\nc\r\nd\r\n" } },
  },
  {
    name: "codex-pure-addition-then-removal",
    source: "codex lib.rs test_pure_addition_chunk_followed_by_removal",
    files: { "panic.txt": "line1\nline2\nline3\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: panic.txt\n" +
      "@@\n" +
      "+after-context\n" +
      "+second-line\n" +
      "@@\n" +
      " line1\n" +
      "-line2\n" +
      "-line3\n" +
      "+line2-replacement\n" +
      "*** End Patch",
    expect: {
      ok: true,
      files: { "panic.txt": "line1\nline2-replacement\nafter-context\nsecond-line\n" },
    },
  },
  {
    name: "codex-unicode-dash-match",
    source: "codex lib.rs test_update_line_with_unicode_dash",
    files: { "unicode.py": "import asyncio  # local import \u2013 avoids top\u2011level dep\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: unicode.py\n" +
      "@@\n" +
      "-import asyncio  # local import - avoids top-level dep\n" +
      "+import asyncio  # HELLO\n" +
      "*** End Patch",
    expect: { ok: true, files: { "unicode.py": "import asyncio  # HELLO\n" } },
  },
  {
    name: "codex-trailing-blank-line-in-chunk",
    source: "codex lib.rs test_unified_diff_first_line_replacement",
    files: { "first.txt": "foo\nbar\nbaz\n" },
    patch: "*** Begin Patch\n*** Update File: first.txt\n@@\n-foo\n+FOO\n bar\n\n*** End Patch",
    expect: { ok: true, files: { "first.txt": "FOO\nbar\nbaz\n" } },
  },
  {
    name: "codex-insert-at-eof",
    source: "codex lib.rs test_unified_diff_insert_at_eof",
    files: { "insert.txt": "foo\nbar\nbaz\n" },
    patch:
      "*** Begin Patch\n*** Update File: insert.txt\n@@\n+quux\n*** End of File\n\n*** End Patch",
    expect: { ok: true, files: { "insert.txt": "foo\nbar\nbaz\nquux\n" } },
  },
  {
    name: "codex-crlf-two-chunks",
    source: "codex tool.rs test_apply_patch_cli_preserves_crlf_from_target_file",
    files: { "crlf.txt": "one\r\ntwo\r\nthree\r\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: crlf.txt\n" +
      "@@\n" +
      "-one\n" +
      "+uno\n" +
      "@@\n" +
      " two\n" +
      "+\n" +
      "+between\n" +
      " three\n" +
      "*** End Patch",
    expect: { ok: true, files: { "crlf.txt": "uno\r\ntwo\r\n\r\nbetween\r\nthree\r\n" } },
  },
  {
    name: "codex-repeated-lines-keep-order",
    source: "codex tool.rs test_apply_patch_cli_preserves_change_order_with_repeated_lines",
    files: { "repeated.txt": "a\nb\n" },
    patch: "*** Begin Patch\n*** Update File: repeated.txt\n@@\n-a\n-b\n+b\n+b\n+a\n*** End Patch",
    expect: { ok: true, files: { "repeated.txt": "b\nb\na\n" } },
  },
  {
    name: "codex-crlf-without-trailing-newline",
    source: "codex tool.rs test_apply_patch_cli_uses_crlf_for_new_trailing_newline",
    files: { "no_trailing_newline.txt": "one\r\ntwo" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: no_trailing_newline.txt\n" +
      "@@\n" +
      "-one\n" +
      "+ONE\n" +
      "*** End Patch",
    expect: { ok: true, files: { "no_trailing_newline.txt": "ONE\r\ntwo\r\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex parser tests: src/parser.rs.
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-missing-begin-marker",
    source: 'codex parser.rs test_parse_patch ("bad")',
    files: {},
    patch: "bad",
    expect: { ok: false, code: "INVALID_PATCH", message: ["Begin Patch"] },
  },
  {
    name: "codex-missing-end-marker",
    source: "codex parser.rs test_parse_patch (no *** End Patch)",
    files: {},
    patch: "*** Begin Patch\n*** Add File: a.txt\n+hello\n",
    expect: { ok: false, code: "INVALID_PATCH", message: ["End Patch"] },
  },
  {
    name: "codex-add-delete-update-move-with-context",
    source: "codex parser.rs test_parse_patch (add, delete, update with move and @@ context)",
    files: { "path/delete.py": "obsolete\n", "path/update.py": "def f():\n    pass\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Add File: path/add.py\n" +
      "+abc\n" +
      "+def\n" +
      "*** Delete File: path/delete.py\n" +
      "*** Update File: path/update.py\n" +
      "*** Move to: path/update2.py\n" +
      "@@ def f():\n" +
      "-    pass\n" +
      "+    return 123\n" +
      "*** End Patch",
    expect: {
      ok: true,
      files: { "path/add.py": "abc\ndef\n", "path/update2.py": "def f():\n    return 123\n" },
    },
  },
  {
    name: "codex-update-followed-by-add",
    source: "codex parser.rs test_parse_patch (update hunk followed by Add File)",
    files: { "file.py": "import os\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: file.py\n" +
      "@@\n" +
      "+line\n" +
      "*** Add File: other.py\n" +
      "+content\n" +
      "*** End Patch",
    expect: { ok: true, files: { "file.py": "import os\nline\n", "other.py": "content\n" } },
  },
  {
    name: "codex-first-chunk-without-header",
    source: "codex parser.rs test_parse_patch (first chunk without @@)",
    files: { "file2.py": "import foo\n" },
    patch: "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch",
    expect: { ok: true, files: { "file2.py": "import foo\nbar\n" } },
  },
  {
    name: "codex-heredoc-single-quoted",
    source: "codex parser.rs test_parse_patch_lenient (<<'EOF')",
    files: { "file2.py": "import foo\n" },
    patch:
      "<<'EOF'\n*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch\nEOF\n",
    expect: { ok: true, files: { "file2.py": "import foo\nbar\n" } },
  },
  {
    name: "codex-heredoc-mismatched-quotes",
    source: "codex parser.rs test_parse_patch_lenient (<<\"EOF')",
    files: { "file2.py": "import foo\n" },
    patch:
      "<<\"EOF'\n*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch\nEOF\n",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-heredoc-missing-end-marker",
    source: "codex parser.rs test_parse_patch_lenient (heredoc without *** End Patch)",
    files: { "file2.py": "import foo\n" },
    patch: "<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-chunk-unexpected-line",
    source: 'codex parser.rs test_update_file_chunk (["@@", "bad"])',
    files: { "a.txt": "one\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\nbad\n*** End Patch",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-chunk-without-lines",
    source: 'codex parser.rs test_update_file_chunk (["@@"])',
    files: { "a.txt": "one\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n*** End Patch",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-chunk-only-end-of-file",
    source: 'codex parser.rs test_update_file_chunk (["@@", "*** End of File"])',
    files: { "a.txt": "one\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n*** End of File\n*** End Patch",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-empty-line-is-empty-context",
    source: 'codex parser.rs test_update_file_chunk ("@@ change_context" with an empty line)',
    files: { "ctx.txt": "change_context\n\ncontext\nremove\ncontext2\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: ctx.txt\n" +
      "@@ change_context\n" +
      "\n" +
      " context\n" +
      "-remove\n" +
      "+add\n" +
      " context2\n" +
      "*** End Patch",
    expect: { ok: true, files: { "ctx.txt": "change_context\n\ncontext\nadd\ncontext2\n" } },
  },
  {
    name: "codex-large-multi-file-patch",
    source: "codex parser.rs test_parse_patch_streaming_large_patch_by_character (applied whole)",
    files: {
      "src/config.rs":
        "use std::time::Duration;\n" +
        "\n" +
        "impl Config\n" +
        "{\n" +
        "    pub apply_patch_progress: bool,\n" +
        "    pub include_diagnostics: bool,\n" +
        "}\n" +
        "\n" +
        "fn default_progress_interval()\n" +
        "{\n" +
        "    Duration::from_millis(500)\n" +
        "}\n",
      "src/legacy_patch_progress.rs": "// legacy progress\n",
      "crates/cli/src/main.rs":
        "fn run()\n{\n    let args = Args::parse();\n    dispatch(args)\n}\n",
      "README.md":
        "# Project\n" +
        "\n" +
        "Development workflow\n" +
        "\n" +
        "Build the Rust workspace before opening a pull request.\n",
      "docs/old-apply-patch-progress.md": "old notes\n",
    },
    patch:
      "*** Begin Patch\n" +
      "*** Add File: docs/release-notes.md\n" +
      "+# Release notes\n" +
      "+\n" +
      "+## CLI\n" +
      "+- Surface apply_patch progress while arguments stream.\n" +
      "+- Keep final patch application gated on the completed tool call.\n" +
      "+- Include file summaries in the progress event payload.\n" +
      "*** Update File: src/config.rs\n" +
      "@@ impl Config\n" +
      "-    pub apply_patch_progress: bool,\n" +
      "+    pub stream_apply_patch_progress: bool,\n" +
      "     pub include_diagnostics: bool,\n" +
      "@@ fn default_progress_interval()\n" +
      "-    Duration::from_millis(500)\n" +
      "+    Duration::from_millis(250)\n" +
      "*** Delete File: src/legacy_patch_progress.rs\n" +
      "*** Update File: crates/cli/src/main.rs\n" +
      "*** Move to: crates/cli/src/bin/codex.rs\n" +
      "@@ fn run()\n" +
      "-    let args = Args::parse();\n" +
      "-    dispatch(args)\n" +
      "+    let cli = Cli::parse();\n" +
      "+    dispatch(cli)\n" +
      "*** Add File: tests/fixtures/apply_patch_progress.json\n" +
      "+{\n" +
      '+  "type": "apply_patch_progress",\n' +
      '+  "hunks": [\n' +
      '+    { "operation": "add", "path": "docs/release-notes.md" },\n' +
      '+    { "operation": "update", "path": "src/config.rs" }\n' +
      "+  ]\n" +
      "+}\n" +
      "*** Update File: README.md\n" +
      "@@ Development workflow\n" +
      " Build the Rust workspace before opening a pull request.\n" +
      "+When touching streamed tool calls, include parser coverage for partial input.\n" +
      "+Prefer tests that exercise the exact event payload shape.\n" +
      "*** Delete File: docs/old-apply-patch-progress.md\n" +
      "*** End Patch",
    expect: {
      ok: true,
      files: {
        "docs/release-notes.md":
          "# Release notes\n" +
          "\n" +
          "## CLI\n" +
          "- Surface apply_patch progress while arguments stream.\n" +
          "- Keep final patch application gated on the completed tool call.\n" +
          "- Include file summaries in the progress event payload.\n",
        "src/config.rs":
          "use std::time::Duration;\n" +
          "\n" +
          "impl Config\n" +
          "{\n" +
          "    pub stream_apply_patch_progress: bool,\n" +
          "    pub include_diagnostics: bool,\n" +
          "}\n" +
          "\n" +
          "fn default_progress_interval()\n" +
          "{\n" +
          "    Duration::from_millis(250)\n" +
          "}\n",
        "crates/cli/src/bin/codex.rs":
          "fn run()\n{\n    let cli = Cli::parse();\n    dispatch(cli)\n}\n",
        "tests/fixtures/apply_patch_progress.json":
          "{\n" +
          '  "type": "apply_patch_progress",\n' +
          '  "hunks": [\n' +
          '    { "operation": "add", "path": "docs/release-notes.md" },\n' +
          '    { "operation": "update", "path": "src/config.rs" }\n' +
          "  ]\n" +
          "}\n",
        "README.md":
          "# Project\n" +
          "\n" +
          "Development workflow\n" +
          "\n" +
          "Build the Rust workspace before opening a pull request.\n" +
          "When touching streamed tool calls, include parser coverage for partial input.\n" +
          "Prefer tests that exercise the exact event payload shape.\n",
      },
    },
  },

  // ---------------------------------------------------------------------------------------------
  // opencode: packages/opencode/test/tool/apply_patch.test.ts.
  // ---------------------------------------------------------------------------------------------
  {
    name: "opencode-insert-only-hunk",
    source: "opencode test apply_patch inserts lines with insert-only hunk",
    files: { "insert_only.txt": "alpha\nomega\n" },
    patch:
      "*** Begin Patch\n*** Update File: insert_only.txt\n@@\n alpha\n+beta\n omega\n*** End Patch",
    expect: { ok: true, files: { "insert_only.txt": "alpha\nbeta\nomega\n" } },
  },
  {
    name: "opencode-blank-line-is-context",
    source: "opencode test apply_patch rejects missing second chunk context",
    files: { "two_chunks.txt": "a\nb\nc\nd\n" },
    patch: "*** Begin Patch\n*** Update File: two_chunks.txt\n@@\n-b\n+B\n\n-d\n+D\n*** End Patch",
    expect: { ok: false, code: "NO_MATCH", message: ["two_chunks.txt", "hunk 1"] },
  },
  {
    name: "opencode-context-header-disambiguates",
    source: "opencode test apply_patch disambiguates change context with @@ header",
    files: { "multi_ctx.txt": "fn a\nx=10\ny=2\nfn b\nx=10\ny=20\n" },
    patch: "*** Begin Patch\n*** Update File: multi_ctx.txt\n@@ fn b\n-x=10\n+x=11\n*** End Patch",
    expect: { ok: true, files: { "multi_ctx.txt": "fn a\nx=10\ny=2\nfn b\nx=11\ny=20\n" } },
  },
  {
    name: "opencode-heredoc-with-cat",
    source: "opencode test apply_patch parses heredoc-wrapped patch",
    files: {},
    patch:
      "cat <<'EOF'\n*** Begin Patch\n*** Add File: heredoc_test.txt\n+heredoc content\n*** End Patch\nEOF",
    expect: { ok: true, files: { "heredoc_test.txt": "heredoc content\n" } },
    differs:
      "Codex's lenient mode unwraps only a first line that is exactly <<EOF, <<'EOF' or <<\"EOF\", so it rejects this (\"The first line of the patch must be '*** Begin Patch'\"); freshfs, like opencode, unwraps a heredoc after a command word. (opencode's newer tool also drops the added file's final newline; freshfs keeps Codex's.)",
  },
  {
    name: "opencode-heredoc-bare",
    source: "opencode test apply_patch parses heredoc-wrapped patch without cat",
    files: {},
    patch:
      "<<EOF\n*** Begin Patch\n*** Add File: heredoc_no_cat.txt\n+no cat prefix\n*** End Patch\nEOF",
    expect: { ok: true, files: { "heredoc_no_cat.txt": "no cat prefix\n" } },
  },
  {
    name: "opencode-unicode-punctuation",
    source:
      "opencode test apply_patch matches with Unicode punctuation differences (adapted: the new line has no quotes)",
    files: { "unicode.txt": "He said \u201Chello\u201D\nsome\u2014dash\nend\n" },
    patch:
      '*** Begin Patch\n*** Update File: unicode.txt\n@@\n-He said "hello"\n+He said hi\n*** End Patch',
    expect: { ok: true, files: { "unicode.txt": "He said hi\nsome\u2014dash\nend\n" } },
  },
  {
    name: "opencode-bom-kept",
    source: "opencode test apply_patch does not invent a first-line diff for BOM files",
    files: { "example.cs": "\uFEFFusing System;\n\nclass Test {}\n" },
    patch:
      "*** Begin Patch\n*** Update File: example.cs\n@@\n class Test {}\n+class Next {}\n*** End Patch",
    expect: {
      ok: true,
      files: { "example.cs": "\uFEFFusing System;\n\nclass Test {}\nclass Next {}\n" },
    },
  },
  // Codex writes the same as freshfs (every + line, then a final newline); opencode drops one
  // final newline from an added file, so its test expects "new content\n".
  {
    name: "opencode-add-explicit-trailing-newline",
    source: "opencode test apply_patch adds file with explicit trailing newline",
    files: {},
    patch: "*** Begin Patch\n*** Add File: explicit_newline.txt\n+new content\n+\n*** End Patch",
    expect: { ok: true, files: { "explicit_newline.txt": "new content\n\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Written from the grammar and freshfs's decided semantics.
  // ---------------------------------------------------------------------------------------------
  {
    name: "third-file-fails-nothing-changes",
    source: "grammar",
    files: { "a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "one\ntwo\nthree\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: a.txt\n" +
      "@@\n" +
      "-alpha\n" +
      "+ALPHA\n" +
      "*** Update File: b.txt\n" +
      "@@\n" +
      "-beta\n" +
      "+BETA\n" +
      "*** Update File: c.txt\n" +
      "@@\n" +
      "-one\n" +
      "+ONE\n" +
      "@@\n" +
      "-missing\n" +
      "+MISSING\n" +
      "*** End Patch\n",
    expect: { ok: false, code: "NO_MATCH", message: ["c.txt", "hunk 2"] },
    differs:
      "Codex writes a.txt and b.txt before failing on c.txt and leaves them changed; freshfs is all or nothing.",
  },
  {
    name: "no-trailing-newline-end-of-file-append",
    source: "grammar",
    files: { "a.txt": "a\nb" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n b\n+c\n*** End of File\n*** End Patch\n",
    expect: { ok: true, files: { "a.txt": "a\nb\nc\n" } },
  },
  {
    name: "quote-map-match",
    source: "grammar",
    files: { "notes.md": "It\u2019s done.\nNext line\n" },
    patch:
      "*** Begin Patch\n*** Update File: notes.md\n@@\n-It's done.\n+It is done.\n*** End Patch\n",
    expect: { ok: true, files: { "notes.md": "It is done.\nNext line\n" } },
  },
  {
    name: "exact-match-before-quote-map",
    source: "grammar",
    files: { "quotes.md": "it\u2019s here\nit's here\n" },
    patch:
      "*** Begin Patch\n*** Update File: quotes.md\n@@\n-it's here\n+replaced\n*** End Patch\n",
    expect: { ok: true, files: { "quotes.md": "it\u2019s here\nreplaced\n" } },
  },
  {
    name: "trailing-whitespace-match",
    source: "grammar",
    files: { "config.txt": "alpha   \nbeta\t\n" },
    patch: "*** Begin Patch\n*** Update File: config.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n",
    expect: { ok: true, files: { "config.txt": "ALPHA\nbeta\t\n" } },
  },
  {
    name: "leading-whitespace-last-pass",
    source: "grammar",
    files: { "main.py": "def f():\n    return 1\n" },
    patch: "*** Begin Patch\n*** Update File: main.py\n@@\n-return 1\n+return 2\n*** End Patch\n",
    // As Codex's last pass: the new line is written as the patch gives it (the result says so).
    expect: { ok: true, files: { "main.py": "def f():\nreturn 2\n" } },
  },
  {
    name: "add-over-unread-file",
    source: "grammar",
    files: { "kept.txt": "theirs\n" },
    unread: ["kept.txt"],
    patch: "*** Begin Patch\n*** Add File: kept.txt\n+mine\n*** End Patch\n",
    expect: { ok: false, code: "NOT_READ", message: ["kept.txt"] },
  },
  {
    name: "move-onto-unread-file",
    source: "grammar",
    files: { "from.txt": "moving\n", "to.txt": "theirs\n" },
    unread: ["to.txt"],
    patch:
      "*** Begin Patch\n*** Update File: from.txt\n*** Move to: to.txt\n@@\n-moving\n+moved\n*** End Patch\n",
    expect: { ok: false, code: "NOT_READ", message: ["to.txt"] },
  },
  {
    name: "add-over-crlf-file-keeps-its-endings",
    source: "grammar",
    files: { "win.txt": "old\r\nlines\r\n" },
    patch: "*** Begin Patch\n*** Add File: win.txt\n+new\n+lines\n*** End Patch\n",
    expect: { ok: true, files: { "win.txt": "new\r\nlines\r\n" } },
    differs:
      'Codex writes the added lines with "\\n" ("new\\nlines\\n"); freshfs replaces a file as its write tool does, in the file\'s own line ending.',
  },
  {
    name: "no-newline-marker-after-added-line",
    source: "grammar",
    files: { "a.txt": "one\ntwo\n" },
    patch:
      "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n\\ No newline at end of file\n*** End Patch\n",
    expect: { ok: true, files: { "a.txt": "one\nTWO" } },
    differs:
      "Codex does not read unified diff markers (it refuses the line); freshfs takes it as a unified diff means it: the new last line has no line break.",
  },
  {
    name: "exact-match-before-trimmed-pass",
    source: "grammar",
    files: { "main.py": "    x = 1\nx = 1\n" },
    patch: "*** Begin Patch\n*** Update File: main.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n",
    expect: { ok: true, files: { "main.py": "    x = 1\nx = 2\n" } },
  },
  {
    name: "first-occurrence-wins",
    source: "grammar",
    files: { "dup.txt": "x\ny\nx\n" },
    patch: "*** Begin Patch\n*** Update File: dup.txt\n@@\n-x\n+X\n*** End Patch\n",
    expect: { ok: true, files: { "dup.txt": "X\ny\nx\n" } },
  },
  {
    name: "eof-anchor-picks-last-occurrence",
    source: "grammar",
    files: { "dup.txt": "x\ny\nx\n" },
    patch:
      "*** Begin Patch\n*** Update File: dup.txt\n@@\n-x\n+X\n*** End of File\n*** End Patch\n",
    expect: { ok: true, files: { "dup.txt": "x\ny\nX\n" } },
  },
  {
    name: "eof-anchor-not-at-end",
    source: "grammar",
    files: { "tail.txt": "a\nb\nc\n" },
    patch:
      "*** Begin Patch\n*** Update File: tail.txt\n@@\n-a\n+A\n*** End of File\n*** End Patch\n",
    expect: { ok: false, code: "NO_MATCH", message: ["tail.txt", "hunk 1"] },
  },
  {
    name: "search-resumes-after-previous-chunk",
    source: "grammar",
    files: { "seq.txt": "a\nx\nb\nx\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: seq.txt\n" +
      "@@\n" +
      " a\n" +
      "-x\n" +
      "+X1\n" +
      "@@\n" +
      "-x\n" +
      "+X2\n" +
      "*** End Patch\n",
    expect: { ok: true, files: { "seq.txt": "a\nX1\nb\nX2\n" } },
  },
  {
    name: "chunks-out-of-order",
    source: "grammar",
    files: { "order.txt": "a\nb\n" },
    patch: "*** Begin Patch\n*** Update File: order.txt\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch\n",
    expect: { ok: false, code: "NO_MATCH", message: ["order.txt", "hunk 2"] },
  },
  {
    name: "context-header-not-found",
    source: "grammar",
    files: { "lib.py": "class A:\n    x = 1\n" },
    patch:
      "*** Begin Patch\n*** Update File: lib.py\n@@ class B:\n-    x = 1\n+    x = 2\n*** End Patch\n",
    expect: { ok: false, code: "NO_MATCH", message: ["lib.py", "hunk 1"] },
  },
  {
    name: "update-then-delete-same-file",
    source: "grammar",
    files: { "a.txt": "one\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: a.txt\n" +
      "@@\n" +
      "-one\n" +
      "+two\n" +
      "*** Delete File: a.txt\n" +
      "*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH", message: ["a.txt"] },
    differs:
      "Codex runs the operations in turn: it updates a.txt, then deletes it, and succeeds; freshfs refuses two operations on one path (their order would decide the result).",
  },
  {
    name: "two-updates-same-file",
    source: "grammar",
    files: { "a.txt": "one\ntwo\n" },
    patch:
      "*** Begin Patch\n" +
      "*** Update File: a.txt\n" +
      "@@\n" +
      "-one\n" +
      "+ONE\n" +
      "*** Update File: a.txt\n" +
      "@@\n" +
      "-two\n" +
      "+TWO\n" +
      "*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH", message: ["a.txt"] },
    differs:
      'Codex applies each section to the file as the previous one left it ("ONE\\nTWO\\n"); freshfs refuses two operations on one path: a file\'s chunks belong in one section.',
  },
  {
    name: "heredoc-with-apply-patch-command",
    source: "grammar",
    files: {},
    patch:
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+Hello, world!\n*** End Patch\nEOF\n",
    expect: { ok: true, files: { "hello.txt": "Hello, world!\n" } },
    differs:
      "Codex's lenient mode unwraps only a first line that is exactly <<EOF, <<'EOF' or <<\"EOF\" and rejects this; freshfs also unwraps the heredoc when the command before it is part of the input.",
  },
  {
    name: "add-file-with-empty-line",
    source: "grammar",
    files: {},
    patch: "*** Begin Patch\n*** Add File: poem.txt\n+roses\n+\n+violets\n*** End Patch\n",
    expect: { ok: true, files: { "poem.txt": "roses\n\nviolets\n" } },
  },
  {
    name: "add-file-unprefixed-line",
    source: "grammar",
    files: {},
    patch: "*** Begin Patch\n*** Add File: a.txt\n+one\ntwo\n*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "move-without-chunks",
    source: "grammar",
    files: { "a.txt": "x\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch\n",
    expect: { ok: true, files: { "b.txt": "x\n" } },
    differs:
      "Codex refuses an update without hunks even with a Move to ('Update file hunk for path is empty'); freshfs takes it as the plain move the model asked for.",
  },
  {
    name: "remove-empty-line-with-bare-minus",
    source: "grammar",
    files: { "gap.txt": "a\n\nb\n" },
    patch: "*** Begin Patch\n*** Update File: gap.txt\n@@\n a\n-\n b\n*** End Patch\n",
    expect: { ok: true, files: { "gap.txt": "a\nb\n" } },
  },
  {
    name: "invalid-line-after-chunk",
    source: "grammar",
    files: { "a.txt": "one\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\nthree\n*** End Patch\n",
    expect: { ok: false, code: "INVALID_PATCH" },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex tests/suite/tool.rs, the tests not restating a scenario
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-repeated-context-line-ending",
    source: "codex tool.rs test_apply_patch_cli_preserves_repeated_context_line_ending",
    files: { "repeated_context.txt": "same\r\nsame\n" },
    patch:
      "*** Begin Patch\n*** Update File: repeated_context.txt\n@@\n-same\n same\n*** End Patch",
    expect: { ok: true, files: { "repeated_context.txt": "same\n" } },
  },
  {
    name: "codex-untouched-mixed-line-endings",
    source: "codex tool.rs test_apply_patch_cli_preserves_untouched_mixed_line_endings",
    files: { "mixed.txt": "one\r\ntwo\nthree\r\nfour\n" },
    patch:
      "*** Begin Patch\n*** Update File: mixed.txt\n@@\n one\n two\n-three\n+THREE\n four\n*** End Patch",
    expect: { ok: true, files: { "mixed.txt": "one\r\ntwo\nTHREE\r\nfour\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex src/lib.rs, the tests not restating a scenario
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-delete-file-without-newline",
    source: "codex lib.rs test_delete_file_hunk_removes_file",
    files: { "del.txt": "x" },
    patch: "*** Begin Patch\n*** Delete File: del.txt\n*** End Patch",
    expect: { ok: true, files: {} },
  },
  {
    name: "codex-update-modifies-content",
    source: "codex lib.rs test_update_file_hunk_modifies_content",
    files: { "update.txt": "foo\nbar\n" },
    patch: "*** Begin Patch\n*** Update File: update.txt\n@@\n foo\n-bar\n+baz\n*** End Patch",
    expect: { ok: true, files: { "update.txt": "foo\nbaz\n" } },
  },
  {
    name: "codex-update-can-move-file",
    source: "codex lib.rs test_update_file_hunk_can_move_file",
    files: { "src.txt": "line\n" },
    patch:
      "*** Begin Patch\n*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-line\n+line2\n*** End Patch",
    expect: { ok: true, files: { "dst.txt": "line2\n" } },
  },
  {
    name: "codex-multiple-chunks-one-file",
    source: "codex lib.rs test_multiple_update_chunks_apply_to_single_file",
    files: { "multi.txt": "foo\nbar\nbaz\nqux\n" },
    patch:
      "*** Begin Patch\n*** Update File: multi.txt\n@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+QUX\n*** End Patch",
    expect: { ok: true, files: { "multi.txt": "foo\nBAR\nbaz\nQUX\n" } },
  },
  {
    name: "codex-crlf-embedded-cr-append",
    source: "codex lib.rs test_preserve_crlf_embedded_carriage_returns_on_append",
    files: { "crlf_cr_content.txt": "foo\r\r\nbar\r\n" },
    patch:
      "*** Begin Patch\n*** Update File: crlf_cr_content.txt\n@@\n+BAZ\n*** End of File\n*** End Patch",
    expect: { ok: true, files: { "crlf_cr_content.txt": "foo\r\r\nbar\r\nBAZ\r\n" } },
  },
  {
    name: "codex-unified-diff-two-chunks",
    source: "codex lib.rs test_unified_diff",
    files: { "multi.txt": "foo\nbar\nbaz\nqux\n" },
    patch:
      "*** Begin Patch\n*** Update File: multi.txt\n@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+QUX\n*** End Patch",
    expect: { ok: true, files: { "multi.txt": "foo\nBAR\nbaz\nQUX\n" } },
  },
  {
    name: "codex-last-line-trailing-blank-context",
    source: "codex lib.rs test_unified_diff_last_line_replacement",
    files: { "last.txt": "foo\nbar\nbaz\n" },
    patch:
      "*** Begin Patch\n*** Update File: last.txt\n@@\n foo\n bar\n-baz\n+BAZ\n\n*** End Patch",
    expect: { ok: true, files: { "last.txt": "foo\nbar\nBAZ\n" } },
  },
  {
    name: "codex-lf-trailing-newline-retry",
    source: "codex lib.rs test_derive_new_contents_lf_trailing_newline",
    files: { "lf_trailing_newline.txt": "foo\nbar\n" },
    patch:
      "*** Begin Patch\n*** Update File: lf_trailing_newline.txt\n@@\n foo\n-bar\n+BAR\n\n*** End Patch",
    expect: { ok: true, files: { "lf_trailing_newline.txt": "foo\nBAR\n" } },
  },
  {
    name: "codex-unified-diff-interleaved",
    source: "codex lib.rs test_unified_diff_interleaved_changes",
    files: { "interleaved.txt": "a\nb\nc\nd\ne\nf\n" },
    patch:
      "*** Begin Patch\n*** Update File: interleaved.txt\n@@\n a\n-b\n+B\n@@\n d\n-e\n+E\n@@\n f\n+g\n*** End of File\n*** End Patch",
    expect: { ok: true, files: { "interleaved.txt": "a\nB\nc\nd\nE\nf\ng\n" } },
  },
  {
    name: "codex-doubled-end-patch",
    source:
      "codex lib.rs test_apply_patch_fails_on_write_error (its patch text, without the read-only file)",
    files: { "readonly.txt": "before\n" },
    patch:
      "*** Begin Patch\n*** Update File: readonly.txt\n@@\n-before\n+after\n*** End Patch\n*** End Patch",
    expect: { ok: false, code: "INVALID_PATCH" },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex tests/suite/cli.rs: one test applies two patches in turn
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-cli-add",
    source: "codex cli.rs test_apply_patch_cli_add_and_update (step 1)",
    files: {},
    patch: "*** Begin Patch\n*** Add File: cli_test.txt\n+hello\n*** End Patch",
    expect: { ok: true, files: { "cli_test.txt": "hello\n" } },
  },
  {
    name: "codex-cli-update",
    source: "codex cli.rs test_apply_patch_cli_add_and_update (step 2)",
    files: { "cli_test.txt": "hello\n" },
    patch: "*** Begin Patch\n*** Update File: cli_test.txt\n@@\n-hello\n+world\n*** End Patch",
    expect: { ok: true, files: { "cli_test.txt": "world\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex src/parser.rs: the parts of its tests of several patches not carried above
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-padded-markers-add-file",
    source:
      'codex parser.rs test_parse_patch ("*** Begin Patch " ... " *** End Patch" around an Add File)',
    files: {},
    patch: "*** Begin Patch \n*** Add File: foo\n+hi\n *** End Patch",
    expect: { ok: true, files: { foo: "hi\n" } },
  },
  {
    name: "codex-heredoc-bare",
    source: "codex parser.rs test_parse_patch_lenient (<<EOF)",
    files: { "file2.py": "import foo\n" },
    patch:
      "<<EOF\n*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch\nEOF\n",
    expect: { ok: true, files: { "file2.py": "import foo\nbar\n" } },
  },
  {
    name: "codex-heredoc-double-quoted",
    source: 'codex parser.rs test_parse_patch_lenient (<<"EOF")',
    files: { "file2.py": "import foo\n" },
    patch:
      '<<"EOF"\n*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch\nEOF\n',
    expect: { ok: true, files: { "file2.py": "import foo\nbar\n" } },
  },
  {
    name: "codex-invalid-hunk-header-bad",
    source: 'codex parser.rs test_parse_one_hunk (["bad"])',
    files: {},
    patch: "*** Begin Patch\nbad\n*** End Patch",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-later-chunk-without-header",
    source: 'codex parser.rs test_update_file_chunk (["bad"], not the first chunk)',
    files: { "a.txt": "one\ntwo\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\nbad\n*** End Patch",
    expect: { ok: false, code: "INVALID_PATCH" },
  },
  {
    name: "codex-add-only-chunk-end-of-file",
    source: 'codex parser.rs test_update_file_chunk (["@@", "+line", "*** End of File"])',
    files: { "a.txt": "one\n" },
    patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n+line\n*** End of File\n*** End Patch",
    expect: { ok: true, files: { "a.txt": "one\nline\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Codex src/seek_sequence.rs: its four matcher tests, as patches
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-seek-exact",
    source: "codex seek_sequence.rs test_exact_match_finds_sequence",
    files: { "seek.txt": "foo\nbar\nbaz\n" },
    patch: "*** Begin Patch\n*** Update File: seek.txt\n@@\n-bar\n-baz\n+BAR\n+BAZ\n*** End Patch",
    expect: { ok: true, files: { "seek.txt": "foo\nBAR\nBAZ\n" } },
  },
  {
    name: "codex-seek-rstrip",
    source: "codex seek_sequence.rs test_rstrip_match_ignores_trailing_whitespace",
    files: { "ws.txt": "foo   \nbar\t\t\n" },
    patch: "*** Begin Patch\n*** Update File: ws.txt\n@@\n-foo\n-bar\n+FOO\n+BAR\n*** End Patch",
    expect: { ok: true, files: { "ws.txt": "FOO\nBAR\n" } },
  },
  {
    name: "codex-seek-trim-both",
    source: "codex seek_sequence.rs test_trim_match_ignores_leading_and_trailing_whitespace",
    files: { "ws.txt": "    foo   \n   bar\t\n" },
    patch: "*** Begin Patch\n*** Update File: ws.txt\n@@\n-foo\n-bar\n+FOO\n+BAR\n*** End Patch",
    expect: { ok: true, files: { "ws.txt": "FOO\nBAR\n" } },
  },
  {
    name: "codex-seek-pattern-longer-than-file",
    source: "codex seek_sequence.rs test_pattern_longer_than_input_returns_none",
    files: { "one.txt": "just one line\n" },
    patch: "*** Begin Patch\n*** Update File: one.txt\n@@\n-too\n-many\n-lines\n+x\n*** End Patch",
    expect: { ok: false, code: "NO_MATCH", message: ["one.txt", "hunk 1"] },
  },

  // ---------------------------------------------------------------------------------------------
  // A newer version of a scenario's fixture
  // ---------------------------------------------------------------------------------------------
  {
    name: "s019-unicode-simple-padded-end",
    source:
      'codex scenario 019_unicode_simple (newer patch.txt, 0354078: "*** End Patch " with a trailing space)',
    files: { "foo.txt": "line1\nnaïve café\nline3\n" },
    patch:
      "*** Begin Patch\n*** Update File: foo.txt\n@@\n line1\n-naïve café\n+naïve café ✅\n*** End Patch \n",
    expect: { ok: true, files: { "foo.txt": "line1\nnaïve café ✅\nline3\n" } },
  },

  // ---------------------------------------------------------------------------------------------
  // Derived from Codex's source, with no Codex test of their own (seek_sequence.rs).
  // ---------------------------------------------------------------------------------------------
  {
    name: "codex-derived-punctuation-before-indentation",
    source: "codex seek_sequence.rs (derived from its pass order; no test of its own)",
    files: { "order.txt": "x\u2014y\n  x-y\n" },
    patch: "*** Begin Patch\n*** Update File: order.txt\n@@\n-x-y\n+Z\n*** End Patch",
    expect: { ok: true, files: { "order.txt": "Z\n  x-y\n" } },
    differs:
      "Codex's passes are exact, trailing whitespace, both ends, then punctuation read as ASCII, so it replaces line 2; freshfs reads punctuation before whitespace and leaves the pass that ignores indentation last (a changed indentation is a changed line in Python or YAML), so it replaces line 1.",
  },
  {
    name: "codex-derived-nbsp-normalised",
    source:
      "codex seek_sequence.rs (derived: its normalise maps U+00A0 and other odd spaces to ' ')",
    files: { "nbsp.txt": "a\u00A0b\n" },
    patch: "*** Begin Patch\n*** Update File: nbsp.txt\n@@\n-a b\n+c\n*** End Patch",
    expect: { ok: true, files: { "nbsp.txt": "c\n" } },
  },
];

/**
 * The limits of the agent tools, in one place: the code enforces these constants and the
 * messages (and, later, tool descriptions) interpolate them, so the two never drift.
 */

/** Lines `read` shows when no `limit` is given (Claude Code's default). */
export const READ_DEFAULT_LIMIT = 2000;
/** Longer lines are cut in `read` output, with a marker saying how much is hidden. */
export const READ_MAX_LINE_CHARS = 2000;
/**
 * The most text (UTF-8 bytes) any tool answers with, results and errors alike: what a model can
 * take in one tool result without its context being flooded. `read` stops adding lines before
 * it and says where to go on; glob, grep and find show the records that fit and say how to page
 * on; a diff past it is summarized by its changed lines; anything else is cut with a note.
 */
export const MAX_RESULT_BYTES = 256 * 1024;
/**
 * Files larger than this are refused by `read` and by the editing tools: they are read whole
 * (the guard hashes every byte, and an edit rewrites the file), and agents meet such files
 * as data or build output, which grep serves better.
 */
export const MAX_FILE_BYTES = 32 * 1024 * 1024;
/** Bytes inspected for a NUL to call a file binary (git and ripgrep look at the first 8 KiB). */
export const BINARY_SNIFF_BYTES = 8192;
/** Default cap on paths returned by the `glob` tool. */
export const GLOB_DEFAULT_LIMIT = 100;
/** Default cap on matches returned by the `find` tool. */
export const FIND_DEFAULT_LIMIT = 20;
/** Default cap on records (lines, files or counts) returned by the `grep` tool. */
export const GREP_TOOL_DEFAULT_LIMIT = 250;
/** Grep lines longer than this are cut, with a marker. */
export const GREP_TOOL_MAX_COLUMNS = 500;
/** Lines of context around each change in the unified diff an edit returns. */
export const DIFF_CONTEXT_LINES = 3;
/** Candidate lines offered when an edit's old text is not found. */
export const NO_MATCH_CANDIDATES = 3;
/** Line numbers listed when an edit's old text is found more than once. */
export const AMBIGUOUS_LINES_SHOWN = 10;
/**
 * The grep tool's whole budget: well inside an MCP client's usual request timeout (60 s), so
 * the caller gets the partial answer rather than a timeout.
 */
export const GREP_TOOL_TIMEOUT_MS = 30_000;
/** Entries `list` shows when no `limit` is given; a tree is cut level by level past it. */
export const LIST_DEFAULT_LIMIT = 1000;
/**
 * The most entries one `list` may ask for: each shown entry costs an `lstat`, and the 256 KiB
 * cap holds a few thousand lines anyway.
 */
export const LIST_MAX_LIMIT = 10_000;
/** The deepest tree `list` draws (`depth`). */
export const LIST_MAX_DEPTH = 32;
/** Most files one `read_many` call reads. */
export const READ_MANY_MAX_FILES = 100;
/**
 * Largest image `read` returns. Anthropic's API takes images up to 5 MB, and an MCP result
 * carries them as base64 (4 bytes for every 3): 3.75 MiB of image is 5 MiB on the wire.
 */
export const MAX_IMAGE_BYTES = 3.75 * 1024 * 1024;
/**
 * How long `read` extracts a PDF's text in one call: pdf.js runs on the event loop, a page at a
 * time, so a long document is cut between pages with a note (the grep tool's budget, for the
 * same reason: well inside an MCP client's usual request timeout).
 */
export const PDF_TIMEOUT_MS = 30_000;
/** Pages of a PDF `read` extracts text from in one call (`pages` picks others). */
export const PDF_MAX_PAGES = 100;
/** Most files one `apply_patch` touches. */
export const PATCH_MAX_FILES = 500;
/**
 * Most bytes one `apply_patch` holds: every touched file's old and new bytes are in memory until
 * the last rename (all or nothing needs them), and each file may be up to MAX_FILE_BYTES.
 */
export const PATCH_MAX_BYTES = 256 * 1024 * 1024;

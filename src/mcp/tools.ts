/**
 * The MCP tools: the Workspace's tools under Claude Code's names and parameters, with zod
 * schemas, descriptions that state the limits (interpolated from the constants the code
 * enforces), annotations, and structured output. Depends on the library's public surface.
 */
import { z } from "zod";
import {
  type CallOptions,
  FIND_DEFAULT_LIMIT,
  GLOB_DEFAULT_LIMIT,
  GREP_DEFAULT_HEAD_LIMIT,
  GREP_MAX_COLUMNS,
  GREP_TIMEOUT_MS,
  MAX_FILE_BYTES,
  MAX_RESULT_BYTES,
  READ_DEFAULT_LIMIT,
  READ_MAX_LINE_CHARS,
  type Workspace,
} from "../index.js";

// The schemas say what a model should send (Claude Code's names and types). Arguments are not
// checked against them: the Workspace reads them itself, so the spellings opencode and pi use,
// numbers and booleans sent as strings, `null` for "not given" and `edits` sent as JSON text
// all work, and every complaint names the parameter in a sentence a model can act on.
const count = () => z.number().min(0);
const flag = () => z.boolean();
const path = (what: string) => z.string().describe(what);

const MIB = 1024 * 1024;
const GUARD_NOTE =
  "A file that exists must have been read in full with read (in one call or in consecutive windows) and be unchanged on disk since; otherwise the call is refused and says to read it again.";

export interface ToolSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodObject;
  readonly output: z.ZodObject;
  readonly readOnly: boolean;
  /** Calls the Workspace; returns its result (with `text`). */
  readonly call: (
    workspace: Workspace,
    args: Record<string, unknown>,
    call: CallOptions,
  ) => Promise<{ text: string }>;
  /** The structured content: the result without its text (and without bulk the text holds). */
  readonly structured: (result: Record<string, unknown>) => Record<string, unknown>;
}

const withoutText = ({ text: _text, ...rest }: Record<string, unknown>) => rest;

/**
 * The text and the structured content travel in one result, and a client may forward either to
 * the model: a diff is kept in the structured content only while it takes at most half of
 * MAX_RESULT_BYTES (the text summarizes a longer one by its changed lines).
 */
const withoutTextOrLongDiff = (result: Record<string, unknown>) => {
  const rest = withoutText(result);
  const diff = rest.diff;
  if (typeof diff === "string" && Buffer.byteLength(diff) > MAX_RESULT_BYTES / 2) {
    const { diff: _diff, ...kept } = rest;
    return { ...kept, diffOmitted: true };
  }
  return rest;
};

// Which mode answered a search: `live` (the watched tree, synced for this call: every change
// made before the call is in it), `walked` (a walk for this call) or `cached` (the TTL cache,
// where the tree cannot be watched).
const FRESHNESS = z
  .enum(["live", "walked", "cached"])
  .describe(
    "live: watched and synced for this call; walked: walked for it; cached: the TTL cache.",
  );

// The skipped files a grep's structured content names (the text names fewer, and counts them).
const SKIPPED_LISTED = 100;
const warnings = z.array(z.string());

const editOutput = z.object({
  path: z.string(),
  replacements: z.number(),
  matchedBy: z.enum(["exact", "quotes"]),
  created: z.boolean(),
  firstChangedLine: z.number().optional(),
  diff: z.string().optional(),
  diffOmitted: z.boolean().optional(),
  quotesNormalized: z.number(),
  warnings,
});

const editFields = {
  old_string: z
    .string()
    .describe("The exact text to replace, as read shows it without the line-number prefix."),
  new_string: z
    .string()
    .describe("The text to put in its place ($ is literal). Must differ from old_string."),
  replace_all: flag()
    .optional()
    .describe(
      "Replace every occurrence; otherwise old_string must occur exactly once. Default false.",
    ),
};

export const TOOLS: readonly ToolSpec[] = [
  {
    name: "read",
    title: "Read file",
    description: `Reads a text file and shows its lines numbered (cat -n). Shows ${READ_DEFAULT_LIMIT} lines from offset by default; lines longer than ${READ_MAX_LINE_CHARS} characters are cut with a marker, and output stops at ${MAX_RESULT_BYTES / 1024} KiB with a note giving the offset to continue from. Binary files (whose state is still recorded, so they can then be deleted or replaced) and files over ${MAX_FILE_BYTES / MIB} MiB are refused. Read a file before editing or overwriting it.`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      offset: count().optional().describe("1-based line to start from. Default 1."),
      limit: count().optional().describe(`Lines to show. Default ${READ_DEFAULT_LIMIT}.`),
    }),
    output: z.object({
      path: z.string(),
      startLine: z.number(),
      endLine: z.number(),
      totalLines: z.number(),
      truncated: z.boolean(),
      cutLines: z.number(),
      encoding: z.string(),
      text: z.string().describe("The numbered lines and notes, as the text content shows them."),
    }),
    readOnly: true,
    call: (ws, args) => ws.read(args),
    // The text shown stays: a client that forwards only structured content must still give
    // the model the file. The raw lines would repeat it.
    structured: ({ lines: _lines, ...rest }) => rest,
  },
  {
    name: "write",
    title: "Write file",
    description: `Creates a file (and its directories), or replaces a file's whole content. ${GUARD_NOTE} The file's line endings, byte order mark and trailing newline are kept; the write is atomic. Prefer edit for changes to part of a file.`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      content: z.string().describe("The whole new content."),
    }),
    output: z.object({
      path: z.string(),
      created: z.boolean(),
      bytes: z.number(),
      lines: z.number(),
      diff: z.string().optional(),
      diffOmitted: z.boolean().optional(),
      firstChangedLine: z.number().optional(),
      quotesNormalized: z.number(),
      warnings,
    }),
    readOnly: false,
    call: (ws, args, call) => ws.write(args, call),
    structured: withoutTextOrLongDiff,
  },
  {
    name: "edit",
    title: "Edit file",
    description: `Replaces old_string with new_string in a file. old_string must match the file exactly (text differing only in typographic quotes also matches); if it occurs more than once, add surrounding lines or set replace_all. ${GUARD_NOTE} Returns a unified diff. An empty old_string creates a file that does not exist.`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      ...editFields,
    }),
    output: editOutput,
    readOnly: false,
    call: (ws, args, call) => ws.edit(args, call),
    structured: withoutTextOrLongDiff,
  },
  {
    name: "multi_edit",
    title: "Edit file in several places",
    description: `Several edits to one file, applied all or nothing. Each old_string is matched against the file as it is before any of the edits, and no two may overlap. ${GUARD_NOTE}`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      edits: z
        .array(z.object(editFields))
        .min(1)
        .describe("The edits, each old_string/new_string[/replace_all]."),
    }),
    output: editOutput,
    readOnly: false,
    call: (ws, args, call) => ws.multiEdit(args, call),
    structured: withoutTextOrLongDiff,
  },
  {
    name: "delete",
    title: "Delete file",
    description: `Deletes a file (a symbolic link: the link, not its target). ${GUARD_NOTE}`,
    input: z.object({ file_path: path("The file: absolute, or relative to the first root.") }),
    output: z.object({ path: z.string(), warnings }),
    readOnly: false,
    call: (ws, args, call) => ws.delete(args, call),
    structured: withoutText,
  },
  {
    name: "rename",
    title: "Rename or move",
    description:
      "Moves a file or directory to a new path (directories on the way are created). An existing file at `to` is replaced only with overwrite: true, and then it must have been read, as for write.",
    input: z.object({
      from: path("The current path."),
      to: path("The new path, name included."),
      overwrite: flag().optional().describe("Replace an existing file at `to`. Default false."),
    }),
    output: z.object({ from: z.string(), to: z.string(), overwrote: z.boolean(), warnings }),
    readOnly: false,
    call: (ws, args, call) => ws.rename(args, call),
    structured: withoutText,
  },
  {
    name: "glob",
    title: "Find files by pattern",
    description: `Files matching a glob pattern (**/*.ts, src/**/*.test.ts, *.{json,yml}), newest first. * never crosses /; a pattern without / matches at any depth. Ignored files (.gitignore) and node_modules are left out unless the pattern names them. At most ${GLOB_DEFAULT_LIMIT} paths by default; page with offset.`,
    input: z.object({
      pattern: z.string().describe("The glob."),
      path: z.string().optional().describe("The directory to search. Default: every root."),
      limit: count().optional().describe(`Most paths returned. Default ${GLOB_DEFAULT_LIMIT}.`),
      offset: count().optional().describe("Paths to skip first. Default 0."),
    }),
    output: z.object({
      files: z.array(z.string()),
      total: z.number(),
      truncated: z.boolean(),
      freshness: FRESHNESS,
    }),
    readOnly: true,
    call: (ws, args, call) => ws.glob(args, call),
    structured: withoutText,
  },
  {
    name: "grep",
    title: "Search file contents",
    description: `Searches file contents with a regular expression in ripgrep's syntax (Rust's regex crate: \\pL, [[:alpha:]], (?i), Unicode \\w and \\b; syntax "javascript" for lookaround and backreferences; fixed_strings for literal text), ripgrep's way: ignored files skipped, binary files skipped. output_mode "files_with_matches" (default) lists files, "content" shows path:line:text (with -A/-B/-C context), "count" shows matches per file; -v inverts, -o shows only the matches, patterns adds alternatives, max_depth bounds the depth. At most ${GREP_DEFAULT_HEAD_LIMIT} results by default (head_limit; 0 for all), then page with offset. Lines are cut at ${GREP_MAX_COLUMNS} characters. A search stops after ${GREP_TIMEOUT_MS / 1000} s with what it found, flagged partial; files the regex runs too long on are skipped and listed.`,
    input: z.object({
      pattern: z.string().describe("The regular expression (or literal text with fixed_strings)."),
      patterns: z
        .array(z.string())
        .optional()
        .describe(
          "More patterns: a line matching any of them, or pattern, matches (rg -e a -e b).",
        ),
      path: z.string().optional().describe("A directory or file to search. Default: every root."),
      glob: z
        .string()
        .optional()
        .describe("Only files matching this glob (*.ts, *.{ts,tsx}, !*.test.ts)."),
      type: z
        .string()
        .optional()
        .describe("Only files of this type (ts, js, py, rust, go, md, json, ...)."),
      output_mode: z.enum(["content", "files_with_matches", "count"]).optional(),
      "-A": count().optional().describe("Lines after each match (content mode)."),
      "-B": count().optional().describe("Lines before each match (content mode)."),
      "-C": count().optional().describe("Lines around each match (content mode)."),
      "-i": flag().optional().describe("Ignore case."),
      "-n": flag().optional().describe("Line numbers in content mode. Default true."),
      "-v": flag().optional().describe("Invert: the lines that do not match."),
      "-o": flag()
        .optional()
        .describe("Only the matches, each on a line of its own (content mode)."),
      "-w": flag().optional().describe("Whole words only."),
      fixed_strings: flag().optional().describe("The pattern is literal text."),
      multiline: flag().optional().describe("Matches may span lines."),
      max_depth: count()
        .optional()
        .describe("Only files at most this many directories down (1: the directory's own files)."),
      syntax: z
        .enum(["rust", "javascript"])
        .optional()
        .describe(
          'The pattern\'s syntax: "rust" (ripgrep\'s, the default) or "javascript" (lookaround, backreferences).',
        ),
      head_limit: count()
        .optional()
        .describe(`Most results. Default ${GREP_DEFAULT_HEAD_LIMIT}; 0 for all.`),
      offset: count().optional().describe("Results to skip first. Default 0."),
    }),
    output: z.object({
      mode: z.enum(["content", "files_with_matches", "count"]),
      lines: z.array(
        z.object({ path: z.string(), line: z.number(), text: z.string(), match: z.boolean() }),
      ),
      files: z.array(z.string()),
      counts: z.array(z.object({ path: z.string(), count: z.number() })),
      total: z.number(),
      truncated: z.boolean(),
      partial: z.boolean(),
      skipped: z.array(z.string()),
      skippedTotal: z.number(),
      freshness: FRESHNESS,
    }),
    readOnly: true,
    call: (ws, args, call) => ws.grep(args, call),
    structured: (result) => {
      const rest = withoutText(result);
      const skipped = rest.skipped as readonly string[];
      return { ...rest, skipped: skipped.slice(0, SKIPPED_LISTED), skippedTotal: skipped.length };
    },
  },
  {
    name: "find",
    title: "Find a file by a few letters",
    description: `The files a short query most likely means (fuzzy: abbreviations, prefixes, camelCase initials, path fragments), best first; directories end with /. At most ${FIND_DEFAULT_LIMIT} by default.`,
    input: z.object({
      query: z.string().describe("A few letters of the file meant."),
      path: z.string().optional().describe("The directory to search. Default: every root."),
      limit: count().optional().describe(`Most matches. Default ${FIND_DEFAULT_LIMIT}.`),
    }),
    output: z.object({
      matches: z.array(
        z.object({ path: z.string(), type: z.enum(["file", "dir", "symlink"]), score: z.number() }),
      ),
      total: z.number(),
      truncated: z.boolean(),
      freshness: FRESHNESS,
    }),
    readOnly: true,
    call: (ws, args, call) => ws.find(args, call),
    structured: withoutText,
  },
];

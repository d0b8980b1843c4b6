/**
 * The tool table: every agent tool in one entry, keyed by its Workspace method. An entry is the
 * tool's whole surface: its MCP name, title and description (the limits interpolated from the
 * constants the code enforces), the zod schemas of its parameters (Claude Code's names) and
 * result, the other spellings of its parameters (opencode's and pi's), whether it changes
 * anything, the handler that runs it, and its structured and content shaping. `Workspace`
 * builds its methods from this table and the MCP server lists and calls the same entries; a new
 * tool is its own file and an entry here. Depends on the tools' files (each loaded at its first
 * call: `later`), `tools/limits` and zod.
 */
import { z } from "zod";
import {
  type ContentBlock,
  DIFFS_KEPT_BYTES,
  defineTool,
  later,
  withoutText,
  withoutTextOrLongDiff,
} from "./definition.js";
import {
  FIND_DEFAULT_LIMIT,
  GLOB_DEFAULT_LIMIT,
  GREP_TOOL_DEFAULT_LIMIT,
  GREP_TOOL_MAX_COLUMNS,
  GREP_TOOL_TIMEOUT_MS,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_DEPTH,
  MAX_FILE_BYTES,
  MAX_IMAGE_BYTES,
  MAX_RESULT_BYTES,
  PATCH_MAX_FILES,
  PDF_MAX_PAGES,
  READ_DEFAULT_LIMIT,
  READ_MANY_MAX_FILES,
  READ_MAX_LINE_CHARS,
} from "./limits.js";
import type { ReadResult } from "./read.js";

const count = () => z.number().min(0);
const flag = () => z.boolean();
const path = (what: string) => z.string().describe(what);

const MIB = 1024 * 1024;
const GUARD_NOTE =
  "A file that exists must have been read in full with read (in one call or in consecutive windows) and be unchanged on disk since; otherwise the call is refused and says to read it again.";

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

const readOutput = z.object({
  path: z.string(),
  kind: z.enum(["text", "image", "pdf"]),
  startLine: z.number(),
  endLine: z.number(),
  totalLines: z.number(),
  truncated: z.boolean(),
  cutLines: z.number(),
  encoding: z.string().optional(),
  image: z
    .object({
      mimeType: z.string(),
      bytes: z.number(),
      width: z.number().optional(),
      height: z.number().optional(),
    })
    .optional(),
  pages: z.object({ total: z.number(), first: z.number(), last: z.number() }).optional(),
  text: z.string().describe("The numbered lines and notes, as the text content shows them."),
});

/**
 * A read's structured content: the text shown stays (a client that forwards only structured
 * content must still give the model the file); the raw lines would repeat it; the image is
 * described, not carried (it travels as a content block).
 */
function readStructured(result: ReadResult): Record<string, unknown> {
  const { lines: _lines, image, ...rest } = result;
  return {
    ...rest,
    image: image && {
      mimeType: image.mimeType,
      bytes: image.data.length,
      width: image.width,
      height: image.height,
    },
  };
}

/** A read's image, as a content block of its own. */
function imageBlocks(result: ReadResult): ContentBlock[] {
  return result.image
    ? [
        {
          type: "image",
          data: result.image.data.toString("base64"),
          mimeType: result.image.mimeType,
        },
      ]
    : [];
}

const dryRun = () =>
  flag()
    .optional()
    .describe("Check it and show the diff; write nothing, record nothing. Default false.");

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
  dryRun: z.boolean(),
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

// The spellings several tools share.
const FILE_PATH_ALIASES = { file_path: ["filePath", "path"] } as const;
const EDIT_ALIASES = {
  old_string: ["oldString", "oldText"],
  new_string: ["newString", "newText"],
  replace_all: ["replaceAll"],
  dry_run: ["dryRun"],
} as const;

export const TOOLS = {
  /**
   * Shows lines `offset`.. of a text file, numbered, and records the read; an image is returned
   * as its bytes and type, a PDF as its pages' text.
   */
  read: defineTool({
    name: "read",
    title: "Read file",
    description: `Reads a text file and shows its lines numbered (cat -n). Shows ${READ_DEFAULT_LIMIT} lines from offset by default; lines longer than ${READ_MAX_LINE_CHARS} characters are cut with a marker, and output stops at ${MAX_RESULT_BYTES / 1024} KiB with a note giving the offset to continue from. An image (PNG, JPEG, GIF, WebP, up to ${MAX_IMAGE_BYTES / MIB} MiB) is returned as an image; a PDF as the text of its pages (at most ${PDF_MAX_PAGES} a call: pages "1-5"). Other binary files (whose state is still recorded, so they can then be deleted or replaced) and files over ${MAX_FILE_BYTES / MIB} MiB are refused. Read a file before editing or overwriting it.`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      offset: count().optional().describe("1-based line to start from. Default 1."),
      limit: count().optional().describe(`Lines to show. Default ${READ_DEFAULT_LIMIT}.`),
      pages: z
        .string()
        .optional()
        .describe(`A PDF's pages: "3" or "1-5". Default the first ${PDF_MAX_PAGES}.`),
    }),
    aliases: FILE_PATH_ALIASES,
    readOnly: true,
    handler: later(() => import("./read.js").then((m) => m.readTool)),
    output: readOutput,
    structured: readStructured,
    content: (result) => [{ type: "text", text: result.text }, ...imageBlocks(result)],
  }),

  /** Several files, each read and recorded as `read` would; one output cap for the call. */
  readMany: defineTool({
    name: "read_many",
    title: "Read several files",
    description: `Reads several files in one call (at most ${READ_MANY_MAX_FILES}), each shown and recorded exactly as read would (offset and limit apply to each); a file that fails shows its error in its place. One output cap of ${MAX_RESULT_BYTES / 1024} KiB for the whole call: a file that no longer fits is not read, and the text says so.`,
    input: z.object({
      paths: z
        .array(z.string())
        .min(1)
        .describe("The files: absolute, or relative to the first root."),
      offset: count().optional().describe("1-based line to start from, in each file. Default 1."),
      limit: count()
        .optional()
        .describe(`Lines to show of each file. Default ${READ_DEFAULT_LIMIT}.`),
    }),
    aliases: { paths: ["file_paths"] },
    readOnly: true,
    handler: later(() => import("./read-many.js").then((m) => m.readManyTool)),
    output: z.object({
      files: z.array(
        z.object({
          path: z.string(),
          result: readOutput.optional(),
          error: z
            .object({ code: z.string(), message: z.string(), path: z.string().optional() })
            .optional(),
        }),
      ),
      read: z.number(),
      failed: z.number(),
    }),
    structured: (result) => ({
      ...withoutText(result),
      files: result.files.map((file) => ({
        ...file,
        result: file.result && readStructured(file.result),
      })),
    }),
    content: (result) => [
      { type: "text", text: result.text },
      ...result.files.flatMap((file) => (file.result ? imageBlocks(file.result) : [])),
    ],
  }),

  /** Creates a file, or overwrites one that was read in full and has not changed since. */
  write: defineTool({
    name: "write",
    title: "Write file",
    description: `Creates a file (and its directories), or replaces a file's whole content. ${GUARD_NOTE} The file's line endings, byte order mark and trailing newline are kept; the write is atomic. Prefer edit for changes to part of a file.`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      content: z.string().describe("The whole new content."),
    }),
    aliases: { ...FILE_PATH_ALIASES, content: ["text"] },
    readOnly: false,
    handler: later(() => import("./write.js").then((m) => m.writeTool)),
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
    structured: withoutTextOrLongDiff,
  }),

  /** Replaces `old_string` (once, or every occurrence with `replace_all`) in a read file. */
  edit: defineTool({
    name: "edit",
    title: "Edit file",
    description: `Replaces old_string with new_string in a file. old_string must match the file exactly (text differing only in typographic quotes also matches); if it occurs more than once, add surrounding lines or set replace_all. ${GUARD_NOTE} Returns a unified diff. An empty old_string creates a file that does not exist.`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      ...editFields,
      dry_run: dryRun(),
    }),
    aliases: { ...FILE_PATH_ALIASES, ...EDIT_ALIASES },
    readOnly: false,
    handler: later(() => import("./edit.js").then((m) => m.editTool)),
    output: editOutput,
    structured: withoutTextOrLongDiff,
  }),

  /** Several replacements in one file, all matched against its current text; all or nothing. */
  multiEdit: defineTool({
    name: "multi_edit",
    title: "Edit file in several places",
    description: `Several edits to one file, applied all or nothing. Each old_string is matched against the file as it is before any of the edits, and no two may overlap. ${GUARD_NOTE}`,
    input: z.object({
      file_path: path("The file: absolute, or relative to the first root."),
      edits: z
        .array(z.object(editFields))
        .min(1)
        .describe("The edits, each old_string/new_string[/replace_all]."),
      dry_run: dryRun(),
    }),
    // old_string, new_string and replace_all are read in each of the edits.
    aliases: { ...FILE_PATH_ALIASES, ...EDIT_ALIASES },
    readOnly: false,
    handler: later(() => import("./edit.js").then((m) => m.multiEditTool)),
    output: editOutput,
    structured: withoutTextOrLongDiff,
  }),

  /** Applies a patch in Codex's format to several files: all of them, or none. */
  applyPatch: defineTool({
    name: "apply_patch",
    title: "Apply a patch to several files",
    description: `Applies a patch in the apply_patch format to one or more files, all of them or none: if any part fails (a hunk that does not match, a file not read or changed since), nothing is changed, not even the files before it, and the error names the file and the hunk; send the whole patch again once it is fixed. Format:
*** Begin Patch
*** Add File: path/new.ts
+each line of the new file
*** Update File: path/old.ts
*** Move to: path/renamed.ts   (optional)
@@ a line of the file before the change, to place the hunk (optional)
 context line (a space first)
-removed line
+added line
*** End of File   (optional: the hunk ends the file)
*** Delete File: path/gone.ts
*** End Patch
Each hunk's context and removed lines must match the file (typographic quotes, dashes and spaces, then whitespace at line ends, then at line starts too, are tolerated, and reported); a hunk is looked for after the previous one. Every file written ends with a line break. An Add File or a Move to over an existing file replaces it, as write would. ${GUARD_NOTE} At most ${PATCH_MAX_FILES} files. Returns a summary and a diff per file.`,
    input: z.object({
      input: z.string().describe("The whole patch, from *** Begin Patch to *** End Patch."),
      dry_run: dryRun(),
    }),
    aliases: { input: ["patch", "patchText"], dry_run: ["dryRun"] },
    readOnly: false,
    handler: later(() => import("./apply-patch.js").then((m) => m.applyPatchTool)),
    output: z.object({
      files: z.array(
        z.object({
          path: z.string(),
          action: z.enum(["add", "update", "delete", "move"]),
          from: z.string().optional(),
          matchedBy: z.enum(["exact", "punctuation", "whitespace", "indentation"]).optional(),
          added: z.number(),
          removed: z.number(),
          diff: z.string().optional(),
        }),
      ),
      dryRun: z.boolean(),
      warnings,
      diffOmitted: z.boolean().optional(),
    }),
    structured: (result) => {
      const rest = withoutText(result);
      const total = result.files.reduce((sum, file) => sum + Buffer.byteLength(file.diff ?? ""), 0);
      // As for an edit: diffs past half the cap travel in the text only (summarized there).
      return total > DIFFS_KEPT_BYTES
        ? {
            ...rest,
            files: result.files.map(({ diff: _diff, ...file }) => file),
            diffOmitted: true,
          }
        : rest;
    },
  }),

  /** Deletes a file that was read in full and has not changed since (a link: just the link). */
  delete: defineTool({
    name: "delete",
    title: "Delete file",
    description: `Deletes a file (a symbolic link: the link, not its target). ${GUARD_NOTE}`,
    input: z.object({ file_path: path("The file: absolute, or relative to the first root.") }),
    aliases: FILE_PATH_ALIASES,
    readOnly: false,
    handler: later(() => import("./files.js").then((m) => m.deleteTool)),
    output: z.object({ path: z.string(), warnings }),
    structured: withoutText,
  }),

  /** Moves a file or directory; replaces an existing file only with `overwrite`. */
  rename: defineTool({
    name: "rename",
    title: "Rename or move",
    description:
      "Moves a file or directory to a new path (directories on the way are created). An existing file at `to` is replaced only with overwrite: true, and then it must have been read, as for write.",
    input: z.object({
      from: path("The current path."),
      to: path("The new path, name included."),
      overwrite: flag().optional().describe("Replace an existing file at `to`. Default false."),
    }),
    aliases: {
      from: ["source", "old_path", "oldPath"],
      to: ["destination", "new_path", "newPath"],
    },
    readOnly: false,
    handler: later(() => import("./files.js").then((m) => m.renameTool)),
    output: z.object({ from: z.string(), to: z.string(), overwrote: z.boolean(), warnings }),
    structured: withoutText,
  }),

  /** Makes a directory and the parents it needs; an existing directory is no error. */
  mkdir: defineTool({
    name: "mkdir",
    title: "Make a directory",
    description:
      "Makes a directory and any parents it needs (mkdir -p). An existing directory is not an error.",
    input: z.object({ path: path("The directory: absolute, or relative to the first root.") }),
    aliases: { path: ["dir_path", "file_path"] },
    readOnly: false,
    handler: later(() => import("./mkdir.js").then((m) => m.mkdirTool)),
    output: z.object({
      path: z.string(),
      created: z.boolean(),
      firstCreated: z.string().optional(),
    }),
    structured: withoutText,
  }),

  /** A directory's entries (or a tree to `depth`) with kind, size and mtime, from the live listing. */
  list: defineTool({
    name: "list",
    title: "List a directory",
    description: `Lists a directory's entries with kind, size and modification time, directories first; depth > 1 draws a tree (at most ${LIST_MAX_DEPTH} levels). Ignored entries (.gitignore) and hidden ones are left out unless asked for (gitignore: false, hidden: true); ignore leaves out more (globs). At most ${LIST_DEFAULT_LIMIT} entries by default: a tree is cut a whole level at a time, and each directory not opened says how many entries it holds. Always reflects the current tree.`,
    input: z.object({
      path: z.string().optional().describe("The directory. Default: every root."),
      depth: count().optional().describe("Levels: 1 is the directory's own entries. Default 1."),
      ignore: z
        .array(z.string())
        .optional()
        .describe("Globs of entries to leave out (node_modules, *.log, dist/)."),
      hidden: flag()
        .optional()
        .describe("Show entries whose name starts with a dot. Default false."),
      gitignore: flag()
        .optional()
        .describe("Leave out what .gitignore, .ignore and .rgignore ignore. Default true."),
      sort: z
        .enum(["kind", "name", "mtime", "size"])
        .optional()
        .describe("kind (directories first), name, mtime (newest first) or size. Default kind."),
      limit: count().optional().describe(`Most entries. Default ${LIST_DEFAULT_LIMIT}.`),
    }),
    aliases: { path: ["dir_path", "directory"], ignore: ["excludePatterns"] },
    readOnly: true,
    handler: later(() => import("./list.js").then((m) => m.listTool)),
    output: z.object({
      path: z.string(),
      entries: z.array(
        z.object({
          path: z.string(),
          name: z.string(),
          kind: z.enum(["file", "dir", "symlink"]),
          depth: z.number(),
          size: z.number().optional(),
          mtimeMs: z.number(),
          target: z.string().optional(),
          hiddenEntries: z.number().optional(),
        }),
      ),
      total: z.number(),
      truncated: z.boolean(),
      freshness: FRESHNESS,
    }),
    structured: withoutText,
  }),

  /** A path's kind, size, times and mode, and whether the guard holds a fresh full read of it. */
  stat: defineTool({
    name: "stat",
    title: "File info",
    description:
      "What a path is: kind, size, modification and status-change times, mode, a link's target, and, for a file, whether it has been read in full and is unchanged since (editable: true means edit, write and delete need no new read).",
    input: z.object({ path: path("The path: absolute, or relative to the first root.") }),
    aliases: { path: ["file_path", "filePath"] },
    readOnly: true,
    handler: later(() => import("./stat.js").then((m) => m.statTool)),
    output: z.object({
      path: z.string(),
      kind: z.enum(["file", "directory", "symlink", "fifo", "socket", "device"]),
      symlink: z.string().optional(),
      size: z.number(),
      mtime: z.string(),
      mtimeMs: z.number(),
      ctime: z.string(),
      ctimeMs: z.number(),
      mode: z.string(),
      read: z.enum(["fresh", "partial", "stale", "not_read"]).optional(),
      editable: z.boolean(),
    }),
    structured: withoutText,
  }),

  /** Files matching a glob, newest first. */
  glob: defineTool({
    name: "glob",
    title: "Find files by pattern",
    description: `Files matching a glob pattern (**/*.ts, src/**/*.test.ts, *.{json,yml}), newest first. * never crosses /; a pattern without / matches at any depth. Ignored files (.gitignore), hidden ones (a name starting with a dot: .env, .github/) and node_modules are left out unless the pattern names them (.github/**). At most ${GLOB_DEFAULT_LIMIT} paths by default; page with offset.`,
    input: z.object({
      pattern: z.string().describe("The glob."),
      path: z.string().optional().describe("The directory to search. Default: every root."),
      limit: count().optional().describe(`Most paths returned. Default ${GLOB_DEFAULT_LIMIT}.`),
      offset: count().optional().describe("Paths to skip first. Default 0."),
    }),
    aliases: { limit: ["head_limit"] },
    readOnly: true,
    handler: later(() => import("./search.js").then((m) => m.globTool)),
    output: z.object({
      files: z.array(z.string()),
      total: z.number(),
      truncated: z.boolean(),
      freshness: FRESHNESS,
    }),
    structured: withoutText,
  }),

  /** Searches file contents (ripgrep semantics). */
  grep: defineTool({
    name: "grep",
    title: "Search file contents",
    description: `Searches file contents with a regular expression in ripgrep's syntax (Rust's regex crate: \\pL, [[:alpha:]], (?i), Unicode \\w and \\b; syntax "javascript" for lookaround and backreferences; fixed_strings for literal text), ripgrep's way: ignored files skipped, binary files skipped. Unlike ripgrep, hidden files (dot-files such as .env, .github/) are searched. output_mode "files_with_matches" (default) lists files, "content" shows path:line:text (with -A/-B/-C context), "count" shows matches per file; -v inverts, -o shows only the matches, patterns adds alternatives, max_depth bounds the depth. At most ${GREP_TOOL_DEFAULT_LIMIT} results by default (head_limit; 0 for all), then page with offset. Lines are cut at ${GREP_TOOL_MAX_COLUMNS} characters. A search stops after ${GREP_TOOL_TIMEOUT_MS / 1000} s with what it found, flagged partial; files the regex runs too long on are skipped and listed.`,
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
        .describe(`Most results. Default ${GREP_TOOL_DEFAULT_LIMIT}; 0 for all.`),
      offset: count().optional().describe("Results to skip first. Default 0."),
    }),
    aliases: {
      "-v": ["invert_match", "invert"],
      "-o": ["only_matching", "onlyMatching"],
      "-w": ["word_regexp", "word"],
      max_depth: ["maxDepth"],
      glob: ["include"],
      output_mode: ["outputMode"],
      "-C": ["context"],
      "-i": ["ignoreCase", "ignore_case"],
      fixed_strings: ["literal", "fixedStrings"],
      head_limit: ["limit"],
    },
    readOnly: true,
    handler: later(() => import("./search.js").then((m) => m.grepTool)),
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
    structured: (result) => ({
      ...withoutText(result),
      skipped: result.skipped.slice(0, SKIPPED_LISTED),
      skippedTotal: result.skipped.length,
    }),
  }),

  /** The files a few letters most likely mean (fuzzy, ranked). */
  find: defineTool({
    name: "find",
    title: "Find a file by a few letters",
    description: `The files a short query most likely means (fuzzy: abbreviations, prefixes, camelCase initials, path fragments), best first; directories end with /. Hidden files and directories (a name starting with a dot: .env, .github/) are left out. At most ${FIND_DEFAULT_LIMIT} by default.`,
    input: z.object({
      query: z.string().describe("A few letters of the file meant."),
      path: z.string().optional().describe("The directory to search. Default: every root."),
      limit: count().optional().describe(`Most matches. Default ${FIND_DEFAULT_LIMIT}.`),
    }),
    aliases: { query: ["pattern"] },
    readOnly: true,
    handler: later(() => import("./search.js").then((m) => m.findTool)),
    output: z.object({
      matches: z.array(
        z.object({ path: z.string(), type: z.enum(["file", "dir", "symlink"]), score: z.number() }),
      ),
      total: z.number(),
      truncated: z.boolean(),
      freshness: FRESHNESS,
    }),
    structured: withoutText,
  }),
};

/** The name of a Workspace method that runs a tool. */
export type ToolMethod = keyof typeof TOOLS;

#!/usr/bin/env node
/**
 * The `freshfs` command: files, glob, find, grep and why from a shell, and `mcp`, the MCP
 * server on stdio. Depends on the library's public surface and on `mcp/`.
 *
 * Exit status as ripgrep's: 0 when something was found, 1 when nothing was, 2 on an error,
 * which is one line on stderr naming the input that was wrong.
 */
import { parseArgs } from "node:util";
import { FreshfsError } from "../errors.js";
import { GREP_MAX_FILE_BYTES, GREP_SEARCH_TIMEOUT_MS } from "../search/grep/grep.js";
import { packageVersion } from "../version.js";
import {
  badInput,
  type Common,
  filesCommand,
  findCommand,
  globCommand,
  grepCommand,
  whyCommand,
} from "./commands.js";

const COMMON_HELP = `Common options:
  --hidden        include files and directories whose name starts with a dot
  --no-ignore     do not apply .gitignore, .ignore and git's exclude files
  --limit N       print at most N results
  --json          print one JSON document with the structured result
  -h, --help      show help`;

const HELP: Record<string, string> = {
  main: `freshfs: the file layer of a coding agent.

Usage:
  freshfs files [DIR]            list files (gitignore-aware), one path per line
  freshfs glob PATTERN [DIR]     files matching a glob (**/*.ts, src/**, *.{js,json})
  freshfs find QUERY [DIR]       the files a few letters most likely mean (fuzzy, ranked)
  freshfs grep PATTERN [DIR]     search file contents (ripgrep's output and flags)
  freshfs why PATH               is PATH ignored, and by which file, line and pattern
  freshfs mcp [--root DIR ...]   the MCP server on stdio (agent file tools)
  freshfs --version

Run 'freshfs COMMAND --help' for a command's options.

${COMMON_HELP}
`,
  files: `Usage: freshfs files [DIR] [options]

Lists the files under DIR (default: the current directory), relative to it, in path order,
leaving out what git would ignore.

${COMMON_HELP}
`,
  glob: `Usage: freshfs glob PATTERN [DIR] [options]

Files under DIR matching PATTERN, relative to DIR. * never crosses /; a pattern without /
matches at any depth; braces, classes and ** work as in picomatch.

${COMMON_HELP}
`,
  find: `Usage: freshfs find QUERY [DIR] [options]

Files (and directories, with a trailing /) ranked by how well QUERY matches them: basename
over path, word boundaries, camelCase initials, consecutive letters.

${COMMON_HELP}
`,
  grep: `Usage: freshfs grep PATTERN [DIR|FILE] [options]

Searches file contents. PATTERN is a regex in rg's syntax (Rust's regex crate: \\pL,
[[:alpha:]], (?i), Unicode \\w and \\b), or a literal with -F, or JavaScript's with -P.
Plain output is what 'rg --no-heading --with-filename --line-number --sort path' prints.

Options (ripgrep's):
  -i              ignore case
  -S              smart case: ignore case unless PATTERN has a capital
  -F              PATTERN is a literal string
  -w              whole words only
  -c              count matching lines per file
  -l              print only the names of files with matches
  -A N, -B N, -C N  lines of context after, before, around each match
  -g GLOB         only files matching GLOB (!GLOB excludes); repeatable
  -t TYPE         only files of TYPE (ts, js, py, rust, go, md, json, ...); repeatable
  -U              multiline: matches may span lines
  -P, --pcre2     PATTERN is a JavaScript regex, for lookaround and backreferences (where
                  rg's -P runs PCRE2)
  -M N            cut lines longer than N characters
  --max-filesize NUM[K|M|G]
                  skip files larger than NUM bytes (K, M, G: times 1024, 1024^2, 1024^3),
                  naming each on stderr; default ${GREP_MAX_FILE_BYTES / 1024 / 1024}M. rg has no bound because it
                  reads a file lazily; freshfs reads each file whole into memory, so this
                  bound is what keeps its memory bounded

freshfs's own:
  --timeout MS    stop searching after MS milliseconds (default ${GREP_SEARCH_TIMEOUT_MS}); a search
                  stopped there prints what it found, says so on stderr and exits 2

${COMMON_HELP}
`,
  why: `Usage: freshfs why PATH [options]

Says whether PATH is ignored and which ignore file, line and pattern decided it (or that no
rule matches, or which rule re-included it). Exit status 0 when ignored, 1 when not, as
'git check-ignore'.

${COMMON_HELP}
`,
  mcp: `Usage: freshfs mcp [--root DIR ...]

Runs the MCP server on stdio: the tools read, write, edit, multi_edit, delete, rename, glob,
grep and find over the roots (default: the current directory). A client's own roots can only
narrow them. Logs go to stderr.

Options:
  --root DIR      a directory the tools may use; repeatable
  -h, --help      show help
`,
};

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  hidden: { type: "boolean" },
  "no-ignore": { type: "boolean" },
  limit: { type: "string" },
  json: { type: "boolean" },
  root: { type: "string", multiple: true },
  i: { type: "boolean", short: "i" },
  S: { type: "boolean", short: "S" },
  F: { type: "boolean", short: "F" },
  w: { type: "boolean", short: "w" },
  c: { type: "boolean", short: "c" },
  l: { type: "boolean", short: "l" },
  A: { type: "string", short: "A" },
  B: { type: "string", short: "B" },
  C: { type: "string", short: "C" },
  g: { type: "string", short: "g", multiple: true },
  t: { type: "string", short: "t", multiple: true },
  U: { type: "boolean", short: "U" },
  P: { type: "boolean", short: "P" },
  pcre2: { type: "boolean" },
  M: { type: "string", short: "M" },
  "max-filesize": { type: "string" },
  timeout: { type: "string" },
} as const;

const GREP_ONLY = [
  "i",
  "S",
  "F",
  "w",
  "c",
  "l",
  "A",
  "B",
  "C",
  "g",
  "t",
  "U",
  "P",
  "pcre2",
  "M",
  "max-filesize",
  "timeout",
] as const;

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw badInput(`${flag} needs a whole number, not '${value}'.`);
  return Number(value);
}

const SIZE_SUFFIXES: Record<string, number> = { "": 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 };

/** rg's NUM+SUFFIX?: digits, then K, M or G (powers of 1024), upper case only, as rg takes them. */
function fileSize(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const [, digits = "", suffix = ""] = /^(\d+)([KMG]?)$/.exec(value) ?? [];
  const bytes = digits === "" ? Number.NaN : Number(digits) * (SIZE_SUFFIXES[suffix] ?? 1);
  if (!Number.isSafeInteger(bytes)) {
    throw badInput(
      `${flag} needs a whole number of bytes with an optional K, M or G, not '${value}'.`,
    );
  }
  return bytes;
}

function operands(
  command: string,
  positionals: readonly string[],
  required: string,
  optional?: string,
): [string, string | undefined] {
  const [first, second, ...extra] = positionals;
  if (first === undefined)
    throw badInput(`${command} needs ${required}. See 'freshfs ${command} --help'.`);
  if (extra.length > 0 || (second !== undefined && optional === undefined)) {
    throw badInput(
      `${command} takes ${required}${optional ? ` [${optional}]` : ""}; '${extra[0] ?? second}' is one too many.`,
    );
  }
  return [first, second];
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP.main as string);
    return 0;
  }
  if (command === "--version" || command === "-V") {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (!(command in HELP) || command === "main") {
    throw badInput(`unknown command '${command}'. Try 'freshfs --help'.`);
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: OPTIONS,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(HELP[command] as string);
    return 0;
  }
  if (command !== "grep") {
    const misplaced = GREP_ONLY.find((flag) => values[flag] !== undefined);
    if (misplaced) {
      const shown = misplaced.length === 1 ? `-${misplaced}` : `--${misplaced}`;
      throw badInput(`${shown} is a grep option; ${command} does not take it.`);
    }
  }
  if (command !== "mcp" && values.root !== undefined) {
    throw badInput(`--root is an mcp option; ${command} takes the directory as an operand.`);
  }
  const common: Common = {
    hidden: values.hidden ?? false,
    noIgnore: values["no-ignore"] ?? false,
    limit: number(values.limit, "--limit"),
    json: values.json ?? false,
  };
  switch (command) {
    case "files": {
      if (positionals.length > 1)
        throw badInput(`files takes at most one DIR; '${positionals[1]}' is one too many.`);
      return filesCommand(positionals[0], common);
    }
    case "glob":
      return globCommand(...operands("glob", positionals, "PATTERN", "DIR"), common);
    case "find":
      return findCommand(...operands("find", positionals, "QUERY", "DIR"), common);
    case "why":
      return whyCommand(operands("why", positionals, "PATH")[0], common);
    case "grep": {
      const [pattern, dir] = operands("grep", positionals, "PATTERN", "DIR");
      return grepCommand(
        pattern,
        dir,
        {
          ignoreCase: values.i ?? false,
          smartCase: values.S ?? false,
          fixedStrings: values.F ?? false,
          word: values.w ?? false,
          count: values.c ?? false,
          filesWithMatches: values.l ?? false,
          after: number(values.A, "-A"),
          before: number(values.B, "-B"),
          context: number(values.C, "-C"),
          globs: values.g ?? [],
          types: values.t ?? [],
          multiline: values.U ?? false,
          javascript: (values.P ?? false) || (values.pcre2 ?? false),
          maxColumns: number(values.M, "-M"),
          maxFileSize: fileSize(values["max-filesize"], "--max-filesize"),
          timeoutMs: number(values.timeout, "--timeout"),
        },
        common,
      );
    }
    case "mcp": {
      if (positionals.length > 0)
        throw badInput(`mcp takes its directories as --root DIR, not '${positionals[0]}'.`);
      const { serveStdio } = await import("../mcp/server.js");
      await serveStdio({ roots: values.root ?? [process.cwd()] });
      return 0;
    }
  }
  return 2;
}

/** One line: the message, its line breaks folded. */
function render(error: unknown): string {
  const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();
  if (error instanceof FreshfsError) return oneLine(error.message);
  if (
    error instanceof Error &&
    (error as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS")
  ) {
    const message = oneLine(error.message).replace(/[^.]$/, "$&.");
    return `${message} Try 'freshfs --help'.`;
  }
  return oneLine(error instanceof Error ? error.message : String(error));
}

// `freshfs grep x | head -1`: the reader has all it wants; stop quietly, as rg does.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`freshfs: ${render(error)}\n`);
    process.exitCode = 2;
  },
);

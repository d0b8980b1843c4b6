/**
 * The `freshfs` command line, run: files, glob, find, grep and why (answered by the user's
 * daemon, `daemon/`, unless --no-daemon), `mcp`, the MCP server on stdio, and `daemon`. Run
 * from a shell by `main`, and inside the daemon for the native relay (`relay`), so it reads its
 * directory and streams from `io`, never from `process`. Depends on `cli/backend`, `daemon/`
 * and (lazily) `mcp/`.
 *
 * Exit status as ripgrep's: 0 when something was found, 1 when nothing was, 2 on an error,
 * which is one line on stderr naming the input that was wrong.
 */
import { parseArgs } from "node:util";
import { DEFAULT_IDLE_MS } from "../client/protocol.js";
import { FreshfsError } from "../errors.js";
import { packageVersion } from "../version.js";
import { daemonWanted, type SearchBackend, searchBackend } from "./backend.js";
import {
  badInput,
  type Common,
  filesCommand,
  findCommand,
  globCommand,
  whyCommand,
} from "./commands.js";
import { io, RunElsewhere } from "./io.js";

const COMMON_HELP = `Common options:
  --hidden        include files and directories whose name starts with a dot
  --no-ignore     do not apply .gitignore, .ignore, .rgignore and git's exclude files
  --limit N       print at most N results
  --json          print one JSON document with the structured result
  -0, --null      end each path with NUL, not a line break (names may hold one)
  --no-daemon     search in this process, not through the user's daemon (FRESHFS_DAEMON=0)
  -h, --help      show help`;

const HELP: Record<string, string> = {
  main: `freshfs: the file layer of a coding agent.

Usage:
  freshfs files [DIR]            list files (gitignore-aware), one path per line
  freshfs glob PATTERN [DIR]     files matching a glob (**/*.ts, src/**, *.{js,json})
  freshfs find QUERY [DIR]       the files a few letters most likely mean (fuzzy, ranked)
  freshfs grep PATTERN [PATH...] search file contents (ripgrep's flags and output)
  freshfs why PATH               is PATH ignored, and by which file, line and pattern
  freshfs mcp [--root DIR ...]   the MCP server on stdio (agent file tools)
  freshfs daemon [ACTION]        the daemon that keeps trees live for every command (status)
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
  why: `Usage: freshfs why PATH [options]

Says whether PATH is ignored and which ignore file, line and pattern decided it (or that no
rule matches, or which rule re-included it). Exit status 0 when ignored, 1 when not, as
'git check-ignore'.

${COMMON_HELP}
`,
  mcp: `Usage: freshfs mcp [--root DIR ...] [--no-daemon | --socket PATH] [--session NAME]

Runs the MCP server on stdio: the agent file tools (read, edit, apply_patch, grep and the
rest; a client's tools/list names them all) over the roots (default: the current directory).
A client's own roots can only narrow them. Logs go to stderr. The tools run in the user's
daemon, which every server on a tree shares (one set of watches, one content index), each
server's read-before-write guard a session of its own there; when the daemon cannot answer,
they run in this process.

Options:
  --root DIR      a directory the tools may use; repeatable
  --no-daemon     run the tools in this process (FRESHFS_DAEMON=0)
  --socket PATH   the daemon on another socket than this user's and environment's
  --session NAME  join the daemon's guard session NAME: reads made by its other clients count
  -h, --help      show help
`,
  daemon: `Usage: freshfs daemon [run | start | stop | status] [options]

The user's daemon: one process (per user and environment) that keeps the trees the commands
search live (watched, with their content indexes), so that files, glob, find, grep and why
answer from memory. Commands start it when it is not running; it exits after ${DEFAULT_IDLE_MS / 60_000} minutes
with no client. It listens on a socket in the user's runtime directory (mode 0700).

  run             run it in the foreground (what commands start)
  start           make sure it runs; print its process id
  stop            stop it (running searches are answered first)
  status          its roots, watches, content indexes, memory and clients

Options:
  --idle-ms N     exit after N ms with no client (FRESHFS_DAEMON_IDLE_MS)
  --reopen-after-ms N
                  keep again the trees of its snapshots only after N ms (a command that
                  starts it does so, searching meanwhile itself)
  --socket PATH   another socket than this user's and environment's
  --json          status as one JSON document
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
  null: { type: "boolean", short: "0" },
  root: { type: "string", multiple: true },
  "no-daemon": { type: "boolean" },
  socket: { type: "string" },
  "idle-ms": { type: "string" },
  "reopen-after-ms": { type: "string" },
  session: { type: "string" },
} as const;

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw badInput(`${flag} needs a whole number, not '${value}'.`);
  return Number(value);
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

/** files, glob, find or why, answered by `backend`. */
function searchCommand(
  command: string,
  positionals: readonly string[],
  common: Common,
  backend: SearchBackend,
): Promise<number> {
  switch (command) {
    case "files": {
      if (positionals.length > 1)
        throw badInput(`files takes at most one DIR; '${positionals[1]}' is one too many.`);
      return filesCommand(positionals[0], common, backend);
    }
    case "glob":
      return globCommand(...operands("glob", positionals, "PATTERN", "DIR"), common, backend);
    case "find":
      return findCommand(...operands("find", positionals, "QUERY", "DIR"), common, backend);
    default:
      return whyCommand(operands("why", positionals, "PATH")[0], common, backend);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io().stdout.write(HELP.main as string);
    return 0;
  }
  if (command === "--version" || command === "-V") {
    io().stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  // grep reads rg's arguments, with rg's rules (clusters, last-wins, options anywhere); loaded
  // only for grep, as the other commands need none of the search workers' modules.
  if (command === "grep") return (await import("./grep/index.js")).grepMain(rest);
  if (!(command in HELP) || command === "main") {
    throw badInput(`unknown command '${command}'. Try 'freshfs --help'.`);
  }
  const { values, positionals } = parse(rest, command);
  if (values.help) {
    io().stdout.write(HELP[command] as string);
    return 0;
  }
  if (command !== "mcp" && values.root !== undefined) {
    throw badInput(`--root is an mcp option; ${command} takes the directory as an operand.`);
  }
  for (const option of ["idle-ms", "reopen-after-ms"] as const) {
    if (command !== "daemon" && values[option] !== undefined) {
      throw badInput(`--${option} is a daemon option, not ${command}'s.`);
    }
  }
  if (command !== "daemon" && command !== "mcp" && values.socket !== undefined) {
    throw badInput(`--socket is a daemon and mcp option, not ${command}'s.`);
  }
  if (command !== "mcp" && values.session !== undefined) {
    throw badInput(`--session is an mcp option, not ${command}'s.`);
  }
  const common: Common = {
    hidden: values.hidden ?? false,
    noIgnore: values["no-ignore"] ?? false,
    limit: number(values.limit, "--limit"),
    json: values.json ?? false,
    nul: values.null ?? false,
  };
  if (command === "daemon") {
    if (positionals.length > 1)
      throw badInput(`daemon takes one ACTION; '${positionals[1]}' is one too many.`);
    const { daemonCommand } = await import("./daemon.js");
    return daemonCommand(positionals[0], {
      socket: values.socket,
      idleMs: number(values["idle-ms"], "--idle-ms"),
      reopenAfterMs: number(values["reopen-after-ms"], "--reopen-after-ms"),
      json: common.json,
      // What the daemon runs for the native relay: these commands.
      runCommand: runCli,
    });
  }
  if (command !== "mcp") {
    const backend = await (io().backend ?? searchBackend)(
      daemonWanted(values["no-daemon"] ?? false),
    );
    try {
      return await searchCommand(command, positionals, common, backend);
    } finally {
      backend.close();
    }
  }
  switch (command) {
    case "mcp": {
      if (positionals.length > 0)
        throw badInput(`mcp takes its directories as --root DIR, not '${positionals[0]}'.`);
      const { serveStdio } = await import("../mcp/server.js");
      const daemon = !daemonWanted(values["no-daemon"] ?? false)
        ? "off"
        : (values.socket ?? "auto");
      await serveStdio({ roots: values.root ?? [io().cwd], daemon, session: values.session });
      return 0;
    }
  }
  return 2;
}

function parse(args: string[], command: string) {
  try {
    return parseArgs({ args, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    throw argumentError(error, command);
  }
}

/**
 * parseArgs's complaint in this CLI's words: the option and the command, one sentence. Its own
 * text misquotes (`'-- "-e"`) and suggests `--` where a grep option was meant.
 */
function argumentError(error: unknown, command: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (!(error instanceof Error) || !code?.startsWith("ERR_PARSE_ARGS")) return error;
  const option = /'(-[^']*)'/.exec(error.message)?.[1] ?? "";
  const help = `See 'freshfs ${command} --help'.`;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    return badInput(`unknown option ${option} for ${command}. ${help}`);
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = /--?[A-Za-z-]+/.exec(error.message)?.[0] ?? "an option";
    return badInput(`${name} needs a value. ${help}`);
  }
  return badInput(`${error.message.replace(/\s*\n\s*/g, " ").trim()} ${help}`);
}

/** One line: the message, its line breaks folded. */
function render(error: unknown): string {
  const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();
  if (error instanceof FreshfsError) return oneLine(error.message);
  return oneLine(error instanceof Error ? error.message : String(error));
}

/**
 * Runs one command; returns its exit status. An error is one line on stderr and status 2, but
 * `RunElsewhere` (for the relay, which then runs the command in Node) is thrown.
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (error) {
    if (error instanceof RunElsewhere) throw error;
    io().stderr.write(`freshfs: ${render(error)}\n`);
    return 2;
  }
}

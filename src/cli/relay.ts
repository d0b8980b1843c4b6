/**
 * The daemon's side of the native relay. A command typed in a shell is `bin/freshfs`, which on
 * Linux x64 runs `native/relay.c` (built into `prebuilds/`): a small program that starts in a
 * millisecond where Node takes 40-50 ms, and sends the command line, its directory and its
 * environment to the user's daemon as the request `cli`. Here the daemon runs that command as
 * `freshfs` would (`run`), with the relay's directory, its searches answered by the daemon's
 * own methods over its live trees, and its output kept; the answer is the exit status and the
 * output, as frames of stdout and stderr in the order written, which the relay writes out.
 * Whatever this process cannot do as the user's own would (a tree not live yet, `-f -`, output
 * over `MAX_OUTPUT_BYTES`, another environment, another command) is answered `fallback`, with
 * nothing printed: the relay then runs Node's `freshfs`, which does it. Depends on `cli/io`,
 * `cli/backend` and `daemon/methods`; loaded by the daemon only.
 */
import { isAbsolute } from "node:path";
import { answeringEnvironment } from "../client/protocol.js";
import type { Method, MethodContext } from "../daemon/methods.js";
import { FreshfsError } from "../errors.js";
import { answeredBy, type SearchBackend } from "./backend.js";
import { type Output, RunElsewhere, withIo } from "./io.js";

/** The commands the relay asks for: those that only search and print. */
const RELAYED = new Set(["files", "glob", "find", "grep", "why"]);

/**
 * The most output one relayed command keeps (it is held until the command ends, then sent as
 * base64, 4/3 of it): past it, the relay runs Node's `freshfs`, which streams.
 */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

export type RelayAnswer =
  /** `frames`: base64 of [stream (1 stdout, 2 stderr), length (u32 little-endian), bytes]... */
  { readonly exit: number; readonly frames: string } | { readonly fallback: string };

interface RelayParams {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", `daemon: cli: ${message}`);
}

function checked(params: unknown): RelayParams {
  const given = (params ?? {}) as Partial<RelayParams>;
  const { argv, cwd, env } = given;
  if (!Array.isArray(argv) || !argv.every((arg) => typeof arg === "string")) {
    throw invalid("argv must be a list of strings.");
  }
  if (typeof cwd !== "string" || !isAbsolute(cwd)) throw invalid("cwd must be an absolute path.");
  if (typeof env !== "object" || env === null || Array.isArray(env)) {
    throw invalid("env must be an object of strings.");
  }
  for (const value of Object.values(env)) {
    if (typeof value !== "string") throw invalid("env must be an object of strings.");
  }
  return { argv, cwd, env };
}

/** Every search of a relayed command that the daemon cannot answer from a live tree. */
const ELSEWHERE: SearchBackend = new Proxy({} as SearchBackend, {
  get: (_target, name) =>
    name === "close"
      ? () => undefined
      : () => Promise.reject(new RunElsewhere("the daemon does not keep this tree live yet")),
});

/** Output kept as frames, within MAX_OUTPUT_BYTES in all. */
class Frames {
  readonly #parts: Buffer[] = [];
  #bytes = 0;

  stream(id: 1 | 2): Output {
    return {
      isTTY: false,
      write: (data: string | Uint8Array) => {
        const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
        if (bytes.length === 0) return true;
        this.#bytes += bytes.length + 5;
        if (this.#bytes > MAX_OUTPUT_BYTES) {
          throw new RunElsewhere(`the output is over ${MAX_OUTPUT_BYTES} bytes`);
        }
        const header = Buffer.alloc(5);
        header[0] = id;
        header.writeUInt32LE(bytes.length, 1);
        this.#parts.push(header, bytes);
        return true;
      },
    };
  }

  base64(): string {
    return Buffer.concat(this.#parts).toString("base64");
  }
}

type RunCommand = (argv: readonly string[]) => Promise<number>;

/** The `cli` method: a relayed command, run here by `run` (`cli/run`'s runCli). */
async function cli(run: RunCommand, params: unknown, context: MethodContext): Promise<RelayAnswer> {
  const { argv, cwd, env } = checked(params);
  const command = argv[0];
  if (command === undefined || !RELAYED.has(command)) {
    return { fallback: `${command ?? "no command"} is run by Node` };
  }
  // The daemon answers for its own environment (ignore rules through HOME and git's
  // variables, freshfs's bounds): the relay found its socket by a digest of the client's.
  const mine = JSON.stringify(answeringEnvironment(process.env));
  if (JSON.stringify(answeringEnvironment(env)) !== mine) {
    return { fallback: "the relay's environment is not this daemon's" };
  }
  const methods = context.state.methods;
  const quiet: MethodContext = { ...context, progress: () => undefined };
  const backend = answeredBy(
    (method, args) => (methods[method] as Method)(args, quiet),
    ELSEWHERE,
    () => undefined,
  );
  const frames = new Frames();
  try {
    const exit = await withIo(
      {
        cwd,
        stdout: frames.stream(1),
        stderr: frames.stream(2),
        stdin: false,
        // --no-daemon asks for a search in the user's own process.
        backend: async (useDaemon) => {
          if (!useDaemon) throw new RunElsewhere("--no-daemon");
          return backend;
        },
      },
      () => run(argv),
    );
    return { exit, frames: frames.base64() };
  } catch (error) {
    if (error instanceof RunElsewhere) return { fallback: error.message };
    throw error;
  }
}

/**
 * The methods `freshfs daemon run` adds to the daemon's own; `run` is `cli/run`'s runCli (given,
 * not imported: `run` imports the daemon command, which imports this).
 */
export function relayMethods(run: RunCommand): Readonly<Record<string, Method>> {
  return { cli: (params, context) => cli(run, params, context) };
}

/**
 * A client of the daemon: connects to the socket of this user and environment (starting the
 * daemon when none answers), says hello (a daemon of another build is asked to stop and a new
 * one started), then sends requests, relays their progress and cancels them on the caller's
 * signal. Everything that can go wrong with the daemon (none can start, it dies, it hangs, it
 * answers with something too large) is a `DaemonUnavailable`: the caller then does the work
 * itself. Loads no search code, so a client call stays small. Depends on `daemon/protocol`,
 * `io/runtime-dir` and `errors`.
 */
import { closeSync, openSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { FreshfsError } from "../errors.js";
import { ensurePrivateDir } from "../io/runtime-dir.js";
import {
  buildId,
  CONNECT_TIMEOUT_MS,
  decode,
  encode,
  type Hello,
  type HelloAnswer,
  LineReader,
  logPath,
  PROTOCOL_VERSION,
  type Reply,
  SILENCE_MS,
  socketPath,
} from "./protocol.js";

/** The daemon cannot answer this call: the caller does the work in its own process. */
export class DaemonUnavailable extends Error {
  /** A daemon was started in the background for the calls after this one (`start: "later"`). */
  readonly starting: boolean;

  constructor(why: string, starting = false) {
    super(why);
    this.name = "DaemonUnavailable";
    this.starting = starting;
  }
}

export interface ConnectOptions {
  /** @default `socketPath()` for this environment */
  readonly socket?: string | undefined;
  /**
   * Start a daemon when none answers: and wait for it (`true`), or leave it starting for the
   * calls after this one, which this one does not wait for (`"later"`: a one-shot command, for
   * which a daemon with nothing kept yet is no faster than its own walk). @default true
   */
  readonly start?: boolean | "later" | undefined;
  /** A guard session to join. */
  readonly session?: string | undefined;
}

export interface RequestOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: never) => void) | undefined;
}

/**
 * How long a daemon a one-shot command starts waits before it keeps its trees again (loading
 * their snapshots takes two cores about a second on the Linux tree): the command's own search
 * runs alone meanwhile.
 */
const REOPEN_AFTER_MS = 2_000;

/** How long a started daemon has to listen. */
const START_TIMEOUT_MS = 10_000;

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onProgress: ((progress: never) => void) | undefined;
  watchdog: NodeJS.Timeout;
}

export class DaemonClient {
  readonly #socket: Socket;
  readonly #pending = new Map<number, Pending>();
  #next = 1;
  #lost: DaemonUnavailable | undefined;
  /** The daemon's process id: which process answered. */
  readonly pid: number;

  private constructor(socket: Socket, pid: number) {
    this.#socket = socket;
    this.pid = pid;
  }

  /** Connects (and starts the daemon if asked); throws `DaemonUnavailable`. */
  static async connect(options: ConnectOptions = {}): Promise<DaemonClient> {
    const path = options.socket ?? socketPath();
    try {
      ensurePrivateDir(dirname(path));
    } catch (error) {
      throw new DaemonUnavailable(error instanceof Error ? error.message : String(error));
    }
    const hello: Hello = { protocol: PROTOCOL_VERSION, build: buildId(), session: options.session };
    const deadline = Date.now() + START_TIMEOUT_MS;
    let started = false;
    for (;;) {
      const attempt = await tryConnect(path, hello);
      if (attempt.kind === "connected") return attempt.client;
      // A daemon of another build said it stops: wait for its socket to go, then start ours.
      const absent = attempt.kind === "absent" || attempt.kind === "replaced";
      if (!absent || options.start === false) throw new DaemonUnavailable(attempt.why);
      if (Date.now() > deadline) {
        throw new DaemonUnavailable(
          `no daemon answered within ${START_TIMEOUT_MS} ms (${attempt.why})`,
        );
      }
      // Later: the new daemon waits for the old one's lock (`daemon/server`), not this call.
      if (!started && (attempt.kind === "absent" || options.start === "later")) {
        await startDaemon(path, options.start === "later");
        started = true;
      }
      if (options.start === "later") {
        throw new DaemonUnavailable("a daemon is starting for the next calls", true);
      }
      await new Promise((resolve) => setTimeout(resolve, started ? 20 : 50));
    }
  }

  /** @internal */
  static greeted(socket: Socket, reader: (onLine: (line: string) => void) => void, pid: number) {
    const client = new DaemonClient(socket, pid);
    reader((line) => client.#onLine(line));
    socket.on("close", () => client.#lose("the daemon closed the connection"));
    socket.on("error", () => client.#lose("the connection to the daemon failed"));
    return client;
  }

  /**
   * Sends a request and resolves to its result; relays progress; cancels on `signal` (the
   * rejection is then the library's ABORTED). A daemon that goes silent past SILENCE_MS, dies,
   * or answers TOO_LARGE rejects with `DaemonUnavailable`; the daemon's own errors (a bad
   * pattern, a missing path) reject as the `FreshfsError` they are.
   */
  request<T>(method: string, params: unknown, options: RequestOptions = {}): Promise<T> {
    if (this.#lost) return Promise.reject(this.#lost);
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      const signal = options.signal;
      const onAbort = () => {
        this.#write({ cancel: id });
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => {
        clearTimeout(pending.watchdog);
        signal?.removeEventListener("abort", onAbort);
        this.#pending.delete(id);
      };
      const pending: Pending = {
        resolve: (value) => {
          done();
          resolve(value as T);
        },
        reject: (error) => {
          done();
          reject(error);
        },
        onProgress: options.onProgress,
        watchdog: this.#watch(id),
      };
      this.#pending.set(id, pending);
      this.#write({ id, method, params });
    });
  }

  close(): void {
    this.#socket.end();
    this.#socket.unref();
  }

  #watch(id: number): NodeJS.Timeout {
    return setTimeout(() => {
      this.#pending
        .get(id)
        ?.reject(new DaemonUnavailable(`the daemon said nothing for ${SILENCE_MS} ms`));
      // A hung daemon keeps nothing of ours: every other request gives up too.
      this.#socket.destroy();
    }, SILENCE_MS);
  }

  #write(message: unknown): void {
    if (!this.#socket.destroyed) this.#socket.write(`${encode(message)}\n`);
  }

  #onLine(line: string): void {
    let reply: Reply;
    try {
      reply = decode(line) as Reply;
    } catch {
      this.#lose("the daemon sent a line that is not JSON");
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    clearTimeout(pending.watchdog);
    pending.watchdog = this.#watch(reply.id);
    if ("progress" in reply) pending.onProgress?.(reply.progress as never);
    else if ("result" in reply) pending.resolve(reply.result);
    else if ("error" in reply) {
      const { code, message, path } = reply.error;
      pending.reject(
        code === "TOO_LARGE" || code === "PROTOCOL" || code === "INTERNAL"
          ? new DaemonUnavailable(message)
          : new FreshfsError(code as FreshfsError["code"], message, { path }),
      );
    }
  }

  #lose(why: string): void {
    this.#lost ??= new DaemonUnavailable(why);
    for (const pending of [...this.#pending.values()]) pending.reject(this.#lost);
    this.#pending.clear();
  }
}

type Attempt =
  | { kind: "connected"; client: DaemonClient }
  | { kind: "absent"; why: string }
  | { kind: "replaced"; why: string }
  | { kind: "failed"; why: string };

/** One try: connect, hello, and the answer. */
function tryConnect(path: string, hello: Hello): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = connect(path);
    let settled = false;
    const settle = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (attempt.kind !== "connected") socket.destroy();
      resolve(attempt);
    };
    const timer = setTimeout(
      () =>
        settle({
          kind: "failed",
          why: `the daemon did not answer within ${CONNECT_TIMEOUT_MS} ms`,
        }),
      CONNECT_TIMEOUT_MS,
    );
    socket.once("error", (error: NodeJS.ErrnoException) => {
      const absent = error.code === "ENOENT" || error.code === "ECONNREFUSED";
      settle({ kind: absent ? "absent" : "failed", why: `${error.code ?? error.message}` });
    });
    let onLine: (line: string) => void = (line) => {
      let reply: Reply;
      try {
        reply = decode(line) as Reply;
      } catch {
        settle({ kind: "failed", why: "the daemon's hello is not JSON" });
        return;
      }
      if ("error" in reply) {
        const replaced = reply.error.code === "VERSION_MISMATCH";
        settle({ kind: replaced ? "replaced" : "failed", why: reply.error.message });
      } else if ("result" in reply) {
        const answer = reply.result as HelloAnswer;
        socket.removeAllListeners("error");
        const client = DaemonClient.greeted(
          socket,
          (handler) => {
            onLine = handler;
          },
          answer.pid,
        );
        settle({ kind: "connected", client });
      }
    };
    const reader = new LineReader(
      (line) => onLine(line),
      () => socket.destroy(),
    );
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    socket.once("connect", () => {
      socket.write(`${encode({ id: 0, method: "hello", params: hello })}\n`);
    });
  });
}

/**
 * Starts `freshfs daemon run` for `socket`, detached (it outlives this process), its output in
 * its log beside the socket. The daemon's lock makes a second start, by a racing client, exit
 * at once.
 */
async function startDaemon(socket: string, later: boolean): Promise<void> {
  // Loaded only to start one: most calls find the daemon running (~2 ms of every call).
  const { spawn } = await import("node:child_process");
  const here = fileURLToPath(import.meta.url);
  const fromSources = here.endsWith(".ts");
  const main = fileURLToPath(new URL(`../cli/main.${fromSources ? "ts" : "js"}`, import.meta.url));
  const log = openSync(logPath(socket), "a", 0o600);
  try {
    const child = spawn(
      process.execPath,
      [
        ...(fromSources ? ["--import", "tsx"] : []),
        main,
        "daemon",
        "run",
        "--socket",
        socket,
        // Started by a command that searches meanwhile itself: it keeps its trees again after.
        ...(later ? ["--reopen-after-ms", String(REOPEN_AFTER_MS)] : []),
      ],
      { detached: true, stdio: ["ignore", log, log], env: process.env },
    );
    child.unref();
  } finally {
    closeSync(log);
  }
}

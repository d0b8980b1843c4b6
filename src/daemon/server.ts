/**
 * The daemon: one process per user and environment that keeps, for every root its clients ask
 * about, the live tree and its content index, so that a one-shot CLI call or a new MCP server
 * answers from memory instead of walking and reading the tree again (Watchman's design). It
 * holds a lock (only one daemon serves a socket), listens on the socket of `protocol`, answers
 * each connection's requests (`methods`), cancels a request whose client went away, and exits
 * after `idleMs` with no client, or when a client of another build asks it to. Depends on
 * `io/`, `daemon/protocol`, `daemon/methods` and `errors`.
 */
import { chmodSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname } from "node:path";
import {
  buildId,
  type ClientMessage,
  DEFAULT_IDLE_MS,
  decode,
  encode,
  HEARTBEAT_MS,
  type Hello,
  type HelloAnswer,
  LineReader,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  type Reply,
  type Request,
  socketPath,
  type WireError,
} from "../client/protocol.js";
import { reopenSnapshots } from "../content/reopen.js";
import { ensureSnapshotDir } from "../content/snapshot-files.js";
import { errnoOf, FreshfsError } from "../errors.js";
import {
  configureContentIndex,
  contentIndexPolicy,
  saveContentIndexSnapshots,
  snapshotDirPath,
} from "../index.js";
import { acquireFileLock, type FileLock } from "../io/lockfile.js";
import { ensurePrivateDir } from "../io/runtime-dir.js";
import { packageVersion } from "../version.js";
import { type DaemonState, METHODS, type Method } from "./methods.js";
import { Sessions } from "./sessions.js";

export interface DaemonOptions {
  /** @default `socketPath()` for this environment */
  readonly socket?: string | undefined;
  /** Exit after this long with no client connected. @default DEFAULT_IDLE_MS (10 min) */
  readonly idleMs?: number | undefined;
  /**
   * Keep the trees of its snapshots again only this long after it listens: a command that
   * starts it searches meanwhile itself, and would otherwise share the cores with that work.
   * @default 0
   */
  readonly reopenAfterMs?: number | undefined;
  /** Methods beside its own (the CLI's `cli`, for the native relay: `cli/relay`). */
  readonly methods?: Readonly<Record<string, Method>> | undefined;
  /** Told once the daemon listens (`freshfs daemon run` prints it). */
  readonly onListening?: ((socket: string) => void) | undefined;
}

/** Why `runDaemon` returned. */
export type DaemonEnd = "idle" | "stopped" | "replaced" | "already-running";

function toWire(error: unknown): WireError {
  if (error instanceof FreshfsError) {
    return { code: error.code, message: error.message, path: error.path };
  }
  return { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) };
}

/**
 * How long a daemon started beside another that holds the socket's lock but no longer listens
 * waits for it: one exiting (writing its snapshots) lets go within this, and the new one then
 * serves the clients that started it, which wait as long for it to listen (`connection.ts`).
 */
const LOCK_WAIT_MS = 10_000;

/** Whether a daemon listens on `socket` (accepts a connection). */
function listening(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socket);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

/**
 * Serves until idle or stopped. Resolves `already-running` at once when another daemon serves
 * the socket, or when one holds its lock for `LOCK_WAIT_MS` without serving.
 */
export async function runDaemon(options: DaemonOptions = {}): Promise<DaemonEnd> {
  const socket = options.socket ?? socketPath();
  ensurePrivateDir(dirname(socket));
  let lock: FileLock | undefined;
  for (const waitMs of [0, LOCK_WAIT_MS]) {
    try {
      lock = await acquireFileLock(socket, { waitMs, operation: "daemon" });
      break;
    } catch (error) {
      if (!(error instanceof FreshfsError && error.code === "LOCKED")) throw error;
      if (waitMs > 0 || (await listening(socket))) return "already-running";
    }
  }
  if (!lock) return "already-running";
  try {
    // The lock is held: a socket file there is a dead daemon's.
    unlinkSync(socket);
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
  const snapshots = keepSnapshots();
  const daemon = new Daemon(socket, options.idleMs ?? DEFAULT_IDLE_MS, options.methods ?? {});
  try {
    await daemon.listen();
    options.onListening?.(socket);
    if (snapshots) {
      const reopen = () => void reopenSnapshots(snapshots, REOPEN);
      if (options.reopenAfterMs) setTimeout(reopen, options.reopenAfterMs);
      else reopen();
    }
    const how = await daemon.ended;
    // The next daemon starts from what this one knows: every index not saved as it stands is
    // written before the lock is let go (a daemon killed instead leaves its last periodic one).
    if (snapshots) await saveWithin(SAVE_AT_EXIT_MS);
    return how;
  } finally {
    daemon.close();
    try {
      unlinkSync(socket);
    } catch {
      // Gone already.
    }
    lock?.release();
  }
}

/** Trees kept again at start: the 8 saved most recently, within the last week. */
const REOPEN = {
  max: 8,
  maxAgeMs: 7 * 24 * 3600 * 1000,
  warn: (message: string) => process.emitWarning(message, { type: "FreshfsSnapshotWarning" }),
};
/** Most time an exiting daemon spends writing snapshots (a 160 MB index takes under 1 s). */
const SAVE_AT_EXIT_MS = 30_000;

/**
 * Turns content index snapshots on, in the user's cache directory, unless FRESHFS_SNAPSHOTS=0;
 * returns the directory, or undefined (off, or the directory is not the user's alone: said
 * once, and the daemon runs without).
 */
function keepSnapshots(): string | undefined {
  if (process.env.FRESHFS_SNAPSHOTS === "0") return undefined;
  const dir = snapshotDirPath();
  try {
    ensureSnapshotDir(dir);
  } catch (error) {
    REOPEN.warn(`freshfs: content index snapshots are off: ${(error as Error).message}`);
    return undefined;
  }
  configureContentIndex({ ...contentIndexPolicy(), snapshotDir: dir });
  return dir;
}

function saveWithin(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void saveContentIndexSnapshots().then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

class Daemon {
  readonly #socket: string;
  readonly #idleMs: number;
  readonly #server: Server;
  readonly #connections = new Set<Connection>();
  readonly #state: DaemonState;
  #idleTimer: NodeJS.Timeout | undefined;
  #end: ((how: DaemonEnd) => void) | undefined;
  readonly ended: Promise<DaemonEnd>;
  #closing = false;

  constructor(socket: string, idleMs: number, methods: Readonly<Record<string, Method>>) {
    this.#socket = socket;
    this.#idleMs = idleMs;
    this.ended = new Promise((resolve) => {
      this.#end = resolve;
    });
    this.#state = {
      started: Date.now(),
      pid: process.pid,
      build: buildId(),
      version: packageVersion(),
      socket,
      clients: () => this.#connections.size,
      requests: 0,
      stop: () => this.stop("stopped"),
      sessions: new Sessions(),
      methods: { ...METHODS, ...methods },
    };
    this.#server = createServer((socket) => this.#accept(socket));
    const stopOnSignal = () => this.stop("stopped");
    process.once("SIGTERM", stopOnSignal);
    process.once("SIGINT", stopOnSignal);
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(this.#socket, () => {
        this.#server.off("error", reject);
        // The directory is the user's alone already (0700); the socket says so too.
        chmodSync(this.#socket, 0o600);
        this.#armIdle();
        resolve();
      });
    });
  }

  /** Stops taking connections; ends once the running requests are answered. */
  stop(how: DaemonEnd): void {
    if (this.#closing) return;
    this.#closing = true;
    this.#server.close();
    const finish = () => this.#end?.(how);
    const waiting = [...this.#connections].map((connection) => connection.drained());
    void Promise.all(waiting).then(finish);
  }

  close(): void {
    clearTimeout(this.#idleTimer);
    this.#server.close();
    for (const connection of this.#connections) connection.destroy();
  }

  #accept(socket: Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    clearTimeout(this.#idleTimer);
    const connection = new Connection(socket, this.#state, (how) => this.stop(how));
    this.#connections.add(connection);
    socket.once("close", () => {
      this.#connections.delete(connection);
      this.#armIdle();
    });
  }

  #armIdle(): void {
    clearTimeout(this.#idleTimer);
    if (this.#connections.size > 0 || this.#closing) return;
    this.#idleTimer = setTimeout(() => this.stop("idle"), this.#idleMs);
  }
}

/** One client's connection: its hello, then its requests, each cancellable. */
class Connection {
  readonly #socket: Socket;
  readonly #state: DaemonState;
  readonly #replaceDaemon: (how: DaemonEnd) => void;
  readonly #running = new Map<number, AbortController>();
  #greeted = false;
  #heartbeat: NodeJS.Timeout | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(socket: Socket, state: DaemonState, replaceDaemon: (how: DaemonEnd) => void) {
    this.#socket = socket;
    this.#state = state;
    this.#replaceDaemon = replaceDaemon;
    const reader = new LineReader(
      (line) => this.#onLine(line),
      () => this.#fail(`a message over ${MAX_MESSAGE_BYTES} bytes`),
    );
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    socket.on("error", () => undefined);
    // A client that went away wants none of its answers: its searches stop, and its own
    // guard session ends.
    socket.once("close", () => {
      for (const controller of this.#running.values()) controller.abort();
      this.#running.clear();
      this.#settle();
      state.sessions.release(this);
    });
  }

  /** Resolves once no request of this connection runs. */
  drained(): Promise<void> {
    if (this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  destroy(): void {
    this.#socket.destroy();
  }

  #send(reply: Reply): void {
    if (this.#socket.destroyed) return;
    let text = encode(reply);
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
      const error: WireError = {
        code: "TOO_LARGE",
        message: `The answer is over the daemon's ${MAX_MESSAGE_BYTES}-byte message bound.`,
      };
      text = encode({ id: reply.id, error });
    }
    this.#socket.write(`${text}\n`);
  }

  #fail(why: string): void {
    this.#socket.end(`${encode({ id: 0, error: { code: "PROTOCOL", message: why } })}\n`);
  }

  #onLine(line: string): void {
    let message: ClientMessage;
    try {
      message = decode(line) as ClientMessage;
    } catch {
      this.#fail("a line that is not JSON");
      return;
    }
    if ("cancel" in message) {
      this.#running.get(message.cancel)?.abort();
      return;
    }
    if (!this.#greeted) {
      this.#hello(message);
      return;
    }
    void this.#handle(message);
  }

  #hello(request: Request): void {
    const hello = request.params as Hello | undefined;
    if (request.method !== "hello" || !hello) {
      this.#fail("the first request must be hello");
      return;
    }
    const state = this.#state;
    if (hello.protocol !== PROTOCOL_VERSION || hello.build !== state.build) {
      this.#send({
        id: request.id,
        error: {
          code: "VERSION_MISMATCH",
          message: `This daemon is build ${state.build} (protocol ${PROTOCOL_VERSION}), the client ${hello.build} (protocol ${hello.protocol}): it stops, for the client's own to start.`,
        },
      });
      this.#socket.end();
      this.#replaceDaemon("replaced");
      return;
    }
    this.#greeted = true;
    const answer: HelloAnswer = {
      protocol: PROTOCOL_VERSION,
      build: state.build,
      version: state.version,
      pid: state.pid,
    };
    this.#send({ id: request.id, result: answer });
  }

  async #handle(request: Request): Promise<void> {
    const methods = this.#state.methods;
    const method = Object.hasOwn(methods, request.method) ? methods[request.method] : undefined;
    if (!method) {
      this.#send({
        id: request.id,
        error: { code: "PROTOCOL", message: `No method ${JSON.stringify(request.method)}.` },
      });
      return;
    }
    const controller = new AbortController();
    this.#running.set(request.id, controller);
    this.#state.requests++;
    this.#beat();
    try {
      const result = await method(request.params, {
        signal: controller.signal,
        progress: (progress) => this.#send({ id: request.id, progress }),
        state: this.#state,
        owner: this,
      });
      this.#send({ id: request.id, result });
    } catch (error) {
      this.#send({ id: request.id, error: toWire(error) });
    } finally {
      this.#running.delete(request.id);
      this.#settle();
    }
  }

  /** While a request runs, a heartbeat a second: the client's proof the daemon is not hung. */
  #beat(): void {
    if (this.#heartbeat) return;
    this.#heartbeat = setInterval(() => {
      for (const id of this.#running.keys()) this.#send({ id, alive: true });
    }, HEARTBEAT_MS);
  }

  #settle(): void {
    if (this.#running.size > 0) return;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }
}

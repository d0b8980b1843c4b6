/**
 * What a freshfs daemon and its clients say to each other, and where they meet. One daemon per
 * user and environment keeps the live trees, content indexes and guards of every root its
 * clients ask about; it listens on a Unix socket in the user's runtime directory (mode 0700,
 * owner checked: no other user can reach it). Messages are JSON, one a line (newline-delimited
 * JSON, as Watchman's and LSP-style servers' line protocols): a request `{id, method, params}`,
 * its answer `{id, result}` or `{id, error}`, and while it runs `{id, progress}` and
 * `{id, alive}` (a heartbeat, so that a client tells a slow answer from a hung daemon); a client
 * cancels with `{cancel: id}`. The first request of a connection is `hello`: a daemon of another
 * protocol or build is never used (the client asks it to stop and starts its own). Depends on
 * `io/runtime-dir` and `version`; loads nothing of the search, so a client stays small.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runtimeDirPath } from "../io/runtime-dir.js";
import { packageVersion } from "../version.js";

/** Bumped when a message changes shape. */
export const PROTOCOL_VERSION = 1;

/**
 * The longest message either side sends or accepts (one line of JSON). A grep of a whole tree
 * for a common word can answer with millions of lines; past this bound the daemon answers
 * `TOO_LARGE` and the client runs that one search itself.
 */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/**
 * How long a running request may go without a word from the daemon (it sends a heartbeat each
 * `HEARTBEAT_MS`) before the client takes it for hung, drops the connection and runs the
 * request itself.
 */
export const SILENCE_MS = 10_000;
export const HEARTBEAT_MS = 1000;

/** How long connecting and `hello` may take before the daemon counts as absent. */
export const CONNECT_TIMEOUT_MS = 2000;

/** How long a daemon with no client and no request stays up (`--idle-ms`, FRESHFS_DAEMON_IDLE_MS). */
export const DEFAULT_IDLE_MS = 10 * 60_000;

export interface Request {
  readonly id: number;
  readonly method: string;
  readonly params: unknown;
}

export interface WireError {
  readonly code: string;
  readonly message: string;
  readonly path?: string | undefined;
}

/** What the daemon sends: an answer, an error, progress, or a heartbeat of request `id`. */
export type Reply =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: WireError }
  | { readonly id: number; readonly progress: unknown }
  | { readonly id: number; readonly alive: true };

/** What the client sends: a request, or the cancellation of one. */
export type ClientMessage = Request | { readonly cancel: number };

export interface Hello {
  readonly protocol: number;
  readonly build: string;
  /** A guard session to join (a per-call client keeps its reads across processes); else its own. */
  readonly session?: string | undefined;
}

export interface HelloAnswer {
  readonly protocol: number;
  readonly build: string;
  readonly version: string;
  readonly pid: number;
}

/**
 * The environment variables that change an answer (ignore rules through git's config and the
 * home directory, every freshfs and scan bound): a client whose values differ from a daemon's
 * must not share it, so they are part of the daemon's name.
 */
export function answeringEnvironment(env: NodeJS.ProcessEnv): [string, string][] {
  const names = Object.keys(env).filter(
    (name) =>
      name === "HOME" ||
      name === "XDG_CONFIG_HOME" ||
      name.startsWith("GIT_") ||
      name.startsWith("FS_") ||
      (name.startsWith("FRESHFS_") && !CLIENT_ONLY.has(name)),
  );
  return names.sort().map((name) => [name, env[name] ?? ""]);
}

/** Variables that only tell a client how to reach a daemon, not what an answer holds. */
const CLIENT_ONLY = new Set(["FRESHFS_DAEMON", "FRESHFS_DAEMON_IDLE_MS", "FRESHFS_SESSION"]);

/**
 * A short digest of `text`: two 32-bit FNV-1a lanes. Written here rather than SHA-256 through
 * node:crypto, whose loading alone costs ~3 ms of every CLI call; a digest that only tells
 * environments and builds apart needs no cryptographic strength.
 */
function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return `${(a >>> 0).toString(16).padStart(8, "0")}${(b >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * The daemon's socket for this user and environment: `<runtime dir>/daemon-<digest>.sock`.
 * The runtime directory (`io/runtime-dir`) is checked before use.
 */
export function socketPath(env: NodeJS.ProcessEnv = process.env): string {
  const key = digest(JSON.stringify(answeringEnvironment(env))).slice(0, 12);
  return join(runtimeDirPath(env), `daemon-${key}.sock`);
}

/** The daemon's log, beside its socket. */
export function logPath(socket: string): string {
  return socket.replace(/\.sock$/, ".log");
}

let build: string | undefined;

/**
 * This build of freshfs: the stamp `npm run build` writes (`dist/build.json`, a fresh one each
 * build), or, running from the sources, the version and every module's size and mtime. A daemon
 * of another build is never used.
 */
export function buildId(): string {
  if (build !== undefined) return build;
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  try {
    build = String(JSON.parse(readFileSync(join(root, "build.json"), "utf8")).build);
    return build;
  } catch {
    // Not a build: the sources themselves.
  }
  const parts: string[] = [packageVersion()];
  const visit = (dir: string) => {
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (/\.(js|ts)$/.test(entry.name)) {
        const stats = statSync(path);
        parts.push(`${path.slice(root.length)}\0${stats.size}\0${stats.mtimeMs}`);
      }
    }
  };
  visit(root);
  build = digest(parts.join("\n"));
  return build;
}

/**
 * A message as one line of JSON. JSON has no Infinity, which the library takes for "no bound"
 * (`maxColumns`, `maxCount`), and a Buffer (an image `read` returns) would become an array of
 * numbers: they travel as `{"$infinity":1}` and `{"$base64":"..."}`, and `decode` turns them back.
 */
export function encode(message: unknown): string {
  return JSON.stringify(message, function (this: Record<string, unknown>, key, value) {
    const raw = this[key];
    if (Buffer.isBuffer(raw)) return { $base64: raw.toString("base64") };
    return value === Number.POSITIVE_INFINITY ? { $infinity: 1 } : value;
  });
}

export function decode(line: string): unknown {
  return JSON.parse(line, (_key, value) => {
    if (typeof value !== "object" || value === null) return value;
    if (value.$infinity === 1) return Number.POSITIVE_INFINITY;
    if (typeof value.$base64 === "string") return Buffer.from(value.$base64, "base64");
    return value;
  });
}

/**
 * Splits a stream into lines without copying a long line piece by piece: chunks are kept until
 * a newline arrives. A line past MAX_MESSAGE_BYTES is an error (`onTooLong`), and its rest is
 * dropped up to its end.
 */
export class LineReader {
  readonly #onLine: (line: string) => void;
  readonly #onTooLong: () => void;
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #length = 0;
  #skipping = false;

  constructor(
    onLine: (line: string) => void,
    onTooLong: () => void,
    limit: number = MAX_MESSAGE_BYTES,
  ) {
    this.#onLine = onLine;
    this.#onTooLong = onTooLong;
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      const piece = chunk.subarray(from, nl);
      from = nl + 1;
      if (this.#skipping) {
        this.#skipping = false;
        continue;
      }
      const line =
        this.#chunks.length === 0
          ? piece.toString("utf8")
          : Buffer.concat([...this.#chunks, piece]).toString("utf8");
      this.#chunks = [];
      this.#length = 0;
      if (line !== "") this.#onLine(line);
    }
    if (from < chunk.length && !this.#skipping) {
      this.#chunks.push(chunk.subarray(from));
      this.#length += chunk.length - from;
      if (this.#length > this.#limit) {
        this.#chunks = [];
        this.#length = 0;
        this.#skipping = true;
        this.#onTooLong();
      }
    }
  }
}

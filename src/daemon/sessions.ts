/**
 * The daemon's guard sessions: each a `Workspace` (its roots, its read-before-write guard) over
 * the daemon's shared live trees and content indexes. A client's connection opens one of its
 * own, gone when the connection closes, so one agent's read never authorizes another's edit; a
 * client may name a session instead, which later connections of any process join (a per-call
 * client keeps its reads), and which lives until unused for SESSION_IDLE_MS, at most
 * MAX_NAMED_SESSIONS of them (the least recently used dropped first). Each guard keeps its own
 * bound on the reads it remembers (`maxTrackedFiles`), as in a process of its own. Depends on
 * the library (`index`).
 */
import { randomUUID } from "node:crypto";
import { FreshfsError, Workspace, type WorkspaceOptions } from "../index.js";

/** A named session nobody has used for this long is dropped. */
export const SESSION_IDLE_MS = 60 * 60_000;
/** Named sessions kept at most; past it, the least recently used one goes. */
export const MAX_NAMED_SESSIONS = 256;

/** What a client may set of its session's Workspace. */
export type SessionOptions = Pick<
  WorkspaceOptions,
  "roots" | "policy" | "partialReads" | "racyWindowMs" | "maxTrackedFiles"
>;

interface Session {
  readonly workspace: Workspace;
  /** The options it was opened with: a client joining it by name must ask for the same. */
  readonly key: string;
  readonly named: boolean;
  /** The connections using it. */
  readonly owners: Set<object>;
  lastUsed: number;
}

export interface SessionInfo {
  /** The session's name; unnamed sessions show none. */
  readonly name: string | undefined;
  readonly roots: readonly string[];
  readonly clients: number;
}

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", `daemon: ${message}`);
}

export class Sessions {
  readonly #sessions = new Map<string, Session>();

  /** Opens (or, by name, joins) a session for `owner`; returns its id and roots. */
  open(
    options: SessionOptions,
    name: string | undefined,
    owner: object,
  ): {
    id: string;
    roots: readonly string[];
  } {
    this.#sweep();
    const settings: SessionOptions = {
      roots: options.roots,
      policy: options.policy,
      partialReads: options.partialReads,
      racyWindowMs: options.racyWindowMs,
      maxTrackedFiles: options.maxTrackedFiles,
    };
    const key = JSON.stringify(settings);
    if (name !== undefined) {
      if (typeof name !== "string" || name === "" || name.length > 200) {
        throw invalid("a session's name is a string of 1 to 200 characters.");
      }
      const id = `name:${name}`;
      const found = this.#sessions.get(id);
      if (found) {
        if (found.key !== key) {
          throw invalid(
            `session ${JSON.stringify(name)} was opened with other roots or guard settings; name another session, or open it with the same.`,
          );
        }
        found.owners.add(owner);
        found.lastUsed = Date.now();
        return { id, roots: found.workspace.roots };
      }
      this.#keepRoom();
      return this.#create(id, settings, key, true, owner);
    }
    return this.#create(randomUUID(), settings, key, false, owner);
  }

  /** The Workspace of session `id`, for a connection that opened it. */
  use(id: unknown, owner: object): Workspace {
    const session = typeof id === "string" ? this.#sessions.get(id) : undefined;
    if (!session?.owners.has(owner)) {
      throw new FreshfsError(
        "INVALID_ARGUMENT",
        "daemon: no such session for this connection (it closed, or expired); open one again.",
      );
    }
    session.lastUsed = Date.now();
    return session.workspace;
  }

  /** A connection closed: its own sessions end; named ones stay for others, or its return. */
  release(owner: object): void {
    for (const [id, session] of this.#sessions) {
      if (!session.owners.delete(owner)) continue;
      session.lastUsed = Date.now();
      if (!session.named) this.#sessions.delete(id);
    }
  }

  describe(): SessionInfo[] {
    return [...this.#sessions.entries()].map(([id, session]) => ({
      name: session.named ? id.slice("name:".length) : undefined,
      roots: session.workspace.roots,
      clients: session.owners.size,
    }));
  }

  #create(
    id: string,
    settings: SessionOptions,
    key: string,
    named: boolean,
    owner: object,
  ): { id: string; roots: readonly string[] } {
    // The daemon's own tools run here: its Workspace never asks a daemon.
    const workspace = new Workspace({ ...settings, daemon: "off" });
    this.#sessions.set(id, {
      workspace,
      key,
      named,
      owners: new Set([owner]),
      lastUsed: Date.now(),
    });
    return { id, roots: workspace.roots };
  }

  /** Named sessions unused past SESSION_IDLE_MS go. */
  #sweep(): void {
    const now = Date.now();
    for (const [id, session] of this.#sessions) {
      if (session.named && session.owners.size === 0 && now - session.lastUsed > SESSION_IDLE_MS) {
        this.#sessions.delete(id);
      }
    }
  }

  /** Past MAX_NAMED_SESSIONS, the least recently used named session nobody holds goes. */
  #keepRoom(): void {
    const named = [...this.#sessions.entries()].filter(([, session]) => session.named);
    if (named.length < MAX_NAMED_SESSIONS) return;
    const idle = named
      .filter(([, session]) => session.owners.size === 0)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    const oldest = idle[0];
    if (!oldest) throw invalid(`${MAX_NAMED_SESSIONS} named sessions are in use; end one first.`);
    this.#sessions.delete(oldest[0]);
  }
}

/**
 * A `Workspace`'s guard session in the user's daemon: opened at the first call (connecting, and
 * starting the daemon when none answers), then each tool call is run there, its progress
 * relayed and its cancellation passed on. When the daemon cannot answer (none starts, it dies
 * or hangs), the session is given up for good and every call, that one included, runs in this
 * process: with this process's guard, which has recorded no read, so an edit the daemon may
 * already have made is refused (NOT_READ, STALE) rather than made twice. Depends on
 * `client/connection` and `client/protocol`.
 */
import { FreshfsError } from "../errors.js";
import { DaemonClient, DaemonUnavailable } from "./connection.js";

/** Which process answered a call. */
export interface AnsweredBy {
  readonly pid: number;
  /** The user's daemon answered (else this process did). */
  readonly daemon: boolean;
}

export interface SessionSettings {
  /** The canonical roots, and the guard's settings, as the session's Workspace takes them. */
  readonly workspace: Record<string, unknown>;
  /** A socket path, or undefined for this user's and environment's. */
  readonly socket: string | undefined;
  /** A named session to join; else one of this Workspace's own. */
  readonly name: string | undefined;
}

export interface CallHooks {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: never) => void) | undefined;
}

interface Open {
  readonly client: DaemonClient;
  readonly id: string;
}

export class RemoteSession {
  readonly #settings: SessionSettings;
  #open: Promise<Open | undefined> | undefined;
  #gone = false;
  /** Roots narrowed before the session opened, sent once it does. */
  #narrowed: readonly string[] | undefined | null = null;

  constructor(settings: SessionSettings) {
    this.#settings = settings;
  }

  /** Whether calls still go to the daemon (false once it could not answer). */
  get active(): boolean {
    return !this.#gone;
  }

  /**
   * Runs tool `method` in the daemon's session; `here` runs it in this process, when the daemon
   * cannot. Resolves to the tool's result with `answeredBy`.
   */
  async call<R extends object>(
    method: string,
    params: unknown,
    hooks: CallHooks,
    here: () => Promise<R>,
  ): Promise<R & { answeredBy: AnsweredBy }> {
    const local = async () => {
      const answeredBy = { pid: process.pid, daemon: false };
      try {
        return { ...(await here()), answeredBy };
      } catch (error) {
        if (error instanceof FreshfsError) error.answeredBy ??= answeredBy;
        throw error;
      }
    };
    if (this.#gone) return local();
    const open = await this.#connect();
    if (!open) return local();
    try {
      const result = await open.client.request<R>(
        "workspace.call",
        { session: open.id, method, params },
        { signal: hooks.signal, onProgress: hooks.onProgress },
      );
      return { ...result, answeredBy: { pid: open.client.pid, daemon: true } };
    } catch (error) {
      if (error instanceof FreshfsError) error.answeredBy = { pid: open.client.pid, daemon: true };
      if (!(error instanceof DaemonUnavailable)) throw error;
      this.#giveUp(error);
      return local();
    }
  }

  /** The roots narrowed (an MCP client's roots); sent to the daemon's session too. */
  narrow(dirs: readonly string[] | undefined): void {
    if (this.#gone) return;
    this.#narrowed = dirs;
    void this.#open?.then((open) => {
      if (open) this.#sendNarrow(open);
    });
  }

  /** Ends the session: the tools run in this process from now on, without a warning. */
  close(): void {
    this.#gone = true;
    void this.#open?.then((open) => open?.client.close());
  }

  #connect(): Promise<Open | undefined> {
    this.#open ??= (async () => {
      try {
        const client = await DaemonClient.connect({ socket: this.#settings.socket });
        const { id } = await client.request<{ id: string }>("workspace.open", {
          options: this.#settings.workspace,
          session: this.#settings.name,
        });
        const open = { client, id };
        this.#sendNarrow(open);
        return open;
      } catch (error) {
        if (!(error instanceof DaemonUnavailable)) throw error;
        this.#giveUp(error);
        return undefined;
      }
    })();
    return this.#open;
  }

  #sendNarrow(open: Open): void {
    if (this.#narrowed === null) return;
    const dirs = this.#narrowed;
    open.client.request("workspace.narrow", { session: open.id, dirs }).catch(() => undefined);
  }

  #giveUp(error: DaemonUnavailable): void {
    if (this.#gone) return;
    this.#gone = true;
    void this.#open?.then((open) => open?.client.close());
    process.emitWarning(
      `freshfs: the tools run in this process from now on, without the daemon (${error.message}); reads recorded in the daemon's session are not known here, so files are read again before an edit.`,
      "FreshfsDaemonWarning",
    );
  }
}

/**
 * `Workspace`: the agent file tools over one or more roots, wiring the read-before-write
 * guard, the path locks, atomic writes and the scan cache together. Its tool methods are
 * built from the tool table (`tools/table`), one per entry, under the entry's key: each takes
 * one argument object with Claude Code's parameter names (opencode's and pi's spellings
 * accepted) and resolves to a structured result with a `text` for the model, or rejects with
 * `FreshfsError`, whose `message` is written for the model. Depends on `state/`, `tools/`.
 */
import { type AnsweredBy, RemoteSession } from "../client/session.js";
import { FileStateTracker, type GuardPolicy, type PartialReadPolicy } from "../state/tracker.js";
import type { CallOptions, ToolContext } from "./commit.js";
import type { AnyTool, ToolDefinition, ToolResult } from "./definition.js";
import { boundText } from "./output.js";
import { Roots } from "./roots.js";
import { TOOLS } from "./table.js";

export interface WorkspaceOptions {
  /** The directories the tools may touch; relative paths resolve against the first. */
  roots: string | readonly string[];
  /**
   * `strict` refuses an edit of a file not read, or changed since (`NOT_READ`, `STALE`);
   * `warn` makes it, and returns a warning when the file changed since its read or was read
   * only in part (a file never read passes silently, as in ChatCLI).
   * @default "strict"
   */
  policy?: GuardPolicy | undefined;
  /**
   * `reject`: only a full read (every line shown, in one window or consecutive ones) allows
   * an edit; `allow-within-window`: an edit inside the lines last shown is allowed too.
   * @default "reject"
   */
  partialReads?: PartialReadPolicy | undefined;
  /** glob, grep and find read the shared scan cache (every mutation here invalidates it). @default true */
  cache?: boolean | undefined;
  /**
   * glob, grep and find answer from live trees: each root searched is watched after its first
   * walk and synchronized with the watcher on every call, so answers reflect every change made
   * before the call, by any process. Needs `cache`. Off, or where a root cannot
   * be watched, the cache's TTL policy applies (`FS_LIVE_WATCH=0` turns it off everywhere).
   * @default true
   */
  watch?: boolean | undefined;
  /** @see FileStateTrackerOptions.racyWindowMs @default 2000 */
  racyWindowMs?: number | undefined;
  /** Most files the guard remembers reads of (least recently used dropped). @default 10000 */
  maxTrackedFiles?: number | undefined;
  /**
   * Where the tools run. `off`: in this process, with its own guard, live trees and content
   * indexes. `auto`: in the user's daemon (started when none runs; docs/daemon.md), whose live
   * trees and indexes every client shares, this Workspace's guard a session of its own there;
   * when the daemon cannot answer, the tools run here from then on (a `FreshfsDaemonWarning`
   * says so). A path: the daemon on that socket. Off by default: a library does its work in
   * the process that calls it unless asked; `freshfs mcp` asks (`--daemon`).
   * @default "off"
   */
  daemon?: "auto" | "off" | (string & {}) | undefined;
  /**
   * With `daemon`: the name of a guard session to join, so that the reads of another Workspace
   * (another process, a per-call client) with the same name and roots allow this one's edits.
   * @default a session of this Workspace's own
   */
  session?: string | undefined;
}

/** Which process answered a tool call. */
export interface Answered {
  readonly answeredBy: AnsweredBy;
}

/**
 * Every tool's text under `MAX_RESULT_BYTES`, whatever it holds: the tools fit their own records
 * first, so this only cuts what they cannot shape.
 */
async function bounded<R extends ToolResult>(result: Promise<R>): Promise<R> {
  const done = await result;
  const text = boundText(done.text);
  return text === done.text ? done : { ...done, text };
}

const THIS_PROCESS: AnsweredBy = { pid: process.pid, daemon: false };

/** A table entry as a method: its parameters (optional where its handler needs none) and result. */
type ToolMethodOf<T> =
  T extends ToolDefinition<infer P, infer R extends ToolResult>
    ? undefined extends P
      ? (params?: P, call?: CallOptions) => Promise<R & Answered>
      : (params: P, call?: CallOptions) => Promise<R & Answered>
    : never;

/** The tool methods: one per table entry, under its key, with its doc comment. */
export type WorkspaceTools = { [K in keyof typeof TOOLS]: ToolMethodOf<(typeof TOOLS)[K]> };

// The tool methods are not written in the class: its static block installs one per entry of
// the same table this interface maps, so the two cannot disagree.
export interface Workspace extends WorkspaceTools {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above types the methods the static block installs.
export class Workspace {
  /**
   * The guard. Record reads made outside these tools here (`cat` in a shell tool, say), so
   * edits after them are judged on what the model saw.
   */
  readonly tracker: FileStateTracker;
  readonly #outer: Roots;
  #context: ToolContext;
  /** The guard session in the daemon the tools run in (with `daemon`), until it cannot answer. */
  readonly #remote: RemoteSession | undefined;

  static {
    for (const [method, tool] of Object.entries(TOOLS)) {
      const entry: AnyTool = tool;
      // Written as a method so that it bears the tool's name (`Workspace.read` in a stack).
      const named = {
        [method](this: Workspace, params: unknown, call?: CallOptions) {
          const here = () => bounded(entry.handler(this.#context, params, entry.aliases, call));
          if (this.#remote) return this.#remote.call(method, params, call ?? {}, here);
          return here().then((result) => ({ ...result, answeredBy: THIS_PROCESS }));
        },
      };
      // As a class method is: not enumerable.
      Object.defineProperty(Workspace.prototype, method, {
        value: named[method],
        writable: true,
        configurable: true,
      });
    }
  }

  constructor(options: WorkspaceOptions) {
    const roots = new Roots(options.roots);
    const policy = options.policy ?? "strict";
    const partialReads = options.partialReads ?? "reject";
    this.tracker = new FileStateTracker({
      policy,
      partialReads,
      racyWindowMs: options.racyWindowMs,
      maxEntries: options.maxTrackedFiles,
    });
    this.#outer = roots;
    this.#context = {
      roots,
      tracker: this.tracker,
      policy,
      partialReads,
      cache: options.cache ?? true,
      watch: options.watch ?? true,
    };
    const daemon = options.daemon ?? "off";
    this.#remote =
      daemon === "off"
        ? undefined
        : new RemoteSession({
            socket: daemon === "auto" ? undefined : daemon,
            name: options.session,
            workspace: {
              roots: roots.real,
              policy,
              partialReads,
              racyWindowMs: options.racyWindowMs,
              maxTrackedFiles: options.maxTrackedFiles,
            },
          });
  }

  /**
   * Where the tools run now: the daemon (`daemon` asked for it, and it answers) or this process.
   * A daemon's session is opened at the first call.
   */
  get inDaemon(): boolean {
    return this.#remote?.active ?? false;
  }

  /** Lets go of the daemon's session (it ends, unless named); the tools run here after. */
  close(): void {
    this.#remote?.close();
  }

  /** The canonical paths of the directories the tools may use now. */
  get roots(): readonly string[] {
    return this.#context.roots.real;
  }

  /**
   * Limits the tools to `dirs` (an MCP client's roots, say) without forgetting any read: a
   * directory inside a root given at construction is kept, a root inside a directory is kept,
   * anything else is dropped, so the result is never wider than the construction's roots (and
   * may be empty: then every path is refused with `OUTSIDE_ROOT`). `undefined` lifts the limit.
   * Returns the roots now in force.
   */
  narrowTo(dirs: readonly string[] | undefined): readonly string[] {
    const roots = dirs === undefined ? this.#outer : this.#outer.narrowed(dirs);
    this.#context = { ...this.#context, roots };
    this.#remote?.narrow(dirs === undefined ? undefined : roots.real);
    return roots.real;
  }
}

/**
 * What the daemon answers: the library's searches over live trees (watched after the first
 * call, synchronized with the watcher at each call, their content indexes built in the
 * background), the walker's explanation of a path, its own status, and a stop. Parameters come
 * from another process: each is checked for shape here, and the library checks the rest as it
 * checks any caller's. Depends on the library (`index`), `live/registry` (what is watched) and
 * `daemon/protocol`.
 */

import { indexWhenLive } from "../content/reopen.js";
import {
  type CallOptions,
  contentIndexPolicy,
  contentIndexStats,
  explainPath,
  FreshfsError,
  type FuzzyFindOptions,
  fuzzyFind,
  type GlobOptions,
  type GrepOptions,
  glob,
  grep,
  grepFiles,
  type SearchProgress,
  type SnapshotStats,
  TOOLS,
  type ToolMethod,
} from "../index.js";
import { type LiveTreeInfo, liveTrees } from "../live/registry.js";
import { resolveScanRoot } from "../scan/walk.js";
import type { SessionInfo, SessionOptions, Sessions } from "./sessions.js";

/** The daemon as its methods see it. */
export interface DaemonState {
  readonly started: number;
  readonly pid: number;
  readonly build: string;
  readonly version: string;
  readonly socket: string;
  readonly clients: () => number;
  requests: number;
  readonly stop: () => void;
  readonly sessions: Sessions;
  /** Every method it answers: these, and those its command gave it (`DaemonOptions.methods`). */
  readonly methods: Readonly<Record<string, Method>>;
}

export interface MethodContext {
  readonly signal: AbortSignal;
  readonly progress: (progress: SearchProgress) => void;
  readonly state: DaemonState;
  /** The connection asking: the sessions it opened are its own. */
  readonly owner: object;
}

export type Method = (params: unknown, context: MethodContext) => Promise<unknown>;

/** What `freshfs daemon status` shows. */
export interface DaemonStatus {
  readonly pid: number;
  readonly build: string;
  readonly version: string;
  readonly socket: string;
  readonly uptimeMs: number;
  readonly clients: number;
  readonly requests: number;
  readonly roots: readonly (LiveTreeInfo & {
    readonly indexedFiles: number;
    readonly indexBytes: number;
    /** Each index's snapshot: what loading it came to, and the last one written. */
    readonly snapshots: readonly SnapshotStats[];
  })[];
  /** Where snapshots are kept; undefined when they are off (FRESHFS_SNAPSHOTS=0). */
  readonly snapshotDir: string | undefined;
  readonly sessions: readonly SessionInfo[];
  readonly memory: { readonly rss: number; readonly heapUsed: number };
}

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", `daemon: ${message}`);
}

function record(params: unknown, method: string): Record<string, unknown> {
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw invalid(`${method} takes an object of parameters.`);
  }
  return params as Record<string, unknown>;
}

function text(value: unknown, name: string): string {
  if (typeof value !== "string") throw invalid(`${name} must be a string.`);
  return value;
}

/**
 * A search's options as the daemon runs it: what the client asked, over the live tree (the
 * reason the daemon exists), with this request's cancellation and progress.
 */
function live<T extends GrepOptions | GlobOptions | FuzzyFindOptions>(
  options: unknown,
  context: MethodContext,
): T {
  const given = options === undefined ? {} : record(options, "options");
  if (typeof given.path !== "string") throw invalid("options.path must be an absolute path.");
  return {
    ...given,
    cache: true,
    watch: true,
    signal: context.signal,
    onProgress: context.progress,
  } as T;
}

/** What the daemon answers a one-shot client for a tree it does not keep live yet. */
export interface Cold {
  readonly cold: true;
}

/**
 * For a client that asks (`ifWarm`: the CLI, which would walk as fast as the daemon's first
 * walk, and read as fast as its first grep): `Cold` when the tree under `options.path` is not
 * live yet (nor, for a cheap search, has a saved listing), and the tree is then made live, its
 * index started, for the calls after it. Undefined: the daemon answers.
 */
function coldFor(params: Record<string, unknown>, cheap: boolean): Cold | undefined {
  if (params.ifWarm !== true) return undefined;
  const options = record(params.options ?? {}, "options");
  if (typeof options.path !== "string") return undefined;
  let root: string;
  try {
    root = resolveScanRoot(options.path);
  } catch {
    // Not a directory, or gone: the search says so itself.
    return undefined;
  }
  const kept = liveTrees.describe().filter((tree) => tree.root === root);
  if (kept.some((tree) => tree.status === "live")) return undefined;
  if (cheap && liveTrees.hasSavedListing(root)) return undefined;
  const policy = {
    includeHidden: options.hidden === true,
    useGitignore: options.gitignore !== false,
  };
  void liveTrees
    .query(root, policy)
    .then(() => indexWhenLive(root, policy))
    .catch(() => undefined);
  return { cold: true };
}

export const METHODS: Readonly<Record<string, Method>> = {
  async grep(params, context) {
    const given = record(params, "grep");
    const { patterns, options } = given;
    const list = typeof patterns === "string" ? patterns : (patterns as string[]);
    if (!Array.isArray(list) && typeof list !== "string") {
      throw invalid("patterns must be a string or a list of them.");
    }
    return coldFor(given, false) ?? grep(list, live<GrepOptions>(options, context));
  },

  async grepFiles(params, context) {
    const given = record(params, "grepFiles");
    return coldFor(given, true) ?? grepFiles(live<GrepOptions>(given.options, context));
  },

  async glob(params, context) {
    const given = record(params, "glob");
    const { pattern, options } = given;
    return (
      coldFor(given, true) ?? glob(text(pattern, "pattern"), live<GlobOptions>(options, context))
    );
  },

  async fuzzyFind(params, context) {
    const given = record(params, "fuzzyFind");
    const { query, options } = given;
    return (
      coldFor(given, true) ??
      fuzzyFind(text(query, "query"), live<FuzzyFindOptions>(options, context))
    );
  },

  /** `freshfs files`: every file of the listing, as the walk lists them (node_modules too). */
  async files(params, context) {
    const cold = coldFor(record(params, "files"), true);
    if (cold) return cold;
    const { options } = record(params, "files");
    const found = await glob("**", {
      ...live<GlobOptions>(options, context),
      fileType: "file",
      includeNodeModules: true,
    });
    return { root: found.root, files: found.matches, freshness: found.freshness };
  },

  async explain(params) {
    const { root, rel, isDir } = record(params, "explain");
    return explainPath(text(root, "root"), text(rel, "rel"), isDir === true);
  },

  async status(_params, { state }): Promise<DaemonStatus> {
    const memory = process.memoryUsage();
    return {
      pid: state.pid,
      build: state.build,
      version: state.version,
      socket: state.socket,
      uptimeMs: Date.now() - state.started,
      clients: state.clients(),
      requests: state.requests,
      roots: liveTrees.describe().map((tree) => {
        const indexes = contentIndexStats(tree.root);
        return {
          ...tree,
          indexedFiles: indexes.reduce((sum, index) => sum + index.files, 0),
          indexBytes: indexes.reduce((sum, index) => sum + index.bytes, 0),
          snapshots: indexes.flatMap((index) => (index.snapshot ? [index.snapshot] : [])),
        };
      }),
      snapshotDir: contentIndexPolicy().snapshotDir,
      sessions: state.sessions.describe(),
      memory: { rss: memory.rss, heapUsed: memory.heapUsed },
    };
  },

  /** A guard session: the connection's own, or one joined by name (`daemon/sessions`). */
  async "workspace.open"(params, { state, owner }) {
    const { options, session } = record(params, "workspace.open");
    const settings = record(options, "options") as unknown as SessionOptions;
    if (session !== undefined && typeof session !== "string") {
      throw invalid("session must be a string.");
    }
    return state.sessions.open(settings, session, owner);
  },

  /** One tool call in a session: the Workspace method of that name, as the table defines it. */
  async "workspace.call"(params, { state, owner, signal, progress }) {
    const { session, method, params: args } = record(params, "workspace.call");
    const workspace = state.sessions.use(session, owner);
    const name = text(method, "method");
    if (!Object.hasOwn(TOOLS, name)) throw invalid(`no tool method ${JSON.stringify(name)}.`);
    const run = workspace[name as ToolMethod] as (
      args: unknown,
      call: CallOptions,
    ) => Promise<unknown>;
    return run.call(workspace, args, { signal, onProgress: progress });
  },

  async "workspace.narrow"(params, { state, owner }) {
    const { session, dirs } = record(params, "workspace.narrow");
    const workspace = state.sessions.use(session, owner);
    if (dirs !== undefined && !(Array.isArray(dirs) && dirs.every((d) => typeof d === "string"))) {
      throw invalid("dirs must be a list of paths.");
    }
    return workspace.narrowTo(dirs as string[] | undefined);
  },

  async stop(_params, { state }) {
    state.stop();
    return { stopping: true };
  },
};

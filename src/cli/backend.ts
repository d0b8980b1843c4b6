/**
 * Who answers a CLI command's search: the user's daemon (`daemon/`), which keeps each tree
 * live between commands, or this process, which walks and reads the tree for this one call.
 * The daemon by default, started when absent; `--no-daemon` or FRESHFS_DAEMON=0 keep the work
 * here. A daemon that cannot answer (none can start, it dies or hangs mid-call, an answer too
 * large for its socket) costs a warning on stderr, and the call is done here. The library is
 * loaded only for work done here, so a call the daemon answers stays small. Depends on
 * `daemon/client` (and, lazily, the library's search modules).
 */
import { DaemonClient, DaemonUnavailable } from "../client/connection.js";
import type { SearchProgress } from "../search/listing.js";
import { fromCwd, io, type SearchBackend } from "./io.js";

export type { FilesAnswer, SearchBackend } from "./io.js";

/** Whether the daemon is wanted: not with `--no-daemon`, nor with FRESHFS_DAEMON=0. */
export function daemonWanted(noDaemonFlag: boolean): boolean {
  const env = process.env.FRESHFS_DAEMON;
  return !noDaemonFlag && env !== "0" && env !== "off" && env !== "false";
}

/** The backend for this command: the daemon's, falling back to this process's. */
export async function searchBackend(useDaemon: boolean): Promise<SearchBackend> {
  if (!useDaemon) return inProcess;
  try {
    // With no daemon running, this call walks here as it would without one (a daemon started
    // now would walk too, and first start) and leaves one starting for the calls after it.
    const client = await DaemonClient.connect({ start: "later" });
    return answeredBy(
      (method, params, onProgress) => client.request(method, params, { onProgress }),
      inProcess,
      () => client.close(),
    );
  } catch (error) {
    if (!(error instanceof DaemonUnavailable)) throw error;
    if (!error.starting) warn(error);
    return inProcess;
  }
}

let warned = false;

function warn(error: DaemonUnavailable): void {
  if (warned) return;
  warned = true;
  io().stderr.write(
    `freshfs: searching in this process, without the daemon (${error.message}); --no-daemon or FRESHFS_DAEMON=0 says so without this warning\n`,
  );
}

/** The work done here: the library's modules, loaded for this call only. */
const inProcess: SearchBackend = {
  async grep(patterns, options) {
    const { grep } = await import("../search/grep/grep.js");
    return grep(patterns, options);
  },
  async grepFiles(options) {
    const { grepFiles } = await import("../search/grep/grep.js");
    return grepFiles(options);
  },
  async glob(pattern, options) {
    const { glob } = await import("../search/glob.js");
    return glob(pattern, options);
  },
  async fuzzyFind(query, options) {
    const { fuzzyFind } = await import("../search/fuzzy.js");
    return fuzzyFind(query, options);
  },
  async files(options, onProgress) {
    const { forceRescan } = await import("../scan/cache.js");
    const listing = await forceRescan(
      options.path,
      { includeHidden: options.hidden, useGitignore: options.gitignore },
      { onProgress: (walk) => onProgress({ phase: "walk", done: walk.entries, total: undefined }) },
    );
    const files = listing.entries.filter((entry) => entry.type === "file").map((e) => e.path);
    return { root: listing.root, files, warnings: listing.warnings };
  },
  async explain(root, rel, isDir) {
    const { explainPath } = await import("../scan/explain.js");
    return explainPath(root, rel, isDir);
  },
  close() {},
};

function isCold(answer: unknown): answer is { cold: true } {
  return (
    typeof answer === "object" && answer !== null && (answer as { cold?: unknown }).cold === true
  );
}

/** Options as they cross to the daemon: functions stay here, the path is made absolute. */
function portable<T extends { path?: string | undefined }>(options: T): T {
  const {
    onProgress: _progress,
    signal: _signal,
    ...rest
  } = options as T & {
    onProgress?: unknown;
    signal?: unknown;
  };
  return { ...rest, path: fromCwd(options.path) } as T;
}

/** A daemon's method asked with its parameters: the client's request, or the daemon's own call. */
export type Ask = (
  method: string,
  params: Record<string, unknown>,
  onProgress: ((progress: never) => void) | undefined,
) => Promise<unknown>;

/**
 * The searches as a daemon's methods answer them through `ask`; `otherwise` does each one the
 * daemon cannot answer (it failed), or does not keep the tree live for yet (it then makes it
 * so for the next calls: `daemon/methods` `coldFor`).
 */
export function answeredBy(ask: Ask, otherwise: SearchBackend, close: () => void): SearchBackend {
  const request = async <T>(
    method: string,
    params: Record<string, unknown>,
    progress: ((progress: SearchProgress) => void) | undefined,
    here: () => Promise<T>,
  ): Promise<T> => {
    try {
      const answer = (await ask(method, { ...params, ifWarm: true }, progress as never)) as
        | T
        | { cold: true };
      return isCold(answer) ? here() : answer;
    } catch (error) {
      if (!(error instanceof DaemonUnavailable)) throw error;
      warn(error);
      return here();
    }
  };
  return {
    grep: (patterns, options) =>
      request("grep", { patterns, options: portable(options) }, options.onProgress, () =>
        otherwise.grep(patterns, options),
      ),
    grepFiles: (options) =>
      request("grepFiles", { options: portable(options) }, options.onProgress, () =>
        otherwise.grepFiles(options),
      ),
    glob: (pattern, options) =>
      request("glob", { pattern, options: portable(options) }, options.onProgress, () =>
        otherwise.glob(pattern, options),
      ),
    fuzzyFind: (query, options) =>
      request("fuzzyFind", { query, options: portable(options) }, options.onProgress, () =>
        otherwise.fuzzyFind(query, options),
      ),
    files: (options, onProgress) =>
      request("files", { options: portable(options) }, onProgress, () =>
        otherwise.files(options, onProgress),
      ),
    explain: (root, rel, isDir) =>
      request("explain", { root, rel, isDir }, undefined, () =>
        otherwise.explain(root, rel, isDir),
      ),
    close,
  };
}

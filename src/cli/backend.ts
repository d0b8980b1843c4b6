/**
 * Who answers a CLI command's search: the user's daemon (`daemon/`), which keeps each tree
 * live between commands, or this process, which walks and reads the tree for this one call.
 * The daemon by default, started when absent; `--no-daemon` or FRESHFS_DAEMON=0 keep the work
 * here. A daemon that cannot answer (none can start, it dies or hangs mid-call, an answer too
 * large for its socket) costs a warning on stderr, and the call is done here. The library is
 * loaded only for work done here, so a call the daemon answers stays small. Depends on
 * `daemon/client` (and, lazily, the library's search modules).
 */
import { resolve } from "node:path";
import { DaemonClient, DaemonUnavailable } from "../client/connection.js";
import type { PathExplanation } from "../scan/explain.js";
import type { ScanWarning } from "../scan/walk.js";
import type { FuzzyFindOptions, FuzzyFindResult } from "../search/fuzzy.js";
import type { GlobOptions, GlobResult } from "../search/glob.js";
import type { GrepOptions, GrepResult } from "../search/grep/grep.js";
import type { SearchProgress } from "../search/listing.js";

export interface FilesAnswer {
  readonly root: string;
  readonly files: readonly string[];
  readonly warnings?: readonly ScanWarning[] | undefined;
}

/** The searches a CLI command asks for; `onProgress` and `signal` stay on this side. */
export interface SearchBackend {
  grep(patterns: readonly string[], options: GrepOptions): Promise<GrepResult>;
  grepFiles(options: GrepOptions): Promise<GrepResult>;
  glob(pattern: string, options: GlobOptions): Promise<GlobResult>;
  fuzzyFind(query: string, options: FuzzyFindOptions): Promise<FuzzyFindResult>;
  files(
    options: { path: string; hidden: boolean; gitignore: boolean },
    onProgress: (progress: SearchProgress) => void,
  ): Promise<FilesAnswer>;
  explain(root: string, rel: string, isDir: boolean): Promise<PathExplanation>;
  close(): void;
}

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
    return viaDaemon(await DaemonClient.connect({ start: "later" }));
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
  process.stderr.write(
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
  return { ...rest, path: resolve(options.path ?? ".") } as T;
}

function viaDaemon(client: DaemonClient): SearchBackend {
  /**
   * Asks the daemon; does the work here when the daemon cannot answer, or does not keep the
   * tree live yet (it then makes it so for the next calls: `daemon/methods` `coldFor`).
   */
  const ask = async <T>(
    method: string,
    params: Record<string, unknown>,
    progress: ((progress: SearchProgress) => void) | undefined,
    here: () => Promise<T>,
  ): Promise<T> => {
    try {
      const answer = await client.request<T | { cold: true }>(
        method,
        { ...params, ifWarm: true },
        { onProgress: progress as never },
      );
      return isCold(answer) ? here() : answer;
    } catch (error) {
      if (!(error instanceof DaemonUnavailable)) throw error;
      warn(error);
      return here();
    }
  };
  return {
    grep: (patterns, options) =>
      ask("grep", { patterns, options: portable(options) }, options.onProgress, () =>
        inProcess.grep(patterns, options),
      ),
    grepFiles: (options) =>
      ask("grepFiles", { options: portable(options) }, options.onProgress, () =>
        inProcess.grepFiles(options),
      ),
    glob: (pattern, options) =>
      ask("glob", { pattern, options: portable(options) }, options.onProgress, () =>
        inProcess.glob(pattern, options),
      ),
    fuzzyFind: (query, options) =>
      ask("fuzzyFind", { query, options: portable(options) }, options.onProgress, () =>
        inProcess.fuzzyFind(query, options),
      ),
    files: (options, onProgress) =>
      ask("files", { options: portable(options) }, onProgress, () =>
        inProcess.files(options, onProgress),
      ),
    explain: (root, rel, isDir) =>
      ask("explain", { root, rel, isDir }, undefined, () => inProcess.explain(root, rel, isDir)),
    close: () => client.close(),
  };
}

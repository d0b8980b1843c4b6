/**
 * Where a command runs: its working directory, its output streams, whether it may read stdin,
 * and who answers its searches. A command run from a shell uses this process's own; one the
 * daemon runs for the native relay (`cli/relay`) runs inside the daemon with the relay's
 * directory and streams, several at once, so every command reads them from here, never from
 * `process` (AsyncLocalStorage keeps each command's own across its awaits). Depends on the
 * library's result types only.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { resolve } from "node:path";
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

export interface Output {
  write(data: string | Uint8Array): unknown;
  readonly isTTY?: boolean | undefined;
}

export interface CommandIo {
  /** Relative operands, pattern files and `why`'s repository are resolved against it. */
  readonly cwd: string;
  readonly stdout: Output;
  readonly stderr: Output;
  /** Whether `-f -` may read this process's stdin (not the daemon's, which is not the user's). */
  readonly stdin: boolean;
  /** Who answers the searches; default `searchBackend` (the daemon, else this process). */
  readonly backend?: ((useDaemon: boolean) => Promise<SearchBackend>) | undefined;
}

/**
 * The command cannot be run where it was asked to (the relay: the daemon does not keep the tree
 * live yet, the output is over its bound, `-f -` wants the user's stdin): the relay then runs it
 * in Node as a shell would. Nothing was printed.
 */
export class RunElsewhere extends Error {
  constructor(why: string) {
    super(why);
    this.name = "RunElsewhere";
  }
}

const PROCESS_IO: CommandIo = {
  get cwd() {
    return process.cwd();
  },
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
  stdin: true,
};

const current = new AsyncLocalStorage<CommandIo>();

export function io(): CommandIo {
  return current.getStore() ?? PROCESS_IO;
}

/** Runs `work` with `given` as its `io()`. */
export function withIo<T>(given: CommandIo, work: () => T): T {
  return current.run(given, work);
}

/** `path` resolved against the command's working directory. */
export function fromCwd(path = "."): string {
  return resolve(io().cwd, path);
}

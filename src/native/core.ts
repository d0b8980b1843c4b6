/**
 * The native search core (`native/core`, Rust over ripgrep's `grep-searcher` and `grep-regex`):
 * loaded once from `prebuilds/<platform>-<arch>/freshfs-core.node`, its two calls typed (a
 * search, and a directory read for the walk), its answers decoded. Where it cannot load (another
 * platform, no prebuild, a Node without N-API 6) grep keeps to its JavaScript workers and the walk
 * to Node's fs, after one warning; `FRESHFS_NATIVE=0` keeps them there silently, and
 * `FRESHFS_NATIVE_ADDON` names another build to load. Depends on `errors` only: the grep layer
 * decides which searches it takes.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { FreshfsError } from "../errors.js";

/** What a search asks of the core: rg's query as given, and how each file is searched. */
export interface NativeRequest {
  /** The canonical root with a trailing slash, as bytes; every path is relative to it. */
  readonly prefix: Buffer;
  /** The files, NUL-separated, as bytes (a name that is not UTF-8 as it is on disk). */
  readonly paths: Buffer;
  readonly patterns: readonly string[];
  readonly ignoreCase: boolean;
  readonly smartCase: boolean;
  readonly word: boolean;
  readonly fixedStrings: boolean;
  readonly invert: boolean;
  readonly lineRegexp: boolean;
  /** Most matching lines a file (Infinity: no bound). */
  readonly maxCount: number;
  readonly before: number;
  readonly after: number;
  readonly binary: "skip" | "quit" | "report" | "text";
  readonly threads: number;
  /** The core stops between files after this long (Infinity: never). */
  readonly timeoutMs: number;
  readonly maxFileSize: number;
  readonly mode: "content" | "files_with_matches" | "count";
  readonly countMatches: boolean;
  /** Links are followed (`-L`): files are opened through them and not checked to be inside. */
  readonly followLinks: boolean;
  /** No file is begun once the answer holds this many bytes (`done` says where it stopped). */
  readonly maxAnswerBytes: number;
  /** Makes the core panic: proves that a panic reaches the caller as an error. */
  readonly panic?: boolean;
}

/** A file's lines, a column a field (as the workers send them: see `LineTable`). */
export interface NativeLines {
  readonly line: number[];
  readonly text: string[];
  readonly match: boolean[];
}

export type NativeOutcome =
  | { readonly kind: "binary" }
  | { readonly kind: "too-large"; readonly size: number }
  | { readonly kind: "unreadable"; readonly code: string }
  | {
      readonly kind: "hits";
      readonly matches: number;
      readonly lines: NativeLines;
      readonly binaryAt?: number;
    };

export interface NativeAnswer {
  /** Outcomes by index in the request's paths; a file missing here had nothing to report. */
  readonly outcomes: Map<number, NativeOutcome>;
  /** Every file before this index is done (fewer than asked when the answer filled its bound). */
  readonly done: number;
  /** Cancelled or timed out: the file being searched then may be cut short. */
  readonly stopped: boolean;
}

/** One directory as the core read it (`native/core/src/dir.rs`). */
export interface NativeDirectory {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  /** Its entries' names in the order read (undefined: larger than asked, not read). */
  readonly names: string[] | undefined;
  /** Each name's kind: `DIRECTORY_KINDS` by index. */
  readonly kinds: Uint8Array;
}

/** The kinds `readDirectory` gives, by their code. */
export const DIRECTORY_KINDS = ["file", "dir", "symlink", "other"] as const;

export interface NativeCore {
  /** Searches on the core's threads; `cancel[0] = 1` stops it between files. */
  search(request: NativeRequest, cancel: Uint8Array): Promise<NativeAnswer>;
  /**
   * Reads the directory at `path` (absolute, as bytes), opened O_NOFOLLOW|O_DIRECTORY: its device,
   * inode and size from that descriptor, and its entries unless it is over `largest` bytes.
   * Throws as Node's fs throws (`code` the errno's name: ELOOP or ENOTDIR when it is no longer a
   * directory).
   */
  readDirectory(path: Buffer, largest: number): NativeDirectory;
}

interface Binding {
  search(
    prefix: Buffer,
    paths: Buffer,
    patterns: readonly string[],
    options: Buffer,
    cancel: Uint8Array,
  ): Promise<Buffer>;
  readDir(path: Buffer, largest: number): [string | null, Buffer, number, number, number] | number;
}

/** The options Buffer's f64 slots, in the order `native/core/src/lib.rs` reads them. */
const OPTION_SLOTS = 18;
const BINARY_MODES = ["skip", "quit", "report", "text"] as const;
const MODES = ["content", "files_with_matches", "count"] as const;

const FLAG_BINARY_AT = 1;
const FLAG_ERROR = 2;
const FLAG_TOO_LARGE = 4;
const FLAG_BINARY = 8;
const MATCH = 0;

const ERRNO_NAMES = new Map<number, string>(
  Object.entries(constants.errno).map(([name, errno]) => [errno, name]),
);

/** Where the prebuilt addon for this platform ships, relative to this module (src/ or dist/). */
export const PREBUILD = new URL(
  `../../prebuilds/${process.platform}-${process.arch}/freshfs-core.node`,
  import.meta.url,
);

let loaded: NativeCore | null | undefined;

/**
 * The core, or undefined where it is off (`FRESHFS_NATIVE=0`) or cannot load (warned once). Read
 * at each call, so that a test can turn it off in a process.
 */
export function nativeCore(): NativeCore | undefined {
  if (process.env.FRESHFS_NATIVE === "0") return undefined;
  if (loaded === undefined) loaded = load();
  return loaded ?? undefined;
}

function load(): NativeCore | null {
  // Another build of the addon, to try one (the tests name one that is not there).
  const path = process.env.FRESHFS_NATIVE_ADDON || fileURLToPath(PREBUILD);
  try {
    if (!existsSync(path))
      throw new Error(`no prebuilt core for ${process.platform}-${process.arch}`);
    const binding = createRequire(import.meta.url)(path) as Binding;
    if (typeof binding.search !== "function" || typeof binding.readDir !== "function") {
      throw new Error("it has no search or readDir function");
    }
    return {
      search: (request, cancel) => search(binding, request, cancel),
      readDirectory: (path, largest) => readDirectory(binding, path, largest),
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    process.emitWarning(
      `freshfs: the native search core did not load (${reason}); grep runs on its JavaScript workers, and the walk reads directories with Node's fs.`,
      { code: "FRESHFS_NATIVE" },
    );
    return null;
  }
}

function readDirectory(binding: Binding, path: Buffer, largest: number): NativeDirectory {
  const read = binding.readDir(path, largest);
  if (typeof read === "number") {
    const code = ERRNO_NAMES.get(read) ?? "EIO";
    const shown = path.toString();
    throw Object.assign(new Error(`${code}: cannot read the directory '${shown}'`), {
      code,
      errno: -read,
      syscall: "open",
      path: shown,
    });
  }
  const [names, kinds, dev, ino, size] = read;
  // Each name ends in a "/", which no name holds: the last piece of the split is "".
  const list = names === null ? undefined : names.split("/");
  list?.pop();
  return { dev, ino, size, names: list, kinds };
}

function packed(request: NativeRequest): Buffer {
  const options = Buffer.alloc(OPTION_SLOTS * 8);
  const bound = (n: number) => (Number.isFinite(n) ? n : -1);
  const slots = [
    request.ignoreCase,
    request.smartCase,
    request.word,
    request.fixedStrings,
    request.invert,
    request.lineRegexp,
    bound(request.maxCount),
    request.before,
    request.after,
    BINARY_MODES.indexOf(request.binary),
    request.threads,
    Number.isFinite(request.timeoutMs) ? Math.max(1, request.timeoutMs) : 0,
    bound(request.maxFileSize),
    MODES.indexOf(request.mode),
    request.countMatches,
    request.followLinks,
    bound(request.maxAnswerBytes),
    request.panic ?? false,
  ];
  for (const [i, value] of slots.entries()) options.writeDoubleLE(Number(value), i * 8);
  return options;
}

async function search(
  binding: Binding,
  request: NativeRequest,
  cancel: Uint8Array,
): Promise<NativeAnswer> {
  let answer: Buffer;
  try {
    answer = await binding.search(
      request.prefix,
      request.paths,
      request.patterns,
      packed(request),
      cancel,
    );
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code === "INVALID_PATTERN") {
      throw new FreshfsError("INVALID_PATTERN", `Invalid pattern for rg's syntax: ${message}`);
    }
    throw new FreshfsError(
      "IO_ERROR",
      `The native search core failed (${code ?? "unknown"}): ${message ?? String(error)}`,
    );
  }
  return decoded(answer);
}

/** The core's answer (its layout is `native/core/src/search.rs`'s `search`). */
function decoded(answer: Buffer): NativeAnswer {
  const outcomes = new Map<number, NativeOutcome>();
  const files = answer.readUInt32LE(0);
  let at = 4;
  for (let f = 0; f < files; f++) {
    const index = answer.readUInt32LE(at);
    const flags = answer[at + 4] as number;
    const detail = Number(answer.readBigUInt64LE(at + 5));
    const matches = Number(answer.readBigUInt64LE(at + 13));
    const records = answer.readUInt32LE(at + 21);
    at += 25;
    const lines: NativeLines = { line: [], text: [], match: [] };
    for (let r = 0; r < records; r++) {
      const kind = answer[at];
      const line = answer.readUInt32LE(at + 1);
      const length = answer.readUInt32LE(at + 5);
      at += 9;
      lines.line.push(line);
      lines.text.push(answer.toString("utf8", at, at + length));
      lines.match.push(kind === MATCH);
      at += length;
    }
    if (flags & FLAG_ERROR) {
      outcomes.set(index, { kind: "unreadable", code: ERRNO_NAMES.get(detail) ?? "EIO" });
    } else if (flags & FLAG_TOO_LARGE) {
      outcomes.set(index, { kind: "too-large", size: detail });
    } else if (flags & FLAG_BINARY) {
      outcomes.set(index, { kind: "binary" });
    } else {
      const binary = flags & FLAG_BINARY_AT ? { binaryAt: detail } : {};
      outcomes.set(index, { kind: "hits", matches, lines, ...binary });
    }
  }
  return { outcomes, done: answer.readUInt32LE(at), stopped: answer[at + 4] === 1 };
}

/**
 * The walker: one pass over a tree that agrees with git about what is ignored (`git ls-files
 * --others --cached --exclude-standard`, `git check-ignore`) on real trees. Depends on
 * `scan/ignore`, `read-dir`, `digest`, `io` and `errors`; the scan cache and the live tree call it.
 *
 * Deterministic (depth first, siblings sorted by name, so the listing is sorted by path as
 * `rg --sort path` sorts, UTF-16 code units standing in for bytes: the two orders differ only
 * between astral characters and U+E000-U+FFFF), never follows symlinks, never enters `.git`, lists `node_modules`
 * unless an ignore rule says otherwise. I/O is synchronous in slices of at most SLICE_MS that
 * yield to the event loop: synchronous calls are several times cheaper than their promise twins
 * (each of which is a round trip through libuv's thread pool), and the slices keep an
 * autocomplete responsive while a large tree is walked.
 */
import { type Dirent, lstatSync, readdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { decodeName, fsPath } from "../io/bytes.js";
import { nodeFs } from "../io/fs.js";
import { isFreshfsSidecar } from "../io/names.js";
import { absolutePath, canonicalPath } from "../io/paths.js";
import { isRuntimeDir } from "../io/runtime-dir.js";
import { type NativeCore, nativeCore } from "../native/core.js";
import { byName, type DirEntry, namesDigest } from "./digest.js";
import { byteForm, isAscii, type PatternProblem } from "./ignore/pattern.js";
import { IgnoreStack, loadRepository, type Repository } from "./ignore/stack.js";
import { type DirectoryStats, openSorted, type SliceClock } from "./read-dir.js";

export type EntryType = "file" | "dir" | "symlink";

/** What entries of one root and one type share: one pointer in each entry, not two. */
export interface EntryKind {
  readonly root: string;
  readonly type: EntryType;
}

/** The three kinds of a root's entries, made once per walk. */
export function entryKinds(root: string): Readonly<Record<EntryType, EntryKind>> {
  return {
    file: { root, type: "file" },
    dir: { root, type: "dir" },
    symlink: { root, type: "symlink" },
  };
}

/**
 * One entry of a listing. `mtimeMs` is read with `lstat` the first time it is asked for and
 * kept: only sorting by modification time needs it, and an `lstat` per entry would triple
 * the cost of a walk (14 ms → 49 ms for 18k entries on the benchmark corpus). The root and the
 * type share one field (`EntryKind`): 123 → 115 bytes an entry with a 30-character path,
 * which a live listing of a million entries keeps.
 */
export class ScanEntry {
  /** Relative to the scan root, `/`-separated. */
  readonly path: string;
  readonly #kind: EntryKind;
  #mtimeMs: number | undefined;

  constructor(kind: EntryKind, path: string) {
    this.#kind = kind;
    this.path = path;
  }

  get type(): EntryType {
    return this.#kind.type;
  }

  /** Modification time from `lstat` (of the link itself for a symlink); 0 if it cannot be read. */
  get mtimeMs(): number {
    if (this.#mtimeMs === undefined) {
      try {
        this.#mtimeMs = lstatSync(fsPath(join(this.#kind.root, this.path))).mtimeMs;
      } catch {
        this.#mtimeMs = 0;
      }
    }
    return this.#mtimeMs;
  }

  toJSON(): { path: string; type: EntryType; mtimeMs: number } {
    return { path: this.path, type: this.type, mtimeMs: this.mtimeMs };
  }
}

export interface ScanWarning {
  /** Absolute path of what was skipped or could not be used. */
  readonly path: string;
  readonly message: string;
}

export interface WalkProgress {
  readonly entries: number;
  readonly directories: number;
  readonly elapsedMs: number;
  /**
   * The entries listed so far, in the listing's final order (a depth-first walk in sorted
   * order only appends): grep searches them while the walk goes on. Read it during the call.
   */
  readonly listed: readonly ScanEntry[];
}

export interface WalkOptions {
  readonly includeHidden: boolean;
  readonly useGitignore: boolean;
  readonly signal?: AbortSignal | undefined;
  /** Called between slices of a walk that takes longer than one. */
  readonly onProgress?: ((progress: WalkProgress) => void) | undefined;
  /** Where git's configuration is found (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*). */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /**
   * Walk only below this directory of the tree (a listed directory, its parent's frame given):
   * the live tree re-walks what an event changed. Paths stay relative to the root.
   */
  readonly from?: { readonly name: string; readonly parent: DirectoryFrame } | undefined;
  /** Called for every directory read, with what the live tree needs to keep it current. */
  readonly onDirectory?: ((directory: WalkedDirectory) => void) | undefined;
  /**
   * Called before the root is read with the files the rules above the root came from, or would
   * if they existed (`.ignore`, `.gitignore` and `.git` of every ancestor, the repository's).
   */
  readonly onRootSources?: ((sources: readonly string[]) => void) | undefined;
}

/** What decides the entries of one directory: where it is and the ignore rules inside it. */
export interface DirectoryFrame {
  readonly absolute: string;
  /** Relative to the root; "" for the root. */
  readonly rel: string;
  /** `rel` and a slash, or "" for the root: shared by every child's path. */
  readonly prefix: string;
  /** `rel` in byte form, for ignore matching. */
  readonly relBytes: string;
  readonly ignore: IgnoreStack | undefined;
  /** No rule can match below here: skip matching. */
  readonly unfiltered: boolean;
}

/** A directory as the walk read it. */
export interface WalkedDirectory {
  readonly frame: DirectoryFrame;
  /** Device and inode from the `lstat` before the read: a directory replaced since is another. */
  readonly dev: number;
  readonly ino: number;
  /** `namesDigest` of what was read: the live tree compares it with a read after its watch. */
  readonly digest: string;
  /** The `.gitignore`, `.ignore` and `.rgignore` bytes the rules came from (undefined: none read). */
  readonly ignoreBytes: readonly [
    Uint8Array | undefined,
    Uint8Array | undefined,
    Uint8Array | undefined,
  ];
  /** The `.ignore` and `.rgignore` read through a symlink: their targets are rule files too. */
  readonly linkedIgnore: readonly string[];
}

export interface Listing {
  /** The canonical root that was walked. */
  readonly root: string;
  readonly entries: readonly ScanEntry[];
  readonly warnings: readonly ScanWarning[];
  /** Files left out of `entries`, in directories that were walked. */
  readonly skipped: readonly SkippedFile[];
}

/**
 * A file the walk left out for its name (hidden) or an ignore rule, in a directory it walked.
 * ripgrep's `-g` globs override both, and its `-t` types the hidden rule, so grep needs them;
 * files in directories that were pruned are never seen, as in rg.
 */
export interface SkippedFile {
  /** Relative to the root, `/`-separated. */
  readonly path: string;
  readonly hidden: boolean;
  readonly ignored: boolean;
}

/** How long the walker may hold the event loop before it yields. */
const SLICE_MS = 10;

/**
 * Resolves a search root: relative to the cwd, it must be an existing directory, and is
 * canonicalized. Throws `NOT_FOUND` or `NOT_A_DIRECTORY` naming the path.
 */
export function resolveScanRoot(root: string): string {
  const absolute = absolutePath(root);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch (error) {
    throw fromFsError(error, "search", absolute);
  }
  if (!isDirectory) {
    throw new FreshfsError(
      "NOT_A_DIRECTORY",
      `Cannot search ${absolute}: it is a file, not a directory.`,
      { path: absolute },
    );
  }
  try {
    return canonicalPath(absolute, nodeFs);
  } catch (error) {
    throw fromFsError(error, "search", absolute);
  }
}

interface OpenDirectory extends DirectoryFrame {
  readonly entries: DirEntry[];
  next: number;
}

/** One walk as it goes: what it has found so far, and its clock of slices. */
class Walk implements SliceClock {
  readonly root: string;
  readonly options: WalkOptions;
  readonly env: NodeJS.ProcessEnv;
  readonly entries: ScanEntry[] = [];
  readonly warnings: ScanWarning[] = [];
  readonly problems: PatternProblem[] = [];
  readonly skipped: SkippedFile[] = [];
  /** The native core, which reads the directories where it loads (asked once a walk). */
  readonly core: NativeCore | undefined = nativeCore();
  directories = 0;
  readonly #started = performance.now();
  #sliceStart = performance.now();

  constructor(root: string, options: WalkOptions) {
    this.root = root;
    this.options = options;
    this.env = options.env ?? process.env;
  }

  /** Whether the current slice is used up (or the walk aborted): time to call `pause`. */
  due(): boolean {
    return (
      performance.now() - this.#sliceStart >= SLICE_MS || this.options.signal?.aborted === true
    );
  }

  /** Yields to the event loop once the current slice is used up; throws when aborted. */
  async pause(): Promise<void> {
    if (performance.now() - this.#sliceStart >= SLICE_MS) {
      this.options.onProgress?.({
        listed: this.entries,
        entries: this.entries.length,
        directories: this.directories,
        elapsedMs: performance.now() - this.#started,
      });
      await new Promise((resolve) => setImmediate(resolve));
      this.#sliceStart = performance.now();
    }
    if (this.options.signal?.aborted) throw aborted(this.root);
  }

  /** The listing found, the ignore files' problems among its warnings. */
  listing(): Listing {
    for (const problem of this.problems) {
      this.warnings.push({
        path: problem.source,
        message: `line ${problem.line}: ${JSON.stringify(problem.pattern)} ${problem.message}`,
      });
    }
    const { root, entries, warnings, skipped } = this;
    return { root, entries, warnings, skipped };
  }
}

/**
 * Walks `root` (a canonical directory, from `resolveScanRoot`): depth first, each directory's
 * entries judged in name order, a listed directory entered as soon as it is met.
 */
export async function walkTree(root: string, options: WalkOptions): Promise<Listing> {
  const walk = new Walk(root, options);
  const kinds = entryKinds(root);
  const { entries, skipped } = walk;
  const includeHidden = options.includeHidden;
  const first = await openFirst(walk);
  const stack: OpenDirectory[] = first ? [first] : [];
  let sinceCheck = 0;
  while (stack.length > 0) {
    // The clock every 4 entries: an entry costs about a microsecond, but against a .gitignore
    // of 100,000 lines up to milliseconds (measured: 32 entries between looks held the event
    // loop for a second); a look costs tens of nanoseconds.
    if (++sinceCheck >= 4) {
      sinceCheck = 0;
      if (walk.due()) await walk.pause();
    }
    const dir = stack[stack.length - 1] as OpenDirectory;
    const dirent = dir.entries[dir.next++];
    if (dirent === undefined) {
      stack.pop();
      continue;
    }
    const type = typeOf(dirent);
    if (type === undefined) continue;
    const name = dirent.name;
    // join() builds a flat string, where `+` builds a rope over the prefix and the name: the
    // same heap at first, but a rope grows by a flat copy the first time a regex reads it.
    const rel = [dir.prefix, name].join("");
    const verdict = judge(dir, name, rel, type, includeHidden);
    if (verdict === OMITTED) continue;
    if (verdict !== LISTED) {
      if (type === "file") skipped.push(skippedFile(rel, verdict));
      continue;
    }
    entries.push(new ScanEntry(kinds[type], rel));
    if (type === "dir") {
      const absolute = `${dir.absolute}/${name}`;
      let child = openDirectory(walk, absolute, rel, childRelBytes(dir, name, rel), dir.ignore);
      if (child instanceof Promise) child = await child;
      if (child) stack.push(child);
    }
  }
  if (options.signal?.aborted) throw aborted(root);
  return walk.listing();
}

/** The walk's first directory: the root, or the directory below it it was asked to walk. */
function openFirst(walk: Walk): OpenDirectory | undefined | Promise<OpenDirectory | undefined> {
  const { options, root, env } = walk;
  if (options.from) {
    const { name, parent } = options.from;
    const rel = `${parent.prefix}${name}`;
    const absolute = `${parent.absolute}/${name}`;
    return openDirectory(walk, absolute, rel, childRelBytes(parent, name, rel), parent.ignore);
  }
  const probed: string[] = [];
  const top = options.useGitignore
    ? IgnoreStack.forRoot(root, env, walk.problems, probed)
    : undefined;
  options.onRootSources?.([...probed, ...(top?.repository?.sources ?? [])]);
  return openDirectory(walk, root, "", "", top);
}

/**
 * Reads a directory (sorted, see `readSorted`) and the ignore rules inside it; undefined when
 * it is skipped with a warning. A promise only for a large directory.
 */
function openDirectory(
  walk: Walk,
  absolute: string,
  rel: string,
  relBytes: string,
  parent: IgnoreStack | undefined,
): OpenDirectory | undefined | Promise<OpenDirectory | undefined> {
  let stats: DirectoryStats;
  let read: DirEntry[] | Promise<DirEntry[]>;
  try {
    const opened = openSorted(absolute, walk, walk.core);
    if (!opened) {
      walk.warnings.push({ path: absolute, message: "skipped: no longer a directory" });
      return undefined;
    }
    stats = opened.stats;
    read = opened.entries;
  } catch (error) {
    return skipDirectory(walk, absolute, rel, error);
  }
  if (read instanceof Promise) {
    return read.then(
      (sorted) => enterOpened(walk, absolute, rel, relBytes, parent, sorted, stats),
      (error: unknown) => skipDirectory(walk, absolute, rel, error),
    );
  }
  return enterOpened(walk, absolute, rel, relBytes, parent, read, stats);
}

/** A directory that cannot be read: the walk fails at the root, and warns below it. */
function skipDirectory(walk: Walk, absolute: string, rel: string, error: unknown): undefined {
  if (error instanceof FreshfsError) throw error;
  if (rel === "") throw fromFsError(error, "search", absolute);
  walk.warnings.push({ path: absolute, message: unreadableDirectory(errnoOf(error)) });
  return undefined;
}

/** The directory read (`sorted`, every name as read): its frame, and its report if asked. */
function enterOpened(
  walk: Walk,
  absolute: string,
  rel: string,
  relBytes: string,
  parent: IgnoreStack | undefined,
  sorted: DirEntry[],
  stats: DirectoryStats,
): OpenDirectory | undefined {
  let dirents: DirEntry[];
  try {
    dirents = withRealNames(sorted, absolute);
  } catch (error) {
    return skipDirectory(walk, absolute, rel, error);
  }
  walk.directories++;
  let ignore = parent;
  const ignoreBytes: IgnoreBytes = {};
  let linked: readonly string[] = [];
  if (parent) {
    const found = ignoreFilesAmong(dirents);
    linked = found.linked;
    ignore = enterDirectory(
      parent,
      absolute,
      rel,
      relBytes,
      found.files,
      walk.env,
      walk.problems,
      walk.warnings,
      ignoreBytes,
    );
  }
  const open: OpenDirectory = {
    absolute,
    rel,
    prefix: rel === "" ? "" : `${rel}/`,
    relBytes,
    entries: dirents,
    ignore,
    unfiltered: !ignore || ignore.empty,
    next: 0,
  };
  walk.options.onDirectory?.({
    // A frame of its own: `open` holds the dirents, which the live tree must not keep.
    frame: { absolute, rel, prefix: open.prefix, relBytes, ignore, unfiltered: open.unfiltered },
    dev: stats.dev,
    ino: stats.ino,
    // Over every name read, valid or not: the watcher's thread reads the same.
    digest: namesDigest(sorted),
    ignoreBytes: [ignoreBytes.gitignore, ignoreBytes.ignore, ignoreBytes.rgignore],
    linkedIgnore: linked
      .filter((name) => ignoreBytes[name === ".ignore" ? "ignore" : "rgignore"])
      .map((name) => `${absolute}/${name}`),
  });
  return open;
}

/**
 * The ignore-related entries among a directory's (dot) names, and which of `.ignore` and
 * `.rgignore` are symlinks: their targets are rule files too.
 */
function ignoreFilesAmong(dirents: readonly DirEntry[]): {
  files: DirectoryIgnoreFiles;
  linked: string[];
} {
  const files: DirectoryIgnoreFiles = {
    git: false,
    rgignore: undefined,
    ignore: undefined,
    gitignore: undefined,
  };
  const linked: string[] = [];
  for (const dirent of dirents) {
    if (dirent.name.charCodeAt(0) !== 0x2e) continue;
    const kind = dirent.isSymbolicLink() ? "symlink" : "file";
    if (dirent.name === ".git") files.git = true;
    else if (dirent.name === ".ignore" || dirent.name === ".rgignore") {
      files[dirent.name === ".ignore" ? "ignore" : "rgignore"] = kind;
      if (kind === "symlink") linked.push(dirent.name);
    } else if (dirent.name === ".gitignore") files.gitignore = kind;
  }
  return { files, linked };
}

/** The extension of a path's last name (`ts` for `src/a.ts`), if it has one: glob's index key. */
export function extensionOf(path: string): string | undefined {
  const dot = path.lastIndexOf(".");
  return dot > path.lastIndexOf("/") ? path.slice(dot + 1) : undefined;
}

/** Entries by the extension of their name, in listing order. */
export function indexByExtension(entries: readonly ScanEntry[]): Map<string, ScanEntry[]> {
  const index = new Map<string, ScanEntry[]>();
  for (const entry of entries) {
    const extension = extensionOf(entry.path);
    if (extension === undefined) continue;
    const bucket = index.get(extension);
    if (bucket) bucket.push(entry);
    else index.set(extension, [entry]);
  }
  return index;
}

/** `judge`'s verdicts: listed, left out unseen, or left out and kept as a `SkippedFile`. */
export const OMITTED = 0;
export const LISTED = 1;
export const SKIPPED_HIDDEN = 2;
export const SKIPPED_IGNORED = 3;
export const SKIPPED_HIDDEN_IGNORED = 4;
export type Verdict = 0 | 1 | 2 | 3 | 4;

/**
 * Whether the entry `name` (of `type`, at `rel`) of directory `dir` is listed: the one rule the
 * walk and the live tree share. `.git` is always pruned (a directory in a repository, a
 * "gitdir:" file in a work tree), and so is the user's freshfs runtime directory; a freshfs
 * temp file is half of a write in flight, or left by a killed one, and a lock file says who is
 * writing: never content. Hidden and ignored files are skipped (grep's overrides see them);
 * hidden or ignored directories are not entered.
 */
export function judge(
  dir: DirectoryFrame,
  name: string,
  rel: string,
  type: EntryType,
  includeHidden: boolean,
): Verdict {
  if (name === ".git" || isFreshfsSidecar(name)) return OMITTED;
  if (type === "dir" && isRuntimeDir(dir.absolute, name)) return OMITTED;
  const dotted = !includeHidden && name.charCodeAt(0) === 0x2e;
  let whitelisted = false;
  if (!dir.unfiltered) {
    const relBytes = childRelBytes(dir, name, rel);
    const rule = (dir.ignore as IgnoreStack).match(
      relBytes,
      isAscii(name) ? name : byteForm(name),
      type === "dir",
    );
    if (rule && !rule.negated) {
      if (type !== "file") return OMITTED;
      return dotted ? SKIPPED_HIDDEN_IGNORED : SKIPPED_IGNORED;
    }
    whitelisted = rule !== undefined;
  }
  // A name an ignore file re-includes (`!.env`) is not hidden: rg lists it, as any rule's
  // verdict comes before the hidden-name rule there.
  const hidden = dotted && !whitelisted;
  if (hidden && type !== "file") return OMITTED;
  return hidden ? SKIPPED_HIDDEN : LISTED;
}

/** The `SkippedFile` for a skipping verdict. */
export function skippedFile(path: string, verdict: Verdict): SkippedFile {
  return {
    path,
    hidden: verdict === SKIPPED_HIDDEN || verdict === SKIPPED_HIDDEN_IGNORED,
    ignored: verdict === SKIPPED_IGNORED || verdict === SKIPPED_HIDDEN_IGNORED,
  };
}

/** The byte form of a child's path, for ignore matching (the same string when all ASCII). */
export function childRelBytes(dir: DirectoryFrame, name: string, rel: string): string {
  if (dir.relBytes === dir.rel && isAscii(name)) return rel;
  const nameBytes = isAscii(name) ? name : byteForm(name);
  return dir.relBytes === "" ? nameBytes : `${dir.relBytes}/${nameBytes}`;
}

/** The type an entry is listed with; undefined for pipes, sockets, devices: nothing to list. */
export function typeOf(dirent: DirEntry | Stats): EntryType | undefined {
  if (dirent.isSymbolicLink()) return "symlink";
  if (dirent.isDirectory()) return "dir";
  if (dirent.isFile()) return "file";
  return undefined;
}

/** The ignore files' bytes a directory's rules were compiled from. */
export interface IgnoreBytes {
  gitignore?: Uint8Array | undefined;
  ignore?: Uint8Array | undefined;
  rgignore?: Uint8Array | undefined;
}

/** Which ignore-related entries a directory holds. */
export interface DirectoryIgnoreFiles {
  git: boolean;
  rgignore: "file" | "symlink" | undefined;
  ignore: "file" | "symlink" | undefined;
  gitignore: "file" | "symlink" | undefined;
}

/**
 * The ignore stack inside a directory: its `.ignore` and `.gitignore`, and a new repository
 * when it holds a `.git` (the root's own repository comes from `IgnoreStack.forRoot`).
 */
export function enterDirectory(
  parent: IgnoreStack,
  absolute: string,
  rel: string,
  relBytes: string,
  files: DirectoryIgnoreFiles,
  env: NodeJS.ProcessEnv,
  problems: PatternProblem[],
  warnings: ScanWarning[],
  bytes: IgnoreBytes = {},
): IgnoreStack {
  let nested: Repository | undefined;
  if (files.git && rel !== "") {
    try {
      nested = loadRepository(absolute, env, problems);
    } catch (error) {
      warnings.push({
        path: join(absolute, ".git"),
        message: `repository not read (${errnoOf(error) ?? String(error)}); the rules above it apply`,
      });
    }
  }
  if (files.gitignore === "symlink") {
    warnings.push({
      path: join(absolute, ".gitignore"),
      message: "not read: a .gitignore that is a symlink is ignored, as git ignores it",
    });
  }
  bytes.rgignore = files.rgignore && readIgnore(join(absolute, ".rgignore"), warnings);
  bytes.ignore = files.ignore && readIgnore(join(absolute, ".ignore"), warnings);
  // git refuses a .gitignore that is a symlink (since 2.32), and so does the walker.
  bytes.gitignore =
    files.gitignore === "file" ? readIgnore(join(absolute, ".gitignore"), warnings) : undefined;
  return parent.child(
    relBytes,
    { rgignore: bytes.rgignore, ignore: bytes.ignore, gitignore: bytes.gitignore },
    nested,
    problems,
    absolute,
  );
}

function aborted(root: string): FreshfsError {
  return new FreshfsError("ABORTED", `The walk of ${root} was aborted.`, { path: root });
}

function unreadableDirectory(errno: string | undefined): string {
  if (errno === "ENOENT") return "skipped: the directory vanished during the walk";
  if (errno === "ENOTDIR" || errno === "ELOOP") return "skipped: no longer a directory";
  if (errno === "EACCES" || errno === "EPERM") return `skipped: permission denied (${errno})`;
  return `skipped: cannot read the directory (${errno ?? "unknown error"})`;
}

function readIgnore(path: string, warnings: ScanWarning[]): Buffer | undefined {
  try {
    return readFileSync(fsPath(path));
  } catch (error) {
    // A directory or a dangling link named .gitignore has nothing to say; only report the rest.
    const errno = errnoOf(error);
    if (errno !== "EISDIR" && errno !== "ENOENT") {
      warnings.push({ path, message: `ignore file not read (${errno ?? String(error)})` });
    }
    return undefined;
  }
}

/**
 * Node decodes names as UTF-8, replacing invalid bytes with U+FFFD; such a name does not lead
 * back to its file. Where a U+FFFD appears, the directory's names are read again as bytes and
 * decoded with each invalid byte escaped (`io/bytes`), so that the name leads to its file and
 * prints as its bytes, as rg lists it; a name that really holds U+FFFD is its usual string.
 */
export function withRealNames(dirents: DirEntry[], dir: string): DirEntry[] {
  if (!dirents.some((dirent) => dirent.name.includes("\uFFFD"))) return dirents;
  const raw = readdirSync(fsPath(dir), { withFileTypes: true, encoding: "buffer" });
  for (const dirent of raw) {
    (dirent as unknown as { name: string }).name = decodeName(dirent.name);
  }
  return (raw as unknown as Dirent[]).sort(byName);
}

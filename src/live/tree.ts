/**
 * A live tree: the listing of one (root, hidden, gitignore) key, kept current by a
 * `WatchBackend`'s events, so that every answer reflects every change that completed before the
 * call began (contract 5.2). Depends on `scan/` (the walker and its rule, `judge`) and
 * `live/backend`.
 *
 * How it stays exact:
 * - It watches every directory the listing entered (ignored and hidden ones are never entered),
 *   plus the files its rules came from, outside the tree as well (ancestors' ignore files, the
 *   repository's `info/exclude` and configuration, the global excludes file) and the root's
 *   own name in its parent (a root moved or deleted).
 * - A watch set up after a directory was read is confirmed by a read made after the watch
 *   (`namesDigest`): a difference means something changed in between, and the directory is
 *   read again. Until every directory is confirmed, calls are answered by a walk.
 * - Every call first syncs with the backend (`sync()`: every event queued before it has
 *   arrived), then applies what changed: each `(directory, name)` is looked at again (`lstat`)
 *   and judged by the walker's own rule; a directory that appeared, vanished or was replaced is
 *   walked again below it; an ignore file or a `.git` that changed re-walks what it governs.
 *   The cost is proportional to what changed: binary searches into the sorted listing, one
 *   copy of it per call that saw a change.
 * - Anything that makes the event stream untrustworthy (a burst long enough to overflow the
 *   kernel's queue, a failed watch, a thread that did not answer) discards it all: the next
 *   call walks again, as the first one did.
 */
import { createHash } from "node:crypto";
import { type Dirent, lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname } from "node:path";
import { FreshfsError } from "../errors.js";
import { fsPath } from "../io/bytes.js";
import type { ScanResult } from "../scan/cache.js";
import { comparePaths, lowerBound, subtreeEnd } from "../scan/order.js";
import {
  type DirectoryFrame,
  type EntryType,
  entryKinds,
  extensionOf,
  indexByExtension,
  judge,
  LISTED,
  type Listing,
  OMITTED,
  ScanEntry,
  type ScanWarning,
  type SkippedFile,
  skippedFile,
  typeOf,
  type WalkedDirectory,
  type WalkProgress,
  walkTree,
  withRealNames,
} from "../scan/walk.js";
import {
  SyncError,
  type WatchBackend,
  type WatchedReport,
  type WatchSubscriber,
} from "./backend.js";

interface DirState {
  readonly frame: DirectoryFrame;
  readonly dev: number;
  readonly ino: number;
  readonly digest: string;
  /** The `.gitignore`, `.ignore` and `.rgignore` bytes its rules came from, when it has any. */
  readonly ignoreBytes: WalkedDirectory["ignoreBytes"] | undefined;
  /** The watch request whose report (or a later one) confirms it; 0 once confirmed. */
  request: number;
}

function stateOf(dir: WalkedDirectory, request: number): DirState {
  const [gitignore, ignore, rgignore] = dir.ignoreBytes;
  return {
    frame: dir.frame,
    dev: dir.dev,
    ino: dir.ino,
    digest: dir.digest,
    ignoreBytes: gitignore || ignore || rgignore ? dir.ignoreBytes : undefined,
    request,
  };
}

/** Whether the ignore files of a directory still hold the bytes its rules came from. */
function sameIgnoreBytes(absolute: string, bytes: DirState["ignoreBytes"]): boolean {
  const read = (name: string) => {
    try {
      return readFileSync(fsPath(`${absolute}/${name}`));
    } catch {
      return undefined;
    }
  };
  if (!bytes) return true;
  const now = [read(".gitignore"), read(".ignore"), read(".rgignore")];
  return bytes.every((was, i) => {
    const is = now[i];
    return was === undefined ? is === undefined : is?.equals(was) === true;
  });
}

interface Edit<T> {
  readonly start: number;
  readonly end: number;
  readonly items: readonly T[];
  readonly key: string;
}

function applyEdits<T>(items: readonly T[], edits: Edit<T>[]): T[] {
  if (edits.length === 0) return items as T[];
  edits.sort((a, b) => a.start - b.start || comparePaths(a.key, b.key));
  const parts: (readonly T[])[] = [];
  let at = 0;
  for (const edit of edits) {
    if (edit.start > at) parts.push(items.slice(at, edit.start));
    if (edit.items.length > 0) parts.push(edit.items);
    at = Math.max(at, edit.end);
  }
  if (at < items.length) parts.push(items.slice(at));
  return ([] as T[]).concat(...parts);
}

/**
 * `index` after `batch`: a new map (snapshots hold the old one) with new buckets for the
 * extensions the batch touched, others shared. The cost follows the buckets touched, not the
 * tree.
 */
function reindexed(
  index: Map<string, ScanEntry[]>,
  entries: readonly ScanEntry[],
  batch: Batch,
): Map<string, ScanEntry[]> {
  const removed = new Map<string, Set<ScanEntry>>();
  const added = new Map<string, ScanEntry[]>();
  const touch = <T>(map: Map<string, T>, extension: string, make: () => T): T => {
    let value = map.get(extension);
    if (value === undefined) {
      value = make();
      map.set(extension, value);
    }
    return value;
  };
  for (const edit of batch.entries) {
    for (let i = edit.start; i < edit.end; i++) {
      const entry = entries[i] as ScanEntry;
      const extension = extensionOf(entry.path);
      if (extension !== undefined) touch(removed, extension, () => new Set()).add(entry);
    }
    for (const entry of edit.items) {
      const extension = extensionOf(entry.path);
      if (extension !== undefined) touch(added, extension, () => []).push(entry);
    }
  }
  const out = new Map(index);
  for (const extension of new Set([...removed.keys(), ...added.keys()])) {
    const gone = removed.get(extension);
    let bucket = index.get(extension) ?? [];
    bucket = gone ? bucket.filter((entry) => !gone.has(entry)) : [...bucket];
    for (const entry of added.get(extension) ?? []) {
      bucket.splice(lowerBound(bucket, entry.path), 0, entry);
    }
    if (bucket.length > 0) out.set(extension, bucket);
    else out.delete(extension);
  }
  return out;
}

/**
 * Fingerprints, right after the walk read `dir`, the rule files it brought: a nested
 * repository's sources, and where a `.ignore` or `.rgignore` that is a symlink leads.
 */
function printSources(dir: WalkedDirectory, prints: Map<string, string>): void {
  for (const file of nestedSources(dir)) prints.set(file, fingerprint(file));
  for (const link of dir.linkedIgnore) {
    try {
      const target = realpathSync(link);
      prints.set(target, fingerprint(target));
    } catch {
      // Dangling since: the link's own name is watched in its directory.
    }
  }
}

/** A nested repository's sources, when `dir` is the top of one. */
function nestedSources(dir: WalkedDirectory): readonly string[] {
  const repository = dir.frame.ignore?.repository;
  return repository && repository.root === dir.frame.absolute && dir.frame.rel !== ""
    ? repository.sources
    : [];
}

/**
 * Watches for `file` in `sources`: its nearest existing directory, with the name that leads to
 * it (so that making the missing directories is seen too).
 */
function addSource(sources: Map<string, Set<string>>, file: string): void {
  let dir = dirname(file);
  let name = basename(file);
  while (!isDirectory(dir) && dirname(dir) !== dir) {
    name = basename(dir);
    dir = dirname(dir);
  }
  let names = sources.get(dir);
  if (!names) {
    names = new Set();
    sources.set(dir, names);
  }
  names.add(name);
}

/** Names whose change re-derives the rules of the directory holding them. */
const RULE_NAMES = new Set([".gitignore", ".ignore", ".rgignore", ".git"]);

/** More changed names than this in one directory: it is read whole instead, one readdir. */
const READ_WHOLE_AT = 256;

/**
 * Estimated heap of an entry beside its path's characters: the object (48), the path's string
 * header and padding (~20), its slots in the listing and in glob's index by extension (16), and
 * the slack of arrays copied per change. Measured on a live tree of 1,010,000 entries with
 * 11-character paths: 118 bytes an entry in all.
 */
export const LIVE_ENTRY_BYTES = 104;
/** Estimated heap of a directory's state (frame, strings, map slot), beside its path. */
const DIR_BYTES = 240;

function entryBytes(entry: { readonly path: string }): number {
  return LIVE_ENTRY_BYTES + entry.path.length;
}

/** A file's state, to tell whether a rule source changed while its watch was set up. */
function fingerprint(path: string): string {
  try {
    const stats = lstatSync(fsPath(path));
    if (!stats.isFile()) return `${stats.isDirectory() ? "d" : "o"}:${stats.dev}:${stats.ino}`;
    return `f:${createHash("sha1")
      .update(readFileSync(fsPath(path)))
      .digest("hex")}`;
  } catch {
    return "-";
  }
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(fsPath(path)).isDirectory();
  } catch {
    return false;
  }
}

export type LiveStatus =
  /** No listing: the next call walks and starts watching. */
  | "empty"
  /** Walked, watches being set up and confirmed: calls walk meanwhile. */
  | "starting"
  /** Every directory watched and confirmed: calls are answered from the listing. */
  | "live";

export interface LiveTreeOptions {
  readonly root: string;
  readonly includeHidden: boolean;
  readonly useGitignore: boolean;
  readonly backend: WatchBackend;
  /** A watch could not be set up for a reason that will not pass by itself (ENOSPC, EMFILE). */
  readonly onUnwatchable: (tree: LiveTree, reason: string) => void;
  /**
   * The listing grew or shrank, and is about to watch `adding` more directories: the registry
   * checks its budgets (and may close the tree).
   */
  readonly onResize: (tree: LiveTree, adding: number) => void;
}

/**
 * Told of every change to the tree as soon as it is known: the content index, which must never
 * vouch for a file changed since it read it. `changed` comes before any answer that reflects the
 * change (from the event, a confirmation that found a difference, or freshfs's own `touch`).
 */
export interface TreeObserver {
  /** `rel` (a file, or a directory and everything below it; "" the whole tree) may have changed. */
  changed(rel: string): void;
  /** Changes may have been missed (the event stream was distrusted): nothing known holds. */
  reset(): void;
  /** The tree stopped watching: it will tell nothing more. */
  closed(): void;
}

/** Watch failures that mean "not here, not now": the tree falls back to walking. */
const UNWATCHABLE = new Set(["ENOSPC", "EMFILE", "ENFILE", "ENOMEM", "ENOSYS", "EPERM"]);

export class LiveTree implements WatchSubscriber {
  readonly root: string;
  readonly includeHidden: boolean;
  readonly useGitignore: boolean;
  readonly #backend: WatchBackend;
  readonly #options: LiveTreeOptions;
  readonly #kinds: ReturnType<typeof entryKinds>;

  #entries: ScanEntry[] = [];
  /** glob's index of the entries by extension: built at the first call, then kept per change. */
  #byExtension: Map<string, ScanEntry[]> | undefined;
  #skipped: SkippedFile[] = [];
  #warnings: ScanWarning[] = [];
  readonly #dirs = new Map<string, DirState>();
  /** Directories watched for this tree (absolute), confirmed or not. */
  readonly #watched = new Set<string>();
  #unconfirmed = 0;
  /** Watched places outside the listing: directory → names whose change means "rescan". */
  #sources = new Map<string, Set<string>>();
  #sourcePrints = new Map<string, string>();
  /** Source directories whose watch is not yet confirmed → the request that confirms it. */
  #sourcesUnconfirmed = new Map<string, number>();
  /** Changes not yet applied: directory (relative) → names ("" for the whole directory). */
  #pending = new Map<string, Set<string>>();
  #pendingNames = 0;
  /** The rules of the whole tree may have changed: re-walk it, watches kept. */
  #rulesChanged = false;
  /** Why the events cannot be trusted: everything is walked and watched again. */
  #distrust: string | undefined;
  #status: LiveStatus = "empty";
  #bytes = 0;
  /** Serializes the calls that change the listing. */
  #turn: Promise<unknown> = Promise.resolve();
  #confirmWaiters: (() => void)[] = [];
  #closed = false;
  /** A walk that will replace the listing is under way: its new watches are not yet set up. */
  #rebuilding = false;
  #observer: TreeObserver | undefined;
  /** Calls under way through `query`. */
  #busy = 0;
  /** Monotonic time of the last call: the registry evicts the least recently used. */
  lastUsed = performance.now();

  constructor(options: LiveTreeOptions) {
    this.root = options.root;
    this.includeHidden = options.includeHidden;
    this.useGitignore = options.useGitignore;
    this.#backend = options.backend;
    this.#options = options;
    this.#kinds = entryKinds(options.root);
  }

  get status(): LiveStatus {
    return this.#status;
  }

  /**
   * Live, with every watch confirmed and the events trusted: from now on, every change to a
   * listed file is heard. The content index reads files only then.
   */
  get settled(): boolean {
    return (
      !this.#closed &&
      !this.#rebuilding &&
      this.#status === "live" &&
      this.#unconfirmed === 0 &&
      this.#sourcesUnconfirmed.size === 0 &&
      this.#distrust === undefined
    );
  }

  /** Whether the tree stopped watching for good (evicted, given up): its observer was told. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** Tells `observer` of every change from now on (one observer: the tree's content index). */
  observe(observer: TreeObserver): void {
    this.#observer = observer;
  }

  /** Estimated bytes of the listing and the directory states. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Directories watched for this tree. */
  get watchCount(): number {
    return this.#watched.size;
  }

  /** A call is under way: the registry does not evict the tree under it. */
  get busy(): boolean {
    return this.#busy > 0;
  }

  /** Entries listed. */
  get size(): number {
    return this.#entries.length;
  }

  /**
   * The listing as of now: every change completed before the call is in it. `walked` says the
   * answer came from a walk made for this call (the first call, while watches are set up, or
   * after the event stream was distrusted), `live` from the watched listing.
   */
  query(
    signal: AbortSignal | undefined,
    onProgress: ((progress: WalkProgress) => void) | undefined,
  ): Promise<ScanResult> {
    this.lastUsed = performance.now();
    this.#busy++;
    const run = this.#turn.then(() => this.#answer(signal, onProgress));
    this.#turn = run.then(
      () => this.#busy--,
      () => this.#busy--,
    );
    return run;
  }

  /**
   * For a cheap search: the listing as it stands, when nothing is known to be pending, with a
   * sync already under way. The caller searches it while the watcher's thread answers, and
   * keeps its answer only if `settled` says nothing arrived: the answer then reflects every
   * change completed before the call, as `query` would, at the cost of the slower of the two
   * rather than their sum.
   */
  peek(
    signal: AbortSignal | undefined,
  ): { snapshot: ScanResult; settled: Promise<boolean> } | undefined {
    if (!this.#quiet()) return undefined;
    this.lastUsed = performance.now();
    const entries = this.#entries;
    const settled = this.#backend.sync(signal).then(
      () => this.#entries === entries && this.#quiet(),
      () => false,
    );
    return { snapshot: this.#snapshot("live"), settled };
  }

  #quiet(): boolean {
    return (
      !this.#closed &&
      this.#busy === 0 &&
      this.#status === "live" &&
      this.#pendingNames === 0 &&
      this.#distrust === undefined &&
      !this.#rulesChanged &&
      this.#unconfirmed === 0 &&
      this.#sourcesUnconfirmed.size === 0
    );
  }

  async #answer(
    signal: AbortSignal | undefined,
    onProgress: ((progress: WalkProgress) => void) | undefined,
  ): Promise<ScanResult> {
    if (this.#closed) return this.#plainWalk(signal, onProgress);
    if (this.#status !== "empty") {
      try {
        await this.#backend.sync(signal);
      } catch (error) {
        if (error instanceof SyncError && error.reason === "timeout") {
          this.#distrust ??= error.message;
        } else {
          throw new FreshfsError("ABORTED", "The search was aborted.");
        }
      }
      // Confirmations asked for before the sync have arrived by now, save those still queued
      // behind a large setup: a few are worth waiting for, many are not.
      const waiting = this.#unconfirmed + this.#sourcesUnconfirmed.size;
      if (waiting > 0 && waiting <= 512 && this.#distrust === undefined) {
        await this.#confirmations(signal);
      }
    }
    if (this.#distrust !== undefined || this.#status === "empty") {
      return this.#rebuild(false, signal, onProgress);
    }
    if (this.#unconfirmed > 0 || this.#sourcesUnconfirmed.size > 0) {
      return this.#plainWalk(signal, onProgress);
    }
    if (this.#rulesChanged) return this.#rebuild(true, signal, onProgress);
    if (this.#pendingNames > 0) {
      const applied = await this.#apply(signal);
      if (!applied) return this.#rebuild(true, signal, onProgress);
      // Given up by the registry while applying (a budget exceeded): its listing is gone.
      if (this.#closed) return this.#plainWalk(signal, onProgress);
    }
    if (this.#status === "starting" && this.#unconfirmed === 0) this.#status = "live";
    return this.#snapshot("live");
  }

  #confirmations(signal: AbortSignal | undefined): Promise<void> {
    if (this.#unconfirmed === 0 && this.#sourcesUnconfirmed.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, 2000);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
      this.#confirmWaiters.push(done);
    });
  }

  #snapshot(freshness: "live" | "walked"): ScanResult {
    this.#byExtension ??= indexByExtension(this.#entries);
    return {
      byExtension: this.#byExtension,
      root: this.root,
      entries: this.#entries,
      cacheAgeMs: 0,
      warnings: this.#warnings,
      skipped: this.#skipped,
      freshness,
    };
  }

  /** A walk for this call only: the listing kept is not touched. */
  async #plainWalk(
    signal: AbortSignal | undefined,
    onProgress: ((progress: WalkProgress) => void) | undefined,
  ): Promise<ScanResult> {
    const listing = await walkTree(this.root, {
      includeHidden: this.includeHidden,
      useGitignore: this.useGitignore,
      signal,
      onProgress,
    });
    return { ...listing, cacheAgeMs: 0, freshness: "walked" };
  }

  /**
   * Walks the whole tree and makes it the listing. `trusted`: the events so far are sound (an
   * ignore rule of the whole tree changed), so directories still watched stay confirmed;
   * otherwise every watch is renewed and confirmed again.
   */
  async #rebuild(
    trusted: boolean,
    signal: AbortSignal | undefined,
    onProgress: ((progress: WalkProgress) => void) | undefined,
  ): Promise<ScanResult> {
    // Events dropped, or never heard: no file's content can be vouched for.
    if (!trusted) this.#observer?.reset();
    this.#rebuilding = true;
    try {
      return await this.#rebuildWalk(trusted, signal, onProgress);
    } finally {
      this.#rebuilding = false;
    }
  }

  async #rebuildWalk(
    trusted: boolean,
    signal: AbortSignal | undefined,
    onProgress: ((progress: WalkProgress) => void) | undefined,
  ): Promise<ScanResult> {
    // Events from here on are about the tree this walk reads, or later: keep them.
    this.#pending = new Map();
    this.#pendingNames = 0;
    this.#rulesChanged = false;
    this.#distrust = undefined;
    const walked = new Map<string, WalkedDirectory>();
    // Rule files fingerprinted as soon as the walk has read them, not after it: a change made
    // meanwhile must differ from the print the watch's confirmation compares with.
    const prints = new Map<string, string>();
    let listing: Listing;
    try {
      listing = await walkTree(this.root, {
        includeHidden: this.includeHidden,
        useGitignore: this.useGitignore,
        signal,
        onProgress,
        onDirectory: (dir) => {
          walked.set(dir.frame.rel, dir);
          printSources(dir, prints);
        },
        onRootSources: (sources) => {
          for (const file of sources) prints.set(file, fingerprint(file));
        },
      });
    } catch (error) {
      // Aborted or failed: the events dropped above are not in the listing kept; walk again.
      if (trusted) this.#rulesChanged = true;
      else this.#distrust ??= "a rescan did not finish";
      throw error;
    }
    if (this.#closed) return { ...listing, cacheAgeMs: 0, freshness: "walked" };
    const previous = this.#dirs;
    const keep = new Map<string, DirState>();
    const fresh: string[] = [];
    const request = this.#backend.nextRequest();
    for (const [rel, dir] of walked) {
      const old = previous.get(rel);
      if (trusted && old?.request === 0 && old.dev === dir.dev && old.ino === dir.ino) {
        keep.set(rel, stateOf(dir, 0));
      } else {
        keep.set(rel, stateOf(dir, request));
        fresh.push(dir.frame.absolute);
      }
    }
    const gone: string[] = [];
    for (const [rel, old] of previous) if (!keep.has(rel)) gone.push(old.frame.absolute);
    previous.clear();
    for (const [rel, dir] of keep) this.#dirs.set(rel, dir);
    // A file the new rules leave out is no longer watched (its directory may go unwatched):
    // whatever the index knew of it cannot be trusted if it comes back.
    if (trusted && this.#observer) {
      const now = new Set<string>();
      for (const entry of listing.entries) if (entry.type === "file") now.add(entry.path);
      for (const entry of this.#entries) {
        if (entry.type === "file" && !now.has(entry.path)) this.#observer.changed(entry.path);
      }
    }
    this.#entries = listing.entries as ScanEntry[];
    this.#byExtension = undefined;
    this.#skipped = listing.skipped as SkippedFile[];
    this.#warnings = listing.warnings as ScanWarning[];
    this.#unconfirmed = fresh.length;
    this.#recount();
    this.#status = "starting";
    for (const path of gone) this.#watched.delete(path);
    this.#release(gone);
    for (const path of fresh) this.#watched.add(path);
    // Within its budgets before a single watch is set up (the registry may close it here).
    this.#options.onResize(this, fresh.length);
    if (this.#closed) return { ...listing, cacheAgeMs: 0, freshness: "walked" };
    this.#backend.watch(this, fresh, request);
    this.#watchSources(prints);
    return { ...listing, cacheAgeMs: 0, freshness: "walked" };
  }

  /**
   * The places outside the listing whose change means the rules changed: each source file's
   * nearest existing directory, with the name leading to it; and the root's name in its parent.
   */
  #watchSources(prints: Map<string, string>): void {
    const sources = new Map<string, Set<string>>();
    for (const file of prints.keys()) addSource(sources, file);
    if (dirname(this.root) !== this.root) addSource(sources, this.root);
    const old = [...this.#sources.keys()].filter((dir) => !sources.has(dir));
    this.#sources = sources;
    this.#release(old);
    this.#sourcePrints = prints;
    const request = this.#backend.nextRequest();
    this.#sourcesUnconfirmed = new Map([...sources.keys()].map((dir) => [dir, request]));
    this.#backend.watch(this, [...sources.keys()], request);
  }

  /**
   * Stops watching `dirs` that neither role needs any more: a nested repository's top is both a
   * listed directory and the place of its `.git`, and the backend holds one subscription.
   */
  #release(dirs: readonly string[]): void {
    this.#backend.unwatch(
      this,
      dirs.filter((dir) => !this.#watched.has(dir) && !this.#sources.has(dir)),
    );
  }

  /** Sources of a repository found by a walk below the root (a `git init` in a subdirectory). */
  #addSources(prints: Map<string, string>): void {
    if (this.#closed || prints.size === 0) return;
    const added = new Map<string, Set<string>>();
    for (const [file, print] of prints) {
      this.#sourcePrints.set(file, print);
      addSource(added, file);
    }
    const request = this.#backend.nextRequest();
    for (const [dir, names] of added) {
      const known = this.#sources.get(dir);
      if (known) for (const name of names) known.add(name);
      else this.#sources.set(dir, names);
      this.#sourcesUnconfirmed.set(dir, request);
    }
    this.#backend.watch(this, [...added.keys()], request);
  }

  #recount(): void {
    let bytes = 0;
    for (const entry of this.#entries) bytes += entryBytes(entry);
    for (const file of this.#skipped) bytes += entryBytes(file);
    for (const [rel] of this.#dirs) bytes += this.#dirBytes(rel);
    this.#bytes = bytes;
  }

  #dirBytes(rel: string): number {
    return DIR_BYTES + this.root.length + 3 * rel.length;
  }

  /** Stops watching; later calls walk. */
  close(): void {
    this.#closed = true;
    this.#backend.unwatch(this, [...this.#watched, ...this.#sources.keys()]);
    this.#watched.clear();
    this.#sources.clear();
    this.#dirs.clear();
    this.#entries = [];
    this.#byExtension = undefined;
    this.#skipped = [];
    this.#status = "empty";
    for (const wake of this.#confirmWaiters.splice(0)) wake();
    this.#observer?.closed();
    this.#observer = undefined;
  }

  /** Everything may have changed (an invalidation of every listing): walk again, watches kept. */
  touchAll(): void {
    this.#rulesChanged = true;
    this.#observer?.reset();
  }

  /** A change freshfs itself made at `path`: applied at the next call, event or not. */
  touch(path: string): void {
    const dir = dirname(path);
    const names = this.#sources.get(dir);
    if (names?.has(basename(path))) this.#rulesChanged = true;
    const rel = this.#relOf(dir);
    if (rel !== undefined) this.#note(rel, basename(path));
  }

  #relOf(dir: string): string | undefined {
    if (dir === this.root) return "";
    const prefix = this.root === "/" ? "/" : `${this.root}/`;
    return dir.startsWith(prefix) ? dir.slice(prefix.length) : undefined;
  }

  #note(rel: string, name: string): void {
    this.#observer?.changed(name === "" ? rel : rel === "" ? name : `${rel}/${name}`);
    let names = this.#pending.get(rel);
    if (!names) {
      names = new Set();
      this.#pending.set(rel, names);
    }
    if (!names.has(name)) this.#pendingNames++;
    names.add(name);
  }

  onChange(dir: string, name: string): void {
    const names = this.#sources.get(dir);
    if (names && (name === "" || names.has(name))) {
      if (dir === dirname(this.root) && (name === "" || name === basename(this.root))) {
        this.#distrust ??= "the root was moved or deleted";
      } else {
        this.#rulesChanged = true;
      }
    }
    if (!this.#watched.has(dir)) return;
    const rel = this.#relOf(dir);
    if (rel !== undefined) this.#note(rel, name);
  }

  onWatched(report: WatchedReport, request: number): void {
    const awaited = this.#sourcesUnconfirmed.get(report.path);
    if (awaited !== undefined && request >= awaited) {
      this.#sourcesUnconfirmed.delete(report.path);
      if (report.code !== undefined && UNWATCHABLE.has(report.code)) {
        this.#options.onUnwatchable(this, `cannot watch ${report.path} (${report.code})`);
        return;
      }
      if (this.#sourcesUnconfirmed.size === 0) {
        for (const [file, print] of this.#sourcePrints) {
          if (fingerprint(file) !== print) this.#rulesChanged = true;
        }
        this.#wakeIfConfirmed();
      }
    }
    const rel = this.#relOf(report.path);
    const state = rel === undefined ? undefined : this.#dirs.get(rel);
    // Only a read made after this tree's own request confirms: an earlier one (another tree's)
    // may predate changes this tree was not yet subscribed to hear about.
    if (rel === undefined || !state || state.request === 0 || request < state.request) return;
    if (report.code !== undefined) {
      if (UNWATCHABLE.has(report.code)) {
        this.#options.onUnwatchable(this, `cannot watch ${report.path} (${report.code})`);
        return;
      }
      // Gone, or no longer a directory, since it was read: its parent says what it is now.
      this.#watched.delete(report.path);
      if (rel === "") this.#distrust ??= `the root cannot be watched (${report.code})`;
      else this.#note(dirname(rel) === "." ? "" : dirname(rel), basename(rel));
    } else if (
      report.digest !== state.digest ||
      report.dev !== state.dev ||
      report.ino !== state.ino
    ) {
      // Changed between the walk's read and the watch: read it again (and below, if replaced).
      if (report.dev !== state.dev || report.ino !== state.ino) {
        if (rel === "") this.#distrust ??= "the root was replaced";
        else this.#note(dirname(rel) === "." ? "" : dirname(rel), basename(rel));
      } else {
        this.#note(rel, "");
      }
    } else if (!sameIgnoreBytes(report.path, state.ignoreBytes)) {
      this.#note(rel, ".gitignore");
    }
    state.request = 0;
    this.#unconfirmed--;
    this.#wakeIfConfirmed();
  }

  #wakeIfConfirmed(): void {
    if (this.#unconfirmed > 0 || this.#sourcesUnconfirmed.size > 0) return;
    for (const wake of this.#confirmWaiters.splice(0)) wake();
  }

  onDistrust(reason: string): void {
    this.#distrust ??= reason;
    this.#observer?.reset();
    for (const wake of this.#confirmWaiters.splice(0)) wake();
  }

  /**
   * Applies the pending changes. Returns false when so much changed that a walk of the whole
   * tree is cheaper (or the root's own rules changed).
   */
  async #apply(signal: AbortSignal | undefined): Promise<boolean> {
    if (this.#pendingNames > Math.max(4096, this.#entries.length / 4)) return false;
    const work = this.#pending;
    this.#pending = new Map();
    this.#pendingNames = 0;
    try {
      return await this.#applyWork(work, signal);
    } catch (error) {
      // Aborted mid-way: what was taken out of `pending` is in no listing; walk again.
      this.#rulesChanged = true;
      throw error;
    }
  }

  async #applyWork(
    work: Map<string, Set<string>>,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const depth = (rel: string) => (rel === "" ? 0 : rel.split("/").length);
    const order = [...work.keys()].sort((a, b) => depth(a) - depth(b) || comparePaths(a, b));
    const batch = new Batch();
    const covered = (rel: string) =>
      batch.covered.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
    for (const rel of order) {
      if (covered(rel)) continue;
      const state = this.#dirs.get(rel);
      if (!state) continue;
      let names = work.get(rel) as Set<string>;
      let types: Map<string, EntryType | undefined> | undefined;
      if (names.has("") || names.size > READ_WHOLE_AT) {
        types = this.#readWhole(state);
        names = new Set(types.keys());
      }
      if ([...names.keys()].some((name) => RULE_NAMES.has(name))) {
        if (rel === "") return false;
        const parent = this.#dirs.get(dirname(rel) === "." ? "" : dirname(rel));
        if (!parent) return false;
        await this.#change(batch, parent, basename(rel), signal, undefined);
        continue;
      }
      for (const name of names) {
        const known = types?.has(name) ? { type: types.get(name) } : undefined;
        await this.#change(batch, state, name, signal, known);
      }
    }
    this.#commit(batch);
    return true;
  }

  /** Every name the directory holds now (with its type) or held as far as the listing knows. */
  #readWhole(state: DirState): Map<string, EntryType | undefined> {
    const types = new Map<string, EntryType | undefined>();
    const { rel, prefix } = state.frame;
    const from = rel === "" ? 0 : lowerBound(this.#entries, prefix);
    const end = rel === "" ? this.#entries.length : subtreeEnd(this.#entries, from, rel);
    for (let i = from; i < end; i++) {
      const path = (this.#entries[i] as ScanEntry).path;
      if (path.indexOf("/", prefix.length) === -1) types.set(path.slice(prefix.length), undefined);
    }
    const sFrom = rel === "" ? 0 : lowerBound(this.#skipped, prefix);
    const sEnd = rel === "" ? this.#skipped.length : subtreeEnd(this.#skipped, sFrom, rel);
    for (let i = sFrom; i < sEnd; i++) {
      const path = (this.#skipped[i] as SkippedFile).path;
      if (path.indexOf("/", prefix.length) === -1) types.set(path.slice(prefix.length), undefined);
    }
    let dirents: Dirent[] = [];
    try {
      const absolute = state.frame.absolute;
      dirents = withRealNames(readdirSync(fsPath(absolute), { withFileTypes: true }), absolute);
    } catch {
      // Gone or unreadable: its parent's event says so; every name known is gone from here.
    }
    for (const dirent of dirents) types.set(dirent.name, typeOf(dirent));
    return types;
  }

  /**
   * Looks at `name` in directory `state` again and records the edits that bring the listing to
   * what it is now. `known`: its type from a readdir just made (undefined type: gone).
   */
  async #change(
    batch: Batch,
    state: DirState,
    name: string,
    signal: AbortSignal | undefined,
    known: { type: EntryType | undefined } | undefined,
  ): Promise<void> {
    const frame = state.frame;
    const rel = `${frame.prefix}${name}`;
    const absolute = `${frame.absolute}/${name}`;
    let type: EntryType | undefined;
    if (known) type = known.type;
    else {
      try {
        type = typeOf(lstatSync(fsPath(absolute)));
      } catch {
        type = undefined;
      }
    }
    const verdict =
      type === undefined ? OMITTED : judge(frame, name, rel, type, this.includeHidden);
    const entries = this.#entries;
    const skipped = this.#skipped;
    const at = lowerBound(entries, rel);
    const old = entries[at]?.path === rel ? (entries[at] as ScanEntry) : undefined;
    const sAt = lowerBound(skipped, rel);
    const oldSkip = skipped[sAt]?.path === rel ? (skipped[sAt] as SkippedFile) : undefined;
    // A directory named by an event is walked again, whatever the event: it may be another
    // directory by now (even under a reused inode number), or one no longer readable (chmod).
    let end = old ? at + 1 : at;
    let sEnd = oldSkip ? sAt + 1 : sAt;
    if (old?.type === "dir") {
      end = subtreeEnd(entries, at + 1, rel);
      sEnd = subtreeEnd(skipped, sAt, rel);
      batch.covered.push(rel);
      for (let i = at; i < end; i++) {
        const entry = entries[i] as ScanEntry;
        if (entry.type === "dir") batch.removedDirs.push(entry.path);
      }
      const under = `${absolute}/`;
      batch.dropWarnings.push((path) => path === absolute || path.startsWith(under));
    }
    const newEntries: ScanEntry[] = [];
    let newSkipped: SkippedFile[] = [];
    const addedBefore = batch.addedDirs.length;
    if (verdict === LISTED && type !== undefined) {
      newEntries.push(new ScanEntry(this.#kinds[type], rel));
      if (type === "dir") {
        const walked: WalkedDirectory[] = [];
        const listing: Listing = await walkTree(this.root, {
          includeHidden: this.includeHidden,
          useGitignore: this.useGitignore,
          signal,
          from: { name, parent: frame },
          onDirectory: (dir) => {
            walked.push(dir);
            printSources(dir, batch.prints);
          },
        });
        for (const entry of listing.entries) newEntries.push(entry);
        newSkipped = listing.skipped as SkippedFile[];
        batch.warnings.push(...listing.warnings);
        batch.addedDirs.push(...walked);
      }
    } else if (verdict !== OMITTED) {
      newSkipped = [skippedFile(rel, verdict)];
    }
    for (let i = at; i < end; i++) batch.bytes -= entryBytes(entries[i] as ScanEntry);
    for (let i = sAt; i < sEnd; i++) batch.bytes -= entryBytes(skipped[i] as SkippedFile);
    for (const entry of newEntries) batch.bytes += entryBytes(entry);
    for (const file of newSkipped) batch.bytes += entryBytes(file);
    if (old?.type === "dir") {
      for (let i = at; i < end; i++) {
        const entry = entries[i] as ScanEntry;
        if (entry.type === "dir") batch.bytes -= this.#dirBytes(entry.path);
      }
    }
    for (const dir of batch.addedDirs.slice(addedBefore))
      batch.bytes += this.#dirBytes(dir.frame.rel);
    if (end > at || newEntries.length > 0) {
      batch.entries.push({ start: at, end, items: newEntries, key: rel });
    }
    if (sEnd > sAt || newSkipped.length > 0) {
      batch.skipped.push({ start: sAt, end: sEnd, items: newSkipped, key: rel });
    }
  }

  #commit(batch: Batch): void {
    // Closed while the batch was being made (its walks yield): the listing it edits is gone.
    if (this.#closed) return;
    if (batch.entries.length === 0 && batch.skipped.length === 0) return;
    // Entries replaced or removed (a directory re-derived for its rules, say, which may leave
    // files unwatched): the index holds nothing of them it can vouch for.
    for (const edit of batch.entries) if (edit.end > edit.start) this.#observer?.changed(edit.key);
    if (this.#byExtension) this.#byExtension = reindexed(this.#byExtension, this.#entries, batch);
    this.#entries = applyEdits(this.#entries, batch.entries);
    this.#skipped = applyEdits(this.#skipped, batch.skipped);
    if (batch.dropWarnings.length > 0 || batch.warnings.length > 0) {
      this.#warnings = [
        ...this.#warnings.filter((w) => !batch.dropWarnings.some((drop) => drop(w.path))),
        ...batch.warnings,
      ];
    }
    const added = new Map(batch.addedDirs.map((dir) => [dir.frame.rel, dir]));
    const unwatch: string[] = [];
    for (const rel of batch.removedDirs) {
      const state = this.#dirs.get(rel);
      if (!state) continue;
      this.#dirs.delete(rel);
      if (state.request !== 0) this.#unconfirmed--;
      if (!added.has(rel)) {
        unwatch.push(state.frame.absolute);
        this.#watched.delete(state.frame.absolute);
      }
    }
    this.#addSources(batch.prints);
    const watch: string[] = [];
    const request = this.#backend.nextRequest();
    for (const [rel, dir] of added) {
      this.#dirs.set(rel, stateOf(dir, request));
      this.#unconfirmed++;
      this.#watched.add(dir.frame.absolute);
      watch.push(dir.frame.absolute);
    }
    this.#release(unwatch);
    this.#bytes += batch.bytes;
    this.#options.onResize(this, watch.length);
    if (!this.#closed) this.#backend.watch(this, watch, request);
  }
}

/** The edits one application of pending changes makes, committed at once. */
class Batch {
  readonly entries: Edit<ScanEntry>[] = [];
  readonly skipped: Edit<SkippedFile>[] = [];
  /** Directories whose subtree this batch replaces: pending changes below them are moot. */
  readonly covered: string[] = [];
  readonly removedDirs: string[] = [];
  readonly addedDirs: WalkedDirectory[] = [];
  readonly warnings: ScanWarning[] = [];
  readonly dropWarnings: ((path: string) => boolean)[] = [];
  /** Change in the estimated bytes. */
  bytes = 0;
  /** Rule files of repositories (and linked `.ignore` targets) the batch's walks found. */
  readonly prints = new Map<string, string>();
}

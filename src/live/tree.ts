/**
 * A live tree: the listing of one (root, hidden, gitignore) key, kept current by a
 * `WatchBackend`'s events, so that every answer reflects every change that completed before the
 * call began. Depends on `scan/` (the walker and its rule, `judge`), `live/backend` (the events),
 * `live/directories` (the directories it watches and their confirmations), `live/sources` (the
 * rule files it depends on) and `live/edits` (the splices of its listing).
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
import { lstatSync } from "node:fs";
import { basename, dirname } from "node:path";
import { FreshfsError } from "../errors.js";
import { fsPath } from "../io/bytes.js";
import type { ScanResult } from "../scan/cache.js";
import { comparePaths } from "../scan/order.js";
import {
  type DirectoryFrame,
  type EntryType,
  entryKinds,
  indexByExtension,
  judge,
  LISTED,
  type Listing,
  OMITTED,
  ScanEntry,
  skippedFile,
  typeOf,
  type WalkedDirectory,
  type WalkProgress,
  walkTree,
} from "../scan/walk.js";
import {
  SyncError,
  type WatchBackend,
  type WatchedReport,
  type WatchSubscriber,
} from "./backend.js";
import { namesNow, WatchedDirectories } from "./directories.js";
import {
  EditBatch,
  emptyListing,
  type LiveListing,
  listingBytes,
  type Replacement,
} from "./edits.js";
import { fingerprint, printSources, RuleSources, rewalkFor } from "./sources.js";

/** More changed names than this in one directory: it is read whole instead, one readdir. */
const READ_WHOLE_AT = 256;

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

  #listing: LiveListing = emptyListing();
  readonly #dirs = new WatchedDirectories();
  /** The rule files outside the listing, and the places watched for them. */
  readonly #sources: RuleSources;
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
    this.#sources = new RuleSources(options.root);
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
      this.#dirs.unconfirmed === 0 &&
      this.#sources.unconfirmed === 0 &&
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
    return this.#dirs.watchCount;
  }

  /** A call is under way: the registry does not evict the tree under it. */
  get busy(): boolean {
    return this.#busy > 0;
  }

  /** Entries listed. */
  get size(): number {
    return this.#listing.entries.length;
  }

  /** The walked directories, the rule files outside the listing, and the listing: to stamp. */
  stampParts(): { dirs: string[]; sources: string[]; listing: LiveListing } {
    return { dirs: [...this.#dirs.rels()], sources: this.#sources.files(), listing: this.#listing };
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
    const entries = this.#listing.entries;
    const settled = this.#backend.sync(signal).then(
      () => this.#listing.entries === entries && this.#quiet(),
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
      this.#dirs.unconfirmed === 0 &&
      this.#sources.unconfirmed === 0
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
      // behind a large setup: a few are worth waiting for, many are not, except behind the
      // first setup (a second call right after the first walk), where the wait (~60 µs a
      // directory) ends in a live listing, and a walk, competing with the setup for the
      // cores, in another walk at the next call.
      const waiting = this.#dirs.unconfirmed + this.#sources.unconfirmed;
      const worth = waiting <= 512 || this.#status === "starting";
      if (waiting > 0 && worth && this.#distrust === undefined) {
        await this.#confirmations(signal);
      }
    }
    if (this.#distrust !== undefined || this.#status === "empty") {
      return this.#rebuild(false, signal, onProgress);
    }
    if (this.#dirs.unconfirmed > 0 || this.#sources.unconfirmed > 0) {
      return this.#plainWalk(signal, onProgress);
    }
    if (this.#rulesChanged) return this.#rebuild(true, signal, onProgress);
    if (this.#pendingNames > 0) {
      const applied = await this.#apply(signal);
      if (!applied) return this.#rebuild(true, signal, onProgress);
      // Given up by the registry while applying (a budget exceeded): its listing is gone.
      if (this.#closed) return this.#plainWalk(signal, onProgress);
    }
    if (this.#status === "starting" && this.#dirs.unconfirmed === 0) this.#status = "live";
    return this.#snapshot("live");
  }

  /**
   * Resolves once every watch set up so far is confirmed, the tree is closed, or `timeoutMs`
   * passed: a caller that keeps the tree for later (the daemon reopening the trees it kept)
   * asks for the live listing only then.
   */
  async whenConfirmed(timeoutMs: number): Promise<void> {
    const until = performance.now() + timeoutMs;
    while (
      !this.#closed &&
      this.#distrust === undefined &&
      (this.#dirs.unconfirmed > 0 || this.#sources.unconfirmed > 0) &&
      performance.now() < until
    ) {
      await this.#confirmations(undefined);
    }
  }

  #confirmations(signal: AbortSignal | undefined): Promise<void> {
    if (this.#dirs.unconfirmed === 0 && this.#sources.unconfirmed === 0) return Promise.resolve();
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
    const listing = this.#listing;
    listing.byExtension ??= indexByExtension(listing.entries);
    return {
      byExtension: listing.byExtension,
      root: this.root,
      entries: listing.entries,
      cacheAgeMs: 0,
      warnings: listing.warnings,
      skipped: listing.skipped,
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
    this.#dirs.suspect(this.#pending);
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
    const request = this.#backend.nextRequest();
    const { fresh, gone } = this.#dirs.replaceAll(walked, trusted, request);
    // A file the new rules leave out is no longer watched (its directory may go unwatched):
    // whatever the index knew of it cannot be trusted if it comes back.
    if (trusted && this.#observer) {
      const now = new Set<string>();
      for (const entry of listing.entries) if (entry.type === "file") now.add(entry.path);
      for (const entry of this.#listing.entries) {
        if (entry.type === "file" && !now.has(entry.path)) this.#observer.changed(entry.path);
      }
    }
    const { entries, skipped, warnings } = listing;
    this.#listing = { entries, skipped, warnings, byExtension: undefined };
    this.#bytes = listingBytes(this.root, this.#listing, this.#dirs.rels());
    this.#status = "starting";
    this.#release(gone);
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
    const request = this.#backend.nextRequest();
    const { watch, dropped } = this.#sources.replace(prints, request);
    this.#release(dropped);
    this.#backend.watch(this, watch, request);
  }

  /**
   * Stops watching `dirs` that neither role needs any more: a nested repository's top is both a
   * listed directory and the place of its `.git`, and the backend holds one subscription.
   */
  #release(dirs: readonly string[]): void {
    this.#backend.unwatch(
      this,
      dirs.filter((dir) => !this.#dirs.isWatched(dir) && !this.#sources.has(dir)),
    );
  }

  /** Sources of a repository found by a walk below the root (a `git init` in a subdirectory). */
  #addSources(prints: Map<string, string>): void {
    if (this.#closed || prints.size === 0) return;
    const request = this.#backend.nextRequest();
    this.#backend.watch(this, this.#sources.add(prints, request), request);
  }

  /** Stops watching; later calls walk. */
  close(): void {
    this.#closed = true;
    this.#backend.unwatch(this, [...this.#dirs.release(), ...this.#sources.release()]);
    this.#listing = emptyListing();
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
    if (this.#sources.changeAt(dir, basename(path)) !== undefined) this.#rulesChanged = true;
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
    const change = this.#sources.changeAt(dir, name);
    if (change === "root") this.#distrust ??= "the root was moved or deleted";
    else if (change === "rules") this.#rulesChanged = true;
    if (!this.#dirs.isWatched(dir)) return;
    const rel = this.#relOf(dir);
    if (rel !== undefined) this.#note(rel, name);
  }

  onWatched(report: WatchedReport, request: number): void {
    if (this.#sources.confirm(report.path, request)) {
      if (report.code !== undefined && UNWATCHABLE.has(report.code)) {
        this.#options.onUnwatchable(this, `cannot watch ${report.path} (${report.code})`);
        return;
      }
      if (this.#sources.unconfirmed === 0) {
        if (this.#sources.changedSincePrinted()) this.#rulesChanged = true;
        this.#wakeIfConfirmed();
      }
    }
    const rel = this.#relOf(report.path);
    if (rel === undefined || !this.#dirs.awaits(rel, request)) return;
    if (report.code !== undefined && UNWATCHABLE.has(report.code)) {
      this.#options.onUnwatchable(this, `cannot watch ${report.path} (${report.code})`);
      return;
    }
    const found = this.#dirs.confirm(rel, report);
    // Changed between the walk's read and the watch: read it again (and below, if replaced);
    // gone, or no longer a directory, since it was read: its parent says what it is now.
    if ((found === "gone" || found === "replaced") && rel === "") {
      this.#distrust ??=
        found === "gone" ? `the root cannot be watched (${report.code})` : "the root was replaced";
    } else if (found === "gone" || found === "replaced") {
      this.#note(dirname(rel) === "." ? "" : dirname(rel), basename(rel));
    } else if (found === "names") {
      this.#note(rel, "");
    } else if (found === "rules") {
      this.#note(rel, ".gitignore");
    }
    this.#wakeIfConfirmed();
  }

  #wakeIfConfirmed(): void {
    if (this.#dirs.unconfirmed > 0 || this.#sources.unconfirmed > 0) return;
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
    if (this.#pendingNames > Math.max(4096, this.#listing.entries.length / 4)) return false;
    const work = this.#pending;
    this.#pending = new Map();
    this.#pendingNames = 0;
    try {
      if (await this.#applyWork(work, signal)) return true;
      this.#dirs.suspect(work);
      return false;
    } catch (error) {
      // Aborted mid-way: what was taken out of `pending` is in no listing; walk again.
      this.#dirs.suspect(work);
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
    const batch = new EditBatch(this.root);
    for (const rel of order) {
      if (batch.covers(rel)) continue;
      const frame = this.#dirs.frame(rel);
      if (!frame) continue;
      let names = work.get(rel) as Set<string>;
      let types: Map<string, EntryType | undefined> | undefined;
      if (names.has("") || names.size > READ_WHOLE_AT) {
        types = namesNow(this.#listing, frame);
        names = new Set(types.keys());
      }
      const rewalk = rewalkFor(rel, names);
      if (rewalk === "tree") return false;
      if (rewalk) {
        const parent = this.#dirs.frame(rewalk.parent);
        if (!parent) return false;
        await this.#change(batch, parent, rewalk.name, signal, undefined);
        continue;
      }
      for (const name of names) {
        const known = types?.has(name) ? { type: types.get(name) } : undefined;
        await this.#change(batch, frame, name, signal, known);
      }
    }
    this.#commit(batch);
    return true;
  }

  /**
   * Looks at `name` in directory `frame` again and records the edits that bring the listing to
   * what it is now. `known`: its type from a readdir just made (undefined type: gone).
   */
  async #change(
    batch: EditBatch,
    frame: DirectoryFrame,
    name: string,
    signal: AbortSignal | undefined,
    known: { type: EntryType | undefined } | undefined,
  ): Promise<void> {
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
    // The listing the batch edits, as it is before this change's walk yields.
    const listing = this.#listing;
    let now: Replacement = { entries: [], skipped: [], dirs: [], warnings: [] };
    // A directory named by an event is walked again, whatever the event: it may be another
    // directory by now (even under a reused inode number), or one no longer readable (chmod).
    if (verdict === LISTED && type === "dir") {
      const dirs: WalkedDirectory[] = [];
      const walked = await walkTree(this.root, {
        includeHidden: this.includeHidden,
        useGitignore: this.useGitignore,
        signal,
        from: { name, parent: frame },
        onDirectory: (dir) => {
          dirs.push(dir);
          printSources(dir, batch.prints);
        },
      });
      const entry = new ScanEntry(this.#kinds.dir, rel);
      now = {
        entries: [entry, ...walked.entries],
        skipped: walked.skipped,
        dirs,
        warnings: walked.warnings,
      };
    } else if (verdict === LISTED && type !== undefined) {
      now = { ...now, entries: [new ScanEntry(this.#kinds[type], rel)] };
    } else if (verdict !== OMITTED) {
      now = { ...now, skipped: [skippedFile(rel, verdict)] };
    }
    batch.replace(listing, rel, absolute, now);
  }

  #commit(batch: EditBatch): void {
    // Closed while the batch was being made (its walks yield): the listing it edits is gone.
    if (this.#closed) return;
    if (batch.empty) return;
    // Entries replaced or removed (a directory re-derived for its rules, say, which may leave
    // files unwatched): the index holds nothing of them it can vouch for.
    for (const path of batch.replacedPaths) this.#observer?.changed(path);
    this.#listing = batch.applyTo(this.#listing);
    this.#addSources(batch.prints);
    const request = this.#backend.nextRequest();
    const { watch, unwatch } = this.#dirs.edit(batch.removedDirs, batch.addedDirs, request);
    this.#release(unwatch);
    this.#bytes += batch.bytes;
    this.#options.onResize(this, watch.length);
    if (!this.#closed) this.#backend.watch(this, watch, request);
  }
}

/**
 * The process's content indexes: one per live tree that grep searched, built in the background
 * by one build thread, within one memory budget. Depends on `live/`, `scan/` (the env reader)
 * and the rest of `content/`.
 *
 * An index is started by the first grep answered from a live tree, and grows one segment at a
 * time (at most 4,096 files or 32 MiB of text each, ~0.3 s of the thread's time on the Linux
 * tree); each grep answered meanwhile uses the segments there are and reads the rest. After
 * that, files the tree says changed are indexed again, a run at a time, after the grep that
 * met them. When the budget is reached, the index stops growing: the files beyond it are read
 * from disk on every search, as without an index.
 */
import { existsSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../io/thread.js";
import { savedListingOf, takeStamps } from "../live/saved-listing.js";
import type { LiveTree } from "../live/tree.js";
import { envCount, type ScanResult } from "../scan/cache.js";
import { resolveScanRoot } from "../scan/walk.js";
import type { BuildJob, Restored, RestoreJob, SegmentData } from "./format.js";
import { snapshotChunks } from "./snapshot.js";
import {
  ensureSnapshotDir,
  listingFileFor,
  snapshotFileFor,
  sweepTemps,
  treePolicy,
  writeListing,
  writeSnapshot,
} from "./snapshot-files.js";
import { ContentIndex, segmentBytes } from "./store.js";

export interface ContentIndexPolicy {
  /** Index live trees that grep searches. FS_INDEX=0 turns it off. */
  readonly enabled: boolean;
  /** Most bytes all indexes hold together (postings and per-file state). FS_INDEX_MAX_BYTES. */
  readonly maxBytes: number;
  /**
   * Larger files are not indexed (grep reads them). FS_INDEX_MAX_FILE_BYTES; at most 256 MiB
   * (a segment's 16-bit unit numbers must leave room for the blocks of the largest).
   */
  readonly maxFileBytes: number;
  /**
   * Where each index is saved once built, and loaded from when its tree is kept again (the
   * daemon's: `snapshotDirPath()`); undefined keeps indexes in memory only. @default undefined
   */
  readonly snapshotDir: string | undefined;
}

export interface ContentIndexStats {
  readonly root: string;
  /** Files with an entry (indexed, binary, or known unindexable). */
  readonly files: number;
  readonly segments: number;
  /** Bytes held: postings, flags, sizes and the per-file estimate. */
  readonly bytes: number;
  /** Bytes of text read to build what is held. */
  readonly textBytes: number;
  /** Runs being read now. */
  readonly building: number;
  /** The budget stopped it growing. */
  readonly full: boolean;
  /** Milliseconds from the first run to the last of the first build (undefined: not done). */
  readonly buildMs: number | undefined;
  /** The index's snapshot, where indexes are saved. */
  readonly snapshot: SnapshotStats | undefined;
}

export interface SnapshotStats {
  readonly file: string;
  /** `pending`: to be loaded once the tree is settled; `loading`; `done`: loaded, or none. */
  readonly restore: "pending" | "loading" | "done";
  /** What loading it came to: how many files were confirmed, or why it was discarded. */
  readonly outcome: string | undefined;
  /** The file on disk holds the index as it stands (written, or loaded with nothing changed). */
  readonly current: boolean;
  /** Bytes of the last snapshot written by this process, and how long ago (ms). */
  readonly savedBytes: number | undefined;
  readonly savedAgoMs: number | undefined;
}

const RUN_FILES = 4096;
const IDLE_MS = 10_000;
const RUN_TEXT_BYTES = 32 * 1024 * 1024;
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Above grep's own default bound (16 MiB), so that a grep told to search large files (rg has no
 * bound; the Linux tree has a 24 MB register header) finds them indexed in blocks too.
 */
const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
const MAX_FILE_BYTES_AT_MOST = 256 * 1024 * 1024;

/** A snapshot is first written this long after the build ends (changes seldom come alone). */
const SAVE_AFTER_MS = 2_000;
/** Then at most once in this long, while changes are indexed. */
const SAVE_EVERY_MS = 60_000;

function fromEnv(): ContentIndexPolicy {
  return {
    enabled: process.env.FS_INDEX !== "0",
    maxBytes: envCount("FS_INDEX_MAX_BYTES", DEFAULT_MAX_BYTES),
    maxFileBytes: envCount("FS_INDEX_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES),
    snapshotDir: undefined,
  };
}

interface Task {
  readonly index: ContentIndex;
  readonly job: BuildJob | RestoreJob;
  readonly paths: readonly string[];
  readonly run: ReturnType<ContentIndex["begin"]>;
}

/** An index's snapshot: loading it once, saving it after builds. */
interface SnapshotUpkeep {
  readonly file: string;
  readonly policy: string;
  restore: "pending" | "loading" | "done";
  loadStarted: number;
  finishRestore: () => void;
  outcome: string | undefined;
  /** The index's version the file on disk holds. */
  savedVersion: number;
  saving: Promise<void> | undefined;
  saveTimer: NodeJS.Timeout | undefined;
  savedAt: number | undefined;
  savedBytes: number | undefined;
}

/** What the registry keeps beside each index. */
interface Upkeep {
  /** The tree the index belongs to: files are read only while it is settled. */
  readonly tree: LiveTree;
  /** The tree's files as last seen, and where the look for files to index has got to in them. */
  files: readonly string[];
  entries: ScanResult["entries"] | undefined;
  cursor: number;
  full: boolean;
  /** The index's generation the rest was seen in. */
  generation: number;
  /** Maintenance asked for and not yet run. */
  soon: number;
  waiters: (() => void)[];
  snapshot: SnapshotUpkeep | undefined;
}

export class ContentIndexes {
  readonly #indexes = new Map<LiveTree, ContentIndex>();
  readonly #upkeep = new Map<ContentIndex, Upkeep>();
  #policy: ContentIndexPolicy = fromEnv();
  #thread: Worker | undefined;
  #queue: Task[] = [];
  #current: Task | undefined;
  /** The thread `#current` was sent to. */
  #currentThread: Worker | undefined;
  #jobs = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  /** Where a discarded or unsaved snapshot is told of. */
  warn: (message: string) => void = (message) =>
    process.emitWarning(message, { type: "FreshfsSnapshotWarning" });

  configure(policy: Partial<ContentIndexPolicy> | undefined): void {
    this.#policy = { ...fromEnv(), ...policy };
  }

  policy(): ContentIndexPolicy {
    return this.#policy;
  }

  /** The tree's index, made (and told of the tree's changes) on first use. */
  of(tree: LiveTree): ContentIndex | undefined {
    if (!this.#policy.enabled || tree.isClosed) return undefined;
    let index = this.#indexes.get(tree);
    if (!index) {
      index = new ContentIndex(tree.root, (closed) => this.#forget(tree, closed));
      this.#indexes.set(tree, index);
      this.#upkeep.set(index, {
        tree,
        files: [],
        entries: undefined,
        cursor: 0,
        full: false,
        generation: index.generation,
        soon: 0,
        waiters: [],
        snapshot: this.#snapshotOf(tree, index),
      });
      tree.observe(index);
    }
    return index;
  }

  /** The tree's snapshot place, where snapshots are kept; marks it to load if it exists. */
  #snapshotOf(tree: LiveTree, index: ContentIndex): SnapshotUpkeep | undefined {
    const dir = this.#policy.snapshotDir;
    if (dir === undefined) return undefined;
    const policy = treePolicy(tree.includeHidden, tree.useGitignore);
    const file = snapshotFileFor(dir, tree.root, policy);
    const snapshot: SnapshotUpkeep = {
      file,
      policy,
      restore: existsSync(file) ? "pending" : "done",
      loadStarted: 0,
      finishRestore: () => undefined,
      outcome: undefined,
      savedVersion: -1,
      saving: undefined,
      saveTimer: undefined,
      savedAt: undefined,
      savedBytes: undefined,
    };
    if (snapshot.restore === "pending") {
      index.restoring = new Promise((resolve) => {
        snapshot.finishRestore = () => {
          index.restoring = undefined;
          resolve();
        };
      });
    }
    return snapshot;
  }

  /**
   * Before a search consults `index`: where its snapshot is still to be loaded, starts loading
   * it (once the tree is settled) and waits for it, which costs a fraction of reading every
   * file. Resolves at once otherwise, and when `signal` aborts.
   */
  async ready(index: ContentIndex, listing: ScanResult, signal?: AbortSignal): Promise<void> {
    const snapshot = this.#upkeep.get(index)?.snapshot;
    if (!snapshot || snapshot.restore === "done") return;
    this.maintain(index, listing);
    const restoring = index.restoring;
    if (snapshot.restore !== "loading" || !restoring) return;
    if (signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      signal?.addEventListener("abort", done, { once: true });
      void restoring.then(done);
    });
  }

  /** `maintain`, once the caller's answer is on its way (the next turn of the loop). */
  maintainSoon(index: ContentIndex, listing: ScanResult): void {
    const upkeep = this.#upkeep.get(index);
    if (!upkeep) return;
    upkeep.soon++;
    setImmediate(() => {
      upkeep.soon--;
      this.maintain(index, listing);
      if (upkeep.soon === 0 && index.building === 0) this.#settle(upkeep);
    });
  }

  /**
   * After a grep answered from `listing` (the tree's, live): index what is not indexed yet, a
   * run at a time. Cheap when nothing changed: it returns at once.
   */
  maintain(index: ContentIndex, listing: ScanResult): void {
    const upkeep = this.#upkeep.get(index);
    if (!upkeep || index.isClosed) return;
    if (listing.entries !== upkeep.entries) {
      const files: string[] = [];
      for (const entry of listing.entries) if (entry.type === "file") files.push(entry.path);
      // Entries of files gone from the tree (stale already: their removal was heard) are
      // dropped, so their segments can go: a pass over every entry, made once they are many.
      if (index.files > files.length * 1.1 + 1024) index.forgetGone(new Set(files));
      upkeep.files = files;
      upkeep.entries = listing.entries;
      upkeep.cursor = 0;
    }
    if (index.changedSinceMaintenance) {
      index.changedSinceMaintenance = false;
      upkeep.cursor = 0;
    }
    // A full index stays full (changed files are then read from disk) until it starts over.
    if (upkeep.generation !== index.generation) {
      upkeep.generation = index.generation;
      upkeep.full = false;
    }
    this.#next(index, upkeep);
  }

  /** Dispatches the index's next run, unless one is under way, or it is complete or full. */
  #next(index: ContentIndex, upkeep: Upkeep): void {
    if (index.building > 0 || index.isClosed) return;
    // A file read while a watch is unconfirmed (a directory just made or replaced, the tree
    // rebuilt after distrust) could change before the watch exists, unheard: no run starts
    // then. The next grep answered live resumes the build.
    if (!upkeep.tree.settled) {
      this.#settle(upkeep);
      return;
    }
    if (upkeep.snapshot?.restore === "pending") {
      this.#restore(index, upkeep.snapshot);
      return;
    }
    if (upkeep.full || this.#totalBytes() >= this.#policy.maxBytes) {
      upkeep.full = true;
      this.#saveLater(index, upkeep);
      this.#settle(upkeep);
      return;
    }
    const todo = index.unindexed(upkeep.files, upkeep.cursor, RUN_FILES);
    upkeep.cursor = todo.first;
    if (todo.paths.length === 0) {
      index.buildEnded ??= performance.now();
      this.#saveLater(index, upkeep);
      this.#settle(upkeep);
      return;
    }
    index.buildStarted ??= performance.now();
    const paths = todo.paths;
    const job: BuildJob = {
      id: ++this.#jobs,
      root: index.root,
      paths: paths.join("\0"),
      maxFileBytes: Math.min(this.#policy.maxFileBytes, MAX_FILE_BYTES_AT_MOST),
      maxSegmentBytes: RUN_TEXT_BYTES,
    };
    this.#queue.push({ index, job, paths, run: index.begin() });
    this.#pump();
  }

  /** Loads the snapshot on the build thread, ahead of any run: it is one, to the index. */
  #restore(index: ContentIndex, snapshot: SnapshotUpkeep): void {
    snapshot.restore = "loading";
    snapshot.loadStarted = performance.now();
    const job: RestoreJob = {
      kind: "restore",
      id: ++this.#jobs,
      root: index.root,
      policy: snapshot.policy,
      path: snapshot.file,
      maxBytes: this.#policy.maxBytes,
    };
    this.#queue.unshift({ index, job, paths: [], run: index.begin() });
    this.#pump();
  }

  #restored(task: Task, restored: Restored): void {
    const { index } = task;
    const upkeep = this.#upkeep.get(index);
    const snapshot = upkeep?.snapshot;
    if (!upkeep || !snapshot) {
      index.abandon(task.run);
      return;
    }
    const ms = Math.round(performance.now() - snapshot.loadStarted);
    if (restored.kind === "rejected") {
      index.abandon(task.run);
      snapshot.outcome = `discarded: ${restored.reason}`;
      this.warn(
        `freshfs: the content index snapshot ${snapshot.file} was discarded: ${restored.reason}. The index is built anew.`,
      );
      void unlink(snapshot.file).catch(() => undefined);
    } else {
      let bytes = 0;
      for (const segment of restored.segments) bytes += segmentBytes(segment.data);
      if (this.#totalBytes() + bytes > this.#policy.maxBytes) {
        index.abandon(task.run);
        snapshot.outcome = `not loaded: its ${bytes} bytes are over the indexes' budget`;
      } else {
        index.landAll(task.run, restored.segments);
        snapshot.outcome = `loaded in ${ms} ms: ${restored.confirmed} files confirmed by their stat, ${restored.changed} to read again`;
        if (restored.changed === 0) snapshot.savedVersion = index.version;
      }
    }
    snapshot.restore = "done";
    snapshot.finishRestore();
    upkeep.cursor = 0;
    this.#next(index, upkeep);
  }

  /** Saves the index's snapshot a while after its build ends, unless it holds it already. */
  #saveLater(index: ContentIndex, upkeep: Upkeep): void {
    const snapshot = upkeep.snapshot;
    if (snapshot?.restore !== "done" || snapshot.saving || snapshot.saveTimer) return;
    if (index.version === snapshot.savedVersion) return;
    const since = snapshot.savedAt === undefined ? Infinity : performance.now() - snapshot.savedAt;
    const wait = Math.max(SAVE_AFTER_MS, SAVE_EVERY_MS - since);
    snapshot.saveTimer = setTimeout(() => {
      snapshot.saveTimer = undefined;
      void this.#save(index, upkeep, snapshot);
    }, wait);
    snapshot.saveTimer.unref();
  }

  /**
   * Writes the index as it stands. The time it is taken at comes first, then a sync with the
   * tree: every change made before that time has been heard (and marked) when the stale flags
   * are copied; a file changed after it has a stat that differs, or one within the racy window.
   */
  #save(index: ContentIndex, upkeep: Upkeep, snapshot: SnapshotUpkeep): Promise<void> {
    snapshot.saving ??= (async () => {
      try {
        const { tree } = upkeep;
        const savedAtNs = BigInt(Date.now()) * 1_000_000n;
        // The listing's stamps too come before the sync (see `live/saved-listing`).
        const parts = tree.settled ? tree.stampParts() : undefined;
        const stamps = parts && takeStamps(tree.root, parts.dirs, parts.sources, parts.listing);
        const listing = await tree.query(undefined, undefined);
        if (index.isClosed || tree.isClosed) return;
        const version = index.version;
        const chunks = snapshotChunks(index.root, snapshot.policy, savedAtNs, index.saved());
        const dir = dirname(snapshot.file);
        ensureSnapshotDir(dir);
        sweepTemps(dir);
        if (stamps && listing.freshness === "live") {
          await writeListing(listingFileFor(snapshot.file), savedListingOf(tree, stamps, listing));
        }
        snapshot.savedBytes = await writeSnapshot(snapshot.file, chunks);
        snapshot.savedAt = performance.now();
        snapshot.savedVersion = version;
      } catch (error) {
        snapshot.outcome = `not saved: ${(error as Error).message}`;
        this.warn(
          `freshfs: the content index snapshot ${snapshot.file} was not saved: ${(error as Error).message}`,
        );
      } finally {
        snapshot.saving = undefined;
      }
    })();
    return snapshot.saving;
  }

  /**
   * Saves every index not saved as it stands (the daemon, before it exits); resolves once each
   * is written or failed.
   */
  async saveAll(): Promise<void> {
    const saves: Promise<void>[] = [];
    for (const [index, upkeep] of this.#upkeep) {
      const snapshot = upkeep.snapshot;
      if (snapshot?.restore !== "done" || index.isClosed) continue;
      clearTimeout(snapshot.saveTimer);
      snapshot.saveTimer = undefined;
      if (snapshot.saving) saves.push(snapshot.saving);
      if (index.version !== snapshot.savedVersion) saves.push(this.#save(index, upkeep, snapshot));
    }
    await Promise.all(saves);
  }

  #settle(upkeep: Upkeep): void {
    for (const wake of upkeep.waiters.splice(0)) wake();
    this.#refThread();
  }

  #totalBytes(): number {
    let bytes = 0;
    for (const index of this.#indexes.values()) bytes += index.bytes;
    return bytes;
  }

  #pump(): void {
    if (this.#current) return;
    if (this.#queue.length === 0) {
      this.#idleLater();
      return;
    }
    clearTimeout(this.#idleTimer);
    const task = this.#queue.shift() as Task;
    this.#current = task;
    this.#currentThread = this.#startThread();
    this.#currentThread.postMessage(task.job);
    this.#refThread();
  }

  /**
   * The build thread holds ~55 MiB of tables and a run's pairs: ended once nothing was asked of
   * it for `IDLE_MS`, started again (~30 ms) when a tree changes.
   */
  #idleLater(): void {
    clearTimeout(this.#idleTimer);
    if (!this.#thread) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#current || this.#queue.length > 0 || !this.#thread) return;
      const thread = this.#thread;
      this.#thread = undefined;
      void thread.terminate();
    }, IDLE_MS);
    this.#idleTimer.unref();
  }

  #startThread(): Worker {
    if (this.#thread) return this.#thread;
    const thread = startModuleWorker(import.meta.url, "build-thread", {});
    thread.on("message", (message: SegmentData | Restored) => this.#landed(message));
    // A failed build thread costs the index, never a search: the runs are dropped and the
    // files stay unindexed (read from disk), and the next run starts a new thread.
    thread.on("error", () => undefined);
    thread.on("exit", () => {
      if (this.#thread === thread) this.#thread = undefined;
      // A thread ended while idle exits after the next run went to a new one: not its run.
      const task = this.#currentThread === thread ? this.#current : undefined;
      if (task) this.#current = undefined;
      if (task) {
        task.index.abandon(task.run);
        const upkeep = this.#upkeep.get(task.index);
        if (upkeep?.snapshot?.restore === "loading") {
          upkeep.snapshot.restore = "done";
          upkeep.snapshot.outcome = "not loaded: the build thread failed";
          upkeep.snapshot.finishRestore();
        }
        if (upkeep) {
          upkeep.full = true;
          this.#settle(upkeep);
        }
      }
      this.#pump();
    });
    this.#thread = thread;
    return thread;
  }

  #landed(message: SegmentData | Restored): void {
    const task = this.#current;
    this.#currentThread = undefined;
    this.#current = undefined;
    if (task && "kind" in message) {
      if (task.job.id === message.id) this.#restored(task, message);
    } else if (task && task.job.id === message.id) {
      const segment = message as SegmentData;
      const { index } = task;
      const upkeep = this.#upkeep.get(index);
      if (this.#totalBytes() + segmentBytes(segment) > this.#policy.maxBytes) {
        // Over the budget with this run: it is not kept, and the index grows no more.
        index.abandon(task.run);
        if (upkeep) upkeep.full = true;
      } else {
        index.land(task.run, task.paths, segment);
      }
      if (upkeep) this.#next(index, upkeep);
    }
    this.#pump();
    this.#refThread();
  }

  /** The thread keeps the process alive only while someone waits for an index. */
  #refThread(): void {
    const waiting = [...this.#upkeep.values()].some((upkeep) => upkeep.waiters.length > 0);
    if (this.#current && waiting) this.#thread?.ref();
    else this.#thread?.unref();
  }

  #forget(tree: LiveTree, index: ContentIndex): void {
    this.#indexes.delete(tree);
    const upkeep = this.#upkeep.get(index);
    this.#upkeep.delete(index);
    if (upkeep?.snapshot) {
      clearTimeout(upkeep.snapshot.saveTimer);
      upkeep.snapshot.finishRestore();
    }
    if (upkeep) this.#settle(upkeep);
    this.#queue = this.#queue.filter((task) => task.index !== index);
  }

  /** Resolves once every index of `root` has nothing left to build (or is full). */
  async waitFor(root: string): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const [index, upkeep] of this.#upkeep) {
      if (index.root !== root) continue;
      const idle = index.building === 0;
      const done = upkeep.cursor >= upkeep.files.length || !upkeep.tree.settled;
      if (upkeep.soon === 0 && (upkeep.full || (idle && done))) {
        continue;
      }
      waits.push(new Promise((resolve) => upkeep.waiters.push(resolve)));
    }
    this.#refThread();
    await Promise.all(waits);
  }

  stats(root: string): ContentIndexStats[] {
    const out: ContentIndexStats[] = [];
    for (const [index, upkeep] of this.#upkeep) {
      if (index.root !== root) continue;
      out.push({
        root,
        files: index.files,
        segments: index.segments,
        bytes: index.bytes,
        textBytes: index.textBytes,
        building: index.building,
        full: upkeep.full,
        buildMs:
          index.buildStarted !== undefined && index.buildEnded !== undefined
            ? index.buildEnded - index.buildStarted
            : undefined,
        snapshot: upkeep.snapshot && {
          file: upkeep.snapshot.file,
          restore: upkeep.snapshot.restore,
          outcome: upkeep.snapshot.outcome,
          current: upkeep.snapshot.savedVersion === index.version,
          savedBytes: upkeep.snapshot.savedBytes,
          savedAgoMs:
            upkeep.snapshot.savedAt === undefined
              ? undefined
              : Math.round(performance.now() - upkeep.snapshot.savedAt),
        },
      });
    }
    return out;
  }
}

export const contentIndexes = new ContentIndexes();

/** Sets the content index policy (unset fields from the environment, FS_INDEX_*). */
export function configureContentIndex(policy: Partial<ContentIndexPolicy> | undefined): void {
  contentIndexes.configure(policy);
}

/** The content index policy in force. */
export function contentIndexPolicy(): ContentIndexPolicy {
  return contentIndexes.policy();
}

/**
 * Resolves once the content indexes of `root` (one per live tree grep searched there) have
 * nothing left to build, or reached the budget. For benchmarks and tests: a search never needs
 * to wait, it reads what is not indexed yet.
 */
export function waitForContentIndex(root: string): Promise<void> {
  return contentIndexes.waitFor(resolveScanRoot(root));
}

/**
 * Writes the snapshot of every index not saved as it stands (where `snapshotDir` is set);
 * resolves once each is written or failed. A long-lived process calls it before it exits.
 */
export function saveContentIndexSnapshots(): Promise<void> {
  return contentIndexes.saveAll();
}

/** What the content indexes of `root` hold now. */
export function contentIndexStats(root: string): ContentIndexStats[] {
  return contentIndexes.stats(resolveScanRoot(root));
}

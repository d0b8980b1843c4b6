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
import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../io/thread.js";
import type { LiveTree } from "../live/tree.js";
import { envCount, type ScanResult } from "../scan/cache.js";
import { resolveScanRoot } from "../scan/walk.js";
import type { BuildJob, SegmentData } from "./format.js";
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

function fromEnv(): ContentIndexPolicy {
  return {
    enabled: process.env.FS_INDEX !== "0",
    maxBytes: envCount("FS_INDEX_MAX_BYTES", DEFAULT_MAX_BYTES),
    maxFileBytes: envCount("FS_INDEX_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES),
  };
}

interface Task {
  readonly index: ContentIndex;
  readonly job: BuildJob;
  readonly paths: readonly string[];
  readonly run: ReturnType<ContentIndex["begin"]>;
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
      });
      tree.observe(index);
    }
    return index;
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
    if (upkeep.full || this.#totalBytes() >= this.#policy.maxBytes) {
      upkeep.full = true;
      this.#settle(upkeep);
      return;
    }
    const todo = index.unindexed(upkeep.files, upkeep.cursor, RUN_FILES);
    upkeep.cursor = todo.first;
    if (todo.paths.length === 0) {
      index.buildEnded ??= performance.now();
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
    thread.on("message", (segment: SegmentData) => this.#landed(segment));
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

  #landed(segment: SegmentData): void {
    const task = this.#current;
    this.#currentThread = undefined;
    this.#current = undefined;
    if (task && task.job.id === segment.id) {
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

/** What the content indexes of `root` hold now. */
export function contentIndexStats(root: string): ContentIndexStats[] {
  return contentIndexes.stats(resolveScanRoot(root));
}

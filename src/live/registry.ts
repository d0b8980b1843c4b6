/**
 * The process's live trees: one per (canonical root, hidden, gitignore) a long-lived caller
 * searches with `watch: true` (the `Workspace`, and so `freshfs mcp`), sharing one watcher,
 * under stated bounds: most trees, most watched directories, most bytes. Where watching cannot
 * work (not Linux, a network file system) the scan cache's TTL policy answers instead; where it
 * cannot be afforded (a watch limit, a budget) every call walks. Depends on `scan/` and
 * `live/tree`, `live/backend`.
 */
import { readFileSync, statfsSync } from "node:fs";
import { FreshfsError } from "../errors.js";
import {
  envCount,
  forceRescan,
  onScanInvalidation,
  type ScanOptions,
  type ScanPolicy,
  type ScanResult,
} from "../scan/cache.js";
import { resolveScanRoot } from "../scan/walk.js";
import { FsWatchBackend, type WatchBackend } from "./backend.js";
import type { SavedListing } from "./saved-listing.js";
import { type LiveStatus, LiveTree } from "./tree.js";

/** The live trees' bounds (environment variables, or `configureLiveTrees`). */
export interface LiveTreePolicy {
  /** Watch the roots searched with `watch: true`; off: the TTL cache answers. `FS_LIVE_WATCH` (0/1). @default true on Linux */
  readonly enabled: boolean;
  /** Most trees watched; the least recently used goes first. `FS_LIVE_MAX_TREES`. @default 16 */
  readonly maxTrees: number;
  /** Most directories watched, over all trees. `FS_LIVE_MAX_WATCHES`. @default half of `fs.inotify.max_user_watches` */
  readonly maxWatches: number;
  /** Estimated bytes of all live listings. `FS_LIVE_MAX_BYTES`. @default 536870912 (512 MiB) */
  readonly maxBytes: number;
}

let maxWatchesDefault: number | undefined;

function defaultMaxWatches(): number {
  maxWatchesDefault ??= readMaxWatches();
  return maxWatchesDefault;
}

function readMaxWatches(): number {
  try {
    const limit = Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8").trim());
    if (Number.isSafeInteger(limit) && limit > 0) return Math.floor(limit / 2);
  } catch {
    // No /proc: the kernel's default limit, 8,192 on old kernels.
  }
  return 4096;
}

/**
 * File systems where inotify sees only this machine's changes (network and FUSE mounts): `statfs`
 * type magic numbers. A tree on one is answered by the TTL policy.
 */
const UNWATCHABLE_FILESYSTEMS = new Map<number, string>([
  [0x6969, "nfs"],
  [0x517b, "smb"],
  [0xff534d42, "cifs"],
  [0xfe534d42, "smb2"],
  [0x65735546, "fuse"],
  [0x01021997, "9p"],
  [0x00c36400, "ceph"],
  [0x5346414f, "afs"],
  [0x6a656a63, "virtiofs"],
  [0x47504653, "gpfs"],
  [0x0bd00bd0, "lustre"],
]);

/** How long a tree that could not be watched (a limit reached) is walked before trying again. */
const RETRY_MS = 60_000;

function treePolicyOf(tree: LiveTree): ScanPolicy {
  return { includeHidden: tree.includeHidden, useGitignore: tree.useGitignore };
}

function keyOf(root: string, policy: ScanPolicy): string {
  return `${policy.includeHidden ? "h" : "-"}${policy.useGitignore === false ? "-" : "g"}${root}`;
}

interface Unwatched {
  readonly reason: string;
  /** The TTL cache answers (watching cannot work here) rather than a walk per call. */
  readonly ttl: boolean;
  readonly until: number;
}

export class LiveTrees {
  readonly #trees = new Map<string, LiveTree>();
  readonly #saved = new Map<string, SavedListing>();
  readonly #savedAnswers = new Map<string, number>();
  readonly #unwatched = new Map<string, Unwatched>();
  /** Trees dropped for another's budget: the next answer for the key says so. */
  readonly #evicted = new Map<string, string>();
  #backend: WatchBackend | undefined;
  readonly #makeBackend: () => WatchBackend;
  #configured: Partial<LiveTreePolicy> | undefined;

  constructor(makeBackend: () => WatchBackend = () => new FsWatchBackend()) {
    this.#makeBackend = makeBackend;
    onScanInvalidation((targets) => {
      for (const tree of this.#trees.values()) {
        if (targets === undefined) tree.touchAll();
        else for (const target of targets) tree.touch(target);
      }
    });
  }

  configure(policy: Partial<LiveTreePolicy> | undefined): void {
    if (policy) {
      for (const [name, value] of Object.entries(policy)) {
        if (name === "enabled") {
          if (value !== undefined && typeof value !== "boolean") {
            throw new FreshfsError(
              "INVALID_ARGUMENT",
              `enabled must be a boolean, not ${String(value)}.`,
            );
          }
        } else if (
          value !== undefined &&
          !(Number.isSafeInteger(value) && (value as number) >= 0)
        ) {
          throw new FreshfsError(
            "INVALID_ARGUMENT",
            `${name} must be a whole number >= 0, not ${String(value)}.`,
          );
        }
      }
    }
    this.#configured = policy;
    this.#unwatched.clear();
    if (!this.policy().enabled) this.closeAll();
    else this.#enforce(undefined);
  }

  policy(): LiveTreePolicy {
    const flag = process.env.FS_LIVE_WATCH?.trim();
    const c = this.#configured;
    return {
      enabled:
        c?.enabled ?? (flag === "0" || flag === "false" ? false : process.platform === "linux"),
      maxTrees: c?.maxTrees ?? envCount("FS_LIVE_MAX_TREES", 16),
      maxWatches: c?.maxWatches ?? envCount("FS_LIVE_MAX_WATCHES", defaultMaxWatches()),
      maxBytes: c?.maxBytes ?? envCount("FS_LIVE_MAX_BYTES", 512 * 1024 * 1024),
    };
  }

  /**
   * The listing of `root`, as fresh as the call: from its live tree, or a walk when it cannot
   * be watched now. Undefined when watching is off or cannot work there: the caller's TTL
   * policy answers (the result of which says `cached` or `walked`).
   */
  async query(
    root: string,
    policy: ScanPolicy,
    options: ScanOptions = {},
    fromSaved = false,
  ): Promise<ScanResult | undefined> {
    if (!this.policy().enabled) return undefined;
    const canonical = resolveScanRoot(root);
    const key = keyOf(canonical, policy);
    const unwatched = this.#unwatched.get(key) ?? this.#probe(key, canonical);
    if (unwatched && performance.now() < unwatched.until) {
      if (unwatched.ttl) return undefined;
      const walked = await forceRescan(canonical, policy, options);
      return { ...walked, unwatched: unwatched.reason };
    }
    this.#unwatched.delete(key);
    let tree = this.#trees.get(key);
    if (!tree) {
      tree = new LiveTree({
        root: canonical,
        includeHidden: policy.includeHidden ?? false,
        useGitignore: policy.useGitignore ?? true,
        backend: this.#backend ?? this.#startBackend(),
        onUnwatchable: (t, reason) => this.#giveUp(key, t, reason),
        onResize: (t, adding) => this.#enforce(t, adding),
      });
      this.#trees.set(key, tree);
      this.#enforce(undefined);
    }
    const fromListing = this.#fromSaved(key, tree, fromSaved);
    if (fromListing) return fromListing;
    const evicted = this.#evicted.get(key);
    this.#evicted.delete(key);
    const result = await tree.query(options.signal, options.onProgress);
    const dropped = this.#unwatched.get(key)?.reason ?? evicted;
    return dropped ? { ...result, unwatched: dropped } : result;
  }

  /**
   * A saved listing of a tree (the daemon's, from before it restarted; `live/saved-listing`): until the
   * tree's first walk is done, the calls that may use it (`fromSaved`) are answered from it
   * wherever it is confirmed for that call.
   */
  plant(saved: SavedListing): void {
    if (!saved.wellFormed) return;
    const { root, includeHidden, useGitignore } = saved.data;
    this.#saved.set(keyOf(root, { includeHidden, useGitignore }), saved);
  }

  /** Whether a saved listing of `root` (any policy) waits for its tree's first calls. */
  hasSavedListing(root: string): boolean {
    for (const saved of this.#saved.values()) if (saved.data.root === root) return true;
    return false;
  }

  /** The saved listing's answer, while the tree's first walk is under way (which it starts). */
  #fromSaved(key: string, tree: LiveTree, wanted: boolean): ScanResult | undefined {
    const saved = this.#saved.get(key);
    if (!saved) return undefined;
    if (tree.status !== "empty" || tree.isClosed) {
      this.#saved.delete(key);
      return undefined;
    }
    if (!wanted) return undefined;
    if (!tree.busy) void tree.query(undefined, undefined).catch(() => undefined);
    if (!saved.confirmed()) return undefined;
    this.#savedAnswers.set(key, (this.#savedAnswers.get(key) ?? 0) + 1);
    return saved.answer();
  }

  /** The root's live tree, if it has one now (the content index attaches to it). */
  treeOf(root: string, policy: ScanPolicy): LiveTree | undefined {
    return this.#trees.get(keyOf(resolveScanRoot(root), policy));
  }

  /** `LiveTree.peek` for the root's tree, when it is live and quiet; else undefined. */
  peek(
    root: string,
    policy: ScanPolicy,
    signal: AbortSignal | undefined,
  ): ReturnType<LiveTree["peek"]> {
    if (!this.policy().enabled) return undefined;
    return this.#trees.get(keyOf(resolveScanRoot(root), policy))?.peek(signal);
  }

  #startBackend(): WatchBackend {
    this.#backend = this.#makeBackend();
    return this.#backend;
  }

  /** Whether the root's file system can be watched at all (checked once per key). */
  #probe(key: string, root: string): Unwatched | undefined {
    if (this.#trees.has(key)) return undefined;
    let type: number | undefined;
    try {
      type = statfsSync(root).type;
    } catch {
      return undefined;
    }
    const name = UNWATCHABLE_FILESYSTEMS.get(type);
    if (name === undefined) return undefined;
    const unwatched: Unwatched = {
      reason: `${root} is on a ${name} file system, whose changes elsewhere inotify cannot see: the TTL policy applies`,
      ttl: true,
      until: Number.POSITIVE_INFINITY,
    };
    this.#unwatched.set(key, unwatched);
    return unwatched;
  }

  #giveUp(key: string, tree: LiveTree, reason: string): void {
    if (this.#trees.get(key) === tree) this.#trees.delete(key);
    tree.close();
    this.#unwatched.set(key, {
      reason: `${reason}: every call walks until ${RETRY_MS / 1000} s have passed`,
      ttl: false,
      until: performance.now() + RETRY_MS,
    });
  }

  /**
   * Keeps the trees within their bounds; `grown` is the tree that just changed size and is
   * about to watch `adding` more directories. Watches are counted once per directory, however
   * many trees watch it (glob's and grep's trees of a root watch the same ones); `adding` may
   * count some already watched, so the budget errs on the safe side.
   */
  #enforce(grown: LiveTree | undefined, adding = 0): void {
    const { maxTrees, maxWatches, maxBytes } = this.policy();
    const watches = () => (this.#backend?.watchCount ?? 0) + adding;
    const bytes = () => [...this.#trees.values()].reduce((sum, tree) => sum + tree.bytes, 0);
    // A tree over a budget on its own is given up before it costs any other tree its place.
    if (grown && (grown.bytes > maxBytes || grown.watchCount > maxWatches)) {
      this.#overBudget(grown, maxWatches, maxBytes);
      return;
    }
    const byAge = [...this.#trees.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [key, tree] of byAge) {
      if (this.#trees.size <= maxTrees && bytes() <= maxBytes && watches() <= maxWatches) break;
      // Not the tree that grew, nor one a call is using (its listing is being read or edited).
      if (tree === grown || tree.busy) continue;
      this.#trees.delete(key);
      tree.close();
      this.#evicted.set(
        key,
        "dropped to keep the live trees within their budgets (FS_LIVE_MAX_TREES, FS_LIVE_MAX_WATCHES, FS_LIVE_MAX_BYTES): walked again",
      );
    }
    if (grown && (bytes() > maxBytes || watches() > maxWatches)) {
      this.#overBudget(grown, maxWatches, maxBytes);
    }
  }

  #overBudget(tree: LiveTree, maxWatches: number, maxBytes: number): void {
    const key = [...this.#trees].find(([, t]) => t === tree)?.[0];
    if (key === undefined) return;
    const reason =
      tree.bytes > maxBytes
        ? `the listing of ${tree.root} (~${Math.round(tree.bytes / 1048576)} MiB) is over the budget of ${Math.round(maxBytes / 1048576)} MiB (FS_LIVE_MAX_BYTES)`
        : `${tree.root} has ${tree.watchCount} directories to watch, over the budget of ${maxWatches} (FS_LIVE_MAX_WATCHES)${tree.watchCount > maxWatches ? "" : " with the other trees' watches"}`;
    this.#giveUp(key, tree, reason);
  }

  /** Stops every tree (watching turned off, or a test's cleanup). */
  closeAll(): void {
    for (const tree of this.#trees.values()) tree.close();
    this.#trees.clear();
    this.#saved.clear();
  }

  /** Each tree kept: its key, state and size, for `freshfs daemon status`. */
  describe(): LiveTreeInfo[] {
    return [...this.#trees.values()].map((tree) => ({
      root: tree.root,
      hidden: tree.includeHidden,
      gitignore: tree.useGitignore,
      status: tree.status,
      entries: tree.size,
      directories: tree.watchCount,
      bytes: tree.bytes,
      fromSavedListing: this.#savedAnswers.get(keyOf(tree.root, treePolicyOf(tree))) ?? 0,
    }));
  }

  /** What is watched: for tests and `freshfs` diagnostics. */
  get stats(): { trees: number; watches: number; bytes: number; entries: number } {
    let bytes = 0;
    let entries = 0;
    for (const tree of this.#trees.values()) {
      bytes += tree.bytes;
      entries += tree.size;
    }
    const watches = this.#backend?.watchCount ?? 0;
    return { trees: this.#trees.size, watches, bytes, entries };
  }
}

/** One live tree, as `LiveTrees.describe` reports it. */
export interface LiveTreeInfo {
  readonly root: string;
  readonly hidden: boolean;
  readonly gitignore: boolean;
  readonly status: LiveStatus;
  /** Entries listed. */
  readonly entries: number;
  /** Directories watched. */
  readonly directories: number;
  /** The listing's estimated bytes (the live trees' budget counts them). */
  readonly bytes: number;
  /** Calls answered from a saved listing (`plant`) while the tree's first walk ran. */
  readonly fromSavedListing: number;
}

/** The process's live trees. */
export const liveTrees = new LiveTrees();

/** Sets the live trees' bounds in code, instead of the environment; `undefined` returns to it. */
export function configureLiveTrees(policy: Partial<LiveTreePolicy> | undefined): void {
  liveTrees.configure(policy);
}

/** The bounds in force. */
export function liveTreePolicy(): LiveTreePolicy {
  return liveTrees.policy();
}

/**
 * The shared scan cache, after oh-my-pi's `fs_cache`: full listings of walked trees, keyed by
 * (canonical root, includeHidden, useGitignore), that glob, fuzzy find and grep read instead of
 * walking again. Depends on `scan/walk`, `io` and `errors`.
 *
 * Beyond that design: the TTL counts from the end of a scan; concurrent requests for one key share
 * one walk; a walk overlapped by an invalidation of its tree is not stored (nor joined by later
 * callers); listings are bounded by count and by an estimate of their bytes.
 */
import { basename, dirname, join } from "node:path";
import { FreshfsError } from "../errors.js";
import { nodeFs } from "../io/fs.js";
import { absolutePath, canonicalPath } from "../io/paths.js";
import { defaultExcludesFile, userConfigFiles } from "./ignore/gitconfig.js";
import {
  type Listing,
  resolveScanRoot,
  type ScanEntry,
  type ScanWarning,
  type SkippedFile,
  type WalkProgress,
  walkTree,
} from "./walk.js";

export interface ScanPolicy {
  /** List entries whose name starts with a dot (`.git` is never listed). @default false */
  includeHidden?: boolean | undefined;
  /** Apply `.gitignore`, `.git/info/exclude`, the global excludes file, `.ignore` and `.rgignore`. @default true */
  useGitignore?: boolean | undefined;
}

export interface ScanOptions {
  /** Stops waiting; the walk itself stops when no caller is left waiting for it. */
  signal?: AbortSignal | undefined;
  /** Called between slices of a long walk. */
  onProgress?: ((progress: WalkProgress) => void) | undefined;
}

export interface ForceRescanOptions extends ScanOptions {
  /** Put the new listing in the cache. @default false */
  store?: boolean | undefined;
}

/**
 * Which mode answered: `live`, the watched listing after a sync with the watcher (every change
 * completed before the call is in it); `walked`, a walk made for this call; `cached`, a
 * listing from the TTL cache (unwatched roots: up to `FS_SCAN_CACHE_TTL_MS` old).
 */
export type Freshness = "live" | "walked" | "cached";

export interface ScanResult {
  /** The canonical root the listing is of. */
  readonly root: string;
  /** Sorted by path; shared with other callers, so never to be modified. */
  readonly entries: readonly ScanEntry[];
  /** Milliseconds since the listing's walk ended; 0 for a listing walked for this call. */
  readonly cacheAgeMs: number;
  /** Directories that could not be read, ignore lines that can never match, and the like. */
  readonly warnings: readonly ScanWarning[];
  /** Files left out (hidden, or ignored) in directories that were walked; rg's `-g` sees them. */
  readonly skipped: readonly SkippedFile[];
  readonly freshness: Freshness;
  /**
   * The entries by the extension of their name, in listing order, where the listing keeps them
   * (a live tree, which updates them per change instead of glob indexing every new listing).
   */
  readonly byExtension?: ReadonlyMap<string, readonly ScanEntry[]> | undefined;
  /** Why the root is not watched, when it could have been (a limit, a budget, the file system). */
  readonly unwatched?: string | undefined;
}

/**
 * The cache's global policy, one for the process (no per-call override, so every caller sees
 * the same freshness): environment variables, or `configureScanCache`.
 */
export interface ScanCachePolicy {
  /** Listing lifetime; 0 bypasses the cache (always walk, never store). `FS_SCAN_CACHE_TTL_MS`. @default 1000 */
  readonly ttlMs: number;
  /** Age after which an empty filtered result is worth one forced rescan. `FS_SCAN_EMPTY_RECHECK_MS`. @default 200 */
  readonly emptyRecheckMs: number;
  /** Most listings kept; the oldest created goes first. `FS_SCAN_CACHE_MAX_ENTRIES`. @default 16 */
  readonly maxEntries: number;
  /** Estimated bytes of all listings kept. `FS_SCAN_CACHE_MAX_BYTES`. @default 67108864 (64 MiB) */
  readonly maxBytes: number;
}

const DEFAULT_POLICY: ScanCachePolicy = {
  ttlMs: 1000,
  emptyRecheckMs: 200,
  maxEntries: 16,
  maxBytes: 64 * 1024 * 1024,
};

const ENV_NAMES: Record<keyof ScanCachePolicy, string> = {
  ttlMs: "FS_SCAN_CACHE_TTL_MS",
  emptyRecheckMs: "FS_SCAN_EMPTY_RECHECK_MS",
  maxEntries: "FS_SCAN_CACHE_MAX_ENTRIES",
  maxBytes: "FS_SCAN_CACHE_MAX_BYTES",
};

// Measured heap of a ScanEntry and its array slot, beside the path's characters.
const ENTRY_BYTES = 64;

interface Stored {
  readonly key: string;
  readonly listing: Listing;
  /** Monotonic clock at the end of the walk: the TTL counts from here. */
  readonly createdAt: number;
  readonly bytes: number;
  /** Order in which walks started: an older walk never replaces a newer listing. */
  readonly walk: number;
}

interface Flight {
  readonly promise: Promise<Listing>;
  readonly controller: AbortController;
  readonly listeners: Set<(progress: WalkProgress) => void>;
  waiters: number;
}

const warned = new Set<string>();

/**
 * A whole number >= 0 from environment variable `name`, else `fallback`; an invalid value falls
 * back too, with one warning per value (never silently). The live trees' variables read the same.
 */
export function envCount(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw.trim());
  if (Number.isSafeInteger(value) && value >= 0) return value;
  const key = `${name}=${raw}`;
  if (!warned.has(key)) {
    warned.add(key);
    process.emitWarning(
      `${name}=${JSON.stringify(raw)} is not a whole number >= 0; using the default, ${fallback}.`,
      { code: "FRESHFS_INVALID_ENV" },
    );
  }
  return fallback;
}

function keyOf(root: string, includeHidden: boolean, useGitignore: boolean): string {
  return `${includeHidden ? "h" : "-"}${useGitignore ? "g" : "-"}${root}`;
}

/** Component-wise: `/a/b` is within `/a` and `/a/b`, not within `/a/bc`. */
function isWithin(path: string, dir: string): boolean {
  if (path === dir) return true;
  return path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

function related(root: string, target: string): boolean {
  return isWithin(target, root) || isWithin(root, target);
}

function aborted(): FreshfsError {
  return new FreshfsError("ABORTED", "The scan was aborted.");
}

export class ScanCache {
  readonly #listings = new Map<string, Stored>();
  readonly #flights = new Map<string, Flight>();
  /** Invalidations that walks still in progress must hear about. */
  readonly #invalidations: {
    readonly seq: number;
    readonly targets: readonly string[] | undefined;
  }[] = [];
  #seq = 0;
  #walks = 0;
  #active = 0;
  #bytes = 0;
  #configured: Partial<ScanCachePolicy> | undefined;

  /** Sets the policy in code instead of the environment; `undefined` goes back to it. */
  configure(policy: Partial<ScanCachePolicy> | undefined): void {
    if (policy) {
      for (const [name, value] of Object.entries(policy)) {
        if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
          throw new FreshfsError(
            "INVALID_ARGUMENT",
            `${name} must be a whole number >= 0, not ${String(value)}.`,
          );
        }
      }
    }
    this.#configured = policy;
    this.#evict();
  }

  /** The policy in force: configured, else from the environment (invalid values: defaults). */
  policy(): ScanCachePolicy {
    const out = { ...DEFAULT_POLICY };
    for (const name of Object.keys(DEFAULT_POLICY) as (keyof ScanCachePolicy)[]) {
      const configured = this.#configured?.[name];
      if (configured !== undefined) {
        out[name] = configured;
        continue;
      }
      out[name] = envCount(ENV_NAMES[name], DEFAULT_POLICY[name]);
    }
    return out;
  }

  /**
   * The listing of `root` under `policy`: the cached one while younger than the TTL, else a
   * new walk (shared with concurrent callers of the same key), stored for the next caller.
   */
  async getOrScan(
    root: string,
    policy: ScanPolicy = {},
    options: ScanOptions = {},
  ): Promise<ScanResult> {
    const { canonical, includeHidden, useGitignore } = resolvePolicy(root, policy);
    const key = keyOf(canonical, includeHidden, useGitignore);
    const { ttlMs } = this.policy();
    if (ttlMs > 0) {
      const stored = this.#listings.get(key);
      if (stored) {
        const age = performance.now() - stored.createdAt;
        if (age < ttlMs) return resultOf(stored.listing, age);
        this.#drop(stored);
      }
    }
    if (options.signal?.aborted) throw aborted();
    const current = ttlMs > 0 ? this.#flights.get(key) : undefined;
    const flight =
      current && !current.controller.signal.aborted
        ? current
        : this.#start(key, canonical, includeHidden, useGitignore, ttlMs > 0);
    return resultOf(await this.#join(flight, key, options), 0);
  }

  /** A new walk of `root`, whatever the cache holds; stored only with `store: true`. */
  async forceRescan(
    root: string,
    policy: ScanPolicy = {},
    options: ForceRescanOptions = {},
  ): Promise<ScanResult> {
    const { canonical, includeHidden, useGitignore } = resolvePolicy(root, policy);
    const key = keyOf(canonical, includeHidden, useGitignore);
    const store = options.store === true && this.policy().ttlMs > 0;
    if (options.signal?.aborted) throw aborted();
    const flight = this.#start(key, canonical, includeHidden, useGitignore, store);
    return resultOf(await this.#join(flight, key, options), 0);
  }

  /**
   * Drops every listing whose root is `path`, an ancestor of it, or inside it (a renamed or
   * deleted directory can hold cached roots); without a path, every listing. Walks in progress
   * over those trees are neither stored nor joined afterwards. See `invalidationTargets` for
   * how a path becomes the trees it affects.
   */
  invalidate(path?: string): void {
    const targets = path === undefined ? undefined : invalidationTargets(path);
    for (const listener of invalidationListeners) listener(targets);
    const hit = (root: string) =>
      targets === undefined || targets.some((target) => related(root, target));
    const seq = ++this.#seq;
    for (const stored of [...this.#listings.values()]) {
      if (hit(stored.listing.root)) this.#drop(stored);
    }
    for (const [key, flight] of [...this.#flights]) {
      if (hit(rootOfKey(key)) && this.#flights.get(key) === flight) this.#flights.delete(key);
    }
    if (this.#active > 0) this.#invalidations.push({ seq, targets });
  }

  /** Number of listings held, and their estimated bytes. */
  get stats(): { listings: number; bytes: number } {
    return { listings: this.#listings.size, bytes: this.#bytes };
  }

  #start(
    key: string,
    root: string,
    includeHidden: boolean,
    useGitignore: boolean,
    store: boolean,
  ): Flight {
    const startSeq = this.#seq;
    const walk = ++this.#walks;
    const controller = new AbortController();
    const listeners = new Set<(progress: WalkProgress) => void>();
    this.#active++;
    const settle = () => {
      this.#active--;
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
      if (this.#active === 0) this.#invalidations.length = 0;
    };
    const promise = walkTree(root, {
      includeHidden,
      useGitignore,
      signal: controller.signal,
      onProgress: (progress) => {
        for (const listener of listeners) listener(progress);
      },
    }).then(
      (listing) => {
        // In the same continuation as the end of the walk: an invalidation cannot slip between.
        if (store && !this.#invalidatedSince(startSeq, root)) this.#store(key, listing, walk);
        settle();
        return listing;
      },
      (error: unknown) => {
        settle();
        throw error;
      },
    );
    // The waiters handle a failure; a walk nobody waits for any more must not crash the process.
    promise.catch(() => undefined);
    const flight: Flight = { promise, controller, listeners, waiters: 0 };
    if (store) this.#flights.set(key, flight);
    return flight;
  }

  async #join(flight: Flight, key: string, options: ScanOptions): Promise<Listing> {
    const { signal, onProgress } = options;
    flight.waiters++;
    if (onProgress) flight.listeners.add(onProgress);
    try {
      if (!signal) return await flight.promise;
      return await new Promise<Listing>((resolve, reject) => {
        const onAbort = () => reject(aborted());
        signal.addEventListener("abort", onAbort, { once: true });
        flight.promise
          .then(resolve, reject)
          .finally(() => signal.removeEventListener("abort", onAbort));
      });
    } finally {
      if (onProgress) flight.listeners.delete(onProgress);
      // The last caller to stop waiting stops the walk, and no later caller may join it.
      if (--flight.waiters === 0 && signal?.aborted) {
        flight.controller.abort();
        if (this.#flights.get(key) === flight) this.#flights.delete(key);
      }
    }
  }

  #invalidatedSince(seq: number, root: string): boolean {
    return this.#invalidations.some(
      (event) =>
        event.seq > seq &&
        (event.targets === undefined || event.targets.some((target) => related(root, target))),
    );
  }

  #store(key: string, listing: Listing, walk: number): void {
    const existing = this.#listings.get(key);
    if (existing && existing.walk > walk) return;
    let bytes = 0;
    for (const entry of listing.entries) bytes += ENTRY_BYTES + entry.path.length;
    if (existing) this.#drop(existing);
    if (bytes > this.policy().maxBytes) return;
    this.#listings.set(key, { key, listing, createdAt: performance.now(), bytes, walk });
    this.#bytes += bytes;
    this.#evict();
  }

  #evict(): void {
    const { maxEntries, maxBytes } = this.policy();
    // Map order is creation order: the first listing is the oldest.
    for (const stored of this.#listings.values()) {
      if (this.#listings.size <= maxEntries && this.#bytes <= maxBytes) break;
      this.#drop(stored);
    }
  }

  #drop(stored: Stored): void {
    if (this.#listings.get(stored.key) !== stored) return;
    this.#listings.delete(stored.key);
    this.#bytes -= stored.bytes;
  }
}

/** Told of every invalidation: the live trees (an upper layer) take it as a change to apply. */
const invalidationListeners = new Set<(targets: readonly string[] | undefined) => void>();

/**
 * Calls `listener` with the canonical paths of every invalidation (undefined: everything).
 * Returns the function that stops it.
 */
export function onScanInvalidation(
  listener: (targets: readonly string[] | undefined) => void,
): () => void {
  invalidationListeners.add(listener);
  return () => invalidationListeners.delete(listener);
}

function rootOfKey(key: string): string {
  return key.slice(2);
}

function resolvePolicy(root: string, policy: ScanPolicy) {
  return {
    canonical: resolveScanRoot(root),
    includeHidden: policy.includeHidden ?? false,
    useGitignore: policy.useGitignore ?? true,
  };
}

/**
 * The trees a change at `path` affects, as canonical paths (undefined: every tree):
 * - the path's location, with its parent canonicalized and the last name kept (a symlink that
 *   was moved or created changed its own directory, wherever it points), and, when it resolves
 *   elsewhere, where it leads (a write through a link lands there);
 * - for a `.gitignore`, `.ignore` or `.rgignore`, the whole directory that holds it (it rules every path
 *   below); for anything inside a `.git` directory (info/exclude, config), the work tree;
 * - for git's own configuration and the default global excludes file, every tree.
 * A `core.excludesFile` elsewhere is not recognized: its listings last until their TTL.
 */
function invalidationTargets(path: string): string[] | undefined {
  const absolute = absolutePath(path);
  const location = locationOf(absolute);
  if (
    userConfigFiles(process.env).includes(location) ||
    location === defaultExcludesFile(process.env)
  ) {
    return undefined;
  }
  const targets = [location];
  try {
    const resolved = canonicalPath(absolute, nodeFs);
    if (resolved !== location) targets.push(resolved);
  } catch {
    // A loop or an unreadable link: the location is what changed.
  }
  const name = basename(location);
  if (name === ".gitignore" || name === ".ignore" || name === ".rgignore") {
    targets.push(dirname(location));
  }
  const gitDir = location.lastIndexOf("/.git/");
  if (gitDir !== -1) targets.push(location.slice(0, gitDir) || "/");
  return targets;
}

/** `path` with its parent canonicalized and its last name kept as it is. */
function locationOf(absolute: string): string {
  const name = basename(absolute);
  const parent = dirname(absolute);
  if (name === "" || name === "." || name === ".." || parent === absolute) {
    try {
      return canonicalPath(absolute, nodeFs);
    } catch {
      return absolute;
    }
  }
  try {
    return join(canonicalPath(parent, nodeFs), name);
  } catch {
    return join(parent, name);
  }
}

function resultOf(listing: Listing, cacheAgeMs: number): ScanResult {
  return {
    root: listing.root,
    entries: listing.entries,
    cacheAgeMs,
    warnings: listing.warnings,
    skipped: listing.skipped,
    freshness: cacheAgeMs > 0 ? "cached" : "walked",
  };
}

/** The process-wide cache that glob, fuzzy find and grep share. */
const shared = new ScanCache();

/** The listing of `root`: cached within the TTL, else walked (once for concurrent callers). */
export function getOrScan(
  root: string,
  policy: ScanPolicy = {},
  options: ScanOptions = {},
): Promise<ScanResult> {
  return shared.getOrScan(root, policy, options);
}

/** A new walk of `root`; stored in the cache only with `{ store: true }`. */
export function forceRescan(
  root: string,
  policy: ScanPolicy = {},
  options: ForceRescanOptions = {},
): Promise<ScanResult> {
  return shared.forceRescan(root, policy, options);
}

/**
 * Drops cached listings whose root is `path`, an ancestor of it or inside it; all of them
 * without a path. Relative paths resolve against the cwd; a path that no longer exists is
 * resolved through its parent.
 */
export function invalidateFsScanCache(path?: string): void {
  shared.invalidate(path);
}

/** Call after every successful write or create of `path`. */
export function invalidateFsScanAfterWrite(path: string): void {
  shared.invalidate(path);
}

/** Call after every successful delete of `path`. */
export function invalidateFsScanAfterDelete(path: string): void {
  shared.invalidate(path);
}

/** Call after every successful rename: both sides are invalidated when they differ. */
export function invalidateFsScanAfterRename(oldPath: string, newPath: string): void {
  shared.invalidate(oldPath);
  if (newPath !== oldPath) shared.invalidate(newPath);
}

/** Sets the cache policy in code, instead of the environment; `undefined` returns to it. */
export function configureScanCache(policy: Partial<ScanCachePolicy> | undefined): void {
  shared.configure(policy);
}

/** The cache policy in force. */
export function scanCachePolicy(): ScanCachePolicy {
  return shared.policy();
}

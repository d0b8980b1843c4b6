/**
 * The edits a live tree makes to its listing when changes are applied: each changed path's run
 * of the sorted entries (the path itself and, for a directory, everything below it) replaced by
 * what a look at it now lists, the edits of one application spliced in at once, glob's index by
 * extension brought along, and the estimated bytes they add or free. Pure; positions found by
 * binary search in `scan/order`'s listing order. Depends on `scan/` (the order, the walk's types).
 */
import { comparePaths, lowerBound, subtreeEnd } from "../scan/order.js";
import {
  extensionOf,
  type ScanEntry,
  type ScanWarning,
  type SkippedFile,
  type WalkedDirectory,
} from "../scan/walk.js";

/**
 * Estimated heap of an entry beside its path's characters: the object (48), the path's string
 * header and padding (~20), its slots in the listing and in glob's index by extension (16), and
 * the slack of arrays copied per change. Measured on a live tree of 1,010,000 entries with
 * 11-character paths: 118 bytes an entry in all.
 */
const LIVE_ENTRY_BYTES = 104;
/** Estimated heap of a directory's state (frame, strings, map slot), beside its path. */
const DIR_BYTES = 240;

function entryBytes(entry: { readonly path: string }): number {
  return LIVE_ENTRY_BYTES + entry.path.length;
}

function dirBytes(root: string, rel: string): number {
  return DIR_BYTES + root.length + 3 * rel.length;
}

/** Estimated bytes of a listing and the states of its directories (`dirs`, relative). */
export function listingBytes(root: string, listing: LiveListing, dirs: Iterable<string>): number {
  let bytes = 0;
  for (const entry of listing.entries) bytes += entryBytes(entry);
  for (const file of listing.skipped) bytes += entryBytes(file);
  for (const rel of dirs) bytes += dirBytes(root, rel);
  return bytes;
}

/** A live tree's listing, sorted in listing order: what an `EditBatch` edits. */
export interface LiveListing {
  readonly entries: readonly ScanEntry[];
  /** Files left out (hidden, ignored) in directories that were walked. */
  readonly skipped: readonly SkippedFile[];
  readonly warnings: readonly ScanWarning[];
  /** glob's index of the entries by extension: built at the first call, then kept per change. */
  byExtension: Map<string, ScanEntry[]> | undefined;
}

export function emptyListing(): LiveListing {
  return { entries: [], skipped: [], warnings: [], byExtension: undefined };
}

/** `items[start, end)` replaced by `items`; `key`, the changed path, orders edits at one place. */
interface Edit<T> {
  readonly start: number;
  readonly end: number;
  readonly items: readonly T[];
  readonly key: string;
}

/** `items` with `edits` (disjoint runs, found in `items` itself) made: one copy, or none. */
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
 * `index` after `edits` of `entries`: a new map (snapshots hold the old one) with new buckets
 * for the extensions the edits touched, others shared. The cost follows the buckets touched,
 * not the tree.
 */
function reindexed(
  index: Map<string, ScanEntry[]>,
  entries: readonly ScanEntry[],
  edits: readonly Edit<ScanEntry>[],
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
  for (const edit of edits) {
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
 * The names the listing knows directly in directory `rel` (`prefix`: `rel` and a slash, or ""),
 * listed or left out.
 */
export function childNames(listing: LiveListing, rel: string, prefix: string): string[] {
  const names: string[] = [];
  for (const items of [listing.entries, listing.skipped]) {
    const from = rel === "" ? 0 : lowerBound(items, prefix);
    const end = rel === "" ? items.length : subtreeEnd(items, from, rel);
    for (let i = from; i < end; i++) {
      const path = (items[i] as { readonly path: string }).path;
      if (path.indexOf("/", prefix.length) === -1) names.push(path.slice(prefix.length));
    }
  }
  return names;
}

/** What a path is now, as a walk of it lists it. */
export interface Replacement {
  /** The path itself when listed, then, for a directory, every entry below it. */
  readonly entries: readonly ScanEntry[];
  /** The path itself when left out, or the files left out below it. */
  readonly skipped: readonly SkippedFile[];
  /** The directories the walk read (none for a file). */
  readonly dirs: readonly WalkedDirectory[];
  readonly warnings: readonly ScanWarning[];
}

/** The edits one application of pending changes makes, committed at once. */
export class EditBatch {
  readonly entries: Edit<ScanEntry>[] = [];
  readonly skipped: Edit<SkippedFile>[] = [];
  /** Directories whose subtree this batch replaces: pending changes below them are moot. */
  readonly covered: string[] = [];
  readonly removedDirs: string[] = [];
  readonly addedDirs: WalkedDirectory[] = [];
  readonly #warnings: ScanWarning[] = [];
  /** Absolute paths of the replaced directories: their warnings, and those below, are dropped. */
  readonly #dropWarningsUnder: string[] = [];
  /** Change in the estimated bytes. */
  bytes = 0;
  /** Rule files of repositories (and linked `.ignore` targets) the batch's walks found. */
  readonly prints = new Map<string, string>();
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  /** Whether `rel` is a directory this batch replaces, or below one. */
  covers(rel: string): boolean {
    return this.covered.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
  }

  /**
   * Records the edits that make what `listing` holds at `rel` (its entry, or the file it left
   * out, and, for a directory, everything below it) what `now` says. `absolute`: its path, the
   * form of the walk's warnings.
   */
  replace(listing: LiveListing, rel: string, absolute: string, now: Replacement): void {
    const { entries, skipped } = listing;
    const at = lowerBound(entries, rel);
    const old = entries[at]?.path === rel ? (entries[at] as ScanEntry) : undefined;
    const sAt = lowerBound(skipped, rel);
    const oldSkip = skipped[sAt]?.path === rel ? (skipped[sAt] as SkippedFile) : undefined;
    let end = old ? at + 1 : at;
    let sEnd = oldSkip ? sAt + 1 : sAt;
    if (old?.type === "dir") {
      end = subtreeEnd(entries, at + 1, rel);
      sEnd = subtreeEnd(skipped, sAt, rel);
      this.covered.push(rel);
      for (let i = at; i < end; i++) {
        const entry = entries[i] as ScanEntry;
        if (entry.type !== "dir") continue;
        this.removedDirs.push(entry.path);
        this.bytes -= dirBytes(this.#root, entry.path);
      }
      this.#dropWarningsUnder.push(absolute);
    }
    for (let i = at; i < end; i++) this.bytes -= entryBytes(entries[i] as ScanEntry);
    for (let i = sAt; i < sEnd; i++) this.bytes -= entryBytes(skipped[i] as SkippedFile);
    for (const entry of now.entries) this.bytes += entryBytes(entry);
    for (const file of now.skipped) this.bytes += entryBytes(file);
    for (const dir of now.dirs) this.bytes += dirBytes(this.#root, dir.frame.rel);
    this.addedDirs.push(...now.dirs);
    this.#warnings.push(...now.warnings);
    if (end > at || now.entries.length > 0) {
      this.entries.push({ start: at, end, items: now.entries, key: rel });
    }
    if (sEnd > sAt || now.skipped.length > 0) {
      this.skipped.push({ start: sAt, end: sEnd, items: now.skipped, key: rel });
    }
  }

  /** Whether the batch changes the listing at all. */
  get empty(): boolean {
    return this.entries.length === 0 && this.skipped.length === 0;
  }

  /** Paths whose entries the batch replaces or removes (a file, or a directory and below). */
  get replacedPaths(): string[] {
    return this.entries.filter((edit) => edit.end > edit.start).map((edit) => edit.key);
  }

  /** `listing` with the batch's edits made; what is unchanged is shared, not copied. */
  applyTo(listing: LiveListing): LiveListing {
    const byExtension =
      listing.byExtension && reindexed(listing.byExtension, listing.entries, this.entries);
    let warnings = listing.warnings;
    if (this.#dropWarningsUnder.length > 0 || this.#warnings.length > 0) {
      const dropped = (path: string) =>
        this.#dropWarningsUnder.some((dir) => path === dir || path.startsWith(`${dir}/`));
      warnings = [...warnings.filter((warning) => !dropped(warning.path)), ...this.#warnings];
    }
    return {
      entries: applyEdits(listing.entries, this.entries),
      skipped: applyEdits(listing.skipped, this.skipped),
      warnings,
      byExtension,
    };
  }
}

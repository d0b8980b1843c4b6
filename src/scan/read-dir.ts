/**
 * One directory's entries, sorted by name, read for the walk without holding the event loop
 * past the walk's slice: a small directory (nearly all) at once and synchronously, the cheapest
 * path with no promise; a large one through a handle in batches, sorted in merged runs, with
 * pauses between. Where the native core loads, it opens and reads the directory (one call for
 * what was an `lstat` and a `readdir`, the open refusing a link swapped in); else Node does.
 * Depends on `native`, `io/bytes`, `errors` and `digest` (the name order).
 */
import { type Dirent, lstatSync, opendirSync, readdirSync } from "node:fs";
import { errnoOf } from "../errors.js";
import { fsPath } from "../io/bytes.js";
import { DIRECTORY_KINDS, type NativeCore, type NativeDirectory } from "../native/core.js";
import { byName, type DirEntry } from "./digest.js";

/** What the walk keeps of a directory's own metadata. */
export interface DirectoryStats {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
}

/** A directory opened for the walk: its metadata, and its entries sorted by name. */
export interface OpenedDirectory {
  readonly stats: DirectoryStats;
  readonly entries: DirEntry[] | Promise<DirEntry[]>;
}

/** An entry as the native core read it. */
class CoreEntry implements DirEntry {
  readonly name: string;
  readonly #kind: number;

  constructor(name: string, kind: number) {
    this.name = name;
    this.#kind = kind;
  }

  isFile(): boolean {
    return this.#kind === FILE;
  }

  isDirectory(): boolean {
    return this.#kind === DIRECTORY;
  }

  isSymbolicLink(): boolean {
    return this.#kind === SYMLINK;
  }
}

const FILE = DIRECTORY_KINDS.indexOf("file");
const DIRECTORY = DIRECTORY_KINDS.indexOf("dir");
const SYMLINK = DIRECTORY_KINDS.indexOf("symlink");

/**
 * Opens the directory at `absolute` for the walk, through the native `core` where it loads;
 * undefined when it is no longer a directory (a link or a file swapped in since its parent was
 * read: following a link would list files outside the root). Throws (or the entries reject)
 * when it cannot be read.
 */
export function openSorted(
  absolute: string,
  clock: SliceClock,
  core: NativeCore | undefined,
): OpenedDirectory | undefined {
  if (!core) {
    const stats = lstatSync(fsPath(absolute));
    if (!stats.isDirectory()) return undefined;
    return { stats, entries: readSorted(absolute, stats, clock) };
  }
  let read: NativeDirectory;
  try {
    const path = fsPath(absolute);
    read = core.readDirectory(
      typeof path === "string" ? Buffer.from(path) : path,
      BATCHED_DIRECTORY_BYTES,
    );
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "ELOOP" || errno === "ENOTDIR") return undefined;
    throw error;
  }
  // Over the size the core reads at once: read in batches, as without it.
  if (read.names === undefined) return { stats: read, entries: readSorted(absolute, read, clock) };
  const { names, kinds } = read;
  const entries: DirEntry[] = new Array(names.length);
  for (let i = 0; i < names.length; i++)
    entries[i] = new CoreEntry(names[i] as string, kinds[i] as number);
  // In byte order from the core: the sort by UTF-16 code units moves next to nothing.
  return { stats: read, entries: sorted(entries, clock) };
}

/** The walk's clock: whether its slice is used up, and a pause that yields to the event loop. */
export interface SliceClock {
  due(): boolean;
  pause(): Promise<void>;
}

/** Directory size (as `lstat` reports it) above which entries are read in batches: ~20k entries. */
const BATCHED_DIRECTORY_BYTES = 512 * 1024;

const RUN = 16_384;

/**
 * The entries of the directory at `absolute` (`stats` its metadata), sorted by name: at once
 * when it is small, a promise when it is large. Throws (or rejects) when it cannot be read.
 */
function readSorted(
  absolute: string,
  stats: DirectoryStats,
  clock: SliceClock,
): DirEntry[] | Promise<DirEntry[]> {
  // readdirSync holds the loop for ~1 µs an entry; a directory this size has ~20k or more.
  if (stats.size > BATCHED_DIRECTORY_BYTES) {
    return readInBatches(absolute, clock).then((read) => sortByName(read, clock));
  }
  return sorted(readdirSync(fsPath(absolute), { withFileTypes: true }), clock);
}

/** Entries sorted by name: at once up to RUN of them, else a promise (see `sortByName`). */
function sorted(entries: DirEntry[], clock: SliceClock): DirEntry[] | Promise<DirEntry[]> {
  return entries.length > RUN ? sortByName(entries, clock) : entries.sort(byName);
}

/**
 * A directory of ~20k entries or more, read through a handle in batches with pauses between.
 * (The promise form of readdir is no help: it builds every entry on the event loop at once,
 * 225 ms for 200k entries.)
 */
async function readInBatches(absolute: string, clock: SliceClock): Promise<Dirent[]> {
  const handle = opendirSync(fsPath(absolute) as string, { bufferSize: 256 });
  const dirents: Dirent[] = [];
  try {
    for (let dirent = handle.readSync(); dirent !== null; dirent = handle.readSync()) {
      if (dirents.push(dirent) % 1024 === 0 && clock.due()) await clock.pause();
    }
  } finally {
    handle.closeSync();
  }
  return dirents;
}

/**
 * Sorts entries by name. A directory of up to RUN entries is sorted at once (~15 ms at most); a
 * larger one in runs merged pairwise, pausing between steps: one `sort` of 200k names took
 * 220 ms with a comparator not yet compiled, too long to hold the event loop.
 */
async function sortByName(dirents: DirEntry[], clock: SliceClock): Promise<DirEntry[]> {
  if (dirents.length <= RUN) return dirents.sort(byName);
  let runs: DirEntry[][] = [];
  for (let i = 0; i < dirents.length; i += RUN) {
    runs.push(dirents.slice(i, i + RUN).sort(byName));
    await clock.pause();
  }
  while (runs.length > 1) {
    const merged: DirEntry[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const right = runs[i + 1];
      merged.push(
        right ? await merge(runs[i] as DirEntry[], right, clock) : (runs[i] as DirEntry[]),
      );
    }
    runs = merged;
  }
  return runs[0] as DirEntry[];
}

async function merge(left: DirEntry[], right: DirEntry[], clock: SliceClock): Promise<DirEntry[]> {
  const out: DirEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    out.push(
      byName(left[i] as DirEntry, right[j] as DirEntry) <= 0
        ? (left[i++] as DirEntry)
        : (right[j++] as DirEntry),
    );
    if (out.length % RUN === 0) await clock.pause();
  }
  while (i < left.length) out.push(left[i++] as DirEntry);
  while (j < right.length) out.push(right[j++] as DirEntry);
  return out;
}

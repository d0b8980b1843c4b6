/**
 * One directory's entries, sorted by name, read for the walk without holding the event loop
 * past the walk's slice: a small directory (nearly all) at once and synchronously, the cheapest
 * path with no promise; a large one through a handle in batches, sorted in merged runs, with
 * pauses between. Depends on `io/bytes` and `digest` (the name order).
 */
import { type Dirent, opendirSync, readdirSync, type Stats } from "node:fs";
import { fsPath } from "../io/bytes.js";
import { byName } from "./digest.js";

/** The walk's clock: whether its slice is used up, and a pause that yields to the event loop. */
export interface SliceClock {
  due(): boolean;
  pause(): Promise<void>;
}

/** Directory size (as `lstat` reports it) above which entries are read in batches: ~20k entries. */
const BATCHED_DIRECTORY_BYTES = 512 * 1024;

const RUN = 16_384;

/**
 * The entries of the directory at `absolute` (`stats` its `lstat`), sorted by name: at once
 * when it is small, a promise when it is large. Throws (or rejects) when it cannot be read.
 */
export function readSorted(
  absolute: string,
  stats: Stats,
  clock: SliceClock,
): Dirent[] | Promise<Dirent[]> {
  // readdirSync holds the loop for ~1 µs an entry; a directory this size has ~20k or more.
  if (stats.size > BATCHED_DIRECTORY_BYTES) {
    return readInBatches(absolute, clock).then((read) => sortByName(read, clock));
  }
  const dirents = readdirSync(fsPath(absolute), { withFileTypes: true });
  return dirents.length > RUN ? sortByName(dirents, clock) : dirents.sort(byName);
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
async function sortByName(dirents: Dirent[], clock: SliceClock): Promise<Dirent[]> {
  if (dirents.length <= RUN) return dirents.sort(byName);
  let runs: Dirent[][] = [];
  for (let i = 0; i < dirents.length; i += RUN) {
    runs.push(dirents.slice(i, i + RUN).sort(byName));
    await clock.pause();
  }
  while (runs.length > 1) {
    const merged: Dirent[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const right = runs[i + 1];
      merged.push(right ? await merge(runs[i] as Dirent[], right, clock) : (runs[i] as Dirent[]));
    }
    runs = merged;
  }
  return runs[0] as Dirent[];
}

async function merge(left: Dirent[], right: Dirent[], clock: SliceClock): Promise<Dirent[]> {
  const out: Dirent[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    out.push(
      byName(left[i] as Dirent, right[j] as Dirent) <= 0
        ? (left[i++] as Dirent)
        : (right[j++] as Dirent),
    );
    if (out.length % RUN === 0) await clock.pause();
  }
  while (i < left.length) out.push(left[i++] as Dirent);
  while (j < right.length) out.push(right[j++] as Dirent);
  return out;
}

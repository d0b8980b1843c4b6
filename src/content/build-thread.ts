/**
 * The content index's builder: a thread of its own that reads a run of files and returns their
 * trigram postings as one segment, so that building an index of a large tree (seconds) never
 * holds the caller's event loop or the grep workers. Depends on `trigrams`.
 *
 * A segment lists each key present once, with the files (local numbers, 16 bits) that hold it:
 * as a sorted list when few do, as a bitmap when more than one in sixteen do (the bitmap is
 * then the smaller). Files are read with `O_NOFOLLOW`: a link swapped in is not followed, and
 * the file is left unindexed (grep then reads it and reports what it finds, as without an index).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { FOLD, KEY_BITS, trigramKey } from "./trigrams.js";

/** A run of files to index: the segment covers the first `count` of them. */
export interface BuildJob {
  readonly id: number;
  /** The tree's canonical root; `paths` are relative to it. */
  readonly root: string;
  /** Joined by NUL, in listing order. */
  readonly paths: string;
  /** Larger files are left unindexed (grep reads them). */
  readonly maxFileBytes: number;
  /** The segment ends after the file that brings its text past this. */
  readonly maxSegmentBytes: number;
}

/** Per-file flags. */
export const BINARY = 1;
export const NON_ASCII = 2;
/** Not a regular file, unreadable, too large or a link: grep must read it itself. */
export const UNINDEXED = 4;

export interface SegmentData {
  readonly id: number;
  /** Files covered: the job's first `count` paths. */
  readonly count: number;
  /** Keys present, ascending. */
  readonly keys: Uint32Array;
  /** keys.length + 1 offsets into `data`, in 16-bit words. */
  readonly starts: Uint32Array;
  /** Per key: 1 when its posting is a bitmap of ceil(count / 16) words, 0 for a sorted list. */
  readonly dense: Uint8Array;
  readonly data: Uint16Array;
  readonly flags: Uint8Array;
  /** Bytes of each file when read. */
  readonly sizes: Float64Array;
  /** Bytes of text read. */
  readonly textBytes: number;
}

const KEYS = 1 << KEY_BITS;
/** The file each key was last seen in: a key is counted once per file. */
const seen = new Int32Array(KEYS).fill(-1);
/** Per key: files holding it in the segment being built, then its position among the keys. */
const perKey = new Uint32Array(KEYS);
let stamp = 0;
let scratch = Buffer.allocUnsafe(1 << 20);
const BINARY_PROBE = 8192;

/** Growable parallel arrays of (key, file) pairs. */
let pairKeys = new Uint32Array(1 << 20);
let pairFiles = new Uint16Array(1 << 20);
let pairs = 0;

function pushPair(key: number, file: number): void {
  if (pairs === pairKeys.length) {
    const keys = new Uint32Array(pairKeys.length * 2);
    keys.set(pairKeys);
    pairKeys = keys;
    const files = new Uint16Array(pairFiles.length * 2);
    files.set(pairFiles);
    pairFiles = files;
  }
  pairKeys[pairs] = key;
  pairFiles[pairs] = file;
  pairs++;
}

/** Reads a whole file into `scratch`; else its size when too large, or -1 when unreadable. */
function readWhole(path: string, maxFileBytes: number): { length: number; size: number } | number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return -1;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return -1;
    if (stats.size > maxFileBytes) return stats.size;
    if (stats.size > scratch.length) scratch = Buffer.allocUnsafe(stats.size * 2);
    let total = 0;
    while (total < stats.size) {
      const n = readSync(fd, scratch, total, stats.size - total, total);
      if (n === 0) break;
      total += n;
    }
    return { length: total, size: stats.size };
  } catch {
    return -1;
  } finally {
    closeSync(fd);
  }
}

export function buildSegment(job: BuildJob): SegmentData {
  const paths = job.paths.split("\0");
  const limit = Math.min(paths.length, 0x10000);
  const flags = new Uint8Array(limit);
  const sizes = new Float64Array(limit);
  const touched: number[] = [];
  pairs = 0;
  let textBytes = 0;
  let count = 0;
  while (count < limit && (count === 0 || textBytes < job.maxSegmentBytes)) {
    const file = count++;
    const read = readWhole(`${job.root}/${paths[file]}`, job.maxFileBytes);
    if (typeof read === "number") {
      flags[file] = UNINDEXED;
      sizes[file] = Math.max(read, 0);
      continue;
    }
    const { length } = read;
    sizes[file] = read.size;
    textBytes += length;
    const bytes = scratch;
    if (bytes.subarray(0, Math.min(length, BINARY_PROBE)).includes(0)) {
      flags[file] = BINARY;
      continue;
    }
    if (++stamp === 0x7fffffff) {
      seen.fill(-1);
      stamp = 0;
    }
    let high = 0;
    let t =
      length >= 2
        ? ((FOLD[bytes[0] as number] as number) << 8) | (FOLD[bytes[1] as number] as number)
        : 0;
    for (let i = 0; i < Math.min(length, 2); i++) high |= bytes[i] as number;
    for (let i = 2; i < length; i++) {
      const byte = bytes[i] as number;
      high |= byte;
      t = ((t & 0xffff) << 8) | (FOLD[byte] as number);
      const key = trigramKey(t);
      if (seen[key] === stamp) continue;
      seen[key] = stamp;
      if ((perKey[key] as number) === 0) touched.push(key);
      perKey[key] = (perKey[key] as number) + 1;
      pushPair(key, file);
    }
    if (high & 0x80) flags[file] = NON_ASCII;
  }
  const keys = Uint32Array.from(touched).sort();
  const words = Math.ceil(count / 16);
  const starts = new Uint32Array(keys.length + 1);
  const dense = new Uint8Array(keys.length);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k] as number;
    const holders = perKey[key] as number;
    const isDense = holders > count / 16;
    dense[k] = isDense ? 1 : 0;
    starts[k + 1] = (starts[k] as number) + (isDense ? words : holders);
    // From here on, the key's position among the keys.
    perKey[key] = k;
  }
  const data = new Uint16Array(starts[keys.length] as number);
  // Next free word of each sorted list (pairs come in file order, so lists come out sorted).
  const cursor = starts.slice(0, keys.length);
  for (let p = 0; p < pairs; p++) {
    const k = perKey[pairKeys[p] as number] as number;
    const file = pairFiles[p] as number;
    if (dense[k]) {
      const word = (starts[k] as number) + (file >>> 4);
      data[word] = (data[word] as number) | (1 << (file & 15));
    } else {
      data[cursor[k] as number] = file;
      cursor[k] = (cursor[k] as number) + 1;
    }
  }
  for (const key of touched) perKey[key] = 0;
  return {
    id: job.id,
    count,
    keys,
    starts,
    dense,
    data,
    flags: flags.slice(0, count),
    sizes: sizes.slice(0, count),
    textBytes,
  };
}

if (parentPort) {
  const port = parentPort;
  port.on("message", (job: BuildJob) => {
    const segment = buildSegment(job);
    port.postMessage(segment, [
      segment.keys.buffer,
      segment.starts.buffer,
      segment.dense.buffer,
      segment.data.buffer,
      segment.flags.buffer,
      segment.sizes.buffer,
    ] as ArrayBuffer[]);
  });
}

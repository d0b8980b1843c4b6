/**
 * The content index's builder: a thread of its own that reads a run of files and returns their
 * trigram postings as one segment, so that building an index of a large tree (seconds) never
 * holds the caller's event loop or the grep workers. Depends on `format` and `trigrams`.
 *
 * A segment lists each key present once, with the units (local numbers, 16 bits) that hold it:
 * as a list of gaps with follow bits, or as a bitmap without them when more than one unit in
 * four holds it (see `DENSE_FROM`). Files are read with `O_NOFOLLOW`: a link swapped in is not
 * followed, and the file is left unindexed (grep then reads it and reports what it finds, as
 * without an index).
 */

import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { hasEscapedBytes } from "../io/bytes.js";
import {
  BINARY,
  type BuildJob,
  FOLDED_ASIDE,
  FOLDS_ASIDE,
  HAS_NUL,
  NON_ASCII,
  type Restored,
  type RestoreJob,
  type SegmentData,
  STAMP_FIELDS,
  UNINDEXED,
} from "./format.js";
import { confirmSegments, readSnapshot, SnapshotRejected } from "./snapshot.js";
import { FOLD, followBit, KEY_BITS, LOWER, trigramKey, UPPER, upperKey } from "./trigrams.js";

/** Files larger than this are indexed in blocks of whole lines of about `BLOCK_BYTES`. */
const SPLIT_AT = 256 * 1024;
const BLOCK_BYTES = 128 * 1024;

const KEYS = 1 << KEY_BITS;
/** The file each key was last seen in: a key is counted once per file. */
const seen = new Int32Array(KEYS).fill(-1);
/**
 * Per key: files holding it in the segment being built, then its position among the keys (or
 * `DROPPED`).
 */
const perKey = new Uint32Array(KEYS);
const DROPPED = 0xffffffff;
const DENSE = 0x80000000;
let stamp = 0;
let scratch = Buffer.allocUnsafe(1 << 20);
const BINARY_PROBE = 8192;

/** Growable parallel arrays of (key, file) pairs. */
let pairKeys = new Uint32Array(1 << 20);
let pairFiles = new Uint16Array(1 << 20);
let pairMasks = new Uint8Array(1 << 20);
let pairs = 0;
/** Per key: its pair in the file being read (valid where `seen` says this file). */
const pairOf = new Int32Array(KEYS);
/** Per folded byte: its follow bit. */
const FOLLOW = new Uint8Array(256).map((_, byte) => followBit(FOLD[byte] as number));

function pushPair(key: number, file: number): void {
  if (pairs === pairKeys.length) {
    const capacity = Math.min(pairKeys.length * 2, MAX_PAIRS + KEYS);
    const keys = new Uint32Array(capacity);
    keys.set(pairKeys);
    pairKeys = keys;
    const files = new Uint16Array(capacity);
    files.set(pairFiles);
    pairFiles = files;
    const masks = new Uint8Array(capacity);
    masks.set(pairMasks);
    pairMasks = masks;
  }
  pairMasks[pairs] = 0;
  pairKeys[pairs] = key;
  pairFiles[pairs] = file;
  pairs++;
}

/** Reads a whole file into `scratch`; else its size when too large, or -1 when unreadable. */
function readWhole(
  path: string,
  maxFileBytes: number,
  stamps: BigInt64Array,
  at: number,
): { length: number; size: number } | number {
  // A name that is not UTF-8 (escaped bytes): the live tree learns of its changes only by
  // reading its directory again, so grep reads it itself, never trusting an index entry.
  if (hasEscapedBytes(path)) return -1;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return -1;
  }
  try {
    // Taken before reading: a change after it leaves a stat that differs from the one kept.
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) return -1;
    const size = Number(stats.size);
    if (size > maxFileBytes) return size;
    if (size > scratch.length) {
      scratch = Buffer.allocUnsafe(Math.max(size, Math.min(size * 2, 1 << 24)));
    }
    let total = 0;
    while (total < size) {
      const n = readSync(fd, scratch, total, size - total, total);
      if (n === 0) break;
      total += n;
    }
    stamps[at] = stats.dev;
    stamps[at + 1] = stats.ino;
    stamps[at + 2] = stats.mtimeNs;
    stamps[at + 3] = stats.ctimeNs;
    return { length: total, size };
  } catch {
    return -1;
  } finally {
    closeSync(fd);
  }
}

/**
 * Pairs a run collects before it ends (after the file that passed it): text with few repeated
 * trigrams (base64, say) has a pair or two per byte, and the pair arrays (7 bytes a pair) are
 * this thread's largest memory.
 */
const MAX_RUN_PAIRS = 8 * 1024 * 1024;
/**
 * A file whose pairs bring the run past this is left unindexed (its pairs taken back; grep
 * reads it). It is checked after each unit, which adds a pair per key at most: the pair arrays
 * never hold more than `MAX_PAIRS + KEYS` (20 Mi pairs, 140 MB) whatever the files hold.
 */
const MAX_PAIRS = 16 * 1024 * 1024;
/** Pair arrays grown past this are given back after the run. */
const KEPT_PAIRS = 1 << 22;

/**
 * A folded key held by more than one unit in `DENSE_FROM` is a bitmap, without follow bits;
 * one held by more than one in `TWINNED_FROM` has an upper-case key beside it. Bitmaps from
 * one unit in 16, as a bitmap and a list cost the same there, left `-i PM_RESUME` on the Linux
 * tree only the unnarrowed bitmaps of `_re`, `res`, `sum`: 2,820 units to read (113 MB).
 * Follow bits up to one unit in 4 take that to 1,699 (65 MB) for 38 MB more postings (190 MB
 * to 228 MB); up to one in 2 would take it to 1,294 (50 MB), for about 87 MB more.
 */
const DENSE_FROM = 4;
const TWINNED_FROM = 16;

/** FOLDS_ASIDE when `bytes[0, length)` holds U+017F or U+212A. */
function foldsAside(bytes: Buffer, length: number): number {
  const text = bytes.subarray(0, length);
  return FOLDED_ASIDE.some(({ bytes: c }) => text.includes(c)) ? FOLDS_ASIDE : 0;
}

/** Posting units a segment holds at most: their numbers are 16 bits. */
const MAX_UNITS = 0x10000;

/**
 * Counts `key` in posting unit `unit` (once per unit), and the follow bit of `next` (-1: none,
 * the unit ends) in its posting.
 */
function note(key: number, unit: number, next: number, touched: number[]): void {
  if (seen[key] !== stamp) {
    seen[key] = stamp;
    if ((perKey[key] as number) === 0) touched.push(key);
    perKey[key] = (perKey[key] as number) + 1;
    pairOf[key] = pairs;
    pushPair(key, unit);
  }
  if (next >= 0) {
    const pair = pairOf[key] as number;
    pairMasks[pair] = (pairMasks[pair] as number) | (FOLLOW[next] as number);
  }
}

/**
 * Indexes the trigrams of `bytes[from, to)` as posting unit `unit`: each under its folded key,
 * and those in capitals under their upper-case key as well. Returns whether a byte above 0x7f
 * was met.
 */
function indexUnit(
  bytes: Buffer,
  from: number,
  to: number,
  unit: number,
  touched: number[],
): boolean {
  if (++stamp === 0x7fffffff) {
    seen.fill(-1);
    stamp = 0;
  }
  let high = 0;
  let t = 0;
  // The last three bytes' upper- and lower-case letters, a bit each.
  let upper = 0;
  let lower = 0;
  for (let i = from; i < Math.min(to, from + 2); i++) {
    const byte = bytes[i] as number;
    high |= byte;
    t = ((t & 0xffff) << 8) | (FOLD[byte] as number);
    upper = (upper << 1) | (UPPER[byte] as number);
    lower = (lower << 1) | (LOWER[byte] as number);
  }
  for (let i = from + 2; i < to; i++) {
    const byte = bytes[i] as number;
    high |= byte;
    t = ((t & 0xffff) << 8) | (FOLD[byte] as number);
    upper = ((upper << 1) | (UPPER[byte] as number)) & 7;
    lower = ((lower << 1) | (LOWER[byte] as number)) & 7;
    const next = i + 1 < to ? (bytes[i + 1] as number) : -1;
    note(trigramKey(t), unit, next, touched);
    if (lower === 0 && upper !== 0) note(upperKey(t), unit, next, touched);
  }
  return (high & 0x80) !== 0;
}

/**
 * The files of one run as read so far: per file its flags, size and units, per unit where it
 * begins, and the keys its pairs hold.
 */
interface Run {
  readonly flags: Uint8Array;
  readonly sizes: Float64Array;
  readonly stamps: BigInt64Array;
  /** File f's units are `fileUnits[f]` to `fileUnits[f + 1]`. */
  readonly fileUnits: Uint32Array;
  /** Per unit: its first byte in the file, and that byte's line number. */
  readonly unitOffsets: number[];
  readonly unitLines: number[];
  /** The keys with a pair in the run, each once, in the order first met. */
  readonly touched: number[];
  /** Files covered so far. */
  count: number;
  textBytes: number;
}

export function buildSegment(job: BuildJob): SegmentData {
  const run = readRun(job);
  const units = run.unitOffsets.length;
  const { keys, denseKeys, emptyTwins } = placeKeys(run.touched, units);
  const { starts, lists, bitmaps } = writePostings(keys, denseKeys.length, units);
  for (const key of run.touched) perKey[key] = 0;
  for (const key of emptyTwins) perKey[key] = 0;
  if (scratch.length > 1 << 20) scratch = Buffer.allocUnsafe(1 << 20);
  if (pairKeys.length > KEPT_PAIRS) {
    pairKeys = new Uint32Array(1 << 20);
    pairFiles = new Uint16Array(1 << 20);
    pairMasks = new Uint8Array(1 << 20);
  }
  const { count } = run;
  return {
    id: job.id,
    count,
    keys,
    starts,
    lists,
    denseKeys,
    bitmaps,
    flags: run.flags.slice(0, count),
    sizes: run.sizes.slice(0, count),
    stamps: run.stamps.slice(0, count * STAMP_FIELDS),
    units,
    fileUnits: run.fileUnits.slice(0, count + 1),
    unitOffsets: Float64Array.from(run.unitOffsets),
    unitLines: Float64Array.from(run.unitLines),
    textBytes: run.textBytes,
  };
}

/**
 * Reads and indexes the job's files in order until the run is full: 4,096 files, its text
 * bytes or pairs past their bounds (the file that passes them is the last), or no room left
 * for the units of another file.
 */
function readRun(job: BuildJob): Run {
  const paths = job.paths.split("\0");
  const limit = Math.min(paths.length, 4096);
  const run: Run = {
    flags: new Uint8Array(limit),
    sizes: new Float64Array(limit),
    stamps: new BigInt64Array(limit * STAMP_FIELDS),
    fileUnits: new Uint32Array(limit + 1),
    unitOffsets: [],
    unitLines: [],
    touched: [],
    count: 0,
    textBytes: 0,
  };
  pairs = 0;
  // Blocks of the largest file indexed: a segment keeps room for them.
  const fileUnitsAtMost = Math.ceil(job.maxFileBytes / BLOCK_BYTES) + 1;
  while (
    run.count < limit &&
    (run.count === 0 || (run.textBytes < job.maxSegmentBytes && pairs < MAX_RUN_PAIRS)) &&
    run.unitOffsets.length < MAX_UNITS - fileUnitsAtMost
  ) {
    const file = run.count++;
    const unit = run.unitOffsets.length;
    run.fileUnits[file] = unit;
    run.fileUnits[file + 1] = unit + 1;
    run.unitOffsets.push(0);
    run.unitLines.push(1);
    const read = readWhole(
      `${job.root}/${paths[file]}`,
      job.maxFileBytes,
      run.stamps,
      file * STAMP_FIELDS,
    );
    if (typeof read === "number") {
      run.flags[file] = UNINDEXED;
      run.sizes[file] = Math.max(read, 0);
      continue;
    }
    run.sizes[file] = read.size;
    run.textBytes += read.length;
    run.flags[file] = indexFile(run, file, unit, read.length);
  }
  return run;
}

/**
 * Indexes the file just read (`scratch[0, length)`) as `file`, from posting unit `unit` on;
 * returns its flags.
 */
function indexFile(run: Run, file: number, unit: number, length: number): number {
  const bytes = scratch;
  // UTF-16 with a byte order mark: grep transcodes it before searching (as rg does), so its
  // bytes here are not the text searched; grep reads it itself.
  if (
    length >= 2 &&
    ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
  ) {
    return UNINDEXED;
  }
  if (bytes.subarray(0, Math.min(length, BINARY_PROBE)).includes(0)) return BINARY;
  // A large file is indexed in blocks of whole lines, so that a search reads only the blocks
  // that can match; not one with a NUL past the probe (binary once it matches: read whole).
  const nul = length > BINARY_PROBE ? bytes.subarray(0, length).indexOf(0, BINARY_PROBE) : -1;
  const before = pairs;
  let fileFlags: number;
  if (length <= SPLIT_AT || nul !== -1) {
    fileFlags = nul === -1 ? 0 : HAS_NUL;
    if (indexUnit(bytes, 0, length, unit, run.touched)) {
      fileFlags |= NON_ASCII | foldsAside(bytes, length);
    }
  } else {
    fileFlags = indexBlocks(run, file, unit, length) ? NON_ASCII | foldsAside(bytes, length) : 0;
  }
  if (pairs <= MAX_PAIRS) return fileFlags;
  takeBack(run, file, unit, before);
  return UNINDEXED;
}

/**
 * Indexes a large file (`scratch[0, length)`) in blocks of whole lines of about BLOCK_BYTES,
 * from unit `unit` on, stopping once the pairs pass MAX_PAIRS; returns whether a byte above
 * 0x7f was met.
 */
function indexBlocks(run: Run, file: number, unit: number, length: number): boolean {
  const bytes = scratch;
  let from = 0;
  let line = 1;
  let nonAscii = false;
  for (let u = unit; ; u++) {
    const newline = from + BLOCK_BYTES >= length ? -1 : bytes.indexOf(0x0a, from + BLOCK_BYTES);
    const to = newline === -1 || newline + 1 >= length ? length : newline + 1;
    if (indexUnit(bytes, from, to, u, run.touched)) nonAscii = true;
    if (pairs > MAX_PAIRS) break;
    if (to >= length) break;
    for (let i = from; i < to; i++) if (bytes[i] === 0x0a) line++;
    from = to;
    run.unitOffsets.push(from);
    run.unitLines.push(line);
    run.fileUnits[file + 1] = u + 2;
  }
  return nonAscii;
}

/**
 * A file with too many distinct trigrams to keep: its pairs (from `before` on) and blocks are
 * taken back, and it is left unindexed.
 */
function takeBack(run: Run, file: number, unit: number, before: number): void {
  for (let p = before; p < pairs; p++) {
    const key = pairKeys[p] as number;
    perKey[key] = (perKey[key] as number) - 1;
  }
  pairs = before;
  // Keys only it held are untouched again (a later file touching one lists it anew).
  const { touched } = run;
  let kept = 0;
  for (const key of touched) if ((perKey[key] as number) > 0) touched[kept++] = key;
  touched.length = kept;
  run.unitOffsets.length = unit + 1;
  run.unitLines.length = unit + 1;
  run.fileUnits[file + 1] = unit + 1;
}

/**
 * Which keys the segment keeps, and how: a list (`keys`) or a bitmap (`denseKeys`), each
 * ascending; `perKey` then holds each key's place (below DENSE among `keys`, DENSE + its place
 * among `denseKeys`, or DROPPED). Upper-case keys are kept only beside a common folded key (see
 * `upperKey`), and are never bitmaps themselves: their follow bits are what tell `ERR_SYS` from
 * the `ERR_PTR` of every other file. A common key with no unit holding it in capitals gets an
 * empty one (`emptyTwins`, among `keys`), so that a search finds the upper-case key wherever it
 * was kept and knows the rest were not.
 */
function placeKeys(
  touched: readonly number[],
  units: number,
): { keys: Uint32Array; denseKeys: Uint32Array; emptyTwins: number[] } {
  const isCommon = (key: number) => (perKey[key] as number) > units / TWINNED_FROM;
  const listed: number[] = [];
  const common: number[] = [];
  const emptyTwins: number[] = [];
  for (const key of touched) {
    if ((key & 1) === 1) {
      if (isCommon(key & ~1)) listed.push(key);
      else perKey[key] = DROPPED;
      continue;
    }
    if ((perKey[key] as number) > units / DENSE_FROM) common.push(key);
    else listed.push(key);
    if (isCommon(key) && (perKey[key | 1] as number) === 0) emptyTwins.push(key | 1);
  }
  listed.push(...emptyTwins);
  const keys = Uint32Array.from(listed).sort();
  const denseKeys = Uint32Array.from(common).sort();
  for (let k = 0; k < denseKeys.length; k++) perKey[denseKeys[k] as number] = DENSE + k;
  for (let k = 0; k < keys.length; k++) perKey[keys[k] as number] = k;
  return { keys, denseKeys, emptyTwins };
}

/**
 * The postings of the run's pairs, by the places `placeKeys` gave their keys: each listed key's
 * units as gaps with follow bits, each dense key's as a bitmap. Two passes over the pairs
 * (which come in unit order, so each key's postings come out sorted): the first sizes each
 * key's list and sets the bitmaps, the second writes the lists.
 */
function writePostings(
  keys: Uint32Array,
  denseCount: number,
  units: number,
): { starts: Uint32Array; lists: Uint8Array; bitmaps: Uint16Array } {
  const words = Math.ceil(units / 16);
  const bitmaps = new Uint16Array(denseCount * words);
  const gapBytes = (gap: number) => (gap < 0x80 ? 1 : gap < 0x4000 ? 2 : 3);
  // Per key, its last unit.
  const previous = new Int32Array(keys.length).fill(-1);
  const starts = new Uint32Array(keys.length + 1);
  for (let p = 0; p < pairs; p++) {
    const k = perKey[pairKeys[p] as number] as number;
    if (k === DROPPED) continue;
    const unit = pairFiles[p] as number;
    if (k >= DENSE) {
      const word = (k - DENSE) * words + (unit >>> 4);
      bitmaps[word] = (bitmaps[word] as number) | (1 << (unit & 15));
    } else {
      starts[k + 1] = (starts[k + 1] as number) + gapBytes(unit - (previous[k] as number)) + 1;
      previous[k] = unit;
    }
  }
  for (let k = 0; k < keys.length; k++) {
    starts[k + 1] = (starts[k + 1] as number) + (starts[k] as number);
  }
  const lists = new Uint8Array(starts[keys.length] as number);
  const cursor = starts.slice(0, keys.length);
  previous.fill(-1);
  for (let p = 0; p < pairs; p++) {
    const k = perKey[pairKeys[p] as number] as number;
    if (k >= DENSE) continue;
    const unit = pairFiles[p] as number;
    let gap = unit - (previous[k] as number);
    previous[k] = unit;
    let at = cursor[k] as number;
    while (gap >= 0x80) {
      lists[at++] = (gap & 0x7f) | 0x80;
      gap >>>= 7;
    }
    lists[at++] = gap;
    lists[at++] = pairMasks[p] as number;
    cursor[k] = at;
  }
  return { starts, lists, bitmaps };
}

/** Loads a snapshot and confirms each of its files by its stat; see `snapshot.ts`. */
export function restore(job: RestoreJob): Restored {
  try {
    const size = statSync(job.path).size;
    if (size > job.maxBytes * 2) {
      throw new SnapshotRejected(`its ${size} bytes are over twice the index's budget`);
    }
    const { header, segments } = readSnapshot(job.path, job.root, job.policy);
    const { confirmed, changed } = confirmSegments(job.root, segments, BigInt(header.savedAtNs));
    return { kind: "restored", id: job.id, segments, confirmed, changed };
  } catch (error) {
    const reason =
      error instanceof SnapshotRejected
        ? error.message
        : `it could not be read (${(error as Error).message})`;
    return { kind: "rejected", id: job.id, reason };
  }
}

function transfers(segment: SegmentData): ArrayBuffer[] {
  return [
    segment.keys.buffer,
    segment.starts.buffer,
    segment.lists.buffer,
    segment.denseKeys.buffer,
    segment.bitmaps.buffer,
    segment.flags.buffer,
    segment.sizes.buffer,
    segment.stamps.buffer,
    segment.fileUnits.buffer,
    segment.unitOffsets.buffer,
    segment.unitLines.buffer,
  ] as ArrayBuffer[];
}

if (parentPort) {
  const port = parentPort;
  port.on("message", (job: BuildJob | RestoreJob) => {
    if ("kind" in job) {
      const restored = restore(job);
      const buffers =
        restored.kind === "restored"
          ? restored.segments.flatMap((segment) => [
              ...transfers(segment.data),
              segment.stale.buffer as ArrayBuffer,
            ])
          : [];
      port.postMessage(restored, buffers);
      return;
    }
    const segment = buildSegment(job);
    port.postMessage(segment, transfers(segment));
  });
}

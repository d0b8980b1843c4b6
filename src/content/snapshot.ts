/**
 * A content index on disk: its segments as the build thread made them, written by the process
 * that keeps the index (the daemon) so that the next one starts from them instead of reading
 * every file again. Depends on `format` only (the build thread loads it).
 *
 * The file is the magic line, a JSON header (format, root, the tree's policy, when it was
 * saved, each segment's array lengths), the arrays as they are in memory, and a trailer: the
 * length of all before it and its CRC-32. A file cut short, changed, of another format, tree or
 * byte order is refused whole, never read in part. Loading it trusts nothing by itself: each
 * file's entry is kept only where the file's stat now equals the one taken when it was read
 * (`confirmSegments`), and, as git's racy-timestamp rule has it, not where that stat is recent
 * enough (within `RACY_NS` of the save) that a later change could have left it the same.
 */
import { type BigIntStats, closeSync, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { crc32 } from "node:zlib";
import { type RestoredSegment, type SegmentData, STAMP_FIELDS, UNINDEXED } from "./format.js";

const MAGIC = Buffer.from("freshfs content index snapshot\n", "latin1");
export const SNAPSHOT_FORMAT = 1;
/** Trailer: length of all before it (two 32-bit halves), then its CRC-32. */
const TRAILER_BYTES = 12;
/** Header JSON longer than this is not one of ours. */
const MAX_HEADER_BYTES = 64 * 1024 * 1024;
/**
 * A file whose mtime or ctime is this close to the save (or after it) may have changed since
 * within the same timestamp tick, its stat unchanged: it is read again. Two seconds covers the
 * coarsest clocks of file systems in use (FAT's 2 s, ext3's and HFS+'s 1 s).
 */
export const RACY_NS = 2_000_000_000n;

/** The typed arrays of a segment, in the order they are written. */
const ARRAYS = [
  ["keys", Uint32Array],
  ["starts", Uint32Array],
  ["lists", Uint8Array],
  ["denseKeys", Uint32Array],
  ["bitmaps", Uint16Array],
  ["flags", Uint8Array],
  ["sizes", Float64Array],
  ["stamps", BigInt64Array],
  ["fileUnits", Uint32Array],
  ["unitOffsets", Float64Array],
  ["unitLines", Float64Array],
] as const;

type ArrayName = (typeof ARRAYS)[number][0];

interface SegmentHeader {
  readonly count: number;
  readonly units: number;
  readonly textBytes: number;
  readonly pathBytes: number;
  /** Elements of each array, in `ARRAYS` order. */
  readonly lengths: readonly number[];
}

export interface SnapshotHeader {
  readonly format: number;
  readonly endian: "le" | "be";
  readonly root: string;
  readonly policy: string;
  /** Wall-clock nanoseconds when the index was last synchronized with its tree, as a string. */
  readonly savedAtNs: string;
  readonly segments: readonly SegmentHeader[];
}

/** A segment to write: its data and which of its files are stale now. */
export interface SavedSegment {
  readonly paths: readonly string[];
  readonly data: SegmentData;
  readonly stale: Uint8Array;
}

const ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? "le" : "be";

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * The snapshot of `segments` as a list of chunks (views of the segments' own arrays, not
 * copies), without its trailer: `snapshotTrailer` makes that from the chunks.
 */
export function snapshotChunks(
  root: string,
  policy: string,
  savedAtNs: bigint,
  segments: readonly SavedSegment[],
): Uint8Array[] {
  const body: Uint8Array[] = [];
  const headers: SegmentHeader[] = [];
  for (const { paths, data, stale } of segments) {
    const pathBytes = Buffer.from(paths.join("\0"), "utf8");
    body.push(pathBytes, stale);
    const lengths: number[] = [];
    for (const [name] of ARRAYS) {
      const array = data[name];
      lengths.push(array.length);
      body.push(bytesOf(array));
    }
    headers.push({
      count: data.count,
      units: data.units,
      textBytes: data.textBytes,
      pathBytes: pathBytes.length,
      lengths,
    });
  }
  const header: SnapshotHeader = {
    format: SNAPSHOT_FORMAT,
    endian: ENDIAN,
    root,
    policy,
    savedAtNs: savedAtNs.toString(),
    segments: headers,
  };
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  return [MAGIC, length, json, ...body];
}

/** The trailer for a snapshot of `length` bytes whose CRC-32 is `crc`. */
export function snapshotTrailer(length: number, crc: number): Uint8Array {
  const trailer = Buffer.alloc(TRAILER_BYTES);
  trailer.writeUInt32LE(length % 2 ** 32, 0);
  trailer.writeUInt32LE(Math.floor(length / 2 ** 32), 4);
  trailer.writeUInt32LE(crc >>> 0, 8);
  return trailer;
}

/** Why a snapshot was refused. */
export class SnapshotRejected extends Error {}

/**
 * The CRC-32 a trailer (`snapshotTrailer`) gives, once the length it gives is checked against
 * `end`, the bytes before it; throws SnapshotRejected.
 */
function trailerCrc(trailer: Buffer, end: number): number {
  const length = trailer.readUInt32LE(0) + trailer.readUInt32LE(4) * 2 ** 32;
  if (length !== end) {
    throw new SnapshotRejected(
      "it was cut short or extended: its length is not the one its end gives",
    );
  }
  return trailer.readUInt32LE(8);
}

/**
 * The bytes of a small file written by `writeSnapshot` (a tree's saved listing), checked
 * against its trailer; throws SnapshotRejected.
 */
export function checkedBody(file: Buffer): Buffer {
  if (file.length < TRAILER_BYTES) throw new SnapshotRejected("it is shorter than any snapshot");
  const end = file.length - TRAILER_BYTES;
  if (crc32(file.subarray(0, end)) >>> 0 !== trailerCrc(file.subarray(end), end)) {
    throw new SnapshotRejected("its checksum does not match its bytes");
  }
  return file.subarray(0, end);
}

/** A snapshot file being read: each read goes into the CRC, in order. */
class SnapshotReader {
  readonly #fd: number;
  /** Bytes before the trailer. */
  readonly end: number;
  readonly #expected: number;
  at = 0;
  #crc = 0;

  constructor(fd: number, size: number) {
    this.#fd = fd;
    if (size < MAGIC.length + 4 + TRAILER_BYTES) {
      throw new SnapshotRejected("it is shorter than any snapshot");
    }
    const trailer = Buffer.alloc(TRAILER_BYTES);
    readSync(fd, trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    this.end = size - TRAILER_BYTES;
    this.#expected = trailerCrc(trailer, this.end);
  }

  /** The next `bytes` bytes, into memory of their own. */
  take(bytes: number): Uint8Array {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || this.at + bytes > this.end) {
      throw new SnapshotRejected("its parts run past its end");
    }
    const out = new Uint8Array(bytes);
    let done = 0;
    while (done < bytes) {
      const n = readSync(this.#fd, out, done, bytes - done, this.at + done);
      if (n === 0) throw new SnapshotRejected("it was cut short while it was read");
      done += n;
    }
    this.at += bytes;
    // As when written (`writeSnapshot`): an empty array would reset Node's crc32.
    if (bytes > 0) this.#crc = crc32(out, this.#crc);
    return out;
  }

  /** Throws unless every byte was read and the CRC matches. */
  finish(): void {
    if (this.at !== this.end) throw new SnapshotRejected("it holds bytes after its segments");
    if (this.#crc >>> 0 !== this.#expected) {
      throw new SnapshotRejected("its checksum does not match its bytes");
    }
  }
}

function readHeader(reader: SnapshotReader): SnapshotHeader {
  if (!Buffer.from(reader.take(MAGIC.length)).equals(MAGIC)) {
    throw new SnapshotRejected("it is not a freshfs snapshot");
  }
  const jsonBytes = Buffer.from(reader.take(4)).readUInt32LE(0);
  if (jsonBytes > MAX_HEADER_BYTES) throw new SnapshotRejected("its header is out of bounds");
  let header: SnapshotHeader;
  try {
    header = JSON.parse(Buffer.from(reader.take(jsonBytes)).toString("utf8"));
  } catch (error) {
    if (error instanceof SnapshotRejected) throw error;
    throw new SnapshotRejected("its header is not JSON");
  }
  if (header.format !== SNAPSHOT_FORMAT) {
    throw new SnapshotRejected(`it is of format ${header.format}, not ${SNAPSHOT_FORMAT}`);
  }
  if (header.endian !== ENDIAN) throw new SnapshotRejected("it was written in another byte order");
  if (!Array.isArray(header.segments)) throw new SnapshotRejected("its header lists no segments");
  return header;
}

/**
 * The segments of the snapshot file `path`, for the tree `root` with `policy`; throws
 * SnapshotRejected (with the reason) for anything but a whole snapshot of that tree. Each array
 * is read into memory of its own: the file is never held whole beside them.
 */
export function readSnapshot(
  path: string,
  root: string,
  policy: string,
): { header: SnapshotHeader; segments: RestoredSegment[] } {
  const fd = openSync(path, "r");
  try {
    const reader = new SnapshotReader(fd, fstatSync(fd).size);
    const header = readHeader(reader);
    if (header.root !== root || header.policy !== policy) {
      throw new SnapshotRejected(`it is of ${header.root} (${header.policy}), not of this tree`);
    }
    const segments: RestoredSegment[] = [];
    for (const segment of header.segments) {
      const { count } = segment;
      const pathText = Buffer.from(reader.take(segment.pathBytes)).toString("utf8");
      const paths = count === 0 ? [] : pathText.split("\0");
      const stale = reader.take(count);
      const arrays = {} as Record<ArrayName, unknown>;
      ARRAYS.forEach(([name, type], i) => {
        const bytes = reader.take((segment.lengths[i] as number) * type.BYTES_PER_ELEMENT);
        arrays[name] = new (type as new (buffer: ArrayBuffer) => unknown)(
          bytes.buffer as ArrayBuffer,
        );
      });
      const data = { id: 0, count, units: segment.units, textBytes: segment.textBytes, ...arrays };
      checkShape(data as SegmentData, paths.length);
      segments.push({ paths, data: data as SegmentData, stale });
    }
    reader.finish();
    return { header, segments };
  } finally {
    closeSync(fd);
  }
}

/** Lengths that the search relies on; a snapshot that breaks one is not ours. */
function checkShape(data: SegmentData, paths: number): void {
  const { count, units } = data;
  const ok =
    paths === count &&
    data.flags.length === count &&
    data.sizes.length === count &&
    data.stamps.length === count * STAMP_FIELDS &&
    data.fileUnits.length === count + 1 &&
    data.unitOffsets.length === units &&
    data.unitLines.length === units &&
    data.starts.length === data.keys.length + 1 &&
    data.bitmaps.length === data.denseKeys.length * Math.ceil(units / 16) &&
    (data.starts[data.keys.length] ?? 0) <= data.lists.length &&
    (data.fileUnits[count] ?? 0) <= units;
  if (!ok) throw new SnapshotRejected("its segments' arrays do not fit together");
}

/** The file's stat, or undefined where there is none to be had (gone, a parent now a file). */
function statOf(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * Marks stale, in each segment, every file not to be trusted: unindexed ones (looked at again
 * anyway), gone ones, those whose stat differs from the one kept, and racy ones (see
 * `RACY_NS`). Returns how many files were confirmed and how many were not.
 */
export function confirmSegments(
  root: string,
  segments: readonly RestoredSegment[],
  savedAtNs: bigint,
): { confirmed: number; changed: number } {
  let confirmed = 0;
  let changed = 0;
  const racyFrom = savedAtNs - RACY_NS;
  for (const { paths, data, stale } of segments) {
    const { stamps } = data;
    for (let f = 0; f < data.count; f++) {
      if (stale[f]) continue;
      const at = f * STAMP_FIELDS;
      const mtime = stamps[at + 2] as bigint;
      const ctime = stamps[at + 3] as bigint;
      let same = !((data.flags[f] as number) & UNINDEXED) && mtime < racyFrom && ctime < racyFrom;
      if (same) {
        const stats = statOf(`${root}/${paths[f]}`);
        same =
          stats?.isFile() === true &&
          stats.dev === stamps[at] &&
          stats.ino === stamps[at + 1] &&
          stats.mtimeNs === mtime &&
          stats.ctimeNs === ctime &&
          Number(stats.size) === data.sizes[f];
      }
      if (same) confirmed++;
      else {
        stale[f] = 1;
        changed++;
      }
    }
  }
  return { confirmed, changed };
}

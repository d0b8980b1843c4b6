/**
 * File fingerprints and content snapshots for the guard. Depends on `io/` and `errors`.
 *
 * A fingerprint is the stat data that changes when a file changes: nanosecond mtime and ctime,
 * size, inode and device. Compared for equality, never with `>`: mtime goes backwards through
 * `cp -p`, checkouts and `utimes`. ctime cannot be set from user space, so it
 * catches a rewrite whose mtime was put back.
 */
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { FreshfsError, fromFsError } from "../errors.js";
import type { FsSeam } from "../io/fs.js";

export interface Fingerprint {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  // Whole seconds and nanoseconds: exact (a nanosecond epoch does not fit a double) and small
  // (the nanoseconds are a V8 small integer), where five bigints cost twice the memory.
  readonly mtimeSec: number;
  readonly mtimeNsec: number;
  readonly ctimeSec: number;
  readonly ctimeNsec: number;
}

const NS_PER_S = 1_000_000_000n;

/**
 * Inode numbers above 2^53 (possible on XFS and Btrfs) lose their low bits here; a collision
 * would also need equal size and equal nanosecond mtime and ctime, so it is not a practical risk.
 */
export function fingerprintOf(stats: BigIntStats): Fingerprint {
  return {
    dev: Number(stats.dev),
    ino: Number(stats.ino),
    size: Number(stats.size),
    mtimeSec: Number(stats.mtimeNs / NS_PER_S),
    mtimeNsec: Number(stats.mtimeNs % NS_PER_S),
    ctimeSec: Number(stats.ctimeNs / NS_PER_S),
    ctimeNsec: Number(stats.ctimeNs % NS_PER_S),
  };
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return (
    a.mtimeNsec === b.mtimeNsec &&
    a.mtimeSec === b.mtimeSec &&
    a.size === b.size &&
    a.ino === b.ino &&
    a.ctimeNsec === b.ctimeNsec &&
    a.ctimeSec === b.ctimeSec &&
    a.dev === b.dev
  );
}

function toMs(sec: number, nsec: number): number {
  return sec * 1000 + nsec / 1e6;
}

export function mtimeMsOf(fingerprint: Fingerprint): number {
  return toMs(fingerprint.mtimeSec, fingerprint.mtimeNsec);
}

export function mtimeNsOf(fingerprint: Fingerprint): bigint {
  return BigInt(fingerprint.mtimeSec) * NS_PER_S + BigInt(fingerprint.mtimeNsec);
}

/**
 * Whether a fingerprint taken at `startedAtMs` (wall clock) may be blind to a later rewrite.
 * File timestamps come from a coarse kernel clock (a jiffy, or 2 s on FAT), so a same-size
 * rewrite landing in the granule of the last change leaves every stat field as it was: git's
 * "racy clean" problem. Such fingerprints are never trusted alone; the content hash decides.
 *
 * A later rewrite stamps mtime and ctime with the time of that rewrite. It can only reproduce
 * the recorded ctime if that ctime is recent (or in the future, on a skewed clock), and only
 * reproduce the recorded mtime if that mtime is near now: an mtime set far into the past or
 * future (`touch -d`, `cp -p`) cannot be hit by accident, so it does not make the file racy.
 */
export function isRacy(fingerprint: Fingerprint, startedAtMs: number, windowMs: number): boolean {
  const ctimeMs = toMs(fingerprint.ctimeSec, fingerprint.ctimeNsec);
  return (
    ctimeMs > startedAtMs - windowMs || Math.abs(mtimeMsOf(fingerprint) - startedAtMs) < windowMs
  );
}

/**
 * SHA-256 as a 32-character binary string: the guard keeps one per tracked path, and this form
 * costs 50 bytes of heap where hex costs 90. `hexDigest` turns it into the usual form.
 */
const DIGEST_ENCODING = "binary"; // Node's name for latin1

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest(DIGEST_ENCODING);
}

export function hexDigest(digest: string): string {
  return Buffer.from(digest, DIGEST_ENCODING).toString("hex");
}

const LF = 0x0a;
const CR = 0x0d;
const CRLF = Buffer.from("\r\n");

function countOf(buffer: Buffer, needle: number | Buffer): number {
  const step = typeof needle === "number" ? 1 : needle.length;
  let count = 0;
  for (let at = buffer.indexOf(needle); at !== -1; at = buffer.indexOf(needle, at + step)) count++;
  return count;
}

/**
 * Counts lines as the most generous reader would split them: at `\n`, `\r\n` and a lone `\r`.
 * A window is "full" only if it covered this many lines, so a reader that splits differently
 * can only be told to read again, never be trusted with lines it did not show.
 */
export class LineCounter {
  #breaks = 0;
  #bytes = 0;
  #last: number | undefined;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const carriageReturns = countOf(chunk, CR);
    let pairs = carriageReturns === 0 ? 0 : countOf(chunk, CRLF);
    if (this.#last === CR && chunk[0] === LF) pairs++; // a CRLF split across two chunks
    this.#breaks += countOf(chunk, LF) + carriageReturns - pairs;
    this.#bytes += chunk.length;
    this.#last = chunk[chunk.length - 1];
  }

  get lines(): number {
    const ended = this.#bytes === 0 || this.#last === LF || this.#last === CR;
    return ended ? this.#breaks : this.#breaks + 1;
  }
}

export function countLines(bytes: Uint8Array): number {
  const counter = new LineCounter();
  counter.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return counter.lines;
}

export interface Snapshot {
  /** Stat data of the bytes hashed, from the open descriptor. */
  readonly fingerprint: Fingerprint;
  /** SHA-256 of the whole file, as `sha256` gives it. */
  readonly hash: string;
  readonly lines: number;
  /**
   * The descriptor's stat data did not move while it was read, so `fingerprint` describes
   * exactly the bytes behind `hash`.
   */
  readonly stable: boolean;
  /** Wall clock (ms) when the snapshot began, for the racy test. */
  readonly startedAtMs: number;
}

const CHUNK = 1 << 20;
const ATTEMPTS = 3;

/**
 * Reads and hashes a whole file through one descriptor, with `fstat` before and after, retrying
 * while a writer is active. Memory stays bounded (one chunk) whatever the file's size; the
 * content is never kept. Throws `FreshfsError` (`NOT_FOUND`, `NOT_A_FILE`, ...).
 */
export async function snapshotFile(path: string, fs: FsSeam): Promise<Snapshot> {
  let snapshot: Snapshot | undefined;
  for (let attempt = 0; attempt < ATTEMPTS && !snapshot?.stable; attempt++) {
    snapshot = await readOnce(path, fs);
  }
  return snapshot as Snapshot;
}

async function readOnce(path: string, fs: FsSeam): Promise<Snapshot> {
  const startedAtMs = Date.now();
  let handle: Awaited<ReturnType<FsSeam["open"]>>;
  try {
    handle = await fs.open(path);
  } catch (error) {
    throw fromFsError(error, "read", path);
  }
  try {
    const before = await handle.stat({ bigint: true });
    if (!before.isFile()) {
      throw new FreshfsError(
        "NOT_A_FILE",
        `Cannot read ${path}: it is ${describeNonFile(before)}, not a regular file.`,
        { path },
      );
    }
    const hash = createHash("sha256");
    const lines = new LineCounter();
    let buffer = Buffer.allocUnsafe(Number(before.size < CHUNK ? before.size + 1n : CHUNK));
    let total = 0;
    // Read to EOF rather than to the stat size: a file growing under us must not be cut short.
    // The buffer is one byte larger than the file, so a short read (EOF, for a regular file)
    // ends a small file in one call; a file that outgrows it gets full-size chunks.
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      lines.push(chunk);
      total += bytesRead;
      if (bytesRead < buffer.length) break;
      if (buffer.length < CHUNK) buffer = Buffer.allocUnsafe(CHUNK);
    }
    const after = await handle.stat({ bigint: true });
    const fingerprint = fingerprintOf(after);
    return {
      fingerprint,
      hash: hash.digest(DIGEST_ENCODING),
      lines: lines.lines,
      stable: sameFingerprint(fingerprintOf(before), fingerprint) && total === fingerprint.size,
      startedAtMs,
    };
  } catch (error) {
    throw fromFsError(error, "read", path);
  } finally {
    // A failed close cannot undo a read that completed; it must not replace the result.
    await handle.close().catch(() => undefined);
  }
}

export function describeNonFile(stats: BigIntStats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

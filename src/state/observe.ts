/**
 * What a recorded read saw of a file: the hash of its bytes and the stat data known to describe
 * those bytes, from the file itself or from the bytes the caller read. Depends on `snapshot`,
 * `io/` and `errors`.
 */
import type { BigIntStats } from "node:fs";
import { FreshfsError, fromFsError } from "../errors.js";
import type { FsSeam } from "../io/fs.js";
import {
  countLines,
  describeNonFile,
  type Fingerprint,
  fingerprintOf,
  isRacy,
  type Snapshot,
  sha256,
  snapshotFile,
} from "./snapshot.js";

/** What was observed of a file at a read: its bytes' hash and the stat data of those bytes. */
export interface Observation {
  readonly hash: string | undefined;
  readonly lines: number | undefined;
  readonly size: number | undefined;
  readonly fingerprint: Fingerprint | undefined;
  readonly racy: boolean;
}

/** The tracker reads the file itself: its snapshot is the record. */
export async function observeFile(
  key: string,
  fs: FsSeam,
  racyWindowMs: number,
): Promise<Observation> {
  let snapshot: Snapshot;
  try {
    snapshot = await snapshotFile(key, fs);
  } catch (error) {
    const code = error instanceof FreshfsError ? error.code : undefined;
    if (code !== "PERMISSION_DENIED" && code !== "IO_ERROR") throw error;
    return observeStatOnly(key, error, fs, racyWindowMs);
  }
  return {
    hash: snapshot.hash,
    lines: snapshot.lines,
    size: snapshot.fingerprint.size,
    fingerprint: snapshot.stable ? snapshot.fingerprint : undefined,
    racy: isRacy(snapshot.fingerprint, snapshot.startedAtMs, racyWindowMs),
  };
}

/**
 * The file is there but its bytes cannot be read: keep its stat data and mark the content
 * unknown, which is never mistaken for empty (an empty file has the hash of zero bytes).
 */
async function observeStatOnly(
  key: string,
  readError: unknown,
  fs: FsSeam,
  racyWindowMs: number,
): Promise<Observation> {
  const startedAtMs = Date.now();
  let stats: BigIntStats;
  try {
    stats = await fs.stat(key);
  } catch (error) {
    throw fromFsError(error, "record a read of", key);
  }
  if (!stats.isFile()) {
    throw new FreshfsError(
      "NOT_A_FILE",
      `Cannot read ${key}: it is ${describeNonFile(stats)}, not a regular file.`,
      { path: key, cause: readError },
    );
  }
  const fingerprint = fingerprintOf(stats);
  return {
    hash: undefined,
    lines: undefined,
    size: fingerprint.size,
    fingerprint,
    racy: isRacy(fingerprint, startedAtMs, racyWindowMs),
  };
}

/**
 * The caller read the bytes at some earlier moment. Its stat data is trusted only when the
 * file, read again now, still has those bytes: otherwise a change between the caller's read
 * and this call would leave a fingerprint that vouches for bytes nobody saw.
 */
export async function observeContent(
  key: string,
  content: string | Uint8Array,
  fs: FsSeam,
  racyWindowMs: number,
): Promise<Observation> {
  let snapshot: Snapshot | undefined;
  try {
    snapshot = await snapshotFile(key, fs);
  } catch {
    snapshot = undefined;
  }
  const candidates = typeof content === "string" ? encodingsOf(content) : [content];
  if (snapshot?.stable && candidates.some((bytes) => sha256(bytes) === snapshot.hash)) {
    return {
      hash: snapshot.hash,
      lines: snapshot.lines,
      size: snapshot.fingerprint.size,
      fingerprint: snapshot.fingerprint,
      racy: isRacy(snapshot.fingerprint, snapshot.startedAtMs, racyWindowMs),
    };
  }
  const bytes = candidates[0] as Uint8Array;
  return {
    hash: sha256(bytes),
    lines: countLines(bytes),
    size: bytes.byteLength,
    fingerprint: undefined,
    racy: true,
  };
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The raw bytes a caller's decoded string may have come from: UTF-8 with or without a byte
 * order mark (decoders drop it), with line ends as given or as CRLF (readers that normalize
 * them), or Latin-1. The guard compares raw bytes, never a normalized string against them;
 * these forms spare a caller that only kept the text a false STALE. The first form is the text
 * as UTF-8.
 */
function encodingsOf(text: string): Uint8Array[] {
  const forms = [text];
  if (text.includes("\n") && !text.includes("\r")) forms.push(text.replaceAll("\n", "\r\n"));
  const encoded: Uint8Array[] = [];
  for (const form of forms) {
    const utf8 = Buffer.from(form, "utf8");
    encoded.push(utf8);
    if (!form.startsWith("\uFEFF")) encoded.push(Buffer.concat([UTF8_BOM, utf8]));
  }
  if (isLatin1Beyond7Bit(text)) encoded.push(Buffer.from(text, "latin1"));
  return encoded;
}

/** Latin-1 differs from UTF-8 only for U+0080..U+00FF, and cannot encode anything above. */
function isLatin1Beyond7Bit(text: string): boolean {
  let beyond = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) return false;
    if (code >= 0x80) beyond = true;
  }
  return beyond;
}

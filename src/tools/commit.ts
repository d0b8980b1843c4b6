/**
 * The one write path every mutation takes: under the path's lock (this
 * process's and every other freshfs process's), the file as it is now, the guard's check, an
 * atomic write whose last step repeats the check, the tracker's record of the new bytes, and
 * the scan cache told. Depends on `state/`, `scan/`, `errors` and `tools/`.
 */
import {
  accessSync,
  type BigIntStats,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readFileSync,
  realpathSync,
  rmdirSync,
} from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { errnoOf, FreshfsError, fromFsError, isGone } from "../errors.js";
import { invalidateFsScanAfterWrite } from "../scan/cache.js";
import type { SearchProgress } from "../search/listing.js";
import { withEntryLocks } from "../state/lock.js";
import { countLines, describeNonFile, hexDigest, sha256 } from "../state/snapshot.js";
import type { FileStateTracker, GuardPolicy, PartialReadPolicy } from "../state/tracker.js";
import { removeLeftTemps, writeAtomic } from "./atomic.js";
import { MAX_FILE_BYTES } from "./limits.js";
import { type ConfinedPath, type Roots, readConfined } from "./roots.js";

/** What every tool works with: the roots, the guard and its policy. */
export interface ToolContext {
  readonly roots: Roots;
  readonly tracker: FileStateTracker;
  readonly policy: GuardPolicy;
  readonly partialReads: PartialReadPolicy;
  /** The search tools use the shared scan cache. */
  readonly cache: boolean;
  /** ... and answer from live trees where roots can be watched. */
  readonly watch: boolean;
}

/** What a caller may pass to one tool call besides its parameters. */
export interface CallOptions {
  /**
   * Stops the call: a search stops reading files, a mutation stops waiting for its lock (a
   * mutation that holds its lock is never interrupted). Rejects with `ABORTED`.
   */
  readonly signal?: AbortSignal | undefined;
  /** Where a long search (glob, grep, find) is: the walk, then the files read. */
  readonly onProgress?: ((progress: SearchProgress) => void) | undefined;
}

/**
 * Runs a mutation under the locks of `keys` (canonical entries), in this process and in every
 * other freshfs process; messages name them as the model sees them. `reconfine` (the paths
 * confined again) runs once this process's locks are held and once every lock is: a link
 * swapped in while the call waited is refused before anything is made in its directory.
 */
export function underLocks<T>(
  context: ToolContext,
  keys: readonly string[],
  operation: string,
  call: CallOptions,
  reconfine: () => void,
  fn: () => Promise<T>,
): Promise<T> {
  return withEntryLocks(
    keys,
    async () => {
      // Again: another process may have held the lock files a while.
      reconfine();
      return fn();
    },
    {
      signal: call.signal,
      operation,
      shown: (key) => context.roots.display(key),
      beforeFileLocks: reconfine,
    },
  );
}

/** The file as it is on disk now, read whole (tools refuse files past `MAX_FILE_BYTES`). */
export interface Current {
  readonly exists: boolean;
  readonly bytes: Buffer;
  /** Permission bits, kept by the rewrite. */
  readonly mode: number | undefined;
  /** Owner and group, kept by the rewrite where the process may. */
  readonly owner: { uid: number; gid: number } | undefined;
}

const MIB = 1024 * 1024;

export function tooLarge(shown: string, size: number): FreshfsError {
  return new FreshfsError(
    "TOO_LARGE",
    `${shown} is ${(size / MIB).toFixed(1)} MiB; files over ${MAX_FILE_BYTES / MIB} MiB cannot be read or edited whole. Use grep to find what you need in it.`,
    { path: shown },
  );
}

export async function readCurrent(
  target: ConfinedPath,
  action: string,
  shown: string,
): Promise<Current> {
  let stats: BigIntStats;
  try {
    stats = await stat(target.real, { bigint: true });
  } catch (error) {
    if (isGone(error)) {
      return { exists: false, bytes: Buffer.alloc(0), mode: undefined, owner: undefined };
    }
    throw fromFsError(error, action, shown);
  }
  if (!stats.isFile()) {
    throw new FreshfsError(
      "NOT_A_FILE",
      `Cannot ${action} ${shown}: it is ${describeNonFile(stats)}, not a file.`,
      { path: target.lexical },
    );
  }
  if (stats.size > BigInt(MAX_FILE_BYTES)) throw tooLarge(shown, Number(stats.size));
  try {
    const bytes = readConfined(target.real);
    return {
      exists: true,
      bytes,
      mode: Number(stats.mode & 0o7777n),
      owner: { uid: Number(stats.uid), gid: Number(stats.gid) },
    };
  } catch (error) {
    throw fromFsError(error, action, shown);
  }
}

/**
 * The guard's verdict for editing `target` now: strict throws `NOT_READ` / `STALE`, warn
 * returns warnings. `lines` are the lines an edit replaces (for `allow-within-window`).
 */
export async function checkGuard(
  context: ToolContext,
  target: ConfinedPath,
  lines?: { start: number; end: number },
): Promise<string[]> {
  const verdict = await context.tracker.checkEdit(target.lexical, { lines });
  return [...verdict.warnings];
}

/**
 * The edit is computed from `current`: under strict, those must be the very bytes the model
 * read (the guard compared the disk with the record, but the bytes in hand were read a moment
 * earlier and could differ from both).
 */
export function assertBasedOnRead(
  context: ToolContext,
  target: ConfinedPath,
  current: Current,
): void {
  if (current.exists) assertBytesRead(context, target.lexical, current.bytes, target.lexical);
}

/**
 * Under `strict`, `bytes` (what a call is about to change or remove, read under its locks) must
 * be the bytes of the latest read: `STALE` otherwise. A record without bytes says nothing.
 */
export function assertBytesRead(
  context: ToolContext,
  lexical: string,
  bytes: Buffer | undefined,
  shown: string,
): void {
  if (context.policy !== "strict" || !bytes) return;
  const read = context.tracker.latest(lexical);
  if (read?.hash !== undefined && read.hash !== hexDigest(sha256(bytes))) {
    throw new FreshfsError(
      "STALE",
      `${shown} changed on disk while the call was being prepared. Read it again, then retry.`,
      { path: lexical },
    );
  }
}

export interface CommitOptions {
  readonly current: Current;
  readonly bytes: Uint8Array;
  /** Warnings gathered so far (the first check's); the last check's are added. */
  readonly warnings: string[];
  readonly lines?: { start: number; end: number } | undefined;
}

/**
 * Writes the new bytes atomically, repeating the guard's check just before the rename, then
 * records them as read and invalidates cached listings. Call under the path's lock.
 */
export async function commitWrite(
  context: ToolContext,
  target: ConfinedPath,
  options: CommitOptions,
): Promise<void> {
  const { current, bytes, warnings } = options;
  const before = context.tracker.latest(target.lexical);
  if (!current.exists) {
    await makeParents(target.real, target.lexical);
  } else {
    // A rename replaces a file the process may not write (its directory allows it): ask, as
    // an in-place write would be refused.
    try {
      accessSync(target.real, constants.W_OK);
    } catch (error) {
      throw fromFsError(error, "write", target.lexical);
    }
  }
  const directory = dirname(target.real);
  await writeAtomic(target.real, bytes, {
    mode: current.mode,
    owner: current.owner,
    exclusive: !current.exists,
    beforeCommit: async () => {
      // The directory was resolved when the path was confined; a component swapped for a
      // symbolic link since would carry the rename somewhere else.
      if (realpathSync.native(directory) !== directory) {
        throw new FreshfsError(
          "STALE",
          `The directory of ${target.lexical} changed (a symbolic link was put on its way) while it was being written; nothing was written. Check the path, then retry.`,
          { path: target.lexical },
        );
      }
      for (const warning of await checkGuard(context, target, options.lines)) {
        if (!warnings.includes(warning)) warnings.push(warning);
      }
    },
    // The guard compares the disk with the latest read, which a concurrent read may have
    // moved on; this compares it with the bytes this edit was computed from. Under either
    // policy: a change made while the edit ran was seen by nobody, and would be lost.
    verifyNow: () => {
      if (current.exists && !sameBytesOnDisk(target.real, current.bytes)) {
        throw new FreshfsError(
          "STALE",
          `${target.lexical} changed on disk while the edit was being written; nothing was written. Read it again, then retry.`,
          { path: target.lexical },
        );
      }
    },
  });
  removeLeftTemps(target.real);
  if (context.partialReads === "allow-within-window" && before?.partial) {
    // An edit inside a window does not show the rest of the file: the record stays a window,
    // moved by the lines the edit added or removed.
    const delta = countLines(bytes) - (before.lines ?? countLines(current.bytes));
    const limit = before.limit > 0 ? Math.max(1, before.limit + delta) : 0;
    await context.tracker.recordRead(target.lexical, {
      offset: before.offset,
      limit,
      content: bytes,
    });
  } else {
    await context.tracker.recordEdit(target.lexical, { content: bytes });
  }
  invalidateFsScanAfterWrite(target.real);
}

/**
 * Creates the directories a new file needs; a file where a directory must be is named as such.
 * Returns the first directory made (undefined when none was), for `removeMade`.
 */
export async function makeParents(path: string, shown: string): Promise<string | undefined> {
  try {
    return await mkdir(dirname(path), { recursive: true });
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "EEXIST" || errno === "ENOTDIR") {
      throw new FreshfsError(
        "NOT_A_DIRECTORY",
        `Cannot create ${shown}: a part of its directory path is a file, not a directory.`,
        { path: shown, cause: error },
      );
    }
    throw fromFsError(error, "create the directory of", shown);
  }
}

/** Removes the directories from `deepest` up to `first` (made by one call), as long as they are empty. */
export function removeMade(deepest: string, first: string | undefined): void {
  if (first === undefined) return;
  for (let dir = deepest; dir.length >= first.length; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === first) return;
  }
}

/**
 * Whether the file at `path` (canonical) holds `bytes` now, read through its directory held open
 * and not through a final link; false when it cannot be read.
 */
export function sameBytesOnDisk(path: string, bytes: Buffer): boolean {
  try {
    return readConfined(path).equals(bytes);
  } catch {
    return false;
  }
}

/**
 * A directory entry as a delete or a replacing rename found it, for the check repeated just
 * before the change (no writer, freshfs or not, slips in between): the entry (inode) and, for a
 * file, its bytes; for a file past `MAX_FILE_BYTES`, which is not read whole in a call, its stat
 * data.
 */
export interface EntrySnapshot {
  readonly stats: BigIntStats;
  /** A file's bytes; undefined for a link, a directory or a file too large to read. */
  readonly bytes: Buffer | undefined;
}

/** Reads `entry` (not following a final link) for `entryUnchanged`; undefined when it is gone. */
export function snapshotEntry(
  entry: string,
  action: string,
  shown: string,
): EntrySnapshot | undefined {
  let stats: BigIntStats | undefined;
  try {
    stats = lstatSync(entry, { bigint: true, throwIfNoEntry: false });
    if (!stats) return undefined;
    if (!stats.isFile() || stats.size > BigInt(MAX_FILE_BYTES)) return { stats, bytes: undefined };
    return { stats, bytes: readEntry(entry) };
  } catch (error) {
    if (isGone(error)) return undefined;
    throw fromFsError(error, action, shown);
  }
}

function readEntry(entry: string): Buffer {
  const fd = openSync(entry, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Synchronous, for the line right before the `unlink` or `rename`: whether `entry` is still the
 * one `before` saw (the same inode, and a file the same bytes; a file too large to read, the
 * same size, mtime and ctime to the nanosecond). A writer that takes part in no locking (an
 * editor, a shell) is left only the window of the system call itself.
 */
export function entryUnchanged(entry: string, before: EntrySnapshot): boolean {
  try {
    const now = lstatSync(entry, { bigint: true, throwIfNoEntry: false });
    if (!now || now.ino !== before.stats.ino || now.dev !== before.stats.dev) return false;
    if (!before.stats.isFile()) return true;
    if (before.bytes) return readEntry(entry).equals(before.bytes);
    return (
      now.size === before.stats.size &&
      now.mtimeNs === before.stats.mtimeNs &&
      now.ctimeNs === before.stats.ctimeNs
    );
  } catch {
    return false;
  }
}

/**
 * Atomic replacement of a file's bytes: a temp file in the same directory, flushed, given the
 * file's mode, then renamed over the target, so a reader (or a crash) sees the old bytes or
 * the new ones, never a mix. Depends on `errors`.
 */
import { linkSync, lstatSync, readdirSync, renameSync, unlinkSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { errnoOf, fromFsError } from "../errors.js";
import { HeldDirectory } from "../io/held.js";
import { isFreshfsTemp, tempNameFor, tempPrefixFor } from "../io/names.js";

export interface AtomicWriteOptions {
  /** Permission bits for the file (an existing file's own); else 0o666 less the umask. */
  mode?: number | undefined;
  /**
   * The existing file's owner: a rewrite by root (or a member of the file's group) must not
   * hand someone's file to itself. Where the process may not give it back (EPERM), the file
   * is the writer's, as with any editor that writes a new file.
   */
  owner?: { uid: number; gid: number } | undefined;
  /** The target must not exist: the write fails with `ALREADY_EXISTS` instead of replacing it. */
  exclusive?: boolean | undefined;
  /**
   * Runs after the data is flushed and just before the rename: the guard's last look. Throwing
   * abandons the write and leaves the target untouched.
   */
  beforeCommit?: (() => Promise<void>) | undefined;
  /**
   * Runs synchronously right before a synchronous rename, nothing awaited in between: the
   * check that the target still holds the bytes the new ones were computed from. An async
   * check and rename each wait in libuv's queue, and under load another process's write
   * landed in that gap (milliseconds, measured) and was overwritten unseen.
   */
  verifyNow?: (() => void) | undefined;
}

/** Writes `bytes` to `target` (a canonical path: writes land on it, not on a link to it). */
export async function writeAtomic(
  target: string,
  bytes: Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const prepared = await prepareAtomic(target, bytes, options);
  try {
    await options.beforeCommit?.();
    options.verifyNow?.();
    prepared.commit();
  } catch (error) {
    throw fromFsError(error, "write", target);
  } finally {
    prepared.close();
  }
}

/**
 * A write whose bytes are flushed to a temp file beside the target, waiting for `commit`: a
 * patch of several files prepares every one before it renames any, so a failure to write one
 * changes none, and the renames run back to back.
 */
export interface PreparedWrite {
  /** The rename (or, `exclusive`, the link) that makes the new bytes the file's. Synchronous. */
  commit(): void;
  /** Removes the temp file unless committed, and lets the directory go. Idempotent. */
  close(): void;
}

/** Flushes `bytes` to a temp file beside `target` with the target's mode and owner. */
export async function prepareAtomic(
  target: string,
  bytes: Uint8Array,
  options: Pick<AtomicWriteOptions, "mode" | "owner" | "exclusive"> = {},
): Promise<PreparedWrite> {
  // Every step goes through the directory held open: one swapped for a link meanwhile can
  // neither receive the temp file nor the rename.
  const held = HeldDirectory.open(dirname(target), target);
  // Hidden, and marked as freshfs's own (`.name.freshfs-<random>.tmp`), so one left behind by a
  // killed process is recognizable; listings never show it (`io/names`).
  const temp = held.entry(tempNameFor(basename(target)));
  let committed = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    if (!committed) {
      try {
        unlinkSync(temp);
      } catch {
        // Never created, or renamed away: nothing to remove.
      }
    }
    held.close();
  };
  try {
    const handle = await open(temp, "wx", options.mode ?? 0o666);
    try {
      await handle.writeFile(bytes);
      // open()'s mode passes through the umask; the file's own mode must not.
      const owner = options.owner;
      if (owner && (owner.uid !== process.getuid?.() || owner.gid !== process.getgid?.())) {
        await handle.chown(owner.uid, owner.gid).catch((error: unknown) => {
          if (errnoOf(error) !== "EPERM") throw error;
        });
      }
      // After chown, which clears set-user-ID and set-group-ID bits.
      if (options.mode !== undefined) await handle.chmod(options.mode);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    close();
    throw fromFsError(error, "write", target);
  }
  return {
    commit: () => {
      const final = held.entry(basename(target));
      if (options.exclusive) {
        // The temp name stays a second link to the file: `close` removes it.
        commitExclusive(temp, final);
      } else {
        renameSync(temp, final);
        committed = true;
      }
    },
    close,
  };
}

/**
 * A new file must not replace one that appeared meanwhile: `link` fails if the name exists,
 * atomically (rename would replace it). Where hard links are not supported, a rename after
 * the caller's check is the best left.
 */
function commitExclusive(temp: string, target: string): void {
  try {
    linkSync(temp, target);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno !== "EPERM" && errno !== "ENOTSUP" && errno !== "EOPNOTSUPP" && errno !== "EXDEV") {
      throw error;
    }
    renameSync(temp, target);
  }
}

// A temp file this old is no write in flight (a write takes milliseconds): one left by a
// process killed mid-write, removed when the same file is next written.
const STALE_TEMP_MS = 60_000;

/** Removes temp files of `target` that a killed writer left behind. */
export function removeLeftTemps(target: string): void {
  const dir = dirname(target);
  const prefix = tempPrefixFor(basename(target));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    if (!name.startsWith(prefix) || !isFreshfsTemp(name)) continue;
    try {
      const path = join(dir, name);
      if (now - lstatSync(path).mtimeMs > STALE_TEMP_MS) unlinkSync(path);
    } catch {
      // Gone already, or not ours to remove: either way nothing to do.
    }
  }
}

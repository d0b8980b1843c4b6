/**
 * Atomic replacement of a file's bytes: a temp file on the same mount, flushed, given the
 * file's mode, then renamed over the target, so a reader (or a crash) sees the old bytes or
 * the new ones, never a mix. The temp file is made out of the tree where it can be (the
 * repository's git directory, the user's runtime directory: `io/state-dirs`), so other tools
 * see one rename of the file itself and no temp name; beside the target where neither is on its
 * mount. Depends on `io/`, `errors`.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  linkSync,
  lstatSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { HeldDirectory } from "../io/held.js";
import { LOCK_STALE_MS } from "../io/lockfile.js";
import { isFreshfsTemp, lockNameFor, tempPrefixFor } from "../io/names.js";
import { STALE_TEMP_MS, TempPlace } from "../io/state-dirs.js";

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
 * A write whose bytes are flushed to a temp file, waiting for `commit`: a
 * patch of several files prepares every one before it renames any, so a failure to write one
 * changes none, and the renames run back to back.
 */
export interface PreparedWrite {
  /** The rename (or, `exclusive`, the link) that makes the new bytes the file's. Synchronous. */
  commit(): void;
  /**
   * Undoes the commit, through the directory held open: a new file is removed; a replaced one
   * comes back (`keepOld`), the very file (inode, owner, mode) where a hard link to it could be
   * kept, else its bytes and mode. Synchronous.
   */
  revert(): void;
  /** Removes the temp file (and a kept old file) unless still needed; lets the directory go. */
  close(): void;
}

export interface PrepareOptions extends Pick<AtomicWriteOptions, "mode" | "owner" | "exclusive"> {
  /** The bytes being replaced: `commit` keeps the old file aside so `revert` can put it back. */
  keepOld?: Buffer | undefined;
}

/** Flushes `bytes` to a temp file for `target` with the target's mode and owner. */
export async function prepareAtomic(
  target: string,
  bytes: Uint8Array,
  options: PrepareOptions = {},
): Promise<PreparedWrite> {
  // Every step goes through the directory held open: one swapped for a link meanwhile can
  // neither receive the temp file nor the rename.
  const directory = dirname(target);
  const held = HeldDirectory.open(directory, target);
  let place: TempPlace;
  try {
    place = TempPlace.open(directory, held);
  } catch (error) {
    held.close();
    throw fromFsError(error, "write", target);
  }
  // Hidden, and marked as freshfs's own (`.name.freshfs-<random>.tmp`), so one left behind by a
  // killed process is recognizable; listings never show it (`io/names`).
  const name = basename(target);
  const temp = place.fresh(name);
  const final = held.entry(name);
  let committed = false;
  let closed = false;
  /** The replaced file, kept under a temp name by a hard link until `close`. */
  let kept: string | undefined;
  const remove = (path: string) => {
    try {
      unlinkSync(path);
    } catch {
      // Never created, or renamed away: nothing to remove.
    }
  };
  const close = () => {
    if (closed) return;
    closed = true;
    // An exclusive commit leaves the temp name as a second link to the file.
    if (!committed || options.exclusive) remove(temp);
    if (kept !== undefined) remove(kept);
    place.close();
    held.close();
  };
  try {
    const handle = await open(temp, "wx", options.mode ?? 0o666);
    try {
      await handle.writeFile(bytes);
      // open()'s mode passes through the umask; the file's own mode must not.
      const owner = options.owner ?? (place.separate ? groupOfNewFile(held) : undefined);
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
      if (options.exclusive) {
        commitExclusive(temp, final);
      } else {
        if (options.keepOld) {
          const aside = place.fresh(name);
          try {
            linkSync(final, aside);
            kept = aside;
          } catch {
            // No hard links here: `revert` writes the old bytes back instead.
          }
        }
        renameSync(temp, final);
      }
      committed = true;
    },
    revert: () => {
      if (!committed) return;
      if (options.exclusive) {
        unlinkSync(final);
      } else if (kept !== undefined) {
        const old = kept;
        // Whatever happens, the old file is not removed by `close` any more.
        kept = undefined;
        try {
          renameSync(old, final);
        } catch (error) {
          throw new FreshfsError(
            "IO_ERROR",
            `its old content could not be put back (${errnoOf(error) ?? String(error)}); it is in ${keepVisible(held, old, name)}`,
            { cause: error },
          );
        }
      } else if (options.keepOld) {
        const back = place.fresh(name);
        try {
          writeFileSync(back, options.keepOld, { flag: "wx", mode: options.mode ?? 0o666 });
          if (options.mode !== undefined) chmodSync(back, options.mode);
          renameSync(back, final);
        } catch (error) {
          remove(back);
          throw error;
        }
      } else {
        throw new FreshfsError("IO_ERROR", `nothing was kept to put ${name} back with`);
      }
      committed = false;
    },
    close,
  };
}

/**
 * The owner a new file made in `held` gets from the kernel: the process's, but the directory's
 * group where it is set-group-ID. A temp file made elsewhere (a staging directory) gets this
 * by a chown, as it would have beside the target.
 */
const SET_GROUP_ID = 0o2000;

function groupOfNewFile(held: HeldDirectory): { uid: number; gid: number } | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  try {
    const stats = lstatSync(held.entry("."));
    return (stats.mode & SET_GROUP_ID) !== 0 ? { uid, gid: stats.gid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Gives a kept file that could not be put back a name of its own beside the file
 * (`name.freshfs-old-<hex>`, listed like any file, and never cleaned up as a temp file is);
 * returns the name it is under, the hidden one if even that failed.
 */
export function keepVisible(held: HeldDirectory, hidden: string, name: string): string {
  const visible = `${name}.freshfs-old-${randomBytes(6).toString("hex")}`;
  try {
    renameSync(hidden, held.entry(visible));
    return visible;
  } catch {
    return basename(hidden);
  }
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

/**
 * Removes what killed writers left beside `target`: temp files (made there where no staging
 * directory shares its mount), and a lock file of an earlier freshfs, which kept them beside
 * the file, once it is as old as that version's takeover rule allows.
 */
export function removeLeftTemps(target: string): void {
  const dir = dirname(target);
  const prefix = tempPrefixFor(basename(target));
  const oldLock = lockNameFor(basename(target));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    const temp = name.startsWith(prefix) && isFreshfsTemp(name);
    if (!temp && name !== oldLock) continue;
    try {
      const path = join(dir, name);
      if (now - lstatSync(path).mtimeMs > (temp ? STALE_TEMP_MS : LOCK_STALE_MS)) unlinkSync(path);
    } catch {
      // Gone already, or not ours to remove: either way nothing to do.
    }
  }
}

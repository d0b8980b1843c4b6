/**
 * The narrow I/O seam: the few file-system calls the guard makes, in one object, so tests can
 * wrap it and count calls (the fast path must cost exactly one `stat`) or inject a fault that
 * root cannot provoke for real. Behaviour always comes from the real file system.
 * Depends on nothing inside freshfs.
 */
import { type BigIntStats, constants, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";

export interface FsSeam {
  /** `stat` (follows symlinks) with nanosecond, bigint fields. */
  stat(path: string): Promise<BigIntStats>;
  /** Opens a file for reading. */
  open(path: string): Promise<FileHandle>;
  // Path resolution is synchronous: a few microseconds of syscalls, where a round trip through
  // libuv's thread pool costs tens; and one implementation serves the synchronous lookups too.
  realpathSync(path: string): string;
  readlinkSync(path: string): string;
  isSymlinkSync(path: string): boolean;
}

// O_NONBLOCK: a FIFO swapped in between a stat and the open must not block the open forever;
// for regular files the flag changes nothing.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

export const nodeFs: FsSeam = {
  stat: (path) => stat(path, { bigint: true }),
  open: (path) => open(path, READ_FLAGS),
  realpathSync: (path) => realpathSync.native(path),
  readlinkSync: (path) => readlinkSync(path),
  isSymlinkSync: (path) => {
    try {
      return lstatSync(path).isSymbolicLink();
    } catch {
      return false; // missing, or not reachable: either way there is no link to follow
    }
  },
};

/**
 * Canonical paths: absolute, symlinks resolved for the part of the path that exists. The guard
 * keys its records by these, the path lock keys its queues by these, and the scan cache will
 * key its listings by these. Depends on `io/fs` only.
 *
 * No case folding: whether `A.txt` and `a.txt` are one file is the file system's answer
 * (realpath gives it where the file exists), never a guess from the OS name.
 */
import { basename, dirname, join, resolve } from "node:path";
import { isGone } from "../errors.js";
import type { FsSeam } from "./fs.js";

/**
 * The real path of `path`; when it does not exist (a file about to be created, or the old side
 * of a rename), the real path of its nearest existing ancestor with the rest re-appended.
 */
export async function canonicalPath(path: string, fs: FsSeam): Promise<string> {
  const absolute = resolve(path);
  try {
    return await fs.realpath(absolute);
  } catch (error) {
    if (!isGone(error)) throw error;
    const parent = dirname(absolute);
    if (parent === absolute) return absolute;
    return join(await canonicalPath(parent, fs), basename(absolute));
  }
}

/** Synchronous twin of `canonicalPath`, for the guard's synchronous lookups. */
export function canonicalPathSync(path: string, fs: FsSeam): string {
  const absolute = resolve(path);
  try {
    return fs.realpathSync(absolute);
  } catch (error) {
    if (!isGone(error)) throw error;
    const parent = dirname(absolute);
    if (parent === absolute) return absolute;
    return join(canonicalPathSync(parent, fs), basename(absolute));
  }
}

/**
 * Whether an open descriptor is a file grep may report: under the search root, or the one file
 * named. On Linux a descriptor's magic link in /proc names the file it was opened on, whatever
 * path (and whatever link swapped in) led there. Used by the worker for every file with
 * something to report, and by its parent for a file the regex got stuck on.
 */
import { existsSync, readlinkSync } from "node:fs";
import { decodeName } from "../../io/bytes.js";

/** Undefined where /proc is missing: nothing can be told, and nothing is checked. */
export const PROC_FD = existsSync("/proc/self/fd") ? "/proc/self/fd" : undefined;

/**
 * `prefix` is the canonical root with a trailing slash; `named`, the canonical file named (then
 * only that file passes). Throws when the descriptor is not open.
 */
export function opensInside(fd: number, prefix: string, named: string | undefined): boolean {
  // A file deleted (or replaced by a rename) since it was opened is named "<path> (deleted)".
  // Read as bytes: a name that is not UTF-8 compares in its escaped form (io/bytes).
  const link = readlinkSync(`${PROC_FD}/${fd}`, { encoding: "buffer" });
  const opened = decodeName(link).replace(/ \(deleted\)$/, "");
  return named ? opened === named : opened.startsWith(prefix);
}

/** The root with a trailing slash, as `opensInside` takes it. */
export function rootPrefix(root: string): string {
  return root.endsWith("/") ? root : `${root}/`;
}

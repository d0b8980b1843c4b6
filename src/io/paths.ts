/**
 * Canonical paths: absolute, with every symlink resolved, as the kernel would resolve them. The
 * guard keys its records by these, the path lock keys its queues by these, and the scan cache
 * will key its listings by these. Depends on `io/fs` and `errors`.
 *
 * No case folding: whether `A.txt` and `a.txt` are one file is the file system's answer
 * (realpath gives it where the file exists), never a guess from the OS name.
 */
import { basename, dirname, isAbsolute, join, sep } from "node:path";
import { FreshfsError, isGone } from "../errors.js";
import type { FsSeam } from "./fs.js";

/**
 * `path` made absolute without touching `..`: `link/..` is the parent of the link's target to
 * the kernel, not the directory holding the link, so only realpath may resolve it.
 */
export function absolutePath(path: string): string {
  if (typeof path !== "string" || path.length === 0) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `A path must be a non-empty string, not ${JSON.stringify(path)}.`,
    );
  }
  if (path.includes("\0")) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `A path cannot contain a NUL byte: ${JSON.stringify(path)}.`,
    );
  }
  return isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`;
}

// Linux's MAXSYMLINKS: past this many links in one resolution, the kernel answers ELOOP too.
const MAX_LINK_HOPS = 40;

/**
 * The real path of `path`. Where it does not exist (a file about to be created, the old side
 * of a rename), the real path of its nearest existing ancestor with the rest re-appended, and
 * a dangling symlink followed to where its target would be: that is where a write lands, so a
 * lock or record taken before the target exists keeps its key after.
 */
export function canonicalPath(path: string, fs: FsSeam): string {
  const absolute = absolutePath(path);
  for (let attempt = 0; ; attempt++) {
    try {
      return resolveFrom(absolute, fs, { hops: 0 });
    } catch (error) {
      // EINVAL: a name was a link when looked at and not one when read (or the reverse), as
      // another process swapped it; the resolution is only ever right as a whole, so again.
      const changed = (error as NodeJS.ErrnoException).code === "EINVAL";
      if (!changed || attempt >= CHANGED_RETRIES) throw error;
    }
  }
}

/** Resolutions tried again when the path changed under the one before (see canonicalPath). */
const CHANGED_RETRIES = 3;

function resolveFrom(absolute: string, fs: FsSeam, budget: { hops: number }): string {
  try {
    return fs.realpathSync(absolute);
  } catch (error) {
    if (!isGone(error)) throw error;
  }
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  // The parent is real (no links, no `..`), so joining one name to it, even `..`, is exact.
  const candidate = join(resolveFrom(parent, fs, budget), basename(absolute));
  if (!fs.isSymlinkSync(candidate)) return candidate;
  if (++budget.hops > MAX_LINK_HOPS) {
    throw Object.assign(new Error(`too many levels of symbolic links: ${absolute}`), {
      code: "ELOOP",
    });
  }
  const target = fs.readlinkSync(candidate);
  return resolveFrom(
    isAbsolute(target) ? target : `${dirname(candidate)}${sep}${target}`,
    fs,
    budget,
  );
}

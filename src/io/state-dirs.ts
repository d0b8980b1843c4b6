/**
 * Where freshfs keeps its own files, out of the user's tree, as git keeps `index.lock` in
 * `.git/` and Watchman its state in a directory of its own: nothing freshfs makes shows in
 * `git status`, an IDE's file tree or a build watcher's events. Depends on `io/repository`,
 * `io/runtime-dir`, `io/held`, `io/names`, `errors`.
 *
 * - Lock files (`io/lockfile`): in a git work tree, `<common dir>/freshfs/locks/`, named by a
 *   digest of the worktree and the path relative to its top, so every process that reaches the
 *   repository (through any mount path, from any container) agrees on one name, and every
 *   worktree of a repository keeps them in one place. Elsewhere, or where that directory
 *   cannot be written (a read-only `.git`), the user's runtime directory's `locks/`, named by
 *   the directory's device and a digest of the real path.
 * - Temp files of a write (`tools/atomic`): a directory of this user's on the same mount as the
 *   target, since rename(2) cannot cross one: `<common dir>/freshfs/tmp-<uid>/`, else the runtime
 *   directory's `staging/`; where neither is on the target's mount (a git directory on another
 *   file system, a runtime directory on tmpfs), beside the target, as before.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  opendirSync,
  renameSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { HeldDirectory } from "./held.js";
import { isFreshfsTemp, tempNameFor } from "./names.js";
import { findWorkTree, type WorkTree } from "./repository.js";
import { ensurePrivateDir, forgetPrivateDir, runtimeDirPath } from "./runtime-dir.js";

/** Where one entry's lock file lives. */
export interface LockPlace {
  /** The directory holding the lock file. */
  readonly dir: string;
  /** The lock file's name in it: `.<readable tail>.<digest>.freshfs-lock`. */
  readonly name: string;
  /** The repository's git directory (shared by everyone who writes it), or this user's own. */
  readonly scope: "repository" | "user";
}

/** Hex digits of SHA-256 in a lock's name: a collision only makes two files share a lock. */
const DIGEST_CHARS = 16;
/** Characters of the file's own name kept in its lock's name, for people reading messages. */
const TAIL_CHARS = 48;

/** The entry's name as it may stand in a name of freshfs's: ASCII letters, digits, `._-`. */
function readableTail(name: string): string {
  const tail = name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, TAIL_CHARS);
  return tail === "" ? "_" : tail;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, DIGEST_CHARS);
}

/** The errors that mean "freshfs may not keep its files here": the next place is tried. */
function refused(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === "EACCES" || errno === "EPERM" || errno === "EROFS";
}

const madeShared = new Set<string>();

/**
 * `<common>/freshfs/<sub>`, made with the common directory's own permission bits (a shared
 * repository's group-writable, set-group-ID ones, as git's `core.sharedRepository` gives its
 * own directories), so every user who may write the repository may lock in it.
 */
function ensureRepositoryDir(common: string, sub: string): string {
  const dir = join(common, "freshfs", sub);
  if (madeShared.has(dir)) return dir;
  const mode = statSync(common).mode & 0o7777;
  for (const path of [join(common, "freshfs"), dir]) {
    try {
      mkdirSync(path, { mode });
      // mkdir's mode passes through the umask; the repository's must not.
      chmodSync(path, mode);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
  }
  if (!lstatSync(dir).isDirectory()) {
    throw new FreshfsError("IO_ERROR", `${dir} is not a directory`, { path: dir });
  }
  madeShared.add(dir);
  return dir;
}

/** The runtime directory's `sub`, private to this user. */
function ensureUserDir(sub: string): string {
  const base = ensurePrivateDir(runtimeDirPath());
  return ensurePrivateDir(join(base, sub));
}

/** Forgets what was made, so the next use makes it again (removed by a person or a cleaner). */
export function forgetStateDir(dir: string): void {
  madeShared.delete(dir);
  forgetPrivateDir(dir);
  forgetPrivateDir(dirname(dir));
}

function relativeTo(top: string, entry: string): string {
  return entry.slice(top === "/" ? 1 : top.length + 1);
}

/**
 * Where the lock of the directory entry `entry` (a canonical path) lives; undefined when its
 * directory does not exist (nothing can be there to change, and a create is exclusive).
 * `scope: "user"` skips the repository (whose lock directory refused a lock file). Throws
 * `PERMISSION_DENIED` when only the user's runtime directory is left and it is not safe.
 */
export function lockPlaceOf(
  entry: string,
  scope: LockPlace["scope"] = "repository",
): LockPlace | undefined {
  const parent = dirname(entry);
  let dev: number;
  try {
    dev = statSync(parent).dev;
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "ENOENT" || errno === "ENOTDIR") return undefined;
    throw fromFsError(error, "lock", entry);
  }
  const tail = readableTail(basename(entry));
  const tree: WorkTree | undefined = scope === "repository" ? findWorkTree(parent) : undefined;
  if (tree) {
    try {
      const dir = ensureRepositoryDir(tree.commonDir, "locks");
      const key = digest(`${tree.id}\0${relativeTo(tree.top, entry)}`);
      return { dir, name: `.${tail}.${key}.freshfs-lock`, scope: "repository" };
    } catch (error) {
      if (!refused(error)) throw fromFsError(error, "lock", entry);
      // A read-only git directory: this user's own place, as outside a repository.
    }
  }
  const dir = ensureUserDir("locks");
  const key = digest(`${dev}\0${entry}`);
  return { dir, name: `.${tail}.${dev.toString(16)}-${key}.freshfs-lock`, scope: "user" };
}

/** Probes with a name that cannot exist: rename(2) checks the mounts before it looks it up. */
const PROBE = ".freshfs-probe-of-the-mount";

/**
 * Whether a rename from `held` into `staging` can work: Linux answers EXDEV for two mounts
 * before it looks the old name up, and ENOENT (nothing is moved, nothing is made) otherwise.
 */
function sameMount(held: HeldDirectory, staging: HeldDirectory): boolean {
  try {
    // Something of the user's by that name is never moved: the answer is then no.
    if (lstatSync(held.entry(PROBE), { throwIfNoEntry: false })) return false;
    renameSync(held.entry(PROBE), staging.entry(PROBE));
  } catch (error) {
    return errnoOf(error) === "ENOENT";
  }
  // Made between the look and the probe, and moved: put back, and not trusted.
  try {
    renameSync(staging.entry(PROBE), held.entry(PROBE));
  } catch {
    // Taken back by whoever made it.
  }
  return false;
}

function openOwn(dir: string): HeldDirectory | undefined {
  try {
    return HeldDirectory.open(dir, dir);
  } catch {
    forgetStateDir(dir);
    return undefined;
  }
}

/**
 * A directory held open, of this user's and outside the tree, where temp files for entries of
 * `held` (the directory `dir`, held open) can be made and renamed from; undefined when there is
 * none on its mount (the temp files then go beside the target). The caller closes it.
 */
export function openStaging(dir: string, held: HeldDirectory): HeldDirectory | undefined {
  const places: (() => string)[] = [];
  const tree = findWorkTree(dir);
  if (tree) {
    places.push(() => {
      const shared = dirname(ensureRepositoryDir(tree.commonDir, "locks"));
      return ensurePrivateDir(join(shared, `tmp-${process.getuid?.() ?? "user"}`));
    });
  }
  places.push(() => ensureUserDir("staging"));
  for (const place of places) {
    let path: string;
    try {
      path = place();
    } catch {
      continue; // not writable, or not safe: the next place, or beside the target
    }
    const staging = openOwn(path);
    if (!staging) continue;
    if (sameMount(held, staging)) {
      sweepStaging(path, staging);
      return staging;
    }
    staging.close();
  }
  return undefined;
}

/** A temp file whose inode changed this long ago is no write in flight (one takes milliseconds). */
export const STALE_TEMP_MS = 60_000;
/** Each state directory is swept at most this often by a process. */
export const SWEEP_INTERVAL_MS = 60_000;
/** Entries a sweep looks at, at most: it runs on a mutation's path. */
export const SWEEP_MAX_ENTRIES = 1000;

const lastSwept = new Map<string, number>();

/** Whether `dir` is due a sweep (and marks it swept now). */
export function sweepDue(dir: string): boolean {
  const now = Date.now();
  const last = lastSwept.get(dir);
  if (last !== undefined && now - last < SWEEP_INTERVAL_MS) return false;
  lastSwept.set(dir, now);
  return true;
}

/** Calls `visit` for at most SWEEP_MAX_ENTRIES names of `dir` (held open as `held`). */
export function eachEntry(held: HeldDirectory, visit: (name: string) => void): void {
  let listing: ReturnType<typeof opendirSync> | undefined;
  try {
    listing = opendirSync(held.entry("."));
    for (let seen = 0; seen < SWEEP_MAX_ENTRIES; seen++) {
      const entry = listing.readSync();
      if (!entry) break;
      visit(entry.name);
    }
  } catch {
    // Unreadable, or gone: nothing to sweep.
  } finally {
    listing?.closeSync();
  }
}

/**
 * Removes temp files a killed writer left in a staging directory: by the age of their inode's
 * last change (a kept old file is a link to a file that may be years old; linking it set its
 * ctime).
 */
function sweepStaging(dir: string, held: HeldDirectory): void {
  if (!sweepDue(dir)) return;
  const now = Date.now();
  eachEntry(held, (name) => {
    if (!isFreshfsTemp(name)) return;
    try {
      const path = held.entry(name);
      if (now - lstatSync(path).ctimeMs > STALE_TEMP_MS) unlinkSync(path);
    } catch {
      // Gone already.
    }
  });
}

/**
 * Where a change's temp names go for entries of one directory: a staging directory of this
 * user's on its mount (`openStaging`), else the directory itself.
 */
export class TempPlace {
  readonly #held: HeldDirectory;
  readonly #staging: HeldDirectory | undefined;

  private constructor(held: HeldDirectory, staging: HeldDirectory | undefined) {
    this.#held = held;
    this.#staging = staging;
  }

  /** For entries of `dir`, held open as `held` (which the caller keeps and closes). */
  static open(dir: string, held: HeldDirectory): TempPlace {
    return new TempPlace(held, openStaging(dir, held));
  }

  /** Whether temp names are out of the tree. */
  get separate(): boolean {
    return this.#staging !== undefined;
  }

  /**
   * A fresh temp name for the entry `name`, as a path through a directory held open. In the
   * staging directory it keeps only a readable tail of the name; beside the target, all of it
   * (so the next write of that file finds a killed one's leftovers, `tools/atomic`).
   */
  fresh(name: string): string {
    return this.#staging
      ? this.#staging.entry(tempNameFor(readableTail(name)))
      : this.#held.entry(tempNameFor(name));
  }

  close(): void {
    this.#staging?.close();
  }
}

/**
 * The user's own directory for freshfs's state outside any repository: lock files of trees
 * that are not git work trees, and temp files on their way into them. Private to the user, as
 * tmux's and ssh-agent's sockets are: `$FRESHFS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/freshfs`,
 * else `<tmpdir>/freshfs-<uid>`; made with mode 0700, and used only while it is a directory
 * (not a link) owned by this user that no other user may enter. Depends on `errors`.
 */
import { lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";

/** The base directory, by the environment as it is now (not captured at import). */
export function runtimeDirPath(env: NodeJS.ProcessEnv = process.env): string {
  const own = env.FRESHFS_RUNTIME_DIR;
  if (own && isAbsolute(own)) return own;
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && isAbsolute(xdg)) return join(xdg, "freshfs");
  return userTmpdir();
}

let lastTmp: { readonly key: string; readonly path: string } | undefined;

/**
 * `<tmpdir>/freshfs-<uid>`, kept while the variables `os.tmpdir()` reads stay the same: it and
 * the uid ask the kernel (for the process's credentials, about 7 system calls), and the walk
 * asks for every directory it enters (a fifth of a listing's time on the Linux tree).
 */
function userTmpdir(): string {
  const env = process.env;
  const key = `${env.TMPDIR}\0${env.TMP}\0${env.TEMP}`;
  if (lastTmp?.key !== key) {
    lastTmp = { key, path: join(tmpdir(), `freshfs-${process.getuid?.() ?? "user"}`) };
  }
  return lastTmp.path;
}

/** What a private directory holds, and the variable that puts it elsewhere: for messages. */
export interface PrivateDirUse {
  readonly holds: string;
  readonly variable: string;
}

const RUNTIME_USE: PrivateDirUse = {
  holds: "its lock and temp files",
  variable: "FRESHFS_RUNTIME_DIR",
};

/** Directories checked by this process: checked once, made again if removed (a tmp cleaner). */
const checked = new Set<string>();

/**
 * Makes `dir` (mode 0700) if missing and checks that it is this user's alone; throws
 * `PERMISSION_DENIED` naming what is wrong, since a directory another user may write could hand
 * this process a lock or a temp file of theirs.
 */
export function ensurePrivateDir(dir: string, about: PrivateDirUse = RUNTIME_USE): string {
  if (checked.has(dir)) return dir;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw fromFsError(error, "create", dir);
  }
  const stats = lstatSync(dir);
  const uid = process.getuid?.();
  const problem = !stats.isDirectory()
    ? "is not a directory"
    : uid !== undefined && stats.uid !== uid
      ? `belongs to uid ${stats.uid}, not to this user (uid ${uid})`
      : (stats.mode & 0o077) !== 0
        ? `is open to other users (mode ${(stats.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) {
    throw new FreshfsError(
      "PERMISSION_DENIED",
      `freshfs keeps ${about.holds} in ${dir}, which ${problem}; nothing was changed. Remove it (freshfs makes it again, mode 0700), or set ${about.variable} to a directory of your own.`,
      { path: dir },
    );
  }
  checked.add(dir);
  return dir;
}

/** Forgets that `dir` was checked: it is made and checked again at its next use. */
export function forgetPrivateDir(dir: string): void {
  checked.delete(dir);
}

/** The user's runtime directory, made and checked. */
export function userRuntimeDir(env: NodeJS.ProcessEnv = process.env): string {
  return ensurePrivateDir(runtimeDirPath(env));
}

/**
 * Whether the directory `name` in `parent` is the runtime directory: freshfs's own state, never
 * listed, as `.git` is not (a workspace rooted at the temp dir would otherwise list, and watch,
 * every lock file of the user's).
 */
export function isRuntimeDir(parent: string, name: string): boolean {
  const path = runtimeDirPath();
  return basename(path) === name && dirname(path) === parent;
}

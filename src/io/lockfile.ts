/**
 * Locks that other freshfs processes honour, so two never lose each other's accepted edits, in
 * the manner of git's lockfile: a lock file made so that exactly one process has it (its
 * holder's record is written to a temp file, then hard-linked to the lock's name, which fails if
 * the name exists; `O_CREAT|O_EXCL` where there are no hard links); removed when the change is
 * done. The lock file lives out of
 * the user's tree (`io/state-dirs`: the repository's git directory, else the user's runtime
 * directory), where no other tool sees it. Depends on `io/held`, `io/names`, `io/state-dirs`,
 * `errors`.
 *
 * git writes the new content into the lock file itself and renames it into place. Here the lock
 * holds its holder's identity instead (pid, boot and pid-namespace ids, start time), for as long
 * as it is held, and the content goes to a temp file of its own: a waiter can then tell within
 * milliseconds that a holder died (SIGKILL, a crash, an OOM kill) and take the lock over, where a
 * lock that holds content says nothing of who holds it. That costs a create, a write, a link and
 * two unlinks per mutation (measured in BENCHMARKS.md).
 *
 * npm's `proper-lockfile` detects death only by age (a lock untouched for 10 s is stale), so a
 * killed holder would stall every writer of the file for 10 s: written by hand for the pid test.
 */
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  futimesSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { HeldDirectory } from "./held.js";
import { isFreshfsTemp, tempNameFor } from "./names.js";
import {
  eachEntry,
  forgetStateDir,
  type LockPlace,
  lockPlaceOf,
  STALE_TEMP_MS,
  sweepDue,
} from "./state-dirs.js";

/**
 * How long a mutation waits for another freshfs process's lock of the same file before it gives
 * up with `LOCKED`. Holders keep a lock for the milliseconds of one write (a 32 MiB file with its
 * flush: well under a second here), so a wait this long means a holder that is stuck.
 */
export const LOCK_WAIT_MS = 5000;

/**
 * A lock whose holder cannot be checked (another machine, another pid namespace: a container
 * sharing the directory) is taken over once its file has not been refreshed for this long.
 * Holders refresh it every quarter of this while they hold it. A holder this process can check
 * (same kernel and pid namespace) is taken over as soon as it is gone, whatever the lock's age.
 */
export const LOCK_STALE_MS = 10_000;

const REFRESH_MS = LOCK_STALE_MS / 4;
/** Polls back off from 1 ms to this: a holder's write takes milliseconds. */
const MAX_POLL_MS = 8;

export interface FileLockOptions {
  /** Stops waiting (the holder is not interrupted). */
  signal?: AbortSignal | undefined;
  /** @default LOCK_WAIT_MS */
  waitMs?: number | undefined;
  /** What the holder is doing, for a waiter's `LOCKED` message ("edit", "rename"). */
  operation?: string | undefined;
  /** The path as the caller shows it, in messages. @default the path itself */
  shown?: string | undefined;
  /** Where the lock lives, worked out already (`lockPlaceOf`). */
  place?: LockPlace | undefined;
}

/** Who holds a lock, as its file says. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** The kernel's boot id (Linux): another boot, or another machine. */
  readonly boot: string;
  /** The pid namespace (Linux): pids of another namespace mean nothing here. */
  readonly pidns: string;
  /** The process's start time in clock ticks since boot (Linux): a reused pid is another process. */
  readonly start: string;
  readonly operation: string;
  /** Wall clock (ms) when the lock was taken. */
  readonly since: number;
}

interface Identity {
  readonly pid: number;
  readonly host: string;
  readonly boot: string;
  readonly pidns: string;
  readonly start: string;
}

function readOr(read: () => string, fallback: string): string {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/**
 * The state (3rd field) and start time (22nd) of /proc/<pid>/stat; the name between them and
 * the pid may hold spaces and parentheses, so fields are counted from the last ")".
 */
function procStat(pid: number | "self"): { state: string; start: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "", start: fields[19] ?? "" };
}

let identity: Identity | undefined;

/** This process, as its locks name it. Read once, on the first lock (not at import). */
function self(): Identity {
  identity ??= {
    pid: process.pid,
    host: hostname(),
    boot: readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), ""),
    pidns: readOr(() => readlinkSync("/proc/self/ns/pid"), ""),
    start: readOr(() => procStat("self").start, ""),
  };
  return identity;
}

/** A lock held by this process: release it once the change is done (or abandoned). */
export class FileLock {
  readonly #held: HeldDirectory;
  readonly #name: string;
  readonly #path: string;
  readonly #fd: number;
  readonly #ino: bigint;
  #refresh: NodeJS.Timeout | undefined;

  /** @internal */
  constructor(held: HeldDirectory, place: LockPlace, fd: number) {
    this.#held = held;
    this.#name = place.name;
    this.#path = join(place.dir, place.name);
    this.#fd = fd;
    this.#ino = fstatSync(fd, { bigint: true }).ino;
    this.#arm();
  }

  /** The lock file's path. */
  get path(): string {
    return this.#path;
  }

  // A waiter that cannot check this process's pid judges the lock by its age: keep it young.
  #arm(): void {
    this.#refresh = setTimeout(() => {
      try {
        const now = new Date();
        futimesSync(this.#fd, now, now);
      } catch {
        return; // released meanwhile
      }
      this.#arm();
    }, REFRESH_MS);
    this.#refresh.unref();
  }

  /** Removes the lock file, if it is still this lock's (a waiter that wrongly took it over owns it now). */
  release(): void {
    clearTimeout(this.#refresh);
    try {
      const entry = this.#held.entry(this.#name);
      if (lstatSync(entry, { bigint: true }).ino === this.#ino) unlinkSync(entry);
    } catch {
      // Gone already: nothing to remove.
    }
    try {
      closeSync(this.#fd);
    } catch {
      // Closed already.
    }
    this.#held.close();
  }
}

/** What a waiter saw of the lock file: its inode (so it removes only that one) and its holder. */
interface Seen {
  readonly ino: bigint;
  readonly mtimeMs: number;
  readonly holder: LockHolder | undefined;
}

/** The lock file as it is now; undefined when it is gone (released meanwhile). */
function inspect(path: string): Seen | undefined {
  let stats: BigIntStats | undefined;
  try {
    stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    stats = undefined;
  }
  if (!stats) return undefined;
  let holder: LockHolder | undefined;
  // Not a file of ours (a directory, a link), or one this user may not read: no holder to
  // check, so only its age can tell. Either way it is waited for, never spun on.
  if (stats.isFile()) {
    try {
      const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        if (fstatSync(fd, { bigint: true }).ino === stats.ino) {
          holder = parseHolder(readFileSync(fd, "utf8"));
        }
      } finally {
        closeSync(fd);
      }
    } catch {
      holder = undefined;
    }
  }
  return { ino: stats.ino, mtimeMs: Number(stats.mtimeMs), holder };
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== "number" || typeof value.since !== "number") return undefined;
    return {
      pid: value.pid,
      host: String(value.host ?? ""),
      boot: String(value.boot ?? ""),
      pidns: String(value.pidns ?? ""),
      start: String(value.start ?? ""),
      operation: String(value.operation ?? ""),
      since: value.since,
    };
  } catch {
    // Being written (a holder between its create and its write), or killed in between.
    return undefined;
  }
}

/**
 * Whether the holder is certainly gone. Checked by pid only where pids mean the same thing: the
 * same boot of the same kernel, the same pid namespace; a pid whose process started at another
 * time was reused. Elsewhere only age tells, and the holder refreshes its lock while it lives.
 */
function isAbandoned(seen: Seen, now: number): boolean {
  const me = self();
  const holder = seen.holder;
  const checkable =
    holder !== undefined &&
    holder.pid !== me.pid &&
    (me.boot === ""
      ? holder.host === me.host && holder.boot === ""
      : holder.boot === me.boot && holder.pidns === me.pidns);
  if (checkable) {
    try {
      process.kill(holder.pid, 0);
    } catch (error) {
      if (errnoOf(error) === "ESRCH") return true;
    }
    if (me.boot === "" || holder.start === "") return false;
    let stat: { state: string; start: string };
    try {
      stat = procStat(holder.pid);
    } catch {
      return false; // alive, but hidden from this user (/proc mounted with hidepid)
    }
    // A zombie is dead, only not yet reaped by its parent; another start time, another process.
    return stat.state === "Z" || stat.state === "X" || stat.start !== holder.start;
  }
  return now - seen.mtimeMs > LOCK_STALE_MS;
}

/**
 * Removes the abandoned lock `seen` and nothing else: it is renamed aside, and removed only if
 * the inode moved is the one judged (another waiter may have replaced it with a live lock in
 * between; that one is put back).
 */
function breakLock(held: HeldDirectory, name: string, seen: Seen): void {
  const aside = held.entry(tempNameFor(name));
  try {
    renameSync(held.entry(name), aside);
  } catch {
    return; // released, or taken over by another waiter: look again
  }
  try {
    if (lstatSync(aside, { bigint: true }).ino !== seen.ino) linkSync(aside, held.entry(name));
  } catch {
    // A new lock was taken meanwhile: the one moved aside is lost to its holder, whose release
    // then leaves the newer alone (it compares inodes). Needs three processes within
    // microseconds of a crash; the check before each rename still stands.
  }
  try {
    unlinkSync(aside);
  } catch {
    try {
      rmdirSync(aside); // an empty directory someone made in the lock's place
    } catch {
      // Gone already, or not ours to remove: it stays aside, hidden as a temp file is.
    }
  }
}

function holderText(holder: LockHolder | undefined, now: number): string {
  if (!holder) return "another freshfs process (its lock file names no holder yet)";
  const op = holder.operation ? `, ${holder.operation}` : "";
  const age = Math.max(0, (now - holder.since) / 1000).toFixed(1);
  return `freshfs process ${holder.pid} on ${holder.host || "an unknown host"}${op}, held for ${age} s`;
}

function aborted(): FreshfsError {
  return new FreshfsError("ABORTED", "Stopped waiting for the file lock: the call was aborted.");
}

/**
 * Takes the lock of the directory entry `path` (a canonical path: a file's real path, or a link
 * or directory by its own name). Resolves to `undefined` when no lock can exist there: the
 * directory is missing (so the entry is too, and a change that creates it is exclusive anyway).
 * Throws `LOCKED` after `waitMs` (naming the holder and the lock file), `ABORTED` on the signal,
 * `PERMISSION_DENIED` when no place for the lock file may be written.
 */
export async function acquireFileLock(
  path: string,
  options: FileLockOptions = {},
): Promise<FileLock | undefined> {
  const shown = options.shown ?? path;
  const waitMs = options.waitMs ?? LOCK_WAIT_MS;
  const started = Date.now();
  const me = self();
  const record = JSON.stringify({
    pid: me.pid,
    host: me.host,
    boot: me.boot,
    pidns: me.pidns,
    start: me.start,
    operation: options.operation ?? "",
    since: started,
  });
  const opened = openPlace(path, options.place, record, shown);
  if (!opened) return undefined;
  const { held, place, staged } = opened;
  const lockPath = join(place.dir, place.name);
  let delay = 1;
  try {
    for (;;) {
      if (options.signal?.aborted) throw aborted();
      if (placeLock(held, place.name, staged)) {
        const lock = new FileLock(held, place, staged.fd);
        staged.placed = true;
        return lock;
      }
      const now = Date.now();
      const seen = inspect(held.entry(place.name));
      if (!seen) continue;
      if (isAbandoned(seen, now)) {
        breakLock(held, place.name, seen);
        continue;
      }
      if (now - started >= waitMs) {
        throw new FreshfsError(
          "LOCKED",
          `${shown} is being changed by ${holderText(seen.holder, now)}; waited ${(waitMs / 1000).toFixed(1)} s for it. Retry in a moment. If no freshfs process runs there any more, remove ${lockPath}.`,
          { path },
        );
      }
      try {
        await sleep(Math.min(delay, waitMs - (now - started)), undefined, {
          signal: options.signal,
        });
      } catch {
        throw aborted();
      }
      delay = Math.min(delay * 2, MAX_POLL_MS);
    }
  } finally {
    // Through the held directory, so before it is let go (the lock, once placed, keeps it).
    unstage(staged);
    if (!staged.placed) held.close();
  }
}

interface OpenedPlace {
  readonly held: HeldDirectory;
  readonly place: LockPlace;
  readonly staged: Staged;
}

/**
 * The lock directory held open, swept when due, with the holder's record staged in it. A
 * repository's lock directory that refuses the record (a read-only `.git`, another user's)
 * gives way to the user's own; one removed since it was made is made again, once.
 */
function openPlace(
  path: string,
  given: LockPlace | undefined,
  record: string,
  shown: string,
): OpenedPlace | undefined {
  let place = given ?? lockPlaceOf(path);
  let retried = false;
  for (;;) {
    if (!place) return undefined;
    let held: HeldDirectory | undefined;
    try {
      held = HeldDirectory.open(place.dir, place.dir);
      if (sweepDue(place.dir)) sweepLocks(held);
      return { held, place, staged: stage(held, place.name, record) };
    } catch (error) {
      held?.close();
      const errno = error instanceof FreshfsError ? error.code : errnoOf(error);
      if ((errno === "NOT_FOUND" || errno === "ENOENT") && !retried) {
        retried = true;
        forgetStateDir(place.dir);
        place = lockPlaceOf(path, place.scope);
        continue;
      }
      const refused =
        errno === "EACCES" ||
        errno === "EPERM" ||
        errno === "EROFS" ||
        errno === "PERMISSION_DENIED";
      if (refused && place.scope === "repository") {
        place = lockPlaceOf(path, "user");
        continue;
      }
      if (error instanceof FreshfsError) throw error;
      throw fromFsError(error, "lock", shown);
    }
  }
}

/**
 * Removes what dead holders left in a lock directory: their lock files (judged as a waiter
 * judges them, so a live holder's is never touched) and their staged records.
 */
function sweepLocks(held: HeldDirectory): void {
  const now = Date.now();
  eachEntry(held, (name) => {
    try {
      if (isFreshfsTemp(name)) {
        if (now - lstatSync(held.entry(name)).ctimeMs > STALE_TEMP_MS) {
          unlinkSync(held.entry(name));
        }
      } else if (name.endsWith(".freshfs-lock")) {
        const seen = inspect(held.entry(name));
        if (seen && isAbandoned(seen, now)) breakLock(held, name, seen);
      }
    } catch {
      // Gone already, or not this user's to remove.
    }
  });
}

/**
 * The holder's record, written out before the lock is tried: a lock file then appears with its
 * record whole (`link`), so a holder killed at any moment leaves either no lock or one that
 * names it, which the next writer can judge by its pid at once. (Created empty and written
 * after, a lock whose holder was killed in between named nobody, and blocked writers for
 * LOCK_STALE_MS: the crash tests' random kills found it.)
 */
interface Staged {
  /** A temp file in the lock directory (removed by a sweep if a kill leaves it). */
  readonly temp: string;
  /** The staged file's descriptor, or the lock's once it is placed without `link`. */
  fd: number;
  readonly record: string;
  /** The descriptor now belongs to the lock. */
  placed: boolean;
}

function stage(held: HeldDirectory, lockName: string, record: string): Staged {
  const temp = held.entry(tempNameFor(lockName));
  const fd = openSync(temp, CREATE, 0o644);
  try {
    writeSync(fd, record);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  return { temp, fd, record, placed: false };
}

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Makes the staged record the lock, if there is none: `link` fails when the name exists,
 * atomically. Where hard links are not supported, the lock is created and written in two steps
 * (a holder killed between them is then judged by age, as one that names no holder).
 */
function placeLock(held: HeldDirectory, name: string, staged: Staged): boolean {
  try {
    linkSync(staged.temp, held.entry(name));
    return true;
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "EEXIST") return false;
    if (errno !== "EPERM" && errno !== "ENOTSUP" && errno !== "EOPNOTSUPP" && errno !== "EMLINK") {
      throw error;
    }
  }
  let fd: number;
  try {
    fd = openSync(held.entry(name), CREATE, 0o644);
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return false;
    throw error;
  }
  writeSync(fd, staged.record);
  closeSync(staged.fd);
  staged.fd = fd;
  return true;
}

function unstage(staged: Staged): void {
  try {
    unlinkSync(staged.temp);
  } catch {
    // Gone already.
  }
  if (!staged.placed) closeSync(staged.fd);
}

/**
 * Daemons of one run of this process, started the way users start them (a client finds none and
 * spawns one detached, with this process's environment): a runtime directory and a cache
 * directory of the run's own, put in `process.env` so that the daemon a client starts serves a
 * socket no other run shares and keeps its snapshots apart; and every daemon serving a socket
 * there, found by its command line and killed by its process id. Linux (/proc). Imports nothing
 * of vitest: the stress suites use it too.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface DaemonDirs {
  /** `FRESHFS_RUNTIME_DIR` while in use: the daemon's socket, lock and log. */
  readonly runtime: string;
  /** `FRESHFS_CACHE_DIR` while in use: the daemon's snapshots. */
  readonly cache: string;
  /** Kills every daemon serving a socket in `runtime`, puts the environment back, removes both. */
  release(): void;
}

function privateDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  chmodSync(dir, 0o700);
  return dir;
}

/** Fresh private (0700) runtime and cache directories, set in `process.env` until `release`. */
export function useDaemonDirs(): DaemonDirs {
  const saved = {
    runtime: process.env.FRESHFS_RUNTIME_DIR,
    cache: process.env.FRESHFS_CACHE_DIR,
  };
  // Short names: a Unix socket's path has a bound of 108 bytes.
  const runtime = privateDir("fdr-");
  const cache = privateDir("fdc-");
  process.env.FRESHFS_RUNTIME_DIR = runtime;
  process.env.FRESHFS_CACHE_DIR = cache;
  return {
    runtime,
    cache,
    release() {
      killDaemonsIn(runtime);
      restore("FRESHFS_RUNTIME_DIR", saved.runtime);
      restore("FRESHFS_CACHE_DIR", saved.cache);
      rmSync(runtime, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    },
  };
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** Whether process `pid` is a daemon serving a socket in `runtime` (`daemon run --socket <runtime>/...`). */
export function servesIn(pid: number, runtime: string): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return false;
  }
  const at = argv.indexOf("--socket");
  return at > 0 && argv[at - 1] === "run" && argv[at + 1]?.startsWith(`${runtime}/`) === true;
}

/**
 * The process ids of the daemons serving a socket in `runtime`, starting or listening; a dead
 * one (a zombie has no command line) is not one.
 */
export function daemonsIn(runtime: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => servesIn(pid, runtime));
}

/** SIGKILLs every daemon serving a socket in `runtime`; returns their process ids. */
export function killDaemonsIn(runtime: string): number[] {
  const pids = daemonsIn(runtime);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone between the look and the kill.
    }
  }
  return pids;
}

/**
 * Every test file gets a runtime directory of its own (`FRESHFS_RUNTIME_DIR`: lock files of
 * trees outside a repository, temp files, daemons' sockets) and a cache directory
 * (`FRESHFS_CACHE_DIR`: daemons' snapshots), so that nothing a test makes lands
 * in the user's, and any daemon a test starts (a client starts one detached) is killed after
 * the file. Runs before each test file (vitest.config.ts, setupFiles).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const runtime = mkdtempSync(join(tmpdir(), "fr-"));
chmodSync(runtime, 0o700);
process.env.FRESHFS_RUNTIME_DIR = runtime;
// The daemon's content index snapshots, never in the user's cache directory.
const cache = mkdtempSync(join(tmpdir(), "fk-"));
chmodSync(cache, 0o700);
process.env.FRESHFS_CACHE_DIR = cache;

afterAll(() => {
  spawnSync("pkill", ["-KILL", "-f", `daemon run --socket ${runtime}/`]);
  rmSync(runtime, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
});

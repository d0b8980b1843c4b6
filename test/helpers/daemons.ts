/**
 * Test helpers for daemons: a runtime directory of the test's own (mode 0700), and, after the
 * test file, every daemon whose socket is in one of them killed, whether the test stopped it or
 * not (a daemon started by a client runs detached, and would outlive the test run).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) {
    // `freshfs daemon run --socket <dir>/daemon-….sock`: found by its command line.
    spawnSync("pkill", ["-KILL", "-f", `daemon run --socket ${dir}/`]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A runtime directory for daemons of this test file only; removed after it. */
export function runtimeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fd-"));
  chmodSync(dir, 0o700);
  made.push(dir);
  return dir;
}

/**
 * Test helpers for daemons: a runtime directory of the test's own (mode 0700), and, after the
 * test file, every daemon whose socket is in one of them killed, whether the test stopped it or
 * not (a daemon started by a client runs detached, and would outlive the test run).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = join(REPO, "dist", "cli", "main.js");

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function envFor(runtime: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FRESHFS_DAEMON: "1",
    FRESHFS_RUNTIME_DIR: runtime,
    FRESHFS_DAEMON_IDLE_MS: "60000",
    ...extra,
  };
}

export function freshfs(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  bin = BIN,
  input?: string,
): Run {
  const run = spawnSync(process.execPath, [bin, ...args], { cwd, env, encoding: "utf8", input });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The daemon's pid, as `freshfs daemon status --json` reports it; undefined when none runs. */
export function daemonPid(runtime: string): number | undefined {
  const run = freshfs(["daemon", "status", "--json"], REPO, envFor(runtime));
  if (run.status !== 0) return undefined;
  return (JSON.parse(run.stdout) as { pid: number }).pid;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function stopDaemons(runtime: string): void {
  const pid = daemonPid(runtime);
  if (pid !== undefined) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

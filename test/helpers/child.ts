/**
 * Test helper: runs an ES module script in a child Node process, feeding it `input` on stdin,
 * and kills it after `guardMs` (a hang guard for calls that must not block the event loop).
 */
import { spawn } from "node:child_process";

export interface GuardedRun {
  readonly killed: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** Milliseconds from spawn to exit (or to the kill). */
  readonly ms: number;
}

export function runGuarded(script: string, input: string, guardMs: number): Promise<GuardedRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let killed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const guard = setTimeout(() => {
      killed = true;
      child.kill("SIGKILL");
    }, guardMs);
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(guard);
      resolve({ killed, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.end(input);
  });
}

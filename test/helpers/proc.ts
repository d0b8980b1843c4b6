/**
 * What the kernel says of a process (`/proc/<pid>/status`): its threads and its peak memory.
 * Linux only; callers check `/proc` first where they may run elsewhere.
 */
import { readFileSync } from "node:fs";

function status(pid: number | "self"): string {
  return readFileSync(`/proc/${pid}/status`, "utf8");
}

/** Threads of the process, as the kernel counts them. */
export function threads(pid: number | "self" = "self"): number {
  return Number(/^Threads:\s+(\d+)/m.exec(status(pid))?.[1]);
}

/** Peak resident memory so far (VmHWM), in bytes. */
export function peakBytes(pid: number | "self" = "self"): number {
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status(pid))?.[1]) * 1024;
}

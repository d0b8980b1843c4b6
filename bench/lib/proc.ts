/**
 * What /proc says of a process: the inotify watches it holds (every thread), and its memory.
 * Linux only; the benchmarks that use it say so.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Inotify watches `pid` ("self": this process) holds; undefined without /proc. */
export function inotifyWatches(pid: number | "self"): number | undefined {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  let watches = 0;
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== "anon_inode:inotify") continue;
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
      for (
        let at = info.indexOf("inotify wd:");
        at !== -1;
        at = info.indexOf("inotify wd:", at + 1)
      )
        watches++;
    } catch {
      // Closed meanwhile (the fd of the readdir itself, among others).
    }
  }
  return watches;
}

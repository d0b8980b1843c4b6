/**
 * A directory held open by descriptor, so that a create, rename, link or unlink in it acts on
 * that very directory even if a directory on its path is swapped for a symbolic link after it
 * was checked. Node has no `openat` family; on Linux, `/proc/self/fd/<fd>/<name>` is its
 * equivalent (the descriptor's magic link names the opened directory, not its path). Where
 * /proc is missing, the directory's path, checked at open. Depends on `errors`.
 */
import { closeSync, constants, openSync, readlinkSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { FreshfsError, fromFsError } from "../errors.js";

export class HeldDirectory {
  readonly #dir: string;
  readonly #fd: number;
  readonly #viaProc: boolean;

  private constructor(dir: string, fd: number, viaProc: boolean) {
    this.#dir = dir;
    this.#fd = fd;
    this.#viaProc = viaProc;
  }

  /**
   * Opens `dir` (a canonical path) and checks that what was opened is `dir` itself: `STALE`
   * when a symbolic link on the way leads elsewhere now.
   */
  static open(dir: string, shown: string): HeldDirectory {
    let fd: number;
    try {
      fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (error) {
      throw fromFsError(error, "open the directory of", shown);
    }
    let opened: string;
    let viaProc = true;
    try {
      opened = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      viaProc = false;
      opened = realpathSync.native(dir);
    }
    if (opened === `${dir} (deleted)`) {
      // Removed between the open and the look: the kernel's name for a directory now gone.
      closeSync(fd);
      throw new FreshfsError("NOT_FOUND", `Cannot change ${shown}: its directory was removed.`, {
        path: dir,
      });
    }
    if (opened !== dir) {
      closeSync(fd);
      throw new FreshfsError(
        "STALE",
        `The directory of ${shown} now leads to ${opened} (a symbolic link was put on its way); nothing was changed. Check the path, then retry.`,
        { path: dir },
      );
    }
    return new HeldDirectory(dir, fd, viaProc);
  }

  /** A path that names `name` in the held directory itself. */
  entry(name: string): string {
    return this.#viaProc ? `/proc/self/fd/${this.#fd}/${name}` : join(this.#dir, name);
  }

  close(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // Closed already: nothing held.
    }
  }
}

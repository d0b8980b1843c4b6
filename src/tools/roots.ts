/**
 * The workspace's roots and the one gate every tool path passes: confinement. A path must be
 * inside a root as written (after `..` is folded) and where it really lands (symlinks resolved,
 * through the nearest existing ancestor for a path not created yet). Depends on `io/`, `errors`.
 */
import { closeSync, constants, openSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { FreshfsError, fromFsError, quoted } from "../errors.js";
import { nodeFs } from "../io/fs.js";
import { HeldDirectory } from "../io/held.js";
import { canonicalPath } from "../io/paths.js";

/** A tool path after the gate: where it is as written, and where it really lands. */
export interface ConfinedPath {
  /** Absolute, `..` folded: the spelling shown to the model and given to the guard. */
  readonly lexical: string;
  /** Canonical: symlinks resolved. Locks, writes and renames act on this. */
  readonly real: string;
}

const MAX_PATH_BYTES = 4096;

function within(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

export class Roots {
  /** The roots as given, made absolute. */
  readonly given: readonly string[];
  /** The roots' canonical paths. */
  readonly real: readonly string[];

  /** `allowNone`: a narrowing that left no directory (every tool path is then refused). */
  constructor(roots: string | readonly string[], allowNone = false) {
    const list = typeof roots === "string" ? [roots] : roots;
    if (!Array.isArray(list) || (list.length === 0 && !allowNone)) {
      throw new FreshfsError("INVALID_ARGUMENT", "A workspace needs at least one root directory.");
    }
    const given: string[] = [];
    const real: string[] = [];
    for (const root of list) {
      if (typeof root !== "string" || root.length === 0 || root.includes("\0")) {
        throw new FreshfsError(
          "INVALID_ARGUMENT",
          `A root must be a non-empty path, not ${JSON.stringify(root)}.`,
        );
      }
      const absolute = resolve(root);
      let canonical: string;
      try {
        canonical = canonicalPath(absolute, nodeFs);
        if (!statSync(canonical).isDirectory()) {
          throw new FreshfsError("NOT_A_DIRECTORY", `The root ${absolute} is not a directory.`, {
            path: absolute,
          });
        }
      } catch (error) {
        throw fromFsError(error, "use as a root", absolute);
      }
      given.push(absolute);
      real.push(canonical);
    }
    // A root inside another (or the same one twice) would list every file under it twice.
    const kept = real.map((root, index) =>
      real.every(
        (other, j) => j === index || !(within(root, other) && (root !== other || j < index)),
      ),
    );
    this.given = given.filter((_, index) => kept[index]);
    this.real = real.filter((_, index) => kept[index]);
  }

  /**
   * Confines `path` (relative paths resolve against the first root). `OUTSIDE_ROOT` when the
   * path as written, or where it resolves, is outside every root, or holds a NUL byte.
   */
  confine(path: string, param = "file_path"): ConfinedPath {
    if (path.includes("\0")) {
      throw new FreshfsError(
        "OUTSIDE_ROOT",
        `${param} contains a NUL byte, which no file name can hold: ${JSON.stringify(path)}.`,
      );
    }
    const first = this.given[0];
    if (first === undefined) {
      throw new FreshfsError(
        "OUTSIDE_ROOT",
        `${path} is outside the workspace: no directory is open to the tools (the client's roots and the server's have none in common).`,
      );
    }
    const lexical = resolve(first, path);
    if (!this.#inside(lexical)) throw this.#outside(path, lexical);
    // Linux's PATH_MAX: the kernel refuses longer paths anyway, and resolving one component at
    // a time costs time (and stack) by the square of the length.
    if (Buffer.byteLength(path) > MAX_PATH_BYTES) {
      throw new FreshfsError(
        "INVALID_ARGUMENT",
        `${param} is ${Buffer.byteLength(path)} bytes long; paths are at most ${MAX_PATH_BYTES}: ${quoted(path)}.`,
      );
    }
    // The kernel's resolution of the path as written: `link/..` is the parent of the link's
    // target, which folding `..` as text (above) does not see.
    const written = isAbsolute(path) ? path : `${first}${sep}${path}`;
    let real: string;
    try {
      real = canonicalPath(written, nodeFs);
    } catch (error) {
      throw fromFsError(error, "resolve", lexical);
    }
    if (!this.real.some((root) => within(real, root))) throw this.#outside(path, real);
    // `..` after a symbolic link: the path reads as one file (folded as text, which is what the
    // model sees and the guard would be asked about) and is another to the kernel. Refused
    // rather than guessed, so a name can never stand for a file it does not read as.
    if (real !== lexical && path.split(/[\\/]/).includes("..")) {
      let folded: string;
      try {
        folded = canonicalPath(lexical, nodeFs);
      } catch (error) {
        throw fromFsError(error, "resolve", lexical);
      }
      if (folded !== real) {
        throw new FreshfsError(
          "INVALID_ARGUMENT",
          `${param} ${path} has ".." after a symbolic link, so it names ${real}, not the ${lexical} it reads as. Give the path without "..".`,
          { path: real },
        );
      }
    }
    return { lexical, real };
  }

  /**
   * `confine` again, under the path's lock: a symlink or directory changed while the call
   * waited for the lock must not redirect it. `STALE` when the path now lands elsewhere.
   */
  reconfine(path: string, before: ConfinedPath, param = "file_path"): ConfinedPath {
    const now = this.confine(path, param);
    if (now.real !== before.real) {
      throw new FreshfsError(
        "STALE",
        `${path} now resolves to ${now.real}, not ${before.real}: a symbolic link or directory on its way changed. Check the path, then retry.`,
        { path: now.lexical },
      );
    }
    return now;
  }

  /**
   * Confines the path of a file: one that ends with `/` names a directory, and resolving would
   * drop the slash and act on a file of that name.
   */
  confineFile(path: string, param = "file_path"): ConfinedPath {
    const confined = this.confine(path, param);
    if ((path.endsWith("/") || path.endsWith(sep)) && path.replace(/\/+$/, "") !== "") {
      throw new FreshfsError(
        "NOT_A_FILE",
        `${param} ${path} ends with a slash, so it names a directory; give the path of a file.`,
      );
    }
    return confined;
  }

  /**
   * Confines `path` as an entry in its directory, for operations that act on the name itself
   * (delete, rename): a symlink is removed or moved, not its target, so the place of the link
   * (its directory resolved, its own name kept) must be inside a root too.
   */
  confineEntry(path: string, param = "file_path"): ConfinedPath & { readonly entry: string } {
    const confined = this.confine(path, param);
    const name = basename(confined.lexical);
    const parent = dirname(confined.lexical);
    let entry: string;
    try {
      entry = parent === confined.lexical ? parent : join(canonicalPath(parent, nodeFs), name);
    } catch (error) {
      throw fromFsError(error, "resolve", confined.lexical);
    }
    if (!this.real.some((root) => within(entry, root)) || this.real.includes(entry)) {
      throw new FreshfsError(
        "OUTSIDE_ROOT",
        this.real.includes(entry)
          ? `${path} is a workspace root; a root itself cannot be deleted or moved.`
          : `${path} is outside the workspace (its entry is in ${dirname(entry)}). Only paths under ${this.given.join(", ")} can be used.`,
        { path: entry },
      );
    }
    return { ...confined, entry };
  }

  /**
   * These roots narrowed to `dirs`: each directory inside a root is kept, a root inside a
   * directory is kept, anything else is dropped. Never wider than this.
   */
  narrowed(dirs: readonly string[]): Roots {
    const kept = new Set<string>();
    for (const dir of dirs) {
      let real: string;
      try {
        real = canonicalPath(resolve(dir), nodeFs);
      } catch {
        continue; // a directory that cannot be resolved opens nothing
      }
      for (const root of this.real) {
        if (within(real, root)) kept.add(real);
        else if (within(root, real)) kept.add(root);
      }
    }
    return new Roots(
      [...kept].filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory()),
      true,
    );
  }

  /** Whether `path` (absolute) is inside a root, as written or as resolved. */
  #inside(path: string): boolean {
    return this.given.some((root) => within(path, root)) || this.real.some((r) => within(path, r));
  }

  #outside(path: string, landsAt: string): FreshfsError {
    const roots = this.given.join(", ");
    const where =
      landsAt === resolve(this.given[0] as string, path) ? "" : ` (it resolves to ${landsAt})`;
    const named = path.length > 200 ? quoted(path) : path;
    return new FreshfsError(
      "OUTSIDE_ROOT",
      `${named} is outside the workspace${where}. Only paths under ${roots} can be used.`,
      { path: landsAt },
    );
  }

  /**
   * `path` as a model should see it: relative to the root it is in when there is one root,
   * absolute otherwise (a relative path would be ambiguous between roots).
   */
  display(path: string): string {
    if (this.given.length > 1) return path;
    for (const root of [this.given[0] as string, this.real[0] as string]) {
      if (within(path, root)) return relative(root, path).split(sep).join("/") || ".";
    }
    return path;
  }
}

/**
 * Reads the file at `real` (a confined, canonical path) whole, through its directory held open
 * and without following a final symbolic link: a directory on the way swapped for a link
 * between confinement and the open cannot hand over a file outside the roots.
 */
export function readConfined(real: string): Buffer {
  const held = HeldDirectory.open(dirname(real), real);
  try {
    const fd = openSync(
      held.entry(basename(real)),
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW,
    );
    try {
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } finally {
    held.close();
  }
}

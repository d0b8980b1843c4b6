/**
 * A directory's digest: its names and their kinds, as one short string. The walker computes it
 * over what it read, the live tree's watcher over what it reads once its watch is in place;
 * equal digests mean nothing in the directory changed between the two reads (so nothing the
 * watch came too late for was missed).
 * Depends only on `scan/order` (pure), so the watcher's thread can load it alone.
 */
import { compareNames } from "./order.js";

/** A directory entry as the walk reads it: Node's `Dirent`, or the native core's (`read-dir`). */
export interface DirEntry {
  readonly name: string;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** A kind code per dirent: the digest tells a file from a directory of the same name. */
function kindOf(dirent: DirEntry): number {
  if (dirent.isSymbolicLink()) return 3;
  if (dirent.isDirectory()) return 2;
  if (dirent.isFile()) return 1;
  return 4;
}

/**
 * Two independent 32-bit FNV-1a hashes over every name (in the order given: sorted by the
 * caller), a NUL after it, and its kind; and the count. Hand-written: a crypto hash over the joined names cost
 * more than the walk itself (a join and a digest per directory), and this one only has to tell
 * a read before a change from a read after it.
 */
export function namesDigest(dirents: readonly DirEntry[]): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ dirents.length;
  for (const dirent of dirents) {
    const name = dirent.name;
    for (let i = 0; i < name.length; i++) {
      const code = name.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995);
    }
    // NUL never occurs in a name: it ends one, so that no two lists of names run together.
    a = Math.imul(a, 0x01000193);
    b = Math.imul(b, 0x5bd1e995);
    const kind = kindOf(dirent);
    a = Math.imul(a ^ kind, 0x01000193);
    b = Math.imul(b ^ kind, 0x5bd1e995);
  }
  return `${dirents.length}:${(a >>> 0).toString(36)}:${(b >>> 0).toString(36)}`;
}

/** Orders dirents by name, as the walker lists them (`scan/order`). */
export function byName(a: DirEntry, b: DirEntry): number {
  return compareNames(a.name, b.name);
}

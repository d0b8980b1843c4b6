/**
 * The names of freshfs's own files: the temp file a write goes through and the lock file other
 * freshfs processes honour. Both are hidden (a leading dot) and recognizable, so listings never
 * show them, wherever they are (beside a target, or in a staging or lock directory a listing's
 * root happens to hold), and a killed process's leftovers can be told from content. Pure;
 * depends on nothing.
 */
import { createHash, randomBytes } from "node:crypto";

/** Linux's NAME_MAX (and most file systems'): a name is at most this many bytes. */
const NAME_MAX = 255;
/** Bytes of a long name's SHA-256 kept in a shortened sidecar name (see `sidecarName`). */
const HASH_CHARS = 16;

/**
 * `.<name><suffix>`, or, when that would pass NAME_MAX, the name cut (on a UTF-8 character
 * boundary) and tagged with a hash of the whole name: `.<head>~<16 hex><suffix>`. Without it, a
 * file whose name is near the limit could be neither written (its temp name too long) nor
 * locked. The hash keeps two long names that share a head apart.
 */
function sidecarName(name: string, suffix: string): string {
  const plain = `.${name}${suffix}`;
  if (Buffer.byteLength(plain) <= NAME_MAX) return plain;
  const tag = `~${createHash("sha256").update(name).digest("hex").slice(0, HASH_CHARS)}`;
  const room = NAME_MAX - 1 - Buffer.byteLength(tag) - Buffer.byteLength(suffix);
  let head = "";
  let bytes = 0;
  for (const char of name) {
    const size = Buffer.byteLength(char);
    if (bytes + size > room) break;
    head += char;
    bytes += size;
  }
  return `.${head}${tag}${suffix}`;
}

const TEMP_MARK = ".freshfs-";
const LOCK_SUFFIX = ".freshfs-lock";

/** A fresh temp name for a write of `name`: `.<name>.freshfs-<12 hex digits>.tmp`. */
export function tempNameFor(name: string): string {
  return sidecarName(name, `${TEMP_MARK}${randomBytes(6).toString("hex")}.tmp`);
}

/** What every temp name of `name` starts with (a killed writer's leftovers are found by it). */
export function tempPrefixFor(name: string): string {
  // The same length of suffix as a real temp name, so a long name is cut at the same place.
  return sidecarName(name, `${TEMP_MARK}${"0".repeat(12)}.tmp`).slice(
    0,
    -"000000000000.tmp".length,
  );
}

/**
 * The lock file an earlier freshfs kept beside `name`, `.<name>.freshfs-lock` (locks now live
 * out of the tree, `io/state-dirs`): recognized so that one a killed writer left is removed.
 */
export function lockNameFor(name: string): string {
  return sidecarName(name, LOCK_SUFFIX);
}

const FRESHFS_TEMP = /^\..+\.freshfs-[0-9a-f]{12}\.tmp$/;

/** A temp file of freshfs's: half of a write in flight, or left by a killed one. */
export function isFreshfsTemp(name: string): boolean {
  return name.endsWith(".tmp") && FRESHFS_TEMP.test(name);
}

/** A temp file or a lock file of freshfs's: never content, never listed. */
export function isFreshfsSidecar(name: string): boolean {
  return (
    name.charCodeAt(0) === 0x2e &&
    ((name.endsWith(LOCK_SUFFIX) && name.length > LOCK_SUFFIX.length + 1) || isFreshfsTemp(name))
  );
}

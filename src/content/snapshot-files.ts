/**
 * Where content index snapshots live and how one is written: the user's cache directory
 * (`$FRESHFS_CACHE_DIR`, else `$XDG_CACHE_HOME/freshfs`, else `~/.cache/freshfs`), in
 * `snapshots/`, private to the user (mode 0700, its owner checked: a snapshot holds which
 * trigrams each file has, and a directory another user may write could hand the daemon one of
 * theirs), never in the tree; beside each, the tree's saved listing (`live/saved-listing`). Depends on
 * `io/`, `live/saved-listing` and `snapshot`.
 *
 * A snapshot is written to a temp file beside its place, synced, and renamed over it, so that a
 * reader sees the old one or the new one whole; a process killed mid-write leaves a temp file,
 * which the next process to use the directory removes, and never a cut snapshot under the real name.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { crc32 } from "node:zlib";
import { ensurePrivateDir } from "../io/runtime-dir.js";
import { SavedListing, type SavedListingData } from "../live/saved-listing.js";
import { checkedBody, snapshotTrailer } from "./snapshot.js";

/** The snapshot directory by the environment as it is now. */
export function snapshotDirPath(env: NodeJS.ProcessEnv = process.env): string {
  const own = env.FRESHFS_CACHE_DIR;
  const base =
    own && isAbsolute(own)
      ? own
      : env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)
        ? join(env.XDG_CACHE_HOME, "freshfs")
        : join(homedir(), ".cache", "freshfs");
  return join(base, "snapshots");
}

/** The directory, made (0700) and checked to be the user's alone; throws PERMISSION_DENIED. */
export function ensureSnapshotDir(dir: string): string {
  const use = { holds: "its content index snapshots", variable: "FRESHFS_CACHE_DIR" };
  ensurePrivateDir(join(dir, ".."), use);
  return ensurePrivateDir(dir, use);
}

/** How a tree's policy is written in its snapshot (a tree is a root and this). */
export function treePolicy(includeHidden: boolean, useGitignore: boolean): string {
  return `${includeHidden ? "hidden" : "no hidden"}, ${useGitignore ? "gitignore" : "no gitignore"}`;
}

/** The policy `treePolicy` wrote, or undefined for anything else. */
export function parseTreePolicy(
  text: string,
): { includeHidden: boolean; useGitignore: boolean } | undefined {
  const match = /^(hidden|no hidden), (gitignore|no gitignore)$/.exec(text);
  if (!match) return undefined;
  return { includeHidden: match[1] === "hidden", useGitignore: match[2] === "gitignore" };
}

/** The snapshot file of a tree. */
export function snapshotFileFor(dir: string, root: string, policy: string): string {
  const digest = createHash("sha256").update(`${root}\0${policy}`).digest("hex").slice(0, 24);
  return join(dir, `${digest}.snapshot`);
}

/**
 * Writes `chunks` and their trailer to `file` as one replacement; resolves once it is in place.
 * Other writes of the process go on meanwhile: each chunk is one awaited write.
 */
export async function writeSnapshot(file: string, chunks: readonly Uint8Array[]): Promise<number> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, "w", 0o600);
  let length = 0;
  let crc = 0;
  try {
    for (const chunk of chunks) {
      // Node's crc32 answers 0 for an empty array over an empty buffer, whatever CRC it is
      // given to go on from: an empty array adds nothing, and is not passed to it.
      if (chunk.length === 0) continue;
      crc = crc32(chunk, crc);
      length += chunk.length;
      await handle.write(chunk);
    }
    await handle.write(snapshotTrailer(length, crc));
    await handle.datasync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  await rename(temp, file);
  return length;
}

export interface SnapshotOnDisk {
  readonly file: string;
  readonly root: string;
  readonly policy: string;
  readonly bytes: number;
  /** When it was last written (ms since the epoch). */
  readonly writtenMs: number;
}

/** Bytes read to find a header: the JSON of a tree of a million files fits. */
const HEADER_PROBE = 1 << 20;

/**
 * The snapshots in `dir`, newest first, by their headers (the rest is checked only when one
 * is loaded); files that are not snapshots are skipped.
 */
export function listSnapshots(dir: string): SnapshotOnDisk[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".snapshot"));
  } catch {
    return [];
  }
  const out: SnapshotOnDisk[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const found = headerOf(file);
    if (found) out.push(found);
  }
  return out.sort((a, b) => b.writtenMs - a.writtenMs);
}

function headerOf(file: string): SnapshotOnDisk | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    const stats = statSync(file);
    const probe = Buffer.alloc(Math.min(stats.size, HEADER_PROBE));
    const read = readSync(fd, probe, 0, probe.length, 0);
    const magicEnd = probe.indexOf(0x0a);
    if (magicEnd < 0 || read < magicEnd + 5) return undefined;
    const jsonBytes = probe.readUInt32LE(magicEnd + 1);
    const json = probe.subarray(magicEnd + 5, magicEnd + 5 + jsonBytes);
    if (json.length < jsonBytes) return undefined;
    const header = JSON.parse(json.toString("utf8")) as { root?: unknown; policy?: unknown };
    if (typeof header.root !== "string" || typeof header.policy !== "string") return undefined;
    return {
      file,
      root: header.root,
      policy: header.policy,
      bytes: stats.size,
      writtenMs: stats.mtimeMs,
    };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const LISTING_MAGIC = "freshfs saved listing\n";

/** Where the saved listing of the tree whose snapshot is `snapshotFile` goes. */
export function listingFileFor(snapshotFile: string): string {
  return snapshotFile.replace(/\.snapshot$/, ".listing");
}

/** Writes a tree's saved listing (`live/saved-listing`) as `writeSnapshot` writes a snapshot. */
export function writeListing(file: string, data: SavedListingData): Promise<number> {
  return writeSnapshot(file, [Buffer.from(LISTING_MAGIC + JSON.stringify(data), "utf8")]);
}

/**
 * The saved listing in `file` for the tree `root` with `policy`, whole and of this format;
 * undefined for anything else (none, cut, changed, another tree's): the tree is then walked.
 */
export function readListing(file: string, root: string, policy: string): SavedListing | undefined {
  try {
    const text = checkedBody(readFileSync(file)).toString("utf8");
    if (!text.startsWith(LISTING_MAGIC)) return undefined;
    const saved = new SavedListing(
      JSON.parse(text.slice(LISTING_MAGIC.length)) as SavedListingData,
    );
    const { data } = saved;
    const same = data.root === root && treePolicy(data.includeHidden, data.useGitignore) === policy;
    return same && saved.wellFormed ? saved : undefined;
  } catch {
    return undefined;
  }
}

/** Whether process `pid` is alive (signal 0 checks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes temp files of writes whose process is gone (killed mid-write). */
export function sweepTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /\.(?:snapshot|listing)\.(\d+)\.tmp$/.exec(name)?.[1];
    if (pid === undefined || alive(Number(pid))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Gone already, or another sweep took it.
    }
  }
}

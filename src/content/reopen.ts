/**
 * The trees a daemon kept before it stopped, kept again when the next one starts, as Watchman
 * watches again the roots in its state file: each tree with a recent snapshot is walked and
 * watched, and its index loaded from the snapshot, so that the first search after a restart
 * finds it warm. Depends on `live/` and the rest of `content/`.
 */
import { existsSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { liveTrees } from "../live/registry.js";
import type { ScanPolicy } from "../scan/cache.js";
import { contentIndexes } from "./registry.js";
import { listingFileFor, listSnapshots, parseTreePolicy, readListing } from "./snapshot-files.js";

export interface ReopenOptions {
  /** Most trees kept again, the most recently saved first. */
  readonly max: number;
  /** Snapshots older than this are left (their trees are kept again at their next search). */
  readonly maxAgeMs: number;
  /** Told of a tree that could not be kept again. */
  readonly warn: (message: string) => void;
}

/** How long a tree's watches may take to be confirmed before its index is left for later. */
const CONFIRM_MS = 60_000;

const pending = new WeakSet<object>();

/**
 * Once the root's live tree (walked, its watches being set up) is live, starts its content
 * index: loading its snapshot, or building it. The first search of a tree is answered by a
 * walk; its index then starts without waiting for a second search. Resolves with whether it did.
 */
export async function indexWhenLive(root: string, policy: ScanPolicy): Promise<boolean> {
  try {
    return await startWhenLive(root, policy);
  } catch {
    // Work for later searches: a root gone since (or any failure) only leaves it for them.
    return false;
  }
}

async function startWhenLive(root: string, policy: ScanPolicy): Promise<boolean> {
  const tree = liveTrees.treeOf(root, policy);
  if (!tree || pending.has(tree)) return false;
  pending.add(tree);
  try {
    await tree.whenConfirmed(CONFIRM_MS);
    if (tree.isClosed) return false;
    const listing = await liveTrees.query(root, policy);
    const index = contentIndexes.of(tree);
    if (listing?.freshness !== "live" || !index) return false;
    contentIndexes.maintain(index, listing);
    return true;
  } finally {
    pending.delete(tree);
  }
}

/** Keeps again the trees of the snapshots in `dir`; resolves with the roots kept. */
export async function reopenSnapshots(dir: string, options: ReopenOptions): Promise<string[]> {
  const now = Date.now();
  const recent = listSnapshots(dir)
    .filter((snapshot) => now - snapshot.writtenMs <= options.maxAgeMs)
    .slice(0, options.max);
  // Their saved listings first, before any walk begins: a glob asked meanwhile is answered
  // from one wherever it is confirmed for that call.
  for (const snapshot of recent) {
    const saved = readListing(listingFileFor(snapshot.file), snapshot.root, snapshot.policy);
    if (saved) liveTrees.plant(saved);
  }
  const kept: string[] = [];
  for (const snapshot of recent) {
    const policy = parseTreePolicy(snapshot.policy);
    if (!policy) continue;
    if (!existsSync(snapshot.root)) {
      // The tree is gone: so is the use of its snapshot and its listing.
      await unlink(snapshot.file).catch(() => undefined);
      await unlink(listingFileFor(snapshot.file)).catch(() => undefined);
      continue;
    }
    try {
      if (!(await liveTrees.query(snapshot.root, policy))) continue;
      if (await indexWhenLive(snapshot.root, policy)) kept.push(snapshot.root);
    } catch (error) {
      options.warn(`freshfs: ${snapshot.root} was not kept again: ${(error as Error).message}`);
    }
  }
  return kept;
}

/**
 * The `delete` and `rename` tools. Delete is guarded like an overwrite (its content is lost);
 * rename refuses to replace an existing target unless asked, without a check-then-act gap,
 * and moves the guard's knowledge of the file with it. Depends on `tools/`, `state/`, `scan/`.
 */
import type { BigIntStats } from "node:fs";
import { linkSync, lstatSync, renameSync, unlinkSync } from "node:fs";
import { basename, dirname, sep } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { HeldDirectory } from "../io/held.js";
import { invalidateFsScanAfterDelete, invalidateFsScanAfterRename } from "../scan/cache.js";
import { hexDigest, sha256 } from "../state/snapshot.js";
import { type Aliases, Args } from "./args.js";
import {
  assertBytesRead,
  type CallOptions,
  checkGuard,
  type EntrySnapshot,
  entryUnchanged,
  makeParents,
  snapshotEntry,
  type ToolContext,
  underLocks,
} from "./commit.js";
import type { ConfinedPath } from "./roots.js";

export interface DeleteParams {
  /** Aliases: `filePath`, `path`. */
  file_path?: string;
  filePath?: string;
  path?: string;
}

export interface DeleteResult {
  readonly path: string;
  readonly warnings: readonly string[];
  readonly text: string;
}

export interface RenameParams {
  /** Aliases: `source`, `old_path`, `oldPath`. */
  from?: string;
  /** Aliases: `destination`, `new_path`, `newPath`. */
  to?: string;
  /** Replace an existing file at `to` (which must have been read, as for an overwrite). @default false */
  overwrite?: boolean | string;
  source?: string;
  destination?: string;
  old_path?: string;
  oldPath?: string;
  new_path?: string;
  newPath?: string;
}

export interface RenameResult {
  readonly from: string;
  readonly to: string;
  /** An existing file at `to` was replaced. */
  readonly overwrote: boolean;
  readonly warnings: readonly string[];
  readonly text: string;
}

function changedMeanwhile(shown: string, lexical: string, what: string): FreshfsError {
  return new FreshfsError(
    "STALE",
    `${shown} changed on disk while it was being ${what}; nothing was changed. Read it again, then retry.`,
    { path: lexical },
  );
}

export async function deleteTool(
  context: ToolContext,
  input: DeleteParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<DeleteResult> {
  const args = new Args("delete", input, aliases);
  const path = args.requiredText("file_path");
  context.roots.confineFile(path);
  const target = context.roots.confineEntry(path);
  const shown = context.roots.display(target.lexical);
  const reconfine = () => context.roots.reconfine(path, target);
  return underLocks(context, [target.entry], "delete", call, reconfine, async () => {
    const before = snapshotEntry(target.entry, "delete", shown);
    if (!before) {
      throw new FreshfsError("NOT_FOUND", `${shown} does not exist.`, { path: target.lexical });
    }
    if (before.stats.isDirectory()) {
      throw new FreshfsError("NOT_A_FILE", `${shown} is a directory; delete removes files only.`, {
        path: target.lexical,
      });
    }
    // A link is removed, not its target: its content survives, so only a file needs a read.
    const link = before.stats.isSymbolicLink();
    const warnings = link ? [] : await checkGuard(context, target);
    if (!link) assertBytesRead(context, target.lexical, before.bytes, shown);
    const held = HeldDirectory.open(dirname(target.entry), shown);
    try {
      const entry = held.entry(basename(target.entry));
      // The guard's check is a moment old: a change since (by a writer outside freshfs) would
      // be deleted unseen. Synchronous, right next to the unlink.
      if (!entryUnchanged(entry, before)) throw changedMeanwhile(shown, target.lexical, "deleted");
      unlinkSync(entry);
    } catch (error) {
      throw fromFsError(error, "delete", shown);
    } finally {
      held.close();
    }
    if (!link) context.tracker.forget(target.lexical);
    invalidateFsScanAfterDelete(target.entry);
    return {
      path: target.lexical,
      warnings,
      text: [`Deleted ${shown}.`, ...warnings].join("\n\n"),
    };
  });
}

export async function renameTool(
  context: ToolContext,
  input: RenameParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<RenameResult> {
  const args = new Args("rename", input, aliases);
  const fromPath = args.requiredText("from");
  const toPath = args.requiredText("to");
  const overwrite = args.boolean("overwrite") ?? false;
  const from = context.roots.confineEntry(fromPath, "from");
  const to = context.roots.confineEntry(toPath, "to");
  if (toPath.endsWith("/") || toPath.endsWith(sep)) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `rename: to ${toPath} ends with a slash; give the whole new path, name included (dir/name).`,
    );
  }
  const fromShown = context.roots.display(from.lexical);
  const toShown = context.roots.display(to.lexical);
  if (from.entry === to.entry) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `rename: from and to are the same path (${fromShown}).`,
    );
  }
  if (to.entry.startsWith(`${from.entry}${sep}`)) {
    const isDir = lstatSync(from.entry, { throwIfNoEntry: false })?.isDirectory() ?? false;
    throw isDir
      ? new FreshfsError(
          "INVALID_ARGUMENT",
          `rename: ${toShown} is inside ${fromShown}; a directory cannot be moved into itself.`,
        )
      : new FreshfsError(
          "NOT_A_DIRECTORY",
          `rename: ${fromShown} is not a directory, so nothing can be put under it (${toShown}).`,
        );
  }
  const reconfine = () => {
    context.roots.reconfine(fromPath, from, "from");
    context.roots.reconfine(toPath, to, "to");
  };
  return underLocks(context, [from.entry, to.entry], "rename", call, reconfine, async () => {
    const source = snapshotEntry(from.entry, "rename", fromShown);
    if (!source) {
      throw new FreshfsError("NOT_FOUND", `${fromShown} does not exist.`, { path: from.lexical });
    }
    const existing = snapshotEntry(to.entry, "rename", toShown);
    const warnings: string[] = [];
    if (existing?.stats.isDirectory()) {
      throw new FreshfsError(
        overwrite ? "NOT_A_FILE" : "ALREADY_EXISTS",
        `${toShown} is a directory; rename never replaces one. To move into it, give the whole new path (${toShown}/name).`,
        { path: to.lexical },
      );
    }
    if (existing && source.stats.isDirectory()) {
      throw new FreshfsError(
        "ALREADY_EXISTS",
        `${toShown} exists and ${fromShown} is a directory; a directory never replaces a file. Choose another name.`,
        { path: to.lexical },
      );
    }
    if (existing) {
      if (!overwrite) {
        throw new FreshfsError(
          "ALREADY_EXISTS",
          `${toShown} already exists. Pass overwrite: true to replace it (after reading it), or choose another name.`,
          { path: to.lexical },
        );
      }
      if (!existing.stats.isSymbolicLink()) {
        warnings.push(...(await checkGuard(context, to)));
        assertBytesRead(context, to.lexical, existing.bytes, toShown);
      }
    } else if (overwrite) {
      // Replacing a file read and since deleted is a write over a change the model has not
      // seen, as `write` would refuse it (a file never read that is not there passes).
      warnings.push(...(await checkGuard(context, to)));
    }
    const knownFresh = source.bytes !== undefined && (await isRead(context, from, source.bytes));
    await makeParents(to.entry, toShown);
    move(from, to, source, existing, fromShown, toShown);
    context.tracker.forget(from.lexical);
    if (existing) context.tracker.forget(to.lexical);
    // The bytes the model read moved: an edit at the new name needs no new read. Recorded as
    // those bytes, so a change that reached the file meanwhile is not credited as read.
    if (knownFresh) {
      await context.tracker
        .recordEdit(to.lexical, { content: source.bytes })
        .catch(() => undefined);
    }
    invalidateFsScanAfterRename(from.entry, to.entry);
    const verb = existing
      ? `Renamed ${fromShown} to ${toShown}, replacing it.`
      : `Renamed ${fromShown} to ${toShown}.`;
    return {
      from: from.lexical,
      to: to.lexical,
      overwrote: existing !== undefined,
      warnings,
      text: [verb, ...warnings].join("\n\n"),
    };
  });
}

/**
 * The source was read, is unchanged since, and `bytes` (taken under the lock) are what was read:
 * its record may move with it.
 */
async function isRead(context: ToolContext, path: ConfinedPath, bytes: Buffer): Promise<boolean> {
  try {
    const verdict = await context.tracker.checkEdit(path.lexical);
    const read = context.tracker.latest(path.lexical);
    return verdict.state === "fresh" && read?.hash === hexDigest(sha256(bytes));
  } catch {
    return false;
  }
}

/**
 * Without `overwrite`, a file or link is moved by `link` then `unlink`: `link` fails if the
 * name exists, atomically, where a check followed by `rename` would replace a file created in
 * between. Directories cannot be hard-linked; `rename` only replaces an empty directory.
 */
function move(
  from: ConfinedPath & { entry: string },
  to: ConfinedPath & { entry: string },
  source: EntrySnapshot,
  existing: EntrySnapshot | undefined,
  shown: string,
  toShown: string,
): void {
  // Both directories held open: one swapped for a link out cannot redirect the move.
  const fromDir = HeldDirectory.open(dirname(from.entry), shown);
  let toDir: HeldDirectory;
  try {
    toDir = HeldDirectory.open(dirname(to.entry), to.lexical);
  } catch (error) {
    fromDir.close();
    throw error;
  }
  const oldName = fromDir.entry(basename(from.entry));
  const newName = toDir.entry(basename(to.entry));
  try {
    if (existing && sameFile(source.stats, existing.stats)) {
      // Two names of one file: rename(2) does nothing then, so the old name is removed.
      unlinkSync(oldName);
      return;
    }
    if (existing) {
      // The file replaced must still be the one the guard passed, synchronously next to the
      // rename: a change since (by a writer outside freshfs) would be lost unseen.
      if (!entryUnchanged(newName, existing))
        throw changedMeanwhile(toShown, to.lexical, "replaced");
      renameSync(oldName, newName);
      return;
    }
    if (source.stats.isDirectory()) {
      renameSync(oldName, newName);
      return;
    }
    try {
      linkSync(oldName, newName);
    } catch (error) {
      const errno = errnoOf(error);
      if (errno === "EEXIST") throw error;
      if (
        errno !== "EPERM" &&
        errno !== "ENOTSUP" &&
        errno !== "EOPNOTSUPP" &&
        errno !== "EMLINK"
      ) {
        throw error;
      }
      // No hard links here (some file systems): rename, after the check above.
      renameSync(oldName, newName);
      return;
    }
    try {
      unlinkSync(oldName);
    } catch (error) {
      // The old name cannot go (a read-only directory): take the new one back, move nothing.
      try {
        unlinkSync(newName);
      } catch {
        // Nothing more can be undone; the error below says the rename failed.
      }
      throw error;
    }
  } catch (error) {
    if (errnoOf(error) === "EEXIST") {
      throw new FreshfsError(
        "ALREADY_EXISTS",
        `${to.lexical} appeared while ${shown} was being renamed; nothing was moved.`,
        { path: to.lexical },
      );
    }
    throw fromFsError(error, "rename", shown);
  } finally {
    fromDir.close();
    toDir.close();
  }
}

function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.dev === b.dev;
}

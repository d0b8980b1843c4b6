/**
 * An `apply_patch` landing (tools/apply-patch): the operations planned and checked there are
 * written here. Every new file's bytes are flushed to a temp file beside it, the guard asked
 * once more for every file whose old content goes, then, synchronously, every directory and
 * file checked against what the patch was computed from and every rename and unlink made back
 * to back; a step that fails puts back, in reverse, those that landed. Depends on `tools/`,
 * `io/`, `scan/`.
 */
import { accessSync, constants, lstatSync, realpathSync, renameSync, unlinkSync } from "node:fs";
import { basename, dirname } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { HeldDirectory } from "../io/held.js";
import { TempPlace } from "../io/state-dirs.js";
import { invalidateFsScanAfterDelete, invalidateFsScanAfterWrite } from "../scan/cache.js";
import { keepVisible, type PreparedWrite, prepareAtomic, removeLeftTemps } from "./atomic.js";
import {
  type Current,
  checkGuard,
  type EntrySnapshot,
  entryUnchanged,
  makeParents,
  removeMade,
  sameBytesOnDisk,
  type ToolContext,
} from "./commit.js";
import type { PatchMatch, PatchOperation } from "./patch.js";
import type { ConfinedPath } from "./roots.js";

/** One operation, confined, with what the check found and the bytes it will write. */
export interface Planned {
  readonly op: PatchOperation;
  /** The file written (an update's own path, a move's destination, an add's path). */
  readonly target: ConfinedPath | undefined;
  /** The file removed (a delete's path, a move's source): its entry. */
  readonly removed: (ConfinedPath & { readonly entry: string }) | undefined;
  readonly shown: string;
  readonly fromShown: string | undefined;
  current: Current | undefined;
  /** The file an add or a move's destination replaces, as read under the locks. */
  replaced: Current | undefined;
  snapshot: EntrySnapshot | undefined;
  bytes: Buffer | undefined;
  before: string;
  after: string;
  matchedBy: PatchMatch | undefined;
  added: number;
  removedLines: number;
}

/** Whether something is at `path` (a link counts); a file on the way is `NOT_A_DIRECTORY`. */
export function exists(path: string, shown: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    if (errnoOf(error) === "ENOTDIR") {
      throw new FreshfsError(
        "NOT_A_DIRECTORY",
        `apply_patch: cannot write ${shown}: a part of its directory path is a file, not a directory. Nothing was changed.`,
        { path, cause: error },
      );
    }
    throw fromFsError(error, "write", shown);
  }
}

/**
 * Failures after which not everything could be put back: a caller must not claim that nothing
 * was changed.
 */
export const leftChanged = new WeakSet<FreshfsError>();

// Temp files flushed at once: the disk takes several flushes together. (Each prepared file
// keeps its directory open until the patch ends: one descriptor per file written.)
const PREPARE_AT_ONCE = 8;

function prepare(plan: Planned): Promise<PreparedWrite> {
  const inPlace = plan.op.kind === "update" && plan.op.moveTo === undefined;
  const old = inPlace ? plan.current : plan.replaced;
  // An update or a move keeps the moved file's mode; an add over a file keeps that file's, and
  // its owner where the process may, as `write` does.
  const kept = plan.op.kind === "add" ? plan.replaced : plan.current;
  return prepareAtomic((plan.target as ConfinedPath).real, plan.bytes as Buffer, {
    mode: kept?.mode,
    owner: inPlace || plan.op.kind === "add" ? kept?.owner : undefined,
    exclusive: old === undefined,
    keepOld: old?.bytes,
  });
}

/**
 * A name a patch removes (a delete, a move's source), through its directory held open: first
 * renamed to a temp name (out of the tree where a staging directory shares its mount, else
 * hidden beside it), so that a later step's failure can rename it back (the very file, or
 * link, whatever its size), and unlinked once every step has landed.
 */
class Removal {
  readonly #held: HeldDirectory;
  readonly #place: TempPlace;
  readonly #name: string;
  readonly #aside: string;
  #moved = false;

  constructor(entry: string, shown: string) {
    this.#held = HeldDirectory.open(dirname(entry), shown);
    try {
      this.#place = TempPlace.open(dirname(entry), this.#held);
    } catch (error) {
      this.#held.close();
      throw error;
    }
    this.#name = this.#held.entry(basename(entry));
    this.#aside = this.#place.fresh(basename(entry));
  }

  get entry(): string {
    return this.#name;
  }

  stage(): void {
    renameSync(this.#name, this.#aside);
    this.#moved = true;
  }

  revert(): void {
    if (!this.#moved) return;
    this.#moved = false;
    try {
      renameSync(this.#aside, this.#name);
    } catch (error) {
      throw new FreshfsError(
        "IO_ERROR",
        `it could not be put back (${errnoOf(error) ?? String(error)}); it is in ${keepVisible(this.#held, this.#aside, basename(this.#name))}`,
        { cause: error },
      );
    }
  }

  /** Unlinks the staged name (when every step landed) and lets the directory go. */
  close(landed: boolean): void {
    try {
      if (landed && this.#moved) unlinkSync(this.#aside);
    } catch {
      // Gone already: nothing is left to remove.
    } finally {
      this.#place.close();
      this.#held.close();
    }
  }
}

/** Where each step failed and what it put back, for the one error the patch reports. */
function stepFailed(error: unknown, plan: Planned, lost: readonly string[]): FreshfsError {
  const failure =
    error instanceof FreshfsError
      ? error
      : fromFsError(error, "write", plan.fromShown ?? plan.shown);
  const back =
    lost.length === 0
      ? "what had been written was put back, so nothing was changed"
      : `but not all of it could be put back: ${lost.join("; ")}`;
  const failed = new FreshfsError(failure.code, `apply_patch: ${failure.message} (${back}.)`, {
    path: failure.path,
    cause: error,
  });
  if (lost.length > 0) leftChanged.add(failed);
  return failed;
}

/**
 * Writes the patch: temp files flushed for every file written, the guard asked once more for
 * each, then, synchronously, every directory and file checked against what the patch was
 * computed from, and every rename made back to back. A step that fails puts back what landed.
 */
export async function landPatch(
  context: ToolContext,
  plans: readonly Planned[],
  warnings: string[],
): Promise<void> {
  const prepared: { plan: Planned; write: PreparedWrite }[] = [];
  const removals: { plan: Planned; removal: Removal }[] = [];
  const made: { deepest: string; first: string | undefined }[] = [];
  let landed = false;
  try {
    const writes: Planned[] = [];
    for (const plan of plans) {
      if (!plan.target || !plan.bytes) continue;
      const target = plan.target;
      if ((plan.op.kind === "update" && plan.op.moveTo === undefined) || plan.replaced) {
        // A rename replaces a file the process may not write (its directory allows it): ask,
        // as an in-place write would be refused.
        try {
          accessSync(target.real, constants.W_OK);
        } catch (error) {
          throw fromFsError(error, "write", plan.shown);
        }
      } else if (!exists(dirname(target.real), plan.shown)) {
        made.push({
          deepest: dirname(target.real),
          first: await makeParents(target.real, plan.shown),
        });
      }
      writes.push(plan);
    }
    // The flushes dominate (each file's `datasync`, ~4 ms here): a few at a time.
    for (let at = 0; at < writes.length; at += PREPARE_AT_ONCE) {
      const batch = writes.slice(at, at + PREPARE_AT_ONCE);
      const settled = await Promise.allSettled(batch.map((plan) => prepare(plan)));
      let failure: unknown;
      settled.forEach((outcome, index) => {
        if (outcome.status === "fulfilled") {
          prepared.push({ plan: batch[index] as Planned, write: outcome.value });
        } else {
          failure ??= outcome.reason;
        }
      });
      if (failure !== undefined) throw failure;
    }
    for (const plan of plans) {
      for (const guarded of guardedPaths(plan)) {
        for (const warning of await checkGuard(context, guarded)) {
          if (!warnings.includes(warning)) warnings.push(warning);
        }
      }
    }
    // Nothing awaited from here to the last rename.
    for (const plan of plans) {
      if (plan.target) assertDirectory(dirname(plan.target.real), plan, plan.target.lexical);
      if (plan.removed) {
        assertDirectory(dirname(plan.removed.entry), plan, plan.removed.lexical);
        removals.push({
          plan,
          removal: new Removal(plan.removed.entry, plan.fromShown ?? plan.shown),
        });
      }
    }
    landAll(plans, prepared, removals);
    landed = true;
  } finally {
    for (const { write } of prepared) write.close();
    for (const { removal } of removals) removal.close(landed);
    // A patch that did not land leaves no directory behind either.
    if (!landed) for (const { deepest, first } of made.reverse()) removeMade(deepest, first);
  }
  for (const plan of plans) {
    if (plan.target && plan.bytes) {
      removeLeftTemps(plan.target.real);
      await context.tracker.recordEdit(plan.target.lexical, { content: plan.bytes });
      invalidateFsScanAfterWrite(plan.target.real);
    }
    if (plan.removed) {
      if (plan.op.kind === "delete" || plan.op.kind === "update") {
        context.tracker.forget(plan.removed.lexical);
      }
      invalidateFsScanAfterDelete(plan.removed.entry);
    }
  }
}

/** The files of a plan whose old content is lost if it lands: each needs the guard's yes. */
function guardedPaths(plan: Planned): ConfinedPath[] {
  const paths: ConfinedPath[] = [];
  if (plan.op.kind === "delete") {
    // A link is removed, not its target: its content survives.
    if (plan.snapshot && !plan.snapshot.stats.isSymbolicLink())
      paths.push(plan.removed as ConfinedPath);
    return paths;
  }
  const source = plan.removed ?? (plan.op.kind === "update" ? plan.target : undefined);
  if (source) paths.push(source);
  if (plan.replaced) paths.push(plan.target as ConfinedPath);
  return paths;
}

/** The directory was resolved when its path was confined; a link put on the way since is refused. */
function assertDirectory(directory: string, plan: Planned, lexical: string): void {
  let now: string;
  try {
    now = realpathSync.native(directory);
  } catch (error) {
    throw fromFsError(error, "write", plan.shown);
  }
  if (now !== directory) {
    throw new FreshfsError(
      "STALE",
      `apply_patch: the directory of ${plan.shown} changed (a symbolic link was put on its way) while the patch was being written; nothing was changed. Check the path, then retry.`,
      { path: lexical },
    );
  }
}

function changedMeanwhile(shown: string, lexical: string): FreshfsError {
  return new FreshfsError(
    "STALE",
    `apply_patch: ${shown} changed on disk while the patch was being written; nothing was changed. Read it again, then retry.`,
    { path: lexical },
  );
}

/**
 * The synchronous part: nothing awaited between the last look at every file and the last
 * rename, so a writer outside freshfs has only this window, as for a single edit. Every step
 * goes through a directory held open; one that fails undoes, in reverse, those that landed.
 */
function landAll(
  plans: readonly Planned[],
  prepared: readonly { plan: Planned; write: PreparedWrite }[],
  removals: readonly { plan: Planned; removal: Removal }[],
): void {
  for (const plan of plans) {
    if (plan.current?.exists) {
      const source = plan.removed ?? (plan.target as ConfinedPath);
      if (!sameBytesOnDisk(source.real, plan.current.bytes)) {
        throw changedMeanwhile(plan.fromShown ?? plan.shown, source.lexical);
      }
    }
    const target = plan.target;
    if (plan.replaced && target && !sameBytesOnDisk(target.real, plan.replaced.bytes)) {
      throw changedMeanwhile(plan.shown, target.lexical);
    }
  }
  for (const { plan, removal } of removals) {
    // Through the directory held open, as the rename that removes it will go.
    if (plan.snapshot && !entryUnchanged(removal.entry, plan.snapshot)) {
      throw changedMeanwhile(plan.shown, (plan.removed as ConfinedPath).lexical);
    }
  }
  const undos: { readonly shown: string; readonly run: () => void }[] = [];
  let step: Planned | undefined;
  try {
    for (const { plan, write } of prepared) {
      step = plan;
      write.commit();
      undos.push({ shown: plan.shown, run: () => write.revert() });
    }
    for (const { plan, removal } of removals) {
      step = plan;
      removal.stage();
      undos.push({ shown: plan.fromShown ?? plan.shown, run: () => removal.revert() });
    }
  } catch (error) {
    const lost: string[] = [];
    for (const undo of undos.reverse()) {
      try {
        undo.run();
      } catch (failure) {
        lost.push(`${undo.shown}: ${failure instanceof Error ? failure.message : String(failure)}`);
      }
    }
    throw stepFailed(error, step as Planned, lost);
  }
}

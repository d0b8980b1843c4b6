/**
 * The `apply_patch` tool: a multi-file patch in Codex's format (tools/patch), all files or
 * none. Every touched file is guarded as its single-file tool guards it (an update or delete
 * needs a full, fresh read; an add or a move's destination that exists is replaced as a `write`
 * of it would be, after a full, fresh read), under the locks of every path at once (this process's and every other freshfs process's). The whole patch is
 * computed and checked before anything is written; then every new file's bytes are flushed to
 * a temp file beside it, every file checked once more, synchronously, and the renames and
 * unlinks run back to back. A failure among those (rare: the disk, a writer outside freshfs)
 * puts back what had landed. A crash leaves each file whole, old or new as its rename landed
 * (RELIABILITY.md). Depends on `tools/`, `state/`, `scan/`.
 */
import { accessSync, constants, lstatSync, realpathSync, renameSync, unlinkSync } from "node:fs";
import { basename, dirname } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { HeldDirectory } from "../io/held.js";
import { TempPlace } from "../io/state-dirs.js";
import { invalidateFsScanAfterDelete, invalidateFsScanAfterWrite } from "../scan/cache.js";
import { type Aliases, Args } from "./args.js";
import { keepVisible, type PreparedWrite, prepareAtomic, removeLeftTemps } from "./atomic.js";
import {
  assertBasedOnRead,
  assertBytesRead,
  type CallOptions,
  type Current,
  checkGuard,
  type EntrySnapshot,
  entryUnchanged,
  makeParents,
  readCurrent,
  removeMade,
  sameBytesOnDisk,
  snapshotEntry,
  type ToolContext,
  underLocks,
} from "./commit.js";
import { unifiedDiff } from "./diff.js";
import { MAX_RESULT_BYTES, PATCH_MAX_BYTES, PATCH_MAX_FILES } from "./limits.js";
import { diffForModel, NOTES_RESERVE_BYTES } from "./output.js";
import {
  addedText,
  applyChunks,
  type PatchMatch,
  type PatchOperation,
  parsePatch,
} from "./patch.js";
import { isCodeFile, normalizeIntroducedQuotes } from "./quotes.js";
import type { ConfinedPath } from "./roots.js";
import { decode, editableText, encode, isBinary, overwriting, splitLines } from "./text.js";

export interface ApplyPatchParams {
  /** The patch, `*** Begin Patch` to `*** End Patch`. Aliases: `patch`, `patchText` (opencode). */
  input?: string;
  /** Check the patch and show its diffs; write nothing, record nothing. Alias: `dryRun`. @default false */
  dry_run?: boolean | string;
  patch?: string;
  patchText?: string;
  dryRun?: boolean | string;
}

export interface PatchedFile {
  /** The file (its new path for a move), as the model names it. */
  readonly path: string;
  readonly action: "add" | "update" | "delete" | "move";
  /** A move's old path. */
  readonly from: string | undefined;
  /** How the update's hunks matched (the loosest any needed). */
  readonly matchedBy: PatchMatch | undefined;
  readonly added: number;
  readonly removed: number;
  /** Unified diff; undefined when too different to diff in time. */
  readonly diff: string | undefined;
}

export interface ApplyPatchResult {
  readonly files: readonly PatchedFile[];
  /** Nothing was written: the diffs are what the patch would do. */
  readonly dryRun: boolean;
  /** Guard warnings (warn policy). */
  readonly warnings: readonly string[];
  readonly text: string;
}

/** One operation, confined, with what the check found and the bytes it will write. */
interface Planned {
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

const paramName = "input";

export async function applyPatchTool(
  context: ToolContext,
  input: ApplyPatchParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<ApplyPatchResult> {
  const args = new Args("apply_patch", input, aliases);
  const text = args.requiredText("input");
  const dryRun = args.boolean("dry_run") ?? false;
  const operations = parsePatch(text);
  try {
    return await applyOperations(context, operations, dryRun, call);
  } catch (error) {
    throw wholeOrNothing(error, operations.length);
  }
}

/**
 * Codex applies a patch's operations one by one and keeps those before a failure; a model
 * trained on it may send only the rest again. freshfs keeps all or nothing, and says so.
 */
function wholeOrNothing(error: unknown, operations: number): unknown {
  if (!(error instanceof FreshfsError) || operations < 2 || leftChanged.has(error)) return error;
  const wrapped = new FreshfsError(
    error.code,
    `${error.message} A patch applies whole or not at all: none of its ${operations} operations was applied, not even those before this one. Send the whole patch again once this is fixed.`,
    { path: error.path, cause: error },
  );
  wrapped.answeredBy = error.answeredBy;
  return wrapped;
}

/** A step's failure after which not everything could be put back: nothing more is claimed. */
const leftChanged = new WeakSet<FreshfsError>();

async function applyOperations(
  context: ToolContext,
  operations: readonly PatchOperation[],
  dryRun: boolean,
  call: CallOptions,
): Promise<ApplyPatchResult> {
  const plans = operations.map((op) => confineOperation(context, op));
  const written =
    plans.filter((plan) => plan.target).length + plans.filter((p) => p.removed).length;
  if (written > PATCH_MAX_FILES) {
    throw new FreshfsError(
      "INVALID_PATCH",
      `apply_patch: the patch touches ${written} files; at most ${PATCH_MAX_FILES} in one patch. Split it.`,
    );
  }
  const seen = new Map<string, string>();
  const keys: string[] = [];
  for (const plan of plans) {
    for (const [where, shown] of [
      [plan.target?.real, plan.shown],
      [plan.removed?.entry, plan.fromShown ?? plan.shown],
    ] as const) {
      if (where === undefined) continue;
      const earlier = seen.get(where);
      if (earlier !== undefined) {
        throw new FreshfsError(
          "INVALID_PATCH",
          `apply_patch: ${shown} is touched twice (line ${plan.op.line}, and ${earlier}); each file may appear in one operation only. Put every change to it in one '*** Update File' with several hunks.`,
        );
      }
      seen.set(where, `line ${plan.op.line}`);
      keys.push(where);
    }
  }
  const reconfine = () => {
    for (const plan of plans) reconfineOperation(context, plan);
  };
  return underLocks(context, keys, "apply_patch", call, reconfine, async () => {
    const warnings: string[] = [];
    let held = 0;
    for (const plan of plans) {
      await check(context, plan, warnings);
      held +=
        (plan.current?.bytes.length ?? plan.snapshot?.bytes?.length ?? 0) +
        (plan.bytes?.length ?? 0);
      if (held > PATCH_MAX_BYTES) {
        throw new FreshfsError(
          "TOO_LARGE",
          `apply_patch: the files this patch touches hold more than ${PATCH_MAX_BYTES / (1024 * 1024)} MiB (old and new bytes together, up to ${plan.shown}); split the patch. Nothing was changed.`,
        );
      }
    }
    const files = plans.map(describe);
    if (dryRun) return finish(files, true, warnings, plans);
    await commit(context, plans, warnings);
    return finish(files, false, warnings, plans);
  });
}

function confineOperation(context: ToolContext, op: PatchOperation): Planned {
  const base = {
    op,
    current: undefined,
    replaced: undefined,
    snapshot: undefined,
    bytes: undefined,
    before: "",
    after: "",
    matchedBy: undefined,
    added: 0,
    removedLines: 0,
  };
  if (op.kind === "delete") {
    context.roots.confineFile(op.path, paramName);
    const removed = context.roots.confineEntry(op.path, paramName);
    return {
      ...base,
      target: undefined,
      removed,
      shown: context.roots.display(removed.lexical),
      fromShown: undefined,
    };
  }
  if (op.kind === "add" || op.moveTo === undefined) {
    const target = context.roots.confineFile(op.path, paramName);
    return {
      ...base,
      target,
      removed: undefined,
      shown: context.roots.display(target.lexical),
      fromShown: undefined,
    };
  }
  context.roots.confineFile(op.path, paramName);
  // The source's name goes (a link: the link, as `rename` moves it), its content is read
  // through it.
  const removed = context.roots.confineEntry(op.path, paramName);
  const source = removed;
  const target = context.roots.confineFile(op.moveTo, paramName);
  if (target.real === source.real) {
    throw new FreshfsError(
      "INVALID_PATCH",
      `apply_patch: line ${op.line} moves ${op.path} to itself (${op.moveTo}).`,
    );
  }
  return {
    ...base,
    target,
    removed,
    shown: context.roots.display(target.lexical),
    fromShown: context.roots.display(source.lexical),
  };
}

function reconfineOperation(context: ToolContext, plan: Planned): void {
  const { op } = plan;
  if (plan.target) {
    const given = op.kind === "update" && op.moveTo !== undefined ? op.moveTo : op.path;
    context.roots.reconfine(given, plan.target, paramName);
  }
  if (plan.removed) context.roots.reconfine(op.path, plan.removed, paramName);
}

/** Whether something is at `path` (a link counts); a file on the way is `NOT_A_DIRECTORY`. */
function exists(path: string, shown: string): boolean {
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
 * The file at an add's path or a move's destination, which the patch replaces as Codex does,
 * held to what a `write` of it must pass: a full read, unchanged since (`NOT_READ`, `STALE`).
 * Undefined where there is none.
 */
async function replacedFile(
  context: ToolContext,
  target: ConfinedPath,
  shown: string,
  note: (warnings: readonly string[]) => void,
): Promise<Current | undefined> {
  const current = await readCurrent(target, "write", shown);
  note(await checkGuard(context, target));
  if (!current.exists) return undefined;
  assertBasedOnRead(context, target, current);
  return current;
}

/** The operation's checks, in the order its own tool makes them; fills in the new bytes. */
async function check(context: ToolContext, plan: Planned, warnings: string[]): Promise<void> {
  const { op } = plan;
  const note = (found: readonly string[]) => {
    for (const warning of found) if (!warnings.includes(warning)) warnings.push(warning);
  };
  if (op.kind === "add") {
    const target = plan.target as ConfinedPath;
    // A file on the way is NOT_A_DIRECTORY now, so that a dry run refuses it too.
    exists(target.lexical, plan.shown);
    plan.replaced = await replacedFile(context, target, plan.shown, note);
    // Over a file: in its encoding, byte order mark and line ending, as `write` keeps them; the
    // last line ends with a break either way, as Codex writes an added file.
    const replaced = plan.replaced?.bytes;
    const overwrite = overwriting(replaced, addedText(op.lines), false);
    plan.before = overwrite.before;
    plan.after = isCodeFile(target.lexical)
      ? normalizeIntroducedQuotes(overwrite.text, overwrite.before)
      : overwrite.text;
    plan.bytes = encode(plan.after, overwrite.like);
    plan.added = op.lines.length;
    plan.removedLines = overwrite.before === "" ? 0 : splitLines(overwrite.before).length;
    return;
  }
  if (op.kind === "delete") {
    const removed = plan.removed as ConfinedPath & { entry: string };
    const snapshot = snapshotEntry(removed.entry, "delete", plan.shown);
    if (!snapshot) {
      throw new FreshfsError(
        "NOT_FOUND",
        `apply_patch: line ${op.line} deletes ${plan.shown}, which does not exist. Nothing was changed.`,
        { path: removed.lexical },
      );
    }
    if (snapshot.stats.isDirectory()) {
      throw new FreshfsError(
        "NOT_A_FILE",
        `apply_patch: line ${op.line} deletes ${plan.shown}, which is a directory; a patch deletes files only. Nothing was changed.`,
        { path: removed.lexical },
      );
    }
    // A link is removed, not its target: its content survives, so only a file needs a read.
    if (!snapshot.stats.isSymbolicLink()) {
      note(await checkGuard(context, removed));
      assertBytesRead(context, removed.lexical, snapshot.bytes, plan.shown);
      // The diff shows a text file's lines going; a binary file's bytes are no lines.
      if (snapshot.bytes && !isBinary(snapshot.bytes)) {
        const decoded = decode(snapshot.bytes);
        plan.before = decoded.text;
        plan.removedLines = splitLines(decoded.text).length;
      }
    }
    plan.snapshot = snapshot;
    return;
  }
  const source = plan.removed ?? (plan.target as ConfinedPath);
  const sourceShown = plan.fromShown ?? plan.shown;
  const current = await readCurrent(source, "update", sourceShown);
  if (!current.exists) {
    throw new FreshfsError(
      "NOT_FOUND",
      `apply_patch: line ${op.line} updates ${sourceShown}, which does not exist. To create it, use '*** Add File: ${sourceShown}'. Nothing was changed.`,
      { path: source.lexical },
    );
  }
  note(await checkGuard(context, source));
  assertBasedOnRead(context, source, current);
  if (plan.removed) {
    const target = plan.target as ConfinedPath;
    exists(target.lexical, plan.shown);
    plan.replaced = await replacedFile(context, target, plan.shown, note);
  }
  plan.current = current;
  if (op.chunks.length === 0) {
    // A plain move: the bytes go as they are, whatever they hold.
    const shownText = isBinary(current.bytes) ? "" : decode(current.bytes).text;
    plan.before = shownText;
    plan.after = shownText;
    plan.bytes = current.bytes;
    return;
  }
  const decoded = editableText(current.bytes, sourceShown);
  const patched = applyChunks(decoded.text, op.chunks, sourceShown, isCodeFile(source.lexical));
  plan.before = decoded.text;
  plan.after = patched.text;
  plan.bytes = encode(patched.text, decoded);
  plan.matchedBy = patched.matchedBy;
  plan.added = patched.added;
  plan.removedLines = patched.removed;
}

function describe(plan: Planned): PatchedFile {
  const { op } = plan;
  const action = op.kind === "update" ? (op.moveTo === undefined ? "update" : "move") : op.kind;
  const lexical = (plan.target ?? (plan.removed as ConfinedPath)).lexical;
  return {
    path: lexical,
    action,
    from: action === "move" ? (plan.removed as ConfinedPath).lexical : undefined,
    matchedBy: plan.matchedBy,
    added: plan.added,
    removed: plan.removedLines,
    diff: unifiedDiff(plan.shown, plan.before, plan.after, plan.fromShown),
  };
}

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
async function commit(
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

/** How a file's hunks matched, as the summary says it. */
const MATCHED: Record<PatchMatch, string> = {
  exact: "",
  punctuation: " (matched with typographic quotes, dashes or spaces read as ASCII)",
  whitespace: " (matched ignoring whitespace at line ends)",
  indentation:
    " (matched ignoring whitespace at line starts and ends: the new lines are indented as the patch wrote them; check them)",
};

function finish(
  files: readonly PatchedFile[],
  dryRun: boolean,
  warnings: readonly string[],
  plans: readonly Planned[],
): ApplyPatchResult {
  // Codex's summary: adds, then changes (a move is its new path's change), then deletes, each
  // in the patch's order.
  const letter = { add: "A", update: "M", move: "M", delete: "D" } as const;
  const rank = { A: 0, M: 1, D: 2 } as const;
  const summary = files
    .map((file, index) => {
      const how = file.matchedBy === undefined ? "" : MATCHED[file.matchedBy];
      const mark = letter[file.action];
      return { rank: rank[mark], line: `${mark} ${(plans[index] as Planned).shown}${how}` };
    })
    .sort((a, b) => a.rank - b.rank)
    .map((entry) => entry.line);
  const head = dryRun
    ? "Dry run: the patch applies. Nothing was written; it would change:"
    : "Success. Updated the following files:";
  // The summary and the warnings come first; the diffs share what is left.
  const heading = [head, ...summary].join("\n");
  const fixed =
    Buffer.byteLength(heading) + warnings.reduce((n, w) => n + Buffer.byteLength(w) + 2, 0);
  const budget = Math.max(
    0,
    Math.floor((MAX_RESULT_BYTES - NOTES_RESERVE_BYTES - fixed) / Math.max(1, files.length)),
  );
  const diffs = files.map((file) =>
    file.diff === undefined ? "(The diff is too large to show.)" : diffForModel(file.diff, budget),
  );
  return {
    files,
    dryRun,
    warnings,
    text: [heading, ...diffs, ...warnings].join("\n\n"),
  };
}

/**
 * The `apply_patch` tool: a multi-file patch in Codex's format (tools/patch), all files or
 * none. Every touched file is guarded as its single-file tool guards it (an update or delete
 * needs a full, fresh read; an add or a move's destination that exists is replaced as a `write`
 * of it would be, after a full, fresh read), under the locks of every path at once (this
 * process's and every other freshfs process's). The whole patch is computed and checked before
 * anything is written; then every new file's bytes are flushed to a temp file beside it, every
 * file checked once more, synchronously, and the renames and unlinks run back to back. A
 * failure among those (rare: the disk, a writer outside freshfs) puts back what had landed. A
 * crash leaves each file whole, old or new as its rename landed (RELIABILITY.md). Depends on
 * `tools/`, `state/`, `scan/`.
 */
import { FreshfsError } from "../errors.js";
import { type Aliases, Args } from "./args.js";
import {
  assertBasedOnRead,
  assertBytesRead,
  type CallOptions,
  type Current,
  checkGuard,
  readCurrent,
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
import { exists, landPatch, leftChanged, type Planned } from "./patch-land.js";
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
        (plan.replaced?.bytes.length ?? 0) +
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
    await landPatch(context, plans, warnings);
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
    // As for an add: a file on the way is NOT_A_DIRECTORY now.
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

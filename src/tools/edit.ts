/**
 * The `edit` and `multiEdit` tools: replace exact text (or text that differs only in
 * typographic quotes, each read as its ASCII twin) under the guard, keeping the file's
 * encoding, BOM, line endings and trailing newline, and answer with a unified diff. Depends on
 * `tools/`, `state/`.
 */
import { FreshfsError } from "../errors.js";
import type { ReadEntry } from "../state/tracker.js";
import { type Aliases, Args } from "./args.js";
import {
  assertBasedOnRead,
  type CallOptions,
  type Current,
  checkGuard,
  commitWrite,
  readCurrent,
  type ToolContext,
  underLocks,
} from "./commit.js";
import { firstChangedLine, unifiedDiff } from "./diff.js";
import { AMBIGUOUS_LINES_SHOWN, MAX_RESULT_BYTES } from "./limits.js";
import { explainMiss, type Found, findOld, linesOf, type MatchKind, type Span } from "./match.js";
import { cutLine, diffForModel, NOTES_RESERVE_BYTES } from "./output.js";
import {
  changedCharacters,
  isCodeFile,
  normalizeIntroducedQuotes,
  restyleQuoted,
} from "./quotes.js";
import type { ConfinedPath } from "./roots.js";
import {
  type DecodedText,
  editableText,
  encode,
  LineIndex,
  lineEndingOf,
  withLineEnding,
  withTrailingState,
} from "./text.js";

export interface EditParams {
  /** Aliases: `filePath`, `path`. */
  file_path?: string;
  /** The exact text to replace. Aliases: `oldString`, `oldText`. */
  old_string?: string;
  /** The text to put in its place (`$` is literal). Aliases: `newString`, `newText`. */
  new_string?: string;
  /** Replace every occurrence (else exactly one must exist). Alias: `replaceAll`. @default false */
  replace_all?: boolean | string;
  filePath?: string;
  path?: string;
  oldString?: string;
  oldText?: string;
  newString?: string;
  newText?: string;
  replaceAll?: boolean | string;
  /** Check the edit and show its diff; write nothing, record nothing. Alias: `dryRun`. @default false */
  dry_run?: boolean | string;
  dryRun?: boolean | string;
}

export interface MultiEditParams {
  file_path?: string;
  /** Applied to the file as it was: each matched against the original text, none overlapping. */
  edits?:
    | readonly Omit<EditParams, "file_path" | "filePath" | "path" | "dry_run" | "dryRun">[]
    | string;
  /** As edit's. @default false */
  dry_run?: boolean | string;
  filePath?: string;
  path?: string;
  dryRun?: boolean | string;
}

export interface EditResult {
  readonly path: string;
  /** Occurrences replaced, over all edits. */
  readonly replacements: number;
  /** `quotes`: some old text matched only with typographic quotes read as ASCII. */
  readonly matchedBy: MatchKind;
  /** The file did not exist and was created (an empty `old_string`). */
  readonly created: boolean;
  /** 1-based line of the new file where it first differs from the old. */
  readonly firstChangedLine: number | undefined;
  /** Unified diff; undefined when the texts were too different to diff in time. */
  readonly diff: string | undefined;
  /** Typographic quotes of the model's written as ASCII (in code files, where a curly quote ends no string). */
  readonly quotesNormalized: number;
  /** Guard warnings (warn policy). */
  readonly warnings: readonly string[];
  /** Nothing was written: the diff is what the edit would do. */
  readonly dryRun: boolean;
  readonly text: string;
}

interface Replacement {
  readonly old: string;
  readonly next: string;
  readonly all: boolean;
}

function readReplacement(args: Args): Replacement {
  const old = args.requiredString("old_string");
  const next = args.requiredString("new_string");
  const all = args.boolean("replace_all") ?? false;
  if (old === next) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      "old_string and new_string are the same, so there is nothing to change.",
    );
  }
  return { old, next, all };
}

export async function editTool(
  context: ToolContext,
  input: EditParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<EditResult> {
  const args = new Args("edit", input, aliases);
  const path = args.requiredText("file_path");
  const replacement = readReplacement(args);
  const dryRun = args.boolean("dry_run") ?? false;
  return applyEdits(context, path, [replacement], "edit", call, dryRun);
}

export async function multiEditTool(
  context: ToolContext,
  input: MultiEditParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<EditResult> {
  const args = new Args("multiEdit", input, aliases);
  const path = args.requiredText("file_path");
  const edits = args.list("edits").map(readReplacement);
  if (edits.length === 0) {
    throw new FreshfsError("INVALID_ARGUMENT", "multiEdit: edits must hold at least one edit.");
  }
  if (edits.length > 1 && edits.some((edit) => edit.old === "")) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      "multiEdit: an empty old_string (create the file) only works as the single edit.",
    );
  }
  const dryRun = args.boolean("dry_run") ?? false;
  return applyEdits(context, path, edits, "multiEdit", call, dryRun);
}

interface Located {
  readonly spans: readonly Span[];
  readonly kind: MatchKind;
  readonly edit: Replacement;
  readonly label: string;
}

async function applyEdits(
  context: ToolContext,
  path: string,
  edits: readonly Replacement[],
  tool: string,
  call: CallOptions,
  dryRun: boolean,
): Promise<EditResult> {
  const target = context.roots.confineFile(path);
  const shown = context.roots.display(target.lexical);
  const reconfine = () => context.roots.reconfine(path, target);
  return underLocks(context, [target.real], tool, call, reconfine, async () => {
    const current = await readCurrent(target, "edit", shown);
    const first = edits[0] as Replacement;
    if (first.old === "") return fillEmpty(context, target, shown, current, first, dryRun);
    if (!current.exists) {
      throw new FreshfsError(
        "NOT_FOUND",
        `${shown} does not exist. To create it, use write (or edit with an empty old_string).`,
        { path: target.lexical },
      );
    }
    // Not read (or changed) is what the model must fix first: a miss would mislead, and its
    // nearest lines would show a file the model has not read. After a partial read under
    // `allow-within-window`, the first check is against that window (staleness), the second,
    // once the edit's lines are known, against the lines themselves.
    const read = context.tracker.latest(target.lexical);
    const windowed = context.partialReads === "allow-within-window" && read?.partial === true;
    const warnings = await checkGuard(context, target, windowed ? windowOf(read) : undefined);
    const decoded = editableText(current.bytes, shown);
    const text = decoded.text;
    const located = edits.map((edit, index) => {
      const label = edits.length === 1 ? "" : `Edit ${index + 1} of ${edits.length}: `;
      return locate(text, edit, label, shown);
    });
    const ordered = assertDisjoint(located);
    const index = new LineIndex(text);
    const allSpans = ordered.map((entry) => entry.span);
    const lines = linesOf(index, allSpans);
    if (windowed) {
      for (const warning of await checkGuard(context, target, lines)) {
        if (!warnings.includes(warning)) warnings.push(warning);
      }
    }
    assertBasedOnRead(context, target, current);

    const { text: next, quotesNormalized } = rewrite(text, ordered, target.lexical);
    if (next === text) {
      throw new FreshfsError(
        "INVALID_ARGUMENT",
        `${tool} would leave ${shown} unchanged (the new text equals the text it replaces in the file's own quote style and line endings).`,
      );
    }
    const bytes = encode(next, decoded);
    if (!dryRun) await commitWrite(context, target, { current, bytes, warnings, lines });
    const kind: MatchKind = located.some((entry) => entry.kind === "quotes") ? "quotes" : "exact";
    return finish(
      shown,
      target,
      text,
      next,
      allSpans.length,
      kind,
      false,
      warnings,
      quotesNormalized,
      dryRun,
    );
  });
}

/** The lines a read showed. */
function windowOf(read: ReadEntry): { start: number; end: number } {
  const end = read.limit > 0 ? read.offset + read.limit - 1 : Number.MAX_SAFE_INTEGER;
  return { start: read.offset, end };
}

function locate(text: string, edit: Replacement, label: string, shown: string): Located {
  if (edit.old === "") {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `${label}old_string is empty, but ${shown} has content. Give the text to replace, or use write to replace the whole file.`,
    );
  }
  const found: Found | undefined = findOld(text, edit.old);
  if (!found) throw noMatch(text, edit.old, label, shown);
  if (found.spans.length > 1 && !edit.all) {
    const index = new LineIndex(text);
    const lines = found.spans.slice(0, AMBIGUOUS_LINES_SHOWN).map((s) => index.lineOf(s.start));
    const more = found.spans.length > lines.length ? ", ..." : "";
    throw new FreshfsError(
      "AMBIGUOUS",
      `${label}old_string occurs ${found.spans.length} times in ${shown} (lines ${lines.join(", ")}${more}). Add surrounding lines to old_string so it matches once, or set replace_all to change every occurrence.`,
    );
  }
  return { spans: found.spans, kind: found.kind, edit, label };
}

function noMatch(text: string, old: string, label: string, shown: string): FreshfsError {
  const miss = explainMiss(text, old);
  const parts = [`${label}old_string was not found in ${shown}.`];
  if (miss.hint) parts.push(miss.hint);
  if (miss.candidates.length > 0) {
    parts.push(
      `The closest lines are:\n${miss.candidates.map((c) => `${String(c.line).padStart(6)}\t${cutLine(c.text)}`).join("\n")}`,
    );
  }
  parts.push("Read the file again if it may have changed, and copy old_string from it exactly.");
  return new FreshfsError("NO_MATCH", parts.join("\n"));
}

interface PlacedSpan {
  readonly span: Span;
  readonly located: Located;
}

/** Every span of every edit, in file order; two edits touching the same text is an error. */
function assertDisjoint(located: readonly Located[]): PlacedSpan[] {
  const placed = located.flatMap((entry) => entry.spans.map((span) => ({ span, located: entry })));
  placed.sort((a, b) => a.span.start - b.span.start);
  for (let i = 1; i < placed.length; i++) {
    const before = placed[i - 1] as PlacedSpan;
    const after = placed[i] as PlacedSpan;
    if (after.span.start < before.span.end) {
      throw new FreshfsError(
        "INVALID_ARGUMENT",
        `${before.located.label || "Edit: "}overlaps ${after.located.label.replace(/: $/, "") || "another edit"}: each edit must change different text of the original file.`,
      );
    }
  }
  return placed;
}

/**
 * The file's text with every span replaced, the new text in the file's conventions, and how
 * many typographic quotes of the model's were written as ASCII.
 */
function rewrite(
  text: string,
  placed: readonly PlacedSpan[],
  path: string,
): { text: string; quotesNormalized: number } {
  const ending = lineEndingOf(text);
  const code = isCodeFile(path);
  let out = "";
  let at = 0;
  let quotesNormalized = 0;
  for (const { span, located } of placed) {
    const original = text.slice(span.start, span.end);
    const given = /[\r\n]/.test(located.edit.next)
      ? withLineEnding(located.edit.next, ending)
      : located.edit.next;
    let next = given;
    if (located.kind === "quotes") next = restyleQuoted(given, original, code, text);
    else if (code) next = normalizeIntroducedQuotes(given, text);
    if (code) quotesNormalized += changedCharacters(normalizeIntroducedQuotes(given, text), given);
    out += text.slice(at, span.start) + next;
    at = span.end;
  }
  out += text.slice(at);
  return { text: withTrailingState(out, text, ending), quotesNormalized };
}

/** An empty `old_string`: create the file, or fill an empty one (Claude Code's convention). */
async function fillEmpty(
  context: ToolContext,
  target: ConfinedPath,
  shown: string,
  current: Current,
  edit: Replacement,
  dryRun: boolean,
): Promise<EditResult> {
  if (current.exists && current.bytes.length > 0) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `old_string is empty, but ${shown} has content. Give the text to replace, or use write to replace the whole file.`,
    );
  }
  const warnings = await checkGuard(context, target);
  assertBasedOnRead(context, target, current);
  const code = isCodeFile(target.lexical);
  const text = code ? normalizeIntroducedQuotes(edit.next, "") : edit.next;
  const like: Pick<DecodedText, "encoding" | "bom"> = { encoding: "utf8", bom: false };
  if (!dryRun) await commitWrite(context, target, { current, bytes: encode(text, like), warnings });
  const normalized = changedCharacters(text, edit.next);
  return finish(shown, target, "", text, 1, "exact", !current.exists, warnings, normalized, dryRun);
}

function finish(
  shown: string,
  target: ConfinedPath,
  before: string,
  after: string,
  replacements: number,
  kind: MatchKind,
  created: boolean,
  warnings: readonly string[],
  quotesNormalized: number,
  dryRun: boolean,
): EditResult {
  const diff = unifiedDiff(shown, before, after);
  const first = firstChangedLine(before, after);
  const counted = `${replacements} replacement${replacements === 1 ? "" : "s"}${first === undefined ? "" : `, first changed line ${first}`}`;
  const what = dryRun
    ? created
      ? `Dry run: ${shown} would be created. Nothing was written.`
      : `Dry run: the edit applies to ${shown} (${counted}). Nothing was written.`
    : created
      ? `Created ${shown}.`
      : `Edited ${shown}: ${counted}.`;
  let quoteNote =
    kind === "quotes"
      ? " old_string matched only with typographic quotes read as ASCII; lines the edit kept keep the file's own quotes."
      : "";
  if (quotesNormalized > 0) {
    quoteNote += ` ${quotesNormalized} typographic quote${quotesNormalized === 1 ? " was" : "s were"} written as ASCII, since this code file never used ${quotesNormalized === 1 ? "that kind" : "those kinds"}.`;
  }
  const parts = [
    what + quoteNote,
    diff === undefined
      ? "(The diff is too large to show.)"
      : diffForModel(diff, MAX_RESULT_BYTES - NOTES_RESERVE_BYTES),
    ...warnings,
  ];
  return {
    path: target.lexical,
    replacements,
    matchedBy: kind,
    created,
    firstChangedLine: first,
    diff,
    quotesNormalized,
    warnings,
    dryRun,
    text: parts.join("\n\n"),
  };
}

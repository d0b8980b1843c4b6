/**
 * Codex's patch format (`*** Begin Patch`, the one GPT-family models are trained to emit, and
 * opencode's `apply_patch`), parsed, and an update's hunks applied to a file's text: pure, so
 * the whole patch is computed, and every failure found, before anything is written. Depends
 * on `tools/match`, `tools/quotes`, `tools/text`, `errors`.
 *
 * The grammar, as Codex's parser reads it (lenient where Codex is): a patch wrapped in a heredoc
 * (`apply_patch <<'EOF'` ... `EOF`) and whitespace around the marker lines are accepted.
 *
 *   patch   := "*** Begin Patch" op+ "*** End Patch"
 *   op      := "*** Add File: " path ("+" line)*
 *            | "*** Delete File: " path
 *            | "*** Update File: " path ("*** Move to: " path)? chunk*
 *   chunk   := ("@@" | "@@ " context)? (" " line | "-" line | "+" line | "")+ "*** End of File"?
 *
 * An update's old lines (context and removed) are looked for from where the previous hunk
 * ended, the first place wins (as Codex); exact, then with typographic quotes (the quote map
 * `edit` uses), dashes and spaces read as ASCII, then also ignoring whitespace at line ends,
 * then, last, at both ends, as Codex's last pass does: each level over the whole file before
 * the next, and the level used is reported (the last one with a word on indentation, which is
 * meaning in half the languages a model edits, and which the new lines take as written).
 *
 * The patched file ends with a line break, as Codex writes it, unless the patch says otherwise
 * with a unified diff's `\ No newline at end of file` after the new last line.
 */
import { FreshfsError } from "../errors.js";
import { explainMiss } from "./match.js";
import { cutLine } from "./output.js";
import { normalizeIntroducedQuotes, normalizeQuotes } from "./quotes.js";
import { lineEndingOf } from "./text.js";

export interface PatchLine {
  readonly op: " " | "-" | "+";
  readonly text: string;
}

export interface PatchChunk {
  /** The `@@ context` line, found first; undefined for a bare `@@` or none. */
  readonly context: string | undefined;
  readonly lines: readonly PatchLine[];
  /** `*** End of File`: the old lines end the file. */
  readonly endOfFile: boolean;
  /** Its new side's last line is followed by `\ No newline at end of file`. */
  readonly noFinalNewline: boolean;
  /** 1-based line of the patch where the hunk starts. */
  readonly line: number;
}

export type PatchOperation =
  | {
      readonly kind: "add";
      readonly path: string;
      readonly lines: readonly string[];
      readonly line: number;
    }
  | { readonly kind: "delete"; readonly path: string; readonly line: number }
  | {
      readonly kind: "update";
      readonly path: string;
      readonly moveTo: string | undefined;
      readonly chunks: readonly PatchChunk[];
      readonly line: number;
    };

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_PATCH", `apply_patch: ${message}`);
}

function isOperationHeader(line: string): boolean {
  const trimmed = line.trim();
  return (
    trimmed.startsWith(ADD) ||
    trimmed.startsWith(DELETE) ||
    trimmed.startsWith(UPDATE) ||
    trimmed === END
  );
}

/**
 * The line an `@@` header names, or undefined for a bare one. A unified diff's header
 * (`@@ -12,4 +12,5 @@ def run():`), which models write too, names no line by its numbers: what
 * follows them (git's function context) is the line, if anything.
 */
function contextOf(header: string): string | undefined {
  if (header === "@@") return undefined;
  const unified = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@\s*(.*)$/.exec(header);
  if (unified) return unified[1] === "" ? undefined : unified[1];
  return header.slice(header.startsWith("@@ ") ? 3 : 2);
}

/** The patch's lines, a heredoc wrapper removed (`<<'EOF'` ... `EOF`, as a shell call is written). */
function patchLines(input: string): { lines: string[]; first: number } {
  const lines = input.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  while (lines.length > 0 && (lines[lines.length - 1] as string).trim() === "") lines.pop();
  let first = 0;
  while (first < lines.length && (lines[first] as string).trim() === "") first++;
  const heredoc = /^(?:[\w.-]+\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*$/.exec(
    (lines[first] ?? "").trim(),
  );
  if (
    heredoc &&
    lines.length - first >= 2 &&
    (lines[lines.length - 1] as string).trim() === heredoc[2]
  ) {
    lines.pop();
    first++;
  }
  return { lines, first };
}

/** The operations of a patch, in order; `INVALID_PATCH` naming the line where it goes wrong. */
export function parsePatch(input: string): PatchOperation[] {
  const { lines, first } = patchLines(input);
  if ((lines[first] ?? "").trim() !== BEGIN) {
    throw invalid(`the first line of the patch must be '${BEGIN}'.`);
  }
  if (lines.length - first < 2 || (lines[lines.length - 1] as string).trim() !== END) {
    throw invalid(`the last line of the patch must be '${END}'.`);
  }
  const last = lines.length - 1;
  const operations: PatchOperation[] = [];
  let at = first + 1;
  const lineNo = (index: number) => index + 1;
  const pathAfter = (line: string, marker: string, index: number): string => {
    const path = line.trim().slice(marker.length).trim();
    if (path === "") throw invalid(`line ${lineNo(index)}: '${marker.trim()}' names no path.`);
    return path;
  };
  while (at < last) {
    const line = lines[at] as string;
    const trimmed = line.trim();
    if (trimmed === "") {
      at++;
      continue;
    }
    if (trimmed.startsWith(ADD)) {
      const path = pathAfter(line, ADD, at);
      const start = at;
      const added: string[] = [];
      at++;
      while (at < last && (lines[at] as string).startsWith("+")) {
        added.push((lines[at] as string).slice(1));
        at++;
      }
      operations.push({ kind: "add", path, lines: added, line: lineNo(start) });
      continue;
    }
    if (trimmed.startsWith(DELETE)) {
      operations.push({ kind: "delete", path: pathAfter(line, DELETE, at), line: lineNo(at) });
      at++;
      continue;
    }
    if (trimmed.startsWith(UPDATE)) {
      const path = pathAfter(line, UPDATE, at);
      const start = at;
      at++;
      let moveTo: string | undefined;
      if (at < last && (lines[at] as string).trim().startsWith(MOVE)) {
        moveTo = pathAfter(lines[at] as string, MOVE, at);
        at++;
      }
      const chunks: PatchChunk[] = [];
      while (at < last && !isOperationHeader(lines[at] as string)) {
        const current = lines[at] as string;
        if (current.trim() === "") {
          at++;
          continue;
        }
        let context: string | undefined;
        const chunkStart = at;
        if (current.trim().startsWith("@@")) {
          context = contextOf(current.trim());
          at++;
        } else if (chunks.length > 0 || !/^[ +-]/.test(current)) {
          throw invalid(
            `line ${lineNo(at)}: ${JSON.stringify(cutLine(current))} in the update of ${path} is not part of a hunk. Every hunk starts with '@@' (or '@@ ' and a line of the file), and each of its lines with ' ' (context), '-' (removed) or '+' (added).`,
          );
        }
        const body: PatchLine[] = [];
        let endOfFile = false;
        let noFinalNewline = false;
        // As Codex reads a hunk: a line's first character decides, so a context line that
        // holds `@@` or `*** End of File` of its own is context; any other line ends the hunk
        // (the next `@@`, the next operation, or a mistake the loop above names).
        while (at < last) {
          const text = lines[at] as string;
          if (text.trimEnd() === END_OF_FILE) {
            endOfFile = true;
            at++;
            break;
          }
          const op = text[0];
          // A unified diff's "\ No newline at end of file": after a removed line it is about the
          // old file, which the patch does not need; after an added or context line, the new
          // file ends there without a line break.
          if (text.startsWith("\\ ")) {
            noFinalNewline = body.length > 0 && (body[body.length - 1] as PatchLine).op !== "-";
            at++;
            continue;
          }
          if (text === "") body.push({ op: " ", text: "" });
          else if (op === " " || op === "-" || op === "+") body.push({ op, text: text.slice(1) });
          else if (body.length === 0) {
            throw invalid(
              `line ${lineNo(at)}: ${JSON.stringify(cutLine(text))} in hunk ${chunks.length + 1} of ${path} starts with neither ' ' (context), '-' (removed) nor '+' (added).`,
            );
          } else break;
          if ((body[body.length - 1] as PatchLine).op !== "-") noFinalNewline = false;
          at++;
        }
        if (body.length === 0) {
          throw invalid(
            `line ${lineNo(chunkStart)}: hunk ${chunks.length + 1} of ${path} has no lines.`,
          );
        }
        chunks.push({ context, lines: body, endOfFile, noFinalNewline, line: lineNo(chunkStart) });
      }
      if (chunks.length === 0 && moveTo === undefined) {
        throw invalid(`line ${lineNo(start)}: the update of ${path} has no hunks.`);
      }
      operations.push({ kind: "update", path, moveTo, chunks, line: lineNo(start) });
      continue;
    }
    throw invalid(
      `line ${lineNo(at)}: ${JSON.stringify(cutLine(trimmed))} is not an operation. Each starts with '${ADD}path', '${DELETE}path' or '${UPDATE}path'.`,
    );
  }
  if (operations.length === 0)
    throw invalid("the patch holds no operation, so it changes nothing.");
  return operations;
}

/**
 * `punctuation`: typographic quotes read as ASCII (edit's quote map), and, as Codex reads them,
 * dashes and typographic spaces too; `whitespace`: that, and whitespace at line ends ignored;
 * `indentation`: whitespace at both ends of a line ignored (Codex's last pass).
 */
export type PatchMatch = "exact" | "punctuation" | "whitespace" | "indentation";
const LEVELS: readonly PatchMatch[] = ["exact", "punctuation", "whitespace", "indentation"];
// Hyphens and dashes (U+2010-2015, minus U+2212), and no-break and typographic spaces.
const DASHES = /[\u2010-\u2015\u2212]/g;
const SPACES = /[\u00a0\u2002-\u200a\u202f\u205f\u3000]/g;
const plain = (line: string) => normalizeQuotes(line).replace(DASHES, "-").replace(SPACES, " ");
const KEY: Record<PatchMatch, (line: string) => string> = {
  exact: (line) => line,
  punctuation: plain,
  whitespace: (line) => plain(line).trimEnd(),
  indentation: (line) => plain(line).trim(),
};

export interface PatchedText {
  readonly text: string;
  /** The loosest level any hunk needed. */
  readonly matchedBy: PatchMatch;
  readonly added: number;
  readonly removed: number;
}

interface Found {
  readonly index: number;
  readonly level: PatchMatch;
}

/** Keyed lines per level, made when first needed. */
class Keyed {
  readonly #lines: readonly string[];
  readonly #keyed = new Map<PatchMatch, string[]>();

  constructor(lines: readonly string[]) {
    this.#lines = lines;
  }

  at(level: PatchMatch): readonly string[] {
    let keyed = this.#keyed.get(level);
    if (!keyed) {
      keyed = level === "exact" ? [...this.#lines] : this.#lines.map(KEY[level]);
      this.#keyed.set(level, keyed);
    }
    return keyed;
  }
}

/** Where `pattern` first occurs at or after `start` (only at the end, with `endOfFile`). */
function seek(
  file: Keyed,
  total: number,
  pattern: readonly string[],
  start: number,
  endOfFile: boolean,
): Found | undefined {
  if (pattern.length > total) return undefined;
  const from = endOfFile ? Math.max(start, total - pattern.length) : start;
  for (const level of LEVELS) {
    const lines = file.at(level);
    const wanted = pattern.map(KEY[level]);
    for (let index = from; index + wanted.length <= total; index++) {
      let same = true;
      for (let k = 0; k < wanted.length; k++) {
        if (lines[index + k] !== wanted[k]) {
          same = false;
          break;
        }
      }
      if (same) return { index, level };
    }
  }
  return undefined;
}

const SHOWN_OLD_LINES = 10;

function noMatch(
  text: string,
  lines: readonly string[],
  old: readonly string[],
  hunk: number,
  chunk: PatchChunk,
  shown: string,
  after: number,
): FreshfsError {
  const where = after > 0 ? ` after line ${after}` : "";
  const listed = old.slice(0, SHOWN_OLD_LINES).map((line) => `  ${cutLine(line)}`);
  if (old.length > SHOWN_OLD_LINES) listed.push(`  ... (${old.length - SHOWN_OLD_LINES} more)`);
  const parts = [
    `apply_patch: hunk ${hunk} of ${shown} (patch line ${chunk.line}) does not match the file: its context and removed lines were not found${where}${chunk.endOfFile ? " at the end of the file" : ""}:\n${listed.join("\n")}`,
  ];
  // edit's hint (the text is there with other whitespace) is about a substring; a hunk's lines
  // are whole lines, so what can be said is that one differs only in its indentation. One pass
  // over the file, whatever the hunk's length.
  const wanted = new Map<string, string>();
  for (const line of old) {
    const key = plain(line).trim();
    if (key !== "" && !wanted.has(key)) wanted.set(key, line);
  }
  for (let at = 0; at < lines.length && wanted.size > 0; at++) {
    const line = lines[at] as string;
    const given = wanted.get(plain(line).trim());
    if (given !== undefined && given !== line) {
      parts.push(
        `Line ${at + 1} of the file is ${JSON.stringify(cutLine(line))}: the same text with other indentation. A hunk's lines must keep the file's indentation.`,
      );
      break;
    }
  }
  const miss = explainMiss(text, old.join("\n"));
  if (miss.candidates.length > 0) {
    parts.push(
      `The closest lines are:\n${miss.candidates.map((c) => `${String(c.line).padStart(6)}\t${cutLine(c.text)}`).join("\n")}`,
    );
  }
  parts.push(
    "Nothing was changed. Read the file again, and copy the context and removed lines from it exactly.",
  );
  return new FreshfsError("NO_MATCH", parts.join("\n"));
}

const LOOSER = (a: PatchMatch, b: PatchMatch) => (LEVELS.indexOf(a) >= LEVELS.indexOf(b) ? a : b);

/**
 * `text` with an update's hunks applied, in its own line endings, ending with one as Codex
 * writes it (`\ No newline at end of file` aside); kept lines keep the file's spelling (a hunk
 * matched through the quote map rewrites nothing it only looked at). `NO_MATCH` names the hunk.
 */
export function applyChunks(
  text: string,
  chunks: readonly PatchChunk[],
  shown: string,
  code: boolean,
): PatchedText {
  const items = linesOf(text);
  const lines = items.map((item) => item.text);
  const file = new Keyed(lines);
  const ending = lineEndingOf(text);
  const replacements: { start: number; count: number; lines: Line[] }[] = [];
  let cursor = 0;
  let matchedBy: PatchMatch = "exact";
  let added = 0;
  let removed = 0;
  const spell = (line: string): Line => ({
    text: code ? normalizeIntroducedQuotes(line, text) : line,
    eol: ending,
  });
  chunks.forEach((chunk, index) => {
    const hunk = index + 1;
    if (chunk.context !== undefined) {
      const found = seek(file, lines.length, [chunk.context], cursor, false);
      if (!found) {
        throw new FreshfsError(
          "NO_MATCH",
          `apply_patch: hunk ${hunk} of ${shown} (patch line ${chunk.line}): its '@@ ${cutLine(chunk.context)}' line was not found${cursor > 0 ? ` after line ${cursor}` : ""}. Nothing was changed. Read the file again; the text after '@@ ' must be a line of the file, copied exactly.`,
        );
      }
      // An `@@` line only places the hunk, and a model writes `@@ def run():` for an indented
      // method: its indentation changes nothing written, and is not reported as the hunk's.
      matchedBy = LOOSER(matchedBy, found.level === "indentation" ? "whitespace" : found.level);
      cursor = found.index + 1;
    }
    let ops = chunk.lines;
    const oldOf = (list: readonly PatchLine[]) =>
      list.filter((l) => l.op !== "+").map((l) => l.text);
    // Added lines followed only by blank lines (the spacing before the next operation): an
    // addition, not a hunk to look for.
    let end = ops.length;
    while (
      end > 0 &&
      (ops[end - 1] as PatchLine).op === " " &&
      (ops[end - 1] as PatchLine).text.trim() === ""
    )
      end--;
    if (end > 0 && end < ops.length && oldOf(ops.slice(0, end)).length === 0)
      ops = ops.slice(0, end);
    let old = oldOf(ops);
    if (old.length === 0) {
      // Only added lines: right after the `@@` line; without one (or with `*** End of File`),
      // at the end of the file, where Codex puts them. The next hunk is looked for from here.
      const at = chunk.context !== undefined && !chunk.endOfFile ? cursor : lines.length;
      const fresh = withoutFinalNewline(
        ops.map((l) => spell(l.text)),
        chunk,
      );
      replacements.push({ start: at, count: 0, lines: fresh });
      added += fresh.length;
      return;
    }
    let found = seek(file, lines.length, old, cursor, chunk.endOfFile);
    // A blank context line closing a hunk is often a model's spacing, not the file's (Codex
    // retries without it too).
    const lastLine = ops[ops.length - 1] as PatchLine;
    if (!found && lastLine.op === " " && lastLine.text.trim() === "") {
      const shorter = ops.slice(0, -1);
      const shorterOld = oldOf(shorter);
      const retry =
        shorterOld.length > 0
          ? seek(file, lines.length, shorterOld, cursor, chunk.endOfFile)
          : undefined;
      if (retry) {
        ops = shorter;
        old = shorterOld;
        found = retry;
      }
    }
    if (!found) throw noMatch(text, lines, old, hunk, chunk, shown, cursor);
    matchedBy = LOOSER(matchedBy, found.level);
    const next: Line[] = [];
    let at = found.index;
    // A line that replaces a removed one takes its line ending (a mixed file stays as it was).
    const freed: string[] = [];
    for (const line of ops) {
      if (line.op === " ") {
        next.push(items[at++] as Line);
        freed.length = 0;
      } else if (line.op === "-") {
        freed.push((items[at++] as Line).eol);
        removed++;
      } else {
        const eol = freed.shift() || ending;
        next.push({ ...spell(line.text), eol });
        added++;
      }
    }
    replacements.push({
      start: found.index,
      count: old.length,
      lines: withoutFinalNewline(next, chunk),
    });
    cursor = found.index + old.length;
  });
  // An addition at the end of the file may come before hunks further up (Codex's order).
  replacements.sort((a, b) => a.start - b.start);
  const out = [...items];
  for (let k = replacements.length - 1; k >= 0; k--) {
    const r = replacements[k] as (typeof replacements)[number];
    out.splice(r.start, r.count, ...r.lines);
  }
  // Each kept line keeps its own line ending (a mixed file stays mixed); a line without one
  // (the old last line) gets the file's: the file ends with a line break, as Codex writes it,
  // unless the patch said its new last line has none.
  let joined = "";
  out.forEach((item, k) => {
    joined += item.text + (k === out.length - 1 && item.bare ? "" : item.eol || ending);
  });
  return { text: joined, matchedBy, added, removed };
}

/** A line of a file and the line break that ends it ("" for a last line without one). */
interface Line {
  readonly text: string;
  readonly eol: string;
  /** Written without a line break if it ends the file (`\ No newline at end of file`). */
  readonly bare?: boolean;
}

/** A hunk's new lines, the last one marked when the patch says it has no line break. */
function withoutFinalNewline(lines: Line[], chunk: PatchChunk): Line[] {
  const last = lines[lines.length - 1];
  if (chunk.noFinalNewline && last) lines[lines.length - 1] = { ...last, bare: true };
  return lines;
}

/** Lines as `read` numbers them (`\r\n`, `\n` or a lone `\r` ends one), each with its break. */
function linesOf(text: string): Line[] {
  const out: Line[] = [];
  const breaks = /\r\n|\r|\n/g;
  let at = 0;
  for (let found = breaks.exec(text); found; found = breaks.exec(text)) {
    out.push({ text: text.slice(at, found.index), eol: found[0] });
    at = found.index + found[0].length;
  }
  if (at < text.length) out.push({ text: text.slice(at), eol: "" });
  return out;
}

/** An added file's text: its lines, each ending with a newline (as Codex writes it). */
export function addedText(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join("");
}

/**
 * Keeping every tool's text under `MAX_RESULT_BYTES`: the records that fit, a diff or its
 * summary, and a last cut for anything else. Depends on `tools/limits`.
 */
import { DIFF_CONTEXT_LINES, MAX_RESULT_BYTES, READ_MAX_LINE_CHARS } from "./limits.js";

/** Room kept for the notes that follow a page of records (paging, skipped files, warnings). */
export const NOTES_RESERVE_BYTES = 16 * 1024;

/**
 * `text` if it fits under the cap; else cut at a line end with a note saying how much was left
 * out. The last guard: tools fit their own records first, so this bites on what they cannot
 * shape (a message quoting long lines, many long warnings).
 */
export function boundText(text: string, cap = MAX_RESULT_BYTES): string {
  const size = Buffer.byteLength(text);
  if (size <= cap) return text;
  const note = (left: number) =>
    `\n(Output cut at the ${cap / 1024} KiB a result may hold: ${left} more bytes not shown.)`;
  const room = cap - Buffer.byteLength(note(size));
  // The cut must fit in bytes; a UTF-16 index is at most that many UTF-8 bytes.
  let cut = Buffer.from(text).subarray(0, room).toString("utf8");
  // A character split by the byte cut decodes as U+FFFD: drop it.
  if (cut.endsWith("\uFFFD") && !text.startsWith(cut)) cut = cut.slice(0, -1);
  const lineEnd = cut.lastIndexOf("\n");
  if (lineEnd > room / 2) cut = cut.slice(0, lineEnd);
  return cut + note(size - Buffer.byteLength(cut));
}

/**
 * The most of `count` records whose rendering fits in `budget` bytes (`render(n)` is the text of
 * the first n; its size only grows with n), found by bisection: at least 0, at most `count`.
 */
export function fitting(count: number, render: (n: number) => string, budget: number): number {
  if (Buffer.byteLength(render(count)) <= budget) return count;
  let low = 0;
  let high = count;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (Buffer.byteLength(render(middle)) <= budget) low = middle;
    else high = middle;
  }
  return low;
}

// How many hunks a summarized diff names before it only counts the rest.
const HUNKS_NAMED = 50;

/**
 * A unified diff as a model is shown it: whole if it fits in `budget`, else its changed lines
 * (from the hunk headers) and how much was left out, so a model knows what to read back.
 */
export function diffForModel(diff: string, budget: number): string {
  const trimmed = diff.trimEnd();
  if (Buffer.byteLength(trimmed) <= budget) return trimmed;
  const ranges: string[] = [];
  let hunks = 0;
  for (const match of trimmed.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    hunks++;
    if (ranges.length >= HUNKS_NAMED) continue;
    const start = Number(match[3]);
    const length = match[4] === undefined ? 1 : Number(match[4]);
    ranges.push(length <= 1 ? `${start}` : `${start}-${start + length - 1}`);
  }
  const more = hunks > ranges.length ? `, and ${hunks - ranges.length} more hunks` : "";
  const room = budget >= 1024 ? `${Math.floor(budget / 1024)} KiB` : `${budget} bytes`;
  return `(The diff is ${Buffer.byteLength(trimmed)} bytes, over the ${room} a result may show, so it is left out. The lines of the new file it covers, each hunk with up to ${DIFF_CONTEXT_LINES} lines of context: ${ranges.join(", ") || "none"}${more}. Read those lines to check the change.)`;
}

/** A line as `read` shows it: past `READ_MAX_LINE_CHARS`, cut with a marker of how much is hidden. */
export function cutLine(line: string): string {
  if (line.length <= READ_MAX_LINE_CHARS) return line;
  // Never between the two halves of a surrogate pair (an emoji, say).
  const high = line.charCodeAt(READ_MAX_LINE_CHARS - 1);
  const at = high >= 0xd800 && high <= 0xdbff ? READ_MAX_LINE_CHARS - 1 : READ_MAX_LINE_CHARS;
  return `${line.slice(0, at)}… [line cut: ${line.length - at} more characters]`;
}

/**
 * The errors of rg's syntax, worded and shown as rg shows them, with a hint of how to search
 * otherwise. Depends on `errors`.
 */
import { FreshfsError, quoted } from "../../../../errors.js";

/** A pattern that asks for a line break, in a search of lines (rg refuses it too). */
export function lineBreakError(pattern: string): FreshfsError {
  return new FreshfsError(
    "INVALID_PATTERN",
    `The pattern ${quoted(pattern)} matches a line break, which no single line holds; search with multiline (-U) to match across lines.`,
  );
}

/** Characters of the pattern an error shows on either side of the place (rg shows it all). */
const SHOWN_AROUND = 60;

/**
 * A parse error, reported as rg reports it: the pattern, a caret under the place (`from` and
 * `to` count code points), the reason; then how to search otherwise. A long pattern is shown
 * around the place only, so that the error stays small whatever was sent.
 */
export function syntaxError(
  pattern: string,
  from: number,
  to: number,
  message: string,
): FreshfsError {
  const chars = Array.from(pattern);
  const first = Math.max(0, from - SHOWN_AROUND);
  const last = Math.min(chars.length, Math.max(to, from + 1) + SHOWN_AROUND);
  const head = first > 0 ? "…" : "";
  const shown = `${head}${chars.slice(first, last).join("")}${last < chars.length ? "…" : ""}`;
  const width = Math.max(1, Math.min(to, last) - from);
  const caret = `${" ".repeat(from - first + head.length)}${"^".repeat(width)}`;
  return new FreshfsError(
    "INVALID_PATTERN",
    `regex parse error:\n    ${shown}\n    ${caret}\nerror: ${message}\n${HINT}`,
  );
}

const HINT =
  '(Patterns use rg\'s regex syntax. To search for the text as it is, pass fixedStrings (-F); for lookaround or backreferences, syntax "javascript" (-P).)';

// What `(?-u)` lets rg match byte by byte, which a search of decoded text cannot do.
export const BYTE_DOT =
  "under (?-u), `.` matches any byte, and freshfs matches decoded characters: drop (?-u), or match the bytes with ASCII classes";
export const BYTE_CLASS =
  "under (?-u), a negated class matches single bytes, and freshfs matches decoded characters: drop (?-u), or list what to match";
export const BYTE_ESCAPE =
  "under (?-u), an escape above \\x7F is a raw byte, which freshfs cannot match in decoded text";

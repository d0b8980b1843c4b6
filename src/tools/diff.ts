/**
 * The unified diff an edit or overwrite returns, and its first changed line. jsdiff (the `diff`
 * package) computes it: a Myers line diff with hunks is what both Claude Code and opencode
 * use, and a hand-written one would only be a worse copy. Depends on `tools/text`.
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { DIFF_CONTEXT_LINES } from "./limits.js";
import { LineIndex, toLf } from "./text.js";

// A line diff of two large, very different texts is quadratic, and it runs on the event loop
// (an MCP server's other calls wait): past this the diff is left out.
const DIFF_TIMEOUT_MS = 100;

/** `--- oldName` / `+++ name` and hunks; undefined when the texts are too different to diff in time. */
export function unifiedDiff(
  name: string,
  before: string,
  after: string,
  oldName = name,
): string | undefined {
  // Shown without CRs: a CRLF file's diff reads like any other, and its line endings are kept.
  return createTwoFilesPatch(oldName, name, toLf(before), toLf(after), undefined, undefined, {
    context: DIFF_CONTEXT_LINES,
    headerOptions: FILE_HEADERS_ONLY,
    timeout: DIFF_TIMEOUT_MS,
  });
}

/** The 1-based line of `after` where it first differs from `before`; undefined when equal. */
export function firstChangedLine(before: string, after: string): number | undefined {
  if (before === after) return undefined;
  const shortest = Math.min(before.length, after.length);
  let at = 0;
  while (at < shortest && before.charCodeAt(at) === after.charCodeAt(at)) at++;
  return new LineIndex(after.slice(0, at)).lineOf(at);
}

/**
 * The `read` tool: a window of a text file as numbered lines (`cat -n`'s `%6d\t` shape, the
 * one models are trained on), recorded in the guard. Depends on `tools/`, `state/`, `errors`.
 */
import { readdirSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, extname } from "node:path";
import { FreshfsError, fromFsError, isGone } from "../errors.js";
import { describeNonFile } from "../state/snapshot.js";
import { Args } from "./args.js";
import { type ToolContext, tooLarge } from "./commit.js";
import {
  MAX_FILE_BYTES,
  MAX_RESULT_BYTES,
  READ_DEFAULT_LIMIT,
  READ_MAX_LINE_CHARS,
} from "./limits.js";
import { cutLine } from "./output.js";
import { type ConfinedPath, readConfined } from "./roots.js";
import { decode, isBinary, splitLines } from "./text.js";

export interface ReadParams {
  /** The file (absolute, or relative to the first root). Aliases: `filePath`, `path`. */
  file_path?: string;
  /** 1-based first line. @default 1 */
  offset?: number | string;
  /** Lines to show. @default 2000 */
  limit?: number | string;
  filePath?: string;
  path?: string;
}

export interface ReadResult {
  /** Absolute path as given. */
  readonly path: string;
  /** The lines shown, without numbers. */
  readonly lines: readonly string[];
  /** 1-based number of the first line shown (0 when none was). */
  readonly startLine: number;
  /** 1-based number of the last line shown (0 when none was). */
  readonly endLine: number;
  readonly totalLines: number;
  /** Lines remain after `endLine`: read on with `offset = endLine + 1`. */
  readonly truncated: boolean;
  /** Lines cut at the column bound. */
  readonly cutLines: number;
  readonly encoding: "utf8" | "utf16le" | "utf16be";
  readonly text: string;
}

/** Other names in the directory that look like the one asked for: a typo's likely targets. */
function lookAlikes(path: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const asked = basename(path);
  const wanted = asked.toLowerCase();
  const stem = basename(wanted, extname(wanted));
  return names
    .filter((name) => {
      const lower = name.toLowerCase();
      return name !== asked && (lower === wanted || basename(lower, extname(lower)) === stem);
    })
    .slice(0, 3);
}

function notFound(
  context: ToolContext,
  target: ConfinedPath,
  shown: string,
  cause: unknown,
): FreshfsError {
  // The model now knows the file is gone: a record of its old bytes would only block creating
  // it anew (STALE, "deleted since you last read it") forever.
  context.tracker.forget(target.lexical);
  const similar = lookAlikes(target.real);
  const hint = similar.length > 0 ? ` Did you mean ${similar.join(", ")}?` : "";
  return new FreshfsError("NOT_FOUND", `${shown} does not exist.${hint}`, {
    path: target.lexical,
    cause,
  });
}

// The notes after the lines (where to go on, lines cut, encoding) take well under this.
const LINES_BUDGET = MAX_RESULT_BYTES - 1024;

export async function readTool(context: ToolContext, input: ReadParams): Promise<ReadResult> {
  const args = new Args("read", input);
  const path = args.requiredText("file_path", ["filePath", "path"]);
  const offset = Math.max(1, args.integer("offset", [], { min: 0 }) ?? 1);
  const limit = args.integer("limit", [], { min: 1 }) ?? READ_DEFAULT_LIMIT;
  const target = context.roots.confineFile(path);
  const shown = context.roots.display(target.lexical);

  let size: bigint;
  try {
    const stats = await stat(target.real, { bigint: true });
    if (!stats.isFile()) {
      const what = describeNonFile(stats);
      const hint = stats.isDirectory() ? " Use glob or find to list its files." : "";
      throw new FreshfsError("NOT_A_FILE", `${shown} is ${what}, not a file.${hint}`, {
        path: target.lexical,
      });
    }
    size = stats.size;
  } catch (error) {
    if (isGone(error)) throw notFound(context, target, shown, error);
    throw fromFsError(error, "read", shown);
  }
  if (size > BigInt(MAX_FILE_BYTES)) throw tooLarge(shown, Number(size));
  let bytes: Buffer;
  try {
    bytes = readConfined(target.real);
  } catch (error) {
    if (isGone(error)) throw notFound(context, target, shown, error);
    throw fromFsError(error, "read", shown);
  }
  if (isBinary(bytes)) {
    // Not shown, but looked at: recorded as a full read, so that under `strict` the model can
    // still delete, move or replace the file (a change after now is caught as for any file).
    // Without the record, "read it first" would have no way to be satisfied.
    await context.tracker.recordRead(target.lexical, { content: bytes });
    throw new FreshfsError(
      "BINARY",
      `${shown} is a binary file (${bytes.length} bytes, a NUL byte near the start); read shows text files only. Its current state is recorded, so it may be deleted, renamed or overwritten.`,
      { path: target.lexical },
    );
  }
  const decoded = decode(bytes);
  const all = splitLines(decoded.text);
  const total = all.length;
  const notes: string[] = [];
  if (!decoded.exact) {
    notes.push(
      "The file is not valid UTF-8: undecodable bytes are shown as \uFFFD, and edit refuses it.",
    );
  }
  if (total === 0) {
    await context.tracker.recordRead(target.lexical, { content: bytes });
    return result(target, [], 0, 0, 0, false, 0, decoded.encoding, "(The file is empty.)");
  }
  if (offset > total) {
    // Nothing was shown, so nothing is recorded: a stray offset must not replace a full read.
    const text = `(${shown} has ${total} line${total === 1 ? "" : "s"}; offset=${offset} is past the end.)`;
    return result(target, [], 0, 0, total, false, 0, decoded.encoding, text);
  }

  const lines: string[] = [];
  const out: string[] = [];
  let bytesOut = 0;
  let cut = 0;
  let stoppedBySize = false;
  for (let index = offset - 1; index < total && lines.length < limit; index++) {
    const line = cutLine(all[index] as string);
    if (line.length !== (all[index] as string).length) cut++;
    const numbered = `${String(index + 1).padStart(6)}\t${line}`;
    const cost = Buffer.byteLength(numbered) + 1;
    if (lines.length > 0 && bytesOut + cost > LINES_BUDGET) {
      stoppedBySize = true;
      break;
    }
    bytesOut += cost;
    lines.push(all[index] as string);
    out.push(numbered);
  }
  const end = offset + lines.length - 1;
  const truncated = end < total;
  await context.tracker.recordRead(target.lexical, {
    offset,
    limit: truncated ? lines.length : 0,
    content: bytes,
  });
  if (truncated) {
    const why = stoppedBySize ? ` (output is capped at ${MAX_RESULT_BYTES / 1024} KiB)` : "";
    notes.push(
      `Showing lines ${offset}-${end} of ${total}${why}. Use offset=${end + 1} to continue.`,
    );
  }
  if (cut > 0) {
    notes.push(
      `${cut} line${cut === 1 ? " was" : "s were"} longer than ${READ_MAX_LINE_CHARS} characters and cut.`,
    );
  }
  const text = [out.join("\n"), ...notes.map((note) => `\n(${note})`)].join("\n");
  return result(target, lines, offset, end, total, truncated, cut, decoded.encoding, text);
}

function result(
  target: ConfinedPath,
  lines: readonly string[],
  startLine: number,
  endLine: number,
  totalLines: number,
  truncated: boolean,
  cutLines: number,
  encoding: ReadResult["encoding"],
  text: string,
): ReadResult {
  return {
    path: target.lexical,
    lines,
    startLine,
    endLine,
    totalLines,
    truncated,
    cutLines,
    encoding,
    text,
  };
}

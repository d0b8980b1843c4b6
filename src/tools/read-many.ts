/**
 * The `read_many` tool: several files in one call, each read and recorded exactly as `read`
 * would (a window, an image, a PDF's pages), a failure shown in its place without stopping
 * the others, and one output cap for the whole call: a file that no longer fits is not read,
 * so not recorded, and the text says to read it alone. Depends on `tools/`.
 */
import { FreshfsError } from "../errors.js";
import { type Aliases, Args, NO_ALIASES } from "./args.js";
import type { CallOptions, ToolContext } from "./commit.js";
import {
  MAX_IMAGE_BYTES,
  MAX_RESULT_BYTES,
  READ_MANY_MAX_FILES,
  READ_MAX_LINE_CHARS,
} from "./limits.js";
import { type ReadResult, readTool } from "./read.js";

export interface ReadManyParams {
  /** The files (absolute, or relative to the first root). Alias: `file_paths`. */
  paths?: readonly string[] | string;
  /** As read's, for every file. @default 1 */
  offset?: number | string;
  /** As read's, for every file. @default 2000 */
  limit?: number | string;
  file_paths?: readonly string[] | string;
}

export interface ReadManyFile {
  /** As given. */
  readonly path: string;
  /** The read, when it was made. */
  readonly result: ReadResult | undefined;
  /** Why it was not: the error code and the message (`SKIPPED`: the call's cap was reached first). */
  readonly error:
    | {
        readonly code: string;
        readonly message: string;
        /** The file's absolute path, when the error names one. */
        readonly path?: string | undefined;
      }
    | undefined;
}

export interface ReadManyResult {
  readonly files: readonly ReadManyFile[];
  /** Files read. */
  readonly read: number;
  /** Files that failed or were not read. */
  readonly failed: number;
  readonly text: string;
}

// A file's read needs room for its header and at least one whole line cut at the column
// bound (4 bytes a character at most); with less left, it is not read at all.
const MIN_FILE_BUDGET = READ_MAX_LINE_CHARS * 4 + 1024;
const NOTES_BYTES = 4096;

export async function readManyTool(
  context: ToolContext,
  input: ReadManyParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<ReadManyResult> {
  const args = new Args("read_many", input, aliases);
  const paths = args.strings("paths");
  if (!paths || paths.length === 0) {
    throw new FreshfsError("INVALID_ARGUMENT", "read_many: paths must name at least one file.");
  }
  if (paths.length > READ_MANY_MAX_FILES) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `read_many: paths names ${paths.length} files; at most ${READ_MANY_MAX_FILES} in one call.`,
    );
  }
  const offset = args.integer("offset", { min: 0 });
  const limit = args.integer("limit", { min: 1 });
  const files: ReadManyFile[] = [];
  const blocks: string[] = [];
  const skipped = `Not read: the call's output cap (${MAX_RESULT_BYTES / 1024} KiB) was reached. Read it with read.`;
  const headerOf = (path: string) => `==> ${path} <==`;
  // What each file costs at the least, said as skipped: kept back for the files after the one
  // being read, so every file gets its header and its note within the cap.
  const noteCost = (path: string) => Buffer.byteLength(`${headerOf(path)}\n(${skipped})`) + 2;
  let tail = paths.reduce((sum, path) => sum + noteCost(path), 0);
  let textLeft = MAX_RESULT_BYTES - NOTES_BYTES;
  let imageLeft = MAX_IMAGE_BYTES;
  try {
    for (const path of paths) {
      if (call.signal?.aborted) throw new FreshfsError("ABORTED", "read_many was cancelled.");
      const header = headerOf(path);
      tail -= noteCost(path);
      textLeft -= Buffer.byteLength(header) + 2;
      const room = textLeft - tail;
      if (room < MIN_FILE_BUDGET) {
        files.push({ path, result: undefined, error: { code: "SKIPPED", message: skipped } });
        blocks.push(`${header}\n(${skipped})`);
        textLeft -= Buffer.byteLength(skipped) + 2;
        continue;
      }
      try {
        const params = {
          file_path: path,
          ...(offset === undefined ? {} : { offset }),
          ...(limit === undefined ? {} : { limit }),
        };
        const result = await readTool(context, params, NO_ALIASES, call, {
          textBytes: room - 1024,
          imageBytes: imageLeft,
        });
        textLeft -= Buffer.byteLength(result.text);
        if (result.image) imageLeft -= result.image.data.length;
        files.push({ path, result, error: undefined });
        blocks.push(`${header}\n${result.text}`);
      } catch (error) {
        if (!(error instanceof FreshfsError) || error.code === "ABORTED") throw error;
        const shown = `(${error.message} (${error.code}))`;
        textLeft -= Buffer.byteLength(shown);
        files.push({
          path,
          result: undefined,
          error: { code: error.code, message: error.message, path: error.path },
        });
        blocks.push(`${header}\n${shown}`);
      }
    }
    // Cancelled during the last read: the answer is not delivered either.
    if (call.signal?.aborted) throw new FreshfsError("ABORTED", "read_many was cancelled.");
  } catch (error) {
    // The call ends without its answer (cancelled, or a failure no file's place can hold):
    // the files read so far were never shown, so their records go (failing closed: an earlier
    // read of one of them must be made again).
    // A refused binary file or image is recorded too (its error carries its path).
    for (const file of files) {
      const path = file.result?.path ?? file.error?.path;
      if (path !== undefined) context.tracker.forget(path);
    }
    throw error;
  }
  const read = files.filter((file) => file.result).length;
  return { files, read, failed: files.length - read, text: blocks.join("\n\n") };
}

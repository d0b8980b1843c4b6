/**
 * The `read` tool: a window of a text file as numbered lines (`cat -n`'s `%6d\t` shape, the
 * one models are trained on), recorded in the guard. Depends on `tools/`, `state/`, `errors`.
 */
import { readdirSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, extname } from "node:path";
import { FreshfsError, fromFsError, isGone } from "../errors.js";
import { describeNonFile } from "../state/snapshot.js";
import { type Aliases, Args } from "./args.js";
import { type CallOptions, type ToolContext, tooLarge } from "./commit.js";
import {
  MAX_FILE_BYTES,
  MAX_IMAGE_BYTES,
  MAX_RESULT_BYTES,
  PDF_MAX_PAGES,
  PDF_TIMEOUT_MS,
  READ_DEFAULT_LIMIT,
  READ_MAX_LINE_CHARS,
} from "./limits.js";
import { type ImageInfo, imageOf, isPdf, pdfText } from "./media.js";
import { cutLine, fitting } from "./output.js";
import { type ConfinedPath, readConfined } from "./roots.js";
import { decode, isBinary, splitLines } from "./text.js";

export interface ReadParams {
  /** The file (absolute, or relative to the first root). Aliases: `filePath`, `path`. */
  file_path?: string;
  /** 1-based first line. @default 1 */
  offset?: number | string;
  /** Lines to show. @default 2000 */
  limit?: number | string;
  /** A PDF's pages to extract: `3`, `1-5`. @default the first 100 */
  pages?: string | number;
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
  /** A text file's encoding; undefined for an image or a PDF. */
  readonly encoding: "utf8" | "utf16le" | "utf16be" | undefined;
  /** `image`: the file is an image, in `image`; `pdf`: the lines are its pages' text. */
  readonly kind: "text" | "image" | "pdf";
  /** An image's bytes and type (for a model that can see it: MCP `image` content). */
  readonly image: (ImageInfo & { readonly data: Buffer }) | undefined;
  /** A PDF's pages: how many it has, and the first and last extracted. */
  readonly pages:
    | { readonly total: number; readonly first: number; readonly last: number }
    | undefined;
  readonly text: string;
}

/** What one read may take: `read_many` shares its cap among its files. */
export interface ReadBudget {
  /** UTF-8 bytes of numbered lines. */
  readonly textBytes: number;
  /** Bytes of image. */
  readonly imageBytes: number;
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

export const READ_BUDGET: ReadBudget = { textBytes: LINES_BUDGET, imageBytes: MAX_IMAGE_BYTES };

export async function readTool(
  context: ToolContext,
  input: ReadParams,
  aliases: Aliases,
  call: CallOptions = {},
  budget: ReadBudget = READ_BUDGET,
): Promise<ReadResult> {
  const args = new Args("read", input, aliases);
  const path = args.requiredText("file_path");
  const offset = Math.max(1, args.integer("offset", { min: 0 }) ?? 1);
  const limit = args.integer("limit", { min: 1 }) ?? READ_DEFAULT_LIMIT;
  const pages = pageRange(
    typeof input.pages === "number" ? String(input.pages) : args.string("pages"),
  );
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
  const image = imageOf(bytes);
  if (image) return readImage(context, target, shown, bytes, image, budget);
  if (isPdf(bytes)) {
    const pdf = await readPdf(context, target, shown, bytes, pages, budget, call);
    if (pdf) return pdf;
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
    if (lines.length > 0 && bytesOut + cost > budget.textBytes) {
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
    kind: "text",
    image: undefined,
    pages: undefined,
    text,
  };
}

/** An image, shown as itself (recorded as a full read: the model saw all of it). */
async function readImage(
  context: ToolContext,
  target: ConfinedPath,
  shown: string,
  bytes: Buffer,
  image: ImageInfo,
  budget: ReadBudget,
): Promise<ReadResult> {
  const kind = image.mimeType.slice("image/".length).toUpperCase();
  if (bytes.length > MAX_IMAGE_BYTES) {
    // Looked at and refused, as a binary file is: recorded, or under `strict` it could never be
    // deleted or replaced (no read of it would ever pass).
    await context.tracker.recordRead(target.lexical, { content: bytes });
    throw new FreshfsError(
      "TOO_LARGE",
      `${shown} is a ${kind} image of ${(bytes.length / MIB).toFixed(1)} MiB; images over ${MAX_IMAGE_BYTES / MIB} MiB are not shown (a model's image input takes 5 MB at most). Make a smaller copy (a shell's convert or sips), then read that. Its current state is recorded, so it may be deleted, renamed or overwritten.`,
      { path: target.lexical },
    );
  }
  if (bytes.length > budget.imageBytes) {
    // It would be shown alone: not looked at, so not recorded.
    throw new FreshfsError(
      "TOO_LARGE",
      `${shown} is a ${kind} image of ${(bytes.length / MIB).toFixed(1)} MiB, more than is left of this call's ${MAX_IMAGE_BYTES / MIB} MiB for images; read it alone.`,
      { path: target.lexical },
    );
  }
  await context.tracker.recordRead(target.lexical, { content: bytes });
  const pixels =
    image.width === undefined || image.height === undefined
      ? ""
      : `, ${image.width}x${image.height} pixels`;
  return {
    path: target.lexical,
    lines: [],
    startLine: 0,
    endLine: 0,
    totalLines: 0,
    truncated: false,
    cutLines: 0,
    encoding: undefined,
    kind: "image",
    image: { ...image, data: bytes },
    pages: undefined,
    text: `${shown}: a ${kind} image${pixels}, ${bytes.length} bytes (shown as an image).`,
  };
}

const MIB = 1024 * 1024;

/** `pages`: `3` or `1-5`, 1-based, at most PDF_MAX_PAGES of them. */
function pageRange(given: string | undefined): { first: number; last: number } | undefined {
  if (given === undefined || given.trim() === "") return undefined;
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(given);
  const first = Number(match?.[1]);
  const last = match?.[2] === undefined ? first : Number(match[2]);
  if (!match || first < 1 || last < first) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `read: pages must be a page number or a range such as 1-5, not ${JSON.stringify(given)}.`,
    );
  }
  if (last - first + 1 > PDF_MAX_PAGES) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `read: pages ${given} names ${last - first + 1} pages; at most ${PDF_MAX_PAGES} in one call.`,
    );
  }
  return { first, last };
}

/**
 * A PDF's text, page by page, bounded like any read; recorded as a full read of its bytes.
 * Undefined for a file pdf.js cannot open that is text all the same: it is read as text.
 */
async function readPdf(
  context: ToolContext,
  target: ConfinedPath,
  shown: string,
  bytes: Buffer,
  asked: { first: number; last: number } | undefined,
  budget: ReadBudget,
  call: CallOptions,
): Promise<ReadResult | undefined> {
  const range = asked ?? { first: 1, last: PDF_MAX_PAGES };
  const deadline = performance.now() + PDF_TIMEOUT_MS;
  let pdf: Awaited<ReturnType<typeof pdfText>>;
  try {
    pdf = await pdfText(bytes, range.first, range.last, shown, deadline, call.signal);
  } catch (error) {
    // A text file that only starts like a PDF (a hand-written fixture) is read as text.
    if (error instanceof FreshfsError && error.code === "BINARY" && !isBinary(bytes)) {
      return undefined;
    }
    // Looked at, as a binary file is: recorded, so that it can still be deleted or replaced.
    if (error instanceof FreshfsError && error.code === "BINARY") {
      await context.tracker.recordRead(target.lexical, { content: bytes });
      throw new FreshfsError(
        "BINARY",
        `${error.message} Its current state is recorded, so it may be deleted, renamed or overwritten.`,
        { path: target.lexical, cause: error },
      );
    }
    throw error;
  }
  await context.tracker.recordRead(target.lexical, { content: bytes });
  const out: string[] = [];
  const lines: string[] = [];
  let used = 0;
  let last = range.first - 1;
  let cut = false;
  let pageCut: string | undefined;
  for (const { page, text } of pdf.pages) {
    const block = `--- page ${page} of ${pdf.totalPages} ---\n${text || "(no text on this page)"}`;
    const cost = Buffer.byteLength(block) + 1;
    if (out.length > 0 && used + cost > budget.textBytes) {
      cut = true;
      break;
    }
    if (cost > budget.textBytes) {
      // One page past the cap: its first lines, cut at a line end, and a note saying so.
      const pageLines = block.split("\n");
      const keep = fitting(
        pageLines.length,
        (n) => pageLines.slice(0, n).join("\n"),
        budget.textBytes,
      );
      out.push(pageLines.slice(0, keep).join("\n"));
      lines.push(...pageLines.slice(1, keep));
      pageCut = `(Page ${page} holds more text than one read shows: it was cut after its line ${Math.max(0, keep - 1)} of ${pageLines.length - 1}.)`;
      used = budget.textBytes;
      last = page;
      continue;
    }
    out.push(block);
    lines.push(...text.split("\n"));
    used += cost;
    last = page;
  }
  const notes: string[] = [];
  if (pageCut !== undefined) notes.push(pageCut);
  if (range.first > pdf.totalPages) {
    notes.push(
      `(${shown} has ${pdf.totalPages} page${pdf.totalPages === 1 ? "" : "s"}; pages ${range.first}- are past the end.)`,
    );
  } else if (last < pdf.totalPages && (cut || pdf.timedOut || asked === undefined)) {
    const why = cut
      ? ` (output is capped at ${MAX_RESULT_BYTES / 1024} KiB)`
      : pdf.timedOut
        ? ` (text extraction stops after ${PDF_TIMEOUT_MS / 1000} s)`
        : "";
    notes.push(
      `(Showing pages ${range.first}-${last} of ${pdf.totalPages}${why}. Use pages="${last + 1}-${Math.min(pdf.totalPages, last + PDF_MAX_PAGES)}" to continue.)`,
    );
  }
  return {
    path: target.lexical,
    lines,
    startLine: 0,
    endLine: 0,
    totalLines: 0,
    truncated: last < Math.min(range.last, pdf.totalPages),
    cutLines: 0,
    encoding: undefined,
    kind: "pdf",
    image: undefined,
    pages: { total: pdf.totalPages, first: range.first, last },
    text: [out.join("\n\n"), ...notes].join("\n\n"),
  };
}

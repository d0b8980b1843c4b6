/**
 * What `read` shows of a file that is not text: images (PNG, JPEG, GIF, WebP) by their magic
 * bytes, with their size in pixels from the header, and PDFs as the text of their pages.
 * Depends on `errors`.
 *
 * The four image headers are read by hand: each is a fixed field or a short marker scan (a
 * few dozen lines), where a dependency (image-size) would bring parsers for twenty formats
 * that no model is shown. PDF text is pdf.js's, through unpdf (unjs; no dependencies, 2.3 MB
 * unpacked, against pdfjs-dist's 41 MB): a PDF's text needs a real parser, loaded only when a
 * PDF is read.
 */
import { FreshfsError } from "../errors.js";

export type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

export interface ImageInfo {
  readonly mimeType: ImageType;
  /** Pixels, from the header; undefined when the header does not say (a damaged file). */
  readonly width: number | undefined;
  readonly height: number | undefined;
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: readonly number[] | string, at = 0): boolean {
  const expected = typeof prefix === "string" ? [...prefix].map((c) => c.charCodeAt(0)) : prefix;
  if (bytes.length < at + expected.length) return false;
  return expected.every((byte, index) => bytes[at + index] === byte);
}

/** The image `bytes` hold, by magic number (never by name: a `.png` may be anything). */
export function imageOf(bytes: Buffer): ImageInfo | undefined {
  if (startsWith(bytes, PNG)) {
    const ihdr = startsWith(bytes, "IHDR", 12) && bytes.length >= 24;
    return {
      mimeType: "image/png",
      width: ihdr ? bytes.readUInt32BE(16) : undefined,
      height: ihdr ? bytes.readUInt32BE(20) : undefined,
    };
  }
  if (startsWith(bytes, "GIF87a") || startsWith(bytes, "GIF89a")) {
    const whole = bytes.length >= 10;
    return {
      mimeType: "image/gif",
      width: whole ? bytes.readUInt16LE(6) : undefined,
      height: whole ? bytes.readUInt16LE(8) : undefined,
    };
  }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { mimeType: "image/jpeg", ...jpegSize(bytes) };
  if (startsWith(bytes, "RIFF") && startsWith(bytes, "WEBP", 8)) {
    return { mimeType: "image/webp", ...webpSize(bytes) };
  }
  return undefined;
}

type Size = { width: number | undefined; height: number | undefined };
const UNKNOWN: Size = { width: undefined, height: undefined };

/** The first start-of-frame marker's size: segments are walked by their lengths. */
function jpegSize(bytes: Buffer): Size {
  let at = 2;
  while (at + 9 <= bytes.length) {
    if (bytes[at] !== 0xff) return UNKNOWN;
    const marker = bytes[at + 1] as number;
    // Fill bytes, and markers without a length (RSTn, TEM).
    if (marker === 0xff) {
      at++;
      continue;
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    const frame =
      marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (frame) return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  return UNKNOWN;
}

/** The size of the first chunk: lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webpSize(bytes: Buffer): Size {
  if (startsWith(bytes, "VP8 ", 12) && bytes.length >= 30) {
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  }
  if (startsWith(bytes, "VP8L", 12) && bytes.length >= 25) {
    const b1 = bytes[22] as number;
    const b2 = bytes[23] as number;
    const b3 = bytes[24] as number;
    return {
      width: 1 + (((b1 & 0x3f) << 8) | (bytes[21] as number)),
      height: 1 + (((b3 & 0x0f) << 10) | (b2 << 2) | ((b1 & 0xc0) >> 6)),
    };
  }
  if (startsWith(bytes, "VP8X", 12) && bytes.length >= 30) {
    return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  }
  return UNKNOWN;
}

export function isPdf(bytes: Buffer): boolean {
  return startsWith(bytes, "%PDF-");
}

export interface PdfText {
  readonly totalPages: number;
  /** The pages extracted, 1-based, in order, each with its text. */
  readonly pages: readonly { readonly page: number; readonly text: string }[];
  /** The extraction stopped at the time bound before the last page asked for. */
  readonly timedOut: boolean;
}

/**
 * The text of pages `first`..`last` (clamped to the document), one page at a time so a signal
 * or the time bound stops between pages. `BINARY` when pdf.js cannot open the file.
 */
export async function pdfText(
  bytes: Buffer,
  first: number,
  last: number,
  shown: string,
  deadline: number,
  signal: AbortSignal | undefined,
): Promise<PdfText> {
  const { getDocumentProxy } = await import("unpdf");
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes the buffer over (transfers it): a copy, so the caller's bytes stay.
    document = await getDocumentProxy(new Uint8Array(bytes));
  } catch (error) {
    throw new FreshfsError(
      "BINARY",
      `${shown} looks like a PDF, but its text cannot be read (${(error as Error).message}).`,
      { cause: error },
    );
  }
  try {
    const pages: { page: number; text: string }[] = [];
    const end = Math.min(last, document.numPages);
    let timedOut = false;
    for (let page = first; page <= end; page++) {
      if (signal?.aborted) throw new FreshfsError("ABORTED", "read was cancelled.");
      if (performance.now() > deadline) {
        timedOut = true;
        break;
      }
      let content: Awaited<
        ReturnType<Awaited<ReturnType<typeof document.getPage>>["getTextContent"]>
      >;
      try {
        content = await (await document.getPage(page)).getTextContent();
      } catch (error) {
        throw new FreshfsError(
          "BINARY",
          `${shown} is a PDF whose page ${page} cannot be read (${(error as Error).message}).`,
          { cause: error },
        );
      }
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str;
        if (item.hasEOL) text += "\n";
      }
      pages.push({ page, text: text.trimEnd() });
    }
    return { totalPages: document.numPages, pages, timedOut };
  } finally {
    await document.destroy();
  }
}

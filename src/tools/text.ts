/**
 * Text as the tools see it: decoding with the file's own encoding and byte order mark, line
 * endings, binary detection, and encoding back to the same bytes shape. Depends on `errors`.
 */
import { FreshfsError } from "../errors.js";
import { BINARY_SNIFF_BYTES } from "./limits.js";

export type TextEncoding = "utf8" | "utf16le" | "utf16be";

export interface DecodedText {
  /** The text, without a byte order mark. */
  readonly text: string;
  readonly encoding: TextEncoding;
  /** The bytes began with a byte order mark (kept on write). */
  readonly bom: boolean;
  /** Every byte decoded; false when invalid UTF-8 was shown as U+FFFD. */
  readonly exact: boolean;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function utf16Order(bytes: Buffer): TextEncoding | undefined {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return "utf16le";
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return "utf16be";
  return undefined;
}

/** A NUL byte in the first 8 KiB, as git and ripgrep decide; UTF-16 with a BOM is text. */
export function isBinary(bytes: Buffer): boolean {
  if (utf16Order(bytes)) return false;
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

function swapped(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes.subarray(0, bytes.length - (bytes.length % 2)));
  return copy.swap16();
}

export function decode(bytes: Buffer): DecodedText {
  const order = utf16Order(bytes);
  // An odd byte count leaves half a code unit that no decoding keeps: not exact.
  const whole = bytes.length % 2 === 0;
  if (order === "utf16le") {
    return {
      text: bytes.subarray(2).toString("utf16le"),
      encoding: order,
      bom: true,
      exact: whole,
    };
  }
  if (order === "utf16be") {
    return {
      text: swapped(bytes.subarray(2)).toString("utf16le"),
      encoding: order,
      bom: true,
      exact: whole,
    };
  }
  const bom = bytes.subarray(0, 3).equals(UTF8_BOM);
  const body = bom ? bytes.subarray(3) : bytes;
  try {
    return { text: strictUtf8.decode(body), encoding: "utf8", bom, exact: true };
  } catch {
    return { text: body.toString("utf8"), encoding: "utf8", bom, exact: false };
  }
}

/** `text` in the encoding and BOM state of `like`. */
export function encode(text: string, like: Pick<DecodedText, "encoding" | "bom">): Buffer {
  switch (like.encoding) {
    case "utf16le":
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    case "utf16be":
      return Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, "utf16le").swap16()]);
    case "utf8":
      return like.bom
        ? Buffer.concat([UTF8_BOM, Buffer.from(text, "utf8")])
        : Buffer.from(text, "utf8");
  }
}

/**
 * Text an edit may rewrite: decoded without loss. Invalid UTF-8 (a Latin-1 file, say) would be
 * written back as U+FFFD everywhere, outside the edit too.
 */
export function editableText(bytes: Buffer, shown: string): DecodedText {
  if (isBinary(bytes)) {
    throw new FreshfsError("BINARY", `${shown} is a binary file; it cannot be edited as text.`, {
      path: shown,
    });
  }
  const decoded = decode(bytes);
  if (!decoded.exact) {
    throw new FreshfsError(
      "UNSUPPORTED_ENCODING",
      `${shown} is not valid UTF-8 (nor UTF-16 with a byte order mark), so an edit would corrupt it. Change it with another tool.`,
      { path: shown },
    );
  }
  return decoded;
}

export type LineEnding = "\n" | "\r\n" | "\r";

/** The line ending most lines use (CRLF, LF, or a lone CR as classic Mac OS files have). */
export function lineEndingOf(text: string): LineEnding {
  let crlf = 0;
  let lf = 0;
  let cr = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 10) lf++;
    else if (code === 13) {
      if (text.charCodeAt(at + 1) === 10) {
        crlf++;
        at++;
      } else cr++;
    }
  }
  if (crlf > lf && crlf >= cr) return "\r\n";
  if (cr > lf && cr > crlf) return "\r";
  return "\n";
}

/** Every bare `\n` as `\r\n` (an existing `\r\n` stays as it is: never `\r\r\n`). */
export function toCrlf(text: string): string {
  return text.replace(/(?<!\r)\n/g, "\r\n");
}

export function toLf(text: string): string {
  return text.replaceAll("\r\n", "\n");
}

/** `text` with its line breaks in `ending`. */
export function withLineEnding(text: string, ending: LineEnding): string {
  if (ending === "\r") return text.replace(/\r?\n/g, "\r");
  return ending === "\r\n" ? toCrlf(text) : toLf(text);
}

/** Lines as the read tool numbers them: split at `\r\n`, `\n` and a lone `\r` (as the guard counts). */
export function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (/[\r\n]$/.test(text)) lines.pop();
  return lines;
}

export function endsWithLineBreak(text: string): boolean {
  return text.endsWith("\n") || text.endsWith("\r");
}

/**
 * `text` given the trailing-newline state of `original`: a file that ended with a line break
 * still does, one that did not still does not. Empty text stays empty.
 */
export function withTrailingState(text: string, original: string, ending: LineEnding): string {
  if (text.length === 0 || original.length === 0) return text;
  const had = endsWithLineBreak(original);
  const has = endsWithLineBreak(text);
  if (had && !has) return text + ending;
  if (!had && has) return text.replace(/(\r\n|\r|\n)$/, "");
  return text;
}

/** A whole new content for a file that may exist, and what it replaces. */
export interface Overwrite {
  /** The replaced file's text ("" where there was none, or it was binary). */
  readonly before: string;
  /** The new text, with the replaced file's line ending. */
  readonly text: string;
  readonly like: Pick<DecodedText, "encoding" | "bom">;
}

const UTF8 = { encoding: "utf8", bom: false } as const;
const UTF8_WITH_BOM = { encoding: "utf8", bom: true } as const;

/**
 * `content` as it overwrites `current` (undefined: no file): in its encoding, byte order mark and
 * line ending, and, with `keepTrailing`, its trailing-newline state. A file that was binary or
 * not valid text is replaced by `content` as UTF-8; a BOM `content` begins with is kept as one.
 */
export function overwriting(
  current: Buffer | undefined,
  content: string,
  keepTrailing: boolean,
): Overwrite {
  let text = content;
  if (current && current.length > 0 && !isBinary(current)) {
    const decoded = decode(current);
    const like = decoded.exact ? decoded : UTF8;
    const ending = lineEndingOf(decoded.text);
    if (/[\r\n]/.test(text)) text = withLineEnding(text, ending);
    if (keepTrailing) text = withTrailingState(text, decoded.text, ending);
    if (text.startsWith("\uFEFF") && like.bom) text = text.slice(1);
    return { before: decoded.text, text, like };
  }
  if (text.startsWith("\uFEFF")) return { before: "", text: text.slice(1), like: UTF8_WITH_BOM };
  return { before: "", text, like: UTF8 };
}

/** Where lines start in a text, for 1-based line numbers of offsets (breaks as `splitLines`). */
export class LineIndex {
  readonly #starts: number[] = [0];

  constructor(text: string) {
    for (let at = 0; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code === 10 || (code === 13 && text.charCodeAt(at + 1) !== 10)) {
        this.#starts.push(at + 1);
      }
    }
  }

  /** The 1-based line holding offset `index`. */
  lineOf(index: number): number {
    let low = 0;
    let high = this.#starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.#starts[mid] as number) <= index) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  }
}

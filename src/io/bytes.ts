/**
 * File names that are not UTF-8, carried in JavaScript strings without loss. Linux names are
 * bytes; Node decodes them as UTF-8 and turns every invalid byte into U+FFFD, after which the
 * name no longer leads to its file. Here each byte that is not part of a valid UTF-8 sequence
 * is written as the lone surrogate U+DC80 + (byte - 0x80), as Python's `surrogateescape` does:
 * decoding UTF-8 never yields a lone surrogate, so the mapping is one to one, a valid name is
 * its usual string, and the bytes come back exactly. Pure; depends on nothing.
 */

const ESCAPE_BASE = 0xdc00;

/** Whether `text` holds an escaped byte (a lone U+DC80-U+DCFF). */
export function hasEscapedBytes(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc80 || code > 0xdcff) continue;
    const before = i > 0 ? text.charCodeAt(i - 1) : 0;
    if (before < 0xd800 || before > 0xdbff) return true;
  }
  return false;
}

/** The length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there begins none. */
function sequenceAt(bytes: Uint8Array, i: number): number {
  const lead = bytes[i] as number;
  if (lead < 0x80) return 1;
  let length: number;
  let min: number;
  if (lead >= 0xc2 && lead <= 0xdf) [length, min] = [2, 0x80];
  else if (lead >= 0xe0 && lead <= 0xef) [length, min] = [3, 0x800];
  else if (lead >= 0xf0 && lead <= 0xf4) [length, min] = [4, 0x10000];
  else return 0;
  if (i + length > bytes.length) return 0;
  let code = lead & (0x7f >> length);
  for (let k = 1; k < length; k++) {
    const next = bytes[i + k] as number;
    if ((next & 0xc0) !== 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if (code < min || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  return length;
}

/** A name's bytes as a string: UTF-8 decoded, each invalid byte escaped. */
export function decodeName(bytes: Uint8Array): string {
  let out = "";
  let from = 0;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < bytes.length; ) {
    const length = sequenceAt(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    out +=
      buffer.toString("utf8", from, i) + String.fromCharCode(ESCAPE_BASE + (bytes[i] as number));
    i++;
    from = i;
  }
  return out + buffer.toString("utf8", from);
}

/** The bytes a (possibly escaped) string stands for. */
export function encodeName(text: string): Buffer {
  if (!hasEscapedBytes(text)) return Buffer.from(text, "utf8");
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc80 || code > 0xdcff) continue;
    const before = i > 0 ? text.charCodeAt(i - 1) : 0;
    if (before >= 0xd800 && before <= 0xdbff) continue;
    parts.push(Buffer.from(text.slice(from, i), "utf8"), Buffer.from([code - ESCAPE_BASE]));
    from = i + 1;
  }
  parts.push(Buffer.from(text.slice(from), "utf8"));
  return Buffer.concat(parts);
}

/** A path for Node's fs calls: the string itself, or its bytes when it holds escaped ones. */
export function fsPath(path: string): string | Buffer {
  return hasEscapedBytes(path) ? encodeName(path) : path;
}

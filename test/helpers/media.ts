/**
 * Test helpers: tiny valid image (PNG, JPEG, GIF, WebP in its three forms) and PDF files,
 * built in memory byte by byte, so the tests know every header field they assert.
 */
import { deflateSync } from "node:zlib";

// --- PNG ---------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO 3309, as PNG uses): node:zlib has no crc32 before Node 22. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

export interface PngOptions {
  /** Bytes of an ancillary private chunk (`prVt`) before IDAT: a big file of few pixels. */
  extraChunkBytes?: number;
  /** RGB of every pixel. @default [255, 0, 0] */
  color?: readonly [number, number, number];
}

/** A `width`×`height` 8-bit RGB PNG of one color. */
export function png(width: number, height: number, options: PngOptions = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // color type: truecolor
  // compression, filter, interlace: 0
  const [r, g, b] = options.color ?? [255, 0, 0];
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  const chunks = [pngChunk("IHDR", ihdr)];
  if (options.extraChunkBytes !== undefined) {
    // Lowercase first letter: ancillary; lowercase second: private; a decoder skips it.
    chunks.push(pngChunk("prVt", Buffer.alloc(options.extraChunkBytes, 0x2a)));
  }
  chunks.push(pngChunk("IDAT", deflateSync(raw)), pngChunk("IEND", Buffer.alloc(0)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks]);
}

// --- JPEG --------------------------------------------------------------------------------

function jpegSegment(marker: number, data: Uint8Array): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/**
 * A baseline JPEG's headers: SOI, APP0 (JFIF), DQT, DHT (before the frame, so a size reader
 * must skip 0xC4, which is no frame), SOF0 with the size, then EOI. No scan: enough for any
 * header reader, not for a decoder.
 */
export function jpeg(width: number, height: number): Buffer {
  const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const dqt = Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]);
  const dht = Buffer.concat([Buffer.from([0, 0, 1]), Buffer.alloc(14, 0), Buffer.from([0])]);
  const sof = Buffer.alloc(15);
  sof[0] = 8; // precision
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  sof[5] = 3; // components
  sof.set([1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0], 6);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    jpegSegment(0xe0, jfif),
    jpegSegment(0xdb, dqt),
    jpegSegment(0xc4, dht),
    jpegSegment(0xc0, sof),
    Buffer.from([0xff, 0xd9]),
  ]);
}

// --- GIF ---------------------------------------------------------------------------------

/**
 * A `width`×`height` GIF89a of color 0 of a two-color table. The LZW data sends a clear code
 * before every pixel, so codes stay 3 bits wide and no string table is needed.
 */
export function gif(width: number, height: number): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  screen[4] = 0x80; // global color table of 2 entries
  const palette = Buffer.from([0, 0, 0, 255, 255, 255]);
  const descriptor = Buffer.alloc(10);
  descriptor[0] = 0x2c;
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  const codes: number[] = [];
  for (let i = 0; i < width * height; i++) codes.push(4, 0);
  codes.push(5);
  const packed: number[] = [];
  let bits = 0;
  let count = 0;
  for (const code of codes) {
    bits |= code << count;
    count += 3;
    while (count >= 8) {
      packed.push(bits & 0xff);
      bits >>= 8;
      count -= 8;
    }
  }
  if (count > 0) packed.push(bits & 0xff);
  const blocks: number[] = [];
  for (let at = 0; at < packed.length; at += 255) {
    const block = packed.slice(at, at + 255);
    blocks.push(block.length, ...block);
  }
  return Buffer.concat([
    Buffer.from("GIF89a", "latin1"),
    screen,
    palette,
    descriptor,
    Buffer.from([2, ...blocks, 0, 0x3b]),
  ]);
}

// --- WebP --------------------------------------------------------------------------------

function riffChunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.write(type, 0, "latin1");
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, Buffer.alloc(data.length % 2)]);
}

function riff(chunks: readonly Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from("WEBP", "latin1"), ...chunks]);
  const head = Buffer.alloc(8);
  head.write("RIFF", 0, "latin1");
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

/**
 * A VP8L bitstream of `width`×`height` opaque black pixels: no transform, no color cache, one
 * prefix-code group of five single-symbol simple codes, so every pixel takes zero bits.
 */
function vp8lBitstream(width: number, height: number): Buffer {
  const bits: number[] = [];
  const put = (value: number, n: number) => {
    for (let i = 0; i < n; i++) bits.push((value >> i) & 1);
  };
  put(width - 1, 14);
  put(height - 1, 14);
  put(0, 1); // alpha is used: no
  put(0, 3); // version 0
  put(0, 1); // no transform
  put(0, 1); // no color cache
  put(0, 1); // no meta prefix codes
  const single = (symbol: number) => {
    put(1, 1); // simple code
    put(0, 1); // one symbol
    if (symbol < 2) {
      put(0, 1); // 1-bit symbol
      put(symbol, 1);
    } else {
      put(1, 1); // 8-bit symbol
      put(symbol, 8);
    }
  };
  single(0); // green
  single(0); // red
  single(0); // blue
  single(255); // alpha
  single(0); // distance
  const bytes = Buffer.alloc(Math.ceil(bits.length / 8));
  bits.forEach((bit, i) => {
    bytes[i >> 3] = (bytes[i >> 3] as number) | (bit << (i & 7));
  });
  return Buffer.concat([Buffer.from([0x2f]), bytes]);
}

/** A lossless (`VP8L`) WebP. */
export function webpLossless(width: number, height: number): Buffer {
  return riff([riffChunk("VP8L", vp8lBitstream(width, height))]);
}

/**
 * A lossy (`VP8 `) WebP's key-frame header (frame tag, start code, 14-bit sizes with the two
 * scale bits set, which a size reader must mask off), followed by zeroed partition bytes.
 */
export function webpLossy(width: number, height: number): Buffer {
  const frame = Buffer.alloc(30);
  // Key frame (bit 0 = 0), version 0, shown (bit 4), first partition of 10 bytes.
  const tag = (0 << 0) | (0 << 1) | (1 << 4) | (10 << 5);
  frame.writeUIntLE(tag, 0, 3);
  frame.set([0x9d, 0x01, 0x2a], 3);
  frame.writeUInt16LE((width & 0x3fff) | (1 << 14), 6);
  frame.writeUInt16LE((height & 0x3fff) | (2 << 14), 8);
  return riff([riffChunk("VP8 ", frame)]);
}

/** An extended (`VP8X`) WebP: the canvas size in VP8X, the pixels in a VP8L chunk after. */
export function webpExtended(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  return riff([riffChunk("VP8X", vp8x), riffChunk("VP8L", vp8lBitstream(width, height))]);
}

// --- PDF ---------------------------------------------------------------------------------

function pdfString(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/**
 * A PDF of one page per entry of `pages`, each page's lines set in Helvetica 12 pt, one under
 * the other, with a correct cross-reference table (every object's byte offset).
 */
export function pdf(pages: readonly (readonly string[])[]): Buffer {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`;
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
  pages.forEach((lines, i) => {
    const id = pageIds[i] as number;
    const stream = [
      "BT",
      "/F1 12 Tf",
      "14 TL",
      "72 720 Td",
      ...lines.map((line, n) => `${n === 0 ? "" : "T* "}${pdfString(line)} Tj`),
      "ET",
    ].join("\n");
    objects[id] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${id + 1} 0 R >>`;
    objects[id + 1] =
      `<< /Length ${Buffer.byteLength(stream, "latin1")} >>\nstream\n${stream}\nendstream`;
  });
  let out = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, "latin1");
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) {
    out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  }
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

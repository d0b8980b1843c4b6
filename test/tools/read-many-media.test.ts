/**
 * `read` of images and PDFs, and `read_many`, on real files: the type from magic bytes, the
 * size from the header, the image and page bounds, the guard's record of what was shown (or
 * not), and read_many's per-file errors and shared output and image caps.
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  MAX_IMAGE_BYTES,
  MAX_RESULT_BYTES,
  PDF_MAX_PAGES,
  READ_MANY_MAX_FILES,
  Workspace,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { gif, jpeg, pdf, png, webpExtended, webpLossless, webpLossy } from "../helpers/media.js";

/** Appends `extra` to `path` from another node process (an outside change the guard must see). */
function appendFromOtherProcess(path: string, extra: string): void {
  execFileSync(process.execPath, [
    "-e",
    "require('node:fs').appendFileSync(process.argv[1], process.argv[2])",
    path,
    extra,
  ]);
}

/** A PNG of `total` bytes exactly (a 1x1 image padded by a private ancillary chunk). */
function pngOfSize(total: number): Buffer {
  const base = png(1, 1).length;
  // The chunk adds its 12 bytes of length, type and CRC around its data.
  const bytes = png(1, 1, { extraChunkBytes: total - base - 12 });
  expect(bytes.length).toBe(total);
  return bytes;
}

/** `count` lines of `width` characters (the last characters are the line number), 100 KiB by default. */
function textOfLines(count: number, width: number, tag: string): string {
  return Array.from({ length: count }, (_, i) => {
    const line = `${tag} ${i + 1} `;
    return `${line.padEnd(width - 1, "x")}\n`;
  }).join("");
}

describe("read: images", () => {
  it("returns a PNG as an image: its bytes, type and header size, no lines", async () => {
    const bytes = png(7, 5);
    const root = await tempTree({ "dot.png": bytes });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "dot.png" });
    expect(result.kind).toBe("image");
    expect(result.image?.mimeType).toBe("image/png");
    expect(result.image?.width).toBe(7);
    expect(result.image?.height).toBe(5);
    expect(Buffer.compare(result.image?.data as Buffer, bytes)).toBe(0);
    expect(result).toMatchObject({
      path: join(root, "dot.png"),
      lines: [],
      startLine: 0,
      endLine: 0,
      totalLines: 0,
      truncated: false,
      encoding: undefined,
      pages: undefined,
    });
    expect(result.text).toContain("dot.png");
    expect(result.text).toContain("PNG image");
    expect(result.text).toContain("7x5 pixels");
    expect(result.text).toContain(`${bytes.length} bytes`);
  });

  it.each([
    ["JPEG", "photo.jpg", jpeg(640, 480), "image/jpeg", 640, 480],
    ["GIF", "anim.gif", gif(9, 4), "image/gif", 9, 4],
    ["WEBP", "lossy.webp", webpLossy(321, 123), "image/webp", 321, 123],
    ["WEBP", "lossless.webp", webpLossless(33, 17), "image/webp", 33, 17],
    ["WEBP", "extended.webp", webpExtended(1000, 2000), "image/webp", 1000, 2000],
  ])("returns a %s (%s) with its type and header size", async (kind, name, bytes, mime, w, h) => {
    const root = await tempTree({ [name]: bytes });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: name });
    expect(result.kind).toBe("image");
    expect(result.lines).toEqual([]);
    expect(result.image?.mimeType).toBe(mime);
    expect([result.image?.width, result.image?.height]).toEqual([w, h]);
    expect(Buffer.compare(result.image?.data as Buffer, bytes)).toBe(0);
    expect(result.text).toContain(`a ${kind} image, ${w}x${h} pixels, ${bytes.length} bytes`);
  });

  it("takes the type from the magic bytes, never from the name", async () => {
    const bytes = gif(3, 2);
    const root = await tempTree({
      "x.dat": png(4, 6),
      "x.png": "not an image\njust text\n",
      noext: bytes,
      "pic.jpg": png(2, 2),
    });
    const ws = new Workspace({ roots: root });
    const dat = await ws.read({ file_path: "x.dat" });
    expect(dat.kind).toBe("image");
    expect(dat.image).toMatchObject({ mimeType: "image/png", width: 4, height: 6 });
    const named = await ws.read({ file_path: "x.png" });
    expect(named.kind).toBe("text");
    expect(named.image).toBeUndefined();
    expect(named.lines).toEqual(["not an image", "just text"]);
    expect(named.text).toBe("     1\tnot an image\n     2\tjust text");
    const bare = await ws.read({ file_path: "noext" });
    expect(bare.image).toMatchObject({ mimeType: "image/gif", width: 3, height: 2 });
    const liar = await ws.read({ file_path: "pic.jpg" });
    expect(liar.image?.mimeType).toBe("image/png");
  });

  it("shows an image of exactly MAX_IMAGE_BYTES and refuses one byte more with TOO_LARGE, recorded as a binary file is", async () => {
    const root = await tempTree({
      "fits.png": pngOfSize(MAX_IMAGE_BYTES),
      "big.png": pngOfSize(MAX_IMAGE_BYTES + 1),
    });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const fits = await ws.read({ file_path: "fits.png" });
    expect(fits.kind).toBe("image");
    expect(fits.image?.data.length).toBe(MAX_IMAGE_BYTES);

    const message = await rejectsWith(ws.read({ file_path: "big.png" }), "TOO_LARGE");
    expect(message).toContain("big.png");
    expect(message).toContain("PNG");
    expect(message).toContain(`${MAX_IMAGE_BYTES / 1024 / 1024} MiB`);
    expect(message).toContain("state is recorded");
    // Refused, but looked at, as a binary file is: recorded, so strict can still delete it.
    await ws.delete({ file_path: "big.png" });
    expect(existsSync(join(root, "big.png"))).toBe(false);
  });

  it("refuses a PNG made large by bytes after IEND with TOO_LARGE", async () => {
    const bytes = Buffer.concat([png(2, 2), Buffer.alloc(MAX_IMAGE_BYTES, 7)]);
    const root = await tempTree({ "tail.png": bytes });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const message = await rejectsWith(ws.read({ file_path: "tail.png" }), "TOO_LARGE");
    expect(message).toMatch(/3\.8 MiB|3\.7 MiB/);
    // Changed after the refused read: STALE, as for any file read.
    writeFileSync(join(root, "tail.png"), Buffer.concat([bytes, Buffer.from([1])]));
    await rejectsWith(ws.delete({ file_path: "tail.png" }), "STALE");
  });

  it("records a shown image as a full read: strict deletes it, and catches a change by another process (STALE)", async () => {
    const root = await tempTree({ "a.png": png(3, 3), "b.webp": webpLossless(5, 5) });
    const ws = new Workspace({ roots: root, policy: "strict" });
    await rejectsWith(ws.delete({ file_path: "a.png" }), "NOT_READ");
    await ws.read({ file_path: "a.png" });
    await ws.delete({ file_path: "a.png" });
    expect(existsSync(join(root, "a.png"))).toBe(false);

    await ws.read({ file_path: "b.webp" });
    appendFromOtherProcess(join(root, "b.webp"), "more");
    await rejectsWith(ws.delete({ file_path: "b.webp" }), "STALE");
    expect(existsSync(join(root, "b.webp"))).toBe(true);
    // Read again, the new state is recorded and the delete goes through.
    await ws.read({ file_path: "b.webp" });
    await ws.delete({ file_path: "b.webp" });
    expect(existsSync(join(root, "b.webp"))).toBe(false);
  });
});

const THREE_PAGES = [
  ["Alpha first page", "alpha second line"],
  ["Bravo middle page"],
  ["Charlie last page"],
];

describe("read: PDFs", () => {
  it("shows a one-page PDF's text, with the page count", async () => {
    const root = await tempTree({ "doc.pdf": pdf([["Hello from a PDF", "and a (second) line"]]) });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "doc.pdf" });
    expect(result.kind).toBe("pdf");
    expect(result.image).toBeUndefined();
    expect(result.pages).toEqual({ total: 1, first: 1, last: 1 });
    expect(result.truncated).toBe(false);
    expect(result.text).toContain("--- page 1 of 1 ---");
    expect(result.text).toContain("Hello from a PDF");
    expect(result.text).toContain("and a (second) line");
    expect(result.lines.join("\n")).toContain("Hello from a PDF");
    // The whole document was shown: no continuation note.
    expect(result.text).not.toContain("to continue");
  });

  it("picks pages: '2' shows only page 2, '2-3' pages 2 and 3, a number works too", async () => {
    const root = await tempTree({ "three.pdf": pdf(THREE_PAGES) });
    const ws = new Workspace({ roots: root });
    const all = await ws.read({ file_path: "three.pdf" });
    expect(all.pages).toEqual({ total: 3, first: 1, last: 3 });
    for (const word of ["Alpha", "Bravo", "Charlie"]) expect(all.text).toContain(word);

    const two = await ws.read({ file_path: "three.pdf", pages: "2" });
    expect(two.pages).toEqual({ total: 3, first: 2, last: 2 });
    expect(two.text).toContain("--- page 2 of 3 ---");
    expect(two.text).toContain("Bravo middle page");
    expect(two.text).not.toContain("Alpha");
    expect(two.text).not.toContain("Charlie");
    expect(two.text).not.toContain("page 1 of");

    const tail = await ws.read({ file_path: "three.pdf", pages: "2-3" });
    expect(tail.pages).toEqual({ total: 3, first: 2, last: 3 });
    expect(tail.text).toContain("Bravo middle page");
    expect(tail.text).toContain("Charlie last page");
    expect(tail.text).not.toContain("Alpha");
    expect(tail.text.indexOf("Bravo")).toBeLessThan(tail.text.indexOf("Charlie"));

    const numeric = await ws.read({ file_path: "three.pdf", pages: 3 });
    expect(numeric.pages).toEqual({ total: 3, first: 3, last: 3 });
    expect(numeric.text).toContain("Charlie");
    expect(numeric.text).not.toContain("Bravo");
  });

  it.each(["0", "3-1", "x", "1-", "-2", `1-${PDF_MAX_PAGES + 1}`])(
    "refuses pages %j with INVALID_ARGUMENT",
    async (pages) => {
      const root = await tempTree({ "three.pdf": pdf(THREE_PAGES) });
      const ws = new Workspace({ roots: root });
      const message = await rejectsWith(
        ws.read({ file_path: "three.pdf", pages }),
        "INVALID_ARGUMENT",
      );
      expect(message).toContain("pages");
    },
  );

  it(`accepts a range of exactly PDF_MAX_PAGES (${PDF_MAX_PAGES}) pages, and names the limit past it`, async () => {
    const root = await tempTree({ "three.pdf": pdf(THREE_PAGES) });
    const ws = new Workspace({ roots: root });
    const ok = await ws.read({ file_path: "three.pdf", pages: `2-${PDF_MAX_PAGES + 1}` });
    expect(ok.pages).toEqual({ total: 3, first: 2, last: 3 });
    const message = await rejectsWith(
      ws.read({ file_path: "three.pdf", pages: `1-${PDF_MAX_PAGES + 1}` }),
      "INVALID_ARGUMENT",
    );
    expect(message).toContain(String(PDF_MAX_PAGES));
  });

  it("refuses a file starting %PDF- with binary garbage after with BINARY, reads a text one as text, and keeps working", async () => {
    const root = await tempTree({
      "broken.pdf": Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.from([0, 1, 2, 0xff, 9, 9])]),
      "words.pdf": Buffer.from("%PDF-this is not a pdf at all\nno objects here\n"),
      "good.pdf": pdf([["Still fine"]]),
    });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.read({ file_path: "broken.pdf" }), "BINARY");
    expect(message).toContain("broken.pdf");
    expect(message).toContain("PDF");
    expect(message).toMatch(/cannot be read/);
    // Text that only starts like a PDF (a hand-written fixture) is text.
    const words = await ws.read({ file_path: "words.pdf" });
    expect(words.kind).toBe("text");
    expect(words.lines).toEqual(["%PDF-this is not a pdf at all", "no objects here"]);
    const good = await ws.read({ file_path: "good.pdf" });
    expect(good.text).toContain("Still fine");
  });

  it("records a PDF it cannot read like any binary file, so strict can still delete it", async () => {
    // read.ts records a refused binary file ("without the record, 'read it first' would have
    // no way to be satisfied"); a damaged PDF is refused with the same BINARY code.
    const root = await tempTree({ "broken.pdf": Buffer.from("%PDF-garbage\n\0\0\0") });
    const ws = new Workspace({ roots: root, policy: "strict" });
    await rejectsWith(ws.read({ file_path: "broken.pdf" }), "BINARY");
    await ws.delete({ file_path: "broken.pdf" });
    expect(existsSync(join(root, "broken.pdf"))).toBe(false);
  });

  it("records a PDF read as a full read: strict deletes it after, and catches a change", async () => {
    const root = await tempTree({ "a.pdf": pdf([["one"]]), "b.pdf": pdf(THREE_PAGES) });
    const ws = new Workspace({ roots: root, policy: "strict" });
    await rejectsWith(ws.delete({ file_path: "a.pdf" }), "NOT_READ");
    await ws.read({ file_path: "a.pdf" });
    await ws.delete({ file_path: "a.pdf" });
    expect(existsSync(join(root, "a.pdf"))).toBe(false);

    await ws.read({ file_path: "b.pdf", pages: "1" });
    appendFromOtherProcess(join(root, "b.pdf"), "% appended\n");
    await rejectsWith(ws.delete({ file_path: "b.pdf" }), "STALE");
    expect(existsSync(join(root, "b.pdf"))).toBe(true);
  });
});

describe("read_many", () => {
  it("shows each file under its ==> path <== header and records each: strict edits all of them", async () => {
    const root = await tempTree({
      "a.txt": "alpha\n",
      "b.txt": "bravo\nbravo two\n",
      "sub/c.txt": "charlie\n",
    });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const paths = ["a.txt", "b.txt", "sub/c.txt"];
    const result = await ws.readMany({ paths });
    expect(result.read).toBe(3);
    expect(result.failed).toBe(0);
    expect(result.files.map((file) => file.path)).toEqual(paths);
    expect(result.files.every((file) => file.error === undefined)).toBe(true);
    expect(result.files[1]?.result?.lines).toEqual(["bravo", "bravo two"]);
    expect(result.text).toBe(
      [
        "==> a.txt <==\n     1\talpha",
        "==> b.txt <==\n     1\tbravo\n     2\tbravo two",
        "==> sub/c.txt <==\n     1\tcharlie",
      ].join("\n\n"),
    );
    await ws.edit({ file_path: "a.txt", old_string: "alpha", new_string: "ALPHA" });
    await ws.edit({ file_path: "b.txt", old_string: "bravo two", new_string: "BRAVO" });
    await ws.edit({ file_path: "sub/c.txt", old_string: "charlie", new_string: "CHARLIE" });
  });

  it("shows a missing and a binary file's error in place and reads the others", async () => {
    const root = await tempTree({
      "a.txt": "alpha\n",
      "blob.bin": Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1]),
      "z.txt": "zulu\n",
    });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const result = await ws.readMany({ paths: ["a.txt", "gone.txt", "blob.bin", "z.txt"] });
    expect(result.read).toBe(2);
    expect(result.failed).toBe(2);
    const [a, gone, blob, z] = result.files;
    expect(a?.result?.lines).toEqual(["alpha"]);
    expect(gone?.result).toBeUndefined();
    expect(gone?.error?.code).toBe("NOT_FOUND");
    expect(gone?.error?.message).toContain("gone.txt");
    expect(blob?.error?.code).toBe("BINARY");
    expect(z?.result?.lines).toEqual(["zulu"]);
    expect(result.text).toContain("==> gone.txt <==\n(");
    expect(result.text).toContain("(NOT_FOUND))");
    expect(result.text).toContain("==> blob.bin <==\n(");
    expect(result.text).toContain("(BINARY))");
    expect(result.text).toContain("==> z.txt <==\n     1\tzulu");
    await ws.edit({ file_path: "z.txt", old_string: "zulu", new_string: "ZULU" });
  });

  it("refuses empty or missing paths, and more than READ_MANY_MAX_FILES, with INVALID_ARGUMENT", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.readMany({ paths: [] }), "INVALID_ARGUMENT");
    await rejectsWith(ws.readMany({ paths: "[]" }), "INVALID_ARGUMENT");
    await rejectsWith(ws.readMany({}), "INVALID_ARGUMENT");
    const tooMany = Array.from({ length: READ_MANY_MAX_FILES + 1 }, () => "a.txt");
    const message = await rejectsWith(ws.readMany({ paths: tooMany }), "INVALID_ARGUMENT");
    expect(message).toContain(String(READ_MANY_MAX_FILES));
    // Exactly the limit is read.
    const most = await ws.readMany({ paths: tooMany.slice(1) });
    expect(most.files).toHaveLength(READ_MANY_MAX_FILES);
    expect(most.read).toBe(READ_MANY_MAX_FILES);
  });

  it("accepts paths sent as a JSON string, and the file_paths alias", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "bravo\n" });
    const ws = new Workspace({ roots: root });
    const result = await ws.readMany({ paths: JSON.stringify(["a.txt", "b.txt"]) });
    expect(result.files.map((file) => file.result?.lines)).toEqual([["alpha"], ["bravo"]]);
    expect(result.text).toContain("==> b.txt <==");
    const alias = await ws.readMany({ file_paths: ["b.txt"] });
    expect(alias.files[0]?.result?.lines).toEqual(["bravo"]);
  });

  it("applies offset and limit to each file; a windowed file is a partial read, a wholly shown one is full", async () => {
    const ten = Array.from({ length: 10 }, (_, i) => `ten ${i + 1}\n`).join("");
    const root = await tempTree({ "ten.txt": ten, "two.txt": "first\nsecond\n" });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const result = await ws.readMany({ paths: ["ten.txt", "two.txt"], offset: 1, limit: 3 });
    const [tenFile, twoFile] = result.files;
    expect(tenFile?.result?.lines).toEqual(["ten 1", "ten 2", "ten 3"]);
    expect(tenFile?.result?.truncated).toBe(true);
    expect(tenFile?.result?.text).toContain("Use offset=4 to continue.");
    expect(twoFile?.result?.lines).toEqual(["first", "second"]);
    const message = await rejectsWith(
      ws.edit({ file_path: "ten.txt", old_string: "ten 2\n", new_string: "TWO\n" }),
      "NOT_READ",
    );
    expect(message).toContain("partially read");
    await ws.edit({ file_path: "two.txt", old_string: "second", new_string: "SECOND" });

    const later = await ws.readMany({ paths: ["ten.txt", "two.txt"], offset: "2", limit: "2" });
    expect(later.files[0]?.result?.lines).toEqual(["ten 2", "ten 3"]);
    expect(later.files[1]?.result?.lines).toEqual(["SECOND"]);
  });

  it("keeps the whole text under MAX_RESULT_BYTES: a file cut by the cap is partial, later ones SKIPPED and not recorded", async () => {
    const names = Array.from({ length: 10 }, (_, i) => `big${i}.txt`);
    const tree = Object.fromEntries(names.map((name) => [name, textOfLines(1024, 100, name)]));
    for (const content of Object.values(tree)) expect(content.length).toBe(100 * 1024);
    const root = await tempTree(tree);
    const ws = new Workspace({
      roots: root,
      policy: "strict",
      partialReads: "allow-within-window",
    });
    const result = await ws.readMany({ paths: names });
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);

    const whole = result.files.filter((file) => file.result && !file.result.truncated);
    const cut = result.files.filter((file) => file.result?.truncated);
    const skipped = result.files.filter((file) => file.error?.code === "SKIPPED");
    expect(whole.length).toBeGreaterThanOrEqual(1);
    expect(cut).toHaveLength(1);
    expect(skipped.length).toBeGreaterThanOrEqual(1);
    expect(whole.length + cut.length + skipped.length).toBe(10);
    // In order: the whole files first, then the cut one, then the skipped ones.
    expect(result.files.map((file) => file.path)).toEqual(names);
    const cutIndex = result.files.indexOf(cut[0] as (typeof result.files)[number]);
    expect(cutIndex).toBe(whole.length);
    expect(result.read).toBe(whole.length + 1);
    expect(result.failed).toBe(skipped.length);

    // The cut file says where to go on, and that note is in the call's text (not cut away).
    const cutResult = cut[0]?.result;
    expect(cutResult?.endLine).toBeGreaterThan(0);
    const goOn = `offset=${(cutResult?.endLine as number) + 1}`;
    expect(cutResult?.text).toContain(goOn);
    expect(result.text.includes(goOn), `the call's text says ${goOn}`).toBe(true);
    // Every skipped file's header and message made it into the text, the last one too.
    for (const file of skipped) {
      expect(file.error?.message).toMatch(/Read it with read/);
      const note = `==> ${file.path} <==\n(${file.error?.message})`;
      expect(result.text.includes(note), `the text holds ${file.path}'s note`).toBe(true);
    }
    expect(result.text.endsWith(`(${skipped.at(-1)?.error?.message})`)).toBe(true);

    // Whole files are full reads; the cut one is partial (an edit inside its window passes,
    // one past it is refused); a skipped file was never read.
    const wholePath = whole[0]?.path as string;
    await ws.edit({ file_path: wholePath, old_string: `${wholePath} 1024 `, new_string: "END " });
    const cutPath = cut[0]?.path as string;
    await ws.edit({ file_path: cutPath, old_string: `${cutPath} 1 x`, new_string: "ONE x" });
    const partial = await rejectsWith(
      ws.edit({ file_path: cutPath, old_string: `${cutPath} 1024 `, new_string: "X " }),
      "NOT_READ",
    );
    expect(partial).toContain("partially read");
    const skippedPath = skipped[0]?.path as string;
    const never = await rejectsWith(
      ws.edit({ file_path: skippedPath, old_string: `${skippedPath} 1 x`, new_string: "Y x" }),
      "NOT_READ",
    );
    expect(never).toContain("has not been read");
    // Read alone, as the message says, the skipped file is shown and editable.
    const alone = await ws.read({ file_path: skippedPath });
    expect(alone.truncated).toBe(false);
    await ws.edit({ file_path: skippedPath, old_string: `${skippedPath} 1 x`, new_string: "Y x" });
  });

  it("keeps the text under MAX_RESULT_BYTES with every skipped file's note when READ_MANY_MAX_FILES files are asked for", async () => {
    // Two big files use up the cap; the other 98, with long names, are all skipped.
    const long = `${"deeply-nested-directory-name/".repeat(3)}file`;
    const names = [
      "big0.txt",
      "big1.txt",
      ...Array.from({ length: READ_MANY_MAX_FILES - 2 }, (_, i) => `${long}-${i}.txt`),
    ];
    const tree: Record<string, string> = {
      "big0.txt": textOfLines(1300, 100, "big0"),
      "big1.txt": textOfLines(1300, 100, "big1"),
    };
    for (const name of names.slice(2)) tree[name] = "small\n";
    const root = await tempTree(tree);
    const ws = new Workspace({ roots: root });
    const result = await ws.readMany({ paths: names });
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    const skipped = result.files.filter((file) => file.error?.code === "SKIPPED");
    expect(skipped.length).toBe(READ_MANY_MAX_FILES - 2);
    // The workspace's last-resort cut must not have been needed: every note is whole.
    expect(/Output cut at/.test(result.text), "the workspace cut read_many's text").toBe(false);
    const lost = skipped.filter(
      (file) => !result.text.includes(`==> ${file.path} <==\n(${file.error?.message})`),
    );
    expect(lost.map((file) => file.path.slice(-12))).toEqual([]);
  });

  it("returns images as image results, and bounds their sum by MAX_IMAGE_BYTES: one that no longer fits is TOO_LARGE, to read alone", async () => {
    const half = Math.floor(MAX_IMAGE_BYTES * 0.6);
    const small = jpeg(16, 16);
    const first = pngOfSize(half);
    const second = pngOfSize(half);
    const root = await tempTree({
      "small.jpg": small,
      "first.png": first,
      "second.png": second,
      "notes.txt": "after the images\n",
    });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const result = await ws.readMany({
      paths: ["small.jpg", "first.png", "second.png", "notes.txt"],
    });
    const [smallFile, firstFile, secondFile, notesFile] = result.files;
    expect(smallFile?.result?.kind).toBe("image");
    expect(smallFile?.result?.image).toMatchObject({ mimeType: "image/jpeg", width: 16 });
    expect(Buffer.compare(smallFile?.result?.image?.data as Buffer, small)).toBe(0);
    expect(firstFile?.result?.image?.mimeType).toBe("image/png");
    expect(Buffer.compare(firstFile?.result?.image?.data as Buffer, first)).toBe(0);
    expect(secondFile?.result).toBeUndefined();
    expect(secondFile?.error?.code).toBe("TOO_LARGE");
    expect(secondFile?.error?.message).toContain("second.png");
    expect(secondFile?.error?.message).toContain("read it alone");
    expect(notesFile?.result?.lines).toEqual(["after the images"]);
    expect(result.text).toContain("==> first.png <==\n");
    expect(result.text).toContain("PNG image, 1x1 pixels");

    // The images shown are recorded; the one refused is not, until read alone.
    await ws.delete({ file_path: "first.png" });
    await rejectsWith(ws.delete({ file_path: "second.png" }), "NOT_READ");
    const alone = await ws.read({ file_path: "second.png" });
    expect(alone.image?.data.length).toBe(half);
    await ws.delete({ file_path: "second.png" });
  });

  it("gives a first image over MAX_IMAGE_BYTES the whole-image message, not 'read it alone'", async () => {
    const root = await tempTree({ "huge.png": pngOfSize(MAX_IMAGE_BYTES + 10) });
    const ws = new Workspace({ roots: root });
    const result = await ws.readMany({ paths: ["huge.png"] });
    expect(result.files[0]?.error?.code).toBe("TOO_LARGE");
    expect(result.files[0]?.error?.message).not.toContain("read it alone");
    expect(result.files[0]?.error?.message).toContain("smaller copy");
  });

  it("shows a PDF's pages among the files", async () => {
    const root = await tempTree({ "three.pdf": pdf(THREE_PAGES), "a.txt": "alpha\n" });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const result = await ws.readMany({ paths: ["three.pdf", "a.txt"] });
    expect(result.files[0]?.result?.kind).toBe("pdf");
    expect(result.text).toContain("==> three.pdf <==\n--- page 1 of 3 ---");
    expect(result.text).toContain("Charlie last page");
    await ws.delete({ file_path: "three.pdf" });
  });

  it("shows a path outside the root as OUTSIDE_ROOT in place and reads the others", async () => {
    const outside = await tempTree({ "secret.txt": "secret\n" });
    const root = await tempTree({ "a.txt": "alpha\n" });
    const ws = new Workspace({ roots: root });
    const result = await ws.readMany({
      paths: [join(outside, "secret.txt"), "../escape.txt", "a.txt"],
    });
    expect(result.files.map((file) => file.error?.code)).toEqual([
      "OUTSIDE_ROOT",
      "OUTSIDE_ROOT",
      undefined,
    ]);
    expect(result.files[2]?.result?.lines).toEqual(["alpha"]);
    expect(result.text).not.toContain("secret\n");
    expect(result.text).not.toContain("1\tsecret");
    expect(result.text).toContain("(OUTSIDE_ROOT))");
  });
});

describe("read_many: an answer that is not delivered", () => {
  it("forgets what it read when the call is cancelled during its last read", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    const ws = new Workspace({ roots: root, policy: "strict" });
    const controller = new AbortController();
    // One file: its read is under way when the signal fires, and there is no next file whose
    // turn would notice.
    const call = ws.readMany({ paths: ["a.txt"] }, { signal: controller.signal });
    controller.abort();
    await rejectsWith(call, "ABORTED");
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "alpha", new_string: "x" }),
      "NOT_READ",
    );
    // Two files: the second's turn notices, and the first's record goes too.
    const again = new AbortController();
    const both = ws.readMany({ paths: ["a.txt", "b.txt"] }, { signal: again.signal });
    again.abort();
    await rejectsWith(both, "ABORTED");
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "alpha", new_string: "x" }),
      "NOT_READ",
    );
  });
});

/**
 * The `read` and `write` tools of `Workspace`, on real files: read's `cat -n` shape,
 * windows, bounds, encodings and its record in the guard; write's creation, the guard, atomic
 * replacement keeping line endings, BOM, trailing newline and mode, symlinks, confinement, the
 * scan cache and typographic quotes.
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import {
  chmod,
  chown,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  stat,
  symlink,
  truncate,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  FreshfsError,
  invalidateFsScanCache,
  MAX_FILE_BYTES,
  MAX_RESULT_BYTES,
  READ_DEFAULT_LIMIT,
  READ_MAX_LINE_CHARS,
  Workspace,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { canRunAsNobody, runAsNobody } from "../helpers/nobody.js";

/** `count` lines `line 1`..`line count`, each ending with `\n`. */
function numbered(count: number): string {
  return Array.from({ length: count }, (_, i) => `line ${i + 1}\n`).join("");
}

/** The `cat -n` rendering of `lines` starting at line `first`. */
function catN(lines: readonly string[], first = 1): string {
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join("\n");
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("read: output shape and windows", () => {
  it("numbers lines in cat -n's %6d<TAB> shape", async () => {
    const root = await tempTree({ "a.txt": "alpha\n  beta\n\ngamma\n" });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: join(root, "a.txt") });
    expect(result.text).toBe("     1\talpha\n     2\t  beta\n     3\t\n     4\tgamma");
    expect(result).toMatchObject({
      path: join(root, "a.txt"),
      lines: ["alpha", "  beta", "", "gamma"],
      startLine: 1,
      endLine: 4,
      totalLines: 4,
      truncated: false,
      cutLines: 0,
      encoding: "utf8",
    });
  });

  it("shows a last line without a trailing newline, and resolves relative paths against the root", async () => {
    const root = await tempTree({ "sub/b.txt": "one\ntwo" });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "sub/b.txt" });
    expect(result.path).toBe(join(root, "sub", "b.txt"));
    expect(result.text).toBe(catN(["one", "two"]));
    expect(result.totalLines).toBe(2);
  });

  it("shows lines 1-2000 of a 2500-line file by default, with the continuation hint", async () => {
    const root = await tempTree({ "big.txt": numbered(2500) });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "big.txt" });
    expect(READ_DEFAULT_LIMIT).toBe(2000);
    expect(result).toMatchObject({ startLine: 1, endLine: 2000, totalLines: 2500 });
    expect(result.truncated).toBe(true);
    expect(result.lines).toHaveLength(2000);
    expect(result.lines[1999]).toBe("line 2000");
    expect(result.text).toContain("  2000\tline 2000");
    expect(result.text).not.toContain("line 2001");
    expect(result.text).toContain("Use offset=2001 to continue.");
    expect(result.text).toContain("Showing lines 1-2000 of 2500");
  });

  it("shows exactly the offset/limit window, with the hint only when lines remain", async () => {
    const root = await tempTree({ "a.txt": numbered(10) });
    const ws = new Workspace({ roots: root });
    const middle = await ws.read({ file_path: "a.txt", offset: 4, limit: 3 });
    expect(middle.text.split("\n\n")[0]).toBe(catN(["line 4", "line 5", "line 6"], 4));
    expect(middle).toMatchObject({ startLine: 4, endLine: 6, totalLines: 10, truncated: true });
    expect(middle.text).toContain("Use offset=7 to continue.");

    const tail = await ws.read({ file_path: "a.txt", offset: 8, limit: 50 });
    expect(tail.text).toBe(catN(["line 8", "line 9", "line 10"], 8));
    expect(tail).toMatchObject({ startLine: 8, endLine: 10, truncated: false });
    expect(tail.text).not.toContain("offset=");

    const exact = await ws.read({ file_path: "a.txt", offset: 10, limit: 1 });
    expect(exact.text).toBe("    10\tline 10");
    expect(exact.truncated).toBe(false);
  });

  it("accepts offset and limit sent as strings", async () => {
    const root = await tempTree({ "a.txt": numbered(10) });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "a.txt", offset: "2", limit: "3" });
    expect(result.lines).toEqual(["line 2", "line 3", "line 4"]);
    expect(result).toMatchObject({ startLine: 2, endLine: 4 });
  });

  it("accepts the filePath and path aliases, and refuses two different values", async () => {
    const root = await tempTree({ "a.txt": "A\n", "b.txt": "B\n" });
    const ws = new Workspace({ roots: root });
    expect((await ws.read({ filePath: "a.txt" })).lines).toEqual(["A"]);
    expect((await ws.read({ path: join(root, "b.txt") })).lines).toEqual(["B"]);
    expect((await ws.read({ file_path: "a.txt", filePath: "a.txt" })).lines).toEqual(["A"]);
    const message = await rejectsWith(
      ws.read({ file_path: "a.txt", path: "b.txt" }),
      "INVALID_ARGUMENT",
    );
    expect(message).toContain("file_path");
  });

  it("says an offset past the end is past the end, showing nothing", async () => {
    const root = await tempTree({ "a.txt": numbered(3) });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "a.txt", offset: 10 });
    expect(result).toMatchObject({ lines: [], startLine: 0, endLine: 0, totalLines: 3 });
    expect(result.text).toContain("3 lines");
    expect(result.text).toContain("offset=10 is past the end");
    expect(result.text).not.toContain("\t");
  });

  it("says an empty file is empty", async () => {
    const root = await tempTree({ "empty.txt": "" });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "empty.txt" });
    expect(result.text).toBe("(The file is empty.)");
    expect(result).toMatchObject({ lines: [], totalLines: 0, truncated: false });
  });
});

describe("read: long lines and the output ceiling", () => {
  it("cuts a line over 2000 characters with a visible marker, and leaves 2000 alone", async () => {
    const exact = "e".repeat(READ_MAX_LINE_CHARS);
    const long = "x".repeat(READ_MAX_LINE_CHARS + 500);
    const root = await tempTree({ "a.txt": `${exact}\n${long}\nshort\n` });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "a.txt" });
    const shown = result.text.split("\n");
    expect(shown[0]).toBe(`     1\t${exact}`);
    expect(shown[1]?.startsWith(`     2\t${"x".repeat(READ_MAX_LINE_CHARS)}`)).toBe(true);
    expect(shown[1]).not.toContain("x".repeat(READ_MAX_LINE_CHARS + 1));
    expect(shown[1]).toContain("500 more characters");
    expect(shown[2]).toBe("     3\tshort");
    expect(result.cutLines).toBe(1);
    expect(result.text).toContain(`longer than ${READ_MAX_LINE_CHARS} characters and cut`);
  });

  it("never splits a surrogate pair where it cuts a line", async () => {
    // "a" then emoji: the 2000th UTF-16 unit is the first half of a pair.
    const root = await tempTree({ "emoji.txt": `a${"😀".repeat(1500)}\n` });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "emoji.txt" });
    expect(result.cutLines).toBe(1);
    expect(LONE_SURROGATE.test(result.text), "a lone surrogate in the output").toBe(false);
    expect(result.text).not.toContain("\uFFFD");
  });

  it("stops at the 256 KiB output ceiling and says where to go on", async () => {
    const line = "y".repeat(1500);
    const count = 400; // about 600 KB of output, all within the 2000-line default
    const root = await tempTree({ "wide.txt": `${line}\n`.repeat(count) });
    const ws = new Workspace({ roots: root });
    const first = await ws.read({ file_path: "wide.txt" });
    expect(first.truncated).toBe(true);
    expect(first.endLine).toBeGreaterThan(1);
    expect(first.endLine).toBeLessThan(count);
    const body = first.text.slice(0, first.text.indexOf("\n\n("));
    expect(Buffer.byteLength(first.text)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(body.split("\n")).toHaveLength(first.endLine);
    expect(first.text).toContain("256 KiB");
    expect(first.text).toContain(`Use offset=${first.endLine + 1} to continue.`);

    const next = await ws.read({ file_path: "wide.txt", offset: first.endLine + 1 });
    expect(next.startLine).toBe(first.endLine + 1);
    expect(next.text.startsWith(`${String(first.endLine + 1).padStart(6)}\t${line}`)).toBe(true);
  });
});

describe("read: what is not plain UTF-8 text", () => {
  it("refuses a binary file with BINARY", async () => {
    const root = await tempTree({
      "data.bin": Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0, 0, 0, 0, 13]),
    });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.read({ file_path: "data.bin" }), "BINARY");
    expect(message).toContain("data.bin");
    expect(message).toContain("binary");
  });

  it("records a refused binary file as read, so strict can delete or replace it, and still catches a change", async () => {
    // An ELF header: binary, and not an image (read shows those).
    const png = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0, 0, 0, 0, 13]);
    const root = await tempTree({ "a.png": png, "b.png": png, "c.png": png });
    const ws = new Workspace({ roots: root, policy: "strict" });
    await rejectsWith(ws.delete({ file_path: "a.png" }), "NOT_READ");
    const message = await rejectsWith(ws.read({ file_path: "a.png" }), "BINARY");
    expect(message).toContain("12 bytes");
    expect(message).toContain("may be deleted");
    await ws.delete({ file_path: "a.png" });
    expect(existsSync(join(root, "a.png"))).toBe(false);
    await rejectsWith(ws.read({ file_path: "b.png" }), "BINARY");
    await ws.write({ file_path: "b.png", content: "now text\n" });
    expect(readFileSync(join(root, "b.png"), "utf8")).toBe("now text\n");
    // Changed by someone else after the refused read: STALE, as for a text file.
    await rejectsWith(ws.read({ file_path: "c.png" }), "BINARY");
    writeFileSync(join(root, "c.png"), Buffer.concat([png, Buffer.from([1])]));
    await rejectsWith(ws.delete({ file_path: "c.png" }), "STALE");
    expect(existsSync(join(root, "c.png"))).toBe(true);
  });

  it("reads UTF-16 LE with a BOM as text", async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from("héllo\nwörld\n", "utf16le"),
    ]);
    const root = await tempTree({ "u16.txt": bytes });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "u16.txt" });
    expect(result.encoding).toBe("utf16le");
    expect(result.lines).toEqual(["héllo", "wörld"]);
    expect(result.text).toBe(catN(["héllo", "wörld"]));
  });

  it("shows invalid UTF-8 with U+FFFD and a note", async () => {
    const bytes = Buffer.concat([
      Buffer.from("ok\n"),
      Buffer.from([0x63, 0x61, 0x66, 0xe9]), // "café" in Latin-1
      Buffer.from("\n"),
    ]);
    const root = await tempTree({ "latin1.txt": bytes });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "latin1.txt" });
    expect(result.lines).toEqual(["ok", "caf\uFFFD"]);
    expect(result.text).toContain("     2\tcaf\uFFFD");
    expect(result.text).toContain("not valid UTF-8");
  });

  it("shows a CRLF file without carriage returns", async () => {
    const root = await tempTree({ "dos.txt": "one\r\ntwo\r\nthree\r\n" });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "dos.txt" });
    expect(result.text).toBe(catN(["one", "two", "three"]));
    expect(result.text).not.toContain("\r");
    expect(result.lines).toEqual(["one", "two", "three"]);
  });

  it("counts a lone CR as a line break", async () => {
    const root = await tempTree({ "mac.txt": "a\rb\rc\r" });
    const ws = new Workspace({ roots: root });
    const result = await ws.read({ file_path: "mac.txt" });
    expect(result.lines).toEqual(["a", "b", "c"]);
    expect(result.text).toBe(catN(["a", "b", "c"]));
    expect(result.totalLines).toBe(3);
  });
});

describe("read: refusals", () => {
  it("refuses a directory with NOT_A_FILE and points to glob/find", async () => {
    const root = await tempTree({ "dir/a.txt": "" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.read({ file_path: "dir" }), "NOT_A_FILE");
    expect(message).toContain("dir");
    expect(message).toMatch(/glob|find/);
  });

  it("says a missing file does not exist and suggests a case typo's target", async () => {
    const root = await tempTree({ "README.md": "# hi\n" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.read({ file_path: "readme.md" }), "NOT_FOUND");
    expect(message).toContain("readme.md does not exist");
    expect(message).toContain("Did you mean README.md?");
    const none = await rejectsWith(ws.read({ file_path: "nothing.txt" }), "NOT_FOUND");
    expect(none).not.toContain("Did you mean");
  });

  it("refuses a file over 32 MiB with TOO_LARGE", async () => {
    const root = await tempTree({ "huge.log": "" });
    await truncate(join(root, "huge.log"), MAX_FILE_BYTES + 1024 * 1024); // sparse
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.read({ file_path: "huge.log" }), "TOO_LARGE");
    expect(message).toContain("huge.log");
    expect(message).toContain("grep");
  });

  it("refuses malformed arguments with INVALID_ARGUMENT", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const ws = new Workspace({ roots: root });
    expect(
      await rejectsWith(ws.read({ file_path: "a.txt", offset: "abc" }), "INVALID_ARGUMENT"),
    ).toContain("offset");
    expect(
      await rejectsWith(ws.read({ file_path: "a.txt", limit: 0 }), "INVALID_ARGUMENT"),
    ).toContain("limit");
    await rejectsWith(ws.read({ file_path: "a.txt", offset: -1 }), "INVALID_ARGUMENT");
    await rejectsWith(ws.read({ file_path: "a.txt", limit: 1.5 }), "INVALID_ARGUMENT");
    expect(await rejectsWith(ws.read({}), "INVALID_ARGUMENT")).toContain("file_path is required");
    expect(
      await rejectsWith(ws.read({ file_path: 42 as unknown as string }), "INVALID_ARGUMENT"),
    ).toContain("file_path must be a string");
    await rejectsWith(ws.read({ file_path: "" }), "INVALID_ARGUMENT");
    await rejectsWith(ws.read(null as unknown as { file_path: string }), "INVALID_ARGUMENT");
  });

  it("refuses a NUL byte in the path with OUTSIDE_ROOT", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.read({ file_path: "a.txt\0.png" }), "OUTSIDE_ROOT");
    expect(message).toContain("NUL");
  });

  it("refuses paths outside the root, lexically and through a symlink", async () => {
    const outside = await tempTree({ "secret.txt": "secret\n" });
    const root = await tempTree({ "a.txt": "a\n" });
    await symlink(join(outside, "secret.txt"), join(root, "link.txt"));
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.read({ file_path: join(outside, "secret.txt") }), "OUTSIDE_ROOT");
    await rejectsWith(ws.read({ file_path: "../x.txt" }), "OUTSIDE_ROOT");
    await rejectsWith(ws.read({ file_path: "link.txt" }), "OUTSIDE_ROOT");
  });
});

describe.skipIf(!canRunAsNobody)("read: permissions (as nobody)", () => {
  it("reports PERMISSION_DENIED for a file it may not read", async () => {
    const root = await tempTree({ "private.txt": "secret\n" });
    await chmod(root, 0o755);
    await chmod(join(root, "private.txt"), 0o600);
    const run = runAsNobody(
      `import { Workspace } from "ENTRY"; const ws = new Workspace({ roots: ${JSON.stringify(root)} }); try { const r = await ws.read({ file_path: "private.txt" }); console.log("read", r.text); } catch (e) { console.log(e.code, e.message); }`,
    );
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^PERMISSION_DENIED /);
    expect(run.stdout).not.toContain("secret");
  });
});

describe("read: the record in the guard", () => {
  it("a full read allows an edit", async () => {
    const root = await tempTree({ "a.txt": numbered(5) });
    const ws = new Workspace({ roots: root });
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "line 3", new_string: "LINE 3" }),
      "NOT_READ",
    );
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "line 3", new_string: "LINE 3" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe(
      numbered(5).replace("line 3", "LINE 3"),
    );
  });

  it("a partial window refuses the edit with NOT_READ", async () => {
    const root = await tempTree({ "a.txt": numbered(10) });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt", offset: 1, limit: 5 });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "line 3", new_string: "LINE 3" }),
      "NOT_READ",
    );
    expect(message).toContain("partially read");
    await rejectsWith(ws.write({ file_path: "a.txt", content: "new\n" }), "NOT_READ");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe(numbered(10));
  });

  it("two consecutive windows covering the file allow the edit", async () => {
    const root = await tempTree({ "big.txt": numbered(2500) });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "big.txt" });
    await rejectsWith(
      ws.edit({ file_path: "big.txt", old_string: "line 2400\n", new_string: "x\n" }),
      "NOT_READ",
    );
    const rest = await ws.read({ file_path: "big.txt", offset: 2001 });
    expect(rest).toMatchObject({ startLine: 2001, endLine: 2500, truncated: false });
    await ws.edit({ file_path: "big.txt", old_string: "line 2400\n", new_string: "x\n" });
    expect(await readFile(join(root, "big.txt"), "utf8")).toContain("line 2399\nx\nline 2401\n");
  });

  it("an offset past the end records nothing: an earlier full read still allows an edit", async () => {
    const root = await tempTree({ "a.txt": numbered(3) });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    await ws.read({ file_path: "a.txt", offset: 99 });
    await ws.edit({ file_path: "a.txt", old_string: "line 2", new_string: "two" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("line 1\ntwo\nline 3\n");
  });

  it("an offset past the end alone does not count as a read", async () => {
    const root = await tempTree({ "a.txt": numbered(3) });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt", offset: 99 });
    await rejectsWith(ws.write({ file_path: "a.txt", content: "x\n" }), "NOT_READ");
  });

  it("reading an empty file allows overwriting it", async () => {
    const root = await tempTree({ "empty.txt": "" });
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.write({ file_path: "empty.txt", content: "now\n" }), "NOT_READ");
    await ws.read({ file_path: "empty.txt" });
    await ws.write({ file_path: "empty.txt", content: "now\n" });
    expect(await readFile(join(root, "empty.txt"), "utf8")).toBe("now\n");
  });
});

describe("write: creating and overwriting", () => {
  it("creates a new file without a read, making its parent directories", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    const result = await ws.write({ file_path: "a/b/c.txt", content: "one\ntwo\n" });
    expect(await readFile(join(root, "a", "b", "c.txt"), "utf8")).toBe("one\ntwo\n");
    expect(result).toMatchObject({
      path: join(root, "a", "b", "c.txt"),
      created: true,
      bytes: 8,
      lines: 2,
      diff: undefined,
      firstChangedLine: undefined,
      warnings: [],
    });
    expect(result.text).toContain("Created a/b/c.txt (2 lines)");
  });

  it("a file it created may be overwritten without a read", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    await ws.write({ file_path: "n.txt", content: "first\n" });
    const second = await ws.write({ file_path: "n.txt", content: "second\n" });
    expect(second.created).toBe(false);
    expect(await readFile(join(root, "n.txt"), "utf8")).toBe("second\n");
  });

  it("refuses an overwrite without a read with NOT_READ, leaving the file as it was", async () => {
    const root = await tempTree({ "a.txt": "keep me\n" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(
      ws.write({ file_path: "a.txt", content: "gone\n" }),
      "NOT_READ",
    );
    expect(message).toContain("a.txt");
    expect(message).toMatch(/Read it/);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("keep me\n");
  });

  it("overwrites after a read, with a diff and the first changed line", async () => {
    const root = await tempTree({ "a.txt": "one\ntwo\nthree\nfour\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.write({ file_path: "a.txt", content: "one\ntwo\nTHREE\nfour\nfive\n" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("one\ntwo\nTHREE\nfour\nfive\n");
    expect(result).toMatchObject({ created: false, lines: 5, firstChangedLine: 3, warnings: [] });
    expect(result.diff).toContain("-three");
    expect(result.diff).toContain("+THREE");
    expect(result.diff).toContain("+five");
    expect(result.text).toContain("first changed line 3");
    expect(result.text).toContain("+THREE");
  });

  it("says an overwrite with the same content changed nothing", async () => {
    const root = await tempTree({ "a.txt": "same\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.write({ file_path: "a.txt", content: "same\n" });
    expect(result.firstChangedLine).toBeUndefined();
    expect(result.text).toContain("unchanged");
  });

  it("refuses an overwrite after an external change with STALE; the change survives", async () => {
    const root = await tempTree({ "a.txt": "original\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(root, "a.txt"), "changed by someone else\n");
    const message = await rejectsWith(ws.write({ file_path: "a.txt", content: "mine\n" }), "STALE");
    expect(message).toContain("Read it again, then retry");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("changed by someone else\n");
  });

  it("under warn, proceeds after an external change and reports the warning", async () => {
    const root = await tempTree({ "a.txt": "original\n" });
    const ws = new Workspace({ roots: root, policy: "warn" });
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(root, "a.txt"), "changed by someone else\n");
    const result = await ws.write({ file_path: "a.txt", content: "mine\n" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("mine\n");
    expect(result.warnings.length).toBeGreaterThanOrEqual(1);
    expect(result.warnings[0]).toContain("has changed on disk since you last read it");
    expect(result.text).toContain(result.warnings[0]);
  });

  it("under warn, overwrites a partially read file with a warning", async () => {
    const root = await tempTree({ "a.txt": numbered(10) });
    const ws = new Workspace({ roots: root, policy: "warn" });
    await ws.read({ file_path: "a.txt", limit: 2 });
    const result = await ws.write({ file_path: "a.txt", content: "short\n" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("short\n");
    expect(result.warnings.join("\n")).toContain("partially read");
    expect(result.text).toContain("partially read");
  });

  it("refuses malformed arguments with INVALID_ARGUMENT", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    expect(await rejectsWith(ws.write({ file_path: "a.txt" }), "INVALID_ARGUMENT")).toContain(
      "content",
    );
    await rejectsWith(
      ws.write({ file_path: "a.txt", content: 5 as unknown as string }),
      "INVALID_ARGUMENT",
    );
    await rejectsWith(ws.write({ content: "x" }), "INVALID_ARGUMENT");
    expect(await readdir(root)).toEqual([]);
  });

  it("accepts the filePath and path aliases", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    await ws.write({ filePath: "x.txt", content: "x\n" });
    await ws.write({ path: join(root, "y.txt"), content: "y\n" });
    expect(await readFile(join(root, "x.txt"), "utf8")).toBe("x\n");
    expect(await readFile(join(root, "y.txt"), "utf8")).toBe("y\n");
  });

  it("creates an empty file from empty content", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    const result = await ws.write({ file_path: "e.txt", content: "" });
    expect(result).toMatchObject({ created: true, bytes: 0, lines: 0 });
    expect(await readFile(join(root, "e.txt"), "utf8")).toBe("");
  });
});

describe("write: keeping the file's shape", () => {
  it("keeps a CRLF file CRLF when the content uses \\n, never \\r\\r\\n", async () => {
    const root = await tempTree({ "dos.txt": "a\r\nb\r\nc\r\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "dos.txt" });
    await ws.write({ file_path: "dos.txt", content: "a\nB\nc\nd\n" });
    expect(await readFile(join(root, "dos.txt"), "utf8")).toBe("a\r\nB\r\nc\r\nd\r\n");
    // Content already in CRLF, or mixed, is not doubled.
    await ws.write({ file_path: "dos.txt", content: "x\r\ny\nz\r\n" });
    const bytes = await readFile(join(root, "dos.txt"), "utf8");
    expect(bytes).toBe("x\r\ny\r\nz\r\n");
    expect(bytes).not.toContain("\r\r");
  });

  it("keeps an LF file LF when the content uses CRLF", async () => {
    const root = await tempTree({ "unix.txt": "a\nb\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "unix.txt" });
    await ws.write({ file_path: "unix.txt", content: "a\r\nb\r\nc\r\n" });
    expect(await readFile(join(root, "unix.txt"), "utf8")).toBe("a\nb\nc\n");
  });

  it("keeps a UTF-8 BOM, without doubling one the content carries", async () => {
    const bom = "\uFEFF";
    const root = await tempTree({ "bom.txt": `${bom}hello\n` });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "bom.txt" });
    await ws.write({ file_path: "bom.txt", content: "bye\n" });
    const bytes = await readFile(join(root, "bom.txt"));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString("utf8")).toBe("bye\n");
    await ws.write({ file_path: "bom.txt", content: `${bom}again\n` });
    const again = await readFile(join(root, "bom.txt"));
    expect(again.equals(Buffer.from(`${bom}again\n`, "utf8"))).toBe(true);
  });

  it("keeps a UTF-16 LE file UTF-16 LE", async () => {
    const u16 = (text: string) =>
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const root = await tempTree({ "u16.txt": u16("old\n") });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "u16.txt" });
    await ws.write({ file_path: "u16.txt", content: "néw\n" });
    expect((await readFile(join(root, "u16.txt"))).equals(u16("néw\n"))).toBe(true);
  });

  it("keeps a missing trailing newline missing", async () => {
    const root = await tempTree({ "a.txt": "a\nb" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    await ws.write({ file_path: "a.txt", content: "a\nc\n" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\nc");
  });

  it("keeps a trailing newline present", async () => {
    const root = await tempTree({ "a.txt": "a\nb\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    await ws.write({ file_path: "a.txt", content: "a\nc" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\nc\n");
  });

  it("keeps the file's mode", async () => {
    const root = await tempTree({ "a.txt": "a\n", "run.sh": "#!/bin/sh\n" });
    await chmod(join(root, "a.txt"), 0o640);
    await chmod(join(root, "run.sh"), 0o755);
    const ws = new Workspace({ roots: root });
    for (const name of ["a.txt", "run.sh"]) {
      await ws.read({ file_path: name });
      await ws.write({ file_path: name, content: "changed\n" });
    }
    expect((await stat(join(root, "a.txt"))).mode & 0o777).toBe(0o640);
    expect((await stat(join(root, "run.sh"))).mode & 0o777).toBe(0o755);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("changed\n");
  });

  it("writes through a symlink to its target, leaving the link a link", async () => {
    const root = await tempTree({ "real.txt": "old\n" });
    await symlink("real.txt", join(root, "link.txt"));
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "link.txt" });
    await ws.write({ file_path: "link.txt", content: "new\n" });
    expect(await readFile(join(root, "real.txt"), "utf8")).toBe("new\n");
    expect((await lstat(join(root, "link.txt"))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(root, "link.txt"))).toBe("real.txt");
  });

  it("treats another spelling of a read file (absolute, ./, a symlink) as the same file", async () => {
    const root = await tempTree({ "a.txt": "a\n", "real.txt": "r\n" });
    await symlink("real.txt", join(root, "link.txt"));
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "./a.txt" });
    await ws.write({ file_path: join(root, "a.txt"), content: "A\n" });
    await ws.read({ file_path: "real.txt" });
    await ws.write({ file_path: "link.txt", content: "R\n" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("A\n");
    expect(await readFile(join(root, "real.txt"), "utf8")).toBe("R\n");
  });

  it.skipIf(process.getuid?.() !== 0)("keeps the file's owner when root rewrites it", async () => {
    const root = await tempTree({ "owned.txt": "o\n" });
    await chown(join(root, "owned.txt"), 65534, 65534);
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "owned.txt" });
    await ws.write({ file_path: "owned.txt", content: "O\n" });
    const after = await stat(join(root, "owned.txt"));
    expect(await readFile(join(root, "owned.txt"), "utf8")).toBe("O\n");
    expect([after.uid, after.gid]).toEqual([65534, 65534]);
  });

  it("leaves no temp file behind after a write or a refused one", async () => {
    const root = await tempTree({ "a.txt": "a\n", "b.txt": "b\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    await ws.write({ file_path: "a.txt", content: "A\n" });
    await ws.write({ file_path: "new.txt", content: "n\n" });
    expect((await readdir(root)).sort()).toEqual(["a.txt", "b.txt", "new.txt"]);

    await rejectsWith(ws.write({ file_path: "b.txt", content: "B\n" }), "NOT_READ");
    await ws.read({ file_path: "b.txt" });
    await writeFile(join(root, "b.txt"), "external\n");
    await rejectsWith(ws.write({ file_path: "b.txt", content: "B\n" }), "STALE");
    expect((await readdir(root)).sort()).toEqual(["a.txt", "b.txt", "new.txt"]);
  });
});

describe("write: the scan cache", () => {
  beforeEach(() => {
    invalidateFsScanCache();
    configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 60_000 });
  });

  afterEach(() => {
    configureScanCache(undefined);
    invalidateFsScanCache();
  });

  it("a glob right after a write sees the new file", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const ws = new Workspace({ roots: root, cache: true, watch: false });
    expect((await ws.glob({ pattern: "**/*.txt" })).files).toEqual(["a.txt"]);
    await ws.write({ file_path: "sub/b.txt", content: "b\n" });
    expect([...(await ws.glob({ pattern: "**/*.txt" })).files].sort()).toEqual([
      "a.txt",
      "sub/b.txt",
    ]);
  });

  it("a grep right after a write sees the new file and the new content", async () => {
    const root = await tempTree({ "a.txt": "needle\n", "b.txt": "hay\n" });
    const ws = new Workspace({ roots: root, cache: true, watch: false });
    expect((await ws.grep({ pattern: "needle" })).files).toEqual(["a.txt"]);
    await ws.write({ file_path: "c.txt", content: "a needle too\n" });
    await ws.read({ file_path: "b.txt" });
    await ws.write({ file_path: "b.txt", content: "needle in hay\n" });
    const after = await ws.grep({ pattern: "needle", output_mode: "content" });
    expect(after.lines.map((l) => `${l.path}:${l.text}`).sort()).toEqual([
      "a.txt:needle",
      "b.txt:needle in hay",
      "c.txt:a needle too",
    ]);
  });
});

describe("write: typographic quotes", () => {
  it("normalizes quotes introduced into a code file", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    await ws.write({ file_path: "a.ts", content: "const s = \u201Chi\u201D + \u2018x\u2019;\n" });
    expect(await readFile(join(root, "a.ts"), "utf8")).toBe("const s = \"hi\" + 'x';\n");
  });

  it("keeps a quote kind the code file already used", async () => {
    const root = await tempTree({ "m.ts": 'const m = "it\u2019s";\n' });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "m.ts" });
    await ws.write({
      file_path: "m.ts",
      content: 'const m = "it\u2019s";\nconst n = \u201Cok\u201D;\n',
    });
    expect(await readFile(join(root, "m.ts"), "utf8")).toBe(
      'const m = "it\u2019s";\nconst n = "ok";\n',
    );
  });

  it("keeps typographic quotes in a Markdown file", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    const content = "\u201CQuoted,\u201D she said. It\u2019s fine.\n";
    await ws.write({ file_path: "doc.md", content });
    expect(await readFile(join(root, "doc.md"), "utf8")).toBe(content);
  });
});

describe("write: refusals", () => {
  it("refuses a directory path with NOT_A_FILE", async () => {
    const root = await tempTree({ "dir/a.txt": "a\n" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(ws.write({ file_path: "dir", content: "x" }), "NOT_A_FILE");
    expect(message).toContain("dir");
    expect((await stat(join(root, "dir"))).isDirectory()).toBe(true);
    expect(await readdir(join(root, "dir"))).toEqual(["a.txt"]);
  });

  it("refuses a path ending in a slash instead of creating a file under that name", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    const error = await ws.write({ file_path: "newdir/", content: "x\n" }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(FreshfsError);
    expect(["INVALID_ARGUMENT", "NOT_A_FILE"]).toContain((error as FreshfsError).code);
    expect(await readdir(root)).toEqual([]);
  });

  it("refuses a path under a regular file with NOT_A_DIRECTORY", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(
      ws.write({ file_path: "a.txt/b.txt", content: "x\n" }),
      "NOT_A_DIRECTORY",
    );
    expect(message).toContain("a.txt");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\n");
  });

  it("refuses ../x and absolute paths outside the root with OUTSIDE_ROOT, creating nothing", async () => {
    const parent = await tempTree();
    const root = join(parent, "root");
    await mkdir(root);
    const outside = await tempTree();
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.write({ file_path: "../x.txt", content: "x" }), "OUTSIDE_ROOT");
    await rejectsWith(ws.write({ file_path: "sub/../../y.txt", content: "y" }), "OUTSIDE_ROOT");
    await rejectsWith(
      ws.write({ file_path: join(outside, "z.txt"), content: "z" }),
      "OUTSIDE_ROOT",
    );
    expect(await readdir(parent)).toEqual(["root"]);
    expect(await readdir(root)).toEqual([]);
    expect(await readdir(outside)).toEqual([]);
  });

  it("refuses writing through a symlink inside the root that points outside", async () => {
    const outside = await tempTree({ "secret.txt": "secret\n" });
    const root = await tempTree();
    await symlink(join(outside, "secret.txt"), join(root, "file-link.txt"));
    await symlink(outside, join(root, "dir-link"));
    const ws = new Workspace({ roots: root, policy: "warn" });
    await rejectsWith(ws.write({ file_path: "file-link.txt", content: "pwned\n" }), "OUTSIDE_ROOT");
    await rejectsWith(
      ws.write({ file_path: "dir-link/secret.txt", content: "pwned\n" }),
      "OUTSIDE_ROOT",
    );
    await rejectsWith(
      ws.write({ file_path: "dir-link/new.txt", content: "planted\n" }),
      "OUTSIDE_ROOT",
    );
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expect(await readdir(outside)).toEqual(["secret.txt"]);
  });

  it("refuses a NUL byte in the path with OUTSIDE_ROOT", async () => {
    const root = await tempTree();
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.write({ file_path: "a\0b.txt", content: "x" }), "OUTSIDE_ROOT");
    expect(await readdir(root)).toEqual([]);
  });

  it("refuses an overwrite of a file over 32 MiB with TOO_LARGE", async () => {
    const root = await tempTree({ "huge.log": "" });
    await truncate(join(root, "huge.log"), MAX_FILE_BYTES + 1);
    const ws = new Workspace({ roots: root, policy: "warn" });
    await rejectsWith(ws.write({ file_path: "huge.log", content: "x" }), "TOO_LARGE");
    expect((await stat(join(root, "huge.log"))).size).toBe(MAX_FILE_BYTES + 1);
  });

  it.skipIf(!canRunAsNobody)(
    "reports PERMISSION_DENIED for a directory it may not write (as nobody)",
    async () => {
      const root = await tempTree({ "ro/keep.txt": "k\n" });
      await chmod(root, 0o755);
      await chmod(join(root, "ro"), 0o555);
      const run = runAsNobody(
        `import { Workspace } from "ENTRY"; const ws = new Workspace({ roots: ${JSON.stringify(root)} }); try { await ws.write({ file_path: "ro/new.txt", content: "x" }); console.log("written"); } catch (e) { console.log(e.code, e.message); }`,
      );
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(/^PERMISSION_DENIED /);
      expect(run.stdout).toContain("permission denied");
      expect(await readdir(join(root, "ro"))).toEqual(["keep.txt"]);
    },
  );
});

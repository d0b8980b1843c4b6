/**
 * Workspace.edit and Workspace.multiEdit: matching (exact, quote-tolerant), the
 * model-facing failures (AMBIGUOUS, NO_MATCH with candidates and hints), the guard, the file's
 * own conventions kept (CRLF, BOM, trailing newline, quotes, mode), aliases, all-or-nothing
 * multi-edits and concurrent edits through one workspace. Real files in temp directories.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, lstat, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  FreshfsError,
  invalidateFsScanCache,
  Workspace,
  type WorkspaceOptions,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { type Tree, tempTree } from "../helpers/fs.js";

beforeEach(() => {
  // A long-lived cache: a listing is served from it unless a mutation invalidates it.
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

/** A temp tree and a workspace over it. */
async function setup(
  tree: Tree,
  options: Omit<WorkspaceOptions, "roots"> = {},
): Promise<{
  dir: string;
  ws: Workspace;
  bytes(name: string): Buffer;
  text(name: string): string;
}> {
  const dir = await tempTree(tree);
  const ws = new Workspace({ roots: dir, ...options });
  return {
    dir,
    ws,
    bytes: (name) => readFileSync(join(dir, name)),
    text: (name) => readFileSync(join(dir, name), "utf8"),
  };
}

const numbered = (count: number, word = "line") =>
  Array.from({ length: count }, (_, i) => `${word} ${i + 1}\n`).join("");

describe("edit: exact replacement", () => {
  it("replaces one occurrence and answers with a unified diff and the first changed line", async () => {
    const { ws, dir, text } = await setup({ "a.txt": "one\ntwo\nthree\nfour\n" });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.edit({ file_path: "a.txt", old_string: "three", new_string: "THREE" });
    expect(text("a.txt")).toBe("one\ntwo\nTHREE\nfour\n");
    expect(result).toMatchObject({
      path: join(dir, "a.txt"),
      replacements: 1,
      matchedBy: "exact",
      created: false,
      firstChangedLine: 3,
      warnings: [],
    });
    expect(result.diff).toContain("--- a.txt");
    expect(result.diff).toContain("+++ a.txt");
    expect(result.diff).toContain("@@ -1,4 +1,4 @@");
    expect(result.diff).toContain("\n-three\n+THREE\n");
    expect(result.text).toContain("Edited a.txt: 1 replacement, first changed line 3.");
    expect(result.text).toContain("+THREE");
  });

  it("reports the first changed line of an inserted line", async () => {
    const { ws, text } = await setup({ "a.txt": "a\nb\nc\n" });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.edit({ file_path: "a.txt", old_string: "b\n", new_string: "b\nnew\n" });
    expect(text("a.txt")).toBe("a\nb\nnew\nc\n");
    expect(result.firstChangedLine).toBe(3);
    expect(result.diff).toContain("\n+new\n");
  });

  it("takes $&, $1, $$ and $` in new_string literally", async () => {
    const { ws, text } = await setup({ "a.txt": "price = X;\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "X", new_string: "$& $1 $$ $` $' $<n>" });
    expect(text("a.txt")).toBe("price = $& $1 $$ $` $' $<n>;\n");
  });

  it('replaces every occurrence with replace_all, also sent as the string "true" or as replaceAll', async () => {
    const { ws, text } = await setup({ "a.txt": "foo bar foo\nfoo\n" });
    await ws.read({ file_path: "a.txt" });
    const first = await ws.edit({
      file_path: "a.txt",
      old_string: "foo",
      new_string: "baz",
      replace_all: true,
    });
    expect(first.replacements).toBe(3);
    expect(first.text).toContain("3 replacements");
    expect(text("a.txt")).toBe("baz bar baz\nbaz\n");

    const second = await ws.edit({
      file_path: "a.txt",
      old_string: "baz",
      new_string: "qux",
      replace_all: "true",
    });
    expect(second.replacements).toBe(3);
    expect(text("a.txt")).toBe("qux bar qux\nqux\n");

    const third = await ws.edit({
      file_path: "a.txt",
      old_string: "qux",
      new_string: "zap",
      replaceAll: true,
    });
    expect(third.replacements).toBe(3);
    expect(text("a.txt")).toBe("zap bar zap\nzap\n");
  });

  it('treats replace_all "false" as false (an ambiguous match is refused)', async () => {
    const { ws, text } = await setup({ "a.txt": "x\nx\n" });
    await ws.read({ file_path: "a.txt" });
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "x", new_string: "y", replace_all: "false" }),
      "AMBIGUOUS",
    );
    expect(text("a.txt")).toBe("x\nx\n");
  });
});

describe("edit: failures written for the model", () => {
  it("refuses several matches without replace_all: AMBIGUOUS with the count and the lines", async () => {
    const { ws, text } = await setup({ "a.txt": "a\nfoo()\nb\nfoo()\nc\nd\nfoo()\n" });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "foo()", new_string: "bar()" }),
      "AMBIGUOUS",
    );
    expect(message).toContain("3 times");
    expect(message).toContain("lines 2, 4, 7");
    expect(message).toContain("replace_all");
    expect(text("a.txt")).toBe("a\nfoo()\nb\nfoo()\nc\nd\nfoo()\n");
  });

  it("lists at most ten line numbers of an ambiguous match, and says there are more", async () => {
    const { ws } = await setup({ "a.txt": numbered(12, "same") });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "same", new_string: "other" }),
      "AMBIGUOUS",
    );
    expect(message).toContain("12 times");
    expect(message).toContain("lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...");
    expect(message).not.toContain("11");
  });

  it("on NO_MATCH shows the closest lines, numbered as read shows them", async () => {
    const { ws, text } = await setup({
      "a.ts": "import x from 'x';\n\nconst value = compute(1);\nexport default value;\n",
    });
    await ws.read({ file_path: "a.ts" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.ts", old_string: "const vaule = compute(1);", new_string: "y" }),
      "NO_MATCH",
    );
    expect(message).toContain("old_string was not found in a.ts");
    expect(message).toContain("The closest lines are:");
    expect(message).toContain("     3\tconst value = compute(1);");
    expect(message).not.toMatch(/whitespace|prefix/);
    expect(text("a.ts")).toBe(
      "import x from 'x';\n\nconst value = compute(1);\nexport default value;\n",
    );
  });

  it("on NO_MATCH hints at a whitespace difference (indentation)", async () => {
    const { ws } = await setup({ "a.py": "def f():\n    return 1\n\nprint(f())\n" });
    await ws.read({ file_path: "a.py" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.py", old_string: "def f():\n  return 1", new_string: "x" }),
      "NO_MATCH",
    );
    expect(message).toMatch(/different whitespace/);
    expect(message).toMatch(/indentation/);
  });

  it("on NO_MATCH hints at a tabs-versus-spaces difference", async () => {
    const { ws } = await setup({ "a.go": "func f() {\n\treturn 1\n}\n" });
    await ws.read({ file_path: "a.go" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.go", old_string: "{\n    return 1\n}", new_string: "x" }),
      "NO_MATCH",
    );
    expect(message).toMatch(/different whitespace/);
  });

  it("on NO_MATCH says when old_string carries read's line-number prefixes", async () => {
    const { ws, text } = await setup({ "a.js": "// head\nfunction f() {\n  return 1;\n}\n" });
    const read = await ws.read({ file_path: "a.js" });
    // Copied from read's output, prefixes and all.
    const copied = read.text.split("\n").slice(1, 3).join("\n");
    expect(copied).toBe("     2\tfunction f() {\n     3\t  return 1;");
    const message = await rejectsWith(
      ws.edit({ file_path: "a.js", old_string: copied, new_string: "x" }),
      "NO_MATCH",
    );
    expect(message).toMatch(/line-number prefix/);
    expect(text("a.js")).toBe("// head\nfunction f() {\n  return 1;\n}\n");
  });

  it("refuses old_string equal to new_string with INVALID_ARGUMENT", async () => {
    const { ws, text } = await setup({ "a.txt": "same\n" });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "same", new_string: "same" }),
      "INVALID_ARGUMENT",
    );
    expect(message).toMatch(/same/);
    expect(text("a.txt")).toBe("same\n");
  });

  it("refuses a missing file with NOT_FOUND, pointing at write or an empty old_string", async () => {
    const { ws, dir } = await setup({});
    const message = await rejectsWith(
      ws.edit({ file_path: "nope.txt", old_string: "a", new_string: "b" }),
      "NOT_FOUND",
    );
    expect(message).toMatch(/write|empty old_string/);
    expect(() => statSync(join(dir, "nope.txt"))).toThrow();
  });
});

describe("edit: the guard", () => {
  it("refuses a file never read with NOT_READ, and says to read it", async () => {
    const { ws, text } = await setup({ "a.txt": "hello\n" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "hello", new_string: "bye" }),
      "NOT_READ",
    );
    expect(message).toMatch(/not been read/);
    expect(message).toMatch(/Read it/);
    expect(text("a.txt")).toBe("hello\n");
  });

  it("reports NOT_READ before NO_MATCH (the miss would only mislead, and shows unread lines)", async () => {
    const { ws } = await setup({ "a.txt": "secret line\n" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "secret lime", new_string: "x" }),
      "NOT_READ",
    );
    expect(message).not.toContain("secret line");
  });

  it("reports NOT_READ before NO_MATCH under allow-within-window too", async () => {
    const { ws } = await setup(
      { "a.txt": "secret line\n" },
      { partialReads: "allow-within-window" },
    );
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "secret lime", new_string: "x" }),
      "NOT_READ",
    );
    expect(message).not.toContain("secret line");
  });

  it("reports STALE before NO_MATCH under allow-within-window too", async () => {
    const { ws, dir, text } = await setup(
      { "a.txt": "one\ntwo\n" },
      { partialReads: "allow-within-window" },
    );
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(dir, "a.txt"), "one\n2\n");
    await rejectsWith(ws.edit({ file_path: "a.txt", old_string: "two", new_string: "x" }), "STALE");
    expect(text("a.txt")).toBe("one\n2\n");
  });

  it("refuses an edit after an external change with STALE and keeps the external content", async () => {
    const { ws, dir, text } = await setup({ "a.txt": "one\ntwo\n" });
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(dir, "a.txt"), "one\ntwo\nexternal\n");
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "two", new_string: "TWO" }),
      "STALE",
    );
    expect(message).toContain("Read it again, then retry");
    expect(text("a.txt")).toBe("one\ntwo\nexternal\n");
    // Reading again clears it.
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "two", new_string: "TWO" });
    expect(text("a.txt")).toBe("one\nTWO\nexternal\n");
  });

  it("reports STALE before NO_MATCH when the external change removed old_string", async () => {
    const { ws, dir, text } = await setup({ "a.txt": "one\ntwo\n" });
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(dir, "a.txt"), "one\n2\n");
    await rejectsWith(ws.edit({ file_path: "a.txt", old_string: "two", new_string: "x" }), "STALE");
    expect(text("a.txt")).toBe("one\n2\n");
  });

  it("under warn, edits a changed file and returns the warning", async () => {
    const { ws, dir, text } = await setup({ "a.txt": "one\ntwo\n" }, { policy: "warn" });
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(dir, "a.txt"), "one\ntwo\nexternal\n");
    const result = await ws.edit({ file_path: "a.txt", old_string: "two", new_string: "TWO" });
    // The edit applies to the file as it is now: the external line survives.
    expect(text("a.txt")).toBe("one\nTWO\nexternal\n");
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/has changed on disk since you last read it/);
    expect(result.text).toContain(result.warnings[0]);
  });

  it("under warn, edits a file never read without a warning", async () => {
    const { ws, text } = await setup({ "a.txt": "hello\n" }, { policy: "warn" });
    const result = await ws.edit({ file_path: "a.txt", old_string: "hello", new_string: "bye" });
    expect(text("a.txt")).toBe("bye\n");
    // Contract 1.3: "Never-read files are not warned about in this mode."
    expect(result.warnings).toEqual([]);
  });

  it("chains edits without reading again (each edit is recorded as a fresh read)", async () => {
    const { ws, text } = await setup({ "a.txt": "a\nb\nc\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "a", new_string: "A" });
    await ws.edit({ file_path: "a.txt", old_string: "b", new_string: "B" });
    await ws.multiEdit({
      file_path: "a.txt",
      edits: [{ old_string: "A\nB", new_string: "AB" }],
    });
    await ws.edit({ file_path: "a.txt", old_string: "c", new_string: "C" });
    expect(text("a.txt")).toBe("AB\nC\n");
  });

  it("after a chain of edits, an external change is still caught", async () => {
    const { ws, dir } = await setup({ "a.txt": "a\nb\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "a", new_string: "A" });
    await writeFile(join(dir, "a.txt"), "A\nb\nmore\n");
    await rejectsWith(ws.edit({ file_path: "a.txt", old_string: "b", new_string: "B" }), "STALE");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A\nb\nmore\n");
  });

  describe("partial reads", () => {
    const twenty = numbered(20);

    it("allow-within-window: an edit inside lines 5-10 is allowed, one at line 15 is refused", async () => {
      const { ws, text } = await setup(
        { "a.txt": twenty },
        { partialReads: "allow-within-window" },
      );
      const read = await ws.read({ file_path: "a.txt", offset: 5, limit: 6 });
      expect([read.startLine, read.endLine, read.truncated]).toEqual([5, 10, true]);
      const message = await rejectsWith(
        ws.edit({ file_path: "a.txt", old_string: "line 15\n", new_string: "LINE 15\n" }),
        "NOT_READ",
      );
      expect(message).toContain("lines 5-10 of 20");
      expect(text("a.txt")).toBe(twenty);
      const result = await ws.edit({
        file_path: "a.txt",
        old_string: "line 7\n",
        new_string: "LINE 7\n",
      });
      expect(result.firstChangedLine).toBe(7);
      expect(text("a.txt")).toBe(twenty.replace("line 7\n", "LINE 7\n"));
    });

    it("allow-within-window: an edit that crosses the window's end is refused", async () => {
      const { ws, text } = await setup(
        { "a.txt": twenty },
        { partialReads: "allow-within-window" },
      );
      await ws.read({ file_path: "a.txt", offset: 5, limit: 6 });
      await rejectsWith(
        ws.edit({ file_path: "a.txt", old_string: "line 10\nline 11\n", new_string: "x\n" }),
        "NOT_READ",
      );
      expect(text("a.txt")).toBe(twenty);
    });

    it("allow-within-window: a multiEdit with one edit outside the window is refused whole", async () => {
      const { ws, text } = await setup(
        { "a.txt": twenty },
        { partialReads: "allow-within-window" },
      );
      await ws.read({ file_path: "a.txt", offset: 5, limit: 6 });
      await rejectsWith(
        ws.multiEdit({
          file_path: "a.txt",
          edits: [
            { old_string: "line 6\n", new_string: "LINE 6\n" },
            { old_string: "line 16\n", new_string: "LINE 16\n" },
          ],
        }),
        "NOT_READ",
      );
      expect(text("a.txt")).toBe(twenty);
    });

    it("default policy: after reading lines 5-10 both edits are refused", async () => {
      const { ws, text } = await setup({ "a.txt": twenty });
      await ws.read({ file_path: "a.txt", offset: 5, limit: 6 });
      await rejectsWith(
        ws.edit({ file_path: "a.txt", old_string: "line 7\n", new_string: "LINE 7\n" }),
        "NOT_READ",
      );
      const message = await rejectsWith(
        ws.edit({ file_path: "a.txt", old_string: "line 15\n", new_string: "LINE 15\n" }),
        "NOT_READ",
      );
      expect(message).toContain("only partially read (lines 5-10 of 20)");
      expect(text("a.txt")).toBe(twenty);
    });
  });
});

describe("edit: the file's own conventions are kept", () => {
  it("CRLF: old_string and new_string with \\n match, and every line stays CRLF", async () => {
    const { ws, bytes } = await setup({ "a.txt": "one\r\ntwo\r\nthree\r\n" });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.edit({
      file_path: "a.txt",
      old_string: "one\ntwo\n",
      new_string: "ONE\nnew a\nnew b\nTWO\n",
    });
    const out = bytes("a.txt").toString("latin1");
    expect(out).toBe("ONE\r\nnew a\r\nnew b\r\nTWO\r\nthree\r\n");
    expect(out).not.toContain("\r\r\n");
    expect(out.match(/(?<!\r)\n/g)).toBeNull();
    expect(result.firstChangedLine).toBe(1);
    // The diff reads like any other: no CRs.
    expect(result.diff).not.toContain("\r");
  });

  it("LF: old_string and new_string sent with CRLF match and are written with LF", async () => {
    const { ws, bytes } = await setup({ "a.txt": "a\nb\nc\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "a\r\nb", new_string: "a\r\nx\r\nb" });
    expect(bytes("a.txt").toString("latin1")).toBe("a\nx\nb\nc\n");
  });

  it("CRLF: a new_string already in CRLF never becomes \\r\\r\\n", async () => {
    const { ws, bytes } = await setup({ "a.txt": "a\r\nb\r\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "a\r\n", new_string: "x\r\ny\r\n" });
    expect(bytes("a.txt").toString("latin1")).toBe("x\r\ny\r\nb\r\n");
  });

  it("CRLF: a single-line edit that adds line breaks adds CRLF ones", async () => {
    const { ws, bytes } = await setup({ "a.txt": "a\r\nb\r\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "b", new_string: "b1\nb2" });
    expect(bytes("a.txt").toString("latin1")).toBe("a\r\nb1\r\nb2\r\n");
  });

  it("keeps a UTF-8 byte order mark (once)", async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const { ws, bytes } = await setup({
      "a.txt": Buffer.concat([bom, Buffer.from("first\nsecond\n")]),
    });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "first", new_string: "FIRST" });
    expect(bytes("a.txt")).toEqual(Buffer.concat([bom, Buffer.from("FIRST\nsecond\n")]));
  });

  it("keeps BOM and CRLF together", async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const { ws, bytes } = await setup({ "a.cs": Buffer.concat([bom, Buffer.from("a\r\nb\r\n")]) });
    await ws.read({ file_path: "a.cs" });
    await ws.edit({ file_path: "a.cs", old_string: "a\nb", new_string: "a\nx\nb" });
    expect(bytes("a.cs")).toEqual(Buffer.concat([bom, Buffer.from("a\r\nx\r\nb\r\n")]));
  });

  it("keeps UTF-16 LE with its byte order mark", async () => {
    const encode = (text: string) =>
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const { ws, bytes } = await setup({ "u.txt": encode("héllo\r\nworld\r\n") });
    await ws.read({ file_path: "u.txt" });
    await ws.edit({ file_path: "u.txt", old_string: "world\n", new_string: "wörld\nx\n" });
    expect(bytes("u.txt")).toEqual(encode("héllo\r\nwörld\r\nx\r\n"));
  });

  it("keeps a missing trailing newline when the edit touches the end", async () => {
    const { ws, text } = await setup({ "a.txt": "a\nlast" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "last", new_string: "LAST\n" });
    expect(text("a.txt")).toBe("a\nLAST");
  });

  it("keeps a trailing newline when the edit at the end drops it", async () => {
    const { ws, text } = await setup({ "a.txt": "a\nlast\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "last\n", new_string: "LAST" });
    expect(text("a.txt")).toBe("a\nLAST\n");
  });

  it("keeps a CRLF trailing newline when the edit at the end drops it", async () => {
    const { ws, bytes } = await setup({ "a.txt": "a\r\nlast\r\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "last\n", new_string: "LAST" });
    expect(bytes("a.txt").toString("latin1")).toBe("a\r\nLAST\r\n");
  });

  it("keeps the file mode", async () => {
    const { ws, dir } = await setup({ "run.sh": "#!/bin/sh\necho hi\n" });
    const file = join(dir, "run.sh");
    await chmod(file, 0o750);
    await ws.read({ file_path: "run.sh" });
    await ws.edit({ file_path: "run.sh", old_string: "hi", new_string: "bye" });
    expect(statSync(file).mode & 0o7777).toBe(0o750);
    expect(readFileSync(file, "utf8")).toBe("#!/bin/sh\necho bye\n");
  });

  it("keeps an unusual mode (0600) too, whatever the umask", async () => {
    const { ws, dir } = await setup({ "secret.env": "KEY=1\n" });
    const file = join(dir, "secret.env");
    await chmod(file, 0o600);
    await ws.read({ file_path: "secret.env" });
    await ws.edit({ file_path: "secret.env", old_string: "1", new_string: "2" });
    expect(statSync(file).mode & 0o7777).toBe(0o600);
  });

  it("edits through a symlink change the target, and the link stays a link", async () => {
    const { ws, dir, text } = await setup({ "target.txt": "old\n" });
    await symlink("target.txt", join(dir, "link.txt"));
    await ws.read({ file_path: "link.txt" });
    const result = await ws.edit({ file_path: "link.txt", old_string: "old", new_string: "new" });
    expect(text("target.txt")).toBe("new\n");
    expect((await lstat(join(dir, "link.txt"))).isSymbolicLink()).toBe(true);
    expect(result.path).toBe(join(dir, "link.txt"));
  });

  it("a read of the target counts for an edit through the link", async () => {
    const { ws, dir, text } = await setup({ "target.txt": "old\n" });
    await symlink(join(dir, "target.txt"), join(dir, "link.txt"));
    await ws.read({ file_path: "target.txt" });
    await ws.edit({ file_path: "link.txt", old_string: "old", new_string: "new" });
    expect(text("target.txt")).toBe("new\n");
    expect((await lstat(join(dir, "link.txt"))).isSymbolicLink()).toBe(true);
  });

  it("leaves no temp file behind", async () => {
    const { ws, dir } = await setup({ "a.txt": "x\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "x", new_string: "y" });
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "zz", new_string: "y" }),
      "NO_MATCH",
    );
    expect(readdirSync(dir)).toEqual(["a.txt"]);
  });
});

describe("edit: typographic quotes", () => {
  it("matches ASCII old_string against the file's curly quotes and writes the file's style", async () => {
    const { ws, text } = await setup({ "a.md": "She said ‘it’s fine’ and “done”.\n" });
    await ws.read({ file_path: "a.md" });
    const result = await ws.edit({
      file_path: "a.md",
      old_string: "'it's fine' and \"done\"",
      new_string: "'it's great' and \"finished\"",
    });
    expect(result.matchedBy).toBe("quotes");
    expect(result.text).toMatch(/typographic quotes/);
    expect(text("a.md")).toBe("She said ‘it’s great’ and “finished”.\n");
  });

  it("quote-tolerant matching keeps the file's style in a code file too", async () => {
    const { ws, text } = await setup({ "msg.ts": "const m = t(“Save”);\n" });
    await ws.read({ file_path: "msg.ts" });
    const result = await ws.edit({
      file_path: "msg.ts",
      old_string: 't("Save")',
      new_string: 't("Save all")',
    });
    expect(result.matchedBy).toBe("quotes");
    expect(text("msg.ts")).toBe("const m = t(“Save all”);\n");
  });

  it("an exact match reports matchedBy exact", async () => {
    const { ws } = await setup({ "a.md": "“x”\n" });
    await ws.read({ file_path: "a.md" });
    const result = await ws.edit({ file_path: "a.md", old_string: "“x”", new_string: "“y”" });
    expect(result.matchedBy).toBe("exact");
  });

  it("in a .ts file, curly quotes the file never used become ASCII", async () => {
    const { ws, text } = await setup({ "a.ts": 'const a = "x";\n' });
    await ws.read({ file_path: "a.ts" });
    const result = await ws.edit({
      file_path: "a.ts",
      old_string: '"x"',
      new_string: "“it’s y”",
    });
    expect(result.matchedBy).toBe("exact");
    expect(text("a.ts")).toBe(`const a = "it's y";\n`);
  });

  it("in a .md file, the model's curly quotes are kept", async () => {
    const { ws, text } = await setup({ "a.md": 'say "x"\n' });
    await ws.read({ file_path: "a.md" });
    await ws.edit({ file_path: "a.md", old_string: '"x"', new_string: "“it’s y”" });
    expect(text("a.md")).toBe("say “it’s y”\n");
  });

  it("in a .ts file, a curly kind the file already uses is kept, a new kind normalized", async () => {
    const { ws, text } = await setup({ "a.ts": 'const m = "it’s";\nconst n = "x";\n' });
    await ws.read({ file_path: "a.ts" });
    await ws.edit({
      file_path: "a.ts",
      old_string: 'const n = "x";',
      new_string: 'const n = "don’t “go”";',
    });
    expect(text("a.ts")).toBe('const m = "it’s";\nconst n = "don’t "go"";\n');
  });
});

describe("edit: an empty old_string", () => {
  it("creates a missing file (no read needed)", async () => {
    const { ws, dir, text } = await setup({});
    const result = await ws.edit({ file_path: "sub/new.txt", old_string: "", new_string: "hi\n" });
    expect(result).toMatchObject({ created: true, path: join(dir, "sub/new.txt") });
    expect(result.text).toContain("Created sub/new.txt.");
    expect(text("sub/new.txt")).toBe("hi\n");
    // And it counts as read: the next edit needs no read.
    await ws.edit({ file_path: "sub/new.txt", old_string: "hi", new_string: "ho" });
    expect(text("sub/new.txt")).toBe("ho\n");
  });

  it("fills an empty file that was read", async () => {
    const { ws, text } = await setup({ "empty.txt": "" });
    expect((await ws.read({ file_path: "empty.txt" })).text).toMatch(/empty/);
    const result = await ws.edit({
      file_path: "empty.txt",
      old_string: "",
      new_string: "content\n",
    });
    expect(result.created).toBe(false);
    expect(text("empty.txt")).toBe("content\n");
  });

  it("is refused on a file with content (INVALID_ARGUMENT), the file unchanged", async () => {
    const { ws, text } = await setup({ "a.txt": "content\n" });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "", new_string: "x" }),
      "INVALID_ARGUMENT",
    );
    expect(message).toMatch(/has content/);
    expect(text("a.txt")).toBe("content\n");
  });
});

describe("edit: parameters", () => {
  it("accepts filePath / oldString / newString", async () => {
    const { ws, text } = await setup({ "a.txt": "one\n" });
    await ws.read({ filePath: "a.txt" });
    await ws.edit({ filePath: "a.txt", oldString: "one", newString: "two" });
    expect(text("a.txt")).toBe("two\n");
  });

  it("accepts path / oldText / newText", async () => {
    const { ws, text } = await setup({ "a.txt": "one\n" });
    await ws.read({ path: "a.txt" });
    await ws.edit({ path: "a.txt", oldText: "one", newText: "two" });
    expect(text("a.txt")).toBe("two\n");
  });

  it("accepts an absolute file_path", async () => {
    const { ws, dir, text } = await setup({ "a.txt": "one\n" });
    await ws.read({ file_path: join(dir, "a.txt") });
    await ws.edit({ file_path: join(dir, "a.txt"), old_string: "one", new_string: "two" });
    expect(text("a.txt")).toBe("two\n");
  });

  it("refuses conflicting aliases (file_path and filePath differ)", async () => {
    const { ws, text } = await setup({ "a.txt": "one\n", "b.txt": "one\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.read({ file_path: "b.txt" });
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", filePath: "b.txt", old_string: "one", new_string: "two" }),
      "INVALID_ARGUMENT",
    );
    expect(message).toMatch(/file_path|filePath/);
    expect(text("a.txt")).toBe("one\n");
    expect(text("b.txt")).toBe("one\n");
  });

  it("refuses conflicting old_string and oldString", async () => {
    const { ws, text } = await setup({ "a.txt": "one\n" });
    await ws.read({ file_path: "a.txt" });
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "one", oldString: "on", new_string: "two" }),
      "INVALID_ARGUMENT",
    );
    expect(text("a.txt")).toBe("one\n");
  });

  it("accepts the same value under two aliases", async () => {
    const { ws, text } = await setup({ "a.txt": "one\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", filePath: "a.txt", old_string: "one", new_string: "2" });
    expect(text("a.txt")).toBe("2\n");
  });

  it("refuses a missing new_string and a non-boolean replace_all", async () => {
    const { ws } = await setup({ "a.txt": "one\n" });
    await ws.read({ file_path: "a.txt" });
    expect(
      await rejectsWith(ws.edit({ file_path: "a.txt", old_string: "one" }), "INVALID_ARGUMENT"),
    ).toContain("new_string");
    expect(
      await rejectsWith(
        ws.edit({ file_path: "a.txt", old_string: "one", new_string: "2", replace_all: "yes" }),
        "INVALID_ARGUMENT",
      ),
    ).toContain("replace_all");
  });

  it("refuses a path outside the root", async () => {
    const { ws } = await setup({ "a.txt": "one\n" });
    await rejectsWith(
      ws.edit({ file_path: "../outside.txt", old_string: "", new_string: "x" }),
      "OUTSIDE_ROOT",
    );
  });
});

describe("edit: files that are not editable text", () => {
  it("refuses invalid UTF-8 (Latin-1) with UNSUPPORTED_ENCODING and leaves the bytes alone", async () => {
    const latin1 = Buffer.from("caf\xe9 cr\xe8me\nna\xefve\n", "latin1");
    const { ws, bytes } = await setup({ "a.txt": latin1 });
    const read = await ws.read({ file_path: "a.txt" });
    expect(read.text).toMatch(/not valid UTF-8/);
    const message = await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "na", new_string: "NA" }),
      "UNSUPPORTED_ENCODING",
    );
    expect(message).toMatch(/UTF-8/);
    expect(bytes("a.txt")).toEqual(latin1);
  });

  it("refuses a binary file, and leaves it alone", async () => {
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x61, 0x62, 0x63, 0x0a]);
    const { ws, bytes } = await setup({ "img.png": binary });
    // Never read: the guard answers first, NOT_READ, as for any file (the guard's verdict
    // comes before the content's, see NO_MATCH above).
    await rejectsWith(
      ws.edit({ file_path: "img.png", old_string: "abc", new_string: "xyz" }),
      "NOT_READ",
    );
    // Following it, read explains BINARY and records what it saw, so the content is judged
    // next: BINARY. The model is not left in a loop.
    await rejectsWith(ws.read({ file_path: "img.png" }), "BINARY");
    const message = await rejectsWith(
      ws.edit({ file_path: "img.png", old_string: "abc", new_string: "xyz" }),
      "BINARY",
    );
    expect(message).toMatch(/binary/);
    expect(bytes("img.png")).toEqual(binary);
  });

  it("under warn, a binary file is refused BINARY outright", async () => {
    const binary = Buffer.from([0x00, 0x01, 0x61, 0x62, 0x63]);
    const { ws, bytes } = await setup({ "blob.bin": binary }, { policy: "warn" });
    await rejectsWith(
      ws.edit({ file_path: "blob.bin", old_string: "abc", new_string: "xyz" }),
      "BINARY",
    );
    expect(bytes("blob.bin")).toEqual(binary);
  });

  it("refuses a directory with NOT_A_FILE", async () => {
    const { ws } = await setup({ "d/a.txt": "x\n" });
    await rejectsWith(ws.edit({ file_path: "d", old_string: "x", new_string: "y" }), "NOT_A_FILE");
  });
});

describe("edit: the scan cache", () => {
  it("a grep with the cache on right after an edit sees the edited content", async () => {
    const { ws } = await setup(
      { "a.txt": "alpha\n", "b.txt": "beta\n" },
      { cache: true, watch: false },
    );
    expect((await ws.grep({ pattern: "gamma" })).files).toEqual([]);
    await ws.read({ file_path: "a.txt" });
    await ws.edit({ file_path: "a.txt", old_string: "alpha", new_string: "gamma" });
    const after = await ws.grep({ pattern: "gamma", output_mode: "content" });
    expect(after.lines.map((l) => [l.path, l.line, l.text])).toEqual([["a.txt", 1, "gamma"]]);
    expect((await ws.grep({ pattern: "alpha" })).files).toEqual([]);
  });

  it("a grep with the cache on right after an edit that creates a file lists it", async () => {
    const { ws } = await setup({ "a.txt": "alpha\n" }, { cache: true, watch: false });
    expect((await ws.grep({ pattern: "needle" })).files).toEqual([]);
    expect((await ws.glob({ pattern: "**/*.txt" })).files).toEqual(["a.txt"]);
    await ws.edit({ file_path: "new/created.txt", old_string: "", new_string: "needle\n" });
    expect((await ws.grep({ pattern: "needle" })).files).toEqual(["new/created.txt"]);
    expect([...(await ws.glob({ pattern: "**/*.txt" })).files].sort()).toEqual([
      "a.txt",
      "new/created.txt",
    ]);
  });
});

describe("multiEdit", () => {
  it("applies several edits, each matched against the original text", async () => {
    const { ws, text } = await setup({ "a.txt": "alpha\nbeta\ngamma\ndelta\n" });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.multiEdit({
      file_path: "a.txt",
      edits: [
        { old_string: "gamma", new_string: "GAMMA" },
        { old_string: "alpha", new_string: "ALPHA" },
        { old_string: "delta\n", new_string: "delta\nepsilon\n" },
      ],
    });
    expect(text("a.txt")).toBe("ALPHA\nbeta\nGAMMA\ndelta\nepsilon\n");
    expect(result.replacements).toBe(3);
    expect(result.firstChangedLine).toBe(1);
    expect(result.diff).toContain("+epsilon");
  });

  it("does not match an edit against a previous edit's replacement (NO_MATCH, nothing written)", async () => {
    const original = "one\ntwo\n";
    const { ws, text } = await setup({ "a.txt": original });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.multiEdit({
        file_path: "a.txt",
        edits: [
          { old_string: "one", new_string: "uno" },
          // "uno" only exists after edit 1: matched against the original, it is not there.
          { old_string: "uno", new_string: "eins" },
        ],
      }),
      "NO_MATCH",
    );
    expect(message).toContain("Edit 2 of 2");
    expect(text("a.txt")).toBe(original);
  });

  it("refuses overlapping edits with INVALID_ARGUMENT", async () => {
    const original = "abcdef\n";
    const { ws, bytes } = await setup({ "a.txt": original });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.multiEdit({
        file_path: "a.txt",
        edits: [
          { old_string: "abcd", new_string: "1" },
          { old_string: "cdef", new_string: "2" },
        ],
      }),
      "INVALID_ARGUMENT",
    );
    expect(message).toMatch(/overlap/);
    expect(message).toContain("Edit 1 of 2");
    expect(message).toContain("Edit 2 of 2");
    expect(bytes("a.txt").toString()).toBe(original);
  });

  it("refuses two edits of the same text", async () => {
    const { ws, text } = await setup({ "a.txt": "x = 1\n" });
    await ws.read({ file_path: "a.txt" });
    await rejectsWith(
      ws.multiEdit({
        file_path: "a.txt",
        edits: [
          { old_string: "x = 1", new_string: "x = 2" },
          { old_string: "x = 1", new_string: "x = 3" },
        ],
      }),
      "INVALID_ARGUMENT",
    );
    expect(text("a.txt")).toBe("x = 1\n");
  });

  it("allows adjacent edits (touching, not overlapping)", async () => {
    const { ws, text } = await setup({ "a.txt": "abcdef\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.multiEdit({
      file_path: "a.txt",
      edits: [
        { old_string: "def", new_string: "DEF" },
        { old_string: "abc", new_string: "ABC" },
      ],
    });
    expect(text("a.txt")).toBe("ABCDEF\n");
  });

  it("writes nothing when one edit fails, and names it (Edit 2 of 3)", async () => {
    const original = "first\nsecond\nthird\n";
    const { ws, bytes } = await setup({ "a.txt": original });
    await ws.read({ file_path: "a.txt" });
    const before = bytes("a.txt");
    const mtime = statSync(join(ws.roots[0] as string, "a.txt")).mtimeMs;
    const message = await rejectsWith(
      ws.multiEdit({
        file_path: "a.txt",
        edits: [
          { old_string: "first", new_string: "1st" },
          { old_string: "seconnd", new_string: "2nd" },
          { old_string: "third", new_string: "3rd" },
        ],
      }),
      "NO_MATCH",
    );
    expect(message).toMatch(/^Edit 2 of 3: /);
    expect(message).toContain("     2\tsecond");
    expect(bytes("a.txt")).toEqual(before);
    expect(statSync(join(ws.roots[0] as string, "a.txt")).mtimeMs).toBe(mtime);
  });

  it("names an ambiguous edit (Edit 3 of 3) and writes nothing", async () => {
    const original = "a\nb\nc\nc\n";
    const { ws, text } = await setup({ "a.txt": original });
    await ws.read({ file_path: "a.txt" });
    const message = await rejectsWith(
      ws.multiEdit({
        file_path: "a.txt",
        edits: [
          { old_string: "a", new_string: "A" },
          { old_string: "b", new_string: "B" },
          { old_string: "c", new_string: "C" },
        ],
      }),
      "AMBIGUOUS",
    );
    expect(message).toMatch(/^Edit 3 of 3: /);
    expect(message).toContain("lines 3, 4");
    expect(text("a.txt")).toBe(original);
  });

  it("applies replace_all inside a multiEdit", async () => {
    const { ws, text } = await setup({ "a.txt": "let x = 1;\nlet y = x + x;\nreturn y;\n" });
    await ws.read({ file_path: "a.txt" });
    const result = await ws.multiEdit({
      file_path: "a.txt",
      edits: [
        { old_string: "x", new_string: "count", replace_all: true },
        { old_string: "return y;", new_string: "return y * 2;" },
      ],
    });
    expect(text("a.txt")).toBe("let count = 1;\nlet y = count + count;\nreturn y * 2;\n");
    expect(result.replacements).toBe(4);
  });

  it("accepts edits sent as a JSON string, with aliases and string booleans inside", async () => {
    const { ws, text } = await setup({ "a.txt": "a a\nb\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.multiEdit({
      filePath: "a.txt",
      edits: JSON.stringify([
        { oldString: "a", newString: "A", replaceAll: "true" },
        { old_string: "b", new_string: "B" },
      ]),
    });
    expect(text("a.txt")).toBe("A A\nB\n");
  });

  it("refuses an empty edits array, and edits that are not JSON", async () => {
    const { ws, text } = await setup({ "a.txt": "a\n" });
    await ws.read({ file_path: "a.txt" });
    expect(
      await rejectsWith(ws.multiEdit({ file_path: "a.txt", edits: [] }), "INVALID_ARGUMENT"),
    ).toMatch(/at least one/);
    await rejectsWith(ws.multiEdit({ file_path: "a.txt", edits: "[]" }), "INVALID_ARGUMENT");
    await rejectsWith(ws.multiEdit({ file_path: "a.txt", edits: "not json" }), "INVALID_ARGUMENT");
    await rejectsWith(ws.multiEdit({ file_path: "a.txt" }), "INVALID_ARGUMENT");
    expect(text("a.txt")).toBe("a\n");
  });

  it("refuses an edit whose old_string equals its new_string", async () => {
    const { ws, text } = await setup({ "a.txt": "a\nb\n" });
    await ws.read({ file_path: "a.txt" });
    await rejectsWith(
      ws.multiEdit({
        file_path: "a.txt",
        edits: [
          { old_string: "a", new_string: "A" },
          { old_string: "b", new_string: "b" },
        ],
      }),
      "INVALID_ARGUMENT",
    );
    expect(text("a.txt")).toBe("a\nb\n");
  });

  it("is guarded like edit: NOT_READ for a file never read", async () => {
    const { ws, text } = await setup({ "a.txt": "a\n" });
    await rejectsWith(
      ws.multiEdit({ file_path: "a.txt", edits: [{ old_string: "a", new_string: "b" }] }),
      "NOT_READ",
    );
    expect(text("a.txt")).toBe("a\n");
  });

  it("keeps CRLF across several edits", async () => {
    const { ws, bytes } = await setup({ "a.txt": "a\r\nb\r\nc\r\n" });
    await ws.read({ file_path: "a.txt" });
    await ws.multiEdit({
      file_path: "a.txt",
      edits: [
        { old_string: "a\nb", new_string: "a\nx\nb" },
        { old_string: "c\n", new_string: "c\ny\n" },
      ],
    });
    expect(bytes("a.txt").toString("latin1")).toBe("a\r\nx\r\nb\r\nc\r\ny\r\n");
  });
});

describe("concurrent edits through one workspace", () => {
  it("20 concurrent edits of different lines after one read: none is lost silently", async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `value ${String(i).padStart(2, "0")} = old`);
    const { ws, text } = await setup({ "a.txt": `${lines.join("\n")}\n` });
    await ws.read({ file_path: "a.txt" });
    const settled = await Promise.allSettled(
      lines.map((line) =>
        ws.edit({ file_path: "a.txt", old_string: line, new_string: line.replace("old", "new") }),
      ),
    );
    const final = text("a.txt").split("\n").slice(0, -1);
    expect(final).toHaveLength(20);
    let landed = 0;
    settled.forEach((outcome, i) => {
      const expected = (lines[i] as string).replace("old", "new");
      if (outcome.status === "fulfilled") {
        landed++;
        expect(final[i]).toBe(expected);
      } else {
        expect(outcome.reason).toBeInstanceOf(FreshfsError);
        expect(["STALE", "NO_MATCH"]).toContain((outcome.reason as FreshfsError).code);
        expect(final[i]).toBe(lines[i]);
      }
    });
    expect(landed).toBeGreaterThan(0);
  });

  it("concurrent edits through a symlink and the real path serialize on the one file", async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `item ${i} off`);
    const { ws, dir, text } = await setup({ "a.txt": `${lines.join("\n")}\n` });
    await symlink("a.txt", join(dir, "link.txt"));
    await ws.read({ file_path: "a.txt" });
    const settled = await Promise.allSettled(
      lines.map((line, i) =>
        ws.edit({
          file_path: i % 2 === 0 ? "a.txt" : "link.txt",
          old_string: line,
          new_string: line.replace("off", "on"),
        }),
      ),
    );
    const final = text("a.txt").split("\n").slice(0, -1);
    settled.forEach((outcome, i) => {
      if (outcome.status === "fulfilled") expect(final[i]).toBe(`item ${i} on`);
      else {
        expect(["STALE", "NO_MATCH"]).toContain((outcome.reason as FreshfsError).code);
        expect(final[i]).toBe(`item ${i} off`);
      }
    });
    expect((await lstat(join(dir, "link.txt"))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe(`${final.join("\n")}\n`);
  });
});

/**
 * Regression tests for the review of the agent tools: each case is a defect that was
 * reproduced against the Workspace and fixed.
 */
import { link, mkdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Workspace } from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { whileLocked } from "../helpers/lock.js";

const text = (path: string) => readFile(path, "utf8");

describe("`..` after a symbolic link names another file than it reads as", () => {
  it("refuses a write through link/.. instead of skipping the guard", async () => {
    const root = await tempTree({ "sub/a.txt": "keep\n", "sub/dir/x.txt": "x\n" });
    await symlink("sub/dir", join(root, "link"));
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.write({ file_path: "sub/a.txt", content: "x" }), "NOT_READ");
    const message = await rejectsWith(
      ws.write({ file_path: "link/../a.txt", content: "x" }),
      "INVALID_ARGUMENT",
    );
    expect(message).toContain('without ".."');
    expect(await text(join(root, "sub/a.txt"))).toBe("keep\n");
  });

  it("keeps the search tools inside the roots through d/../a", async () => {
    const base = await tempTree({
      "root/sub/deep/x.txt": "x\n",
      "root/sub/a/inside.txt": "inside\n",
      "outside/secret.txt": "TOPSECRET password\n",
    });
    const root = join(base, "root");
    await symlink("sub/deep", join(root, "d"));
    await symlink("../outside", join(root, "a"));
    const ws = new Workspace({ roots: root });
    for (const call of [
      ws.grep({ pattern: "password", path: "d/../a", output_mode: "content" }),
      ws.glob({ pattern: "*", path: "d/../a" }),
      ws.find({ query: "sec", path: "d/../a" }),
    ]) {
      const error = await call.then(
        () => undefined,
        (thrown: unknown) => thrown as { code: string },
      );
      expect(["INVALID_ARGUMENT", "OUTSIDE_ROOT"]).toContain(error?.code);
    }
  });
});

describe("a path is confined again once its lock is held", () => {
  it("refuses when a symlink was re-pointed while the call waited", async () => {
    const root = await tempTree({ "a.txt": "never read\n" });
    await symlink("a.txt", join(root, "l.txt"));
    const ws = new Workspace({ roots: root });
    let pending: Promise<unknown> | undefined;
    await whileLocked(join(root, "a.txt"), async () => {
      pending = ws.write({ file_path: "l.txt", content: "overwritten\n" }).catch((e) => e);
      await new Promise((done) => setTimeout(done, 20));
      await rm(join(root, "l.txt"));
      await symlink("missing.txt", join(root, "l.txt"));
    });
    expect(((await pending) as { code?: string }).code).toBe("STALE");
    expect(await text(join(root, "a.txt"))).toBe("never read\n");
  });

  it("refuses when a directory became a link out of the root while the call waited", async () => {
    const base = await tempTree({ "root/sub/keep.txt": "k\n", "outside/o.txt": "o\n" });
    const root = join(base, "root");
    const ws = new Workspace({ roots: root });
    let pending: Promise<unknown> | undefined;
    await whileLocked(join(root, "sub", "f.txt"), async () => {
      pending = ws.write({ file_path: "sub/f.txt", content: "escaped\n" }).catch((e) => e);
      await new Promise((done) => setTimeout(done, 20));
      await rename(join(root, "sub"), join(root, "sub-moved"));
      await symlink(join(base, "outside"), join(root, "sub"));
    });
    expect(((await pending) as { code?: string }).code).toBe("OUTSIDE_ROOT");
    await expect(stat(join(base, "outside", "f.txt"))).rejects.toThrow();
  });
});

describe("partial reads under allow-within-window", () => {
  it("stay partial after an edit inside the window", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}\n`).join("");
    const root = await tempTree({ "big.txt": lines });
    const ws = new Workspace({ roots: root, partialReads: "allow-within-window" });
    await ws.read({ file_path: "big.txt", limit: 10 });
    await rejectsWith(
      ws.edit({ file_path: "big.txt", old_string: "line 90\n", new_string: "L90\n" }),
      "NOT_READ",
    );
    await ws.edit({ file_path: "big.txt", old_string: "line 5\n", new_string: "L5\nL5b\n" });
    await rejectsWith(
      ws.edit({ file_path: "big.txt", old_string: "line 90\n", new_string: "L90\n" }),
      "NOT_READ",
    );
    await rejectsWith(ws.write({ file_path: "big.txt", content: "wiped\n" }), "NOT_READ");
    // The window moved with the added line: line 10 (now 11) is still inside it.
    await ws.edit({ file_path: "big.txt", old_string: "line 10\n", new_string: "L10\n" });
    expect(await text(join(root, "big.txt"))).toContain("L10\nline 11\n");
  });
});

describe("a file deleted after its read", () => {
  it("can be created anew once a read has found it gone", async () => {
    const root = await tempTree({ "a.txt": "old\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    await rm(join(root, "a.txt"));
    await rejectsWith(ws.write({ file_path: "a.txt", content: "new\n" }), "STALE");
    await rejectsWith(ws.read({ file_path: "a.txt" }), "NOT_FOUND");
    await ws.write({ file_path: "a.txt", content: "new\n" });
    expect(await text(join(root, "a.txt"))).toBe("new\n");
  });
});

describe("quote-tolerant matches in code never write curly quotes into code", () => {
  it("keeps ASCII where the file has ASCII and the model sent curly quotes", async () => {
    const root = await tempTree({ "a.ts": "const a = 'x';\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.ts" });
    const result = await ws.edit({
      file_path: "a.ts",
      old_string: "const a = \u2018x\u2019;",
      new_string: "const a = \u2018y\u2019;",
    });
    expect(await text(join(root, "a.ts"))).toBe("const a = 'y';\n");
    expect(result.quotesNormalized).toBe(2);
    expect(result.text).toContain("written as ASCII");
  });

  it("does not turn string quotes curly because a comment on the line is typographic", async () => {
    const root = await tempTree({ "b.ts": 'const s = "a"; // \u201Cquoted\u201D\n' });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "b.ts" });
    await ws.edit({
      file_path: "b.ts",
      old_string: 'const s = "a"; // "quoted"',
      new_string: 'const s = "b"; // "quoted"',
    });
    expect(await text(join(root, "b.ts"))).toMatch(/^const s = "b";/);
  });

  it("keeps lines the edit did not change exactly, and a curly apostrophe is no quote style", async () => {
    const root = await tempTree({ "c.ts": 'const m = "It\u2019s fine";\n' });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "c.ts" });
    const result = await ws.edit({
      file_path: "c.ts",
      old_string: `const m = "It's fine";`,
      new_string: `const m = "It's fine";\nconst k = 'one';`,
    });
    expect(result.matchedBy).toBe("quotes");
    expect(await text(join(root, "c.ts"))).toBe(
      "const m = \"It\u2019s fine\";\nconst k = 'one';\n",
    );
  });
});

describe("rename corner cases", () => {
  it("removes the old name when both names are hard links of one file", async () => {
    const root = await tempTree({ "h1.txt": "same\n" });
    await link(join(root, "h1.txt"), join(root, "h2.txt"));
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "h2.txt" });
    await ws.rename({ from: "h1.txt", to: "h2.txt", overwrite: true });
    await expect(stat(join(root, "h1.txt"))).rejects.toThrow();
    expect(await text(join(root, "h2.txt"))).toBe("same\n");
  });

  it("refuses a `to` ending in a slash, and says how to move into a directory", async () => {
    const root = await tempTree({ "a.txt": "a\n", "dir/x.txt": "x\n", "d2/y.txt": "y\n" });
    const ws = new Workspace({ roots: root });
    await rejectsWith(ws.rename({ from: "a.txt", to: "newdir/" }), "INVALID_ARGUMENT");
    const message = await rejectsWith(ws.rename({ from: "a.txt", to: "dir" }), "ALREADY_EXISTS");
    expect(message).toContain("dir/name");
    expect(message).not.toContain("overwrite: true");
    await rejectsWith(ws.rename({ from: "d2", to: "a.txt", overwrite: true }), "ALREADY_EXISTS");
    expect(await text(join(root, "a.txt"))).toBe("a\n");
  });
});

describe("encodings", () => {
  it("refuses to edit a UTF-16 file with an odd trailing byte, which it would drop", async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from("hello\n", "utf16le"),
      Buffer.from([0x41]),
    ]);
    const root = await tempTree({ "u.txt": bytes });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "u.txt" });
    await rejectsWith(
      ws.edit({ file_path: "u.txt", old_string: "hello", new_string: "bye" }),
      "UNSUPPORTED_ENCODING",
    );
    expect((await readFile(join(root, "u.txt"))).equals(bytes)).toBe(true);
  });
});

describe("grep's head_limit", () => {
  it("takes 0 as no cap, as Claude Code does", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`f${String(i).padStart(3, "0")}.txt`, "hit\n"]),
    );
    const root = await tempTree(files);
    const ws = new Workspace({ roots: root });
    expect((await ws.grep({ pattern: "hit" })).files).toHaveLength(250);
    const all = await ws.grep({ pattern: "hit", head_limit: 0 });
    expect(all.files).toHaveLength(300);
    expect(all.truncated).toBe(false);
  });
});

describe("the write path", () => {
  it("leaves a directory made in place of the parent untouched", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    await mkdir(join(root, "sub"));
    await writeFile(join(root, "sub", "b.txt"), "b\n");
    const ws = new Workspace({ roots: root });
    await ws.write({ file_path: "sub/c.txt", content: "c\n" });
    expect(await text(join(root, "sub", "c.txt"))).toBe("c\n");
  });
});

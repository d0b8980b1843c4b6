/**
 * The `delete` and `rename` tools of `Workspace`, on real files:
 * the guard, links, the scan cache, aliases and the no-check-then-act rename.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, lstat, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  FreshfsError,
  invalidateFsScanCache,
  Workspace,
  type WorkspaceOptions,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";

beforeEach(() => {
  invalidateFsScanCache();
  // Listings live long and an empty result is never rechecked: only an invalidation refreshes.
  configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 60_000 });
});

afterEach(() => configureScanCache(undefined));

function workspace(root: string, options: Partial<WorkspaceOptions> = {}): Workspace {
  return new Workspace({ roots: root, cache: true, ...options });
}

const text = (path: string) => readFile(path, "utf8");

/** The built library (npm test builds it first), for child processes. */
const DIST = new URL("../../dist/index.js", import.meta.url).href;

/** Runs an ES module script in a new node process; resolves its trimmed stdout. */
function runNode(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", () => resolve(out.trim()));
  });
}

describe("delete", () => {
  it("refuses a file never read with NOT_READ, and keeps it", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const message = await rejectsWith(workspace(root).delete({ file_path: "a.txt" }), "NOT_READ");
    expect(message).toContain("a.txt");
    expect(message).toMatch(/Read it/);
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
  });

  it("refuses a file changed since its read with STALE, and keeps the new content", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const ws = workspace(root);
    await ws.read({ file_path: "a.txt" });
    await writeFile(join(root, "a.txt"), "changed by someone else\n");
    const message = await rejectsWith(ws.delete({ file_path: "a.txt" }), "STALE");
    expect(message).toContain("Read it again, then retry");
    expect(await text(join(root, "a.txt"))).toBe("changed by someone else\n");
  });

  it("refuses after a partial read (a delete loses every line)", async () => {
    const root = await tempTree({ "a.txt": "1\n2\n3\n4\n" });
    const ws = workspace(root);
    await ws.read({ file_path: "a.txt", limit: 2 });
    await rejectsWith(ws.delete({ file_path: "a.txt" }), "NOT_READ");
    expect(existsSync(join(root, "a.txt"))).toBe(true);
  });

  it("deletes a file read in full: gone from disk and forgotten by the guard", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    const file = join(root, "a.txt");
    const ws = workspace(root);
    await ws.read({ file_path: "a.txt" });
    expect(ws.tracker.latest(file)).toBeDefined();
    const result = await ws.delete({ file_path: "a.txt" });
    expect(result.path).toBe(file);
    expect(result.warnings).toEqual([]);
    expect(result.text).toBe("Deleted a.txt.");
    expect(existsSync(file)).toBe(false);
    expect(ws.tracker.latest(file)).toBeUndefined();
    expect(await readdir(root)).toEqual(["b.txt"]);
    // The same bytes put back by someone else are not vouched for by the old read.
    await writeFile(file, "alpha\n");
    await rejectsWith(ws.write({ file_path: "a.txt", content: "new\n" }), "NOT_READ");
    expect(await text(file)).toBe("alpha\n");
  });

  it("takes an absolute path and the aliases filePath and path", async () => {
    const root = await tempTree({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    const ws = workspace(root);
    for (const name of ["a.txt", "b.txt", "c.txt"]) await ws.read({ file_path: name });
    await ws.delete({ file_path: join(root, "a.txt") });
    await ws.delete({ filePath: "b.txt" });
    await ws.delete({ path: "c.txt" });
    expect(await readdir(root)).toEqual([]);
  });

  it("is seen by glob and grep with the cache on, right after", async () => {
    const root = await tempTree({ "src/a.ts": "needle\n", "src/b.ts": "needle\n" });
    // Unwatched (the TTL policy): only the invalidation after the delete can make it seen.
    const ws = workspace(root, { watch: false });
    expect((await ws.glob({ pattern: "**/*.ts" })).files).toEqual(
      expect.arrayContaining(["src/a.ts", "src/b.ts"]),
    );
    expect([...(await ws.grep({ pattern: "needle" })).files].sort()).toEqual([
      "src/a.ts",
      "src/b.ts",
    ]);
    // The cache is warm: a file created behind its back is not listed yet.
    await writeFile(join(root, "src", "c.ts"), "needle\n");
    expect((await ws.glob({ pattern: "**/*.ts" })).files).not.toContain("src/c.ts");

    await ws.read({ file_path: "src/a.ts" });
    await ws.delete({ file_path: "src/a.ts" });
    const globbed = (await ws.glob({ pattern: "**/*.ts" })).files;
    expect(globbed).not.toContain("src/a.ts");
    expect([...globbed].sort()).toEqual(["src/b.ts", "src/c.ts"]);
    const grepped = (await ws.grep({ pattern: "needle" })).files;
    expect([...grepped].sort()).toEqual(["src/b.ts", "src/c.ts"]);
    expect((await ws.glob({ pattern: "src/a.ts" })).files).toEqual([]);
  });

  it("removes a symlink, not its target, and the target's read record survives", async () => {
    const root = await tempTree({ "target.txt": "kept\n" });
    await symlink("target.txt", join(root, "link.txt"));
    const ws = workspace(root);
    await ws.read({ file_path: "target.txt" });
    const result = await ws.delete({ file_path: "link.txt" });
    expect(result.text).toBe("Deleted link.txt.");
    expect(existsSync(join(root, "link.txt"))).toBe(false);
    await expect(lstat(join(root, "link.txt"))).rejects.toThrow();
    expect(await text(join(root, "target.txt"))).toBe("kept\n");
    // The target was read, and deleting a link to it did not make the guard forget that.
    await ws.edit({ file_path: "target.txt", old_string: "kept", new_string: "edited" });
    expect(await text(join(root, "target.txt"))).toBe("edited\n");
  });

  it("removes a dangling symlink inside the root", async () => {
    const root = await tempTree({});
    await symlink("nowhere.txt", join(root, "dangling"));
    await workspace(root).delete({ file_path: "dangling" });
    expect(await readdir(root)).toEqual([]);
  });

  it("refuses a directory with NOT_A_FILE, and keeps it and its files", async () => {
    const root = await tempTree({ "dir/inner.txt": "x\n" });
    const message = await rejectsWith(workspace(root).delete({ file_path: "dir" }), "NOT_A_FILE");
    expect(message).toContain("dir");
    expect(await text(join(root, "dir", "inner.txt"))).toBe("x\n");
  });

  it("refuses a missing file with NOT_FOUND", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const message = await rejectsWith(
      workspace(root).delete({ file_path: "missing.txt" }),
      "NOT_FOUND",
    );
    expect(message).toContain("missing.txt");
    await rejectsWith(workspace(root).delete({ file_path: "no/such/dir/x.txt" }), "NOT_FOUND");
  });

  it("under policy warn, deletes an unread file without a warning", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const result = await workspace(root, { policy: "warn" }).delete({ file_path: "a.txt" });
    expect(existsSync(join(root, "a.txt"))).toBe(false);
    // Contract 1.3: "Never-read files are not warned about in this mode." (ChatCLI)
    expect(result.warnings).toEqual([]);
  });

  it("under policy warn, deletes a file changed since its read and returns a warning", async () => {
    const root = await tempTree({ "b.txt": "beta\n" });
    const ws = workspace(root, { policy: "warn" });
    await ws.read({ file_path: "b.txt" });
    await writeFile(join(root, "b.txt"), "changed\n");
    const result = await ws.delete({ file_path: "b.txt" });
    expect(existsSync(join(root, "b.txt"))).toBe(false);
    expect(result.warnings.join("\n")).toContain("changed on disk");
    expect(result.text).toContain("changed on disk");
  });

  it("deletes through a symlinked directory inside the root, after a read under the real name", async () => {
    const root = await tempTree({ "real/a.txt": "alpha\n" });
    await symlink("real", join(root, "dirlink"));
    const ws = workspace(root);
    await ws.read({ file_path: "real/a.txt" });
    await ws.delete({ file_path: "dirlink/a.txt" });
    expect(await readdir(join(root, "real"))).toEqual([]);
    expect((await lstat(join(root, "dirlink"))).isSymbolicLink()).toBe(true);
  });

  it("refuses to delete a workspace root itself", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const second = await tempTree({ "b.txt": "b\n" });
    const ws = new Workspace({ roots: [root, second], policy: "warn" });
    for (const path of [root, ".", `${root}/`, join(root, "sub", ".."), second]) {
      const error = await ws.delete({ file_path: path }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error, path).toBeInstanceOf(FreshfsError);
    }
    expect(await readdir(root)).toEqual(["a.txt"]);
    expect(await readdir(second)).toEqual(["b.txt"]);
  });
});

describe("rename", () => {
  it("moves a file without a read", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const result = await workspace(root).rename({ from: "a.txt", to: "b.txt" });
    expect(result).toMatchObject({
      from: join(root, "a.txt"),
      to: join(root, "b.txt"),
      overwrote: false,
      warnings: [],
      text: "Renamed a.txt to b.txt.",
    });
    expect(await readdir(root)).toEqual(["b.txt"]);
    expect(await text(join(root, "b.txt"))).toBe("alpha\n");
  });

  it("keeps the file's mode and identity (a move, not a copy)", async () => {
    const root = await tempTree({ "run.sh": "#!/bin/sh\n" });
    await chmod(join(root, "run.sh"), 0o751);
    const before = await lstat(join(root, "run.sh"));
    await workspace(root).rename({ from: "run.sh", to: "bin/run.sh" });
    const after = await lstat(join(root, "bin", "run.sh"));
    expect(after.mode & 0o7777).toBe(0o751);
    expect(after.ino).toBe(before.ino);
    expect(after.nlink).toBe(1);
  });

  it("carries a fresh read to the new name: an edit there needs no new read", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const ws = workspace(root);
    await ws.read({ file_path: "a.txt" });
    await ws.rename({ from: "a.txt", to: "moved/b.txt" });
    expect(ws.tracker.latest(join(root, "a.txt"))).toBeUndefined();
    const edit = await ws.edit({ file_path: "moved/b.txt", old_string: "alpha", new_string: "A" });
    expect(edit.warnings).toEqual([]);
    expect(await text(join(root, "moved", "b.txt"))).toBe("A\n");
  });

  it("carries nothing for a file never read, or changed since its read", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "c.txt": "gamma\n" });
    const ws = workspace(root);
    await ws.rename({ from: "a.txt", to: "b.txt" });
    await rejectsWith(
      ws.edit({ file_path: "b.txt", old_string: "alpha", new_string: "A" }),
      "NOT_READ",
    );
    await ws.read({ file_path: "c.txt" });
    await writeFile(join(root, "c.txt"), "changed\n");
    await ws.rename({ from: "c.txt", to: "d.txt" });
    const error = await ws.write({ file_path: "d.txt", content: "lost?\n" }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(FreshfsError);
    expect(["NOT_READ", "STALE"]).toContain((error as FreshfsError).code);
    expect(await text(join(root, "d.txt"))).toBe("changed\n");
  });

  it("refuses an existing target with ALREADY_EXISTS and leaves both files alone", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    const ws = workspace(root);
    await ws.read({ file_path: "b.txt" });
    const message = await rejectsWith(ws.rename({ from: "a.txt", to: "b.txt" }), "ALREADY_EXISTS");
    expect(message).toContain("b.txt");
    expect(message).toContain("overwrite");
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
    expect(await text(join(root, "b.txt"))).toBe("beta\n");
    await rejectsWith(
      ws.rename({ from: "a.txt", to: "b.txt", overwrite: false }),
      "ALREADY_EXISTS",
    );
    await rejectsWith(
      ws.rename({ from: "a.txt", to: "b.txt", overwrite: "false" }),
      "ALREADY_EXISTS",
    );
    expect(await readdir(root)).toEqual(["a.txt", "b.txt"]);
  });

  it("refuses an existing target that is a directory or a link too", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "dir/x.txt": "x\n", "t.txt": "t\n" });
    await symlink("t.txt", join(root, "link"));
    const ws = workspace(root);
    await rejectsWith(ws.rename({ from: "a.txt", to: "dir" }), "ALREADY_EXISTS");
    await rejectsWith(ws.rename({ from: "a.txt", to: "link" }), "ALREADY_EXISTS");
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
    expect(await readlink(join(root, "link"))).toBe("t.txt");
    expect(await text(join(root, "dir", "x.txt"))).toBe("x\n");
  });

  it("with overwrite: true refuses a target never read (NOT_READ), both files untouched", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    const message = await rejectsWith(
      workspace(root).rename({ from: "a.txt", to: "b.txt", overwrite: true }),
      "NOT_READ",
    );
    expect(message).toContain("b.txt");
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
    expect(await text(join(root, "b.txt"))).toBe("beta\n");
  });

  it("with overwrite: true refuses a target changed since its read (STALE)", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    const ws = workspace(root);
    await ws.read({ file_path: "b.txt" });
    await writeFile(join(root, "b.txt"), "beta, changed\n");
    await rejectsWith(ws.rename({ from: "a.txt", to: "b.txt", overwrite: true }), "STALE");
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
    expect(await text(join(root, "b.txt"))).toBe("beta, changed\n");
  });

  it.each([true, "true"] as const)(
    "with overwrite: %j replaces a target read fresh",
    async (overwrite) => {
      const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
      const ws = workspace(root);
      await ws.read({ file_path: "b.txt" });
      const result = await ws.rename({ from: "a.txt", to: "b.txt", overwrite });
      expect(result.overwrote).toBe(true);
      expect(result.text).toContain("replacing");
      expect(await readdir(root)).toEqual(["b.txt"]);
      expect(await text(join(root, "b.txt"))).toBe("alpha\n");
      // The read was of the old b.txt: it does not vouch for the bytes now there.
      await rejectsWith(
        ws.edit({ file_path: "b.txt", old_string: "alpha", new_string: "A" }),
        "NOT_READ",
      );
    },
  );

  it("with overwrite: true and policy warn replaces an unread target (never read: no warning)", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    const ws = workspace(root, { policy: "warn" });
    const result = await ws.rename({ from: "a.txt", to: "b.txt", overwrite: true });
    expect(result.overwrote).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(await text(join(root, "b.txt"))).toBe("alpha\n");
  });

  it("creates the parent directories of to", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    await workspace(root).rename({ from: "a.txt", to: "x/y/z/a.txt" });
    expect(await text(join(root, "x", "y", "z", "a.txt"))).toBe("alpha\n");
    expect(existsSync(join(root, "a.txt"))).toBe(false);
  });

  it("renames a directory with its contents", async () => {
    const root = await tempTree({ "old/a.txt": "a\n", "old/deep/b.txt": "b\n" });
    const ws = workspace(root);
    expect([...(await ws.glob({ pattern: "**/*.txt" })).files].sort()).toEqual([
      "old/a.txt",
      "old/deep/b.txt",
    ]);
    await ws.rename({ from: "old", to: "parent/new" });
    expect(existsSync(join(root, "old"))).toBe(false);
    expect(await text(join(root, "parent", "new", "a.txt"))).toBe("a\n");
    expect(await text(join(root, "parent", "new", "deep", "b.txt"))).toBe("b\n");
    expect([...(await ws.glob({ pattern: "**/*.txt" })).files].sort()).toEqual([
      "parent/new/a.txt",
      "parent/new/deep/b.txt",
    ]);
  });

  it("moves a symlink itself, leaving its target in place", async () => {
    const root = await tempTree({ "target.txt": "kept\n" });
    await symlink("target.txt", join(root, "link.txt"));
    await workspace(root).rename({ from: "link.txt", to: "moved.txt" });
    expect((await lstat(join(root, "moved.txt"))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(root, "moved.txt"))).toBe("target.txt");
    expect(existsSync(join(root, "link.txt"))).toBe(false);
    expect((await lstat(join(root, "target.txt"))).isFile()).toBe(true);
    expect(await text(join(root, "target.txt"))).toBe("kept\n");
  });

  it("moving a link does not make the guard forget its target's read", async () => {
    const root = await tempTree({ "target.txt": "kept\n" });
    await symlink("target.txt", join(root, "link.txt"));
    const ws = workspace(root);
    await ws.read({ file_path: "link.txt" });
    await ws.rename({ from: "link.txt", to: "moved.txt" });
    await ws.edit({ file_path: "target.txt", old_string: "kept", new_string: "edited" });
    expect(await text(join(root, "target.txt"))).toBe("edited\n");
    expect(await readlink(join(root, "moved.txt"))).toBe("target.txt");
  });

  it("with overwrite: true replaces a link at to, not the link's target", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "t.txt": "t\n" });
    await symlink("t.txt", join(root, "link"));
    const result = await workspace(root).rename({ from: "a.txt", to: "link", overwrite: true });
    expect(result.overwrote).toBe(true);
    expect((await lstat(join(root, "link"))).isFile()).toBe(true);
    expect(await text(join(root, "link"))).toBe("alpha\n");
    expect(await text(join(root, "t.txt"))).toBe("t\n");
  });

  it("with overwrite: true refuses a directory at to with NOT_A_FILE", async () => {
    const root = await tempTree({ "a.txt": "alpha\n", "dir/x.txt": "x\n" });
    await rejectsWith(
      workspace(root).rename({ from: "a.txt", to: "dir", overwrite: true }),
      "NOT_A_FILE",
    );
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
    expect(await text(join(root, "dir", "x.txt"))).toBe("x\n");
  });

  it("refuses to move a directory into itself with INVALID_ARGUMENT, creating nothing", async () => {
    const root = await tempTree({ "dir/x.txt": "x\n" });
    await rejectsWith(
      workspace(root).rename({ from: "dir", to: "dir/sub/inner" }),
      "INVALID_ARGUMENT",
    );
    expect(await readdir(join(root, "dir"))).toEqual(["x.txt"]);
  });

  it.each([
    ["source / destination", { source: "a.txt", destination: "b.txt" }],
    ["oldPath / newPath", { oldPath: "a.txt", newPath: "b.txt" }],
    ["old_path / new_path", { old_path: "a.txt", new_path: "b.txt" }],
  ])("accepts the aliases %s", async (_name, params) => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const result = await workspace(root).rename(params);
    expect(result.to).toBe(join(root, "b.txt"));
    expect(await readdir(root)).toEqual(["b.txt"]);
  });

  it("refuses from == to with INVALID_ARGUMENT, however spelled", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const ws = workspace(root);
    for (const to of ["a.txt", "./a.txt", join(root, "a.txt"), "sub/../a.txt"]) {
      await rejectsWith(ws.rename({ from: "a.txt", to }), "INVALID_ARGUMENT");
      await rejectsWith(ws.rename({ from: "a.txt", to, overwrite: true }), "INVALID_ARGUMENT");
    }
    expect(await text(join(root, "a.txt"))).toBe("alpha\n");
  });

  it("refuses a missing source with NOT_FOUND and creates nothing", async () => {
    const root = await tempTree({});
    const message = await rejectsWith(
      workspace(root).rename({ from: "missing.txt", to: "new/b.txt" }),
      "NOT_FOUND",
    );
    expect(message).toContain("missing.txt");
    expect(await readdir(root)).toEqual([]);
  });

  it("refuses missing or empty from / to with INVALID_ARGUMENT", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const ws = workspace(root);
    await rejectsWith(ws.rename({ from: "a.txt" }), "INVALID_ARGUMENT");
    await rejectsWith(ws.rename({ to: "b.txt" }), "INVALID_ARGUMENT");
    await rejectsWith(ws.rename({ from: "a.txt", to: "" }), "INVALID_ARGUMENT");
    await rejectsWith(
      ws.rename({ from: "a.txt", to: "b.txt", overwrite: "yes" }),
      "INVALID_ARGUMENT",
    );
    expect(await readdir(root)).toEqual(["a.txt"]);
  });

  it("refuses to move a workspace root", async () => {
    const root = await tempTree({ "a.txt": "a\n" });
    const error = await workspace(root)
      .rename({ from: ".", to: "inner" })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(FreshfsError);
    expect(await readdir(root)).toEqual(["a.txt"]);
  });

  it("is seen by glob with the cache on right after: new name listed, old name gone", async () => {
    const root = await tempTree({ "src/a.ts": "x\n", "lib/keep.ts": "y\n" });
    // Unwatched (the TTL policy): only the invalidations after the rename can make it seen.
    const ws = workspace(root, { watch: false });
    // Warm listings of the whole root and of each side's directory.
    expect([...(await ws.glob({ pattern: "**/*.ts" })).files].sort()).toEqual([
      "lib/keep.ts",
      "src/a.ts",
    ]);
    expect((await ws.glob({ pattern: "*.ts", path: "src" })).files).toEqual(["src/a.ts"]);
    expect((await ws.glob({ pattern: "*.ts", path: "lib" })).files).toEqual(["lib/keep.ts"]);
    // The listings are cached: a file made behind their back is not seen.
    await writeFile(join(root, "lib", "behind.ts"), "");
    expect((await ws.glob({ pattern: "*.ts", path: "lib" })).files).toEqual(["lib/keep.ts"]);

    await ws.rename({ from: "src/a.ts", to: "lib/b.ts" });
    expect([...(await ws.glob({ pattern: "**/*.ts" })).files].sort()).toEqual([
      "lib/b.ts",
      "lib/behind.ts",
      "lib/keep.ts",
    ]);
    expect((await ws.glob({ pattern: "*.ts", path: "src" })).files).toEqual([]);
    expect([...(await ws.glob({ pattern: "*.ts", path: "lib" })).files].sort()).toEqual([
      "lib/b.ts",
      "lib/behind.ts",
      "lib/keep.ts",
    ]);
    expect((await ws.grep({ pattern: "x", path: "lib" })).files).toEqual(["lib/b.ts"]);
    expect((await ws.find({ query: "a.ts", path: "src" })).matches).toEqual([]);
  });

  it("race: of many renames onto one new name, exactly one wins and no content is lost", async () => {
    const count = 12;
    const tree: Record<string, string> = {};
    for (let i = 0; i < count; i++) tree[`s${i}.txt`] = `source ${i}\n`;
    const root = await tempTree(tree);
    const ws = workspace(root);
    const settled = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => ws.rename({ from: `s${i}.txt`, to: "target.txt" })),
    );
    const winners = settled.flatMap((s, i) => (s.status === "fulfilled" ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const s of settled) {
      if (s.status === "rejected") {
        expect(s.reason).toBeInstanceOf(FreshfsError);
        expect((s.reason as FreshfsError).code).toBe("ALREADY_EXISTS");
      }
    }
    const winner = winners[0] as number;
    expect(await text(join(root, "target.txt"))).toBe(`source ${winner}\n`);
    for (let i = 0; i < count; i++) {
      if (i === winner) expect(existsSync(join(root, `s${i}.txt`))).toBe(false);
      else expect(await text(join(root, `s${i}.txt`))).toBe(`source ${i}\n`);
    }
    expect((await readdir(root)).length).toBe(count);
  });

  it("race: one source renamed to many names at once lands in exactly one", async () => {
    const root = await tempTree({ "a.txt": "alpha\n" });
    const ws = workspace(root);
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => ws.rename({ from: "a.txt", to: `t${i}.txt` })),
    );
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    for (const s of settled) {
      if (s.status === "rejected") expect((s.reason as FreshfsError).code).toBe("NOT_FOUND");
    }
    const names = await readdir(root);
    expect(names).toHaveLength(1);
    expect(await text(join(root, names[0] as string))).toBe("alpha\n");
  });

  it("race: two workspaces (separate locks) renaming onto one name still let exactly one win", async () => {
    const root = await tempTree({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "d.txt": "d\n" });
    const spaces = [workspace(root), workspace(root), workspace(root), workspace(root)];
    const settled = await Promise.allSettled(
      ["a", "b", "c", "d"].map((name, i) =>
        (spaces[i] as Workspace).rename({ from: `${name}.txt`, to: "t.txt" }),
      ),
    );
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    const all = await readdir(root);
    expect(all).toContain("t.txt");
    expect(all).toHaveLength(4);
    const contents = await Promise.all(all.map((name) => text(join(root, name))));
    expect(contents.sort()).toEqual(["a\n", "b\n", "c\n", "d\n"]);
  });

  it("race: processes (no shared lock) renaming onto one name let exactly one win", async () => {
    const count = 6;
    const tree: Record<string, string> = {};
    for (let i = 0; i < count; i++) tree[`p${i}.txt`] = `process ${i}\n`;
    const root = await tempTree(tree);
    // The start signal lives outside the root, so the root holds only the files raced over.
    const go = join(await tempTree(), "go");
    const runs = Array.from({ length: count }, (_, i) =>
      runNode(
        [
          `import { spawn } from "node:child_process";
import { existsSync } from "node:fs";`,
          `const { Workspace } = await import(${JSON.stringify(DIST)});`,
          `const ws = new Workspace({ roots: ${JSON.stringify(root)} });`,
          `while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setImmediate(r));`,
          `try { await ws.rename({ from: "p${i}.txt", to: "target.txt" }); console.log("ok"); }`,
          `catch (e) { console.log(e.code); }`,
        ].join("\n"),
      ),
    );
    await writeFile(go, "");
    const outputs = await Promise.all(runs);
    expect(outputs.filter((o) => o === "ok")).toHaveLength(1);
    expect(outputs.filter((o) => o === "ALREADY_EXISTS")).toHaveLength(count - 1);
    const names = await readdir(root);
    expect(names).toHaveLength(count);
    const contents = await Promise.all(names.map((name) => text(join(root, name))));
    expect(contents.sort()).toEqual(Array.from({ length: count }, (_, i) => `process ${i}\n`));
  });

  it("moves a file into a new directory of a second root", async () => {
    const first = await tempTree({ "a.txt": "alpha\n" });
    const second = await tempTree({});
    const ws = new Workspace({ roots: [first, second] });
    const result = await ws.rename({ from: "a.txt", to: join(second, "sub", "a.txt") });
    expect(result.to).toBe(join(second, "sub", "a.txt"));
    expect(await text(join(second, "sub", "a.txt"))).toBe("alpha\n");
    expect(await readdir(first)).toEqual([]);
  });
});

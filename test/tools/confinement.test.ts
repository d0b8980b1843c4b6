/**
 * Confinement of every `Workspace` tool that takes a path: escapes by `..`, absolute paths, a
 * sibling sharing the root's prefix, symlinks at any depth, `link/..` as the kernel resolves it,
 * NUL bytes and dangling links are refused with OUTSIDE_ROOT and change nothing; paths inside the
 * roots keep working.
 */
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configureScanCache, invalidateFsScanCache, Workspace } from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

afterEach(() => configureScanCache(undefined));

/**
 * `<parent>/ws` is the root; `<parent>/outside` and `<parent>/ws-evil` (sharing the root's
 * prefix) are not. The root holds links out of it.
 */
async function layout(): Promise<{ parent: string; root: string }> {
  const parent = await tempTree({
    "ws/a.txt": "inside\n",
    "ws/sub/keep.txt": "keep\n",
    "outside/secret.txt": "secret\n",
    "outside/deep/x.txt": "secret x\n",
    "ws-evil/secret.txt": "evil secret\n",
  });
  const root = join(parent, "ws");
  const outside = join(parent, "outside");
  await symlink(join(outside, "secret.txt"), join(root, "link-file"));
  await symlink(outside, join(root, "link-dir"));
  await mkdir(join(root, "a", "b", "c"), { recursive: true });
  await symlink(outside, join(root, "a", "b", "c", "out"));
  await symlink("../../../../outside/secret.txt", join(root, "a", "b", "c", "out-file"));
  await symlink(join(outside, "deep"), join(root, "inlink"));
  await symlink(join(outside, "ghost.txt"), join(root, "dangling"));
  await symlink(join(outside, "ghost-dir", "ghost.txt"), join(root, "dangling-deep"));
  await symlink("../ws-evil/secret.txt", join(root, "evil-link"));
  await symlink("../ws-evil", join(root, "evil-dir"));
  return { parent, root };
}

/** Every entry under `dir` (links not followed): type, bytes, mode, link target. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string, rel: string): Promise<void> => {
    const stats = await lstat(path);
    const mode = (stats.mode & 0o7777).toString(8);
    if (stats.isSymbolicLink()) {
      out[rel] = `link -> ${await readlink(path)}`;
    } else if (stats.isDirectory()) {
      out[rel] = `dir ${mode}`;
      for (const name of (await readdir(path)).sort()) {
        await walk(join(path, name), rel === "" ? name : `${rel}/${name}`);
      }
    } else {
      out[rel] = `file ${mode} ${(await readFile(path)).toString("base64")}`;
    }
  };
  await walk(dir, "");
  return out;
}

type Escape = readonly [name: string, path: (parent: string) => string];

const ESCAPES: readonly Escape[] = [
  ["`..` to an outside file", () => "../outside/secret.txt"],
  ["`..` to a new outside file", () => "../outside/new.txt"],
  ["`..` after a subdirectory", () => "sub/../../outside/secret.txt"],
  ["`..` to the parent directory", () => ".."],
  ["`..` to an outside directory", () => "../outside"],
  ["an absolute outside file", (p) => join(p, "outside", "secret.txt")],
  ["an absolute new outside file", (p) => join(p, "outside", "made", "new.txt")],
  ["an absolute outside directory", (p) => join(p, "outside")],
  [
    "an absolute path in ws-evil (the root's name as prefix)",
    (p) => join(p, "ws-evil", "secret.txt"),
  ],
  ["a new file in ws-evil", () => "../ws-evil/new.txt"],
  ["the ws-evil directory", (p) => join(p, "ws-evil")],
  ["a symlink to an outside file", () => "link-file"],
  ["a symlink to an outside directory", () => "link-dir"],
  ["a file under a symlink to an outside directory", () => "link-dir/secret.txt"],
  ["a new file under a symlink to an outside directory", () => "link-dir/new.txt"],
  ["a new nested file under a symlink to an outside directory", () => "link-dir/made/new.txt"],
  ["a symlink at depth 3 to an outside directory", () => "a/b/c/out"],
  ["a file under a symlink at depth 3", () => "a/b/c/out/secret.txt"],
  ["a new file under a symlink at depth 3", () => "a/b/c/out/new.txt"],
  ["a relative symlink at depth 3 to an outside file", () => "a/b/c/out-file"],
  ["an absolute path through an outside link", (p) => join(p, "ws", "link-dir", "secret.txt")],
  ["`link/..` (the kernel's parent of the link's target)", () => "inlink/../secret.txt"],
  ["`link/..` to a new file", () => "inlink/../new.txt"],
  ["`link/..` alone", () => "inlink/.."],
  ["a relative symlink into ws-evil", () => "evil-link"],
  ["a new file under a relative symlink into ws-evil", () => "evil-dir/new.txt"],
  ["a dangling symlink pointing outside", () => "dangling"],
  ["a dangling symlink pointing into a missing outside directory", () => "dangling-deep"],
  ["a new file under a dangling symlink pointing outside", () => "dangling-deep/new.txt"],
  ["a NUL byte", () => "a.txt\0"],
  ["a NUL byte before `..`", () => "a.txt\0/../../outside/secret.txt"],
  ["a NUL byte in an absolute path", (p) => `${join(p, "ws", "a.txt")}\0.bak`],
];

type Run = (ws: Workspace, path: string) => Promise<unknown>;

const TOOLS: readonly (readonly [name: string, run: Run])[] = [
  ["read", (ws, path) => ws.read({ file_path: path })],
  ["write", (ws, path) => ws.write({ file_path: path, content: "pwned\n" })],
  ["edit", (ws, path) => ws.edit({ file_path: path, old_string: "secret", new_string: "pwned" })],
  [
    "edit (create with an empty old_string)",
    (ws, path) => ws.edit({ file_path: path, old_string: "", new_string: "pwned\n" }),
  ],
  [
    "multiEdit",
    (ws, path) =>
      ws.multiEdit({ file_path: path, edits: [{ old_string: "secret", new_string: "pwned" }] }),
  ],
  ["delete", (ws, path) => ws.delete({ file_path: path })],
  ["rename from", (ws, path) => ws.rename({ from: path, to: "moved-in.txt" })],
  ["rename to", (ws, path) => ws.rename({ from: "a.txt", to: path })],
  ["rename to (overwrite)", (ws, path) => ws.rename({ from: "a.txt", to: path, overwrite: true })],
  ["glob path", (ws, path) => ws.glob({ pattern: "**/*", path })],
  ["grep path", (ws, path) => ws.grep({ pattern: "secret", path })],
  ["find path", (ws, path) => ws.find({ query: "secret", path })],
];

describe.each(TOOLS)("%s refuses escapes with OUTSIDE_ROOT, changing nothing", (_tool, run) => {
  it.each(ESCAPES)("%s", async (_name, pathOf) => {
    const { parent, root } = await layout();
    // Under warn the guard never refuses: confinement alone has to.
    const ws = new Workspace({ roots: root, policy: "warn" });
    const before = await snapshot(parent);
    await rejectsWith(run(ws, pathOf(parent)), "OUTSIDE_ROOT");
    expect(await snapshot(parent)).toEqual(before);
  });
});

describe("escapes in detail", () => {
  it("a write through a dangling link pointing outside creates no outside file", async () => {
    const { parent, root } = await layout();
    const ws = new Workspace({ roots: root, policy: "warn" });
    await rejectsWith(ws.write({ file_path: "dangling", content: "x\n" }), "OUTSIDE_ROOT");
    await rejectsWith(ws.write({ file_path: "dangling-deep", content: "x\n" }), "OUTSIDE_ROOT");
    expect(existsSync(join(parent, "outside", "ghost.txt"))).toBe(false);
    expect(existsSync(join(parent, "outside", "ghost-dir"))).toBe(false);
    expect((await lstat(join(root, "dangling"))).isSymbolicLink()).toBe(true);
  });

  it("the refusal names the path and the roots, for the model", async () => {
    const { parent, root } = await layout();
    const ws = new Workspace({ roots: root });
    const message = await rejectsWith(
      ws.read({ file_path: "link-dir/secret.txt" }),
      "OUTSIDE_ROOT",
    );
    expect(message).toContain("link-dir/secret.txt");
    expect(message).toContain("outside the workspace");
    expect(message).toContain(root);
    expect(message).not.toContain("secret\n");
    const nul = await rejectsWith(ws.write({ file_path: "a.txt\0", content: "x" }), "OUTSIDE_ROOT");
    expect(nul).toContain("NUL");
    expect(existsSync(join(parent, "outside", "new.txt"))).toBe(false);
  });

  it("a strict workspace whose guard saw the outside file still refuses it", async () => {
    const { parent, root } = await layout();
    const ws = new Workspace({ roots: root });
    // A read recorded by the host (a shell `cat`, say) does not widen the roots.
    await ws.tracker.recordRead(join(parent, "outside", "secret.txt"));
    const before = await snapshot(parent);
    await rejectsWith(
      ws.write({ file_path: "../outside/secret.txt", content: "pwned\n" }),
      "OUTSIDE_ROOT",
    );
    await rejectsWith(ws.delete({ file_path: "link-file" }), "OUTSIDE_ROOT");
    await rejectsWith(
      ws.edit({ file_path: "link-dir/secret.txt", old_string: "secret", new_string: "x" }),
      "OUTSIDE_ROOT",
    );
    expect(await snapshot(parent)).toEqual(before);
  });

  it("a symlinked root does not let `..` out of its link's directory", async () => {
    const { parent, root } = await layout();
    await symlink(root, join(parent, "ws-link"));
    const ws = new Workspace({ roots: join(parent, "ws-link"), policy: "warn" });
    const before = await snapshot(parent);
    for (const path of [
      join(parent, "ws-link", "..", "outside", "secret.txt"),
      join(parent, "ws-link", "link-dir", "secret.txt"),
      "../outside/secret.txt",
      join(parent, "outside", "secret.txt"),
    ]) {
      await rejectsWith(ws.write({ file_path: path, content: "pwned\n" }), "OUTSIDE_ROOT");
      await rejectsWith(ws.read({ file_path: path }), "OUTSIDE_ROOT");
    }
    expect(await snapshot(parent)).toEqual(before);
  });

  it("glob, grep and find reach nothing outside through patterns or links in the root", async () => {
    const { parent, root } = await layout();
    const ws = new Workspace({ roots: root });
    for (const pattern of ["../outside/*", join(parent, "outside", "*"), "**/secret.txt", "**/*"]) {
      const files = (await ws.glob({ pattern })).files;
      expect(
        files.filter((f) => f.includes("secret")),
        pattern,
      ).toEqual([]);
    }
    expect((await ws.grep({ pattern: "secret" })).files).toEqual([]);
    expect((await ws.grep({ pattern: "secret", glob: "../outside/*" })).files).toEqual([]);
    expect((await ws.grep({ pattern: "secret", output_mode: "content" })).lines).toEqual([]);
    expect((await ws.find({ query: "secret" })).matches.map((m) => m.path)).toEqual([]);
  });

  it("with two roots, a path in neither is refused", async () => {
    const { parent, root } = await layout();
    const second = await tempTree({ "b.txt": "b\n" });
    const ws = new Workspace({ roots: [root, second], policy: "warn" });
    const before = await snapshot(parent);
    for (const path of [
      join(parent, "outside", "secret.txt"),
      `${second}-evil/x.txt`,
      join(second, "..", "x.txt"),
      "../outside/new.txt",
    ]) {
      await rejectsWith(ws.write({ file_path: path, content: "pwned\n" }), "OUTSIDE_ROOT");
    }
    expect(await snapshot(parent)).toEqual(before);
    expect(existsSync(`${second}-evil`)).toBe(false);
    expect(await readdir(second)).toEqual(["b.txt"]);
  });
});

describe("paths inside the roots", () => {
  it("resolves relative paths against the first root", async () => {
    const first = await tempTree({ "a.txt": "first\n" });
    const second = await tempTree({ "a.txt": "second\n" });
    const ws = new Workspace({ roots: [first, second] });
    const read = await ws.read({ file_path: "a.txt" });
    expect(read.path).toBe(join(first, "a.txt"));
    expect(read.lines).toEqual(["first"]);
    const created = await ws.write({ file_path: "dir/new.txt", content: "n\n" });
    expect(created.path).toBe(join(first, "dir", "new.txt"));
    expect(await readFile(join(first, "dir", "new.txt"), "utf8")).toBe("n\n");
    expect(existsSync(join(second, "dir"))).toBe(false);
    await ws.edit({ file_path: "a.txt", old_string: "first", new_string: "FIRST" });
    expect(await readFile(join(first, "a.txt"), "utf8")).toBe("FIRST\n");
    expect(await readFile(join(second, "a.txt"), "utf8")).toBe("second\n");
  });

  it("works in a second root with absolute paths, for every tool", async () => {
    const first = await tempTree({ "a.txt": "first\n" });
    const second = await tempTree({ "b.txt": "beta\n", "c.txt": "gamma\n" });
    const ws = new Workspace({ roots: [first, second] });
    const b = join(second, "b.txt");
    expect((await ws.read({ file_path: b })).lines).toEqual(["beta"]);
    await ws.edit({ file_path: b, old_string: "beta", new_string: "BETA" });
    await ws.multiEdit({ file_path: b, edits: [{ old_string: "BETA", new_string: "Beta" }] });
    await ws.write({ file_path: b, content: "bee\n" });
    expect(await readFile(b, "utf8")).toBe("bee\n");
    await ws.write({ file_path: join(second, "new", "d.txt"), content: "delta\n" });
    expect(await readFile(join(second, "new", "d.txt"), "utf8")).toBe("delta\n");
    await ws.rename({ from: join(second, "c.txt"), to: join(second, "moved.txt") });
    expect(await readFile(join(second, "moved.txt"), "utf8")).toBe("gamma\n");
    expect((await ws.glob({ pattern: "**/*.txt", path: second })).files).toEqual(
      expect.arrayContaining([b, join(second, "moved.txt"), join(second, "new", "d.txt")]),
    );
    expect((await ws.grep({ pattern: "gamma", path: second })).files).toEqual([
      join(second, "moved.txt"),
    ]);
    expect((await ws.find({ query: "moved", path: second })).matches[0]?.path).toBe(
      join(second, "moved.txt"),
    );
    await ws.delete({ file_path: b });
    expect(existsSync(b)).toBe(false);
    expect(await readdir(first)).toEqual(["a.txt"]);
  });

  it("moves a file from the first root to the second", async () => {
    const first = await tempTree({ "a.txt": "alpha\n" });
    const second = await tempTree({});
    const ws = new Workspace({ roots: [first, second] });
    await ws.rename({ from: "a.txt", to: join(second, "a.txt") });
    expect(await readFile(join(second, "a.txt"), "utf8")).toBe("alpha\n");
    expect(await readdir(first)).toEqual([]);
  });

  it("follows a symlink in the first root that lands in the second root", async () => {
    const first = await tempTree({});
    const second = await tempTree({ "b.txt": "beta\n" });
    await symlink(join(second, "b.txt"), join(first, "to-second"));
    const ws = new Workspace({ roots: [first, second] });
    await ws.read({ file_path: "to-second" });
    await ws.edit({ file_path: "to-second", old_string: "beta", new_string: "BETA" });
    expect(await readFile(join(second, "b.txt"), "utf8")).toBe("BETA\n");
    expect((await lstat(join(first, "to-second"))).isSymbolicLink()).toBe(true);
  });

  it("follows symlinks that point to another place inside the root", async () => {
    const root = await tempTree({ "real/target.txt": "target\n", "real/other.txt": "other\n" });
    await symlink("real/target.txt", join(root, "alias.txt"));
    await symlink(join(root, "real"), join(root, "dirlink"));
    await mkdir(join(root, "x", "y", "z"), { recursive: true });
    await symlink("../../../real", join(root, "x", "y", "z", "up"));
    const ws = new Workspace({ roots: root });

    expect((await ws.read({ file_path: "alias.txt" })).lines).toEqual(["target"]);
    await ws.edit({ file_path: "alias.txt", old_string: "target", new_string: "edited" });
    expect(await readFile(join(root, "real", "target.txt"), "utf8")).toBe("edited\n");
    expect((await lstat(join(root, "alias.txt"))).isSymbolicLink()).toBe(true);

    await ws.write({ file_path: "dirlink/new.txt", content: "new\n" });
    expect(await readFile(join(root, "real", "new.txt"), "utf8")).toBe("new\n");
    expect((await ws.read({ file_path: "x/y/z/up/other.txt" })).lines).toEqual(["other"]);
    // `link/..` inside the root: the kernel's answer is the parent of real/, the root.
    expect((await ws.read({ file_path: "dirlink/../real/other.txt" })).lines).toEqual(["other"]);

    expect((await ws.glob({ pattern: "*.txt", path: "dirlink" })).files.length).toBe(3);
    expect((await ws.grep({ pattern: "other", path: "x/y/z/up" })).files.length).toBe(1);
    await ws.rename({ from: "dirlink/new.txt", to: "x/y/z/up/renamed.txt" });
    expect(await readFile(join(root, "real", "renamed.txt"), "utf8")).toBe("new\n");
    await ws.delete({ file_path: "alias.txt" });
    expect(existsSync(join(root, "alias.txt"))).toBe(false);
    expect(await readFile(join(root, "real", "target.txt"), "utf8")).toBe("edited\n");
  });

  it("takes a root given through a symlinked path", async () => {
    const parent = await tempTree({ "ws/a.txt": "alpha\n" });
    const real = join(parent, "ws");
    const link = join(parent, "ws-link");
    await symlink(real, link);
    const ws = new Workspace({ roots: link });
    expect(ws.roots).toEqual([real]);

    expect((await ws.read({ file_path: "a.txt" })).lines).toEqual(["alpha"]);
    await ws.edit({ file_path: join(link, "a.txt"), old_string: "alpha", new_string: "A" });
    expect(await readFile(join(real, "a.txt"), "utf8")).toBe("A\n");
    await ws.write({ file_path: "rel.txt", content: "r\n" });
    await ws.write({ file_path: join(link, "via-link.txt"), content: "l\n" });
    await ws.write({ file_path: join(real, "via-real.txt"), content: "v\n" });
    expect((await readdir(real)).sort()).toEqual([
      "a.txt",
      "rel.txt",
      "via-link.txt",
      "via-real.txt",
    ]);
    expect([...(await ws.glob({ pattern: "*.txt" })).files].sort()).toEqual([
      "a.txt",
      "rel.txt",
      "via-link.txt",
      "via-real.txt",
    ]);
    expect((await ws.grep({ pattern: "^v$" })).files).toEqual(["via-real.txt"]);
    await ws.rename({ from: join(link, "rel.txt"), to: join(real, "renamed.txt") });
    await ws.read({ file_path: join(real, "via-link.txt") });
    await ws.delete({ file_path: join(link, "via-link.txt") });
    expect((await readdir(real)).sort()).toEqual(["a.txt", "renamed.txt", "via-real.txt"]);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
  });

  it("keeps a file written into the root (a control for the escape table)", async () => {
    const { parent, root } = await layout();
    const ws = new Workspace({ roots: root, policy: "warn" });
    const before = await snapshot(parent);
    await ws.write({ file_path: "sub/inside.txt", content: "ok\n" });
    const after = await snapshot(parent);
    expect(after).not.toEqual(before);
    expect(Object.keys(after).filter((k) => !(k in before))).toEqual(["ws/sub/inside.txt"]);
  });
});

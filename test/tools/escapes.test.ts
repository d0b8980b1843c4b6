/**
 * Escapes: the table of stress/escapes.ts (at least 50 distinct attempts to get out of the root)
 * against read, edit, multiEdit, delete, rename (both sides), glob, grep and find paths, read_many,
 * stat, list, apply_patch (update, delete, both sides of a move, add), write and mkdir; then a
 * directory or link swapped for one pointing out while a call waits for its lock, and right after
 * the guard's check (just before the write). Zero escapes: every attempt is refused, and nothing
 * outside the root changes.
 *
 * test/tools/confinement.test.ts holds the first 32 paths; this table widens them (depths 0..4,
 * chains, look-alike names, long names, encodings) and checks the whole base after each call.
 *
 * Last, grep over a listing taken before a directory or file in it was swapped for a link out: it
 * must not read through the link (the walk never follows one).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  configureScanCache,
  FreshfsError,
  grep,
  invalidateFsScanCache,
  Workspace,
} from "../../src/index.js";
import { grepConfined } from "../../src/search/grep/grep.js";
import {
  buildLayout,
  ESCAPES,
  type Escape,
  type Layout,
  landsInside,
  outsideSnapshot,
  SECRET,
  snapshot,
  TOOL_FORMS,
} from "../../stress/escapes.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { whileLocked } from "../helpers/lock.js";

/** The error a call rejected with, or undefined when it resolved. */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
}

describe("the escape table", () => {
  it("holds at least 50 distinct attempts", () => {
    const layout: Layout = {
      base: "/b",
      root: "/b/app",
      outside: "/b/outside",
      evil: "/b/app-evil",
    };
    const names = new Set(ESCAPES.map((row) => row.name));
    const paths = new Set(ESCAPES.map((row) => row.path(layout)));
    expect(names.size).toBe(ESCAPES.length);
    expect(paths.size).toBe(ESCAPES.length);
    expect(ESCAPES.length).toBeGreaterThanOrEqual(50);
    expect(ESCAPES.filter((row) => row.expect === "OUTSIDE_ROOT").length).toBeGreaterThanOrEqual(
      50,
    );
    expect(TOOL_FORMS.map((form) => form.name)).toEqual([
      "read",
      "edit",
      "multiEdit",
      "delete",
      "rename from",
      "glob path",
      "grep path",
      "find path",
      "read_many",
      "stat",
      "list path",
      "apply_patch update",
      "apply_patch delete",
      "apply_patch move from",
      "write",
      "rename to",
      "mkdir",
      "apply_patch add",
      "apply_patch move to",
    ]);
  });
});

/**
 * One layout per row, every tool form on it in turn (the forms that create come last), the
 * whole base compared before and after each call. Under `warn` the guard never refuses, so
 * confinement alone has to.
 */
describe.each(ESCAPES)("$name", (row: Escape) => {
  let layout: Layout;
  let ws: Workspace;
  beforeAll(async () => {
    layout = buildLayout(await tempTree({}, { lifetime: "file" }));
    ws = new Workspace({ roots: layout.root, policy: "warn" });
  });

  it.each(TOOL_FORMS)("$name", async (form) => {
    if (form.fresh) {
      layout = buildLayout(await tempTree());
      ws = new Workspace({ roots: layout.root, policy: "warn" });
    }
    const path = row.path(layout);
    const before = snapshot(layout.base);
    const beforeOutside = outsideSnapshot(layout);
    if (row.expect !== "harmless") {
      await rejectsWith(form.run(ws, path), row.expect);
      expect(snapshot(layout.base)).toEqual(before);
      return;
    }
    // A name that is only a name on Linux (`%2e%2e`, `~`, a backslash): missing inside the
    // root (NOT_FOUND), or created there by write and rename; outside, nothing changes.
    if (form.harmless === "NOT_FOUND") {
      await rejectsWith(form.run(ws, path), "NOT_FOUND");
      expect(snapshot(layout.base)).toEqual(before);
      return;
    }
    const result = await form.run(ws, path);
    const landed = form.landed?.(result) as string;
    expect(landsInside(landed, layout.root), landed).toBe(true);
    expect(landed.startsWith(`${layout.root}/`)).toBe(true);
    expect(outsideSnapshot(layout)).toEqual(beforeOutside);
  });
});

describe("the layout, as a control", () => {
  it("lets every tool form work on paths inside the root", async () => {
    const layout = buildLayout(await tempTree());
    const ws = new Workspace({ roots: layout.root, policy: "warn" });
    const before = outsideSnapshot(layout);
    expect((await ws.read({ file_path: "a.txt" })).lines).toEqual(["inside"]);
    expect((await ws.read({ file_path: "d1/d2/d3/d4/leaf.txt" })).lines).toEqual(["leaf"]);
    await ws.edit({ file_path: "a.txt", old_string: "inside", new_string: "edited" });
    await ws.multiEdit({ file_path: "a.txt", edits: [{ old_string: "edited", new_string: "e2" }] });
    await ws.write({ file_path: "sub/new.txt", content: "new\n" });
    await ws.rename({ from: "sub/new.txt", to: "d1/moved.txt" });
    await ws.delete({ file_path: "d1/moved.txt" });
    expect((await ws.glob({ pattern: "**/*.txt", path: "d1" })).files).toEqual([
      "d1/d2/d3/d4/leaf.txt",
    ]);
    expect((await ws.grep({ pattern: "leaf", path: "insub" })).files).toHaveLength(1);
    expect((await ws.find({ query: "keep", path: "sub" })).matches[0]?.path).toBe("sub/keep.txt");
    // The links out are in the root, but nothing behind them is ever shown.
    const all = await ws.grep({ pattern: SECRET, output_mode: "content" });
    expect(all.lines).toEqual([]);
    expect(await readFile(join(layout.root, "a.txt"), "utf8")).toBe("e2\n");
    expect(outsideSnapshot(layout)).toEqual(before);
  });

  it("refuses app-evil however the root itself is spelled", async () => {
    const layout = buildLayout(await tempTree());
    const before = snapshot(layout.base);
    for (const spelling of [`${layout.root}/`, `${layout.root}/.`, `${layout.root}/sub/..`]) {
      const ws = new Workspace({ roots: spelling, policy: "warn" });
      expect(ws.roots).toEqual([layout.root]);
      for (const path of [join(layout.evil, "secret.txt"), "../app-evil/new.txt"]) {
        await rejectsWith(ws.write({ file_path: path, content: "pwned\n" }), "OUTSIDE_ROOT");
        await rejectsWith(ws.read({ file_path: path }), "OUTSIDE_ROOT");
      }
    }
    expect(snapshot(layout.base)).toEqual(before);
  });
});

/**
 * `<base>/root/sub/f.txt` and `<base>/root/dst/` inside, `<base>/outside/f.txt` and
 * `<base>/outside/new.txt`'s directory outside; `swap(dir)` moves `root/<dir>` aside and puts a
 * link to `outside` in its place, as another process could.
 */
async function swapLayout(policy: "strict" | "warn") {
  const base = await tempTree({
    "root/sub/f.txt": "inside\n",
    "root/dst/keep.txt": "keep\n",
    "root/other.txt": "other\n",
    "outside/f.txt": `${SECRET}\n`,
    "outside/other.txt": `${SECRET} other\n`,
  });
  const root = join(base, "root");
  const outside = join(base, "outside");
  const ws = new Workspace({ roots: root, policy });
  const swap = async (dir: string): Promise<void> => {
    await rename(join(root, dir), join(root, `${dir}-moved`));
    await symlink(outside, join(root, dir));
  };
  const outsideNow = () => snapshot(outside);
  return { base, root, outside, ws, swap, outsideNow };
}

type Swapped = Awaited<ReturnType<typeof swapLayout>>;

/** Calls on `sub/f.txt` (or into `dst/`), and the path whose lock each waits for. */
const LOCKED_CALLS: readonly (readonly [
  name: string,
  call: (s: Swapped) => Promise<unknown>,
  lockOf: (s: Swapped) => string,
  swapped: string,
])[] = [
  [
    "write",
    (s) => s.ws.write({ file_path: "sub/f.txt", content: "pwned\n" }),
    (s) => join(s.root, "sub", "f.txt"),
    "sub",
  ],
  [
    "edit",
    (s) => s.ws.edit({ file_path: "sub/f.txt", old_string: "\n", new_string: " pwned\n" }),
    (s) => join(s.root, "sub", "f.txt"),
    "sub",
  ],
  [
    "multiEdit",
    (s) =>
      s.ws.multiEdit({ file_path: "sub/f.txt", edits: [{ old_string: "\n", new_string: "!\n" }] }),
    (s) => join(s.root, "sub", "f.txt"),
    "sub",
  ],
  [
    "delete",
    (s) => s.ws.delete({ file_path: "sub/f.txt" }),
    (s) => join(s.root, "sub", "f.txt"),
    "sub",
  ],
  [
    "rename from",
    (s) => s.ws.rename({ from: "sub/f.txt", to: "moved.txt" }),
    (s) => join(s.root, "sub", "f.txt"),
    "sub",
  ],
  [
    "rename to",
    (s) => s.ws.rename({ from: "other.txt", to: "dst/new.txt" }),
    (s) => join(s.root, "dst", "new.txt"),
    "dst",
  ],
  [
    "rename to (overwrite)",
    (s) => s.ws.rename({ from: "other.txt", to: "dst/other.txt", overwrite: true }),
    (s) => join(s.root, "dst", "other.txt"),
    "dst",
  ],
];

describe("a directory swapped for a link out while the call waits for the path lock", () => {
  it.each(LOCKED_CALLS)(
    "%s is refused once it holds the lock",
    async (_name, call, lockOf, dir) => {
      const s = await swapLayout("warn");
      const before = s.outsideNow();
      let pending: Promise<unknown> | undefined;
      await whileLocked(lockOf(s), async () => {
        pending = failure(call(s));
        await new Promise((done) => setTimeout(done, 20));
        await s.swap(dir);
      });
      const error = await pending;
      expect(error).toBeInstanceOf(FreshfsError);
      expect((error as FreshfsError).code).toBe("OUTSIDE_ROOT");
      expect(s.outsideNow()).toEqual(before);
      expect(await readFile(join(s.root, "sub-moved", "f.txt"), "utf8").catch(() => "")).toBe(
        dir === "sub" ? "inside\n" : "",
      );
    },
  );

  it("a file link re-pointed out while a write waits is refused", async () => {
    const s = await swapLayout("warn");
    await symlink("sub/f.txt", join(s.root, "l.txt"));
    const before = s.outsideNow();
    for (const run of [
      () => s.ws.write({ file_path: "l.txt", content: "pwned\n" }),
      () => s.ws.edit({ file_path: "l.txt", old_string: "\n", new_string: " pwned\n" }),
    ]) {
      let pending: Promise<unknown> | undefined;
      await whileLocked(join(s.root, "sub", "f.txt"), async () => {
        pending = failure(run());
        await new Promise((done) => setTimeout(done, 20));
        await rm(join(s.root, "l.txt"));
        await symlink(join(s.outside, "f.txt"), join(s.root, "l.txt"));
      });
      expect(((await pending) as FreshfsError).code).toBe("OUTSIDE_ROOT");
      await rm(join(s.root, "l.txt"));
      await symlink("sub/f.txt", join(s.root, "l.txt"));
    }
    expect(s.outsideNow()).toEqual(before);
    expect(await readFile(join(s.root, "sub", "f.txt"), "utf8")).toBe("inside\n");
  });
});

/**
 * The guard's check is the last step before the write: `checkEdit` is wrapped so that, once it
 * has passed, the directory is swapped for a link out (another process's doing, at the worst
 * moment). `nth` picks which call of the check (writes check twice: before the temp file is
 * made, and once more just before the rename).
 */
function swapAfterCheck(s: Swapped, dir: string, nth: number): void {
  const check = s.ws.tracker.checkEdit.bind(s.ws.tracker);
  let calls = 0;
  s.ws.tracker.checkEdit = async (path, options) => {
    const verdict = await check(path, options);
    if (++calls === nth) await s.swap(dir);
    return verdict;
  };
}

const CHECKED_CALLS: readonly (readonly [
  name: string,
  call: (s: Swapped) => Promise<unknown>,
  swapped: string,
  nth: number,
])[] = [
  [
    "write, after the first check",
    (s) => s.ws.write({ file_path: "sub/f.txt", content: "pwned\n" }),
    "sub",
    1,
  ],
  [
    "write, after the last check",
    (s) => s.ws.write({ file_path: "sub/f.txt", content: "pwned\n" }),
    "sub",
    2,
  ],
  [
    "edit, after the first check",
    (s) => s.ws.edit({ file_path: "sub/f.txt", old_string: "\n", new_string: " pwned\n" }),
    "sub",
    1,
  ],
  [
    "edit, after the last check",
    (s) => s.ws.edit({ file_path: "sub/f.txt", old_string: "\n", new_string: " pwned\n" }),
    "sub",
    2,
  ],
  [
    "multiEdit, after the first check",
    (s) =>
      s.ws.multiEdit({ file_path: "sub/f.txt", edits: [{ old_string: "\n", new_string: "!\n" }] }),
    "sub",
    1,
  ],
  ["delete", (s) => s.ws.delete({ file_path: "sub/f.txt" }), "sub", 1],
  [
    "rename, the source's directory",
    (s) => s.ws.rename({ from: "sub/f.txt", to: "moved.txt" }),
    "sub",
    1,
  ],
  [
    "rename, the target's directory",
    (s) => s.ws.rename({ from: "sub/f.txt", to: "dst/new.txt" }),
    "dst",
    1,
  ],
  [
    "rename with overwrite, the target's directory",
    (s) => s.ws.rename({ from: "sub/f.txt", to: "dst/other.txt", overwrite: true }),
    "dst",
    1,
  ],
];

describe("a directory swapped for a link out between the guard's check and the write", () => {
  it.each(CHECKED_CALLS)("%s: refused, nothing outside touched", async (_name, call, dir, nth) => {
    const s = await swapLayout("strict");
    await writeFile(join(s.root, "dst", "other.txt"), "inside other\n");
    await s.ws.read({ file_path: "sub/f.txt" });
    await s.ws.read({ file_path: "dst/other.txt" });
    const before = s.outsideNow();
    swapAfterCheck(s, dir, nth);
    const error = await failure(call(s));
    // Whatever the code (OUTSIDE_ROOT, STALE, NOT_FOUND), the call must not succeed: it would
    // have acted on outside/, where `dir` now leads.
    expect.soft(error, "the call succeeded").toBeInstanceOf(FreshfsError);
    expect.soft(s.outsideNow(), "outside/ changed").toEqual(before);
    expect(await readFile(join(s.root, "sub-moved", "f.txt"), "utf8").catch(() => "")).toBe(
      dir === "sub" ? "inside\n" : "",
    );
  });

  it("leaves the file inside untouched when the directory comes back after a refused write", async () => {
    const s = await swapLayout("strict");
    await s.ws.read({ file_path: "sub/f.txt" });
    const before = s.outsideNow();
    swapAfterCheck(s, "sub", 1);
    await rejectsWith(s.ws.write({ file_path: "sub/f.txt", content: "pwned\n" }), "STALE");
    // The temp file made through the link (in outside/) is gone with the refusal.
    expect(s.outsideNow()).toEqual(before);
    await rm(join(s.root, "sub"));
    await rename(join(s.root, "sub-moved"), join(s.root, "sub"));
    expect(await readFile(join(s.root, "sub", "f.txt"), "utf8")).toBe("inside\n");
    await s.ws.write({ file_path: "sub/f.txt", content: "now\n" });
    expect(await readFile(join(s.root, "sub", "f.txt"), "utf8")).toBe("now\n");
  });

  it("leaves nothing outside when a new file's directory is swapped after the check", async () => {
    const s = await swapLayout("warn");
    mkdirSync(join(s.root, "fresh"));
    const before = s.outsideNow();
    swapAfterCheck(s, "fresh", 1);
    const error = await failure(s.ws.write({ file_path: "fresh/new.txt", content: "pwned\n" }));
    expect(error).toBeInstanceOf(FreshfsError);
    expect(s.outsideNow()).toEqual(before);
  });
});

describe("grep over a listing taken before a swap", () => {
  /** A cached listing of `root`, taken now; the swaps below happen after it. */
  async function listed(root: string): Promise<void> {
    invalidateFsScanCache();
    configureScanCache({ ttlMs: 60_000 });
    const before = await grep("inside", { path: root, cache: true });
    expect(before.lines.length).toBeGreaterThan(0);
  }

  async function layout() {
    const base = await tempTree({
      "root/sub/f.txt": "inside f\n",
      "root/a/b/c/deep.txt": "inside deep\n",
      "root/a/keep.txt": "inside keep\n",
      "root/top.txt": "inside top\n",
      "outside/f.txt": `${SECRET} inside f\n`,
      "outside/deep.txt": `${SECRET} inside deep\n`,
      "outside/c/deep.txt": `${SECRET} inside deep\n`,
    });
    return { root: join(base, "root"), outside: join(base, "outside") };
  }

  it("does not read through a directory swapped for a link out, at any depth", async () => {
    const { root, outside } = await layout();
    await listed(root);
    for (const dir of ["sub", "a/b"]) {
      await rename(join(root, dir), join(root, `${dir}-moved`));
      await symlink(outside, join(root, dir));
    }
    const result = await grep("inside", { path: root, cache: true });
    expect(result.lines.map((l) => l.text).join("\n")).not.toContain(SECRET);
    // The rest of the tree is still searched. The files reached through a link are not there,
    // as far as the answer goes: naming them only when they matched would tell what they hold.
    expect(result.lines.map((l) => l.path)).toEqual(["a/keep.txt", "top.txt"]);
    expect(result.skipped.unreadable).toEqual([]);
    expect(result.skipped.binary).toBe(0);
  });

  it("answers the same whether or not an outside file reached through a swap matches", async () => {
    const { root, outside } = await layout();
    writeFileSync(join(root, "sub", "bin.txt"), "inside bin\n");
    await listed(root);
    await rename(join(root, "sub"), join(root, "sub-moved"));
    await symlink(outside, join(root, "sub"));
    // Outside now: f.txt holds the secret; bin.txt matches and has a NUL past 8 KiB (binary
    // once it matched, as rg decides).
    writeFileSync(join(outside, "bin.txt"), `${SECRET}\n${"x".repeat(9000)}\0\n`);
    const answers = [];
    for (const pattern of [SECRET, "no such text anywhere"]) {
      for (const outputMode of ["content", "count", "files_with_matches"] as const) {
        const result = await grep(pattern, { path: root, cache: true, outputMode });
        answers.push({
          lines: result.lines,
          files: result.files,
          counts: result.counts,
          skipped: result.skipped,
        });
      }
    }
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });

  it("does not name an outside file the regex got stuck on, as it names an inside one", async () => {
    const { root, outside } = await layout();
    const hostile = `${"a".repeat(40)}!\n`;
    writeFileSync(join(root, "sub", "stuck.txt"), "calm\n");
    writeFileSync(join(root, "a", "stuck.txt"), hostile);
    await listed(root);
    await rename(join(root, "sub"), join(root, "sub-moved"));
    await symlink(outside, join(root, "sub"));
    // Outside, the listed sub/stuck.txt now holds what makes the regex backtrack without end.
    writeFileSync(join(outside, "stuck.txt"), hostile);
    const result = await grep("(?=(a+)+$)", {
      path: root,
      syntax: "javascript",
      cache: true,
      fileTimeoutMs: 300,
    });
    expect(result.skipped.timedOut).toEqual(["a/stuck.txt"]);
    expect(result.lines).toEqual([]);
  }, 20_000);

  it("does not follow a link swapped in for the file the Workspace confined", async () => {
    const { root, outside } = await layout();
    const file = join(root, "sub", "f.txt");
    // The Workspace confined this canonical path; then the file became a link out.
    await rm(file);
    await symlink(join(outside, "f.txt"), file);
    const result = await grepConfined("inside", { path: file });
    expect(result.lines).toEqual([]);
    expect(result.skipped.unreadable).toEqual([{ path: "f.txt", code: "ELOOP" }]);
    // So does a directory on its way.
    await rm(file);
    await rename(join(root, "a"), join(root, "a-moved"));
    await symlink(outside, join(root, "a"));
    const deep = await grepConfined("inside", { path: join(root, "a", "deep.txt") });
    expect(deep.lines).toEqual([]);
  });

  it("does not follow a listed file swapped for a link out, and names it", async () => {
    const { root, outside } = await layout();
    await listed(root);
    await rm(join(root, "sub", "f.txt"));
    await symlink(join(outside, "f.txt"), join(root, "sub", "f.txt"));
    const result = await grep("inside", { path: root, cache: true });
    expect(result.lines.map((l) => l.text).join("\n")).not.toContain(SECRET);
    expect(result.skipped.unreadable).toEqual([{ path: "sub/f.txt", code: "ELOOP" }]);
  });

  it("still follows a link named as the one file to search, as rg does", async () => {
    const { root, outside } = await layout();
    await symlink(join(root, "top.txt"), join(root, "named.txt"));
    const result = await grep("inside", { path: join(root, "named.txt") });
    expect(result.lines.map((l) => [l.path, l.text])).toEqual([["named.txt", "inside top"]]);
    // The library searches where the caller points (the Workspace confines the path first),
    // so a named link out of the directory is followed too.
    await symlink(join(outside, "f.txt"), join(root, "far.txt"));
    const far = await grep("inside", { path: join(root, "far.txt") });
    expect(far.lines.map((l) => [l.path, l.text])).toEqual([["far.txt", `${SECRET} inside f`]]);
  });
});

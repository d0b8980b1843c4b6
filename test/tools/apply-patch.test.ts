/**
 * apply_patch: the conformance table of test/tools/apply-patch/cases.ts (Codex's and
 * opencode's grammar and public test cases, freshfs's expectations), each case applied for
 * real and, for a patch that applies, as a dry run first; then the guard (a file not read, a
 * file another process changed), all-or-nothing across files, confinement, the scan cache
 * right after, the guard's records after, and a SIGKILL in the middle of a large patch.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { FreshfsError, PATCH_MAX_FILES, Workspace } from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { canRunAsNobody, runAsNobody } from "../helpers/nobody.js";
import { PATCH_CASES, type PatchCase } from "./apply-patch/cases.js";

const DIST = new URL("../../dist/index.js", import.meta.url).href;

/** Every regular file under `dir` (links and freshfs's own hidden files are reported too). */
function treeOf(dir: string, base = dir, out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stats = lstatSync(path);
    if (stats.isDirectory()) treeOf(path, base, out);
    else if (stats.isSymbolicLink()) out[relative(base, path)] = `-> ${readlinkSync(path)}`;
    else out[relative(base, path)] = readFileSync(path, "utf8");
  }
  return out;
}

function sorted(tree: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : 1)));
}

async function setUp(
  files: Readonly<Record<string, string>>,
  unread: readonly string[] = [],
): Promise<{ root: string; ws: Workspace }> {
  const root = await tempTree({ ...files });
  const ws = new Workspace({ roots: root });
  for (const path of Object.keys(files)) {
    if (!unread.includes(path)) await ws.read({ file_path: path });
  }
  return { root, ws };
}

async function outcome(call: Promise<unknown>): Promise<FreshfsError | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    if (error instanceof FreshfsError) return error;
    throw error;
  }
}

describe("the conformance table", () => {
  it("holds Codex's, opencode's and the grammar's cases, each named once", () => {
    const names = new Set(PATCH_CASES.map((c) => c.name));
    expect(names.size).toBe(PATCH_CASES.length);
    const by = (prefix: string) => PATCH_CASES.filter((c) => c.source.startsWith(prefix)).length;
    expect(by("codex")).toBeGreaterThanOrEqual(30);
    expect(by("opencode")).toBeGreaterThanOrEqual(5);
    expect(by("grammar")).toBeGreaterThanOrEqual(10);
    // The grammar's every part is exercised.
    const patches = PATCH_CASES.map((c) => c.patch).join("\n");
    for (const marker of [
      "*** Add File: ",
      "*** Delete File: ",
      "*** Update File: ",
      "*** Move to: ",
      "*** End of File",
      "@@ ",
    ]) {
      expect(patches, marker).toContain(marker);
    }
    for (const code of ["INVALID_PATCH", "NO_MATCH", "NOT_FOUND", "NOT_READ"]) {
      expect(
        PATCH_CASES.some((c) => !c.expect.ok && c.expect.code === code),
        code,
      ).toBe(true);
    }
  });

  const run = async (c: PatchCase) => {
    const { root, ws } = await setUp(c.files, c.unread);
    const before = sorted(treeOf(root));
    if (c.expect.ok) {
      const dry = await ws.applyPatch({ input: c.patch, dry_run: true });
      expect(dry.dryRun).toBe(true);
      expect(sorted(treeOf(root)), "a dry run changes nothing").toEqual(before);
      const done = await ws.applyPatch({ input: c.patch });
      expect(done.files.length).toBe(dry.files.length);
      expect(sorted(treeOf(root))).toEqual(sorted(c.expect.files));
      return;
    }
    const error = await outcome(ws.applyPatch({ input: c.patch }));
    expect(error, "the patch must be refused").toBeDefined();
    expect(error?.code, error?.message).toBe(c.expect.code);
    for (const part of c.expect.message ?? []) expect(error?.message).toContain(part);
    expect(sorted(treeOf(root)), "a refused patch changes nothing").toEqual(before);
    // A dry run refuses it the same way.
    expect((await outcome(ws.applyPatch({ input: c.patch, dry_run: true })))?.code).toBe(
      c.expect.code,
    );
  };
  for (const c of PATCH_CASES) it(`${c.name} (${c.source})`, () => run(c));
});

describe("apply_patch and the guard", () => {
  const update = (path: string, from: string, to: string) =>
    `*** Begin Patch\n*** Update File: ${path}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

  it("refuses to update or delete a file not read, naming it, and changes nothing", async () => {
    const root = await tempTree({ "a.txt": "one\n", "b.txt": "two\n" });
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    const patch = `*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Delete File: b.txt\n*** End Patch`;
    const message = await rejectsWith(ws.applyPatch({ input: patch }), "NOT_READ");
    expect(message).toContain("b.txt");
    expect(treeOf(root)).toEqual({ "a.txt": "one\n", "b.txt": "two\n" });
    // A dry run is held to the same guard: what it shows is what the call would do.
    await rejectsWith(ws.applyPatch({ input: patch, dry_run: true }), "NOT_READ");
  });

  it("refuses a file read only in part", async () => {
    const { root, ws } = await setUp({});
    writeFileSync(join(root, "long.txt"), "1\n2\n3\n");
    await ws.read({ file_path: "long.txt", offset: 1, limit: 1 });
    await rejectsWith(ws.applyPatch({ input: update("long.txt", "1", "one") }), "NOT_READ");
    expect(readFileSync(join(root, "long.txt"), "utf8")).toBe("1\n2\n3\n");
  });

  it("refuses a file another process changed since the read (STALE, naming it), and every other file stays", async () => {
    const { root, ws } = await setUp({ "a.txt": "one\n", "b.txt": "two\n", "c.txt": "three\n" });
    // A real second process rewrites c.txt after the read.
    await writeFromChild(join(root, "c.txt"), "three, theirs\n");
    const patch = `*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** Update File: c.txt\n@@\n-three\n+THREE\n*** End Patch`;
    const message = await rejectsWith(ws.applyPatch({ input: patch }), "STALE");
    expect(message).toContain("c.txt");
    expect(treeOf(root)).toEqual({
      "a.txt": "one\n",
      "b.txt": "two\n",
      "c.txt": "three, theirs\n",
    });
  });

  it("leaves the first two files untouched when the third file's hunk fails", async () => {
    const { root, ws } = await setUp({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    const patch = `*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: c.txt\n@@\n-not in c\n+C\n*** End Patch`;
    const message = await rejectsWith(ws.applyPatch({ input: patch }), "NO_MATCH");
    expect(message).toContain("hunk 1 of c.txt");
    expect(treeOf(root)).toEqual({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
  });

  it("records what it wrote: the files may be patched or edited again without a new read", async () => {
    const { root, ws } = await setUp({ "a.txt": "one\n", "old.txt": "moved\n" });
    await ws.applyPatch({
      input: `*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** Update File: old.txt\n*** Move to: sub/new.txt\n@@\n-moved\n+moved and changed\n*** Add File: added.txt\n+added\n*** End Patch`,
    });
    await ws.applyPatch({ input: update("a.txt", "two", "three") });
    await ws.edit({ file_path: "sub/new.txt", old_string: "changed", new_string: "edited" });
    await ws.edit({ file_path: "added.txt", old_string: "added", new_string: "edited" });
    expect(treeOf(root)).toEqual({
      "a.txt": "three\n",
      "added.txt": "edited\n",
      "sub/new.txt": "moved and edited\n",
    });
    // The old name is forgotten: a new file there needs no read, an update of it is NOT_FOUND.
    await rejectsWith(ws.applyPatch({ input: update("old.txt", "moved", "x") }), "NOT_FOUND");
  });

  it("deletes a link, not its target, and needs no read for it", async () => {
    const root = await tempTree({ "target.txt": "kept\n" });
    symlinkSync("target.txt", join(root, "link.txt"));
    const ws = new Workspace({ roots: root });
    await ws.applyPatch({ input: "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch" });
    expect(treeOf(root)).toEqual({ "target.txt": "kept\n" });
  });

  it("keeps a file's mode, line endings and byte order mark", async () => {
    const { root, ws } = await setUp({});
    writeFileSync(join(root, "run.sh"), "\uFEFFecho one\r\necho two\r\n", { mode: 0o755 });
    await ws.read({ file_path: "run.sh" });
    await ws.applyPatch({ input: update("run.sh", "echo two", "echo 2") });
    expect(readFileSync(join(root, "run.sh"), "utf8")).toBe("\uFEFFecho one\r\necho 2\r\n");
    expect(lstatSync(join(root, "run.sh")).mode & 0o777).toBe(0o755);
  });

  it("reports a hunk matched only with typographic quotes or trailing whitespace read loosely", async () => {
    const { ws } = await setUp({ "q.md": "It\u2019s here   \n" });
    const result = await ws.applyPatch({ input: update("q.md", "It's here", "Gone") });
    expect(result.files[0]?.matchedBy).toBe("whitespace");
    expect(result.text).toContain("matched ignoring whitespace at line ends");
  });

  it("reports a hunk matched only by ignoring indentation, and not an `@@` line matched so", async () => {
    const { root, ws } = await setUp({
      "a.py": "class A:\n    def run(self):\n        return 1\n",
      "b.py": "class B:\n    def run(self):\n        return 1\n",
    });
    const result = await ws.applyPatch({
      input:
        "*** Begin Patch\n*** Update File: a.py\n@@\n-return 1\n+        return 2\n*** Update File: b.py\n@@ def run(self):\n-        return 1\n+        return 2\n*** End Patch",
    });
    expect(result.files.map((file) => file.matchedBy)).toEqual(["indentation", "whitespace"]);
    expect(result.text).toContain(
      "M a.py (matched ignoring whitespace at line starts and ends: the new lines are indented as the patch wrote them; check them)",
    );
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe(
      "class A:\n    def run(self):\n        return 2\n",
    );
  });

  it("adds over a file read in full, in its line endings and mode; refuses one not read, or changed since by another process", async () => {
    const { root, ws } = await setUp({ "read.txt": "old\r\n", "unread.txt": "theirs\n" }, [
      "unread.txt",
    ]);
    chmodSync(join(root, "read.txt"), 0o751);
    const add = (path: string) => `*** Begin Patch\n*** Add File: ${path}\n+mine\n*** End Patch`;
    const refused = await rejectsWith(ws.applyPatch({ input: add("unread.txt") }), "NOT_READ");
    expect(refused).toContain("unread.txt");
    const done = await ws.applyPatch({ input: add("read.txt") });
    expect(done.files[0]).toMatchObject({ action: "add", added: 1, removed: 1 });
    expect(done.text).toContain("-old");
    expect(readFileSync(join(root, "read.txt"), "utf8")).toBe("mine\r\n");
    expect(lstatSync(join(root, "read.txt")).mode & 0o777).toBe(0o751);
    // Read, then rewritten by a real second process: STALE, and its bytes stay.
    await ws.read({ file_path: "unread.txt" });
    await writeFromChild(join(root, "unread.txt"), "theirs, later\n");
    await rejectsWith(ws.applyPatch({ input: add("unread.txt") }), "STALE");
    expect(readFileSync(join(root, "unread.txt"), "utf8")).toBe("theirs, later\n");
    // A directory is no file to replace.
    mkdirSync(join(root, "sub"));
    await rejectsWith(ws.applyPatch({ input: add("sub") }), "NOT_A_FILE");
    expect(readdirSync(join(root, "sub"))).toEqual([]);
  });

  it("moves onto a file read in full, replacing it; a move onto one changed since is STALE", async () => {
    const { root, ws } = await setUp({ "from.txt": "moving\n", "to.txt": "old\n" });
    const move =
      "*** Begin Patch\n*** Update File: from.txt\n*** Move to: to.txt\n@@\n-moving\n+moved\n*** End Patch";
    const dry = await ws.applyPatch({ input: move, dry_run: true });
    expect(dry.text.split("\n")[1]).toBe("M to.txt");
    expect(treeOf(root)).toEqual({ "from.txt": "moving\n", "to.txt": "old\n" });
    await writeFromChild(join(root, "to.txt"), "old, changed\n");
    await rejectsWith(ws.applyPatch({ input: move }), "STALE");
    expect(treeOf(root)).toEqual({ "from.txt": "moving\n", "to.txt": "old, changed\n" });
    await ws.read({ file_path: "to.txt" });
    await ws.applyPatch({ input: move });
    expect(treeOf(root)).toEqual({ "to.txt": "moved\n" });
  });

  it("prints Codex's summary: adds, then changes (a move as its new path), then deletes, each in the patch's order", async () => {
    const { ws } = await setUp({
      "d.txt": "d\n",
      "m.txt": "m\n",
      "old.txt": "o\n",
      "z.txt": "z\n",
    });
    const result = await ws.applyPatch({
      input: [
        "*** Begin Patch",
        "*** Delete File: d.txt",
        "*** Update File: old.txt",
        "*** Move to: new.txt",
        "*** Update File: z.txt",
        "@@",
        "-z",
        "+Z",
        "*** Add File: b.txt",
        "+b",
        "*** Update File: m.txt",
        "@@",
        "-m",
        "+M",
        "*** Add File: a.txt",
        "+a",
        "*** End Patch",
      ].join("\n"),
    });
    expect(result.text.split("\n\n")[0]).toBe(
      "Success. Updated the following files:\nA b.txt\nA a.txt\nM new.txt\nM z.txt\nM m.txt\nD d.txt",
    );
    // The structured files keep the patch's order, a move with where it came from.
    expect(
      result.files.map((file) => [
        file.action,
        file.path.split("/").pop(),
        file.from?.split("/").pop(),
      ]),
    ).toEqual([
      ["delete", "d.txt", undefined],
      ["move", "new.txt", "old.txt"],
      ["update", "z.txt", undefined],
      ["add", "b.txt", undefined],
      ["update", "m.txt", undefined],
      ["add", "a.txt", undefined],
    ]);
  });

  it("says in a refusal that nothing of a patch of several operations was applied", async () => {
    const { root, ws } = await setUp({ "a.txt": "a\n", "b.txt": "b\n" });
    const several = await rejectsWith(
      ws.applyPatch({
        input:
          "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-absent\n+B\n*** End Patch",
      }),
      "NO_MATCH",
    );
    expect(several).toContain("hunk 1 of b.txt");
    expect(several).toContain(
      "A patch applies whole or not at all: none of its 2 operations was applied, not even those before this one. Send the whole patch again once this is fixed.",
    );
    const one = await rejectsWith(
      ws.applyPatch({ input: update("b.txt", "absent", "B") }),
      "NO_MATCH",
    );
    expect(one).not.toContain("whole or not at all");
    expect(treeOf(root)).toEqual({ "a.txt": "a\n", "b.txt": "b\n" });
  });
});

/** Writes `text` to `path` from a real second process. */
async function writeFromChild(path: string, text: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [
      "-e",
      `require("node:fs").writeFileSync(${JSON.stringify(path)}, ${JSON.stringify(text)})`,
    ]);
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

describe("apply_patch: bad input", () => {
  it("names the parameter, the line, or the limit, and changes nothing", async () => {
    const { root, ws } = await setUp({ "a.txt": "a\n" });
    await rejectsWith(ws.applyPatch({}), "INVALID_ARGUMENT");
    await rejectsWith(ws.applyPatch({ input: 42 as unknown as string }), "INVALID_ARGUMENT");
    await rejectsWith(ws.applyPatch({ input: "a.txt: a -> b" }), "INVALID_PATCH");
    const twice = `*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Delete File: ./a.txt\n*** End Patch`;
    expect(await rejectsWith(ws.applyPatch({ input: twice }), "INVALID_PATCH")).toContain("a.txt");
    const adds = Array.from(
      { length: PATCH_MAX_FILES + 1 },
      (_, i) => `*** Add File: f${i}.txt\n+x`,
    );
    await rejectsWith(
      ws.applyPatch({ input: `*** Begin Patch\n${adds.join("\n")}\n*** End Patch` }),
      "INVALID_PATCH",
    );
    // opencode's parameter name and the camelCase flag are taken as well.
    await ws.applyPatch({
      patchText: `*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch`,
      dryRun: "true",
    });
    expect(treeOf(root)).toEqual({ "a.txt": "a\n" });
  });

  it("confines every path: outside the root, or through a link out, nothing is changed anywhere", async () => {
    const base = await tempTree({ "outside/secret.txt": "secret\n", "app/a.txt": "a\n" });
    const root = join(base, "app");
    symlinkSync(join(base, "outside"), join(root, "out"));
    const ws = new Workspace({ roots: root });
    await ws.read({ file_path: "a.txt" });
    const attempts = [
      "*** Add File: ../outside/new.txt\n+x",
      "*** Add File: out/new.txt\n+x",
      "*** Update File: out/secret.txt\n@@\n-secret\n+pwned",
      "*** Delete File: ../outside/secret.txt",
      "*** Update File: a.txt\n*** Move to: ../outside/moved.txt\n@@\n-a\n+b",
      "*** Update File: a.txt\n*** Move to: out/moved.txt\n@@\n-a\n+b",
    ];
    for (const attempt of attempts) {
      const patch = `*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n${attempt}\n*** End Patch`;
      expect((await outcome(ws.applyPatch({ input: patch })))?.code, attempt).toBe("OUTSIDE_ROOT");
    }
    expect(treeOf(join(base, "outside"))).toEqual({ "secret.txt": "secret\n" });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
  });
});

describe("apply_patch and the listings", () => {
  it("glob, grep, find and list see every change at the next call", async () => {
    const { ws } = await setUp({
      "src/a.ts": "export const a = 1;\n",
      "src/old.ts": "old\n",
      "src/gone.ts": "gone\n",
    });
    // The listings are live before the patch.
    expect((await ws.glob({ pattern: "**/*.ts" })).files).toHaveLength(3);
    await ws.applyPatch({
      input: [
        "*** Begin Patch",
        "*** Add File: src/lib/new.ts",
        "+export const fresh = true;",
        "*** Update File: src/a.ts",
        "@@",
        "-export const a = 1;",
        "+export const a = 2;",
        "*** Update File: src/old.ts",
        "*** Move to: src/renamed.ts",
        "*** Delete File: src/gone.ts",
        "*** End Patch",
      ].join("\n"),
    });
    expect([...(await ws.glob({ pattern: "**/*.ts" })).files].sort()).toEqual([
      "src/a.ts",
      "src/lib/new.ts",
      "src/renamed.ts",
    ]);
    const grep = await ws.grep({ pattern: "a = 2|fresh", output_mode: "files_with_matches" });
    expect([...grep.files].sort()).toEqual(["src/a.ts", "src/lib/new.ts"]);
    expect((await ws.find({ query: "renamed" })).matches[0]?.path).toBe("src/renamed.ts");
    const listed = await ws.list({ path: "src", depth: 2 });
    expect(listed.entries.map((entry) => entry.path).sort()).toEqual([
      "src/a.ts",
      "src/lib",
      "src/lib/new.ts",
      "src/renamed.ts",
    ]);
  });
});

/** Files the child's patch rewrites: enough that its renames take a while. */
const KILL_FILES = 400;

const childScript = (root: string) => `
import { Workspace } from ${JSON.stringify(DIST)};
const ws = new Workspace({ roots: ${JSON.stringify(root)}, watch: false });
const lines = ["*** Begin Patch"];
for (let i = 0; i < ${KILL_FILES}; i++) {
  const name = "f" + String(i).padStart(4, "0") + ".txt";
  await ws.read({ file_path: name });
  lines.push("*** Update File: " + name, "@@", "-old " + i, "+new " + i);
}
lines.push("*** End Patch");
process.stdout.write("ready\\n");
await ws.applyPatch({ input: lines.join("\\n") });
process.stdout.write("done\\n");
`;

describe("apply_patch killed mid-apply", () => {
  it("leaves every file whole, old or new, whenever SIGKILL lands", {
    timeout: 120_000,
  }, async () => {
    const seen = { allOld: 0, mixed: 0, allNew: 0 };
    const delays = [-1, 0, 5, 20, 60, 150, 400];
    for (const delay of delays) {
      const root = await tempTree();
      for (let i = 0; i < KILL_FILES; i++) {
        writeFileSync(join(root, `f${String(i).padStart(4, "0")}.txt`), `old ${i}\n`);
      }
      const child = spawn(process.execPath, ["--input-type=module", "-e", childScript(root)], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
      await new Promise<void>((resolve) => {
        child.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("ready")) resolve();
        });
        child.on("close", () => resolve());
      });
      if (delay < 0) {
        // The moment the first rename lands: the middle of the renames.
        const first = join(root, "f0000.txt");
        const until = performance.now() + 30_000;
        while (performance.now() < until && readFileSync(first, "utf8") === "old 0\n") {
          // Polling as fast as the file can be read.
        }
      } else {
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
      child.kill("SIGKILL");
      await exited;
      expect(stderr).toBe("");
      let news = 0;
      for (let i = 0; i < KILL_FILES; i++) {
        const text = readFileSync(join(root, `f${String(i).padStart(4, "0")}.txt`), "utf8");
        expect([`old ${i}\n`, `new ${i}\n`]).toContain(text);
        if (text === `new ${i}\n`) news++;
      }
      if (news === 0) seen.allOld++;
      else if (news === KILL_FILES) seen.allNew++;
      else seen.mixed++;
      // What a killed writer leaves (temp files beside the targets) never shows in a listing.
      const ws = new Workspace({ roots: root });
      expect((await ws.glob({ pattern: "**/*", limit: 1000 })).total).toBe(KILL_FILES);
      expect((await ws.list({ limit: 1000 })).total).toBe(KILL_FILES);
    }
    expect(seen.allOld + seen.mixed + seen.allNew).toBe(delays.length);
    console.log(
      `SIGKILL mid-apply: ${JSON.stringify(seen)} over ${delays.length} runs of ${KILL_FILES} files`,
    );
  });
});

describe("dry_run", () => {
  it("edit and multi_edit show the diff and write nothing, record nothing", async () => {
    const { root, ws } = await setUp({ "a.txt": "one\ntwo\n" });
    const edit = await ws.edit({
      file_path: "a.txt",
      old_string: "one",
      new_string: "ONE",
      dry_run: true,
    });
    expect(edit.dryRun).toBe(true);
    expect(edit.diff).toContain("+ONE");
    expect(edit.text).toContain("Dry run");
    const multi = await ws.multiEdit({
      file_path: "a.txt",
      dryRun: true,
      edits: [
        { old_string: "one", new_string: "1" },
        { old_string: "two", new_string: "2" },
      ],
    });
    expect(multi.replacements).toBe(2);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\ntwo\n");
    // Nothing recorded: a change by another writer after the dry run is still caught.
    writeFileSync(join(root, "a.txt"), "one\ntwo\nthree\n");
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "one", new_string: "ONE" }),
      "STALE",
    );
    // A dry run of creating a file creates nothing.
    const created = await ws.edit({
      file_path: "new.txt",
      old_string: "",
      new_string: "x\n",
      dry_run: true,
    });
    expect(created.created).toBe(true);
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    // A dry run fails as the edit would.
    await rejectsWith(
      ws.edit({ file_path: "a.txt", old_string: "absent", new_string: "x", dry_run: true }),
      "STALE",
    );
  });
});

describe("apply_patch: line endings, markers inside hunks, plain moves, links", () => {
  it("keeps each line's own ending, a lone CR included", async () => {
    const { root, ws } = await setUp({
      "mixed.txt": "l1\nl2\r\nl3\nl4\n",
      "cr.txt": "progress 10%\rprogress 20%\nend\n",
    });
    await ws.applyPatch({
      input:
        "*** Begin Patch\n*** Update File: mixed.txt\n@@\n-l4\n+l4x\n*** Update File: cr.txt\n@@\n-end\n+done\n*** End Patch",
    });
    expect(readFileSync(join(root, "mixed.txt"), "utf8")).toBe("l1\nl2\r\nl3\nl4x\n");
    expect(readFileSync(join(root, "cr.txt"), "utf8")).toBe("progress 10%\rprogress 20%\ndone\n");
  });

  it("reads a context line holding `@@` or `*** End of File` as context, as Codex does", async () => {
    const { root, ws } = await setUp({ "fixture.diff": "@@ -1 +1 @@\n   *** End of File\nold\n" });
    await ws.applyPatch({
      input:
        "*** Begin Patch\n*** Update File: fixture.diff\n@@\n @@ -1 +1 @@\n    *** End of File\n-old\n+new\n*** End Patch",
    });
    expect(readFileSync(join(root, "fixture.diff"), "utf8")).toBe(
      "@@ -1 +1 @@\n   *** End of File\nnew\n",
    );
  });

  it("takes a unified diff's hunk header as a bare `@@` (its trailing text as the line)", async () => {
    const { root, ws } = await setUp({ "a.py": "def run():\n    x = 1\n    y = 2\n" });
    await ws.applyPatch({
      input:
        "*** Begin Patch\n*** Update File: a.py\n@@ -1,3 +1,3 @@ def run():\n     x = 1\n-    y = 2\n+    y = 3\n*** End Patch",
    });
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("def run():\n    x = 1\n    y = 3\n");
  });

  it("puts a hunk of added lines right after its `@@` line, or at the end with `*** End of File`", async () => {
    const { root, ws } = await setUp({ "a.txt": "one\ntwo\nthree\n", "b.txt": "one\ntwo\n" });
    await ws.applyPatch({
      input:
        "*** Begin Patch\n*** Update File: a.txt\n@@ one\n+one and a half\n*** Update File: b.txt\n@@ one\n+last\n*** End of File\n*** End Patch",
    });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\none and a half\ntwo\nthree\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("one\ntwo\nlast\n");
  });

  it("takes added lines followed by a blank line as an addition, skips a unified diff's no-newline marker, and gives a replaced line its own ending", async () => {
    const { root, ws } = await setUp({
      "a.py": "def foo():\n    x = 1\n\ny = 2\n",
      "b.txt": "one\ntwo",
      "mixed.txt": "a\r\nb\nc\r\n",
    });
    await ws.applyPatch({
      input: [
        "*** Begin Patch",
        "*** Update File: a.py",
        "@@ def foo():",
        '+    """doc"""',
        "",
        "*** Update File: b.txt",
        "@@",
        " one",
        "-two",
        "\\ No newline at end of file",
        "+TWO",
        "\\ No newline at end of file",
        "*** Update File: mixed.txt",
        "@@",
        "-b",
        "+B",
        "*** End Patch",
      ].join("\n"),
    });
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe(
      'def foo():\n    """doc"""\n    x = 1\n\ny = 2\n',
    );
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("one\nTWO");
    expect(readFileSync(join(root, "mixed.txt"), "utf8")).toBe("a\r\nB\nc\r\n");
  });

  it("moves a file with no hunks byte for byte, whatever it holds", async () => {
    const { root, ws } = await setUp({});
    const files = {
      "mixed.txt": Buffer.from("a\r\nb\nc\rd"),
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "blob.bin": Buffer.from([0, 1, 2, 3, 0xff]),
    };
    for (const [name, bytes] of Object.entries(files)) {
      writeFileSync(join(root, name), bytes);
      await ws.read({ file_path: name }).catch(() => undefined);
    }
    const moves = Object.keys(files).map(
      (name) => `*** Update File: ${name}\n*** Move to: moved/${name}`,
    );
    await ws.applyPatch({ input: `*** Begin Patch\n${moves.join("\n")}\n*** End Patch` });
    for (const [name, bytes] of Object.entries(files)) {
      expect(readFileSync(join(root, "moved", name)).equals(bytes), name).toBe(true);
      expect(existsSync(join(root, name))).toBe(false);
    }
  });

  it("deletes a link that leads nowhere, and refuses an add under a file (NOT_A_DIRECTORY)", async () => {
    const root = await tempTree({ "f.txt": "f\n" });
    symlinkSync("nodir/x", join(root, "dangling"));
    const ws = new Workspace({ roots: root });
    await ws.applyPatch({ input: "*** Begin Patch\n*** Delete File: dangling\n*** End Patch" });
    expect(lstatSync(join(root, "dangling"), { throwIfNoEntry: false })).toBeUndefined();
    const message = await rejectsWith(
      ws.applyPatch({ input: "*** Begin Patch\n*** Add File: f.txt/new.txt\n+x\n*** End Patch" }),
      "NOT_A_DIRECTORY",
    );
    expect(message).toContain("f.txt/new.txt");
    expect(treeOf(root)).toEqual({ "f.txt": "f\n" });
  });

  it("gives a hint, in one pass, when a hunk that does not match has a line that differs from the file's only in indentation", async () => {
    const { root, ws } = await setUp({ "a.py": "def run():\n    return 1\n" });
    const message = await rejectsWith(
      ws.applyPatch({
        input:
          "*** Begin Patch\n*** Update File: a.py\n@@\n-return 1\n-return 3\n+return 2\n*** End Patch",
      }),
      "NO_MATCH",
    );
    expect(message).toContain("Line 2 of the file");
    expect(message).toContain("indentation");
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("def run():\n    return 1\n");
  });
});

describe("apply_patch: a step that fails among the renames", () => {
  it.runIf(canRunAsNobody)(
    "puts back what had landed, the very file (inode, mode), when a later unlink is refused",
    async () => {
      const root = await tempTree({
        "a.txt": "one\n",
        "over.txt": "replaced\n",
        "ro/gone.txt": "gone\n",
      });
      writeFileSync(join(root, "b.txt"), "two\n", { mode: 0o640 });
      for (const path of [
        root,
        join(root, "ro"),
        join(root, "a.txt"),
        join(root, "b.txt"),
        join(root, "over.txt"),
        join(root, "ro", "gone.txt"),
      ]) {
        chownSync(path, 65534, 65534);
      }
      // A directory its owner may read but not change: removing gone.txt from it fails with
      // EACCES at the last step, after a.txt and b.txt were renamed into place.
      chmodSync(join(root, "ro"), 0o555);
      const before = {
        a: lstatSync(join(root, "a.txt")).ino,
        b: lstatSync(join(root, "b.txt")).ino,
        over: lstatSync(join(root, "over.txt")).ino,
      };
      const run = runAsNobody(`
        import { Workspace } from "ENTRY";
        const ws = new Workspace({ roots: ${JSON.stringify(root)} });
        for (const f of ["a.txt", "b.txt", "over.txt", "ro/gone.txt"]) await ws.read({ file_path: f });
        try {
          await ws.applyPatch({ input: ${JSON.stringify(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** Add File: new/sub/c.txt\n+three\n*** Add File: over.txt\n+over\n*** Delete File: ro/gone.txt\n*** End Patch",
          )} });
          console.log("applied");
        } catch (error) {
          console.log(error.code + " " + error.message);
        }
      `);
      chmodSync(join(root, "ro"), 0o755);
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(/^PERMISSION_DENIED .*gone\.txt.*nothing was changed/s);
      expect(treeOf(root)).toEqual({
        "a.txt": "one\n",
        "b.txt": "two\n",
        "over.txt": "replaced\n",
        "ro/gone.txt": "gone\n",
      });
      // The directories made for the added file went with it.
      expect(existsSync(join(root, "new"))).toBe(false);
      // The files put back are the files that were there: same inode, same mode.
      expect(lstatSync(join(root, "a.txt")).ino).toBe(before.a);
      expect(lstatSync(join(root, "b.txt")).ino).toBe(before.b);
      expect(lstatSync(join(root, "over.txt")).ino).toBe(before.over);
      expect(lstatSync(join(root, "b.txt")).mode & 0o777).toBe(0o640);
    },
  );
});

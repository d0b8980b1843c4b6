/**
 * The live tree: every answer equals a fresh walk made right after it, whoever made
 * the change before the call (here: another process), in every mode the tree can be in.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { FsWatchBackend } from "../../src/live/backend.js";
import { Workspace } from "../../src/tools/workspace.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { exact, listed, liveRegistry, skippedOf, untilLive } from "../helpers/live.js";

/** Runs `code` in another Node process, which has finished when this returns. */
function elsewhere(code: string, cwd: string): void {
  execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd, stdio: "pipe" });
}

describe("a live tree", () => {
  it("walks first, then answers live; changes by another process are in the next answer", async () => {
    const root = await tempTree({ "src/a.ts": "a", "src/deep/b.ts": "b", "README.md": "" });
    const trees = liveRegistry();
    expect((await exact(trees, root)).freshness).toBe("walked");
    await untilLive(trees, root);
    const steps = [
      "fs.writeFileSync('src/c.ts', 'c')",
      "fs.unlinkSync('src/a.ts')",
      "fs.renameSync('src/deep', 'src/moved')",
      "fs.mkdirSync('x/y/z', { recursive: true }); fs.writeFileSync('x/y/z/new.ts', '')",
      "fs.writeFileSync('x/y/z/newer.ts', '')",
      "fs.rmSync('x', { recursive: true })",
      "fs.mkdirSync('d'); fs.writeFileSync('d/one', '')",
      "fs.rmSync('d', { recursive: true }); fs.mkdirSync('d'); fs.writeFileSync('d/two', '')",
      "fs.writeFileSync('d/three', ''); fs.rmSync('d/two')",
      "fs.symlinkSync('src', 'link'); fs.symlinkSync('missing', 'dangling')",
      "fs.unlinkSync('link'); fs.renameSync('README.md', 'src/README.md')",
      "fs.rmSync('src', { recursive: true }); fs.writeFileSync('src', 'now a file')",
      "fs.rmSync('src'); fs.mkdirSync('src'); fs.writeFileSync('src/back.ts', '')",
    ];
    for (const step of steps) {
      elsewhere(`import fs from "node:fs"; ${step};`, root);
      const answer = await exact(trees, root);
      expect(answer.freshness, step).not.toBe("cached");
    }
    expect((await exact(trees, root)).freshness).toBe("live");
  });

  it("follows ignore rules that change: nested .gitignore, .ignore, info/exclude, a nested repository", async () => {
    const root = await tempTree({
      "app/keep.ts": "",
      "app/debug.log": "",
      "app/gen/out.js": "",
      "lib/x.ts": "",
      "lib/sub/y.ts": "",
    });
    const env = isolatedGitEnv(root);
    execFileSync("git", ["init", "-q"], { cwd: root, env });
    const trees = liveRegistry();
    const policy = { includeHidden: true };
    await untilLive(trees, root, policy);
    const steps = [
      "fs.writeFileSync('app/.gitignore', '*.log\\ngen/\\n')",
      "fs.writeFileSync('app/.gitignore', '*.log\\n')",
      "fs.writeFileSync('.gitignore', 'lib/sub/\\n')",
      "fs.writeFileSync('.git/info/exclude', 'keep.ts\\n')",
      "fs.writeFileSync('.git/info/exclude', '')",
      "fs.writeFileSync('lib/.ignore', 'x.ts\\n')",
      "fs.rmSync('lib/.ignore'); fs.rmSync('.gitignore')",
      "fs.mkdirSync('lib/sub/.git'); fs.writeFileSync('lib/sub/.gitignore', 'y.ts\\n')",
      "fs.writeFileSync('lib/sub/.gitignore', ''); fs.writeFileSync('lib/sub/z.ts', '')",
      "fs.mkdirSync('lib/sub/.git/info'); fs.writeFileSync('lib/sub/.git/info/exclude', 'z.ts\\n')",
      "fs.writeFileSync('lib/sub/.git/info/exclude', 'y.ts\\n')",
      "fs.rmSync('lib/sub/.git', { recursive: true })",
      "fs.writeFileSync('app/.gitignore', '')",
    ];
    for (const step of steps) {
      elsewhere(`import fs from "node:fs"; ${step};`, root);
      await exact(trees, root, policy);
    }
  });

  it("sees a repository made above the root, and the root itself moved away", async () => {
    const parent = await tempTree({ "root/a.log": "", "root/b.ts": "" });
    const root = join(parent, "root");
    const trees = liveRegistry();
    await untilLive(trees, root);
    writeFileSync(join(parent, ".gitignore"), "*.log\n");
    await exact(trees, root);
    execFileSync("git", ["init", "-q"], { cwd: parent, env: isolatedGitEnv(parent) });
    expect(listed(await exact(trees, root))).toEqual(["file:b.ts"]);
    renameSync(root, join(parent, "elsewhere"));
    mkdirSync(root);
    writeFileSync(join(root, "fresh.ts"), "");
    expect(listed(await exact(trees, root))).toEqual(["file:fresh.ts"]);
    rmSync(root, { recursive: true });
    await expect(trees.query(root, {})).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("is exact after changes made in one burst by a process, many per directory", async () => {
    const root = await tempTree({ "many/seed": "" });
    const trees = liveRegistry();
    await untilLive(trees, root);
    elsewhere(
      "import fs from 'node:fs'; for (let i = 0; i < 2000; i++) fs.writeFileSync('many/f' + i, '');" +
        "for (let i = 0; i < 500; i++) fs.unlinkSync('many/f' + (i * 3));" +
        "for (let d = 0; d < 40; d++) { fs.mkdirSync('tree/d' + d, { recursive: true }); fs.writeFileSync('tree/d' + d + '/x', ''); }",
      root,
    );
    await exact(trees, root);
    await untilLive(trees, root);
  });

  it("answers from a walk after the kernel's queue overflowed while the watcher was held", async () => {
    const root = await tempTree({ "flood/seed": "", "other/keep": "" });
    const backend = new FsWatchBackend();
    const trees = liveRegistry(() => backend);
    await untilLive(trees, root);
    const release = backend.stall(60_000);
    // More events than the kernel queues (16,384 by default): the rest are dropped, silently.
    const queued = Number(
      execFileSync("cat", ["/proc/sys/fs/inotify/max_queued_events"]).toString().trim(),
    );
    // Two files written in turn: every write queues an event (the kernel merges only a repeat
    // of the last one), but the names are too few for the tree to give up and walk anyway.
    const fds = [0, 1].map((i) => openSync(join(root, "flood", `f${i}`), "w"));
    for (let i = 0; i < queued + 2000; i++) writeSync(fds[i % 2] as number, "x");
    for (const fd of fds) closeSync(fd);
    unlinkSync(join(root, "other", "keep"));
    release();
    const answer = await exact(trees, root);
    expect(answer.freshness).toBe("walked");
    expect(answer.entries.some((entry) => entry.path === "other/keep")).toBe(false);
    await untilLive(trees, root);
  });

  it("walks every call, and says why, when the tree has more directories than the watch budget", async () => {
    const root = await tempTree({ "a/1": "", "b/2": "", "c/d/3": "" });
    const trees = liveRegistry();
    trees.configure({ maxWatches: 2 });
    const first = await exact(trees, root);
    expect(first.freshness).toBe("walked");
    for (const name of ["a/new", "c/d/e/deeper"]) {
      mkdirSync(join(root, name), { recursive: true });
      const answer = await exact(trees, root);
      expect(answer.freshness).toBe("walked");
      expect(answer.unwatched).toMatch(/over the budget of 2/);
    }
    expect(trees.stats.watches).toBe(0);
  });

  it("falls back to the default, and says so once, for an invalid FS_LIVE_* value", () => {
    const warnings: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation((warning) => {
      warnings.push(String(warning));
    });
    process.env.FS_LIVE_MAX_TREES = "many";
    try {
      const trees = liveRegistry();
      expect(trees.policy().maxTrees).toBe(16);
      expect(trees.policy().maxTrees).toBe(16);
    } finally {
      delete process.env.FS_LIVE_MAX_TREES;
      spy.mockRestore();
    }
    expect(warnings).toEqual([
      'FS_LIVE_MAX_TREES="many" is not a whole number >= 0; using the default, 16.',
    ]);
  });

  it("answers by the TTL policy when watching is off", async () => {
    const root = await tempTree({ "a.ts": "" });
    const trees = liveRegistry();
    trees.configure({ enabled: false });
    expect(await trees.query(root, {})).toBeUndefined();
  });

  it("keeps every hidden and ignored file grep's overrides need, as a walk lists them", async () => {
    const root = await tempTree({ ".env": "", "src/.hidden.ts": "", "src/a.ts": "" });
    execFileSync("git", ["init", "-q"], { cwd: root, env: isolatedGitEnv(root) });
    writeFileSync(join(root, ".gitignore"), "*.secret\n");
    const trees = liveRegistry();
    await untilLive(trees, root);
    writeFileSync(join(root, "src", "key.secret"), "");
    writeFileSync(join(root, "src", ".another"), "");
    symlinkSync("a.ts", join(root, "src", "alias.ts"));
    const answer = await exact(trees, root);
    expect(skippedOf(answer)).toContain("-i:src/key.secret");
    expect(skippedOf(answer)).toContain("h-:src/.another");
  });
});

describe("the Workspace, watching by default", () => {
  it("finds what a shell created a moment ago and forgets what it deleted", async () => {
    const root = await tempTree({ "src/a.ts": "export const a = 1;\n" });
    const workspace = new Workspace({ roots: [root] });
    expect((await workspace.glob({ pattern: "**/*.ts" })).files).toEqual(["src/a.ts"]);
    for (let i = 0; i < 20; i++) {
      elsewhere(
        `import fs from "node:fs"; fs.writeFileSync("src/b${i}.ts", "export const b = ${i};\\n"); fs.rmSync("src/${i === 0 ? "a" : `b${i - 1}`}.ts");`,
        root,
      );
      const files = (await workspace.glob({ pattern: "**/*.ts" })).files;
      expect(files).toEqual([`src/b${i}.ts`]);
      const grep = await workspace.grep({
        pattern: "export const b",
        output_mode: "files_with_matches",
      });
      expect(grep.files).toEqual([`src/b${i}.ts`]);
    }
  });

  it.each([1, 2])("lets a script exit after %i watched calls", (calls) => {
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { glob } from ${JSON.stringify(new URL("../../src/index.ts", import.meta.url).href)};
         const seen = [];
         for (let i = 0; i < ${calls}; i++) {
           if (i > 0) await new Promise((r) => setTimeout(r, 300));
           seen.push((await glob("*", { cache: true, watch: true })).freshness);
         }
         console.log(seen.join(" "));`,
      ],
      { cwd: process.cwd(), encoding: "utf8", timeout: 20_000 },
    );
    expect(run.signal, "still running after 20 s").toBeNull();
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toMatch(calls === 1 ? /^walked$/ : /^walked (live|walked)$/);
    expect(run.status).toBe(0);
  });
});

/**
 * The walker, through the public scan API. Every listing test runs
 * twice: cold (a forced walk that is not stored) and through the cache (a stored walk, then a
 * hit that must return the very same listing).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  encodeName,
  forceRescan,
  getOrScan,
  invalidateFsScanCache,
  type ScanPolicy,
  type ScanResult,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { canRunAsNobody, runAsNobody } from "../helpers/nobody.js";

function gitInit(dir: string): void {
  execFileSync("git", ["init", "-q", dir], { env: isolatedGitEnv(dir) });
}

const MODES = {
  cold: (root: string, policy: ScanPolicy) => forceRescan(root, policy),
  cached: async (root: string, policy: ScanPolicy) => {
    const walked = await getOrScan(root, policy);
    const hit = await getOrScan(root, policy);
    expect(hit.entries).toBe(walked.entries);
    return hit;
  },
} as const;

beforeEach(() => {
  invalidateFsScanCache();
  configureScanCache({ ttlMs: 60_000 });
});

function paths(result: ScanResult, type?: "file" | "dir" | "symlink"): string[] {
  return result.entries.filter((entry) => !type || entry.type === type).map((entry) => entry.path);
}

describe.each(Object.entries(MODES))("listing (%s)", (_mode, scan) => {
  it("never lists freshfs's temp files (a write in flight, or one a killed process left)", async () => {
    const root = await tempTree({
      "a.txt": "a",
      ".a.txt.freshfs-0123456789ab.tmp": "half",
      ".a.txt.freshfs-nothex.tmp": "not ours",
    });
    const result = await scan(root, { includeHidden: true });
    expect(paths(result)).toEqual([".a.txt.freshfs-nothex.tmp", "a.txt"]);
  });

  it("lists files, directories and symlinks sorted by path, never following links", async () => {
    const root = await tempTree({
      "b.txt": "b",
      "a/z.txt": "z",
      "a/b/c.txt": "c",
      "a-b.txt": "ab",
      "target/inside.txt": "x",
    });
    symlinkSync(join(root, "target"), join(root, "link"));
    const result = await scan(root, {});
    expect(result.entries.map((e) => [e.path, e.type])).toEqual([
      ["a", "dir"],
      ["a/b", "dir"],
      ["a/b/c.txt", "file"],
      ["a/z.txt", "file"],
      ["a-b.txt", "file"],
      ["b.txt", "file"],
      ["link", "symlink"],
      ["target", "dir"],
      ["target/inside.txt", "file"],
    ]);
    expect(result.root).toBe(root);
    expect(result.warnings).toEqual([]);
  });

  it("sorts a directory too large to sort in one step", async () => {
    const root = await tempTree();
    const names = Array.from({ length: 10_000 }, (_, i) => `n${(i * 7919) % 10_000}`);
    for (const name of names) writeFileSync(join(root, name), "");
    const listed = paths(await scan(root, {}));
    expect(listed).toEqual([...names].sort());
  });

  it("lists a symlink loop as two symlinks and finishes", async () => {
    const root = await tempTree({ "a.txt": "" });
    symlinkSync(join(root, "loop-b"), join(root, "loop-a"));
    symlinkSync(join(root, "loop-a"), join(root, "loop-b"));
    const result = await scan(root, {});
    expect(result.entries.map((e) => [e.path, e.type])).toEqual([
      ["a.txt", "file"],
      ["loop-a", "symlink"],
      ["loop-b", "symlink"],
    ]);
  });

  it("reports mtime from lstat", async () => {
    const root = await tempTree({ "a.txt": "a" });
    symlinkSync("missing-target", join(root, "dangling"));
    const result = await scan(root, {});
    const { lstatSync } = await import("node:fs");
    for (const entry of result.entries) {
      expect(entry.mtimeMs).toBe(lstatSync(join(root, entry.path)).mtimeMs);
    }
    expect(JSON.parse(JSON.stringify(result.entries[0]))).toMatchObject({
      path: "a.txt",
      type: "file",
    });
  });

  it("never lists or enters .git, and hides dot entries unless asked", async () => {
    const root = await tempTree({
      ".env": "x",
      ".config/a.json": "{}",
      "src/.hidden.ts": "",
      "src/a.ts": "",
    });
    gitInit(root);
    writeFileSync(join(root, "src", ".git"), "gitdir: ../.git\n"); // a work tree's .git file
    expect(paths(await scan(root, {}))).toEqual(["src", "src/a.ts"]);
    expect(paths(await scan(root, { includeHidden: true }))).toEqual([
      ".config",
      ".config/a.json",
      ".env",
      "src",
      "src/.hidden.ts",
      "src/a.ts",
    ]);
  });

  it("lists node_modules unless an ignore rule drops it", async () => {
    const root = await tempTree({ "node_modules/pkg/index.js": "", "src/a.ts": "" });
    expect(paths(await scan(root, {}), "file")).toEqual(["node_modules/pkg/index.js", "src/a.ts"]);
    gitInit(root);
    writeFileSync(join(root, ".gitignore"), "node_modules/\n");
    expect(paths(await forceRescan(root), "file")).toEqual(["src/a.ts"]);
  });

  it("applies .gitignore only inside a repository, and .ignore anywhere", async () => {
    const root = await tempTree({
      ".gitignore": "*.log\n",
      ".ignore": "*.tmp\n",
      "a.log": "",
      "a.tmp": "",
      "a.txt": "",
    });
    expect(paths(await scan(root, {}), "file")).toEqual(["a.log", "a.txt"]);
    gitInit(root);
    expect(paths(await forceRescan(root), "file")).toEqual(["a.txt"]);
    expect(paths(await forceRescan(root, { useGitignore: false }), "file")).toEqual([
      "a.log",
      "a.tmp",
      "a.txt",
    ]);
  });

  it("applies the ignore files of parent directories up to the repository root", async () => {
    const repo = await tempTree({
      ".gitignore": "/packages/app/dist/\n*.gen.ts\n",
      "packages/.gitignore": "secret.txt\n",
      "packages/app/src/a.ts": "",
      "packages/app/src/a.gen.ts": "",
      "packages/app/secret.txt": "",
      "packages/app/dist/out.js": "",
    });
    gitInit(repo);
    const result = await scan(join(repo, "packages", "app"), {});
    expect(paths(result, "file")).toEqual(["src/a.ts"]);
  });

  it("reads .git/info/exclude and the global excludes file", async () => {
    const root = await tempTree({ "a.local": "", "a.global": "", "a.xdg": "", "a.txt": "" });
    gitInit(root);
    writeFileSync(join(root, ".git", "info", "exclude"), "*.local\n");
    const home = await tempTree({ ".config/git/ignore": "*.xdg\n", "custom-ignore": "*.global\n" });
    const saved = { ...process.env };
    try {
      process.env = isolatedGitEnv(home);
      expect(paths(await forceRescan(root), "file")).toEqual(["a.global", "a.txt"]);
      // core.excludesFile replaces the default ~/.config/git/ignore.
      writeFileSync(join(home, ".gitconfig"), `[core]\n\texcludesFile = ~/custom-ignore\n`);
      expect(paths(await forceRescan(root), "file")).toEqual(["a.txt", "a.xdg"]);
    } finally {
      process.env = saved;
    }
  });

  it("treats a nested repository as its own: the outer .gitignore stops at its top", async () => {
    const root = await tempTree({
      ".gitignore": "*.out\n",
      "inner/.gitignore": "*.in\n",
      "inner/a.out": "",
      "inner/a.in": "",
      "a.out": "",
      "a.in": "",
    });
    gitInit(root);
    gitInit(join(root, "inner"));
    expect(paths(await scan(root, {}), "file")).toEqual(["a.in", "inner/a.out"]);
  });

  it("reports an ignore line that can never match, and still walks", async () => {
    const root = await tempTree({ ".gitignore": "[unclosed\n*.log\n", "a.log": "", "a.txt": "" });
    gitInit(root);
    const result = await scan(root, {});
    expect(paths(result, "file")).toEqual(["a.txt"]);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]?.path).toBe(join(root, ".gitignore"));
    expect(result.warnings[0]?.message).toContain('line 1: "[unclosed" never matches');
  });

  it("lists a name that is not valid UTF-8 by its bytes, escaped, as rg lists it", async () => {
    const root = await tempTree({ "ok.txt": "" });
    const bad = Buffer.concat([
      Buffer.from("bad-"),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(".txt"),
    ]);
    writeFileSync(Buffer.concat([Buffer.from(`${root}/`), bad]), "");
    writeFileSync(join(root, "real-\uFFFD.txt"), "");
    const result = await scan(root, {});
    expect(paths(result)).toEqual(["bad-\udcff\udcfe.txt", "ok.txt", "real-\uFFFD.txt"]);
    expect(encodeName(paths(result)[0] as string)).toEqual(bad);
    // A name that really holds U+FFFD is its own string, and its bytes are UTF-8's.
    expect(encodeName("real-\uFFFD.txt")).toEqual(Buffer.from("real-\uFFFD.txt"));
    expect(result.warnings).toEqual([]);
  });

  it("refuses a .gitignore that is a symlink, as git does", async () => {
    const root = await tempTree({ "shared/rules": "*.log\n", "repo/a.log": "", "repo/b.txt": "" });
    const repo = join(root, "repo");
    gitInit(repo);
    symlinkSync("../shared/rules", join(repo, ".gitignore"));
    const result = await scan(repo, {});
    expect(paths(result, "file")).toEqual(["a.log", "b.txt"]);
    expect(result.warnings[0]?.message).toContain("a .gitignore that is a symlink is ignored");
  });

  it("follows a .git that is a symlink to the git directory", async () => {
    const root = await tempTree({ "wt/excluded.txt": "", "wt/kept.txt": "" });
    gitInit(join(root, "store"));
    renameSync(join(root, "store", ".git"), join(root, "gitdir"));
    symlinkSync(join(root, "gitdir"), join(root, "wt", ".git"));
    writeFileSync(join(root, "gitdir", "info", "exclude"), "excluded.txt\n");
    expect(paths(await scan(join(root, "wt"), {}), "file")).toEqual(["kept.txt"]);
  });

  it("answers a hostile pattern at once instead of backtracking for minutes", async () => {
    const name = "a".repeat(200);
    const root = await tempTree({
      ".gitignore": "*a*a*a*a*a*a*a*a*b\n/x/*a*a*a*a*a*a*a*b/\n",
      [name]: "",
      [`x/${name}/f`]: "",
    });
    gitInit(root);
    const result = await scan(root, {});
    expect(paths(result, "file")).toEqual([name, `x/${name}/f`]);
  });
});

describe("bad roots", () => {
  it("refuses a root that does not exist, or is a file, naming it", async () => {
    const root = await tempTree({ "file.txt": "" });
    expect(await rejectsWith(getOrScan(join(root, "missing")), "NOT_FOUND")).toContain(
      join(root, "missing"),
    );
    expect(await rejectsWith(forceRescan(join(root, "file.txt")), "NOT_A_DIRECTORY")).toContain(
      join(root, "file.txt"),
    );
  });

  it("resolves a relative root against the cwd and canonicalizes it", async () => {
    const root = await tempTree({ "real/a.txt": "" });
    symlinkSync(join(root, "real"), join(root, "alias"));
    const { relative } = await import("node:path");
    const result = await getOrScan(relative(process.cwd(), join(root, "alias")));
    expect(result.root).toBe(join(root, "real"));
    expect(paths(result)).toEqual(["a.txt"]);
  });
});

describe("a walk under load", () => {
  /** 100 directories of 300 files: a walk of several slices. */
  async function largeTree(): Promise<string> {
    const root = await tempTree();
    for (let d = 0; d < 100; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 300; f++) writeFileSync(join(root, `d${d}`, `f${f}.txt`), "");
    }
    // Rules that never match but must be tried on every entry: a warm walk of 30k entries can
    // fit in one 10 ms slice, and these tests need it to take many (measured: ~30 at ~350 ms).
    writeFileSync(
      join(root, ".ignore"),
      `${Array.from({ length: 300 }, (_, i) => `*never${i}*[xyz]`).join("\n")}\n`,
    );
    return root;
  }

  it("yields to the event loop and reports progress on a large tree", async () => {
    const root = await largeTree();
    let ticks = 0;
    let walking = true;
    const tick = () => {
      ticks++;
      if (walking) setImmediate(tick);
    };
    setImmediate(tick);
    let progressCalls = 0;
    const result = await forceRescan(root, {}, { onProgress: () => progressCalls++ });
    walking = false;
    expect(result.entries).toHaveLength(30_100);
    expect(ticks).toBeGreaterThan(1);
    expect(progressCalls).toBeGreaterThan(0);

    // A directory removed while the walk is under way ("d99" is visited last).
    const late = join(root, "d99");
    const shaken = await forceRescan(
      root,
      {},
      { onProgress: () => rmSync(late, { recursive: true, force: true }) },
    );
    expect(shaken.warnings).toEqual([
      { path: late, message: "skipped: the directory vanished during the walk" },
    ]);

    const controller = new AbortController();
    const walk = forceRescan(
      root,
      {},
      { signal: controller.signal, onProgress: () => controller.abort() },
    );
    expect(await rejectsWith(walk, "ABORTED")).toContain("aborted");
    await rejectsWith(forceRescan(root, {}, { signal: AbortSignal.abort() }), "ABORTED");
  });
});

describe.skipIf(!canRunAsNobody)("permissions (as an unprivileged user)", () => {
  it("reports an unreadable directory as a warning and lists the rest", async () => {
    const root = await tempTree({ "open/a.txt": "", "closed/b.txt": "" });
    for (const dir of [root, join(root, "open")]) chmodSync(dir, 0o755);
    chmodSync(join(root, "closed"), 0o000);
    const run = runAsNobody(
      `import { forceRescan } from "ENTRY"; const r = await forceRescan(${JSON.stringify(root)}); console.log(JSON.stringify({ paths: r.entries.map((e) => e.path), warnings: r.warnings }));`,
    );
    chmodSync(join(root, "closed"), 0o755);
    expect(run.stderr).toBe("");
    const out = JSON.parse(run.stdout);
    expect(out.paths).toEqual(["closed", "open", "open/a.txt"]);
    expect(out.warnings).toEqual([
      { path: join(root, "closed"), message: "skipped: permission denied (EACCES)" },
    ]);
  });

  it("refuses an unreadable root with PERMISSION_DENIED", async () => {
    const root = await tempTree({ "a.txt": "" });
    chmodSync(root, 0o711);
    const run = runAsNobody(
      `import { forceRescan } from "ENTRY"; try { await forceRescan(${JSON.stringify(root)}); } catch (e) { console.log(e.code, e.message); }`,
    );
    expect(run.stdout).toContain("PERMISSION_DENIED");
    expect(run.stdout).toContain(root);
  });
});

describe.skipIf(!canRunAsNobody)("permissions, continued", () => {
  it("turns a repository it cannot search, and mtimes it cannot read, into warnings and zeros", async () => {
    const root = await tempTree({ ".gitignore": "*.log\n", "sub/a.txt": "", "sub/b.log": "" });
    gitInit(root);
    mkdirSync(join(root, "sub", ".git"));
    chmodSync(root, 0o755);
    chmodSync(join(root, "sub"), 0o444); // listable, not searchable
    const run = runAsNobody(
      `import { forceRescan } from "ENTRY"; const r = await forceRescan(${JSON.stringify(root)}); const sub = r.entries.filter((e) => e.path.startsWith("sub/")); console.log(JSON.stringify({ sub: sub.map((e) => [e.path, e.mtimeMs]), json: JSON.stringify(sub).length > 0, warnings: r.warnings.map((w) => w.path) }));`,
    );
    chmodSync(join(root, "sub"), 0o755);
    expect(run.stderr).toBe("");
    const out = JSON.parse(run.stdout);
    expect(out.sub).toEqual([["sub/a.txt", 0]]);
    expect(out.warnings).toContain(join(root, "sub", ".git"));
  });

  it("never leaves a walk's failure unhandled when the caller had already given up", async () => {
    const root = await tempTree();
    chmodSync(root, 0o711);
    const run = runAsNobody(
      `import { forceRescan } from "ENTRY"; try { await forceRescan(${JSON.stringify(root)}, {}, { signal: AbortSignal.abort() }); } catch (e) { console.log(e.code); } await new Promise((r) => setTimeout(r, 50)); console.log("alive");`,
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("ABORTED\nalive\n");
  });
});

describe("trees that change under the walk", () => {
  it("does not follow a directory swapped for a symlink after its parent was read", async () => {
    const root = await tempTree();
    // Rules that never match, but that every name's head passes (so each is tried): the walk
    // takes many slices, and the first progress call, which swaps d99, comes long before the
    // walk reaches it. Without them a walk of these 30,000 files can end within one 10 ms
    // slice, before any progress call.
    const never = Array.from({ length: 100 }, (_, i) => `f*never-${i}-*.x`).join("\n");
    writeFileSync(join(root, ".ignore"), `${never}\n`);
    for (let d = 0; d < 100; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 300; f++) writeFileSync(join(root, `d${d}`, `f${f}.txt`), "");
    }
    const outside = await tempTree({ "secret.txt": "" });
    const late = join(root, "d99");
    const result = await forceRescan(
      root,
      {},
      {
        onProgress: () => {
          rmSync(late, { recursive: true, force: true });
          try {
            symlinkSync(outside, late);
          } catch {
            // already swapped by an earlier progress call
          }
        },
      },
    );
    expect(result.entries.some((entry) => entry.path.startsWith("d99/"))).toBe(false);
    expect(result.warnings).toEqual([{ path: late, message: "skipped: no longer a directory" }]);
  });

  it("finishes a directory of thousands of names that are not UTF-8, listing each", async () => {
    const root = await tempTree();
    for (let i = 0; i < 2000; i++) {
      writeFileSync(
        Buffer.concat([Buffer.from(`${root}/caf`), Buffer.from([0xe9]), Buffer.from(`-${i}.txt`)]),
        "",
      );
    }
    writeFileSync(join(root, "ok.txt"), "");
    const result = await forceRescan(root);
    expect(paths(result)).toHaveLength(2001);
    expect(paths(result)).toContain("caf\udce9-1999.txt");
    expect(result.warnings).toEqual([]);
  });
});

/**
 * Edge cases of applying changes to a live tree, each answer compared with a fresh walk
 * made right after it (listing, skipped files, glob's index), for both hidden policies.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forceRescan, type ScanPolicy, type ScanResult } from "../../src/scan/cache.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { exact, HookedBackend, listed, liveRegistry, untilLive } from "../helpers/live.js";

const POLICIES: ScanPolicy[] = [{}, { includeHidden: true }];

/** Runs each step, then checks every policy; counts the answers that were live. */
async function run(root: string, steps: [string, () => void][]): Promise<number> {
  const trees = liveRegistry();
  for (const policy of POLICIES) await untilLive(trees, root, policy);
  let liveAnswers = 0;
  for (const [label, step] of steps) {
    step();
    for (const policy of POLICIES) {
      if ((await exact(trees, root, policy, label)).freshness === "live") liveAnswers++;
    }
  }
  return liveAnswers;
}

describe("live tree edge cases", () => {
  it("names that sort near each other, replaced file <-> directory", async () => {
    const root = await tempTree({ "a/b": "", "a.txt": "", "a-b": "", "a b": "", "a!": "", z: "" });
    const p = (name: string) => join(root, name);
    const n = await run(root, [
      [
        "dir a -> file a",
        () => {
          rmSync(p("a"), { recursive: true });
          writeFileSync(p("a"), "");
        },
      ],
      [
        "file a.txt -> dir",
        () => {
          unlinkSync(p("a.txt"));
          mkdirSync(p("a.txt/x/y"), { recursive: true });
          writeFileSync(p("a.txt/x/y/z.ts"), "");
        },
      ],
      [
        "file a -> dir a with a/b, a/b.c, a/b/c",
        () => {
          unlinkSync(p("a"));
          mkdirSync(p("a/b"), { recursive: true });
          writeFileSync(p("a/b.c"), "");
          writeFileSync(p("a/b/c"), "");
          writeFileSync(p("a/!"), "");
        },
      ],
      [
        "a-b -> dir, a! removed, 'a b' -> dir",
        () => {
          unlinkSync(p("a-b"));
          mkdirSync(p("a-b"));
          writeFileSync(p("a-b/k.txt"), "");
          unlinkSync(p("a!"));
          unlinkSync(p("a b"));
          mkdirSync(p("a b"));
          writeFileSync(p("a b/.h"), "");
        },
      ],
      [
        "a/b dir -> file, a.txt dir gone",
        () => {
          rmSync(p("a/b"), { recursive: true });
          writeFileSync(p("a/b"), "");
          rmSync(p("a.txt"), { recursive: true });
        },
      ],
    ]);
    expect(n).toBeGreaterThan(0);
  });

  it("unicode names, names below '/', deep trees", async () => {
    const root = await tempTree({ "seed.txt": "" });
    const p = (name: string) => join(root, name);
    const deep = Array.from({ length: 60 }, (_, i) => `d${i}`).join("/");
    await run(root, [
      [
        "unicode",
        () => {
          for (const name of ["é.ts", "e\u0301.ts", "日本.md", "😀.txt", "\uE000.x", "Ω", "a\tb"])
            writeFileSync(p(name), "");
          mkdirSync(p("ü/ß"), { recursive: true });
          writeFileSync(p("ü/ß/ø.ts"), "");
        },
      ],
      [
        "deep",
        () => {
          mkdirSync(p(deep), { recursive: true });
          writeFileSync(p(`${deep}/leaf.ts`), "");
        },
      ],
      [
        "deep middle removed, replaced",
        () => {
          rmSync(p("d0/d1/d2/d3"), { recursive: true });
          writeFileSync(p("d0/d1/d2/d3"), "now a file");
        },
      ],
      [
        "unicode dir renamed",
        () => {
          renameSync(p("ü"), p("😀"));
          writeFileSync(p("😀/ß/new.ts"), "");
        },
      ],
    ]);
  });

  it("a directory moved into another watched directory, and changed there, then back", async () => {
    const root = await tempTree({ "x/one.ts": "", "x/sub/two.ts": "", "y/keep": "" });
    const p = (name: string) => join(root, name);
    await run(root, [
      ["mv x y/x", () => renameSync(p("x"), p("y/x"))],
      [
        "change in moved dir",
        () => {
          writeFileSync(p("y/x/three.ts"), "");
          unlinkSync(p("y/x/sub/two.ts"));
        },
      ],
      [
        "mv back and a new x",
        () => {
          renameSync(p("y/x"), p("x2"));
          mkdirSync(p("y/x"));
          writeFileSync(p("y/x/four"), "");
        },
      ],
      [
        "mv x2 y/x over an empty dir",
        () => {
          rmSync(p("y/x"), { recursive: true });
          renameSync(p("x2"), p("y/x"));
          writeFileSync(p("y/x/sub/five.ts"), "");
        },
      ],
      [
        "swap two dirs",
        () => {
          renameSync(p("y"), p("tmp"));
          mkdirSync(p("y"));
          renameSync(p("tmp"), p("y/inner"));
        },
      ],
    ]);
  });

  it("symlinks to directories, hidden directories", async () => {
    const root = await tempTree({ "d/f.ts": "", ".h/in.ts": "", "v/.env": "" });
    const p = (name: string) => join(root, name);
    await run(root, [
      ["symlink to dir", () => symlinkSync("d", p("l"))],
      [
        "symlink -> real dir",
        () => {
          unlinkSync(p("l"));
          mkdirSync(p("l"));
          writeFileSync(p("l/x.ts"), "");
        },
      ],
      [
        "real dir -> symlink",
        () => {
          rmSync(p("d"), { recursive: true });
          symlinkSync("l", p("d"));
        },
      ],
      ["hidden dir shown", () => renameSync(p(".h"), p("h"))],
      [
        "shown dir hidden",
        () => {
          renameSync(p("v"), p(".v"));
          writeFileSync(p(".v/more"), "");
        },
      ],
      [
        "hidden file -> hidden dir",
        () => {
          unlinkSync(p(".v/.env"));
          mkdirSync(p(".v/.env"));
          writeFileSync(p(".v/.env/x"), "");
        },
      ],
      [
        "changes in a hidden dir",
        () => {
          writeFileSync(p(".v/.env/y"), "");
          mkdirSync(p(".v/.env/z"));
        },
      ],
    ]);
  });

  it("many changes in one directory, with the root's .gitignore and a nested one", async () => {
    const root = await tempTree({
      "many/sub/x.ts": "",
      "many/.gitignore": "*.log\n",
      "top.log": "",
    });
    execFileSync("git", ["init", "-q"], { cwd: root, env: isolatedGitEnv(root) });
    const p = (name: string) => join(root, name);
    await run(root, [
      [
        "300 files, some ignored",
        () => {
          for (let i = 0; i < 300; i++)
            writeFileSync(p(`many/f${i}.${i % 3 === 0 ? "log" : "ts"}`), "");
        },
      ],
      [
        "300 removed, sub replaced, .gitignore changed",
        () => {
          for (let i = 0; i < 300; i += 1)
            unlinkSync(p(`many/f${i}.${i % 3 === 0 ? "log" : "ts"}`));
          rmSync(p("many/sub"), { recursive: true });
          writeFileSync(p("many/sub"), "");
          writeFileSync(p("many/.gitignore"), "sub\n");
        },
      ],
      ["root .gitignore", () => writeFileSync(p(".gitignore"), "*.ts\n!keep.ts\n")],
      [
        "300 in root",
        () => {
          for (let i = 0; i < 300; i++) writeFileSync(p(`r${i}.${i % 2 ? "ts" : "md"}`), "");
          writeFileSync(p("keep.ts"), "");
        },
      ],
      ["root .gitignore removed", () => unlinkSync(p(".gitignore"))],
    ]);
  });

  it("concurrent queries on one tree, and an abort mid-query", async () => {
    const root = await tempTree({ "a/x.ts": "", "b/y.ts": "" });
    const trees = liveRegistry();
    await untilLive(trees, root, {});
    for (let round = 0; round < 5; round++) {
      mkdirSync(join(root, `n${round}`));
      for (let i = 0; i < 3000; i++) writeFileSync(join(root, `n${round}`, `f${i}.ts`), "");
      unlinkSync(join(root, round % 2 ? "a/x.ts" : "b/y.ts"));
      writeFileSync(join(root, round % 2 ? "b/y.ts" : "a/x.ts"), "");
      const controller = new AbortController();
      const aborted = trees.query(root, {}, { signal: controller.signal });
      setImmediate(() => controller.abort());
      const others = [0, 1, 2].map(() => trees.query(root, {}));
      await aborted.catch(() => undefined);
      const walk = await forceRescan(root, {});
      for (const answer of await Promise.all(others)) {
        expect(listed(answer as ScanResult)).toEqual(listed(walk));
      }
      await exact(trees, root, {}, `round ${round}`);
    }
  });

  it("an abort while a change is applied (mid-walk of a new directory) loses nothing", async () => {
    const root = await tempTree({
      "a/x.ts": "",
      "b/y.ts": "",
      // Rules tried on every entry, never matching: the new directory's walk takes many 10 ms
      // slices (a warm one of 12,000 entries can fit in one), so the abort lands inside it.
      ".ignore": `${Array.from({ length: 300 }, (_, i) => `*never${i}*[xyz]`).join("\n")}\n`,
    });
    const backend = new HookedBackend();
    const trees = liveRegistry(() => backend);
    await untilLive(trees, root, {});
    for (let round = 0; round < 2; round++) {
      unlinkSync(join(root, "a/x.ts"));
      writeFileSync(join(root, "a/x.ts"), "");
      writeFileSync(join(root, `b/z${round}.ts`), "");
      mkdirSync(join(root, `n${round}`));
      for (let i = 0; i < 12_000; i++) writeFileSync(join(root, `n${round}`, `f${i}.ts`), "");
      const controller = new AbortController();
      backend.afterSync = () => controller.abort();
      await expect(trees.query(root, {}, { signal: controller.signal })).rejects.toMatchObject({
        code: "ABORTED",
      });
      await exact(trees, root, {}, `after abort ${round}`);
      await untilLive(trees, root, {});
    }
  });
});

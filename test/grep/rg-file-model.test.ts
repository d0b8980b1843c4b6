/**
 * rg's file model: `.rgignore` above every other
 * ignore file, a hidden name an ignore file re-includes, UTF-16 with a byte order mark searched
 * as its text, and a name holding a newline listed by every command. Each against real rg where
 * rg answers, cold and through the live tree and its content index.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { encodeName, glob, grep } from "../../src/index.js";
import { liveTrees } from "../../src/live/registry.js";
import { forceRescan } from "../../src/scan/cache.js";
import { answer, greps, warmIndex } from "../helpers/content-index.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const hasRg = spawnSync("rg", ["--version"]).status === 0;
if (!hasRg) console.warn("SKIPPED: the rg file-model comparisons need ripgrep.");

const utf16le = (text: string) =>
  Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
const utf16be = (text: string) => {
  const le = Buffer.from(text, "utf16le");
  for (let i = 0; i + 1 < le.length; i += 2)
    [le[i], le[i + 1]] = [le[i + 1] as number, le[i] as number];
  return Buffer.concat([Buffer.from([0xfe, 0xff]), le]);
};

const TREE: Record<string, string | Uint8Array> = {
  ".gitignore": "ignored-by-git.txt\n!.env\n!.config/\n",
  ".ignore": "ignored-by-ignore.txt\nkept-by-rgignore.txt\n",
  ".rgignore": "ignored-by-rgignore.txt\n!kept-by-rgignore.txt\n",
  "ignored-by-git.txt": "needle\n",
  "ignored-by-ignore.txt": "needle\n",
  "ignored-by-rgignore.txt": "needle\n",
  "kept-by-rgignore.txt": "needle\n",
  "plain.txt": "needle\n",
  ".env": "needle in a whitelisted hidden file\n",
  ".config/app.txt": "needle in a whitelisted hidden directory\n",
  ".other": "needle hidden, not whitelisted\n",
  "sub/.rgignore": "deep.txt\n",
  "sub/deep.txt": "needle\n",
  "sub/kept.txt": "needle\n",
  "wide-le.txt": utf16le("first line\nthe needle in UTF-16LE\n"),
  "wide-be.txt": utf16be("the needle in UTF-16BE\nlast\n"),
  "a\nnewline.txt": "needle in a name with a newline\n",
};

function run(command: string, args: readonly string[], cwd: string, home: string) {
  return spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    env: isolatedGitEnv(home),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 30_000,
  });
}

let root: string;
let home: string;
const { indexed, plain } = greps(() => root);

beforeAll(async () => {
  root = await tempTree(TREE, { lifetime: "file" });
  home = await tempTree({}, { lifetime: "file" });
  expect(run("git", ["init", "-q"], root, home).status).toBe(0);
});

afterEach(() => {
  liveTrees.closeAll();
});

describe.skipIf(!hasRg)("rg's file model, against rg", () => {
  for (const args of [
    ["needle"],
    ["-l", "needle"],
    ["-c", "needle"],
    ["--files"],
    ["-i", "UTF-16"],
    ["-n", "needle", "wide-le.txt"],
    ["--no-ignore", "-l", "needle"],
    ["--hidden", "-l", "needle"],
    ["-l", "needle", "sub"],
  ]) {
    it(args.join(" "), () => {
      const theirs = run(
        "rg",
        ["--no-heading", "--with-filename", "--line-number", "--sort", "path", ...args],
        root,
        home,
      );
      const ours = run(process.execPath, [BIN, "grep", ...args], root, home);
      expect(ours.status, ours.stderr).toBe(theirs.status);
      expect(ours.stdout).toBe(theirs.stdout);
    });
  }
});

describe("rg's file model in the library", () => {
  it("lists by .rgignore's rules over .ignore's and .gitignore's, and lists re-included hidden names", async () => {
    const listing = await forceRescan(root, { includeHidden: false, useGitignore: true });
    const files = listing.entries.filter((e) => e.type === "file").map((e) => e.path);
    expect(files).toContain("kept-by-rgignore.txt");
    expect(files).toContain(".env");
    expect(files).toContain(".config/app.txt");
    expect(files).toContain("sub/kept.txt");
    for (const gone of [
      "ignored-by-git.txt",
      "ignored-by-ignore.txt",
      "ignored-by-rgignore.txt",
      ".other",
      "sub/deep.txt",
    ]) {
      expect(files).not.toContain(gone);
    }
  });

  it("searches UTF-16 files as text, cold and through the content index alike", async () => {
    await warmIndex(root, indexed);
    const cold = await plain("needle in UTF");
    const warm = await indexed("needle in UTF");
    expect(warm.freshness).toBe("live");
    expect(answer(warm)).toEqual(answer(cold));
    expect(cold.lines.map((l) => [l.path, l.line, l.text])).toEqual([
      ["wide-be.txt", 1, "the needle in UTF-16BE"],
      ["wide-le.txt", 2, "the needle in UTF-16LE"],
    ]);
  });

  it("sees a .rgignore written after the tree is watched at the next call", async () => {
    const dir = await tempTree({ "a.txt": "needle\n", "b.txt": "needle\n" });
    const live = greps(() => dir).indexed;
    await warmIndex(dir, live);
    expect((await live("needle", { outputMode: "files_with_matches" })).files).toEqual([
      "a.txt",
      "b.txt",
    ]);
    writeFileSync(join(dir, ".rgignore"), "b.txt\n");
    // A rule file changed at the root: that call walks (as for .ignore), the next is live again.
    const after = await live("needle", { outputMode: "files_with_matches" });
    expect(after.files).toEqual(["a.txt"]);
    const next = await live("needle", { outputMode: "files_with_matches" });
    expect(next.freshness).toBe("live");
    expect(next.files).toEqual(["a.txt"]);
  });

  it("lists a name holding a newline in glob '**', and prints every path whole with -0", async () => {
    const all = await glob("**", { path: root });
    expect(all.matches).toContain("a\nnewline.txt");
    const files = run(process.execPath, [BIN, "files", "-0"], root, home);
    expect(files.stdout.split("\0")).toContain("a\nnewline.txt");
    const listed = run(process.execPath, [BIN, "glob", "-0", "**"], root, home);
    expect(listed.stdout.split("\0")).toContain("a\nnewline.txt");
    const found = run(process.execPath, [BIN, "grep", "-l", "-0", "newline"], root, home);
    expect(found.stdout).toBe("a\nnewline.txt\0");
  });
});

describe("names that are not UTF-8", () => {
  const bad = (name: string) => Buffer.concat([Buffer.from(name), Buffer.from([0xff, 0xfe])]);
  let dir: string;
  beforeAll(async () => {
    dir = await tempTree({ "ok.txt": "needle\n", "sub/x.txt": "needle\n" }, { lifetime: "file" });
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/`), bad("bad"), Buffer.from(".txt")]),
      "needle\n",
    );
    const badDir = Buffer.concat([Buffer.from(`${dir}/`), bad("dir")]);
    mkdirSync(badDir);
    writeFileSync(Buffer.concat([badDir, Buffer.from("/inner.txt")]), "needle inside\n");
  });

  it.skipIf(!hasRg)(
    "are listed and searched as rg lists and searches them, printed as their bytes",
    () => {
      for (const args of [["needle"], ["-l", "needle"], ["--files"], ["-c", "inside"]]) {
        const theirs = spawnSync(
          "rg",
          ["--no-heading", "--with-filename", "--line-number", "--sort", "path", ...args],
          { cwd: dir, env: isolatedGitEnv(home), stdio: ["ignore", "pipe", "pipe"] },
        );
        const ours = spawnSync(process.execPath, [BIN, "grep", ...args], {
          cwd: dir,
          env: isolatedGitEnv(home),
          stdio: ["ignore", "pipe", "pipe"],
        });
        expect(ours.status, String(ours.stderr)).toBe(theirs.status);
        expect(ours.stdout.equals(theirs.stdout), `${args}: ${ours.stdout}`).toBe(true);
      }
      const named = spawnSync(
        process.execPath,
        [
          BIN,
          "grep",
          "--json",
          "needle",
          Buffer.concat([bad("bad"), Buffer.from(".txt")]).toString("latin1"),
        ],
        { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
      );
      // Node passes a string argument as UTF-8; the latin1 string above is not the file's name.
      expect(named.status).toBe(2);
    },
  );

  it("carry their bytes in the library's paths, cold and through the live tree", async () => {
    const cold = await grep("needle", { path: dir, outputMode: "files_with_matches" });
    const names = cold.files.map((path) => encodeName(path));
    expect(names).toContainEqual(Buffer.concat([bad("bad"), Buffer.from(".txt")]));
    expect(names).toContainEqual(Buffer.concat([bad("dir"), Buffer.from("/inner.txt")]));
    const live = greps(() => dir).indexed;
    await warmIndex(dir, live);
    const warm = await live("needle", { outputMode: "files_with_matches" });
    expect(warm.freshness).toBe("live");
    expect(warm.files).toEqual(cold.files);
    // Made after the watch: the event's name is not UTF-8, so the tree reads the directory again.
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/`), bad("new"), Buffer.from(".txt")]),
      "needle\n",
    );
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/`), bad("bad"), Buffer.from(".txt")]),
      "changed\n",
    );
    const after = await live("needle", { outputMode: "files_with_matches" });
    const changed = await live("changed", { outputMode: "files_with_matches" });
    expect(after.files.map((p) => encodeName(p))).toContainEqual(
      Buffer.concat([bad("new"), Buffer.from(".txt")]),
    );
    expect(after.files.map((p) => encodeName(p))).not.toContainEqual(
      Buffer.concat([bad("bad"), Buffer.from(".txt")]),
    );
    expect(changed.files.map((p) => encodeName(p))).toEqual([
      Buffer.concat([bad("bad"), Buffer.from(".txt")]),
    ]);
  });
});

/**
 * The built `freshfs` binary (npm test builds it first), spawned on real temporary trees and
 * git repositories: files, glob, find, grep (diffed against real ripgrep), why
 * (checked against `git check-ignore -v`), --help, errors and the progress line.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Tree, tempTree } from "../helpers/fs.js";
import { checkIgnore, isolatedGitEnv, runGit, type TempRepo } from "../helpers/git.js";
import { generatedSource } from "../helpers/source.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

const hasRg = spawnSync("rg", ["--version"]).status === 0;
if (!hasRg)
  console.warn("SKIPPED: the CLI's grep-vs-rg table needs ripgrep (`apt-get install -y ripgrep`).");

interface RunOptions {
  readonly cwd?: string;
  /** The empty home that keeps the user's git configuration (global excludes) out. */
  readonly home?: string;
}

/** Runs the built CLI; stdin is closed so nothing could wait on it. */
function freshfs(args: readonly string[], options: RunOptions = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    encoding: "utf8",
    env: options.home === undefined ? process.env : isolatedGitEnv(options.home),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 30_000,
  });
}

/** Plain output as lines (no trailing empty one). */
function lines(stdout: string): string[] {
  return stdout === "" ? [] : stdout.replace(/\n$/, "").split("\n");
}

/** A temporary git repository holding `tree` (both directories removed after the test). */
async function repoTree(
  tree: Tree,
  options: { lifetime?: "test" | "file" } = {},
): Promise<TempRepo> {
  const dir = await tempTree(tree, options);
  const home = await tempTree({}, options);
  const git = (args: readonly string[], input?: string | Uint8Array) =>
    runGit(args, input === undefined ? { cwd: dir, home } : { cwd: dir, home, input });
  const init = await git(["init", "-q"]);
  if (init.status !== 0) throw new Error(`git init failed: ${init.stderr}`);
  return { dir, home, git, remove: async () => undefined };
}

/** One line on stderr, nothing on stdout, exit 2. Returns the line. */
function expectOneLineError(run: SpawnSyncReturns<string>): string {
  expect(run.status, run.stderr).toBe(2);
  expect(run.stdout).toBe("");
  expect(run.stderr.endsWith("\n"), JSON.stringify(run.stderr)).toBe(true);
  const stderrLines = run.stderr.slice(0, -1).split("\n");
  expect(stderrLines, run.stderr).toHaveLength(1);
  const line = stderrLines[0] as string;
  expect(line.startsWith("freshfs: ")).toBe(true);
  return line;
}

const LISTING_TREE: Tree = {
  ".gitignore": "build/\n*.log\n!keep.log\n",
  ".hidden/config.ts": "export const hidden = 1;\n",
  ".env": "SECRET=1\n",
  "build/out.js": "compiled\n",
  "debug.log": "noise\n",
  "keep.log": "kept\n",
  "README.md": "# readme\n",
  "src/app.ts": "export const app = 1;\n",
  "src/util.ts": "export const util = 2;\n",
  "src/deep/nested.tsx": "export const nested = 3;\n",
  "src/deep/trace.log": "ignored by the root rule\n",
  "lib/index.js": "module.exports = {};\n",
  "lib/data.json": "{}\n",
};

/** What `files` prints at the root of LISTING_TREE, in path order. */
const VISIBLE = [
  "README.md",
  "keep.log",
  "lib/data.json",
  "lib/index.js",
  "src/app.ts",
  "src/deep/nested.tsx",
  "src/util.ts",
];

describe("freshfs CLI", () => {
  it("prints the package version", () => {
    const run = freshfs(["--version"]);
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(manifest.version);
  });

  it("prints help", () => {
    const run = freshfs(["--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Usage:");
    expect(run.stdout).toContain("freshfs --version");
  });

  it("exits 2 with one clear line for an unknown command or flag", () => {
    const command = freshfs(["frobnicate"]);
    expect(command.status).toBe(2);
    expect(command.stderr).toContain("unknown command 'frobnicate'");
    const flag = freshfs(["--frobnicate"]);
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain("--frobnicate");
  });
});

describe("freshfs files", () => {
  it("prints one path per line, relative to the current directory, leaving out ignored and hidden files", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["files"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(lines(run.stdout)).toEqual(VISIBLE);
  });

  it("prints paths relative to DIR, which may be relative, end in a slash, or be absolute", async () => {
    const repo = await repoTree(LISTING_TREE);
    const expected = ["app.ts", "deep/nested.tsx", "util.ts"];
    for (const dir of ["src", "src/", "./src", join(repo.dir, "src")]) {
      const run = freshfs(["files", dir], { cwd: repo.dir, home: repo.home });
      expect(run.status, `${dir}: ${run.stderr}`).toBe(0);
      expect(lines(run.stdout), dir).toEqual(expected);
    }
  });

  it("lists the current directory when DIR is omitted, with the repository's rules above it", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["files"], { cwd: join(repo.dir, "src"), home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    // src/deep/trace.log is ignored by the root .gitignore's *.log.
    expect(lines(run.stdout)).toEqual(["app.ts", "deep/nested.tsx", "util.ts"]);
  });

  it("includes dot files with --hidden, never .git", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["files", "--hidden"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(lines(run.stdout)).toEqual([".env", ".gitignore", ".hidden/config.ts", ...VISIBLE]);
  });

  it("includes ignored files with --no-ignore (still no dot files, never .git)", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["files", "--no-ignore"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(lines(run.stdout)).toEqual([
      "README.md",
      "build/out.js",
      "debug.log",
      "keep.log",
      "lib/data.json",
      "lib/index.js",
      "src/app.ts",
      "src/deep/nested.tsx",
      "src/deep/trace.log",
      "src/util.ts",
    ]);
    const both = freshfs(["files", "--no-ignore", "--hidden"], { cwd: repo.dir, home: repo.home });
    expect(both.status).toBe(0);
    const all = lines(both.stdout);
    expect(all).toContain(".hidden/config.ts");
    expect(all).toContain("build/out.js");
    expect(all.filter((path) => path === ".git" || path.startsWith(".git/"))).toEqual([]);
  });

  it("prints at most --limit paths, the first in path order", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["files", "--limit", "3"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(lines(run.stdout)).toEqual(VISIBLE.slice(0, 3));
  });

  it("prints one JSON document with --json-result", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["files", "src", "--json"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.root).toBe(join(repo.dir, "src"));
    expect(doc.files).toEqual(["app.ts", "deep/nested.tsx", "util.ts"]);
    const limited = JSON.parse(
      freshfs(["files", "--json", "--limit", "2"], { cwd: repo.dir, home: repo.home }).stdout,
    );
    expect(limited.files).toEqual(VISIBLE.slice(0, 2));
  });
});

describe("freshfs glob", () => {
  it("prints the matching files relative to the current directory, leaving out ignored ones", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["glob", "*.ts"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(lines(run.stdout).sort()).toEqual(["src/app.ts", "src/util.ts"]);
    const js = freshfs(["glob", "**/*.js"], { cwd: repo.dir, home: repo.home });
    expect(lines(js.stdout)).toEqual(["lib/index.js"]);
  });

  it("prints paths relative to DIR", async () => {
    const repo = await repoTree(LISTING_TREE);
    for (const dir of ["src", "src/", join(repo.dir, "src")]) {
      const run = freshfs(["glob", "*.{ts,tsx}", dir], { cwd: repo.dir, home: repo.home });
      expect(run.status, `${dir}: ${run.stderr}`).toBe(0);
      expect(lines(run.stdout).sort(), dir).toEqual(["app.ts", "deep/nested.tsx", "util.ts"]);
    }
  });

  it("honours --hidden and --no-ignore", async () => {
    const repo = await repoTree(LISTING_TREE);
    const hidden = freshfs(["glob", "*.ts", "--hidden"], { cwd: repo.dir, home: repo.home });
    expect(lines(hidden.stdout).sort()).toEqual([".hidden/config.ts", "src/app.ts", "src/util.ts"]);
    const noIgnore = freshfs(["glob", "*.log", "--no-ignore"], { cwd: repo.dir, home: repo.home });
    expect(lines(noIgnore.stdout).sort()).toEqual(["debug.log", "keep.log", "src/deep/trace.log"]);
    const ignoring = freshfs(["glob", "*.log"], { cwd: repo.dir, home: repo.home });
    expect(lines(ignoring.stdout)).toEqual(["keep.log"]);
  });

  it("exits 1, printing nothing, when nothing matches", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["glob", "*.nothing"], { cwd: repo.dir, home: repo.home });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe("");
    // An ignored file does not count as a match.
    expect(freshfs(["glob", "out.js"], { cwd: repo.dir, home: repo.home }).status).toBe(1);
  });

  it("prints one JSON document with --json, and at most --limit paths", async () => {
    const repo = await repoTree(LISTING_TREE);
    const all = freshfs(["glob", "**/*", "--json"], { cwd: repo.dir, home: repo.home });
    expect(all.status, all.stderr).toBe(0);
    const doc = JSON.parse(all.stdout);
    expect(doc.root).toBe(repo.dir);
    expect([...doc.matches].sort()).toEqual(VISIBLE);
    expect(doc.truncated).toBe(false);

    const plain = freshfs(["glob", "**/*", "--limit", "2"], { cwd: repo.dir, home: repo.home });
    expect(plain.status).toBe(0);
    expect(lines(plain.stdout)).toHaveLength(2);
    const limited = JSON.parse(
      freshfs(["glob", "**/*", "--limit", "2", "--json"], { cwd: repo.dir, home: repo.home })
        .stdout,
    );
    expect(limited.matches).toEqual(lines(plain.stdout));
    expect(limited.truncated).toBe(true);
    expect(limited.totalMatches).toBe(VISIBLE.length);

    const none = freshfs(["glob", "*.nothing", "--json"], { cwd: repo.dir, home: repo.home });
    expect(none.status).toBe(1);
    expect(JSON.parse(none.stdout).matches).toEqual([]);
  });
});

describe("freshfs find", () => {
  it("ranks the files a query most likely means first, relative to the current directory", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["find", "util"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(lines(run.stdout)[0]).toBe("src/util.ts");
    const nested = freshfs(["find", "nested"], { cwd: repo.dir, home: repo.home });
    expect(lines(nested.stdout)[0]).toBe("src/deep/nested.tsx");
  });

  it("shows directories with a trailing slash and paths relative to DIR", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["find", "deep", "src"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(lines(run.stdout)).toContain("deep/");
    expect(lines(run.stdout)).toContain("deep/nested.tsx");
    for (const line of lines(run.stdout)) expect(line.startsWith("src/")).toBe(false);
  });

  it("leaves out ignored files unless --no-ignore", async () => {
    const repo = await repoTree(LISTING_TREE);
    const ignoring = freshfs(["find", "out.js"], { cwd: repo.dir, home: repo.home });
    expect(lines(ignoring.stdout)).not.toContain("build/out.js");
    const all = freshfs(["find", "out.js", "--no-ignore"], { cwd: repo.dir, home: repo.home });
    expect(all.status).toBe(0);
    expect(lines(all.stdout)[0]).toBe("build/out.js");
  });

  it("exits 1, printing nothing, when nothing matches", async () => {
    const repo = await repoTree(LISTING_TREE);
    const run = freshfs(["find", "qqqzzzqqq"], { cwd: repo.dir, home: repo.home });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe("");
  });

  it("prints one JSON document with --json, and at most --limit results", async () => {
    const repo = await repoTree(LISTING_TREE);
    const full = freshfs(["find", "a", "--json"], { cwd: repo.dir, home: repo.home });
    expect(full.status, full.stderr).toBe(0);
    const doc = JSON.parse(full.stdout);
    expect(doc.matches.length).toBeGreaterThan(2);
    for (const match of doc.matches) {
      expect(typeof match.path).toBe("string");
      expect(["file", "dir"]).toContain(match.type);
    }
    const limited = freshfs(["find", "a", "--limit", "2"], { cwd: repo.dir, home: repo.home });
    expect(limited.status).toBe(0);
    expect(lines(limited.stdout)).toEqual(
      doc.matches
        .slice(0, 2)
        .map((m: { path: string; type: string }) => (m.type === "dir" ? `${m.path}/` : m.path)),
    );
    const limitedJson = JSON.parse(
      freshfs(["find", "a", "--limit", "2", "--json"], { cwd: repo.dir, home: repo.home }).stdout,
    );
    expect(limitedJson.matches).toHaveLength(2);
    expect(limitedJson.truncated).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// grep against ripgrep

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "TODO",
  "todo",
  "FIXME",
  "foo",
  "foobar",
  "fooBar",
];

function generated(seed: number, lines: number): string {
  return generatedSource(seed, lines, WORDS, 5);
}

const GREP_TREE: Tree = {
  ".gitignore": "build/\n*.log\n!keep.log\n",
  ".hidden/config.ts": "foo hidden\nTODO hidden\n",
  "build/out.js": "foo compiled\n",
  "debug.log": "foo in a log\n",
  "keep.log": "foo kept\n",
  "src/app.ts": generated(1, 90),
  "src/util.ts": generated(2, 60),
  "src/deep/nested.tsx": generated(3, 40),
  "src-notes.txt": "foo next to src/\n",
  "lib/index.js": generated(4, 70),
  "lib/data.json": '{ "foo": 1,\n  "todo": "yes" }\n',
  "docs/readme.md": "# Title\n\nSome foo text.\nTODO: write more\n\n## Another\nfoo bar baz\n",
  "multi.txt": "start foo\nmiddle\nend bar\nfoo\nbar\n",
  "crlf.txt": "first foo\r\n\r\nsecond bar\r\nthird foo\r\n",
};

interface GrepCase {
  readonly name: string;
  /** Flags, the pattern and the optional DIR, as typed; `<ROOT>` stands for the tree's path. */
  readonly args: readonly string[];
}

const GREP_CASES: readonly GrepCase[] = [
  { name: "no DIR", args: ["foo"] },
  { name: "DIR '.'", args: ["foo", "."] },
  { name: "DIR a directory", args: ["TODO", "src"] },
  { name: "DIR with a trailing slash", args: ["TODO", "src/"] },
  { name: "DIR './src'", args: ["alpha", "./src"] },
  { name: "DIR absolute", args: ["FIXME", "<ROOT>"] },
  { name: "DIR absolute subdirectory with a trailing slash", args: ["FIXME", "<ROOT>/lib/"] },
  { name: "DIR a single file", args: ["foo", "src/app.ts"] },
  { name: "DIR a single file, absolute", args: ["gamma", "<ROOT>/src/util.ts"] },
  { name: "-i", args: ["-i", "todo"] },
  { name: "-S, lower case pattern", args: ["-S", "todo"] },
  { name: "-S, upper case pattern", args: ["-S", "Todo"] },
  { name: "-F with regex characters", args: ["-F", "(x) {"] },
  { name: "-w", args: ["-w", "foo"] },
  { name: "-w -i", args: ["-w", "-i", "FOOBAR"] },
  { name: "-c", args: ["-c", "foo"] },
  { name: "-c on a single file", args: ["-c", "foo", "src/app.ts"] },
  { name: "-l", args: ["-l", "TODO"] },
  { name: "-l on a directory", args: ["-l", "delta", "lib"] },
  { name: "-A", args: ["-A", "2", "FIXME"] },
  { name: "-B", args: ["-B", "2", "FIXME"] },
  { name: "-C", args: ["-C", "1", "gamma delta"] },
  { name: "-C with overlapping contexts", args: ["-C", "3", "foo", "src"] },
  { name: "-A and -B together", args: ["-A", "1", "-B", "3", "FIXME", "lib/"] },
  { name: "-g", args: ["-g", "*.ts", "foo"] },
  { name: "-g negated", args: ["-g", "!*.ts", "foo"] },
  { name: "-g repeated with a negation", args: ["-g", "*.ts", "-g", "!src/deep/**", "foo"] },
  { name: "-g two negations", args: ["-g", "!*.ts", "-g", "!*.js", "TODO"] },
  { name: "-t", args: ["-t", "ts", "foo"] },
  { name: "-t repeated", args: ["-t", "js", "-t", "json", "foo"] },
  { name: "-U across lines", args: ["-U", "foo\\nmiddle"] },
  { name: "-U span, counted", args: ["-U", "-c", "start[\\s\\S]*?bar"] },
  { name: "-U with context", args: ["-U", "-C", "1", "middle\\nend"] },
  { name: "--hidden", args: ["--hidden", "hidden"] },
  { name: "--no-ignore", args: ["--no-ignore", "foo"] },
  { name: "flags combined", args: ["-i", "-w", "-C", "1", "-g", "*.md", "foo", "docs/"] },
  { name: "no match", args: ["qqqzzz"] },
  { name: "no match in a file", args: ["qqqzzz", "multi.txt"] },
  { name: "no match, counted", args: ["-c", "qqqzzz"] },
  // Found while writing these: JavaScript's ^ and $ also match around \r.
  { name: "empty lines, CRLF file", args: ["^$"] },
  { name: "end anchor, CRLF file", args: ["foo$", "crlf.txt"] },
];

describe.skipIf(!hasRg)("freshfs grep against rg", () => {
  let repo: TempRepo;
  beforeAll(async () => {
    repo = await repoTree(GREP_TREE, { lifetime: "file" });
  });

  it("has at least 15 cases", () => {
    expect(GREP_CASES.length).toBeGreaterThanOrEqual(15);
  });

  for (const c of GREP_CASES) {
    it(c.name, () => {
      const args = c.args.map((arg) => arg.replace("<ROOT>", repo.dir));
      const ours = freshfs(["grep", ...args], { cwd: repo.dir, home: repo.home });
      const theirs = spawnSync(
        "rg",
        [
          "--no-heading",
          "--with-filename",
          "--line-number",
          "--color",
          "never",
          "--sort",
          "path",
          ...args,
        ],
        {
          cwd: repo.dir,
          encoding: "utf8",
          env: isolatedGitEnv(repo.home),
          // A closed stdin: rg given no path would otherwise search a piped stdin.
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      expect(theirs.status === 0 || theirs.status === 1, theirs.stderr).toBe(true);
      expect(ours.stderr).toBe("");
      expect(ours.stdout).toBe(theirs.stdout);
      expect(ours.status).toBe(theirs.status);
    });
  }
});

describe("freshfs grep", () => {
  it("searches when Node runs with flags a worker thread cannot be given (heap sizes, --expose-gc)", async () => {
    const root = await tempTree({ "a.txt": "needle here\n", "b.txt": "nothing\n" });
    const run = spawnSync(
      process.execPath,
      ["--max-old-space-size=512", "--max-semi-space-size=1", "--expose-gc", BIN, "grep", "needle"],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(lines(run.stdout)).toEqual(["a.txt:1:needle here"]);
  });

  it("skips a 2 GiB sparse file, naming it on stderr, and exits as rg would for the rest", async () => {
    const dir = await tempTree({ "a.txt": "hello\n", "big.txt": "hello\n" });
    // Apparent size only: the file takes no disk, but reading it would take 2 GiB of memory.
    truncateSync(join(dir, "big.txt"), 2 ** 31);
    const note =
      "freshfs: big.txt: skipped, 2147483648 bytes is over the size bound (--max-filesize)\n";
    const found = freshfs(["grep", "hello"], { cwd: dir });
    expect(found.status, found.stderr).toBe(0);
    expect(found.stdout).toBe("a.txt:1:hello\n");
    expect(found.stderr).toBe(note);
    const none = freshfs(["grep", "nothing"], { cwd: dir });
    expect(none.status, none.stderr).toBe(1);
    expect(none.stdout).toBe("");
    expect(none.stderr).toBe(note);
    const named = freshfs(["grep", "hello", "big.txt"], { cwd: dir });
    expect(named.status, named.stderr).toBe(1);
    expect(named.stderr).toBe(note);
  });

  it("takes --max-filesize as rg does: bytes, or K, M, G as powers of 1024; larger files skipped", async () => {
    const dir = await tempTree({ "a.txt": `${"x".repeat(2047)}\n`, "b.txt": "x\n" });
    const at = freshfs(["grep", "-c", "x", "--max-filesize", "2K"], { cwd: dir });
    expect(at.status, at.stderr).toBe(0);
    expect(at.stdout).toBe("a.txt:1\nb.txt:1\n");
    expect(at.stderr).toBe("");
    const under = freshfs(["grep", "-c", "x", "--max-filesize", "2047"], { cwd: dir });
    expect(under.status, under.stderr).toBe(0);
    expect(under.stdout).toBe("b.txt:1\n");
    expect(under.stderr).toBe(
      "freshfs: a.txt: skipped, 2048 bytes is over the size bound (--max-filesize)\n",
    );
    const zero = freshfs(["grep", "-c", "x", "--max-filesize", "0"], { cwd: dir });
    expect(zero.status).toBe(1);
    expect(lines(zero.stderr)).toHaveLength(2);
  });

  it("exits 2 with one line on stderr when the search stops at --timeout", async () => {
    // (a+)+$, inside a lookahead (which the line prefilter cannot look into), backtracks from every start of the run of a's: the search outlives its timeout,
    // which is shorter than the per-file budget, so it stops partial rather than skip the file.
    const dir = await tempTree({ "evil.txt": `${"a".repeat(100_000)}!\n` });
    const partial =
      "freshfs: the search stopped at its timeout of 1000 ms, so the results are partial (--timeout MS gives it longer)\n";
    const run = freshfs(["grep", "-P", "--timeout", "1000", "(?=(a+)+$)"], { cwd: dir });
    expect(run.status, run.stderr).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(partial);
    const json = freshfs(["grep", "-P", "--json-result", "--timeout", "1000", "(?=(a+)+$)"], {
      cwd: dir,
    });
    expect(json.status, json.stderr).toBe(2);
    expect(JSON.parse(json.stdout).partial).toBe(true);
    expect(json.stderr).toBe(partial);
  });

  it("exits 2 on an invalid regex, with one line naming the pattern", async () => {
    const dir = await tempTree({ "a.txt": "foo(\n" });
    for (const pattern of ["foo(", "[a-"]) {
      const run = freshfs(["grep", pattern], { cwd: dir });
      const line = expectOneLineError(run);
      expect(line).toContain(pattern);
    }
  });

  it("exits 2 on -A without a number", async () => {
    const dir = await tempTree({ "a.txt": "foo\n" });
    expect(expectOneLineError(freshfs(["grep", "foo", "-A"], { cwd: dir }))).toContain("-A");
    expect(expectOneLineError(freshfs(["grep", "-A", "x", "foo"], { cwd: dir }))).toContain("'x'");
  });

  it("prints one JSON document with --json-result", async () => {
    const repo = await repoTree(GREP_TREE);
    const run = freshfs(["grep", "--json-result", "FIXME", "lib"], {
      cwd: repo.dir,
      home: repo.home,
    });
    expect(run.status, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.mode).toBe("content");
    expect(doc.lines.length).toBeGreaterThan(0);
    for (const line of doc.lines) {
      expect(line.path).toBe("index.js");
      expect(line.text).toContain("FIXME");
      expect(Number.isInteger(line.line)).toBe(true);
    }
    const counted = JSON.parse(
      freshfs(["grep", "--json-result", "-c", "foo"], { cwd: repo.dir, home: repo.home }).stdout,
    );
    expect(counted.mode).toBe("count");
    expect(counted.counts).toContainEqual({ path: "multi.txt", count: 2 });
    const files = JSON.parse(
      freshfs(["grep", "--json-result", "-l", "middle"], { cwd: repo.dir, home: repo.home }).stdout,
    );
    expect(files.files).toEqual(["multi.txt"]);
    const none = freshfs(["grep", "--json-result", "qqqzzz"], { cwd: repo.dir, home: repo.home });
    expect(none.status).toBe(1);
    expect(JSON.parse(none.stdout).lines).toEqual([]);
  });

  it("prints at most --limit results", async () => {
    const repo = await repoTree(GREP_TREE);
    const all = freshfs(["grep", "-l", "foo"], { cwd: repo.dir, home: repo.home });
    const limited = freshfs(["grep", "-l", "foo", "--limit", "2"], {
      cwd: repo.dir,
      home: repo.home,
    });
    expect(limited.status).toBe(0);
    expect(lines(all.stdout).length).toBeGreaterThan(2);
    expect(lines(limited.stdout)).toEqual(lines(all.stdout).slice(0, 2));
  });
});

// ---------------------------------------------------------------------------------------------
// why

const WHY_TREE: Tree = {
  ".gitignore": "build/\n*.log\n!keep.log\n",
  ".hidden/config.ts": "x\n",
  "build/out.js": "x\n",
  "debug.log": "x\n",
  "keep.log": "x\n",
  "README.md": "x\n",
  "src/app.ts": "x\n",
  "sub/.gitignore": "local.txt\n",
  "sub/local.txt": "x\n",
};

describe("freshfs why", () => {
  it("names the ignore file, line and pattern for an ignored file, as git check-ignore -v", async () => {
    const repo = await repoTree(WHY_TREE);
    for (const path of ["debug.log", "sub/local.txt"]) {
      const [git] = await checkIgnore(repo, [path]);
      expect(git?.ignored).toBe(true);
      const run = freshfs(["why", path], { cwd: repo.dir, home: repo.home });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toBe("");
      expect(run.stdout).toContain("ignored");
      expect(run.stdout).not.toContain("not ignored");
      expect(run.stdout).toContain(`${git?.match?.source}:${git?.match?.line}`);
      expect(run.stdout).toContain(git?.match?.pattern);
    }
  });

  it("names the directory rule for a file under an ignored directory", async () => {
    const repo = await repoTree(WHY_TREE);
    const [git] = await checkIgnore(repo, ["build/out.js"]);
    expect(git?.match).toEqual({ source: ".gitignore", line: 1, pattern: "build/" });
    const run = freshfs(["why", "build/out.js"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(".gitignore:1");
    expect(run.stdout).toContain("build/");
    expect(run.stdout).not.toContain("not ignored");
  });

  it("names the negation that re-includes a file, exit 1", async () => {
    const repo = await repoTree(WHY_TREE);
    const [git] = await checkIgnore(repo, ["keep.log"]);
    expect(git?.ignored).toBe(false);
    expect(git?.match).toEqual({ source: ".gitignore", line: 3, pattern: "!keep.log" });
    const run = freshfs(["why", "keep.log"], { cwd: repo.dir, home: repo.home });
    expect(run.status, run.stdout).toBe(1);
    expect(run.stdout).toContain("not ignored");
    expect(run.stdout).toContain(".gitignore:3");
    expect(run.stdout).toContain("!keep.log");
  });

  it("says no rule matches a file that is not ignored, exit 1", async () => {
    const repo = await repoTree(WHY_TREE);
    const [git] = await checkIgnore(repo, ["src/app.ts"]);
    expect(git?.match).toBeUndefined();
    const run = freshfs(["why", "src/app.ts"], { cwd: repo.dir, home: repo.home });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe("");
    expect(lines(run.stdout)).toHaveLength(1);
    expect(run.stdout).toContain("not ignored");
    expect(run.stdout).not.toContain(".gitignore");
  });

  it("notes that a dot file is listed only with --hidden", async () => {
    const repo = await repoTree(WHY_TREE);
    const run = freshfs(["why", ".hidden/config.ts"], { cwd: repo.dir, home: repo.home });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("not ignored");
    expect(run.stdout).toContain("hidden");
    expect(run.stdout).toContain("--hidden");
    const shown = freshfs(["why", ".hidden/config.ts", "--hidden"], {
      cwd: repo.dir,
      home: repo.home,
    });
    expect(shown.stdout).not.toContain("--hidden");
  });

  it("prints one JSON document with --json-result", async () => {
    const repo = await repoTree(WHY_TREE);
    const run = freshfs(["why", "debug.log", "--json"], { cwd: repo.dir, home: repo.home });
    expect(run.status).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.ignored).toBe(true);
    expect(doc.rule.line).toBe(2);
    expect(doc.rule.pattern).toBe("*.log");
    const not = JSON.parse(
      freshfs(["why", "README.md", "--json"], { cwd: repo.dir, home: repo.home }).stdout,
    );
    expect(not.ignored).toBe(false);
  });

  it("answers as git does for a path given relative to a subdirectory", async () => {
    const repo = await repoTree(WHY_TREE);
    const cwd = join(repo.dir, "src");
    const git = spawnSync("git", ["check-ignore", "-v", "../build/out.js"], {
      cwd,
      encoding: "utf8",
      env: isolatedGitEnv(repo.home),
    });
    expect(git.status).toBe(0);
    expect(git.stdout).toContain(".gitignore:1:build/");
    const run = freshfs(["why", "../build/out.js"], { cwd, home: repo.home });
    expect(run.stdout).not.toContain("not ignored");
    expect(run.stdout).toContain(":1: build/");
    expect(run.status).toBe(0);
  });

  it("answers for an absolute path asked from outside the repository", async () => {
    const repo = await repoTree(WHY_TREE);
    const direct = freshfs(["why", join(repo.dir, "debug.log")], {
      cwd: repo.home,
      home: repo.home,
    });
    expect(direct.status, direct.stdout).toBe(0);
    expect(direct.stdout).toContain("*.log");
    const underDir = freshfs(["why", join(repo.dir, "build", "out.js")], {
      cwd: repo.home,
      home: repo.home,
    });
    expect(underDir.stdout).not.toContain("not ignored");
    expect(underDir.stdout).toContain("build/");
    expect(underDir.status).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// help and errors

describe("--help", () => {
  for (const command of ["files", "glob", "find", "grep", "why", "mcp"]) {
    it(`${command} --help exits 0 with its usage`, async () => {
      const dir = await tempTree({ "a.txt": "x\n" });
      for (const flag of ["--help", "-h"]) {
        const run = freshfs([command, flag], { cwd: dir });
        expect(run.status, `${command} ${flag}: ${run.stderr}`).toBe(0);
        expect(run.stderr).toBe("");
        expect(run.stdout.startsWith(`Usage: freshfs ${command}`), run.stdout).toBe(true);
      }
    });
  }

  it("grep --help lists ripgrep's flags it takes", () => {
    const run = freshfs(["grep", "--help"]);
    for (const flag of ["-i", "-S", "-F", "-w", "-c", "-l", "-A", "-B", "-C", "-g", "-t", "-U"]) {
      expect(run.stdout).toMatch(new RegExp(`(^|[\\s,])${flag}\\b`, "m"));
    }
    expect(run.stdout).toContain("--max-filesize NUM[K|M|G]");
    expect(run.stdout).toContain("--timeout MS");
  });
});

describe("errors: one line on stderr, exit 2, nothing on stdout", () => {
  const CASES: readonly { name: string; args: readonly string[]; names: readonly string[] }[] = [
    { name: "unknown command", args: ["frobnicate"], names: ["frobnicate"] },
    { name: "unknown flag", args: ["files", "--bogus"], names: ["--bogus"] },
    { name: "grep flag on glob", args: ["glob", "-i", "*.ts"], names: ["-i", "glob"] },
    { name: "grep flag with a value on glob", args: ["glob", "-C", "2", "*.ts"], names: ["-C"] },
    { name: "grep flag on files", args: ["files", "-g", "*.ts"], names: ["-g", "files"] },
    { name: "grep flag on find", args: ["find", "-l", "a"], names: ["-l", "find"] },
    { name: "grep flag on why", args: ["why", "-w", "a"], names: ["-w", "why"] },
    { name: "glob missing its pattern", args: ["glob"], names: ["PATTERN"] },
    { name: "find missing its query", args: ["find"], names: ["QUERY"] },
    { name: "grep missing its pattern", args: ["grep"], names: ["PATTERN"] },
    { name: "why missing its path", args: ["why"], names: ["PATH"] },
    { name: "glob extra operand", args: ["glob", "*.ts", ".", "extra"], names: ["extra"] },
    { name: "find extra operand", args: ["find", "a", ".", "extra"], names: ["extra"] },
    { name: "why extra operand", args: ["why", "a.txt", "extra"], names: ["extra"] },
    { name: "files extra operand", args: ["files", ".", "extra"], names: ["extra"] },
    { name: "mcp operand", args: ["mcp", "extra"], names: ["extra"] },
    { name: "files --limit abc", args: ["files", "--limit", "abc"], names: ["--limit", "abc"] },
    { name: "glob --limit abc", args: ["glob", "*", "--limit", "abc"], names: ["--limit", "abc"] },
    { name: "grep --limit abc", args: ["grep", "x", "--limit", "abc"], names: ["--limit", "abc"] },
    { name: "--limit negative", args: ["files", "--limit", "-3"], names: ["--limit"] },
    { name: "-C negative", args: ["grep", "-C", "-1", "x"], names: ["-C"] },
    { name: "missing DIR", args: ["glob", "*", "no-such-dir"], names: ["no-such-dir"] },
    { name: "grep missing DIR", args: ["grep", "x", "no-such-dir"], names: ["no-such-dir"] },
    { name: "unknown type", args: ["grep", "-t", "nosuchtype", "x"], names: ["nosuchtype"] },
    ...["1k", "1.5M", "M", "1KB", "99999999999G"].map((size) => ({
      name: `--max-filesize ${size}`,
      args: ["grep", "x", "--max-filesize", size],
      names: ["--max-filesize", `'${size}'`],
    })),
    { name: "--timeout abc", args: ["grep", "x", "--timeout", "abc"], names: ["--timeout", "abc"] },
    {
      name: "grep size bound on files",
      args: ["files", "--max-filesize", "1K"],
      names: ["--max-filesize", "files"],
    },
    { name: "grep timeout on glob", args: ["glob", "*", "--timeout", "5"], names: ["--timeout"] },
  ];
  for (const c of CASES) {
    it(c.name, async () => {
      const dir = await tempTree({ "a.txt": "x\n" });
      const line = expectOneLineError(freshfs(c.args, { cwd: dir }));
      for (const name of c.names) expect(line).toContain(name);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// progress

describe("progress line", () => {
  it("writes nothing to stderr when stderr is not a terminal, on a tree of thousands of files", async () => {
    const tree: Tree = {};
    for (let d = 0; d < 30; d++) {
      for (let f = 0; f < 100; f++) tree[`d${d}/f${f}.txt`] = `line ${f} foo\nother\n`;
    }
    const repo = await repoTree(tree);
    const runs: [readonly string[], number][] = [
      [["files"], 3000],
      [["glob", "*.txt"], 3000],
      [["grep", "foo"], 3000],
      [["grep", "-c", "other"], 3000],
      [["find", "f99"], -1],
    ];
    for (const [args, expected] of runs) {
      const run = freshfs(args, { cwd: repo.dir, home: repo.home });
      expect(run.status, args.join(" ")).toBe(0);
      expect(run.stderr, args.join(" ")).toBe("");
      if (expected >= 0) expect(lines(run.stdout), args.join(" ")).toHaveLength(expected);
    }
  });
});

describe("review regressions", () => {
  it("exits quietly with status 0 when its reader closes the pipe early", async () => {
    const dir = await tempTree(
      Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`f${i}.txt`, "foo\n".repeat(50)])),
    );
    const run = spawnSync("sh", ["-c", `"${process.execPath}" "${BIN}" grep foo | head -1`], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(lines(run.stdout)).toHaveLength(1);
    expect(run.stderr).toBe("");
  });

  it("skips a file past the library's bound, naming it, and searches it with --max-filesize", async () => {
    const filler = `${"x".repeat(80)}\n`.repeat(220_000);
    const dir = await tempTree({ "big.log": `${filler}needle\n` });
    const bytes = filler.length + "needle\n".length;
    const skipped = freshfs(["grep", "-c", "needle"], { cwd: dir });
    expect(skipped.status, skipped.stderr).toBe(1);
    expect(skipped.stdout).toBe("");
    expect(skipped.stderr).toBe(
      `freshfs: big.log: skipped, ${bytes} bytes is over the size bound (--max-filesize)\n`,
    );
    const run = freshfs(["grep", "-c", "needle", "--max-filesize", "32M"], { cwd: dir });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe("big.log:1\n");
    expect(run.stderr).toBe("");
  });

  it("why: a file in a repository nested under an ignored directory is ignored, as git says", async () => {
    const repo = await repoTree({ ".gitignore": "vendor/\n", "vendor/lib/a.js": "x\n" });
    await runGit(["init", "-q"], { cwd: join(repo.dir, "vendor", "lib"), home: repo.home });
    const run = freshfs(["why", "vendor/lib/a.js"], { cwd: repo.dir, home: repo.home });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(".gitignore:1: vendor/");
    const gone = freshfs(["why", "gone/"], { cwd: repo.dir, home: repo.home });
    expect(gone.status).toBe(1);
  });
});

describe.skipIf(!hasRg)("grep's -g and -t override ignore rules and hiddenness as rg's do", () => {
  const cases = [
    ["-g", "*.log", "foo"],
    ["-g", "*.txt", "foo"],
    ["-t", "txt", "foo"],
    ["-g", "!a.txt", "foo"],
    ["-g", "*.log", "-g", "!app.log", "foo"],
    ["-g", "*.{log,txt}", "-c", "foo"],
    ["foo"],
  ];
  for (const args of cases) {
    it(args.join(" "), async () => {
      const repo = await repoTree({
        ".gitignore": "*.log\nbuild/\n",
        "app.log": "foo\n",
        ".env.txt": "foo\n",
        "a.txt": "foo\n",
        "build/x.log": "foo\n",
        "sub/b.txt": "foo\n",
        "sub/.h.txt": "foo\n",
        ".hidden/c.txt": "foo\n",
      });
      const rg = spawnSync(
        "rg",
        [
          "--no-heading",
          "--with-filename",
          "--line-number",
          "--color",
          "never",
          "--sort",
          "path",
          ...args,
        ],
        // stdin closed: rg searches a piped stdin when given no path.
        {
          cwd: repo.dir,
          encoding: "utf8",
          env: isolatedGitEnv(repo.home),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const ours = freshfs(["grep", ...args], { cwd: repo.dir, home: repo.home });
      expect(ours.stdout).toBe(rg.stdout);
      expect(ours.status).toBe(rg.status);
    });
  }
});

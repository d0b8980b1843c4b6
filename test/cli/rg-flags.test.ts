/**
 * `freshfs grep` with ripgrep's flags: every flag agents reach for, alone and in the
 * combinations agents type, run by real rg 13 and by the built CLI on one git repository; the
 * same stdout and exit status. rg is run with freshfs's printing defaults first
 * (`--no-heading --with-filename --line-number --sort path`), which a case's own flags override,
 * as rg lets a later flag win. `--json` is compared with the timings taken out. Each case runs
 * through the native relay as well (`native/relay/relay.c`), answered by the daemon.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ISSUE_FLAGS } from "../grep/rg-conformance/flags.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";
import { relayed, relayRuns } from "../helpers/relay.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const hasRg = spawnSync("rg", ["--version"]).status === 0;
if (!hasRg)
  console.warn("SKIPPED: the rg flag table needs ripgrep (`apt-get install -y ripgrep`).");

const DEFAULTS = ["--no-heading", "--with-filename", "--line-number", "--sort", "path"];

/** rg 13 refuses a second `--sort` (it reads the pattern as the flag's second value). */
function defaultsFor(args: readonly string[]): readonly string[] {
  const sorts = args.some((arg) => /^--sortr?(=|$)/.test(arg));
  return sorts ? DEFAULTS.slice(0, 3) : DEFAULTS;
}

const TREE: Record<string, string | Uint8Array> = {
  ".gitignore": "*.log\nbuild/\n",
  "a.txt": "foo bar\nbaz\nfoo foo\nqux\nFOO upper\n",
  "b.txt": "nothing here\n",
  "long.txt": `short foo\n${"x".repeat(60)} foo ${"y".repeat(20)}\nafter\n`,
  "src/main.rs": 'fn main() {\n    println!("foo");\n}\n',
  "src/lib.ts": "export const foo = 1;\n  // TODO: foo bar\nexport const bar = 2;\n",
  "src/deep/x/y.py": "foo = 'deep'\n",
  "docs/README.MD": "# Foo\nfoo in docs\n",
  ".hidden/h.txt": "foo hidden\n",
  ".dot.txt": "foo dot\n",
  "app.log": "foo log\n",
  "build/out.txt": "foo built\n",
  "bin.dat": new Uint8Array([0x66, 0x6f, 0x6f, 0x00, 0x0a, 0x62, 0x61, 0x72, 0x0a]),
  "pats.txt": "baz\nqux\n",
  "none.pats": "",
  "crlf.txt": "one foo\r\ntwo\r\n",
  "multi.txt": "start foo\nmiddle\nend bar\n",
  "uni.txt": "straße foo\nΑθήνα bar\n",
};

const CASES: readonly (readonly string[])[] = [
  ["-e", "foo"],
  ["-e", "baz", "-e", "qux"],
  ["--regexp=baz", "--regexp", "qux"],
  ["-e", "baz", "-e", "qux", "-c"],
  ["-f", "pats.txt"],
  ["-f", "none.pats"],
  ["-f", "pats.txt", "-e", "nothing"],
  ["-v", "foo", "a.txt"],
  ["-v", "-c", "foo"],
  ["--invert-match", "-l", "o"],
  ["-v", "-C", "1", "baz", "a.txt"],
  ["-o", "fo+"],
  ["-o", "-i", "foo", "a.txt"],
  ["--only-matching", "--column", "foo", "a.txt"],
  ["-o", "-C", "2", "baz", "a.txt"],
  ["-m", "1", "foo"],
  ["--max-count=2", "-c", "foo"],
  ["-m", "1", "-A", "2", "foo", "a.txt"],
  ["-N", "foo"],
  ["--no-line-number", "-n", "foo", "a.txt"],
  ["-I", "foo"],
  ["--no-filename", "-c", "foo"],
  ["-H", "foo", "a.txt"],
  ["-I", "-H", "foo", "b.txt", "a.txt"],
  ["-l", "foo"],
  ["--files-with-matches", "bar"],
  ["--files-without-match", "foo"],
  ["-c", "foo"],
  ["--count", "o"],
  ["--count-matches", "foo"],
  ["--count-matches", "-v", "foo"],
  ["-c", "-o", "foo"],
  ["-x", "baz"],
  ["--line-regexp", "-F", "foo foo"],
  ["-x", "-e", "baz", "-e", "qux", "a.txt"],
  ["-x", "-w", "foo"],
  ["-r", "X", "foo"],
  ["--replace", "<$0>", "fo+", "a.txt"],
  ["-r", "$2-$1", "(f)(o)o", "a.txt"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: rg's replacement syntax, not a template.
  ["-r", "${n}!", "(?P<n>ba)[rz]"],
  ["-o", "-r", "[$0]", "o+", "a.txt"],
  ["-L", "foo"],
  ["--follow", "-c", "foo"],
  ["-t", "rust", "foo"],
  ["-T", "rust", "foo"],
  ["--type-not", "txt", "-T", "rust", "foo"],
  ["-t", "txt", "-T", "txt", "foo"],
  ["-t", "all", "foo"],
  ["-T", "all", "foo"],
  ["--type=py", "foo"],
  ["--max-depth", "1", "foo"],
  ["--max-depth=2", "-l", "foo"],
  ["--maxdepth", "0", "foo"],
  ["-.", "foo"],
  ["--hidden", "-l", "foo"],
  ["-u", "-l", "foo"],
  ["-uu", "-l", "foo"],
  ["-uuu", "-l", "foo"],
  ["-u", "-u", "-c", "foo"],
  ["--glob-case-insensitive", "-g", "*.md", "foo"],
  ["--iglob", "*.MD", "foo"],
  ["--iglob", "readme.*", "-l", "foo"],
  ["-g", "*.md", "foo"],
  ["--sort", "path", "foo"],
  ["--sortr", "path", "foo"],
  ["--sort=modified", "-l", "foo"],
  ["--sortr", "modified", "-l", "foo"],
  ["-0", "-l", "foo"],
  ["--null", "foo", "a.txt"],
  ["-0", "-c", "foo"],
  ["--column", "foo"],
  ["--column", "-o", "o", "a.txt"],
  ["--vimgrep", "foo"],
  ["--vimgrep", "-o", "fo", "a.txt"],
  ["--files"],
  ["--files", "src"],
  ["--files", "-g", "*.txt"],
  ["--files", "-t", "rust", "-0"],
  ["--files", "--hidden", "-g", "*.txt"],
  ["--files", "-g", "*.nothing"],
  ["-M", "20", "foo", "long.txt"],
  ["--max-columns=20", "-C", "1", "foo", "long.txt"],
  ["-M", "20", "--max-columns-preview", "foo", "long.txt"],
  ["foo", "a.txt", "b.txt"],
  ["foo", "src", "docs"],
  ["-c", "foo", "a.txt", "src"],
  ["foo", "a.txt", "no-such-file"],
  ["--ignore-case", "foo", "a.txt"],
  ["--smart-case", "foo", "a.txt"],
  ["--case-sensitive", "-i", "foo", "a.txt"],
  ["-i", "--case-sensitive", "FOO", "a.txt"],
  ["--fixed-strings", "foo(", "a.txt"],
  ["--word-regexp", "foo"],
  ["--context=1", "baz", "a.txt"],
  ["--after-context", "1", "--before-context=1", "qux", "a.txt"],
  ["-A1", "baz", "a.txt"],
  ["-iw", "foo"],
  ["-ic", "foo"],
  ["--heading", "foo"],
  ["--heading", "-c", "foo"],
  ["--trim", "TODO"],
  ["--context-separator", "XX", "-C", "0", "-A", "0", "foo", "a.txt"],
  ["--context-separator=@@", "-A", "0", "-B", "1", "qux", "a.txt"],
  ["--field-match-separator", "|", "foo", "a.txt"],
  ["--field-context-separator=#", "-C", "1", "baz", "a.txt"],
  ["-q", "foo"],
  ["--quiet", "nomatchanywhere"],
  ["-a", "foo", "bin.dat"],
  ["--text", "-c", "bar"],
  ["-U", "foo\\nmiddle"],
  ["-U", "--multiline-dotall", "start.+end"],
  ["-U", "-o", "foo\\nmid"],
  ["--no-messages", "foo", "no-such-file"],
  ["--color", "never", "foo", "a.txt"],
  ["--no-config", "-j", "1", "foo", "a.txt"],
  ["--", "-foo"],
  ["foo", "--", "a.txt"],
  ["--no-ignore", "-l", "foo"],
  ["-e", "", "b.txt"],
  ["\\bstra\\w+", "uni.txt"],
  ["foo$", "crlf.txt"],
];

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  home: string,
  daemon = false,
): Ran {
  const ran = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    env: { ...isolatedGitEnv(home), ...(daemon ? { FRESHFS_DAEMON: "1" } : {}) },
    // A closed stdin: rg given no path would otherwise search a piped stdin.
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 30_000,
  });
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

/** rg's JSON Lines with what cannot be equal (the time taken) set to zero. */
function withoutTimings(stdout: string): string {
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) =>
      JSON.stringify(JSON.parse(line), (key, value) =>
        key === "elapsed" || key === "elapsed_total" ? 0 : value,
      ),
    )
    .join("\n");
}

describe.skipIf(!hasRg)("freshfs grep with rg's flags, against rg", () => {
  let dir: string;
  let home: string;
  beforeAll(async () => {
    dir = await tempTree(TREE, { lifetime: "file" });
    home = await tempTree({}, { lifetime: "file" });
    expect(run("git", ["init", "-q"], dir, home).status).toBe(0);
    mkdirSync(join(dir, "elsewhere"));
    writeFileSync(join(dir, "elsewhere/.ignore"), "");
    symlinkSync("src", join(dir, "linked-src"));
    symlinkSync("a.txt", join(dir, "linked-a.txt"));
    // Distinct mtimes, not in path order, for --sort modified.
    const times: [string, number][] = [
      ["b.txt", 1_000],
      ["a.txt", 3_000],
      ["src/lib.ts", 2_000],
      ["docs/README.MD", 4_000],
      ["long.txt", 500],
      ["src/main.rs", 5_000],
      ["src/deep/x/y.py", 6_000],
      ["multi.txt", 7_000],
      ["uni.txt", 8_000],
      ["crlf.txt", 9_000],
      ["pats.txt", 10_000],
      ["none.pats", 11_000],
      ["bin.dat", 12_000],
      ["src/deep/x", 13_000],
      ["src/deep", 14_000],
      ["docs", 15_000],
      ["src", 2_500],
    ];
    for (const [path, at] of times) utimesSync(join(dir, path), at, at);
    // The daemon the relay asks (the tests' own runtime directory: killed after the file).
    if (relayRuns) {
      expect(run(process.execPath, [BIN, "daemon", "start"], dir, home, true).status).toBe(0);
    }
  });

  it("covers every flag agents reach for", () => {
    const used = new Set(CASES.flat().filter((arg) => arg.startsWith("-")));
    // --type-list and --json have tests of their own below; -uu and -uuu are -u's levels.
    const named = ISSUE_FLAGS.filter((flag) => flag !== "--type-list" && flag !== "--json");
    for (const flag of [...named, "-uu", "-uuu"]) expect(used.has(flag), flag).toBe(true);
  });

  for (const args of CASES) {
    it(args.join(" "), () => {
      const theirs = run("rg", [...defaultsFor(args), ...args], dir, home);
      const ours = run(process.execPath, [BIN, "grep", ...args], dir, home);
      expect(ours.status, `${ours.stderr}\nrg: ${theirs.stderr}`).toBe(theirs.status);
      expect(ours.stdout).toBe(theirs.stdout);
      // The same command through the native relay, answered by the daemon Node's calls started.
      if (!relayRuns) return;
      const relayedRun = relayed(["grep", ...args], dir, {
        ...isolatedGitEnv(home),
        FRESHFS_DAEMON: "1",
      });
      expect(relayedRun.stderr, "through the relay").toBe(ours.stderr);
      expect(relayedRun.status, "through the relay").toBe(theirs.status);
      expect(relayedRun.stdout, "through the relay").toBe(theirs.stdout);
    });
  }

  for (const args of [
    ["--json", "foo"],
    ["--json", "-C", "1", "baz", "a.txt"],
    ["--json", "-i", "straße|αθήνα", "uni.txt"],
    ["--json", "nomatchanywhere"],
  ]) {
    it(args.join(" "), () => {
      const theirs = run("rg", [...DEFAULTS, ...args], dir, home);
      const ours = run(process.execPath, [BIN, "grep", ...args], dir, home);
      expect(ours.status, ours.stderr).toBe(theirs.status);
      expect(withoutTimings(ours.stdout)).toBe(withoutTimings(theirs.stdout));
    });
  }

  it("-f - reads the patterns from stdin, as rg does", () => {
    const input = "baz\nqux\n";
    const options = { cwd: dir, encoding: "utf8" as const, env: isolatedGitEnv(home), input };
    const theirs = spawnSync("rg", [...DEFAULTS, "-f", "-", "a.txt"], options);
    const ours = spawnSync(process.execPath, [BIN, "grep", "-f", "-", "a.txt"], options);
    expect(ours.stdout).toBe(theirs.stdout);
    expect(ours.stdout).toBe("a.txt:2:baz\na.txt:4:qux\n");
  });

  it("--type-list is rg 13's", () => {
    const theirs = run("rg", ["--type-list"], dir, home);
    const ours = run(process.execPath, [BIN, "grep", "--type-list"], dir, home);
    expect(ours.stdout).toBe(theirs.stdout);
    expect(ours.status).toBe(0);
  });

  it("names an rg flag it does not have, and an unknown one, in one line, exit 2", () => {
    for (const [args, words] of [
      [["--pre", "cat", "foo"], "rg's --pre is not supported"],
      [["--nope", "foo"], "unknown option --nope for grep"],
      [["-A"], "-A needs a value"],
      [["--sort", "size", "foo"], "--sort takes path, modified"],
      [["--json", "-c", "foo"], "--json cannot be used with -c"],
      [["--color", "always", "foo"], "prints no colors"],
    ] as const) {
      const ours = run(process.execPath, [BIN, "grep", ...args], dir, home);
      expect(ours.status).toBe(2);
      expect(ours.stdout).toBe("");
      expect(ours.stderr).toContain(words);
      expect(ours.stderr.trimEnd().split("\n")).toHaveLength(1);
    }
  });
});

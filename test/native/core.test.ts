/**
 * The native search core: the committed addon is built from the committed sources; grep gives
 * the same answers on it as on the JavaScript workers (binary modes, UTF-16, byte order marks,
 * `-m` with context, counts, unreadable and oversized files); hostile input (a 2 GiB file, a
 * FIFO, a file cut short while it is read, a pattern built to blow up, a panic, a cancelled
 * search) is bounded and leaves the process serving; and where the addon cannot load, grep runs
 * on the workers after one warning.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  type Dirent,
  ftruncateSync,
  lstatSync,
  openSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sourceDigest } from "../../scripts/native-digest.mjs";
import { type GrepOptions, grep } from "../../src/index.js";
import { DIRECTORY_KINDS, type NativeRequest, nativeCore } from "../../src/native/core.js";
import { repeated } from "../../src/search/grep/pattern.js";
import { GREP_WORKERS } from "../../src/search/grep/pool.js";
import { tempTree } from "../helpers/fs.js";
import { peakBytes, threads } from "../helpers/proc.js";

const core = nativeCore();
const onCore = core ? describe : describe.skip;
const saved = process.env.FRESHFS_NATIVE;

afterEach(() => {
  if (saved === undefined) delete process.env.FRESHFS_NATIVE;
  else process.env.FRESHFS_NATIVE = saved;
});

/** A request for every file under `root` as the grep layer would make it. */
function request(
  root: string,
  paths: string[],
  patterns: string[],
  extra: Partial<NativeRequest> = {},
): NativeRequest {
  return {
    prefix: Buffer.from(`${root}/`),
    paths: Buffer.from(paths.join("\0")),
    patterns,
    ignoreCase: false,
    smartCase: false,
    word: false,
    fixedStrings: false,
    invert: false,
    lineRegexp: false,
    maxCount: Number.POSITIVE_INFINITY,
    before: 0,
    after: 0,
    binary: "skip",
    threads: 2,
    timeoutMs: Number.POSITIVE_INFINITY,
    maxFileSize: 16 * 1024 * 1024,
    mode: "content",
    countMatches: false,
    followLinks: false,
    maxAnswerBytes: 1 << 30,
    ...extra,
  };
}

describe("the committed addon", () => {
  it("is built from the committed sources (npm run build:native rebuilds it)", () => {
    if (!core) return expect.soft(process.env.FRESHFS_NATIVE).toBe("0");
    const addon = execFileSync(process.execPath, [
      "-e",
      `process.stdout.write(require(${JSON.stringify(join(import.meta.dirname, "../../prebuilds/linux-x64/freshfs-core.node"))}).sourceDigest)`,
    ]).toString();
    expect(addon).toBe(sourceDigest());
  });
});

/** Both paths' answer to the same grep, with what tells them apart taken out. */
async function both(pattern: string | string[], options: GrepOptions) {
  process.env.FRESHFS_NATIVE = "0";
  const workers = await grep(pattern, options);
  delete process.env.FRESHFS_NATIVE;
  const native = await grep(pattern, options);
  return { workers, native };
}

onCore("grep on the core answers as on the workers", () => {
  const text = [
    "alpha PM_RESUME one",
    "beta pm_resume two",
    "gamma PM_RESUMED three",
    "delta four",
    "PM_RESUME PM_RESUME five",
    "epsilon six",
    "zeta PM_RESUME seven",
    "eta eight",
  ].join("\n");
  const tree = async () =>
    tempTree({
      "a.txt": `${text}\n`,
      "crlf.txt": text.replaceAll("\n", "\r\n"),
      "bom.txt": `\ufeff${text}`,
      "utf16.txt": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]),
      "early-nul.bin": Buffer.concat([Buffer.from("PM_RESUME\n\0\n"), Buffer.from(text)]),
      "late-nul.bin": Buffer.concat([
        Buffer.from(`${"filler line\n".repeat(12_000)}PM_RESUME before\n`),
        Buffer.from([0]),
        Buffer.from(`\n${text}\n`),
      ]),
      "late-nul-no-match.bin": Buffer.concat([
        Buffer.from("filler line\n".repeat(1000)),
        Buffer.from([0]),
        Buffer.from("\nnothing\n"),
      ]),
      "big.txt": `${"x".repeat(2000)}\n`.repeat(100).concat("PM_RESUME at the end\n"),
      "sub/é ü.txt": "PM_RESUME in a Unicode name\nλ-calculus Ω\n",
      "none.txt": "nothing here\n",
    });
  const cases: [string, string | string[], GrepOptions][] = [
    ["a literal", "PM_RESUME", {}],
    ["-i", "PM_RESUME", { ignoreCase: true }],
    ["-S lower", "pm_resume", { smartCase: true }],
    ["-w", "PM_RESUME", { word: true }],
    ["-x", "eta eight", { lineRegexp: true }],
    ["-F with specials", "PM_RESUME.*", { fixedStrings: true }],
    ["several patterns", ["alpha", "^zeta", "Ω"], {}],
    ["a class", "[A-Z]+_RESUME", {}],
    ["\\p{Greek}", "\\p{Greek}", {}],
    ["-v", "PM_RESUME", { invert: true }],
    ["-m 1 -A 2", "PM_RESUME", { maxCount: 1, after: 2 }],
    ["-m 2 -B 1 -A 3", "PM_RESUME", { maxCount: 2, before: 1, after: 3 }],
    ["-C 1", "delta", { before: 1, after: 1 }],
    ["-c", "PM_RESUME", { outputMode: "count" }],
    ["--count-matches", "PM_RESUME", { outputMode: "count", countMatches: true }],
    ["-l", "PM_RESUME", { outputMode: "files_with_matches" }],
    ["--files-without-match", "PM_RESUME", { outputMode: "files_without_match" }],
    ["binary quit", "PM_RESUME", { binary: "quit" }],
    ["binary report", "PM_RESUME", { binary: "report" }],
    ["binary report, count", "PM_RESUME", { binary: "report", outputMode: "count" }],
    ["-a", "PM_RESUME", { text: true }],
    ["a size bound", "PM_RESUME", { maxFileSize: 1000 }],
    ["an empty match", "^", { outputMode: "count" }],
    // On the workers (a word boundary), with the same answer.
    ["a word boundary", "\\bPM_RESUME\\b", {}],
  ];
  it.each(cases)("%s", async (_name, pattern, options) => {
    const root = await tree();
    const { workers, native } = await both(pattern, { path: root, ...options });
    expect(native).toEqual(workers);
  });

  it("an unreadable file is reported as the workers report it", async () => {
    const root = await tempTree({ "ok.txt": "PM_RESUME\n", "locked.txt": "PM_RESUME\n" });
    const { chmodSync } = await import("node:fs");
    chmodSync(join(root, "locked.txt"), 0);
    const { workers, native } = await both("PM_RESUME", { path: root });
    expect(native).toEqual(workers);
  });
});

onCore("the core reads a directory as Node does", () => {
  it("gives the same names, kinds, device and inode, in byte order", async () => {
    const root = await tempTree({ "b.txt": "", "a/x.txt": "", "é.txt": "", "Z.md": "" });
    symlinkSync("b.txt", join(root, "link"));
    execFileSync("mkfifo", [join(root, "fifo")]);
    writeFileSync(
      Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0x66, 0xff, 0x2e, 0x74])]),
      "",
    );
    const read = core?.readDirectory(Buffer.from(root), 1 << 20);
    const node = readdirSync(root, { withFileTypes: true });
    const kind = (d: Dirent) =>
      d.isFile() ? "file" : d.isDirectory() ? "dir" : d.isSymbolicLink() ? "symlink" : "other";
    expect(
      read?.names?.map((name, i) => `${name} ${DIRECTORY_KINDS[read.kinds[i] as number]}`),
    ).toEqual(
      node
        .map((d) => `${d.name} ${kind(d)}`)
        .sort((a, b) =>
          Buffer.compare(
            Buffer.from(a.split(" ")[0] as string),
            Buffer.from(b.split(" ")[0] as string),
          ),
        ),
    );
    const stats = lstatSync(root);
    expect([read?.dev, read?.ino, read?.size]).toEqual([stats.dev, stats.ino, stats.size]);
    expect(core?.readDirectory(Buffer.from(root), 0).names).toBeUndefined();
  });

  it("refuses a link (not followed), a file or a missing path as Node's fs errors do", async () => {
    const root = await tempTree({ "dir/a.txt": "", "file.txt": "" });
    symlinkSync("dir", join(root, "link"));
    const code = (path: string) => {
      try {
        core?.readDirectory(Buffer.from(join(root, path)), 1 << 20);
        return "read";
      } catch (error) {
        return (error as NodeJS.ErrnoException).code;
      }
    };
    // O_DIRECTORY|O_NOFOLLOW refuses the link itself as not a directory (Linux: ENOTDIR).
    expect([code("dir"), code("link"), code("file.txt"), code("gone")]).toEqual([
      "read",
      "ENOTDIR",
      "ENOTDIR",
      "ENOENT",
    ]);
  });
});

onCore("the ASCII lane answers as the pattern's own matcher", () => {
  // A file over 4 KiB is scanned in two halves at once, which meet at a line break near its
  // middle: matches are put before, at and after that line, and in one half only.
  const filler = "ab cd ef\n".repeat(1200);
  const tree = async () =>
    tempTree({
      "second-half.txt": `${filler}${filler}alpha bravo charlie\n`,
      "first-half.txt": `alpha bravo charlie\n${filler}${filler}`,
      "both-halves.txt": `${filler}delta echoes\n${filler}foxtrot golfs\n${filler}`,
      "middle.txt": `${filler}middle lines here\n${filler}`,
      "no-break.txt": `${"abcde ".repeat(2000)}\n`,
      "short.txt": "hotel india juliet\nkilo\n",
      "none.txt": filler,
      "greek.txt": "plain\nλόγος here\nmore plain\n",
      "folded.txt": "kSa\n\u212a\u017fB\nxyz\n",
      "empty.txt": "",
    });
  const cases: [string, string, GrepOptions][] = [
    ["two words", "\\w{5}\\s+\\w{5}", {}],
    ["two words, -v -c", "\\w{5}\\s+\\w{5}", { invert: true, outputMode: "count" }],
    ["two words, context and -m", "\\w{5}\\s+\\w{5}", { before: 1, after: 2, maxCount: 1 }],
    ["two words, --count-matches", "\\w{5}", { outputMode: "count", countMatches: true }],
    ["\\p{Greek} (no ASCII member)", "\\p{Greek}", {}],
    ["\\p{Greek}, -v", "\\p{Greek}", { invert: true, outputMode: "count" }],
    ["non-ASCII bytes only", "[^\\x00-\\x7f]+", {}],
    ["a case-folded class (Kelvin sign, long s)", "[\u212a\u017fa-b]{3}", { ignoreCase: true }],
    ["an empty match", "\\w*", { outputMode: "count" }],
    ["a dot", ".{18}", {}],
    ["-l", "\\w{6}\\s", { outputMode: "files_with_matches" }],
  ];
  it.each(cases)("%s", async (_name, pattern, options) => {
    const root = await tree();
    const { workers, native } = await both(pattern, { path: root, ...options });
    expect(native).toEqual(workers);
  });

  it("a pattern whose DFA would grow exponentially is not built for it, in bounded memory", async () => {
    const root = await tempTree({ "a.txt": "abc def\n".repeat(1000) });
    const addon = join(import.meta.dirname, "../../prebuilds/linux-x64/freshfs-core.node");
    // Built whole, this DFA took 550 ms and 131 MB; the lane's 256-state probe gives up at once.
    const script = `const core = require(${JSON.stringify(addon)});
      const status = () => require("fs").readFileSync("/proc/self/status", "utf8");
      const peak = () => Number(/VmHWM:\\s+(\\d+)/.exec(status())[1]) * 1024;
      const options = Buffer.alloc(18 * 8);
      [0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 2, 0, -1, 2, 0, 0, -1, 0].forEach((v, i) => options.writeDoubleLE(v, i * 8));
      const before = peak();
      core.search(Buffer.from(${JSON.stringify(`${root}/`)}), Buffer.from("a.txt"), [process.argv[1]], options, new Uint8Array(1))
        .then((answer) => console.log(JSON.stringify({ grew: peak() - before, files: answer.readUInt32LE(0) })));`;
    const run = spawnSync(process.execPath, ["-e", script, "[\\w\\s]*\\w[\\w\\s]{30}\\s"]);
    const { grew, files } = JSON.parse(run.stdout.toString()) as { grew: number; files: number };
    expect(files).toBe(0);
    expect(grew).toBeLessThan(32 * 1024 * 1024);
    const { workers, native } = await both("[a-z]*[a-m][a-z]{20}", { path: root });
    expect(native).toEqual(workers);
  });
});

onCore("hostile input", () => {
  it("a 2 GiB file is refused by its size at once, and searched in bounded memory when allowed", async () => {
    const root = await tempTree({ "small.txt": "needle\n" });
    const huge = join(root, "huge.bin");
    const fd = openSync(huge, "w");
    ftruncateSync(fd, 2 ** 31);
    closeSync(fd);
    const result = await grep("needle", { path: root });
    expect(result.lines.map((l) => l.path)).toEqual(["small.txt"]);
    expect(result.skipped.tooLarge).toEqual([{ path: "huge.bin", size: 2 ** 31 }]);
    // Binary from its first 8 KiB: left out after one read, never read whole (the peak of the
    // process's memory does not grow by it).
    const before = peakBytes();
    const answer = await core?.search(
      request(root, ["huge.bin"], ["needle"], { maxFileSize: 2 ** 32 }),
      new Uint8Array(1),
    );
    expect(answer?.outcomes.get(0)).toEqual({ kind: "binary" });
    expect(peakBytes() - before).toBeLessThan(256 * 1024 * 1024);
  });

  it("a FIFO in place of a listed file is refused without blocking, with or without a writer", async () => {
    const root = await tempTree({ "a.txt": "needle\n" });
    execFileSync("mkfifo", [join(root, "fifo")]);
    const answer = await core?.search(
      request(root, ["fifo", "a.txt"], ["needle"]),
      new Uint8Array(1),
    );
    expect(answer?.outcomes.get(0)).toEqual({ kind: "unreadable", code: "ESPIPE" });
    expect(answer?.outcomes.get(1)?.kind).toBe("hits");
    const writer = spawn("sh", ["-c", `exec 3>"${join(root, "fifo")}"; sleep 5`]);
    try {
      const again = await core?.search(request(root, ["fifo"], ["needle"]), new Uint8Array(1));
      expect(again?.outcomes.get(0)).toEqual({ kind: "unreadable", code: "ESPIPE" });
    } finally {
      writer.kill("SIGKILL");
    }
  });

  it("a file cut short and grown again by another process while it is searched", async () => {
    const root = await tempTree({});
    const files = Array.from({ length: 200 }, (_, i) => `f${i}.txt`);
    const body = "needle line\n".repeat(20_000);
    for (const file of files) writeFileSync(join(root, file), body);
    // Each file cut to a random length, then written whole again, over and over.
    const script = `const fs = require("fs");
      const [root, count] = process.argv.slice(1);
      const body = "needle line\\n".repeat(20000);
      const end = Date.now() + 3000;
      while (Date.now() < end)
        for (let i = 0; i < Number(count); i++) {
          const path = root + "/f" + i + ".txt";
          fs.truncateSync(path, Math.floor(Math.random() * 1000));
          fs.writeFileSync(path, body);
        }`;
    const child = spawn(process.execPath, ["-e", script, root, String(files.length)], {
      stdio: "ignore",
    });
    try {
      for (let round = 0; round < 5; round++) {
        const result = await grep("needle", { path: root, outputMode: "count" });
        for (const count of result.counts ?? []) {
          expect(count.count).toBeGreaterThanOrEqual(0);
          expect(count.count).toBeLessThanOrEqual(20_000);
        }
      }
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a pattern built to backtrack runs in linear time", async () => {
    const root = await tempTree({ "a.txt": `${"a".repeat(100_000)}\n` });
    const result = await grep("(a*)*(a*)*(a*)*b", { path: root, fileTimeoutMs: 60_000 });
    expect(result.lines).toEqual([]);
    expect(result.skipped.timedOut).toEqual([]);
  });

  it("a pattern too large for Rust's regex runs on the workers: one it refuses, one it would not finish compiling", async () => {
    const root = await tempTree({ "a.txt": `${"x".repeat(1500)}\n` });
    // Rust's regex: "exceeds size limit"; V8 runs it.
    const wide = await grep("\\w{1000}", { path: root, outputMode: "count" });
    expect(wide.counts).toEqual([{ path: "a.txt", count: 1 }]);
    // Rust's regex (and rg 13) compiles this for minutes; the workers' V8 runs it, bounded.
    expect(repeated("(a{1000}){1000}")).toBeGreaterThan(100_000);
    const deep = await grep("(a{1000}){1000}", { path: root, fileTimeoutMs: 1000 });
    expect(deep.lines).toEqual([]);
  });

  it("a panic in the core rejects with a typed error, and the core serves the next search", async () => {
    const root = await tempTree({ "a.txt": "needle\n" });
    await expect(
      core?.search(request(root, ["a.txt"], ["needle"], { panic: true }), new Uint8Array(1)),
    ).rejects.toMatchObject({ name: "FreshfsError", code: "IO_ERROR" });
    const answer = await core?.search(request(root, ["a.txt"], ["needle"]), new Uint8Array(1));
    expect(answer?.outcomes.get(0)?.kind).toBe("hits");
  });

  it("a cancelled search stops between files, and grep's abort reaches it", async () => {
    const root = await tempTree({});
    const files = Array.from({ length: 2000 }, (_, i) => `f${i}.txt`);
    for (const file of files) writeFileSync(join(root, file), "x\n".repeat(2000));
    const cancel = new Uint8Array([1]);
    const answer = await core?.search(request(root, files, ["x"]), cancel);
    expect(answer?.stopped).toBe(true);
    expect(answer?.done).toBeLessThan(files.length);
    const controller = new AbortController();
    const running = grep("x", { path: root, signal: controller.signal });
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: "ABORTED" });
  });

  it("an answer past its byte bound stops early and says where, so the caller asks again", async () => {
    const root = await tempTree({});
    const files = Array.from({ length: 50 }, (_, i) => `f${i}.txt`);
    for (const file of files) writeFileSync(join(root, file), "needle\n".repeat(1000));
    const answer = await core?.search(
      request(root, files, ["needle"], { threads: 1, maxAnswerBytes: 20_000 }),
      new Uint8Array(1),
    );
    expect(answer?.stopped).toBe(false);
    expect(answer?.done).toBeLessThan(files.length);
    expect(answer?.outcomes.size).toBe(answer?.done);
    const result = await grep("needle", { path: root, outputMode: "count" });
    expect(result.counts?.length).toBe(50);
  });
});

onCore("many searches at once", () => {
  it("take turns: 300 greps run on the threads of one, and leave libuv's pool to the rest of the process", async () => {
    const root = await tempTree(
      Object.fromEntries(
        Array.from({ length: 200 }, (_, i) => [`f${i}.txt`, "needle\n".repeat(50)]),
      ),
    );
    // libuv's pool is started, and the core's first search is done, before counting.
    await stat(root);
    await grep("needle", { path: root });
    const before = threads();
    let most = before;
    const sample = setInterval(() => {
      most = Math.max(most, threads());
    }, 1);
    let finished = 0;
    try {
      const searches = Array.from({ length: 300 }, () =>
        grep("needle", { path: root, outputMode: "count" }).then((result) => {
          finished++;
          return result;
        }),
      );
      // A file system call made now is not queued behind the searches' batches.
      await stat(root);
      expect(finished).toBeLessThan(150);
      const results = await Promise.all(searches);
      for (const result of results) expect(result.counts).toHaveLength(200);
    } finally {
      clearInterval(sample);
    }
    // A batch's threads are joined before the next batch starts its own, but the kernel counts a
    // joined thread for a moment after: two batches' threads at most (libuv alone would let 4
    // searches run at once, 4 batches' threads).
    expect(most - before).toBeLessThanOrEqual(2 * GREP_WORKERS);
  });
});

describe("where the addon cannot load", () => {
  it("grep runs on the workers after one warning; FRESHFS_NATIVE=0 runs them without one", async () => {
    const root = await tempTree({ "a.txt": "needle\n" });
    const script = `
      const { grep } = await import(${JSON.stringify(new URL("../../src/index.ts", import.meta.url).href)});
      const a = await grep("needle", { path: process.argv[1] });
      const b = await grep("needle", { path: process.argv[1] });
      console.log(JSON.stringify([a.lines.length, b.lines.length]));`;
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, root], {
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
    // FRESHFS_NATIVE set to anything but 0 (the suite may run with it 0): the core is wanted.
    const missing = run({
      FRESHFS_NATIVE: "1",
      FRESHFS_NATIVE_ADDON: join(import.meta.dirname, "no-such-addon.node"),
    });
    expect(missing.status).toBe(0);
    expect(JSON.parse(missing.stdout)).toEqual([1, 1]);
    expect(missing.stderr.match(/native search core did not load/g)).toHaveLength(1);
    const off = run({ FRESHFS_NATIVE: "0" });
    expect(JSON.parse(off.stdout)).toEqual([1, 1]);
    expect(off.stderr).not.toMatch(/native search core/);
  });
});

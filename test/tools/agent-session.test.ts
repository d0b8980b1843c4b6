/**
 * End to end: an agent session through `Workspace` against a real git repository, with the scan
 * cache on, unwatched (the TTL policy, with a lifetime long enough that only the tools' own
 * invalidation can explain fresh search results; test/live/tree.test.ts has the watched one).
 * Searches, reads and edits; an editor and git change files behind the session's back; the guard
 * refuses (strict) or warns (warn) exactly when the bytes differ.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  configureScanCache,
  type GuardPolicy,
  invalidateFsScanCache,
  Workspace,
} from "../../src/index.js";
import { rejectsWith } from "../helpers/errors.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const APP = [
  'import { greet } from "./util.js";',
  "",
  "export function main(): number {",
  '  console.log(greet("world"));',
  "  return 1;",
  "}",
  "",
].join("\n");

const UTIL = [
  "export function greet(name: string): string {",
  '  return "hello " + name;',
  "}",
  "",
].join("\n");

beforeEach(() => {
  invalidateFsScanCache();
  // Listings live for a minute and an empty result is never rechecked: a search that sees a
  // change right after a tool made it does so because the tool invalidated the cache.
  configureScanCache({ ttlMs: 60_000, emptyRecheckMs: 60_000 });
});

afterAll(() => {
  configureScanCache(undefined);
  invalidateFsScanCache();
});

/** A work tree, and git run in it isolated from the user's and the system's configuration. */
interface Repo {
  readonly dir: string;
  git(args: readonly string[]): void;
}

/** A committed repository: two sources, a README, and ignored build output and logs. */
async function project(): Promise<Repo> {
  const home = await tempTree();
  const dir = await tempTree({
    ".gitignore": "dist/\n*.log\n",
    "src/app.ts": APP,
    "src/util.ts": UTIL,
    "README.md": "# demo\n\nRun main to greet the world.\n",
  });
  // stdin closed rather than a pipe git may exit without reading (EPIPE).
  const git = (args: readonly string[]) => {
    execFileSync("git", args, { cwd: dir, env: isolatedGitEnv(home), stdio: "ignore" });
  };
  git(["init", "-q"]);
  git(["add", "-A"]);
  git(["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "init"]);
  // Not committed, and ignored: build output and a log, with words the searches look for.
  await mkdir(join(dir, "dist"));
  await writeFile(join(dir, "dist", "app.js"), "export function main() { return 1; }\n");
  await writeFile(join(dir, "debug.log"), "main returned 1\n");
  return { dir, git };
}

function sorted(list: readonly string[]): string[] {
  return [...list].sort();
}

/** The start of the session: glob and grep (filling the cache), then a read of src/app.ts. */
async function startSession(policy: GuardPolicy): Promise<{ repo: Repo; ws: Workspace }> {
  const repo = await project();
  const ws = new Workspace({ roots: repo.dir, policy, watch: false });
  expect(sorted((await ws.glob({ pattern: "**/*" })).files)).toEqual([
    "README.md",
    "src/app.ts",
    "src/util.ts",
  ]);
  expect(sorted((await ws.grep({ pattern: "export function" })).files)).toEqual([
    "src/app.ts",
    "src/util.ts",
  ]);
  const read = await ws.read({ file_path: "src/app.ts" });
  expect(read.text.split("\n")[4]).toBe("     5\t  return 1;");
  return { repo, ws };
}

describe("an agent session, strict", () => {
  it("edits, is refused after an outside change, re-reads, edits, and every search sees each change", async () => {
    const { repo, ws } = await startSession("strict");
    const app = join(repo.dir, "src", "app.ts");

    // The first edit, on a fresh read.
    const first = await ws.edit({
      file_path: "src/app.ts",
      old_string: "  return 1;",
      new_string: "  return 2;",
    });
    expect(first.replacements).toBe(1);
    expect(first.firstChangedLine).toBe(5);
    expect(await readFile(app, "utf8")).toBe(APP.replace("return 1;", "return 2;"));

    // An IDE saves the file behind the session's back.
    const ideVersion = APP.replace("return 1;", "return 2;").replace(
      '  console.log(greet("world"));',
      '  console.log(greet("IDE"));',
    );
    await writeFile(app, ideVersion);

    // The next edit is refused, and the file keeps the IDE's change.
    const message = await rejectsWith(
      ws.edit({ file_path: "src/app.ts", old_string: "  return 2;", new_string: "  return 3;" }),
      "STALE",
    );
    expect(message).toContain("src/app.ts");
    expect(message).toMatch(/read it again/i);
    expect(await readFile(app, "utf8")).toBe(ideVersion);

    // Read again: the IDE's line is what the model now sees; the edit goes through.
    const reread = await ws.read({ file_path: app });
    expect(reread.text).toContain('     4\t  console.log(greet("IDE"));');
    const second = await ws.edit({
      file_path: app,
      old_string: "  return 2;",
      new_string: "  return 3;",
    });
    expect(second.replacements).toBe(1);
    expect(await readFile(app, "utf8")).toBe(ideVersion.replace("return 2;", "return 3;"));

    // grep right after sees the new content.
    const grepped = await ws.grep({ pattern: "return \\d;", output_mode: "content" });
    expect(grepped.text).toBe("src/app.ts:5:  return 3;");
    expect((await ws.grep({ pattern: "IDE", output_mode: "count" })).text).toBe("src/app.ts:1");

    // A new file: glob and grep see it at once.
    const created = await ws.write({
      file_path: "src/feature.ts",
      content: "export const featureFlag = true;\n",
    });
    expect(created.created).toBe(true);
    expect(sorted((await ws.glob({ pattern: "**/*.ts" })).files)).toEqual([
      "src/app.ts",
      "src/feature.ts",
      "src/util.ts",
    ]);
    expect((await ws.grep({ pattern: "featureFlag" })).files).toEqual(["src/feature.ts"]);

    // Renamed: glob sees the new name and not the old one.
    await ws.rename({ from: "src/feature.ts", to: "src/flags.ts" });
    const afterRename = sorted((await ws.glob({ pattern: "**/*.ts" })).files);
    expect(afterRename).toEqual(["src/app.ts", "src/flags.ts", "src/util.ts"]);
    expect((await ws.glob({ pattern: "src/feature.ts" })).files).toEqual([]);
    expect((await ws.glob({ pattern: "src/flags.ts" })).files).toEqual(["src/flags.ts"]);
    expect((await ws.grep({ pattern: "featureFlag" })).files).toEqual(["src/flags.ts"]);

    // Deleted (the session wrote it, so no new read is needed): glob no longer lists it.
    await ws.delete({ file_path: "src/flags.ts" });
    expect(sorted((await ws.glob({ pattern: "**/*.ts" })).files)).toEqual([
      "src/app.ts",
      "src/util.ts",
    ]);
    expect((await ws.glob({ pattern: "src/flags.ts" })).text).toBe("No files match src/flags.ts.");
    expect((await ws.grep({ pattern: "featureFlag" })).text).toBe("No matches for featureFlag.");

    // Ignored files stayed out all along.
    expect(sorted((await ws.glob({ pattern: "**/*" })).files)).toEqual([
      "README.md",
      "src/app.ts",
      "src/util.ts",
    ]);
  });

  it("does not call a file stale when a formatter rewrites the same bytes", async () => {
    const { repo, ws } = await startSession("strict");
    const util = join(repo.dir, "src", "util.ts");
    await ws.read({ file_path: "src/util.ts" });
    const before = await stat(util, { bigint: true });

    // The formatter finds nothing to change: same bytes written back, file touched.
    await writeFile(util, UTIL);
    const later = new Date(Date.now() + 5_000);
    await utimes(util, later, later);
    const after = await stat(util, { bigint: true });
    expect(after.mtimeNs).not.toBe(before.mtimeNs);

    const edit = await ws.edit({
      file_path: "src/util.ts",
      old_string: '"hello "',
      new_string: '"hi "',
    });
    expect(edit.replacements).toBe(1);
    expect(edit.warnings).toEqual([]);
    expect(await readFile(util, "utf8")).toBe(UTIL.replace("hello", "hi"));
  });

  it("calls a file stale when `git checkout` restores other content after a read", async () => {
    const { repo, ws } = await startSession("strict");
    const app = join(repo.dir, "src", "app.ts");
    await ws.edit({ file_path: "src/app.ts", old_string: "return 1;", new_string: "return 42;" });
    const read = await ws.read({ file_path: "src/app.ts" });
    expect(read.text).toContain("return 42;");

    repo.git(["checkout", "--", "src/app.ts"]);
    expect(await readFile(app, "utf8")).toBe(APP);

    const message = await rejectsWith(
      ws.edit({ file_path: "src/app.ts", old_string: "main", new_string: "run" }),
      "STALE",
    );
    expect(message).toMatch(/read it again/i);
    expect(await readFile(app, "utf8")).toBe(APP);
    // The same holds for an overwrite and a delete.
    await rejectsWith(ws.write({ file_path: "src/app.ts", content: "gone\n" }), "STALE");
    await rejectsWith(ws.delete({ file_path: "src/app.ts" }), "STALE");
    expect(await readFile(app, "utf8")).toBe(APP);
  });
});

describe("an agent session, files changed by others", () => {
  it("grep passes over a file deleted behind the session's back without calling it unreadable", async () => {
    const { repo, ws } = await startSession("strict");
    // A shell tool removes a file the cached listing still holds.
    await unlink(join(repo.dir, "src", "util.ts"));
    const result = await ws.grep({ pattern: "export function" });
    expect(result.files).toEqual(["src/app.ts"]);
    expect(result.text).toBe("src/app.ts");
  });
});

describe("an agent session, warn", () => {
  it("lets the stale edit through with the ChatCLI-shaped warning", async () => {
    const { repo, ws } = await startSession("warn");
    const app = join(repo.dir, "src", "app.ts");

    const first = await ws.edit({
      file_path: "src/app.ts",
      old_string: "  return 1;",
      new_string: "  return 2;",
    });
    expect(first.warnings).toEqual([]);

    const ideVersion = APP.replace("return 1;", "return 2;").replace('"world"', '"IDE"');
    await writeFile(app, ideVersion);

    const stale = await ws.edit({
      file_path: "src/app.ts",
      old_string: "  return 2;",
      new_string: "  return 3;",
    });
    expect(stale.replacements).toBe(1);
    // The edit was made on the file as it is now, keeping the IDE's change.
    expect(await readFile(app, "utf8")).toBe(ideVersion.replace("return 2;", "return 3;"));
    expect(stale.warnings).toHaveLength(1);
    const warning = stale.warnings[0] ?? "";
    expect(warning).toMatch(
      /^WARNING: File "?[^\n]*src\/app\.ts"? has changed on disk since you last read it/,
    );
    expect(warning).toContain("re-read");
    expect(stale.text).toContain(warning);

    // The edit's own bytes are now the record: the next edit carries no warning.
    const next = await ws.edit({
      file_path: "src/app.ts",
      old_string: "  return 3;",
      new_string: "  return 4;",
    });
    expect(next.warnings).toEqual([]);
    expect((await ws.grep({ pattern: "return \\d;", output_mode: "content" })).text).toBe(
      "src/app.ts:5:  return 4;",
    );

    // git restores other content: the edit proceeds, warned, on the restored text.
    repo.git(["checkout", "--", "src/app.ts"]);
    const afterCheckout = await ws.edit({
      file_path: "src/app.ts",
      old_string: "  return 1;",
      new_string: "  return 5;",
    });
    expect(afterCheckout.warnings.join("\n")).toContain(
      "has changed on disk since you last read it",
    );
    expect(await readFile(app, "utf8")).toBe(APP.replace("return 1;", "return 5;"));

    // A formatter's identical rewrite still warns of nothing.
    await ws.read({ file_path: "src/util.ts" });
    const util = join(repo.dir, "src", "util.ts");
    await writeFile(util, UTIL);
    const later = new Date(Date.now() + 5_000);
    await utimes(util, later, later);
    const clean = await ws.edit({
      file_path: "src/util.ts",
      old_string: "hello",
      new_string: "hi",
    });
    expect(clean.warnings).toEqual([]);
  });
});

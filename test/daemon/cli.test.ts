/**
 * The CLI through the user's daemon, with real processes: the built `freshfs` (npm test builds
 * it) started with a runtime directory of the test's own, so the daemon it starts is this
 * test's. Every answer through the daemon equals the answer without it; changes made between
 * calls are seen; a daemon of another build steps aside; a daemon killed mid-call, stopped
 * (hung), or unreachable leaves the client answering in its own process with a warning; one
 * daemon serves a socket; an idle daemon exits; another user cannot connect.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  alive,
  BIN,
  daemonPid,
  envFor,
  freshfs,
  REPO,
  type Run,
  runtimeDir,
  stopDaemons,
  until,
} from "../helpers/daemons.js";
import { tempTree } from "../helpers/fs.js";
import { canRunAsNobody } from "../helpers/nobody.js";

const TREE = {
  ".gitignore": "dist/\n*.log\n",
  "src/app.ts": "export const retries = 3;\n// TODO(ana): read the count\n",
  "src/util/retry.ts": "export function retry() {\n  return 3;\n}\n",
  "src/.hidden.ts": "export const hidden = true;\n",
  "test/app.test.ts": "import { retries } from '../src/app';\n",
  "dist/app.js": "export const retries = 3;\n",
  "debug.log": "retries = 3\n",
  "README.md": "# sample\n",
};

describe("the CLI through the daemon", () => {
  let root: string;
  let runtime: string;
  beforeAll(async () => {
    root = await tempTree(TREE, { lifetime: "file" });
    runtime = runtimeDir();
    // git's rules need a repository.
    spawnSync("git", ["init", "-q", root]);
  });

  const commands: readonly (readonly string[])[] = [
    ["grep", "-n", "retries"],
    ["grep", "-c", "retr"],
    ["grep", "-i", "-C1", "todo", "src"],
    ["grep", "-l", "export", "--hidden"],
    ["grep", "--files"],
    ["grep", "-w", "-o", "retry", "src/util/retry.ts"],
    ["grep", "--json", "retries"],
    ["grep", "nothing-matches-this"],
    ["glob", "**/*.ts"],
    ["glob", "src/**", "--json"],
    ["find", "rtry"],
    ["files"],
    ["files", "--hidden", "--no-ignore"],
    ["why", "dist/app.js"],
    ["why", "src/app.ts"],
  ];

  it("answers every command as the command answers without it, byte for byte", () => {
    const env = envFor(runtime);
    for (const args of commands) {
      const through = freshfs(args, root, env);
      const without = freshfs([...args, "--no-daemon"], root, env);
      const label = args.join(" ");
      // rg's JSON Lines carry timings, and freshfs's JSON says which mode answered
      // (`freshness`: the daemon's tree is live once watched; this process walks): compared
      // without them.
      const drop = (key: string, value: unknown) =>
        key.startsWith("elapsed") || key === "freshness" ? undefined : value;
      const normal = (json: string) => JSON.stringify(JSON.parse(json, drop));
      const untimed = (text: string) =>
        !args.includes("--json")
          ? text
          : args[0] === "grep"
            ? text.trim().split("\n").map(normal).join("\n")
            : normal(text);
      expect(untimed(through.stdout), label).toBe(untimed(without.stdout));
      expect(through.status, label).toBe(without.status);
      expect(through.stderr, label).toBe(without.stderr);
    }
    const pid = daemonPid(runtime);
    expect(pid).toBeGreaterThan(0);
    // One daemon answered them all: the next call finds the same one.
    freshfs(["grep", "-c", "retries"], root, env);
    expect(daemonPid(runtime)).toBe(pid);
    const status = JSON.parse(freshfs(["daemon", "status", "--json"], root, env).stdout);
    expect(status.roots.map((r: { root: string }) => r.root)).toContain(root);
  });

  it("sees every change made before a call, by any process", async () => {
    const env = envFor(runtime);
    freshfs(["grep", "-c", "fresh"], root, env);
    for (let round = 0; round < 5; round++) {
      writeFileSync(
        join(root, "src", `new${round}.ts`),
        `export const fresh${round} = ${round};\n`,
      );
      expect(freshfs(["grep", "-l", `fresh${round}`], root, env).stdout).toBe(
        `src/new${round}.ts\n`,
      );
      expect(freshfs(["glob", `**/new${round}.ts`], root, env).stdout).toBe(`src/new${round}.ts\n`);
      unlinkSync(join(root, "src", `new${round}.ts`));
      expect(freshfs(["grep", "-l", `fresh${round}`], root, env).status).toBe(1);
      expect(freshfs(["files"], root, env).stdout).not.toContain(`new${round}`);
    }
  });
});

describe("a command and a daemon that keeps nothing yet", () => {
  it("with no daemon, answers itself (no warning) and leaves one starting; a tree the daemon does not keep live is answered here, and made live for the next", async () => {
    const root = await tempTree(TREE);
    spawnSync("git", ["init", "-q", root]);
    const runtime = runtimeDir();
    const env = envFor(runtime);
    const want = freshfs(["grep", "-n", "retries", "--no-daemon"], root, env);
    const first = freshfs(["grep", "-n", "retries"], root, env);
    expect(first).toMatchObject({ stdout: want.stdout, stderr: "", status: 0 });
    await until(() => daemonPid(runtime) !== undefined, "the daemon it left starting");
    const requests = () =>
      (
        JSON.parse(freshfs(["daemon", "status", "--json"], root, env).stdout) as {
          requests: number;
        }
      ).requests;
    // The daemon keeps no tree: this one is answered here, and the daemon makes it live.
    const before = requests();
    expect(freshfs(["grep", "-n", "retries"], root, env)).toMatchObject({
      stdout: want.stdout,
      stderr: "",
    });
    await until(() => liveIn(runtime, root), "the tree made live");
    // From now on the daemon answers (its count of requests grows by the call and the status).
    const after = requests();
    expect(after).toBeGreaterThan(before);
    expect(freshfs(["grep", "-n", "retries"], root, env)).toMatchObject({
      stdout: want.stdout,
      stderr: "",
    });
    expect(requests()).toBe(after + 2);
  });
});

describe("when the daemon cannot answer", () => {
  let root: string;
  beforeAll(async () => {
    // A file a backtracking regex never finishes on: the call is under way when the daemon goes.
    const slow = `${"x".repeat(5000)}\n`;
    root = await tempTree({ "slow.txt": slow, "a.txt": "alpha\n" }, { lifetime: "file" });
  });

  it("a daemon killed mid-call: the client answers in its own process, with a warning", async () => {
    const runtime = runtimeDir();
    const env = envFor(runtime);
    freshfs(["daemon", "start"], root, env);
    const pid = daemonPid(runtime) as number;
    // Until the daemon keeps the tree live: a command answers a tree it does not keep itself.
    await until(() => {
      freshfs(["grep", "-c", "alpha"], root, env);
      return liveIn(runtime, root);
    }, "the daemon to keep the tree live");
    const hostile = ["grep", "-c", "-P", "--timeout", "3000", "(?=(x+x+)+y)"];
    const args = [BIN, ...hostile];
    const child = spawn(process.execPath, args, { cwd: root, env });
    const out = collect(child);
    await new Promise((resolve) => setTimeout(resolve, 400));
    process.kill(pid, "SIGKILL");
    const run = await out;
    const alone = freshfs([...hostile, "--no-daemon"], root, env);
    expect(alone.stderr).toContain("stopped at its timeout");
    expect(run.status).toBe(alone.status);
    expect(run.stdout).toBe(alone.stdout);
    expect(run.stderr).toContain("searching in this process, without the daemon");
    expect(run.stderr).toContain("stopped at its timeout");
    // The next call answers itself and starts a new daemon, for the calls after it.
    expect(freshfs(["grep", "-c", "alpha"], root, env)).toMatchObject({
      stdout: "a.txt:1\n",
      stderr: "",
    });
    await until(() => (daemonPid(runtime) ?? pid) !== pid, "a new daemon");
  }, 90_000);

  it("a stopped (hung) daemon: the client gives up within the connect bound", async () => {
    const runtime = runtimeDir();
    const env = envFor(runtime);
    freshfs(["daemon", "start"], root, env);
    const pid = daemonPid(runtime) as number;
    process.kill(pid, "SIGSTOP");
    try {
      const started = Date.now();
      const run = freshfs(["grep", "-c", "alpha"], root, env);
      expect(run.stdout).toBe("a.txt:1\n");
      expect(run.stderr).toContain("did not answer within");
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      process.kill(pid, "SIGCONT");
    }
  });

  it("a runtime directory others may enter: no daemon, and the client says why", () => {
    const runtime = runtimeDir();
    chmodSync(runtime, 0o755);
    const run = freshfs(["grep", "-c", "alpha"], root, envFor(runtime));
    expect(run.stdout).toBe("a.txt:1\n");
    expect(run.stderr).toContain("is open to other users");
    expect(readdirSync(runtime)).toEqual([]);
  });
});

describe("the daemon's own life", () => {
  let root: string;
  beforeAll(async () => {
    root = await tempTree({ "a.txt": "alpha\n" }, { lifetime: "file" });
  });

  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });

  it("one daemon serves a socket: a second one started beside it exits at once", async () => {
    const runtime = runtimeDir();
    const env = envFor(runtime);
    const first = spawn(process.execPath, [BIN, "daemon", "run"], { env, stdio: "pipe" });
    children.push(first);
    await until(() => daemonPid(runtime) === first.pid, "the first daemon");
    const second = freshfs(["daemon", "run"], root, env);
    expect(second.status).toBe(0);
    expect(second.stderr).toContain("another daemon serves");
    expect(daemonPid(runtime)).toBe(first.pid);
  });

  it("exits once idle for --idle-ms, and removes its socket", async () => {
    const runtime = runtimeDir();
    const env = envFor(runtime);
    const daemon = spawn(process.execPath, [BIN, "daemon", "run", "--idle-ms", "300"], {
      env,
      stdio: "pipe",
    });
    children.push(daemon);
    const exited = new Promise<number | null>((resolve) => daemon.once("exit", resolve));
    await until(() => readdirSync(runtime).some((name) => name.endsWith(".sock")), "the socket");
    expect(await exited).toBe(0);
    expect(readdirSync(runtime).filter((name) => name.endsWith(".sock"))).toEqual([]);
  });

  it("steps aside for a client of another build", async () => {
    const runtime = runtimeDir();
    const env = envFor(runtime);
    freshfs(["daemon", "start"], root, env);
    const old = daemonPid(runtime) as number;
    // Another build: a copy of the package whose stamp differs.
    const copy = mkdtempSync(join(tmpdir(), "freshfs-other-build-"));
    try {
      cpSync(join(REPO, "dist"), join(copy, "dist"), { recursive: true });
      cpSync(join(REPO, "package.json"), join(copy, "package.json"));
      cpSync(join(REPO, "prebuilds"), join(copy, "prebuilds"), { recursive: true });
      cpSync(join(REPO, "node_modules"), join(copy, "node_modules"), {
        recursive: true,
        dereference: false,
        verbatimSymlinks: true,
      });
      writeFileSync(join(copy, "dist", "build.json"), '{ "build": "another" }\n');
      const other = join(copy, "dist", "cli", "main.js");
      const run = freshfs(["grep", "-c", "alpha"], root, env, other);
      expect(run.stdout).toBe("a.txt:1\n");
      expect(run.stderr).toBe("");
      await until(() => !alive(old), "the old daemon to exit");
      // The call answered itself and left its own build's daemon starting.
      const status = () => freshfs(["daemon", "status", "--json"], root, env, other);
      await until(() => status().status === 0, "the other build's daemon");
      expect(JSON.parse(status().stdout).build).toBe("another");
    } finally {
      stopDaemons(runtime);
      rmSync(copy, { recursive: true, force: true });
    }
  }, 90_000);

  it.skipIf(!canRunAsNobody)("refuses another user: its socket cannot be reached", () => {
    const runtime = runtimeDir();
    const env = envFor(runtime);
    freshfs(["daemon", "start"], root, env);
    const socket = readdirSync(runtime).find((name) => name.endsWith(".sock")) as string;
    expect(existsSync(join(runtime, socket))).toBe(true);
    const script = `const s = require("node:net").connect(${JSON.stringify(join(runtime, socket))});
s.on("connect", () => { console.log("connected"); process.exit(0); });
s.on("error", (e) => { console.log(e.code); process.exit(0); });`;
    const run = spawnSync(
      "setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
      { encoding: "utf8" },
    );
    expect(run.stdout.trim()).toBe("EACCES");
  });
});

/** Whether the daemon of `runtime` keeps a live tree of `root`. */
function liveIn(runtime: string, root: string): boolean {
  const run = freshfs(["daemon", "status", "--json"], REPO, envFor(runtime));
  if (run.status !== 0) return false;
  const roots = (JSON.parse(run.stdout) as { roots: { root: string; status: string }[] }).roots;
  return roots.some((tree) => tree.root === root && tree.status === "live");
}

/** A child's output and status, once it exits. */
function collect(child: ChildProcess): Promise<Run> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve) => {
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

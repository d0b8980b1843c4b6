/**
 * The native relay (`native/relay/relay.c`, run by `bin/freshfs`), with real processes: the
 * committed binary built from the committed source; every relayed answer byte for byte Node's
 * `freshfs`'s (stdout, stderr, exit status), from a subdirectory, its operands and pattern
 * files relative to it; and Node's `freshfs` run instead whenever the daemon cannot answer as it
 * would. Whether the relay answered itself is told by a PATH with no `node` on it: a relay that
 * turned to Node then fails, saying it cannot run node.
 */

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONNECT_TIMEOUT_MS,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  SILENCE_MS,
  socketPath,
} from "../../src/client/protocol.js";
import { envFor, freshfs, REPO, type Run, runtimeDir, until } from "../helpers/daemons.js";
import { tempTree } from "../helpers/fs.js";
import { NO_NODE, RELAY, relay, relayed, relayRuns } from "../helpers/relay.js";

const SOURCE = join(REPO, "native", "relay", "relay.c");
const WRAPPER = join(REPO, "bin", "freshfs");

const TREE = {
  ".gitignore": "dist/\n*.log\n",
  "src/app.ts": "export const retries = 3;\n// TODO(ana): read the count\n",
  "src/util/retry.ts": "export function retry() {\n  return 3;\n}\n",
  "src/util/pats.txt": "retr\nTODO\n",
  "src/.hidden.ts": "export const hidden = true;\n",
  "test/app.test.ts": "import { retries } from '../src/app';\n",
  "dist/app.js": "export const retries = 3;\n",
  "debug.log": "retries = 3\n",
  "README.md": "# sample\nna\u00efve caf\u00e9\n",
};

describe.runIf(relayRuns)("the native relay", () => {
  it("is the binary built from native/relay/relay.c as committed (npm run build:relay)", () => {
    const digest = createHash("sha256").update(readFileSync(SOURCE)).digest("hex");
    const binary = readFileSync(RELAY).toString("latin1");
    const built = /freshfs-relay-source:([0-9a-f]{64})/.exec(binary)?.[1];
    expect(built, "prebuilds/linux-x64/freshfs-relay is stale: run npm run build:relay").toBe(
      digest,
    );
  });

  it("speaks the protocol's version and bounds", () => {
    const source = readFileSync(SOURCE, "utf8");
    const constant = (name: string) =>
      new RegExp(`#define ${name} \\(?([0-9u* ]+)\\)?`).exec(source)?.[1];
    const value = (text: string | undefined) =>
      (text ?? "")
        .replace(/u/g, "")
        .split("*")
        .reduce((product, n) => product * Number(n), 1);
    expect(value(constant("PROTOCOL_VERSION"))).toBe(PROTOCOL_VERSION);
    expect(value(constant("SILENCE_MS"))).toBe(SILENCE_MS);
    expect(value(constant("CONNECT_TIMEOUT_MS"))).toBe(CONNECT_TIMEOUT_MS);
    expect(value(constant("MAX_MESSAGE_BYTES"))).toBe(MAX_MESSAGE_BYTES);
  });

  describe("with a daemon that keeps the tree live", () => {
    let root: string;
    let runtime: string;
    let env: NodeJS.ProcessEnv;
    let noNode: NodeJS.ProcessEnv;
    beforeAll(async () => {
      root = await tempTree(TREE, { lifetime: "file" });
      spawnSync("git", ["init", "-q", root]);
      runtime = runtimeDir();
      // Variables of the answering environment that JSON and the digest must carry exactly.
      env = envFor(runtime, { GIT_TEST_X: 'a "quoted"\\ value\twith caf\u00e9 and \u{1F600}' });
      noNode = { ...env, PATH: NO_NODE };
      expect(freshfs(["daemon", "start"], root, env).status).toBe(0);
      // The first command answers itself and has the daemon keep the tree; then it is live.
      await until(() => {
        freshfs(["grep", "retries"], root, env);
        return relay(["grep", "retries"], root, noNode).status === 0;
      }, "the relay answered by the daemon");
    }, 30_000);

    const commands: readonly (readonly string[])[] = [
      ["grep", "-n", "retries"],
      ["grep", "retr", ".."],
      ["grep", "-c", "return", "retry.ts", "."],
      ["grep", "-f", "pats.txt", ".."],
      ["grep", "--json", "retries", ".."],
      ["grep", "-l", "-i", "TODO", "../.."],
      ["grep", "caf\u00e9", "../.."],
      ["grep", "no such text anywhere", ".."],
      ["grep", "a(b", ".."],
      ["grep", "retries", "missing-dir"],
      ["grep", "--frobnicate", "x"],
      ["glob", "**/*.ts", "../.."],
      ["glob", "*.nothing", "../.."],
      ["find", "rtry", "../.."],
      ["files", "../.."],
      ["files", "--json", "../.."],
      ["why", "../../debug.log"],
      ["why", "retry.ts"],
      ["grep", "--help"],
    ];
    for (const args of commands) {
      it(`answers \`freshfs ${args.join(" ")}\` as Node's freshfs does, from a subdirectory`, () => {
        const cwd = join(root, "src", "util");
        const ours = relayed(args, cwd, env);
        const theirs = freshfs(args, cwd, { ...env, FRESHFS_DAEMON: "0" });
        const timing = /"elapsed(_total)?":\{[^}]*\}/g;
        expect(ours.stderr).toBe(theirs.stderr);
        expect(ours.stdout.replace(timing, "")).toBe(theirs.stdout.replace(timing, ""));
        expect(ours.status).toBe(theirs.status);
      });
    }

    it("sees a change made just before it", () => {
      writeFileSync(join(root, "src", "fresh.ts"), "export const fresher = 1;\n");
      const ours = relay(["grep", "-l", "fresher"], root, noNode);
      expect(ours).toEqual({ status: 0, stdout: "src/fresh.ts\n", stderr: "" });
    });

    it("turns to Node's freshfs for what only it can do, before printing anything", () => {
      // Each of these, with no node to run, fails in the same way: the relay did not answer.
      const cannot = { status: 2, stdout: "", stderr: expect.stringContaining("cannot run node") };
      expect(relay(["grep", "-f", "-", "."], root, noNode, "retries\n")).toEqual(cannot);
      expect(relay(["grep", "--no-daemon", "retries"], root, noNode)).toEqual(cannot);
      expect(relay(["grep", "retries"], root, { ...noNode, FRESHFS_DAEMON: "0" })).toEqual(cannot);
      expect(relay(["daemon", "status"], root, noNode)).toEqual(cannot);
      expect(relay(["--version"], root, noNode)).toEqual(cannot);
      // Another answering environment: another daemon's socket (none runs there).
      expect(relay(["grep", "retries"], root, { ...noNode, GIT_OTHER: "1" })).toEqual(cannot);
      // A tree the daemon does not keep live yet.
      const other = mkdtempSync(join(tmpdir(), "relay-cold-"));
      writeFileSync(join(other, "a.txt"), "retries\n");
      expect(relay(["grep", "retries"], other, noNode)).toEqual(cannot);
      rmSync(other, { recursive: true, force: true });
      // An argument that is not UTF-8: Node reads it as bytes.
      const raw = spawnSync("/bin/sh", ["-c", `"${RELAY}" grep "$(printf 'r\\377')"`], {
        cwd: root,
        env: noNode,
        encoding: "utf8",
      });
      expect(raw.stderr).toContain("cannot run node");
    });

    it("turns to Node's freshfs for an output over its bound (MAX_OUTPUT_BYTES)", async () => {
      const line = `hit ${"a".repeat(9_000)}\n`;
      const big = join(root, "big");
      mkdirSync(big);
      // 2 files of 9 MB (under the 16 MiB file-size bound), every line a match: 18 MB printed.
      for (const name of ["one.txt", "two.txt"]) writeFileSync(join(big, name), line.repeat(1_000));
      // `big` searched for the first time: asked until the daemon keeps it live.
      const run = relayed(["grep", "-c", "hit", "big"], root, env);
      expect(run).toEqual({
        status: 0,
        stdout: "big/one.txt:1000\nbig/two.txt:1000\n",
        stderr: "",
      });
      expect(relay(["grep", "hit", "big"], root, noNode)).toEqual({
        status: 2,
        stdout: "",
        stderr: expect.stringContaining("cannot run node"),
      });
      rmSync(big, { recursive: true, force: true });
    });

    it("and then Node's freshfs answers: stdin, --no-daemon, a cold tree", () => {
      const args = ["grep", "-f", "-", "src/app.ts"];
      const stdin = relay(args, root, env, "retries\n");
      expect(stdin).toEqual(
        freshfs(args, root, { ...env, FRESHFS_DAEMON: "0" }, undefined, "retries\n"),
      );
      expect(stdin.stdout).toContain("export const retries = 3;");
      const other = mkdtempSync(join(tmpdir(), "relay-cold-"));
      writeFileSync(join(other, "a.txt"), "retries here\n");
      const cold = relay(["grep", "retries"], other, env);
      expect(cold).toEqual({ status: 0, stdout: "a.txt:1:retries here\n", stderr: "" });
      rmSync(other, { recursive: true, force: true });
    });

    it("stops quietly when its reader has had enough (EPIPE), as rg does", () => {
      const run = spawnSync("/bin/sh", ["-c", `"${RELAY}" grep -n e .. | head -1`], {
        cwd: join(root, "src", "util"),
        env: noNode,
        encoding: "utf8",
      });
      expect(run.stdout.split("\n")).toHaveLength(2);
      expect(run.stderr).toBe("");
    });

    it("is what bin/freshfs runs, also through a link to it (npm's node_modules/.bin)", () => {
      const bin = mkdtempSync(join(tmpdir(), "relay-bin-"));
      symlinkSync(WRAPPER, join(bin, "freshfs"));
      const linked = relay(
        ["grep", "-c", "retries", "src/app.ts"],
        root,
        noNode,
        undefined,
        join(bin, "freshfs"),
      );
      expect(linked).toEqual({ status: 0, stdout: "src/app.ts:1\n", stderr: "" });
      const viaNode = relay(["--version"], root, env, undefined, join(bin, "freshfs"));
      expect(viaNode.status).toBe(0);
      expect(viaNode.stdout).toMatch(/^\d+\.\d+\.\d+/);
      rmSync(bin, { recursive: true, force: true });
    });
  });

  describe("with a daemon that answers otherwise", () => {
    let server: Server | undefined;
    afterAll(() => server?.close());

    /** A fake daemon on the relay's socket, answering each line with `reply(line)`. */
    async function fake(runtime: string, reply: (line: string) => string | undefined) {
      server?.close();
      const path = socketPath(envFor(runtime));
      mkdirSync(runtime, { recursive: true });
      server = createServer((socket) => {
        // The relay closes its end as soon as it has what it needs.
        socket.on("error", () => undefined);
        let buffered = "";
        socket.on("data", (chunk) => {
          buffered += chunk.toString("utf8");
          for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
            const answer = reply(buffered.slice(0, nl));
            buffered = buffered.slice(nl + 1);
            if (answer === undefined) socket.destroy();
            else socket.write(answer);
          }
        });
      });
      await new Promise<void>((resolve) => server?.listen(path, resolve));
    }

    const cases: readonly [string, (line: string) => string | undefined][] = [
      ["of another build", () => '{"id":0,"error":{"code":"VERSION_MISMATCH","message":"no"}}\n'],
      [
        "that closes the connection mid-call",
        (line) => (line.includes('"hello"') ? '{"id":0,"result":{}}\n' : undefined),
      ],
      [
        "whose answer is cut short",
        (line) =>
          line.includes('"hello"')
            ? '{"id":0,"result":{}}\n'
            : `{"id":1,"result":{"exit":0,"frames":"${Buffer.from([1, 9, 0, 0, 0, 0x61]).toString("base64")}"}}\n`,
      ],
      [
        "that answers with an error",
        (line) =>
          line.includes('"hello"')
            ? '{"id":0,"result":{}}\n'
            : '{"id":1,"error":{"code":"INTERNAL","message":"boom"}}\n',
      ],
    ];
    for (const [what, reply] of cases) {
      it(`turns to Node's freshfs for a daemon ${what}, having printed nothing`, async () => {
        const runtime = runtimeDir();
        await fake(runtime, reply);
        const env = { ...envFor(runtime), PATH: NO_NODE };
        const run = await relayAsync(["grep", "x"], env);
        expect(run.stdout).toBe("");
        expect(run.stderr).toContain("cannot run node");
        expect(run.status).toBe(2);
      });
    }

    it("relays a well-formed answer's frames in order, stdout and stderr", async () => {
      const runtime = runtimeDir();
      const frames = Buffer.concat([
        Buffer.from([1, 4, 0, 0, 0]),
        Buffer.from("one\n"),
        Buffer.from([2, 5, 0, 0, 0]),
        Buffer.from("warn\n"),
        Buffer.from([1, 4, 0, 0, 0]),
        Buffer.from("two\n"),
      ]);
      let asked = "";
      await fake(runtime, (line) => {
        if (line.includes('"hello"')) return '{"id":0,"result":{}}\n{"id":1,"alive":true}\n';
        asked = line;
        return `{"id":1,"result":{"exit":1,"frames":"${frames.toString("base64")}"}}\n`;
      });
      const run = await relayAsync(["grep", "x", "a b"], {
        ...envFor(runtime),
        PATH: NO_NODE,
      });
      expect(run).toEqual({ status: 1, stdout: "one\ntwo\n", stderr: "warn\n" });
      const request = JSON.parse(asked) as { method: string; params: { argv: string[] } };
      expect(request.method).toBe("cli");
      expect(request.params.argv).toEqual(["grep", "x", "a b"]);
    });
  });
});

/** The relay run without blocking this thread (the fake daemon answers in it). */
function relayAsync(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(RELAY, args, { env, cwd: tmpdir() });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

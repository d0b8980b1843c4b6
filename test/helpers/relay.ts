/**
 * Test helpers for the native relay (`native/relay/relay.c`): its binary, and a PATH with no
 * `node` on it, which tells whether the relay answered: one that turns to Node's `freshfs`
 * then fails, saying it cannot run node.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { REPO, type Run } from "./daemons.js";

export const RELAY = join(REPO, "prebuilds", "linux-x64", "freshfs-relay");
export const relayRuns = process.platform === "linux" && process.arch === "x64";

/** A PATH with only what bin/freshfs and the tests' pipes run on it (readlink, uname, head). */
export const NO_NODE = mkdtempSync(join(tmpdir(), "no-node-"));
for (const tool of ["readlink", "uname", "head"]) {
  const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
  if (found) symlinkSync(found, join(NO_NODE, tool));
}
afterAll(() => rmSync(NO_NODE, { recursive: true, force: true }));

export function relay(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  input?: string,
  bin = RELAY,
): Run {
  const run = spawnSync(bin, args, { cwd, env, encoding: "utf8", input, timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * The relay's own answer, with no node to turn to: a directory searched for the first time is
 * not live in the daemon (the relay turns to Node's freshfs, and the daemon makes it live for
 * the calls after), so it is asked again, for up to 5 s, until it answers.
 */
export function relayed(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Run {
  const noNode = { ...env, PATH: NO_NODE };
  let ours = relay(args, cwd, noNode);
  for (let i = 0; i < 100 && ours.stderr.includes("cannot run node"); i++) {
    spawnSync("sleep", ["0.05"]);
    ours = relay(args, cwd, noNode);
  }
  return ours;
}

/**
 * The built `freshfs` binary (npm test builds it first).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const BIN = new URL("../dist/cli/main.js", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

function freshfs(...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
}

describe("freshfs CLI", () => {
  it("prints the package version", () => {
    const run = freshfs("--version");
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(manifest.version);
  });

  it("prints help", () => {
    const run = freshfs("--help");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Usage:");
    expect(run.stdout).toContain("freshfs --version");
  });

  it("exits 2 with one clear line for an unknown command or flag", () => {
    const command = freshfs("frobnicate");
    expect(command.status).toBe(2);
    expect(command.stderr).toContain("unknown command 'frobnicate'");
    const flag = freshfs("--frobnicate");
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain("--frobnicate");
  });
});

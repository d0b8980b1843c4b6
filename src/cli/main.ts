#!/usr/bin/env node
/**
 * `freshfs` run by Node: this process's arguments (as bytes where they are not UTF-8), its
 * streams, its exit status; the command itself is `run`'s. The `freshfs` a shell finds is
 * `bin/freshfs`, which runs the native relay instead when it can (`cli/relay`).
 */
import { readFileSync } from "node:fs";
import { decodeName } from "../io/bytes.js";
import { runCli } from "./run.js";

// `freshfs grep x | head -1`: the reader has all it wants; stop quietly, as rg does.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

/**
 * The arguments as given. Node decodes them as UTF-8, an invalid byte as U+FFFD, so a path
 * that is not UTF-8 would name no file; on Linux the bytes are in /proc/self/cmdline, and are
 * read from there, each invalid byte escaped (`io/bytes`) so that it leads to the file.
 */
function argumentsGiven(): string[] {
  const given = process.argv.slice(2);
  if (!given.some((arg) => arg.includes("\uFFFD"))) return given;
  try {
    const raw = readFileSync("/proc/self/cmdline");
    const parts = raw
      .subarray(0, raw.length - 1)
      .toString("latin1")
      .split("\0");
    const ours = parts.slice(parts.length - given.length);
    if (ours.length !== given.length) return given;
    return ours.map((part) => decodeName(Buffer.from(part, "latin1")));
  } catch {
    return given;
  }
}

runCli(argumentsGiven()).then((status) => {
  process.exitCode = status;
});

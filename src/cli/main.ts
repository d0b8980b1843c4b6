#!/usr/bin/env node
/**
 * The `freshfs` command. Depends on the library's public surface only. Commands arrive with
 * later issues; for now it answers `--version` and `--help`.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const HELP = `freshfs: the file layer of a coding agent.

Usage:
  freshfs --help       show this help
  freshfs --version    print the version

A read-before-write guard and gitignore-aware file search, as a library (import "freshfs").
See the README for the API.
`;

function version(): string {
  // dist/cli/main.js and src/cli/main.ts both sit two levels below package.json.
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return String(manifest.version);
}

function main(argv: readonly string[]): number {
  let values: { help?: boolean | undefined; version?: boolean | undefined };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: {
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "V" },
      },
      allowPositionals: true,
    }));
  } catch (error) {
    process.stderr.write(`freshfs: ${(error as Error).message}\nTry 'freshfs --help'.\n`);
    return 2;
  }
  if (values.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (values.help || positionals.length === 0) {
    process.stdout.write(HELP);
    return 0;
  }
  process.stderr.write(`freshfs: unknown command '${positionals[0]}'\nTry 'freshfs --help'.\n`);
  return 2;
}

process.exitCode = main(process.argv.slice(2));

/**
 * The git configuration reader: the settings the gitignore family depends on, parsed as git
 * parses them (checked here against `git config` itself on the same files).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig, readGitSettings } from "../../src/scan/ignore/gitconfig.js";
import { tempTree } from "../helpers/fs.js";
import { isolatedGitEnv } from "../helpers/git.js";

const CONFIGS: Record<string, string> = {
  "quoted, escaped, commented":
    '[core]\n\texcludesFile = "/x/with space\\\\and\\"quote" ; comment\n',
  "section on the key's line": "[core] excludesfile = /x/inline\n",
  "continued line": "[core]\n\texcludesFile = /x/con\\\n/tinued\n",
  "byte order mark": "\uFEFF[core]\n\texcludesFile = /x/bom\n",
  "subsections are not core":
    '[core "x"]\n\texcludesFile = /x/no\n[core]\n\texcludesFile = /x/yes\n',
  "last value wins": "[core]\n\texcludesFile = /x/first\n[CORE]\n\tEXCLUDESFILE = /x/last\n",
  "integer booleans": "[core]\n\tignoreCase = 2\n",
  "a bare key is true": "[core]\n\tignoreCase\n",
  "zero is false": "[core]\n\tignoreCase = 0\n",
};

describe("git config", () => {
  for (const [name, text] of Object.entries(CONFIGS)) {
    it(`reads ${name} as git does`, async () => {
      const dir = await tempTree();
      const file = join(dir, "config");
      writeFileSync(file, text);
      const git = (key: string, type: string[] = []) => {
        try {
          return execFileSync("git", ["config", "--file", file, ...type, "--get", key], {
            encoding: "utf8",
            env: isolatedGitEnv(dir),
          }).trimEnd();
        } catch {
          return undefined;
        }
      };
      const ours = readGitSettings([file], isolatedGitEnv(dir));
      expect(ours.excludesFile).toBe(git("core.excludesFile"));
      expect(ours.ignoreCase).toBe((git("core.ignoreCase", ["--type=bool"]) ?? "false") === "true");
    });
  }

  it("follows include.path relative to the including file", async () => {
    const dir = await tempTree({ "sub/extra": "[core]\n\texcludesFile = /x/included\n" });
    writeFileSync(join(dir, "config"), "[include]\n\tpath = sub/extra\n");
    expect(readGitSettings([join(dir, "config")], isolatedGitEnv(dir)).excludesFile).toBe(
      "/x/included",
    );
  });

  it("parses keys into section.key pairs", () => {
    expect(parseConfig('[Core]\n\tExcludesFile = a\n[remote "Origin"]\n\turl = b\n')).toEqual([
      ["core.excludesfile", "a"],
      ["remote.Origin.url", "b"],
    ]);
  });
});

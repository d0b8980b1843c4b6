/**
 * U+017F LONG S and U+212A KELVIN SIGN: rg (Unicode case folding) matches them for `s` and `k`
 * ignoring case, where the byte search and the content index fold ASCII only. A file holding
 * either must be searched without the folded literal, cold and through the index, and the
 * literal must stay whole everywhere else (`pm_resume`, not `pm_re`).
 */
import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { buildSegment } from "../../src/content/build-thread.js";
import { FOLDS_ASIDE, NON_ASCII } from "../../src/content/format.js";
import { compilePattern } from "../../src/search/grep/pattern.js";
import { planRegex } from "../../src/search/grep/regex/index.js";
import { answer, greps, warmIndex } from "../helpers/content-index.js";
import { tempTree } from "../helpers/fs.js";

const FILES: Record<string, string> = {
  "plain.c": "int pm_resume(void);\nPM_RESUME\n",
  "long-s.c": "/* pm_re\u017fume */\n",
  "kelvin.c": "link_req_r\u0073t \u212aELVIN\n",
  "other.c": "nothing here\nkelvin\n",
  "accents.c": "caf\u00e9 pm_resume\n",
};

let root: string;
const { indexed, plain } = greps(() => root);

beforeAll(async () => {
  root = await tempTree(FILES, { lifetime: "file" });
  await warmIndex(root, indexed);
});

function rg(pattern: string): string[] {
  const run = spawnSync("rg", ["--no-config", "-i", "-l", "--sort", "path", pattern, "."], {
    cwd: root,
    encoding: "utf8",
  });
  return run.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.replace(/^\.\//, ""));
}

describe("the two characters Unicode case folding maps to ASCII", () => {
  it("keeps the folded literal whole, and says it holds a letter they fold to", () => {
    const compiled = compilePattern("PM_RESUME", {
      fixedStrings: false,
      ignoreCase: true,
      smartCase: false,
      word: false,
      multiline: false,
    });
    expect(compiled.literal).toBe("pm_resume");
    expect(compiled.foldsAside).toBe(true);
    const plan = planRegex(compiled.planned, {
      fixedStrings: false,
      ignoreCase: true,
      unicode: true,
      multiline: false,
    });
    expect(plan.query).toEqual({ kind: "literal", text: "pm_resume" });
    expect(plan.foldsAside).toBe(true);
    const none = planRegex("PM_REDUCE", {
      fixedStrings: false,
      ignoreCase: true,
      unicode: true,
      multiline: false,
    });
    expect(none.foldsAside).toBe(false);
  });

  it("marks the indexed files that hold them", () => {
    const names = Object.keys(FILES).sort();
    const data = buildSegment({
      id: 1,
      root,
      paths: names.join("\0"),
      maxFileBytes: 1 << 20,
      maxSegmentBytes: 1 << 25,
    });
    const flagOf = (name: string) => data.flags[names.indexOf(name)] as number;
    expect(flagOf("long-s.c")).toBe(NON_ASCII | FOLDS_ASIDE);
    expect(flagOf("kelvin.c")).toBe(NON_ASCII | FOLDS_ASIDE);
    expect(flagOf("accents.c")).toBe(NON_ASCII);
    expect(flagOf("plain.c")).toBe(0);
  });

  it("finds them ignoring case, cold and through the index, as rg does", async () => {
    for (const pattern of [
      "PM_RESUME",
      "pm_resume",
      "kelvin",
      "link_req_rst",
      "PM_RESUME|KELVIN",
    ]) {
      const cold = await plain(pattern, { ignoreCase: true, outputMode: "files_with_matches" });
      const warm = await indexed(pattern, { ignoreCase: true, outputMode: "files_with_matches" });
      expect(warm.freshness).toBe("live");
      expect(answer(warm), pattern).toEqual(answer(cold));
      if (spawnSync("rg", ["--version"]).status === 0) {
        expect([...cold.files].sort(), pattern).toEqual(rg(pattern));
      }
    }
    const found = await indexed("PM_RESUME", {
      ignoreCase: true,
      outputMode: "files_with_matches",
    });
    expect([...found.files].sort()).toEqual(["accents.c", "long-s.c", "plain.c"]);
    // Case as written: U+017F is not `s`.
    const exact = await indexed("pm_resume", { outputMode: "files_with_matches" });
    expect([...exact.files].sort()).toEqual(["accents.c", "plain.c"]);
  });
});

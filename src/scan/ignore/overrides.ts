/**
 * rg's overrides (`-g`, `--iglob`): globs in gitignore syntax that choose which files a search
 * takes, over and above the ignore files, as ripgrep's `ignore::overrides` does; with brace
 * expansion (`*.{ts,tsx}`), which gitignore syntax lacks. Depends on `errors` and
 * `ignore/pattern`.
 */
import { FreshfsError, quoted } from "../../errors.js";
import { byteForm, IgnoreFile, type PatternProblem } from "./pattern.js";

/** Patterns one glob may expand to: `{a,b}` nested twenty deep is a million. */
const MAX_EXPANSIONS = 1024;

/** `a{b,c}d` → `abd`, `acd` (nested too), as ripgrep's globs allow; escapes kept. */
function expandBraces(glob: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") i++;
    else if (c === "{" && depth++ === 0) open = i;
    else if (c === "}" && depth > 0 && --depth === 0) {
      const inner = glob.slice(open + 1, i);
      const options: string[] = [];
      let start = 0;
      let level = 0;
      for (let j = 0; j < inner.length; j++) {
        const d = inner[j];
        if (d === "\\") j++;
        else if (d === "{") level++;
        else if (d === "}") level--;
        else if (d === "," && level === 0) {
          options.push(inner.slice(start, j));
          start = j + 1;
        }
      }
      options.push(inner.slice(start));
      const out: string[] = [];
      for (const option of options) {
        for (const expanded of expandBraces(glob.slice(0, open) + option + glob.slice(i + 1))) {
          out.push(expanded);
          if (out.length > MAX_EXPANSIONS) {
            throw new FreshfsError(
              "INVALID_PATTERN",
              `The glob ${quoted(glob)} expands to more than ${MAX_EXPANSIONS} patterns.`,
            );
          }
        }
      }
      return out;
    }
  }
  return [glob];
}

/** What the `-g` globs say of a file: an include glob took it, an exclude glob left it out, or none spoke. */
export type GlobVerdict = "include" | "exclude" | "none";

export interface GlobFilter {
  /** The file is searched (when nothing else rules it out). */
  readonly passes: (path: string) => boolean;
  /** The verdict itself: an include glob overrides ignore rules and hiddenness, as in rg. */
  readonly verdict: (path: string) => GlobVerdict;
}

/** Brace-expanded ignore-file lines of globs: a plain line includes, a `!` line excludes. */
function globLines(globs: readonly string[]): string[] {
  return globs.flatMap((glob) => {
    const negated = glob.startsWith("!");
    try {
      return expandBraces(negated ? glob.slice(1) : glob).map((one) => (negated ? `!${one}` : one));
    } catch (error) {
      // Name the glob as the caller wrote it, not the half-expanded one the recursion held.
      if (!(error instanceof FreshfsError)) throw error;
      throw new FreshfsError(
        "INVALID_PATTERN",
        `The glob ${quoted(glob)} expands to more than ${MAX_EXPANSIONS} patterns.`,
      );
    }
  });
}

/**
 * ripgrep's `-g`: globs in gitignore syntax (anchoring, `**`, directory-only), `!glob` excludes,
 * the last matching glob wins, an excluded directory takes its files with it, and when any glob
 * includes, a file no glob matches is left out. `globs` match with case, then `caseless` without
 * (`--iglob`; ASCII case, as the ignore files' `core.ignoreCase`), as rg adds them: every caseless
 * glob comes after every other, so where one matches it is the last match, and wins.
 */
export function globFilter(
  globs: readonly string[],
  caseless: readonly string[],
): GlobFilter | undefined {
  const sets = [
    { lines: globLines(caseless), ignoreCase: true },
    { lines: globLines(globs), ignoreCase: false },
  ].filter((set) => set.lines.length > 0);
  if (sets.length === 0) return undefined;
  const files = sets.map(({ lines, ignoreCase }) => {
    const rules = IgnoreFile.compile(lines.join("\n"), "glob", { ignoreCase });
    if (rules.problems.length > 0) {
      const problem = rules.problems[0] as PatternProblem;
      throw new FreshfsError(
        "INVALID_PATTERN",
        `Invalid glob ${quoted(problem.pattern)}: it ${problem.message}.`,
      );
    }
    return rules;
  });
  const includes = sets.some(({ lines }) => lines.some((line) => !line.startsWith("!")));
  const match = (name: string, isDir: boolean, path: string) => {
    for (const rules of files) {
      const rule = rules.match(name, isDir, path);
      if (rule) return rule;
    }
    return undefined;
  };
  const verdict = (path: string): GlobVerdict => {
    const bytes = byteForm(path);
    for (let slash = bytes.indexOf("/"); slash !== -1; slash = bytes.indexOf("/", slash + 1)) {
      const dir = bytes.slice(0, slash);
      if (match(dir.slice(dir.lastIndexOf("/") + 1), true, dir)?.negated) return "exclude";
    }
    const rule = match(bytes.slice(bytes.lastIndexOf("/") + 1), false, bytes);
    if (!rule) return "none";
    return rule.negated ? "exclude" : "include";
  };
  return {
    verdict,
    passes: (path) => {
      const said = verdict(path);
      return said === "include" || (said === "none" && !includes);
    },
  };
}

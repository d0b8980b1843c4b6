/**
 * The conformance cases as a report, for working on flags:
 *
 *   npx tsx test/grep/rg-conformance/report.ts [filter]
 *
 * prints, per case whose id contains `filter` (all when omitted), whether it is supported and
 * whether freshfs agrees with rg; for a disagreement, both exit statuses and a short diff of
 * stdout (`-` rg only, `+` freshfs only). The counts close the report. Build first
 * (`npm run build`): it runs dist/, not src/.
 */
import { CASES } from "./cases.js";
import { flagsOf, SUPPORTED } from "./flags.js";
import { KNOWN_DIFFERENCES } from "./known.js";
import {
  type CaseResult,
  formatSummary,
  hasFreshfsBuild,
  hasRg,
  isSupported,
  runCases,
  summarize,
  type ToolRun,
} from "./run.js";

/** How many diff lines a disagreement shows before eliding the rest. */
const DIFF_LINES = 12;

/** Control bytes made visible, so a NUL or a CR in the output can be seen in the diff. */
function visible(line: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are the point.
  return line.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (ch) => {
    const code = ch.charCodeAt(0);
    return code === 0 ? "\\0" : code === 13 ? "\\r" : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}

function lines(text: string): string[] {
  if (text === "") return [];
  const parts = text.split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  else parts[parts.length - 1] += "⏎̸"; // marks a missing final newline
  return parts;
}

/** A line diff by longest common subsequence (outputs here are small). */
function diff(a: readonly string[], b: readonly string[]): string[] {
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        a[i] === b[j]
          ? ((lcs[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as number[])[j] as number, row[j + 1] as number);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push(`  ${visible(a[i] as string)}`);
      i++;
      j++;
    } else if (
      j >= m ||
      (i < n && ((lcs[i + 1] as number[])[j] as number) >= ((lcs[i] as number[])[j + 1] as number))
    ) {
      out.push(`- ${visible(a[i] as string)}`);
      i++;
    } else {
      out.push(`+ ${visible(b[j] as string)}`);
      j++;
    }
  }
  return out;
}

function status(run: ToolRun): string {
  if (run.timedOut) return "timeout";
  if (run.status === null) return run.signal ?? "no status";
  return String(run.status);
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

function describeDisagreement(result: CaseResult): string[] {
  const out = [`    status: rg ${status(result.rg)}, freshfs ${status(result.freshfs)}`];
  if (result.rg.stdout !== result.freshfs.stdout) {
    const changed = diff(lines(result.rg.stdout), lines(result.freshfs.stdout));
    const interesting = changed.filter((line) => !line.startsWith("  "));
    const shown = interesting.length <= DIFF_LINES ? changed : interesting;
    for (const line of shown.slice(0, DIFF_LINES)) out.push(`    ${line}`);
    if (shown.length > DIFF_LINES) out.push(`    … ${shown.length - DIFF_LINES} more diff lines`);
  }
  if (result.freshfs.stderr !== "")
    out.push(`    freshfs stderr: ${firstLine(result.freshfs.stderr)}`);
  if (result.rg.stderr !== "") out.push(`    rg stderr: ${firstLine(result.rg.stderr)}`);
  return out;
}

async function main(): Promise<void> {
  if (!hasRg())
    throw new Error("the report needs ripgrep 13 on PATH (`apt-get install -y ripgrep`)");
  if (!hasFreshfsBuild()) throw new Error("no dist/cli/main.js: run `npm run build` first");
  const filter = process.argv[2] ?? "";
  const cases = CASES.filter((c) => c.id.includes(filter));
  const results = await runCases(cases.filter((c) => c.skip === undefined));
  const byId = new Map(results.map((result) => [result.id, result]));
  for (const c of cases) {
    if (c.skip !== undefined) {
      console.log(`skip        ${c.id}  [${c.skip.kind}] ${c.skip.why}`);
      continue;
    }
    const result = byId.get(c.id) as CaseResult;
    const supported = isSupported(c);
    const known = KNOWN_DIFFERENCES[c.id];
    const verdict = result.agree ? "agree   " : known === undefined ? "DIFFER  " : "known   ";
    const missing = flagsOf(c.args).filter((flag) => !SUPPORTED.has(flag));
    const support = supported ? "supported  " : `unsupported (${missing.join(" ")})`;
    console.log(`${verdict}    ${c.id}  ${support}${c.newer ? "  [newer]" : ""}`);
    if (!result.agree) {
      console.log(
        `    args: ${JSON.stringify(c.args)}${c.cwd === undefined ? "" : ` cwd ${c.cwd}`}`,
      );
      if (known !== undefined) console.log(`    known: ${known.why}`);
      for (const line of describeDisagreement(result)) console.log(line);
    }
  }
  console.log("");
  console.log(formatSummary(summarize(cases, results)));
}

await main();

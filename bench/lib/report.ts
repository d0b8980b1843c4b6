/**
 * The report `npm run bench` writes: BENCHMARKS.md (machine, corpus, then one section per
 * suite: method, tables, charts, reading) and one SVG per chart beside it. Each suite returns a
 * `SuiteResult`; this module only lays them out.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { renderChart } from "./chart.js";
import type { Chart } from "./chart-types.js";

export interface SuiteResult {
  /** The section's heading: "Walker and scan cache (`bench/scan.ts`)". */
  readonly heading: string;
  /** What is measured and against what: Markdown, written before the tables. */
  readonly method: string;
  /** Tables and notes: Markdown. */
  readonly body: string;
  readonly charts: readonly Chart[];
  /** What the numbers say: Markdown bullets (without the leading "- "), numbers interpolated. */
  readonly reading: readonly string[];
  /** Peers looked for and not installed: named on the page, never silently dropped. */
  readonly missing: readonly string[];
}

export interface ReportHeader {
  readonly date: string;
  readonly machine: string;
  /** One paragraph on the corpus (file counts), or on the generated tree in quick mode. */
  readonly corpus: string;
  readonly quick: boolean;
}

/**
 * Writes `BENCHMARKS.md` into `dir` and the charts into `chartsDir`, linked relatively.
 * Returns the Markdown.
 */
export function writeReport(
  dir: string,
  chartsDir: string,
  header: ReportHeader,
  suites: readonly SuiteResult[],
): string {
  mkdirSync(chartsDir, { recursive: true });
  const link = relative(dir, chartsDir).split("\\").join("/") || ".";
  const out: string[] = [
    "# Benchmarks",
    "",
    "Written by `npm run bench` (it builds the corpus first if `bench/.corpus` is missing, which",
    "needs the npm registry once). `npm run bench -- scan` runs one suite and prints it without",
    "writing this page; `npm run bench -- --quick` is the smoke run CI makes on a small generated",
    "tree, whose numbers are not meant to be quoted. Every figure is the median of several runs",
    "with the fastest and slowest beside it, and every ratio is against a peer or a floor measured",
    "in the same run, their operations interleaved run by run.",
    "",
    header.quick
      ? `**Quick mode** (${header.date}): a smoke run; the numbers say the benchmarks still run, nothing more.`
      : `Measured on ${header.date}.`,
    "",
    `Machine: ${header.machine}.`,
    "",
    header.corpus,
    "",
  ];
  const missing = [...new Set(suites.flatMap((suite) => suite.missing))];
  if (missing.length > 0) {
    out.push(
      `**Missing peers** (not installed on this machine, so not measured; their rows say so): ${missing.join(", ")}.`,
      "",
    );
  }
  for (const suite of suites) {
    out.push(`## ${suite.heading}`, "", suite.method, "", suite.body, "");
    for (const chart of suite.charts) {
      writeFileSync(join(chartsDir, `${chart.name}.svg`), renderChart(chart));
      out.push(`![${chart.title}](${link}/${chart.name}.svg)`, "");
    }
    if (suite.reading.length > 0) {
      out.push("Reading:", "", ...suite.reading.map((line) => `- ${line}`), "");
    }
  }
  const markdown = `${out.join("\n").trimEnd()}\n`;
  writeFileSync(join(dir, "BENCHMARKS.md"), markdown);
  return markdown;
}

/**
 * What a benchmark chart shows: groups (one task each) of horizontal bars (one tool each).
 * `bench/lib/chart.ts` draws it as a standalone SVG for BENCHMARKS.md and the README.
 */
import type { Timing } from "./measure.js";

export type BarKind = "freshfs" | "peer" | "floor";

export interface Bar {
  /** The tool, as a reader knows it: "freshfs (listing cached)", "rg", "git ls-files". */
  readonly label: string;
  readonly kind: BarKind;
  /**
   * Time charts: microseconds per operation (median, fastest and slowest run). Score charts:
   * `median` is the score, `min` and `max` equal to it. Undefined: the peer is not installed,
   * drawn as "not installed" rather than left out.
   */
  readonly timing: Timing | undefined;
}

export interface BarGroup {
  /** The task: "rare literal `BadRequestException`". */
  readonly label: string;
  readonly bars: readonly Bar[];
}

export interface Chart {
  /** File name without extension: `grep` becomes `docs/charts/grep.svg`. */
  readonly name: string;
  readonly title: string;
  /** One line under the title: what the bars are and what is better. */
  readonly subtitle: string;
  /** "time": shorter is better, labelled as durations, ratios against the first freshfs bar. "score": longer is better, 0..1. */
  readonly unit: "time" | "score";
  readonly groups: readonly BarGroup[];
}

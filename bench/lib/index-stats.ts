/**
 * The content indexes of one root, added up (one index per live tree: a root searched with two
 * policies has two). Shared by the linux and live suites.
 */
import type { ContentIndexStats } from "../../src/index.js";

export type SummedIndexStats = Omit<ContentIndexStats, "root" | "snapshot"> & {
  readonly indexes: number;
};

export function sumIndexStats(stats: readonly ContentIndexStats[]): SummedIndexStats {
  const sum = (pick: (s: ContentIndexStats) => number) => stats.reduce((n, s) => n + pick(s), 0);
  const builds = stats.flatMap((s) => (s.buildMs === undefined ? [] : [s.buildMs]));
  return {
    indexes: stats.length,
    files: sum((s) => s.files),
    segments: sum((s) => s.segments),
    bytes: sum((s) => s.bytes),
    textBytes: sum((s) => s.textBytes),
    building: sum((s) => s.building),
    full: stats.some((s) => s.full),
    buildMs: builds.length > 0 && builds.length === stats.length ? Math.max(...builds) : undefined,
  };
}

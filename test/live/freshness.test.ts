/**
 * Freshness of the live trees, the fast version of `npm run stress -- freshness`,
 * with the same checks (stress/freshness.ts): another process changes a tree, and every answer
 * of glob, grep and fuzzyFind with `watch: true` (and a Workspace's) made right after must equal
 * a fresh walk's. Each scenario small: randomized changes in a git repository, a checkout, a
 * burst while this thread is blocked, a watched directory deleted and made again, a watch
 * budget below the tree's directories.
 */
import { afterEach, describe, expect, it } from "vitest";
import { configureLiveTrees } from "../../src/index.js";
import {
  blockedBurst,
  checkoutSwitch,
  deleteRecreate,
  nestedRepository,
  randomChurn,
  resetLiveTrees,
  type ScenarioReport,
  watchBudget,
} from "../../stress/freshness.js";

afterEach(() => {
  resetLiveTrees();
  configureLiveTrees(undefined);
});

/** No stale answer, and the scenario did ask (the message lists the first stale ones). */
function expectFresh(report: ScenarioReport): void {
  const examples = report.staleExamples.map((line) => `  ${line}`).join("\n");
  expect(
    report.stale,
    `${report.name}: ${report.stale} stale answers, the first:\n${examples}`,
  ).toBe(0);
  expect(report.answers - report.notCompared).toBeGreaterThan(0);
}

describe("live trees: every answer reflects every change another process completed before it", () => {
  it("~150 randomized changes in a git repository, each followed by glob, grep and find", async () => {
    const report = await randomChurn({
      steps: 150,
      seed: 114,
      dirs: 10,
      filesPerDir: 4,
      maxFiles: 300,
      maxDirs: 100,
      workspaceEvery: 3,
      rgEvery: 10,
      concurrentShare: 0.25,
    });
    expectFresh(report);
    expect(report.commands).toBe(150);
    // Not vacuous: most answers came from the watched listing, not from walks.
    expect(report.byFreshness.live ?? 0).toBeGreaterThan(report.answers / 2);
  });

  it("git checkout between branches that differ in 500 files, each way", async () => {
    const report = await checkoutSwitch({ files: 500, roundTrips: 2 });
    expectFresh(report);
    expect(report.commands).toBe(4);
  });

  it("20,000 files created, then deleted, while this thread is blocked for 1 s", async () => {
    const report = await blockedBurst({ files: 20_000, blockMs: 1000, bursts: 2 });
    expectFresh(report);
    expect(report.changes).toBeGreaterThanOrEqual(40_000);
  });

  it("a watched directory (and the root) deleted and made again, repeatedly", async () => {
    const report = await deleteRecreate({ repetitions: 14, rootEvery: 7 });
    expectFresh(report);
    expect(report.byFreshness.live ?? 0).toBeGreaterThan(0);
  });

  it("a nested repository made and unmade by another process, then files added in it", async () => {
    const report = await nestedRepository({ repetitions: 3 });
    expectFresh(report);
  });

  it("a watch budget below the tree's directories: every call walks, and says why", async () => {
    const [below, grown] = await watchBudget({ dirs: 40, steps: 30, grow: 60, seed: 115 });
    for (const report of [below, grown] as ScenarioReport[]) expectFresh(report);
    expect(below?.byFreshness.live ?? 0).toBe(0);
    expect(Object.keys(below?.unwatched ?? {}).join("\n")).toMatch(/over the budget/);
    // Live while within the budget, walked once the other process took it past.
    expect(grown?.byFreshness.live ?? 0).toBeGreaterThan(0);
    expect(grown?.firstAfterChange.live ?? 0).toBe(0);
    expect(Object.keys(grown?.unwatched ?? {}).join("\n")).toMatch(/over the budget/);
  });
});

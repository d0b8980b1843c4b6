/**
 * Freshness through a real daemon, the fast version of the stress churn "the Workspace through
 * the daemon" (stress/freshness.ts): another process changes a git repository, and after each
 * change a Workspace with `daemon: "auto"` (its daemon started by its first call, with this
 * process's environment) asks glob, grep and find; each answer must equal a fresh walk made
 * after it, and every one must have come from the daemon, none from this process.
 */
import { afterEach, describe, expect, it } from "vitest";
import { configureLiveTrees } from "../../src/index.js";
import { randomChurn, resetLiveTrees } from "../../stress/freshness.js";

afterEach(() => {
  resetLiveTrees();
  configureLiveTrees(undefined);
});

describe("a Workspace through the daemon: every answer reflects every change made before it", () => {
  it("~300 randomized changes, each followed by the Workspace's glob, grep and find", async () => {
    const report = await randomChurn({
      name: "churn through the daemon",
      steps: 300,
      seed: 214,
      dirs: 10,
      filesPerDir: 4,
      maxFiles: 300,
      maxDirs: 100,
      workspaceEvery: 1,
      rgEvery: 10,
      concurrentShare: 0.25,
      daemon: true,
    });
    const examples = report.staleExamples.map((line) => `  ${line}`).join("\n");
    expect(report.stale, `${report.stale} stale answers, the first:\n${examples}`).toBe(0);
    expect(report.commands).toBe(300);
    // The first round and every round after a change asked the Workspace its three kinds.
    expect(report.viaDaemon.answers).toBe(301 * 3);
    expect(report.viaDaemon.byDaemon, report.notes.join("\n")).toBe(report.viaDaemon.answers);
  });
});

/**
 * The daemon killed under its clients, the fast version of `npm run stress -- daemon-kill`
 * (stress/daemon-kill.ts, which says how): SIGKILLs during mixed CLI and Workspace calls leave
 * every call answered, no answer stale, no edit lost or made twice; a snapshot write killed
 * midway leaves no snapshot or the previous one whole, its temp file is swept, and a snapshot cut
 * short is discarded. Real processes: the built CLI and a Workspace of `dist/`.
 */
import { describe, expect, it } from "vitest";
import { cutSnapshot, killDuringCalls } from "../../stress/daemon-kill.js";

describe("the daemon killed (SIGKILL) under its clients", () => {
  it("~150 mixed calls, a kill every 25-40: every one answered, none stale, no edit lost or made twice", async () => {
    const report = await killDuringCalls({
      calls: 150,
      dirs: 10,
      filesPerDir: 15,
      owned: 4,
      bigBytes: 4_000_000,
      killEvery: [25, 40],
      cyclesAlone: 2,
      callTimeoutMs: 30_000,
      seed: 131,
    });
    expect(report.problems).toEqual([]);
    expect(report.stale).toBe(0);
    expect(report.edits.lost).toBe(0);
    expect(report.edits.duplicated).toBe(0);
    expect(report.timedOut + report.failures).toBe(0);
    expect(report.cliCompared).toBe(report.cliCalls);
    // Not vacuous: daemons were killed, and others started in their place answered.
    expect(report.kills).toBeGreaterThanOrEqual(3);
    expect(report.daemonsStarted).toBeGreaterThanOrEqual(report.kills);
    expect(report.cliByDaemon).toBeGreaterThan(0);
    expect(report.workspaceByDaemon).toBeGreaterThan(0);
    expect(report.edits.reported).toBeGreaterThan(0);
  });

  it("a snapshot write killed midway: none or the previous one is left, swept after; one cut short is discarded", async () => {
    const report = await cutSnapshot({ dirs: 10, filesPerDir: 100, attempts: 5, seed: 132 });
    expect(report.problems).toEqual([]);
    expect(report.first.real).toBe("absent");
    expect(report.first.nextOutcome).toBe("none to load");
    expect(report.later.real).toBe("the previous one, byte for byte");
    expect(report.later.nextOutcome).toMatch(/^loaded in \d+ ms: /);
    for (const cut of [report.first, report.later]) {
      expect(cut.answersRight).toBe(report.queries);
      expect(cut.swept).toBe(true);
    }
    expect(report.truncated.outcome).toMatch(/^discarded: /);
    expect(report.truncated.answersRight).toBe(report.queries);
  });
});

/**
 * Lost updates across processes, the fast version of
 * `npm run stress -- lost-updates-processes`, with the same checks
 * (stress/lost-updates-processes.ts): processes with a Workspace each, and `freshfs mcp`
 * servers each driven by its own SDK client (running their tools in the server, or all in one
 * daemon), edit one file at once; the commit log, replayed, must account for every accepted
 * change. A control with no locking shows the replay finds lost updates where there are some.
 * The children run the built library (`npm run build`).
 */
import { describe, expect, it } from "vitest";
import {
  type ProcessRunReport,
  processLostUpdates,
  takeovers,
} from "../../stress/lost-updates-processes.js";
import { tempTree } from "../helpers/fs.js";

const STEPS = ["delete", "edit", "multiEdit", "recreate", "rename", "write"];

/** What every run with freshfs must show, whatever the schedule. */
function expectNoLostUpdate(report: ProcessRunReport, operations: number) {
  expect(report.violations).toEqual([]);
  expect(report.lost).toBe(0);
  expect(report.finalMatchesLog).toBe(true);
  expect(report.operations).toBe(operations);
  // Not vacuous: every kind of change was accepted and logged, each once.
  expect(Object.keys(report.acceptedBySteps).sort()).toEqual(STEPS);
  const committed = Object.values(report.acceptedBySteps).reduce((sum, n) => sum + n, 0);
  expect(report.commits).toBe(committed);
  expect(report.locked).toBe(0);
  // Every failure was a FreshfsError with its code.
  const codes = [...Object.keys(report.refused), ...Object.keys(report.readsRefused)];
  expect(codes.filter((code) => code.includes("untyped"))).toEqual([]);
}

describe("lost updates across processes: every accepted change is in the replayed commit log", () => {
  it("strict: 3 processes x 100 operations on one file", async () => {
    const dir = await tempTree();
    const report = await processLostUpdates({
      dir,
      processes: 3,
      ops: 100,
      files: 1,
      policy: "strict",
      driver: "workspace",
      seed: 21,
      thinkMs: 2,
    });
    expectNoLostUpdate(report, 300);
    expect(report.acceptedWithWarning).toBe(0);
    // Every commit was made on the bytes its process read (a recreate: after its own delete);
    // a write or rename onto a file deleted since its read is refused under strict.
    expect(report.createdAfterDelete).toBe(0);
    expect(report.onOwnRead + report.recreatesAfterOthers).toBe(report.commits);
    const codes = Object.keys(report.refused).filter(
      (code) => !["STALE", "NOT_FOUND", "INVALID_ARGUMENT"].includes(code),
    );
    expect(codes).toEqual([]);
  });

  it("warn: the same on one file, changed bytes overwritten only with a warning", async () => {
    const dir = await tempTree();
    const report = await processLostUpdates({
      dir,
      processes: 3,
      ops: 100,
      files: 1,
      policy: "warn",
      driver: "workspace",
      seed: 22,
      thinkMs: 2,
    });
    expectNoLostUpdate(report, 300);
    // Warn went ahead on changed bytes, and said so every time (the replay checks each).
    expect(report.replacedWithWarning + report.editsOnChangedWithWarning).toBeGreaterThan(0);
  });

  it("MCP: 2 freshfs mcp servers x 40 operations, each driven by its own SDK client", async () => {
    const dir = await tempTree();
    const report = await processLostUpdates({
      dir,
      processes: 2,
      ops: 40,
      files: 1,
      policy: "strict",
      driver: "mcp",
      seed: 23,
      thinkMs: 2,
    });
    expectNoLostUpdate(report, 80);
  });

  it("MCP through one daemon: 2 freshfs mcp servers x 40 operations, every commit the daemon's", async () => {
    const dir = await tempTree();
    const report = await processLostUpdates({
      dir,
      processes: 2,
      ops: 40,
      files: 1,
      policy: "strict",
      driver: "mcp-daemon",
      seed: 26,
      thinkMs: 2,
    });
    // The daemon logs its commits without their process: the replay told each by its content.
    expectNoLostUpdate(report, 80);
    // Every answer, a refusal too, names the daemon; any other is a violation.
    const answers = report.answers ?? { all: 0, fromDaemon: 0 };
    expect(answers.all).toBeGreaterThanOrEqual(160);
    expect(answers.fromDaemon).toBeGreaterThan(0);
    expect(answers.fromDaemon).toBe(answers.all);
  });

  it("control: the same operations as plain read-modify-write, no locks, are found losing updates", async () => {
    const dir = await tempTree();
    const report = await processLostUpdates({
      dir,
      processes: 3,
      ops: 100,
      files: 1,
      policy: "strict",
      driver: "plain",
      seed: 24,
      thinkMs: 2,
    });
    // Both checks see it: the replay names the steps, the processes see their lines go back.
    expect(report.lost).toBeGreaterThan(0);
    expect(report.violations.length).toBeGreaterThan(0);
    expect(report.blackBoxStale).toBeGreaterThan(0);
  });

  it("a lock holder killed with SIGKILL: the Workspace edit waiting for it proceeds, after the kill", async () => {
    const dir = await tempTree();
    const report = await takeovers({ dir, iterations: 3, seed: 25 });
    expect(report.refused).toEqual({});
    expect(report.beforeKill).toBe(0);
    expect(report.fileAsEdited).toBe(true);
    expect(report.locksLeft).toBe(0);
  });
});

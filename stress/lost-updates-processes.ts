/**
 * Lost updates across processes (issue 13's acceptance): several processes, each with its own
 * Workspace (or its own `freshfs mcp` server and SDK client), edit the same files at once with
 * a mix of edit, multiEdit, write, rename over the file and delete then recreate. No accepted
 * change may be lost: verified by an exact replay, not by sampling.
 *
 * - The operations (test/fixtures/reliability/mutator.mjs): each process owns two lines of
 *   every shared file and changes only those, to the number of its operation, keeping every
 *   other line as it read them; each operation starts with a read.
 * - The commit log (test/fixtures/reliability/commit-log.mjs, loaded with `node --import`):
 *   every freshfs mutation invalidates the scan cache under its locks right after its rename
 *   or unlink; the log is appended there with the file's state, so per file it lists every
 *   committed state in commit order.
 * - The replay: walking the log from the first content, each logged state must be the next
 *   accepted step of the process that logged it (in its own order) and nothing else: an edit's
 *   state is the state before it with its edits applied; a write's, rename's or recreate's is
 *   the content it wrote; a write, rename or delete must have replaced the very bytes its
 *   process read, except under `warn` with a warning; every accepted step appears once; the
 *   file at the end is the last logged state. A process's value disappearing from the file is
 *   then explained by the step that removed it, or it is a lost update.
 * - Beside it, a black-box check needing no log: at each read a process's own line shows the
 *   value of its last accepted operation, unless the replay names an allowed cause.
 * - Through the daemon: the servers run their tools in one daemon, which makes every commit and
 *   so logs it without its process; the replay tells whose it was by content (`committer`).
 * - A lock holder killed with SIGKILL: how soon a Workspace edit waiting for its lock proceeds.
 *
 * Children run the built library (`npm run build`); FRESHFS_DIST names another build (a
 * checkout of an older commit) to run the same checks against it. A build without the lock
 * files logs a commit's state with no lock held, so a line may show a later commit: the replay
 * still fails wherever an update was lost, but may blame a neighbouring step; the black-box
 * count needs no log.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { GuardPolicy } from "../src/index.js";
import { lockPlaceOf } from "../src/io/state-dirs.js";
import {
  describeState,
  distDir,
  type FileState,
} from "../test/fixtures/reliability/commit-log.mjs";
import {
  initialContent,
  lineValue,
  type OpRecord,
  type Outcome,
  type RunOptions,
  runOps,
  type Step,
  type Tools,
} from "../test/fixtures/reliability/mutator.mjs";

const COMMIT_LOG = new URL("../test/fixtures/reliability/commit-log.mjs", import.meta.url).href;
const MUTATOR = fileURLToPath(new URL("../test/fixtures/reliability/mutator.mjs", import.meta.url));

export type Driver = "workspace" | "plain" | "mcp" | "mcp-daemon";

export interface ProcessRunOptions {
  /** An empty directory (its real path). */
  dir: string;
  /** Processes (Workspace children, or MCP servers each with its own client). */
  processes: number;
  /** Operations per process. */
  ops: number;
  /** Shared files; each operation picks one. */
  files: number;
  /** Lines of 16 KiB after the slot lines (64: a 1 MiB file). @default 0 */
  fillerLines?: number;
  policy: GuardPolicy;
  /**
   * `workspace`: children with a Workspace each; `mcp`: `freshfs mcp` servers (always
   * `strict`), driven by SDK clients here; `mcp-daemon`: the same servers running their tools
   * in one daemon started here; `plain`: the control, the same operations as read-modify-write
   * with plain `fs` and no locking.
   */
  driver: Driver;
  seed: number;
  /** Longest pause between an operation's read and its change, every other operation. */
  thinkMs: number;
  /** The built library's directory. @default FRESHFS_DIST, else this checkout's dist/ */
  dist?: string;
}

/** A line of the commit log. */
interface Logged extends FileState {
  /** The committing process's number; -1 from the daemon, which commits for every process. */
  readonly who: number;
  readonly file: string;
}

/** Why a process's value disappeared from a file. */
type Cause = "ok" | "warned" | "created" | "lost" | "invalid";

export interface ProcessRunReport {
  readonly processes: number;
  readonly opsPerProcess: number;
  readonly operations: number;
  /** Reads that failed, by code (the file between a delete and its recreate). */
  readonly readsRefused: Readonly<Record<string, number>>;
  /** Steps on a shared file (a delete and its recreate are two) and the scratch writes. */
  readonly steps: number;
  readonly accepted: number;
  readonly acceptedWithWarning: number;
  readonly refused: Readonly<Record<string, number>>;
  /** Waits for another process's lock that ended in `LOCKED`. */
  readonly locked: number;
  /** Lines in the commit log. */
  readonly commits: number;
  /** Accepted steps on shared files, by step (each must be in the log once). */
  readonly acceptedBySteps: Readonly<Record<string, number>>;
  /** Logged commits made on exactly the bytes their operation read (a recreate: its delete's). */
  readonly onOwnRead: number;
  /** Edits made on bytes changed since their read, with the warning (warn). */
  readonly editsOnChangedWithWarning: number;
  /** Writes, renames and deletes that replaced bytes changed since their read, with the warning. */
  readonly replacedWithWarning: number;
  /** Writes and renames that created the file after another process deleted it. */
  readonly createdAfterDelete: number;
  /** Recreates whose delete was followed by another process's create and delete. */
  readonly recreatesAfterOthers: number;
  /** A process's latest accepted value removed: by a warned replacement (warn's design). */
  readonly droppedWithWarning: number;
  /** ... by a create after a delete (the delete removed it; the create came from an older read). */
  readonly droppedByDeleteAndCreate: number;
  /** ... by anything else: lost updates. */
  readonly lost: number;
  /**
   * Accepted values their own process found gone at a later read: its line older than its last
   * accepted operation (no log needed).
   */
  readonly blackBoxStale: number;
  /** ... and at the end, a process's line older than its last accepted operation on the file. */
  readonly blackBoxStaleAtEnd: number;
  readonly finalMatchesLog: boolean;
  /** Through the daemon (`mcp-daemon`): the tools' answers (refusals too), those naming it. */
  readonly answers?: {
    readonly all: number;
    readonly fromDaemon: number;
  };
  /**
   * Every check of the replay that failed, one line each, and each answer not from the daemon
   * (`mcp-daemon`); empty when all held.
   */
  readonly violations: readonly string[];
  /** Time of an operation's change (after its read), ms: lock waits included. */
  readonly stepMs: Spread;
  readonly elapsedMs: number;
}

/** A distribution, in ms. */
export interface Spread {
  readonly median: number;
  readonly p99: number;
  readonly max: number;
}

function tally(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

function quantiles(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { median: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 };
}

/** `head` with each edit's old text (which must occur exactly once) replaced; undefined if not. */
function applyEdits(head: string, edits: readonly [string, string][]): string | undefined {
  let text = head;
  for (const [old, next] of edits) {
    const at = text.indexOf(old);
    if (at < 0 || text.indexOf(old, at + 1) >= 0) return undefined;
    text = text.slice(0, at) + next + text.slice(at + old.length);
  }
  return text;
}

/** The steps that change a shared file (a rename's scratch write does not). */
const COMMITTING = new Set(["edit", "multiEdit", "write", "rename", "delete", "recreate"]);

/** An accepted step on a shared file, in its process's queue. */
interface Pending {
  readonly record: OpRecord;
  readonly step: Step;
}

/**
 * The process that made the commit on line `index` of the log when the line cannot say: the
 * daemon commits for every process, so its log hook writes -1. Under strict (MCP always is),
 * every accepted commit is made on the bytes its process read and changes only that process's
 * own two lines, so the content tells: after a present state, the one process whose lines
 * differ; a state after an absence (a recreate), the process whose next step recreates that
 * file with that hash; an absence (a delete), the process whose next step deletes that file,
 * or when several are about to, the one whose recreate after it is the file's next logged state
 * (between a delete and its recreate no other process can create the file under strict).
 * `upcoming(who, k)` is process who's k-th step still to be logged (0: its next).
 * When no process fits, it says why: a violation, never a guess.
 */
function committer(
  log: readonly Logged[],
  index: number,
  before: FileState,
  processes: number,
  upcoming: (who: number, k: number) => Pending | undefined,
): { who: number } | { unfit: string } {
  const entry = log[index] as Logged;
  const all = Array.from({ length: processes }, (_, who) => who);
  const is = (pending: Pending | undefined, step: Step["step"]) =>
    pending?.record.file === entry.file && pending.step.step === step;
  const one = (fit: number[], unfit: string) =>
    fit.length === 1 ? { who: fit[0] as number } : { unfit };
  if (entry.exists && before.exists) {
    const changed = all.filter((who) =>
      (["slot", "aux"] as const).some(
        (line) => lineValue(before.head, line, who) !== lineValue(entry.head, line, who),
      ),
    );
    return one(changed, `it changes the lines of ${changed.length} processes`);
  }
  if (entry.exists) {
    const recreating = all.filter((who) => {
      const next = upcoming(who, 0);
      return is(next, "recreate") && next?.step.hash === entry.hash;
    });
    return one(recreating, `${recreating.length} processes' next step recreates it so`);
  }
  const deleting = all.filter((who) => is(upcoming(who, 0), "delete"));
  if (deleting.length <= 1) return one(deleting, "no process's next step deletes it");
  const recreated = log.find((later, at) => at > index && later.file === entry.file);
  const fit = deleting.filter((who) => {
    const then = upcoming(who, 1);
    return recreated !== undefined && is(then, "recreate") && then?.step.hash === recreated.hash;
  });
  return one(
    fit,
    `processes ${deleting.join(", ")} delete it next, and ${fit.length} of them recreate it as the file's next state`,
  );
}

interface ReplayInput {
  readonly policy: GuardPolicy;
  readonly processes: number;
  readonly files: readonly string[];
  readonly initial: FileState;
  readonly log: readonly Logged[];
  /** Every process's records, each process's in its own order. */
  readonly records: readonly OpRecord[];
  readonly finals: ReadonlyMap<string, FileState>;
}

type ReplayResult = Pick<
  ProcessRunReport,
  | "onOwnRead"
  | "editsOnChangedWithWarning"
  | "replacedWithWarning"
  | "createdAfterDelete"
  | "recreatesAfterOthers"
  | "droppedWithWarning"
  | "droppedByDeleteAndCreate"
  | "lost"
  | "blackBoxStale"
  | "blackBoxStaleAtEnd"
  | "finalMatchesLog"
  | "violations"
>;

/** The replay described at the top, over one run's log and records. */
function replay(input: ReplayInput): ReplayResult {
  const { policy, processes, initial } = input;
  const violations: string[] = [];
  const fail = (line: string) => violations.push(line);
  const name = (record: OpRecord, step: Step) =>
    `process ${record.who}'s ${step.step} (operation ${record.seq}, ${record.file})`;

  // Each process's accepted steps on shared files, in its order: the log must hold them so.
  const pending = new Map<number, Pending[]>();
  for (const record of input.records) {
    for (const step of record.steps) {
      if (step.accepted && COMMITTING.has(step.step)) {
        const queue = pending.get(record.who) ?? [];
        queue.push({ record, step });
        pending.set(record.who, queue);
      }
    }
  }
  const cursor = new Map<number, number>();
  const upcoming = (who: number, k: number) => pending.get(who)?.[(cursor.get(who) ?? 0) + k];

  const current = new Map<string, FileState>();
  const last = new Map<string, number[]>(); // per file: each process's latest committed value
  const correct = new Map<string, boolean[]>(); // per file: its value is in the file
  const causeOf = new Map<string, Cause[]>(); // per file: why it is not
  const deletedBy = new Map<string, Cause>(); // per absent file: how its delete was judged
  const lastBy = new Map<string, { who: number; seq: number }>(); // per file: its last commit
  // Per state (hash): which processes' values it lacks and why, for the reads of it.
  const states = new Map<string, { file: string; missing: (Cause | undefined)[] }>();
  for (const file of input.files) {
    current.set(file, initial);
    last.set(file, new Array(processes).fill(0));
    correct.set(file, new Array(processes).fill(true));
    causeOf.set(file, new Array(processes).fill("ok"));
    states.set(`${file}:${initial.hash}`, { file, missing: new Array(processes) });
  }

  let onOwnRead = 0;
  let editsOnChangedWithWarning = 0;
  let replacedWithWarning = 0;
  let createdAfterDelete = 0;
  let recreatesAfterOthers = 0;
  let droppedWithWarning = 0;
  let droppedByDeleteAndCreate = 0;
  let lost = 0;

  const judge = (record: OpRecord, step: Step, before: FileState, after: Logged): Cause => {
    const warned = step.warnings > 0;
    const onRead = before.exists && before.hash === record.readHash;
    if (onRead) onOwnRead++;
    const replaced = (what: string): Cause => {
      if (onRead) return "ok";
      if (policy === "warn" && warned) {
        replacedWithWarning++;
        return "warned";
      }
      fail(`${name(record, step)} ${what} bytes other than those it read, silently (lost update)`);
      return "lost";
    };
    switch (step.step) {
      case "edit":
      case "multiEdit": {
        if (!before.exists || !after.exists) {
          fail(`${name(record, step)} logged with the file absent before or after it`);
          return "invalid";
        }
        const expected = applyEdits(before.head, step.edits ?? []);
        if (expected !== after.head || after.tail !== before.tail) {
          fail(`${name(record, step)}: the state logged is not the one before it with its edits`);
          return "lost";
        }
        if (!onRead) {
          if (policy === "strict") {
            fail(`${name(record, step)} accepted under strict on bytes other than those it read`);
          } else if (!warned) {
            fail(`${name(record, step)} made on bytes changed since its read, without a warning`);
          } else {
            editsOnChangedWithWarning++;
          }
        }
        return "ok";
      }
      case "write":
      case "rename":
      case "recreate": {
        if (!after.exists || after.hash !== step.hash) {
          fail(`${name(record, step)}: the state logged is not the content it wrote`);
          return "invalid";
        }
        if (step.step === "recreate") {
          if (!before.exists) {
            // Its base is the absence its own delete made, unless others came in between.
            const previous = lastBy.get(record.file);
            if (previous?.who === record.who && previous.seq === record.seq) onOwnRead++;
            else recreatesAfterOthers++;
            return "created";
          }
          fail(`${name(record, step)} accepted over an existing file`);
          return "invalid";
        }
        if (!before.exists) {
          // The guard refuses a write, or a rename with overwrite, onto a file deleted since its
          // read (strict: STALE; warn: a warning).
          if (policy === "strict" || !warned) {
            fail(`${name(record, step)} created the file deleted since its read, unrefused`);
          }
          createdAfterDelete++;
          return "created";
        }
        return replaced("replaced");
      }
      case "delete": {
        if (after.exists || !before.exists) {
          fail(`${name(record, step)} logged with the file present after it, or absent before`);
          return "invalid";
        }
        return replaced("deleted");
      }
      default:
        fail(`${name(record, step)}: not a step that changes the file`);
        return "invalid";
    }
  };

  for (const [index, entry] of input.log.entries()) {
    const before = current.get(entry.file);
    if (!before) {
      fail(`log line ${index + 1} names ${entry.file}, not a shared file`);
      continue;
    }
    const found =
      entry.who >= 0
        ? { who: entry.who }
        : committer(input.log, index, before, processes, upcoming);
    if ("unfit" in found) {
      fail(
        `log line ${index + 1}: the daemon's commit of ${entry.file} fits no process: ${found.unfit}`,
      );
    }
    const by = "who" in found ? found.who : undefined;
    const next = by === undefined ? undefined : upcoming(by, 0);
    let cause: Cause = "invalid";
    if (by === undefined) {
      // Reported above; the state is still the file's from here on.
    } else if (!next) {
      fail(`log line ${index + 1}: process ${by} committed with no accepted step left`);
    } else {
      cursor.set(by, (cursor.get(by) ?? 0) + 1);
      if (next.record.file !== entry.file) {
        fail(`log line ${index + 1}: ${name(next.record, next.step)} committed ${entry.file}`);
      } else {
        cause = judge(next.record, next.step, before, entry);
        if (next.step.step !== "delete") {
          (last.get(entry.file) as number[])[by] = next.record.seq;
        }
      }
    }
    current.set(entry.file, entry);
    if (by !== undefined && next) lastBy.set(entry.file, { who: by, seq: next.record.seq });
    if (!entry.exists) {
      deletedBy.set(entry.file, cause);
      continue;
    }
    if (entry.tail !== initial.tail) fail(`log line ${index + 1}: the filler changed`);
    // What a delete removed shows when the file is created again: judged by the delete.
    const deletion = before.exists ? undefined : deletedBy.get(entry.file);
    const why = deletion !== undefined && deletion !== "ok" ? deletion : cause;
    const values = last.get(entry.file) as number[];
    const flags = correct.get(entry.file) as boolean[];
    const causes = causeOf.get(entry.file) as Cause[];
    const missing: (Cause | undefined)[] = new Array(processes);
    for (let who = 0; who < processes; who++) {
      const present = lineValue(entry.head, "slot", who) === values[who];
      if (!present && flags[who]) {
        causes[who] = why;
        if (why === "warned") droppedWithWarning++;
        else if (why === "created") droppedByDeleteAndCreate++;
        else {
          lost++;
          fail(
            `log line ${index + 1}: process ${who}'s accepted value ${values[who]} in ${entry.file} is gone (${why}, by process ${by ?? "unknown"})`,
          );
        }
      }
      flags[who] = present;
      if (!present) missing[who] = causes[who];
    }
    states.set(`${entry.file}:${entry.hash}`, { file: entry.file, missing });
  }
  for (const [who, queue] of pending) {
    const done = cursor.get(who) ?? 0;
    for (const { record, step } of queue.slice(done)) {
      fail(`${name(record, step)} was accepted but never logged`);
    }
  }

  let finalMatchesLog = true;
  for (const file of input.files) {
    const final = input.finals.get(file);
    const logged = current.get(file) as FileState;
    if (!final || final.exists !== logged.exists || final.hash !== logged.hash) {
      finalMatchesLog = false;
      fail(`${file} at the end is not its last logged state`);
    }
  }

  // The black box: each process's own view, against what the replay says of the state it read.
  const staleSeen = new Set<string>();
  const lastAccepted = new Map<string, number>();
  for (const record of input.records) {
    if (record.readHash !== undefined) {
      const state = states.get(`${record.file}:${record.readHash}`);
      const stale = record.ownSeen !== record.ownExpected;
      // Counted once per value: a process refused (STALE) reads the same stale line again.
      if (stale) staleSeen.add(`${record.who}:${record.file}:${record.ownExpected}`);
      if (!state) {
        fail(`process ${record.who} read a content of ${record.file} that is not in the log`);
      } else if (stale !== (state.missing[record.who] !== undefined)) {
        fail(
          `process ${record.who}'s read ${record.seq} of ${record.file}: its own line ${stale ? "was" : "was not"} older than its last accepted value, the replay says otherwise`,
        );
      }
    }
    // An operation's value is in the file once its last step is: a delete alone sets none.
    const final = record.steps.at(-1);
    if (final?.accepted && COMMITTING.has(final.step) && final.step !== "delete") {
      lastAccepted.set(`${record.who}:${record.file}`, record.seq);
    }
  }
  let blackBoxStaleAtEnd = 0;
  for (const file of input.files) {
    const final = input.finals.get(file);
    for (let who = 0; who < processes; who++) {
      const expected = lastAccepted.get(`${who}:${file}`) ?? 0;
      const shown = final?.exists ? lineValue(final.head, "slot", who) : undefined;
      if (final?.exists && shown !== expected) blackBoxStaleAtEnd++;
      const replayed = (correct.get(file) as boolean[])[who];
      if (final?.exists && (shown === expected) !== replayed) {
        fail(`process ${who}'s line in ${file} at the end: the black box and the replay disagree`);
      }
    }
  }
  return {
    onOwnRead,
    editsOnChangedWithWarning,
    replacedWithWarning,
    createdAfterDelete,
    recreatesAfterOthers,
    droppedWithWarning,
    droppedByDeleteAndCreate,
    lost,
    blackBoxStale: staleSeen.size,
    blackBoxStaleAtEnd,
    finalMatchesLog,
    violations,
  };
}

/** Lines of a child's stdout, one at a time. */
function linesOf(child: ChildProcess): Interface {
  return createInterface({ input: child.stdout as NodeJS.ReadableStream });
}

/** Runs one configuration; see the top of the file. */
export async function processLostUpdates(options: ProcessRunOptions): Promise<ProcessRunReport> {
  const dist = options.dist ?? distDir();
  const names = Array.from({ length: options.files }, (_, n) => `shared-${n}.txt`);
  const files = names.map((name) => join(options.dir, name));
  const initialText = initialContent(options.processes, options.fillerLines ?? 0);
  for (const file of files) await writeFile(file, initialText);
  // Beside the shared files: no operation touches it.
  const logPath = join(options.dir, "commits.jsonl");
  await writeFile(logPath, "");
  const env = (who: number): Record<string, string> => ({
    FRESHFS_COMMIT_LOG: logPath,
    FRESHFS_COMMIT_LOG_FILES: JSON.stringify(files),
    FRESHFS_COMMIT_LOG_WHO: String(who),
    FRESHFS_DIST: dist,
  });
  const perProcess = (who: number) => ({
    who,
    files,
    scratch: join(options.dir, `scratch-${who}.txt`),
    root: options.dir,
    ops: options.ops,
    seed: options.seed * 100 + who,
    thinkMs: options.thinkMs,
    policy: options.policy,
    mode: options.driver,
  });
  const bin = join(dist, "cli", "main.js");
  const started = performance.now();
  let records: OpRecord[][];
  let answers: Answers | undefined;
  if (options.driver === "mcp-daemon") {
    ({ records, answers } = await viaDaemon(options, bin, env, perProcess));
  } else if (options.driver === "mcp") {
    const server = (who: number) => ({
      args: ["--import", COMMIT_LOG, bin, "mcp", "--no-daemon", "--root", options.dir],
      env: env(who),
    });
    records = await viaMcp(options, server, perProcess);
  } else {
    records = await viaChildren(options, env, perProcess);
  }
  const elapsedMs = performance.now() - started;
  const log = (await readFile(logPath, "utf8"))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Logged);
  const finals = new Map<string, FileState>();
  for (const [n, file] of files.entries()) {
    const bytes = existsSync(file) ? await readFile(file) : undefined;
    finals.set(names[n] as string, describeState(bytes));
  }
  const all = records.flat();
  const result = replay({
    policy: options.driver.startsWith("mcp") ? "strict" : options.policy,
    processes: options.processes,
    files: names,
    initial: describeState(Buffer.from(initialText)),
    log,
    records: all,
    finals,
  });
  const readsRefused: Record<string, number> = {};
  const refused: Record<string, number> = {};
  const acceptedBySteps: Record<string, number> = {};
  let steps = 0;
  let accepted = 0;
  let acceptedWithWarning = 0;
  for (const record of all) {
    if (record.readCode !== undefined) tally(readsRefused, record.readCode);
    for (const step of record.steps) {
      steps++;
      if (step.accepted) {
        accepted++;
        if (COMMITTING.has(step.step)) tally(acceptedBySteps, step.step);
        if (step.warnings > 0) acceptedWithWarning++;
      } else {
        tally(refused, `${step.step === "scratch" ? "scratch " : ""}${step.code ?? "?"}`);
      }
    }
  }
  return {
    processes: options.processes,
    opsPerProcess: options.ops,
    operations: all.length,
    readsRefused,
    steps,
    accepted,
    acceptedWithWarning,
    refused,
    locked: refused.LOCKED ?? 0,
    commits: log.length,
    acceptedBySteps,
    ...result,
    ...(answers && {
      answers: { all: answers.all, fromDaemon: answers.fromDaemon },
    }),
    violations: [...result.violations, ...(answers?.strays ?? [])],
    stepMs: quantiles(all.filter((r) => r.ms !== undefined).map((r) => r.ms as number)),
    elapsedMs,
  };
}

/** Workspace (or plain `fs`) children: started together, their records read as they come. */
async function viaChildren(
  options: ProcessRunOptions,
  env: (who: number) => Record<string, string>,
  perProcess: (who: number) => object,
): Promise<OpRecord[][]> {
  const children = Array.from({ length: options.processes }, (_, who) => {
    const args =
      options.driver === "plain"
        ? [MUTATOR, JSON.stringify(perProcess(who))]
        : ["--import", COMMIT_LOG, MUTATOR, JSON.stringify(perProcess(who))];
    const child = spawn(process.execPath, args, {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, ...env(who) },
    });
    const records: OpRecord[] = [];
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => {
      ready = resolve;
    });
    let ended = false;
    linesOf(child).on("line", (line) => {
      if (line === "ready") ready();
      else if (line === "end") ended = true;
      else records.push(JSON.parse(line) as OpRecord);
    });
    const exited = new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => {
        if (code === 0 && ended) resolve();
        else
          reject(new Error(`mutator ${who} exited with ${code} after ${records.length} records`));
      });
    });
    // Awaited below; once one child failed, the others' ends are not waited for.
    exited.catch(() => undefined);
    return { child, records, isReady, exited };
  });
  try {
    await Promise.all(children.map((c) => Promise.race([c.isReady, c.exited])));
    for (const { child } of children) child.stdin?.end("go\n");
    await Promise.all(children.map((c) => c.exited));
  } catch (error) {
    // One child failed: the run is void, and the others must not outlive it.
    for (const { child } of children) if (child.exitCode === null) child.kill("SIGKILL");
    throw error;
  }
  return children.map((c) => c.records);
}

/** The code at the end of an MCP failure's text (`... (STALE)`). */
function codeOf(result: CallToolResult): string {
  const first = result.content[0];
  const text = first?.type === "text" ? first.text : "";
  return /\(([A-Z_]+)\)$/.exec(text)?.[1] ?? `untyped ${text.slice(0, 80)}`;
}

/** The operations' tools through one MCP client; `answered` sees every result. */
function mcpTools(
  client: Client,
  answered: (tool: string, result: CallToolResult) => void = () => undefined,
): Tools {
  const callTool = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    answered(name, result);
    return result;
  };
  const call = async (name: string, args: Record<string, unknown>): Promise<Outcome> => {
    const result = await callTool(name, args);
    if (result.isError) return { accepted: false, warnings: 0, code: codeOf(result) };
    const warnings = result.structuredContent?.warnings;
    return { accepted: true, warnings: Array.isArray(warnings) ? warnings.length : 0 };
  };
  return {
    read: async (file) => {
      const result = await callTool("read", { file_path: file });
      if (result.isError) return { code: codeOf(result) };
      const first = result.content[0];
      const text = first?.type === "text" ? first.text : "";
      // `cat -n` lines (`%6d\t`); notes, after them, start with "(".
      const lines = text
        .split("\n")
        .map((line) => /^ *\d+\t(.*)$/.exec(line)?.[1])
        .filter((line) => line !== undefined);
      return { text: lines.map((line) => `${line}\n`).join("") };
    },
    edit: (file, edits, multi) =>
      multi
        ? call("multi_edit", {
            file_path: file,
            edits: edits.map(([old_string, new_string]) => ({ old_string, new_string })),
          })
        : call("edit", {
            file_path: file,
            old_string: (edits[0] as [string, string])[0],
            new_string: (edits[0] as [string, string])[1],
          }),
    write: (file, content) => call("write", { file_path: file, content }),
    delete: (file) => call("delete", { file_path: file }),
    rename: (from, to) => call("rename", { from, to, overwrite: true }),
  };
}

/** A process's options for `runOps`. */
type PerProcess = (who: number) => RunOptions;

/** How one `freshfs mcp` server is started: node's arguments, and its environment. */
interface McpServer {
  readonly args: string[];
  readonly env: Record<string, string>;
}

/**
 * `freshfs mcp` servers, driven by one SDK client each; `answered` sees every tool result, with
 * the number of the process whose client got it.
 */
async function viaMcp(
  options: ProcessRunOptions,
  server: (who: number) => McpServer,
  perProcess: PerProcess,
  answered?: (who: number, tool: string, result: CallToolResult) => void,
): Promise<OpRecord[][]> {
  const clients: Client[] = [];
  const stderr: string[][] = [];
  try {
    for (let who = 0; who < options.processes; who++) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        ...server(who),
        stderr: "pipe",
      });
      // Kept for the error, should a server fail (it logs one line when it starts).
      const said: string[] = [];
      stderr.push(said);
      transport.stderr?.on("data", (chunk: Buffer) => said.push(chunk.toString("utf8")));
      const client = new Client({ name: "freshfs-lost-updates", version: "1.0.0" });
      await client.connect(transport);
      clients.push(client);
    }
    return await Promise.all(
      clients.map(async (client, who) => {
        const records: OpRecord[] = [];
        try {
          const tools = mcpTools(client, (tool, result) => answered?.(who, tool, result));
          await runOps(tools, perProcess(who), (record) => records.push(record));
        } catch (error) {
          throw new Error(`MCP server ${who} failed: ${(stderr[who] ?? []).join("")}`, {
            cause: error,
          });
        }
        return records;
      }),
    );
  } finally {
    for (const client of clients) await client.close();
  }
}

/**
 * Through the daemon: the tools' answers, refusals included (each says which process gave it),
 * those naming its pid, and a line for each other answer.
 */
interface Answers {
  all: number;
  fromDaemon: number;
  readonly strays: string[];
}

/** Resolves once the daemon says it listens; rejects if it exits first, or after 10 s. */
function listening(daemon: ChildProcess): Promise<void> {
  let said = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the daemon did not listen:\n${said}`)),
      10_000,
    );
    daemon.stderr?.on("data", (chunk: Buffer) => {
      said += chunk.toString("utf8");
      if (said.includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    daemon.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited (${signal ?? code}) before it listened:\n${said}`));
    });
  });
}

/** SIGTERM (the daemon ends once its requests are answered), then SIGKILL if it lingers. */
async function stopDaemon(daemon: ChildProcess): Promise<void> {
  if (daemon.exitCode !== null || daemon.signalCode !== null) return;
  const exited = new Promise((resolve) => daemon.once("exit", resolve));
  daemon.kill("SIGTERM");
  if ((await Promise.race([exited, sleep(5000, "lingers", { ref: false })])) === "lingers") {
    daemon.kill("SIGKILL");
    await exited;
  }
}

/**
 * The servers of the `mcp` driver with their tools run in one daemon, started here with the
 * commit log loaded: every commit is made there, for any of the servers, so it logs them with
 * who -1 and the replay tells whose each was by its content (`committer`). In a runtime
 * directory of its own, so the run neither uses nor leaves behind a daemon of the user's.
 */
async function viaDaemon(
  options: ProcessRunOptions,
  bin: string,
  env: (who: number) => Record<string, string>,
  perProcess: PerProcess,
): Promise<{ records: OpRecord[][]; answers: Answers }> {
  const runtime = await mkdtemp(join(tmpdir(), "freshfs-lost-updates-runtime-"));
  const cache = await mkdtemp(join(tmpdir(), "freshfs-lost-updates-cache-"));
  let daemon: ChildProcess | undefined;
  try {
    await chmod(runtime, 0o700);
    const socket = join(runtime, "d.sock");
    const place = { FRESHFS_RUNTIME_DIR: runtime, FRESHFS_CACHE_DIR: cache };
    daemon = spawn(
      process.execPath,
      ["--import", COMMIT_LOG, bin, "daemon", "run", "--socket", socket],
      { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env(-1), ...place } },
    );
    await listening(daemon);
    const pid = daemon.pid;
    const answers: Answers = { all: 0, fromDaemon: 0, strays: [] };
    const server = () => ({
      args: [bin, "mcp", "--socket", socket, "--root", options.dir],
      env: { FRESHFS_RUNTIME_DIR: runtime },
    });
    const records = await viaMcp(options, server, perProcess, (who, tool, result) => {
      answers.all++;
      const by = result._meta?.["freshfs/answeredBy"] as
        | { pid?: number; daemon?: boolean }
        | undefined;
      if (by?.daemon === true && by.pid === pid) answers.fromDaemon++;
      else {
        answers.strays.push(
          `process ${who}'s ${tool} answered by ${JSON.stringify(by) ?? "no process"}, not by the daemon (pid ${pid})`,
        );
      }
    });
    return { records, answers };
  } finally {
    if (daemon) await stopDaemon(daemon);
    await rm(runtime, { recursive: true, force: true });
    await rm(cache, { recursive: true, force: true });
  }
}

export interface TakeoverOptions {
  /** An empty directory (its real path). */
  dir: string;
  iterations: number;
  seed: number;
  /** The built library's directory. @default FRESHFS_DIST, else this checkout's dist/ */
  dist?: string;
}

export interface TakeoverReport {
  readonly iterations: number;
  /** From the SIGKILL sent to the waiting edit's end, ms. */
  readonly killToDoneMs: Spread;
  /** From the killed holder reaped (its exit seen) to the waiting edit's end, ms. */
  readonly reapToDoneMs: Spread;
  /** The same edit with no lock in its way, right after, ms. */
  readonly uncontendedMs: Spread;
  /** Waiting edits that ended before the holder was killed (the lock not honoured). */
  readonly beforeKill: number;
  /** Edits refused (by code) instead of proceeding. */
  readonly refused: Readonly<Record<string, number>>;
  /** The file had the value of the last edit after every iteration. */
  readonly fileAsEdited: boolean;
  /** Lock files left at the end: the file's own in its lock directory (out of the tree). */
  readonly locksLeft: number;
  /** Files of freshfs's (locks, temp files) left in the tree at the end. */
  readonly leftInTree: number;
}

/** Whether the lock file of `file` is still there (where the library keeps it, out of the tree). */
function lockFileLeft(file: string): boolean {
  const place = lockPlaceOf(file);
  return place !== undefined && existsSync(join(place.dir, place.name));
}

/** A Node child running `body` (an ES module) with `lib` the built library and `args`. */
function script(dist: string, body: string, ...args: string[]): ChildProcess {
  const lib = pathToFileURL(join(dist, "index.js")).href;
  const source = `const lib = await import(${JSON.stringify(lib)});\nconst args = ${JSON.stringify(args)};\n${body}`;
  return spawn(process.execPath, ["--input-type=module", "-e", source], {
    stdio: ["pipe", "pipe", "inherit"],
  });
}

/** Resolves with each line in turn; rejects once the child's output has ended. */
function lineReader(child: ChildProcess): () => Promise<string> {
  const queue: string[] = [];
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  let ended = false;
  const lines = linesOf(child);
  lines.on("line", (line) => {
    const next = waiting.shift();
    if (next) next.resolve(line);
    else queue.push(line);
  });
  lines.on("close", () => {
    ended = true;
    for (const next of waiting.splice(0)) next.reject(new Error("the child's output ended"));
  });
  return () => {
    const ready = queue.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (ended) return Promise.reject(new Error("the child's output ended"));
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
}

/**
 * A child takes the file's lock and keeps it; a Workspace edit in another child starts and
 * waits for it; the holder is killed with SIGKILL 20-50 ms later; the time until the edit is
 * done is measured on the shared monotonic clock (process.hrtime), and the same edit with no
 * lock in its way right after gives what the edit itself costs.
 */
export async function takeovers(options: TakeoverOptions): Promise<TakeoverReport> {
  const dist = options.dist ?? distDir();
  const file = join(options.dir, "held.txt");
  await writeFile(file, "value: 0\n");
  const waiter = script(
    dist,
    `const { createInterface } = await import("node:readline");
     const [dir, file] = args;
     const ws = new lib.Workspace({ roots: dir });
     for await (const line of createInterface({ input: process.stdin })) {
       const [command, k] = line.split(" ");
       try {
         if (command === "read") {
           await ws.read({ file_path: file });
           console.log("read");
         } else {
           const start = process.hrtime.bigint();
           await ws.edit({ file_path: file, old_string: "value: " + (Number(k) - 1) + "\\n", new_string: "value: " + k + "\\n" });
           console.log(JSON.stringify({ start: String(start), end: String(process.hrtime.bigint()) }));
         }
       } catch (error) {
         if (!(error instanceof lib.FreshfsError)) throw error;
         console.log(JSON.stringify({ code: error.code }));
       }
     }`,
    options.dir,
    file,
  );
  const fromWaiter = lineReader(waiter);
  const killToDone: number[] = [];
  const reapToDone: number[] = [];
  const uncontended: number[] = [];
  const refused: Record<string, number> = {};
  let beforeKill = 0;
  let fileAsEdited = true;
  let value = 0;
  let state = options.seed >>> 0;
  const pause = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return 20 + (state % 31);
  };
  const edit = async (): Promise<{ start: bigint; end: bigint } | undefined> => {
    waiter.stdin?.write("read\n");
    await fromWaiter();
    waiter.stdin?.write(`edit ${value + 1}\n`);
    const answer = JSON.parse(await fromWaiter()) as {
      start?: string;
      end?: string;
      code?: string;
    };
    if (answer.code !== undefined || answer.start === undefined || answer.end === undefined) {
      tally(refused, answer.code ?? "?");
      return undefined;
    }
    value++;
    return { start: BigInt(answer.start), end: BigInt(answer.end) };
  };
  try {
    for (let i = 0; i < options.iterations; i++) {
      const holder = script(
        dist,
        `await lib.withPathLock(args[0], async () => {
           console.log("held");
           await new Promise(() => setInterval(() => {}, 1000));
         }, { operation: "edit" });`,
        file,
      );
      const fromHolder = lineReader(holder);
      const exited = new Promise<bigint>((resolve) =>
        holder.on("exit", () => resolve(process.hrtime.bigint())),
      );
      if ((await fromHolder()) !== "held") throw new Error("the holder did not take the lock");
      const waiting = edit();
      await sleep(pause());
      const killed = process.hrtime.bigint();
      holder.kill("SIGKILL");
      const reaped = await exited;
      const done = await waiting;
      if (done) {
        if (done.end < killed) beforeKill++;
        killToDone.push(Number(done.end - killed) / 1e6);
        reapToDone.push(Number(done.end - reaped) / 1e6);
      }
      const free = await edit();
      if (free) uncontended.push(Number(free.end - free.start) / 1e6);
      if ((await readFile(file, "utf8")) !== `value: ${value}\n`) fileAsEdited = false;
    }
  } finally {
    waiter.stdin?.end();
    await new Promise((resolve) => waiter.on("close", resolve));
  }
  return {
    iterations: options.iterations,
    killToDoneMs: quantiles(killToDone),
    reapToDoneMs: quantiles(reapToDone),
    uncontendedMs: quantiles(uncontended),
    beforeKill,
    refused,
    fileAsEdited,
    locksLeft: lockFileLeft(file) ? 1 : 0,
    leftInTree: readdirSync(options.dir).filter((name) => name.includes(".freshfs-")).length,
  };
}

const count = (n: number) => n.toLocaleString("en-US");
const codes = (map: Readonly<Record<string, number>>) =>
  Object.entries(map)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code} ${count(n)}`)
    .join(", ") || "none";
const ms = (q: Spread) => [q.median, q.p99, q.max].map((v) => v.toFixed(2)).join(" / ");
// 50 takeovers: a 99th percentile would be the maximum.
const spread = (q: Spread) => [q.median, q.max].map((v) => v.toFixed(2)).join(" / ");

function table(columns: readonly (readonly [string, ProcessRunReport])[]): string {
  const rows: [string, (r: ProcessRunReport) => string][] = [
    ["processes x operations", (r) => `${r.processes} x ${count(r.opsPerProcess)}`],
    ["operations attempted (each a read, then its change)", (r) => count(r.operations)],
    ["reads refused, by code", (r) => codes(r.readsRefused)],
    [
      "steps (a delete and its recreate are two; a rename's scratch write one)",
      (r) => count(r.steps),
    ],
    ["accepted", (r) => count(r.accepted)],
    ["... with a warning", (r) => count(r.acceptedWithWarning)],
    ["refused, by code", (r) => codes(r.refused)],
    ["lock waits that ended LOCKED", (r) => count(r.locked)],
    ["accepted steps on the shared files, by step", (r) => codes(r.acceptedBySteps)],
    ["commits in the log", (r) => count(r.commits)],
    [
      "... on exactly the bytes their operation read (a recreate: right after its delete)",
      (r) => count(r.onOwnRead),
    ],
    [
      "... edits on bytes changed since the read, warned (warn)",
      (r) => count(r.editsOnChangedWithWarning),
    ],
    [
      "... replacing bytes changed since the read, warned (warn)",
      (r) => count(r.replacedWithWarning),
    ],
    [
      "... writes and renames creating the file another process had deleted",
      (r) => count(r.createdAfterDelete),
    ],
    [
      "... recreates after another process's create and delete",
      (r) => count(r.recreatesAfterOthers),
    ],
    ["accepted values removed by a warned replacement (warn)", (r) => count(r.droppedWithWarning)],
    [
      "accepted values removed by a delete, then a create from an older read",
      (r) => count(r.droppedByDeleteAndCreate),
    ],
    ["**lost accepted edits**", (r) => `**${count(r.lost)}**`],
    [
      "accepted values their process found gone at its next read (black box)",
      (r) => count(r.blackBoxStale),
    ],
    [
      "... lines older than their process's last accepted edit at the end",
      (r) => count(r.blackBoxStaleAtEnd),
    ],
    ["final files = last logged states", (r) => (r.finalMatchesLog ? "yes" : "NO")],
    [
      "tool answers (refusals too) naming the one daemon, of all",
      (r) => (r.answers ? `${count(r.answers.fromDaemon)} of ${count(r.answers.all)}` : "-"),
    ],
    [
      "replay",
      (r) => (r.violations.length === 0 ? "exact" : `${count(r.violations.length)} violations`),
    ],
    ["change after the read, ms (median / p99 / max)", (r) => ms(r.stepMs)],
    ["elapsed", (r) => `${(r.elapsedMs / 1000).toFixed(1)} s`],
  ];
  const reports = columns.map(([, report]) => report);
  const head = `| | ${columns.map(([label]) => label).join(" | ")} |`;
  const rule = `|---|${reports.map(() => "---:").join("|")}|`;
  const body = rows.map(([label, cell]) => `| ${label} | ${reports.map(cell).join(" | ")} |`);
  return [head, rule, ...body].join("\n");
}

/** A temp directory; a git repository's work tree when `git` (the locks then go in its `.git`). */
async function inTempDir<T>(use: (dir: string) => Promise<T>, git = false): Promise<T> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "freshfs-lost-updates-processes-")));
  try {
    if (git) {
      const init = spawnSync("git", ["init", "-q", dir], { encoding: "utf8" });
      if (init.status !== 0) throw new Error(`git init: ${init.stderr}`);
    }
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<string> {
  const dist = distDir();
  const configurations: (Omit<ProcessRunOptions, "dir"> & { label: string; git?: boolean })[] = [];
  const shapes = [
    { name: "1 small file", files: 1, fillerLines: 0 },
    { name: "4 small files", files: 4, fillerLines: 0 },
    { name: "one 1 MiB file", files: 1, fillerLines: 64 },
  ];
  let seed = 1;
  for (const shape of shapes) {
    for (const policy of ["strict", "warn"] as const) {
      configurations.push({
        label: `${shape.name}, ${policy}`,
        processes: 4,
        ops: 2000,
        files: shape.files,
        fillerLines: shape.fillerLines,
        policy,
        driver: "workspace",
        seed: seed++,
        thinkMs: 2,
        dist,
      });
    }
  }
  // In a git work tree the locks live in its git directory, not the runtime directory.
  configurations.push({
    label: "4 small files, strict, in a git repository",
    git: true,
    processes: 4,
    ops: 2000,
    files: 4,
    fillerLines: 0,
    policy: "strict",
    driver: "workspace",
    seed: seed++,
    thinkMs: 2,
    dist,
  });
  configurations.push({
    label: "2 MCP servers, 1 small file (strict)",
    processes: 2,
    ops: 2000,
    files: 1,
    policy: "strict",
    driver: "mcp",
    seed: seed++,
    thinkMs: 2,
    dist,
  });
  configurations.push({
    label: "control: plain fs, no locks",
    processes: 4,
    ops: 2000,
    files: 1,
    // Judged as strict: plain fs never warns.
    policy: "strict",
    driver: "plain",
    seed: seed++,
    thinkMs: 2,
    dist,
  });
  // After the control, so that its seed (and so its operations) stay those of earlier runs.
  configurations.push({
    label: "4 MCP servers through one daemon, 1 small file (strict)",
    processes: 4,
    ops: 2000,
    files: 1,
    policy: "strict",
    driver: "mcp-daemon",
    seed: seed++,
    thinkMs: 2,
    dist,
  });
  const columns: [string, ProcessRunReport][] = [];
  for (const { label, git, ...options } of configurations) {
    columns.push([label, await inTempDir((dir) => processLostUpdates({ ...options, dir }), git)]);
  }
  const takeover = await inTempDir((dir) => takeovers({ dir, iterations: 50, seed: 7, dist }));
  const parts = [
    `Built library: ${process.env.FRESHFS_DIST ? "FRESHFS_DIST (another build)" : "this checkout's dist/"}.`,
    "",
    "Processes, each with its own Workspace (or its own `freshfs mcp` server and SDK client), " +
      "run operations at once on shared files: a read, then an edit, a multiEdit, a write, a rename " +
      "of a scratch file over the file, or a delete and a recreate (an edit with an empty " +
      "old_string), each changing only the process's own two lines to a value unique to the " +
      "operation. Every commit's state is logged under its lock (the scan cache's invalidation, " +
      "wrapped in each child) and replayed: each logged state must be the next accepted step of " +
      "its process, an edit the state before it with its edits applied, a write, rename or " +
      "delete made on the very bytes its process read (or, under `warn`, with the warning), and " +
      "every accepted step logged once. Through the daemon, the servers run their tools in one " +
      "daemon, which commits for all of them and so logs each commit without its process: the " +
      "replay tells whose it was by its content (under strict a commit changes only its own " +
      "process's lines), and every tool answer must name that daemon. The control runs the same " +
      "operations as plain read-modify-write without freshfs, to show what the replay finds when " +
      "updates are lost.",
    "",
    table(columns),
  ];
  for (const [label, report] of columns) {
    if (report.violations.length > 0) {
      parts.push("", `Violations (${label}), the first 10:`, "");
      for (const line of report.violations.slice(0, 10)) parts.push(`- ${line}`);
    }
  }
  parts.push(
    "",
    `A lock holder killed with SIGKILL, ${takeover.iterations} times: a child holds the file's lock, a Workspace edit in another child waits for it, the holder is killed 20-50 ms later.`,
    "",
    "| | ms (median / max) |",
    "|---|---:|",
    `| SIGKILL sent -> the waiting edit done | ${spread(takeover.killToDoneMs)} |`,
    `| holder reaped -> the waiting edit done | ${spread(takeover.reapToDoneMs)} |`,
    `| the same edit with no lock in its way | ${spread(takeover.uncontendedMs)} |`,
    "",
    `Edits done before the kill: ${takeover.beforeKill}; refused: ${codes(takeover.refused)}; ` +
      `file as edited after every iteration: ${takeover.fileAsEdited ? "yes" : "NO"}; ` +
      `lock files left (in the lock directory): ${takeover.locksLeft}; files of freshfs's left in the tree: ${takeover.leftInTree}.`,
  );
  return parts.join("\n");
}

/**
 * Lost updates (issue 7, item 1): many concurrent read -> edit sequences on one file through
 * one Workspace, while another process rewrites the same file in a loop.
 *
 * How the check is made exact (the order of the writes needs no clock):
 * - The file is a header line and one line per sequence (`slot 0042: -`). Sequence k reads the
 *   file, then edits its own line to `slot 0042: edit 42`. The external writer (a Python
 *   process, test/fixtures/reliability/external-writer.py) replaces the header with
 *   `header: ext <n>`. So every content the file ever has is distinct, and names its writers.
 * - Every accepted edit's written bytes are taken where the Workspace hands them to its guard
 *   (`tracker.recordEdit`, called under the path lock right after the rename, so in commit
 *   order); the bytes the edit was made on follow by undoing its one line.
 * - The external writer swaps its content in with renameat2(RENAME_EXCHANGE), which hands back
 *   the content it displaced: each external write is placed, exactly, right after the write
 *   whose content it replaced.
 * That gives one total order of every write. Walking it from the initial bytes, each accepted
 * edit must have been made on exactly the content before it (otherwise it overwrote a write),
 * every content anyone read must be one of the contents written (no torn or unknown state),
 * and replaying the writes must give the final file byte for byte.
 *
 * An external write that lands between an edit's last check and its rename(2) is overwritten
 * whatever the library does (rename cannot make "replace only if unchanged" atomic against a
 * process that does not cooperate). Such losses are counted apart: the external writer times
 * its exchanges and the Workspace's last `tracker.checkEdit` of each edit is timed on the same
 * clock (CLOCK_MONOTONIC), and only a write that landed before the last check began is one
 * the library should have caught.
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { FreshfsError, type GuardPolicy, Workspace } from "../src/index.js";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";

const WRITER = fileURLToPath(
  new URL("../test/fixtures/reliability/external-writer.py", import.meta.url),
);

/** The external writer needs python3 and a file system with renameat2(RENAME_EXCHANGE). */
export function externalWriterProblem(): string | undefined {
  const probe = spawnSync(
    "python3",
    [
      "-c",
      [
        "import ctypes, os, tempfile",
        "d = tempfile.mkdtemp()",
        "a, b = os.path.join(d, 'a'), os.path.join(d, 'b')",
        "open(a, 'w').close(); open(b, 'w').close()",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "r = libc.renameat2(-100, a.encode(), -100, b.encode(), 2)",
        "os.unlink(a); os.unlink(b); os.rmdir(d)",
        "raise SystemExit(0 if r == 0 else 3)",
      ].join("\n"),
    ],
    { encoding: "utf8" },
  );
  if (probe.error) return `python3 is not available (${probe.error.message})`;
  if (probe.status !== 0) return "renameat2(RENAME_EXCHANGE) does not work in the temp directory";
  return undefined;
}

export interface LostUpdateOptions {
  /** An empty directory (its real path) for the file. */
  dir: string;
  /** Concurrent read -> edit sequences, one per line of the file. */
  sequences: number;
  /** The sequences start at random moments over this many ms. */
  spreadMs: number;
  /** Longest pause between a sequence's read and its edit (a model thinking). */
  thinkMs: number;
  /** Longest pause of the external writer between two writes. */
  externalPauseMs: number;
  policy: GuardPolicy;
  seed: number;
}

export interface LostUpdateReport {
  readonly policy: GuardPolicy;
  readonly sequences: number;
  readonly accepted: number;
  /** Refusals by code (`read:` prefix: the read failed). */
  readonly refused: Readonly<Record<string, number>>;
  readonly acceptedWithWarning: number;
  readonly externalWrites: number;
  /** External writes that replaced content other than what they read (editor-style races). */
  readonly externalOverwrites: number;
  /** Accepted edits whose line a later external write replaced (allowed, and accounted for). */
  readonly droppedByExternal: number;
  /** Accepted edits made on exactly the bytes their own sequence read. */
  readonly onOwnRead: number;
  /** Accepted edits made on bytes a later read or edit of the same Workspace saw. */
  readonly onWorkspaceState: number;
  /** Accepted edits made on bytes no read of the Workspace saw (stale: only allowed under warn). */
  readonly onUnreadBytes: number;
  /**
   * Accepted edits made on older bytes than the file had when they were written: they
   * overwrote a write that landed while they were in progress (a lost update).
   */
  readonly overwroteWrite: number;
  /** Of those, the ones whose result carried a warning (warn policy: the trace). */
  readonly overwroteWithWarning: number;
  /**
   * Of those, silent ones where the overwritten write landed after the edit's last check began:
   * the window between that check and the rename, which rename(2) cannot close.
   */
  readonly overwroteInLastWindow: number;
  /**
   * From an edit's last check to just after its rename, in ms (median, 99th percentile, max over
   * the accepted edits): how long a write of another process can land unseen.
   */
  readonly lastWindowMs: { readonly median: number; readonly p99: number; readonly max: number };
  /** Writes in the total order (accepted edits + external writes). */
  readonly chainLength: number;
  /** Every content read (by the Workspace or the external writer) was one of the contents written. */
  readonly readsSeen: number;
  /** The final file equals the replay of the ordered writes from the initial bytes. */
  readonly finalMatchesReplay: boolean;
  /** Every invariant that failed, one line each; empty when all held. */
  readonly violations: readonly string[];
  readonly elapsedMs: number;
}

const NAME = "shared.txt";

function sha(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

function slotId(k: number): string {
  return String(k).padStart(4, "0");
}
const oldLine = (k: number) => `slot ${slotId(k)}: -`;
const newLine = (k: number) => `slot ${slotId(k)}: edit ${k}`;

function initialContent(sequences: number): string {
  const lines = ["header: ext 0"];
  for (let k = 0; k < sequences; k++) lines.push(oldLine(k));
  return `${lines.join("\n")}\n`;
}

/** The sequences whose edit a content carries. */
function editsIn(text: string): Set<number> {
  const found = new Set<number>();
  for (const match of text.matchAll(/^slot \d+: edit (\d+)$/gm)) found.add(Number(match[1]));
  return found;
}

function countOf(text: string, part: string): number {
  return text.split(part).length - 1;
}

interface Outcome {
  readonly k: number;
  readonly readHash: string | undefined;
  readonly code: string | undefined;
  readonly warnings: readonly string[];
}

interface Commit {
  readonly k: number | undefined;
  readonly bytes: Buffer | undefined;
  /** CLOCK_MONOTONIC ns when the bytes were recorded, right after the rename. */
  readonly at: number;
}

type ExternalEntry = [
  n: number,
  read: string,
  written: string,
  displaced: string,
  /** CLOCK_MONOTONIC ns just before and just after the exchange. */
  before: number,
  after: number,
];

/** CLOCK_MONOTONIC in ns, as the external writer reads it. */
function monotonicNs(): number {
  return Number(process.hrtime.bigint());
}

interface ExternalWriter {
  stop(): Promise<ExternalEntry[]>;
}

async function startExternalWriter(
  file: string,
  pauseMs: number,
  seed: number,
): Promise<ExternalWriter> {
  const child = spawn("python3", [WRITER, file, String(pauseMs), String(seed)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((done) => child.on("close", done));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done || !JSON.parse(first.value).ready) {
    throw new Error(`external writer did not start: ${stderr}`);
  }
  return {
    async stop() {
      child.stdin.end();
      const last = await lines.next();
      const status = await exited;
      if (status !== 0 || last.done) {
        throw new Error(`external writer failed (exit ${status}): ${stderr}`);
      }
      return (JSON.parse(last.value) as { writes: ExternalEntry[] }).writes;
    },
  };
}

export async function lostUpdates(options: LostUpdateOptions): Promise<LostUpdateReport> {
  const started = performance.now();
  const rand = seededRandom(options.seed);
  const file = join(options.dir, NAME);
  const initial = Buffer.from(initialContent(options.sequences));
  await writeFile(file, initial);

  const workspace = new Workspace({ roots: options.dir, policy: options.policy });
  // Which sequence is committing: the store follows each edit call into the library.
  const sequenceOf = new AsyncLocalStorage<number>();
  const commits: Commit[] = [];
  const tracker = workspace.tracker;
  // When each sequence's last guard check began (the one just before the rename).
  const lastCheck = new Map<number, number>();
  const checkEdit = tracker.checkEdit.bind(tracker);
  tracker.checkEdit = (path, checkOptions) => {
    const k = sequenceOf.getStore();
    if (k !== undefined) lastCheck.set(k, monotonicNs());
    return checkEdit(path, checkOptions);
  };
  const recordEdit = tracker.recordEdit.bind(tracker);
  tracker.recordEdit = (path, recordOptions = {}) => {
    const content = recordOptions.content;
    commits.push({
      k: sequenceOf.getStore(),
      bytes: content === undefined ? undefined : Buffer.from(content),
      at: monotonicNs(),
    });
    return recordEdit(path, recordOptions);
  };

  const schedule = Array.from({ length: options.sequences }, (_, k) => ({
    k,
    start: rand() * options.spreadMs,
    think: rand() * options.thinkMs,
  }));
  const unexpected: string[] = [];
  const wsReads = new Map<number, string>();

  const sequence = async ({ k, start, think }: (typeof schedule)[number]): Promise<Outcome> => {
    await sleep(start);
    let readHash: string;
    try {
      const read = await workspace.read({ file_path: file });
      if (read.truncated || read.cutLines > 0) unexpected.push(`sequence ${k}: read was partial`);
      readHash = sha(`${read.lines.join("\n")}\n`);
      wsReads.set(k, readHash);
    } catch (error) {
      if (!(error instanceof FreshfsError)) unexpected.push(`sequence ${k}: read threw ${error}`);
      return { k, readHash: undefined, code: `read:${codeOf(error)}`, warnings: [] };
    }
    await sleep(think);
    try {
      const result = await sequenceOf.run(k, () =>
        workspace.edit({ file_path: file, old_string: oldLine(k), new_string: newLine(k) }),
      );
      if (result.replacements !== 1 || result.matchedBy !== "exact") {
        unexpected.push(`sequence ${k}: ${result.replacements} replacements, ${result.matchedBy}`);
      }
      return { k, readHash, code: undefined, warnings: result.warnings };
    } catch (error) {
      if (!(error instanceof FreshfsError)) unexpected.push(`sequence ${k}: edit threw ${error}`);
      return { k, readHash, code: codeOf(error), warnings: [] };
    }
  };

  const external = await startExternalWriter(file, options.externalPauseMs, options.seed);
  let outcomes: Outcome[];
  let externalLog: ExternalEntry[];
  try {
    outcomes = await Promise.all(schedule.map(sequence));
  } finally {
    externalLog = await external.stop();
  }
  const final = await readFile(file);

  const report = verify({
    options,
    initial,
    final,
    outcomes,
    commits,
    externalLog,
    wsReads,
    lastCheck,
  });
  return {
    ...report,
    violations: [...unexpected, ...report.violations],
    elapsedMs: performance.now() - started,
  };
}

function codeOf(error: unknown): string {
  return error instanceof FreshfsError ? error.code : "UNEXPECTED";
}

interface Evidence {
  options: LostUpdateOptions;
  initial: Buffer;
  final: Buffer;
  outcomes: Outcome[];
  commits: Commit[];
  externalLog: ExternalEntry[];
  wsReads: Map<number, string>;
  lastCheck: Map<number, number>;
}

type Producer =
  | { kind: "initial" }
  | { kind: "edit"; index: number }
  | { kind: "external"; index: number };

interface OurWrite {
  readonly k: number;
  readonly before: string;
  readonly after: string;
  readonly beforeHash: string;
  readonly afterHash: string;
}

function verify(evidence: Evidence): Omit<LostUpdateReport, "elapsedMs"> {
  const { options, outcomes, commits, externalLog } = evidence;
  const violations: string[] = [];
  const fail = (message: string) => {
    if (violations.length < 50) violations.push(message);
    else if (violations.length === 50) violations.push("(further violations not listed)");
  };

  const accepted = outcomes.filter((o) => o.code === undefined);
  const acceptedBy = new Map(accepted.map((o) => [o.k, o]));
  const refused: Record<string, number> = {};
  for (const o of outcomes) if (o.code !== undefined) refused[o.code] = (refused[o.code] ?? 0) + 1;

  // Contents, by hash, and who wrote them.
  const contents = new Map<string, { text: string; by: Producer }>();
  const initialText = evidence.initial.toString("utf8");
  const initialHash = sha(evidence.initial);
  contents.set(initialHash, { text: initialText, by: { kind: "initial" } });

  // The Workspace's writes, in commit order, with the bytes each was made on.
  const ours: OurWrite[] = [];
  const committedSequences = new Set<number>();
  for (const [index, commit] of commits.entries()) {
    if (commit.k === undefined || commit.bytes === undefined) {
      fail(`commit ${index}: no sequence or no bytes recorded`);
      continue;
    }
    const k = commit.k;
    if (committedSequences.has(k)) fail(`sequence ${k} committed twice`);
    committedSequences.add(k);
    if (!acceptedBy.has(k)) fail(`sequence ${k} was refused, yet its edit was written`);
    const after = commit.bytes.toString("utf8");
    if (countOf(after, newLine(k)) !== 1 || countOf(after, oldLine(k)) !== 0) {
      fail(`sequence ${k}: its written bytes do not carry its line exactly once`);
      continue;
    }
    const before = after.replace(newLine(k), oldLine(k));
    const write = { k, before, after, beforeHash: sha(before), afterHash: sha(after) };
    if (contents.has(write.afterHash)) fail(`sequence ${k}: wrote a content seen before`);
    contents.set(write.afterHash, { text: after, by: { kind: "edit", index: ours.length } });
    ours.push(write);
  }
  for (const o of accepted) {
    if (!committedSequences.has(o.k)) fail(`sequence ${o.k} was accepted but never committed`);
  }

  // The external writes, each placed right after the write whose content it displaced.
  const groups = new Map<number, number[]>();
  let lastAnchor = -1;
  let externalOverwrites = 0;
  const externalTexts: string[] = [];
  for (const [j, [n, readHash, writtenHash, displacedHash]] of externalLog.entries()) {
    const read = contents.get(readHash);
    if (!read) {
      fail(`external write ${n}: it read a content nobody wrote (torn or unknown)`);
      externalTexts.push("");
      continue;
    }
    const text = `header: ext ${n}\n${read.text.slice(read.text.indexOf("\n") + 1)}`;
    if (sha(text) !== writtenHash) fail(`external write ${n}: its log does not match its content`);
    externalTexts.push(text);
    const displaced = contents.get(displacedHash);
    contents.set(writtenHash, { text, by: { kind: "external", index: j } });
    if (displacedHash !== readHash) externalOverwrites++;
    if (!displaced) {
      fail(`external write ${n} displaced a content nobody wrote (torn or unknown)`);
      continue;
    }
    const by = displaced.by;
    if (by.kind === "external") {
      if (by.index !== j - 1) fail(`external write ${n} displaced an older external write`);
      const group = [...groups.entries()].find(([, members]) => members.includes(j - 1));
      group?.[1].push(j);
      continue;
    }
    const anchor = by.kind === "initial" ? -1 : by.index;
    if (groups.has(anchor) || anchor < lastAnchor) {
      fail(`external write ${n} displaced a content another write had already replaced`);
      continue;
    }
    lastAnchor = anchor;
    groups.set(anchor, [j]);
  }

  // The total order, walked from the initial bytes with the content replayed.
  type Step = { kind: "edit"; index: number } | { kind: "external"; index: number };
  const order: Step[] = [];
  for (let anchor = -1; anchor < ours.length; anchor++) {
    if (anchor >= 0) order.push({ kind: "edit", index: anchor });
    for (const j of groups.get(anchor) ?? []) order.push({ kind: "external", index: j });
  }
  const placedExternal = order.filter((s) => s.kind === "external").length;
  if (placedExternal !== externalLog.length) {
    fail(`${externalLog.length - placedExternal} external writes could not be placed in the order`);
  }
  let current = initialText;
  let previous: Step | undefined;
  let overwroteWrite = 0;
  let overwroteWithWarning = 0;
  let overwroteInLastWindow = 0;
  let droppedByExternal = 0;
  for (const step of order) {
    if (step.kind === "edit") {
      const write = ours[step.index] as OurWrite;
      if (write.before !== current) {
        overwroteWrite++;
        const warned = (acceptedBy.get(write.k)?.warnings.length ?? 0) > 0;
        const replaced = previous?.kind === "external" ? externalLog[previous.index] : undefined;
        const checkedAt = evidence.lastCheck.get(write.k);
        // The replaced write's exchange was over before the edit's last check began.
        const landedBeforeCheck =
          replaced !== undefined && checkedAt !== undefined && replaced[5] < checkedAt;
        const what = replaced
          ? `external write ${replaced[0]}, which landed ${landedBeforeCheck ? `${((checkedAt - replaced[5]) / 1e6).toFixed(2)} ms before the edit's last check began` : "after the edit's last check began"}`
          : "an earlier edit";
        if (options.policy === "warn" && warned) {
          // Under warn an edit may go ahead on changed bytes, but never without saying so.
          overwroteWithWarning++;
        } else if (replaced && !landedBeforeCheck) {
          overwroteInLastWindow++;
        } else {
          fail(
            `sequence ${write.k}'s edit was made on older bytes than the file had when it was written: it overwrote ${what}${warned ? "" : ", without a warning"} (lost update)`,
          );
        }
      }
      const replayed = current.replace(oldLine(write.k), newLine(write.k));
      if (!current.includes(oldLine(write.k)) || replayed !== write.after) {
        // Replayed on the file as it was, the edit gives other bytes: count it, replay on.
        if (write.before === current) fail(`sequence ${write.k}: replay differs from its bytes`);
      }
      current = write.after;
    } else {
      const text = externalTexts[step.index] ?? "";
      const lost = [...editsIn(current)].filter((k) => !editsIn(text).has(k));
      droppedByExternal += lost.length;
      current = text;
    }
    previous = step;
  }
  const windows = commits
    .map((commit) => commit.at - (evidence.lastCheck.get(commit.k ?? -1) ?? Number.NaN))
    .filter((ns) => Number.isFinite(ns))
    .map((ns) => ns / 1e6)
    .sort((a, b) => a - b);
  const at = (q: number) =>
    windows[Math.min(windows.length - 1, Math.floor(q * windows.length))] ?? 0;
  const lastWindowMs = { median: at(0.5), p99: at(0.99), max: windows[windows.length - 1] ?? 0 };
  const finalText = evidence.final.toString("utf8");
  const finalMatchesReplay = current === finalText;
  if (!finalMatchesReplay) fail("the final file differs from the replay of the ordered writes");
  const missing = [...acceptedBy.keys()].filter((k) => !editsIn(finalText).has(k));
  if (missing.length !== droppedByExternal && finalMatchesReplay && overwroteWrite === 0) {
    fail(`${missing.length} accepted edits are missing, ${droppedByExternal} explained`);
  }

  // Every read saw a content that was written; every accepted edit was made on bytes the
  // Workspace had seen (its own sequence's read, or a later read or edit of the Workspace).
  let readsSeen = 0;
  const seenByWorkspace = new Set<string>(ours.map((w) => w.afterHash));
  for (const [k, hash] of evidence.wsReads) {
    if (contents.has(hash)) readsSeen++;
    else fail(`sequence ${k} read a content nobody wrote (torn or unknown)`);
    seenByWorkspace.add(hash);
  }
  for (const [n, readHash] of externalLog) {
    if (contents.has(readHash)) readsSeen++;
    else fail(`external read ${n} saw a content nobody wrote`);
  }
  let onOwnRead = 0;
  let onWorkspaceState = 0;
  let onUnreadBytes = 0;
  for (const write of ours) {
    const outcome = acceptedBy.get(write.k);
    if (write.beforeHash === outcome?.readHash) onOwnRead++;
    else if (seenByWorkspace.has(write.beforeHash)) onWorkspaceState++;
    else {
      onUnreadBytes++;
      if (options.policy === "strict") {
        fail(`sequence ${write.k}: accepted under strict on bytes the Workspace never read`);
      } else if ((outcome?.warnings.length ?? 0) === 0) {
        fail(`sequence ${write.k}: edited bytes the Workspace never read, without a warning`);
      }
    }
  }
  for (const [code, count] of Object.entries(refused)) {
    if (code !== "STALE") fail(`${count} refusals with code ${code}`);
  }
  // Under warn too, a change landing while an edit is being written is refused (STALE): the
  // edit goes ahead on bytes changed since its read, never over bytes no one has seen.

  return {
    policy: options.policy,
    sequences: options.sequences,
    accepted: accepted.length,
    refused,
    acceptedWithWarning: accepted.filter((o) => o.warnings.length > 0).length,
    externalWrites: externalLog.length,
    externalOverwrites,
    droppedByExternal,
    onOwnRead,
    onWorkspaceState,
    onUnreadBytes,
    overwroteWrite,
    overwroteWithWarning,
    overwroteInLastWindow,
    lastWindowMs,
    chainLength: order.length,
    readsSeen,
    finalMatchesReplay,
    violations,
  };
}

function table(reports: readonly LostUpdateReport[]): string {
  const rows: [string, (r: LostUpdateReport) => string | number][] = [
    ["read -> edit sequences", (r) => r.sequences],
    ["accepted edits", (r) => r.accepted],
    [
      "refused, by code",
      (r) =>
        Object.entries(r.refused)
          .map(([code, count]) => `${code} ${count}`)
          .join(", ") || "none",
    ],
    ["accepted with a warning", (r) => r.acceptedWithWarning],
    ["external writes", (r) => r.externalWrites],
    ["writes in the verified total order", (r) => r.chainLength],
    [
      "last check -> rename, ms (median / p99 / max)",
      (r) =>
        [r.lastWindowMs.median, r.lastWindowMs.p99, r.lastWindowMs.max]
          .map((ms) => ms.toFixed(2))
          .join(" / "),
    ],
    ["accepted, on the bytes its own sequence read", (r) => r.onOwnRead],
    ["accepted, on bytes a later read/edit of the Workspace saw", (r) => r.onWorkspaceState],
    ["accepted, on bytes the Workspace never read (stale)", (r) => r.onUnreadBytes],
    [
      "accepted edits that overwrote a write made while they ran (lost update)",
      (r) => r.overwroteWrite,
    ],
    ["... of which carried a warning (warn)", (r) => r.overwroteWithWarning],
    [
      "... of which silent, the write landing after the edit's last check began",
      (r) => r.overwroteInLastWindow,
    ],
    ["accepted edits later replaced by an external write", (r) => r.droppedByExternal],
    ["external writes that replaced content they had not read", (r) => r.externalOverwrites],
    ["reads checked against the written contents", (r) => r.readsSeen],
    ["final file = replay of the ordered writes", (r) => (r.finalMatchesReplay ? "yes" : "NO")],
    ["invariant violations", (r) => r.violations.length],
    ["time", (r) => `${(r.elapsedMs / 1000).toFixed(1)} s`],
  ];
  const head = `| | ${reports.map((r) => `policy "${r.policy}"`).join(" | ")} |`;
  const rule = `|---|${reports.map(() => "---:").join("|")}|`;
  const body = rows.map(([label, cell]) => `| ${label} | ${reports.map(cell).join(" | ")} |`);
  return [head, rule, ...body].join("\n");
}

export async function run(): Promise<string> {
  const problem = externalWriterProblem();
  if (problem) return `Skipped: ${problem}.`;
  const reports: LostUpdateReport[] = [];
  for (const policy of ["strict", "warn"] as const) {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "freshfs-lost-updates-")));
    try {
      reports.push(
        await lostUpdates({
          dir,
          sequences: 1000,
          spreadMs: 4000,
          thinkMs: 20,
          externalPauseMs: 20,
          policy,
          seed: policy === "strict" ? 7 : 8,
        }),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const parts = [
    "1,000 concurrent read -> edit sequences on one file through one Workspace (each edits its own line), " +
      "started at random moments over 4 s with up to 20 ms between read and edit, while a second process " +
      "(Python) rewrites the file's first line in a loop (pause 0-20 ms) and swaps each content in with " +
      "renameat2(RENAME_EXCHANGE), which tells it exactly which content it replaced. Every accepted edit's " +
      "bytes (taken at `tracker.recordEdit`, in commit order) and every external write are put in one total " +
      "order and replayed from the initial bytes.",
    "",
    table(reports),
  ];
  for (const report of reports) {
    if (report.violations.length > 0) {
      parts.push("", `Violations (policy "${report.policy}"):`, "");
      for (const line of report.violations) parts.push(`- ${line}`);
    }
  }
  return parts.join("\n");
}

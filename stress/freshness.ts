/**
 * Freshness of the live trees (issue 14's acceptance): every answer of glob, grep and fuzzyFind
 * with `watch: true` must reflect every change completed before the call began, by any process.
 *
 * Another process makes the changes (test/fixtures/reliability/churn.mjs, on command over its
 * stdin); the parent sends one, waits for the child's line saying it is done, then at once asks
 * glob, grep and fuzzyFind (the library's, with `cache: true, watch: true`, and a `Workspace`'s,
 * which watches by default), each answer noting which mode gave it (`freshness`). Only after
 * every answer of the round is in does it compute the oracle, from fresh walks (`forceRescan`
 * with the same policy; for grep, a read of every candidate file; for fuzzyFind, the same query
 * with no cache, which walks) with no change in between: any difference is a stale answer. rg
 * (`rg --files-with-matches --hidden -F`) is a second oracle for grep; where it disagrees with
 * the walk's, that is a conformance difference, reported apart, not staleness.
 *
 * Scenarios:
 * - churn: randomized changes in a git repository (files and directories created, deleted,
 *   renamed, rewritten, trees made with `mkdir -p` and removed with `rm -rf`, moved in and out,
 *   files turned into directories, names hidden and revealed, symbolic links, `.gitignore`
 *   edits at the top and nested, `.ignore`, `info/exclude`, the global excludes file and
 *   `core.excludesFile`, nested repositories made and unmade, commits), queried at the root
 *   and at a subdirectory whose rules come partly from above it; once more with the Workspace's
 *   tools run in a real daemon process (`daemon: "auto"`), its every answer checked the same way
 *   and counted by who gave it (`answeredBy`);
 * - checkout: `git checkout` between two branches that differ in many files, each way;
 * - burst: many files created (then deleted) while the searching process's main thread is
 *   blocked, past the kernel's inotify queue (16,384 events);
 * - recreate: a watched directory (and the root) deleted and made again, `rm -rf d && mkdir d`;
 * - budget: a tree with more directories than `configureLiveTrees({ maxWatches })` allows, and
 *   one that grows past it; with `realLimit`, `fs.inotify.max_user_watches` itself lowered to
 *   what is in use plus a few hundred (root only; restored in a `finally`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  type AnsweredBy,
  configureLiveTrees,
  forceRescan,
  fuzzyFind,
  glob,
  grep,
  type ScanResult,
  Workspace,
} from "../src/index.js";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";
import { useDaemonDirs } from "../test/helpers/daemon-env.js";
import { createTempRepo, isolatedGitEnv, type TempRepo } from "../test/helpers/git.js";

const CHURN = fileURLToPath(new URL("../test/fixtures/reliability/churn.mjs", import.meta.url));

// ---------------------------------------------------------------------------------------------
// The other process.

/** A change the churn process makes (see churn.mjs). */
export type Change =
  | { readonly op: "write" | "append"; readonly path: string; readonly text: string }
  | { readonly op: "mkdir" | "rm" | "touch"; readonly path: string }
  | { readonly op: "rename"; readonly from: string; readonly to: string }
  | { readonly op: "symlink"; readonly path: string; readonly target: string }
  | {
      readonly op: "many";
      readonly dir: string;
      readonly count: number;
      readonly perDir: number;
      readonly dirPrefix: string;
      readonly prefix: string;
      readonly text: string;
      readonly literal: string;
      readonly every: number;
    }
  | { readonly op: "git"; readonly args: readonly string[] }
  | { readonly op: "sh"; readonly cmd: string };

export interface ChurnDone {
  /** `process.hrtime.bigint()` in the child when it started, and once every change was done. */
  readonly start: bigint;
  readonly end: bigint;
  readonly made: number;
  readonly errors: readonly string[];
}

/** The churn process: changes `root` on command. */
export class Churn {
  readonly #child: ChildProcess;
  readonly #queue: string[] = [];
  readonly #waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  #ended = false;
  #id = 0;
  readonly #closed: Promise<void>;

  constructor(root: string, env: NodeJS.ProcessEnv) {
    this.#child = spawn(process.execPath, [CHURN, root], {
      cwd: tmpdir(),
      env,
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.#closed = new Promise((resolve) => this.#child.on("close", () => resolve()));
    const lines = createInterface({ input: this.#child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const next = this.#waiting.shift();
      if (next) next.resolve(line);
      else this.#queue.push(line);
    });
    lines.on("close", () => {
      this.#ended = true;
      for (const next of this.#waiting.splice(0)) next.reject(new Error("churn.mjs ended"));
    });
  }

  #line(): Promise<string> {
    const ready = this.#queue.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.#ended) return Promise.reject(new Error("churn.mjs ended"));
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /**
   * Makes `changes`; resolves once the child says every one is done. `onStarted` runs as soon as
   * the child has the command (synchronously: it may block this thread).
   */
  async run(changes: readonly Change[], onStarted?: () => void): Promise<ChurnDone> {
    const id = ++this.#id;
    this.#child.stdin?.write(
      `${JSON.stringify({ id, changes, notify: onStarted !== undefined })}\n`,
    );
    if (onStarted) {
      const started = JSON.parse(await this.#line()) as { id: number; started?: boolean };
      if (started.id !== id || !started.started) throw new Error("churn.mjs did not start");
      onStarted();
    }
    const done = JSON.parse(await this.#line()) as {
      id: number;
      start: string;
      end: string;
      made: number;
      errors: string[];
    };
    if (done.id !== id) throw new Error(`churn.mjs answered ${done.id}, not ${id}`);
    return {
      start: BigInt(done.start),
      end: BigInt(done.end),
      made: done.made,
      errors: done.errors,
    };
  }

  /** `run`, failing if any change failed. */
  async must(changes: readonly Change[], onStarted?: () => void): Promise<ChurnDone> {
    const done = await this.run(changes, onStarted);
    if (done.errors.length > 0) throw new Error(`churn.mjs: ${done.errors.join("; ")}`);
    return done;
  }

  async close(): Promise<void> {
    this.#child.stdin?.end();
    await this.#closed;
  }
}

/** Blocks this thread (the main one: the watcher's thread runs on) for `ms`. */
function blockThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// ---------------------------------------------------------------------------------------------
// Answers and their oracles.

export type Kind = "glob" | "glob:any" | "grep" | "fuzzy" | "ws.glob" | "ws.grep" | "ws.find";

export interface Target {
  readonly root: string;
  /** How the report names it. */
  readonly label: string;
  readonly kinds: readonly Kind[];
  /** For the `ws.*` kinds: a Workspace over exactly `root`. */
  readonly ws?: Workspace | undefined;
  /** The Workspace was asked to run its tools in the daemon: an answer from here is counted. */
  readonly viaDaemon?: boolean | undefined;
}

interface Got {
  readonly kind: Kind;
  readonly target: Target;
  readonly value: readonly string[];
  readonly freshness: string;
  readonly unwatched: string | undefined;
  readonly ms: number;
  /** Not comparable (a Workspace answer cut to fit its result cap). */
  readonly cut: boolean;
  /** Which process gave a Workspace's answer. */
  readonly answeredBy: AnsweredBy | undefined;
}

const FUZZY_LIMIT = 200;
const WS_FIND_LIMIT = 50;
const NODE_MODULES = /(^|\/)node_modules(\/|$)/;
const HIDDEN = /(^|\/)\./;

const sorted = (values: readonly string[]) => [...values].sort();
const fuzzyRow = (m: { path: string; type: string; score: number }) =>
  `${m.path} (${m.type}, ${m.score})`;

async function answer(kind: Kind, target: Target, literal: string, query: string): Promise<Got> {
  const path = target.root;
  const started = performance.now();
  const got = (
    value: readonly string[],
    freshness: string | undefined,
    unwatched: string | undefined,
    cut = false,
    answeredBy?: AnsweredBy,
  ): Got => ({
    kind,
    target,
    value,
    freshness: freshness ?? "unreported",
    unwatched,
    ms: performance.now() - started,
    cut,
    answeredBy,
  });
  const ws = target.ws;
  switch (kind) {
    case "glob": {
      const r = await glob("**/*", { path, cache: true, watch: true });
      return got(sorted(r.matches), r.freshness, r.unwatched);
    }
    case "glob:any": {
      const r = await glob("**/*", { path, cache: true, watch: true, fileType: "any" });
      return got(sorted(r.matches), r.freshness, r.unwatched);
    }
    case "grep": {
      const r = await grep(literal, {
        path,
        cache: true,
        watch: true,
        fixedStrings: true,
        outputMode: "files_with_matches",
      });
      return got(sorted(r.files), r.freshness, r.unwatched);
    }
    case "fuzzy": {
      const r = await fuzzyFind(query, { path, cache: true, watch: true, limit: FUZZY_LIMIT });
      return got([`total ${r.totalMatches}`, ...r.matches.map(fuzzyRow)], r.freshness, r.unwatched);
    }
    case "ws.glob": {
      if (!ws) throw new Error("ws.glob without a Workspace");
      const r = await ws.glob({ pattern: "**/*", limit: 1_000_000 });
      return got(sorted(r.files), freshnessOf(r), undefined, r.truncated, r.answeredBy);
    }
    case "ws.grep": {
      if (!ws) throw new Error("ws.grep without a Workspace");
      const r = await ws.grep({
        pattern: literal,
        fixed_strings: true,
        output_mode: "files_with_matches",
        head_limit: 0,
      });
      return got(sorted(r.files), freshnessOf(r), undefined, r.truncated, r.answeredBy);
    }
    case "ws.find": {
      if (!ws) throw new Error("ws.find without a Workspace");
      const r = await ws.find({ query, limit: WS_FIND_LIMIT });
      return got(
        [`total ${r.total}`, ...r.matches.map(fuzzyRow)],
        freshnessOf(r),
        undefined,
        false,
        r.answeredBy,
      );
    }
  }
}

/** A Workspace result's mode, where this build reports one. */
function freshnessOf(result: object): string | undefined {
  const freshness = (result as { freshness?: unknown }).freshness;
  return typeof freshness === "string" ? freshness : undefined;
}

/** The oracle of one round: fresh walks, made after every answer of the round was in. */
class Oracle {
  readonly #root: string;
  readonly #literal: string;
  readonly #query: string;
  readonly #walks = new Map<boolean, Promise<ScanResult>>();
  readonly #values = new Map<string, Promise<readonly string[]>>();

  constructor(root: string, literal: string, query: string) {
    this.#root = root;
    this.#literal = literal;
    this.#query = query;
  }

  #walk(hidden: boolean): Promise<ScanResult> {
    let walk = this.#walks.get(hidden);
    if (!walk) {
      walk = forceRescan(this.#root, { includeHidden: hidden, useGitignore: true });
      this.#walks.set(hidden, walk);
    }
    return walk;
  }

  of(kind: Kind): Promise<readonly string[]> {
    const key = kind === "ws.glob" ? "glob" : kind === "ws.grep" ? "grep" : kind;
    let value = this.#values.get(key);
    if (!value) {
      value = this.#compute(kind);
      this.#values.set(key, value);
    }
    return value;
  }

  async #compute(kind: Kind): Promise<readonly string[]> {
    switch (kind) {
      case "glob":
      case "ws.glob":
      case "glob:any": {
        const listing = await this.#walk(false);
        const any = kind === "glob:any";
        // `*` matches no leading dot (glob without `hidden`), so `**/*` leaves out a hidden
        // entry even where a negation (`!.env`) puts it in the listing.
        return sorted(
          listing.entries
            .filter(
              (e) =>
                (any || e.type === "file") && !NODE_MODULES.test(e.path) && !HIDDEN.test(e.path),
            )
            .map((e) => e.path),
        );
      }
      case "grep":
      case "ws.grep":
        return sorted(await this.grepFiles());
      case "fuzzy": {
        const r = await fuzzyFind(this.#query, { path: this.#root, limit: FUZZY_LIMIT });
        return [`total ${r.totalMatches}`, ...r.matches.map(fuzzyRow)];
      }
      case "ws.find": {
        const r = await fuzzyFind(this.#query, { path: this.#root, limit: WS_FIND_LIMIT });
        return [`total ${r.totalMatches}`, ...r.matches.map(fuzzyRow)];
      }
    }
  }

  /** The files of the hidden-including walk that hold the literal, read here. */
  async grepFiles(): Promise<string[]> {
    const listing = await this.#walk(true);
    const out: string[] = [];
    for (const entry of listing.entries) {
      if (entry.type !== "file") continue;
      let text: string;
      try {
        text = readFileSync(join(this.#root, entry.path), "utf8");
      } catch {
        continue;
      }
      if (text.includes(this.#literal)) out.push(entry.path);
    }
    return out;
  }
}

/** `rg --files-with-matches --hidden -F literal` in `root`, sorted. */
function ripgrep(root: string, literal: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "rg",
      ["--no-config", "--files-with-matches", "--hidden", "--fixed-strings", "--", literal],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      // 1: no match. 2: an error, maybe only about some files (a dangling link): kept.
      const said = Buffer.concat(err).toString("utf8");
      // rg says so (exit 2) when every file was left out: an empty answer.
      if (
        code !== 0 &&
        code !== 1 &&
        out.length === 0 &&
        !said.includes("No files were searched")
      ) {
        reject(new Error(`rg exited ${code}: ${said}`));
        return;
      }
      const text = Buffer.concat(out).toString("utf8");
      resolve(sorted(text.split("\n").filter((line) => line !== "")));
    });
  });
}

let rgAvailable: boolean | undefined;
async function hasRipgrep(): Promise<boolean> {
  if (rgAvailable === undefined) {
    rgAvailable = await new Promise<boolean>((resolve) => {
      const child = spawn("rg", ["--version"], { stdio: "ignore" });
      child.on("error", () => resolve(false));
      child.on("close", (code) => resolve(code === 0));
    });
  }
  return rgAvailable;
}

/** What one list has that the other lacks, a few of each. */
function difference(got: readonly string[], want: readonly string[]): string {
  const have = new Set(got);
  const should = new Set(want);
  const missing = want.filter((x) => !have.has(x));
  const extra = got.filter((x) => !should.has(x));
  const few = (list: string[]) =>
    `${list
      .slice(0, 4)
      .map((x) => JSON.stringify(x))
      .join(", ")}${list.length > 4 ? `, ... (${list.length})` : ""}`;
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing ${few(missing)}`);
  if (extra.length > 0) parts.push(`extra ${few(extra)}`);
  if (parts.length === 0) parts.push("same entries, another order");
  return parts.join("; ");
}

// ---------------------------------------------------------------------------------------------
// Tallies.

/** A distribution, in ms. */
export interface Spread {
  readonly count: number;
  readonly median: number;
  readonly p99: number;
  readonly max: number;
}

function spread(values: readonly number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { count: s.length, median: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? 0 };
}

export interface ScenarioReport {
  readonly name: string;
  /** Commands sent to the other process (each followed by a round of queries). */
  readonly commands: number;
  /** Changes those commands made (`many` counts every file and directory it made). */
  readonly changes: number;
  /** Changes the other process could not make (a batch naming what an earlier change removed). */
  readonly failedChanges: number;
  readonly rounds: number;
  readonly answers: number;
  /** Workspace answers cut to fit its result cap: not compared. */
  readonly notCompared: number;
  readonly stale: number;
  /** The first stale answers, described. */
  readonly staleExamples: readonly string[];
  readonly byFreshness: Readonly<Record<string, number>>;
  /** Answers by kind: `kind freshness` → count. */
  readonly byKind: Readonly<Record<string, number>>;
  /** The first answer of each round right after a change, by mode. */
  readonly firstAfterChange: Readonly<Record<string, number>>;
  /** Latency of answers asked one at a time (rounds asked concurrently are left out). */
  readonly latency: Spread;
  readonly latencyByFreshness: Readonly<Record<string, Spread>>;
  /** Rounds checked against rg too, and where rg and the walk's grep oracle disagreed. */
  readonly rgChecked: number;
  readonly rgDisagreements: number;
  readonly rgExamples: readonly string[];
  /** `unwatched` reasons seen (temporary paths shortened), with counts. */
  readonly unwatched: Readonly<Record<string, number>>;
  /** Answers of a Workspace asked to run in the daemon, and how many the daemon gave. */
  readonly viaDaemon: { readonly answers: number; readonly byDaemon: number };
  readonly notes: readonly string[];
  readonly elapsedMs: number;
}

class Tally {
  readonly name: string;
  readonly #started = performance.now();
  readonly #shorten: (text: string) => string;
  commands = 0;
  changes = 0;
  failedChanges = 0;
  rounds = 0;
  answers = 0;
  notCompared = 0;
  stale = 0;
  readonly staleExamples: string[] = [];
  /** Every stale answer of the last round, described. */
  roundStale: string[] = [];
  readonly byFreshness: Record<string, number> = {};
  readonly byKind: Record<string, number> = {};
  readonly firstAfterChange: Record<string, number> = {};
  readonly latencies: number[] = [];
  readonly latencyByFreshness = new Map<string, number[]>();
  rgChecked = 0;
  rgDisagreements = 0;
  readonly rgExamples: string[] = [];
  readonly unwatched: Record<string, number> = {};
  readonly viaDaemon = { answers: 0, byDaemon: 0 };
  /** The first answers a Workspace asked to run in the daemon gave in this process. */
  readonly notByDaemon: string[] = [];
  /** The daemons that answered. */
  readonly daemonPids = new Set<number>();
  readonly notes: string[] = [];

  constructor(name: string, base: string) {
    this.name = name;
    this.#shorten = (text) => text.split(base).join("<tmp>");
  }

  done(result: ChurnDone): void {
    this.commands++;
    this.changes += result.made;
    this.failedChanges += result.errors.length;
  }

  shorten(text: string): string {
    return this.#shorten(text);
  }

  report(): ScenarioReport {
    const byMode: Record<string, Spread> = {};
    for (const [mode, values] of this.latencyByFreshness) byMode[mode] = spread(values);
    return {
      name: this.name,
      commands: this.commands,
      changes: this.changes,
      failedChanges: this.failedChanges,
      rounds: this.rounds,
      answers: this.answers,
      notCompared: this.notCompared,
      stale: this.stale,
      staleExamples: this.staleExamples,
      byFreshness: this.byFreshness,
      byKind: this.byKind,
      firstAfterChange: this.firstAfterChange,
      latency: spread(this.latencies),
      latencyByFreshness: byMode,
      rgChecked: this.rgChecked,
      rgDisagreements: this.rgDisagreements,
      rgExamples: this.rgExamples,
      unwatched: this.unwatched,
      viaDaemon: { ...this.viaDaemon },
      notes: this.notes,
      elapsedMs: performance.now() - this.#started,
    };
  }
}

const bump = (map: Record<string, number>, key: string, by = 1) => {
  map[key] = (map[key] ?? 0) + by;
};

interface RoundOptions {
  readonly literal: string;
  readonly query: string;
  /** What the round follows, for the report of a stale answer. */
  readonly after: string;
  /** The round follows a change (rather than waiting for the tree to be live). */
  readonly afterChange: boolean;
  /** Ask every query at once, instead of one after another. */
  readonly concurrent?: boolean;
  /** Check grep's oracle against rg too. */
  readonly rg?: boolean;
  /** Order of the queries: shuffled with this, else as listed. */
  readonly rand?: (() => number) | undefined;
  /** Kinds left out of this round. */
  readonly skip?: ReadonlySet<Kind> | undefined;
}

/** One round: every query of every target, then their oracles; returns the answers. */
async function round(
  tally: Tally,
  targets: readonly Target[],
  options: RoundOptions,
): Promise<readonly Got[]> {
  const asks: [Kind, Target][] = [];
  for (const target of targets) {
    for (const kind of target.kinds) if (!options.skip?.has(kind)) asks.push([kind, target]);
  }
  const rand = options.rand;
  if (rand) {
    for (let i = asks.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [asks[i], asks[j]] = [asks[j] as [Kind, Target], asks[i] as [Kind, Target]];
    }
  }
  let gots: Got[];
  if (options.concurrent) {
    gots = await Promise.all(
      asks.map(([kind, target]) => answer(kind, target, options.literal, options.query)),
    );
  } else {
    gots = [];
    for (const [kind, target] of asks) {
      gots.push(await answer(kind, target, options.literal, options.query));
    }
  }
  tally.rounds++;
  tally.roundStale = [];
  // Every answer is in: nothing changes from here to the end of the oracles.
  const oracles = new Map<Target, Oracle>();
  const oracleOf = (target: Target) => {
    let oracle = oracles.get(target);
    if (!oracle) {
      oracle = new Oracle(target.root, options.literal, options.query);
      oracles.set(target, oracle);
    }
    return oracle;
  };
  let first = true;
  for (const got of gots) {
    tally.answers++;
    bump(tally.byFreshness, got.freshness);
    bump(tally.byKind, `${got.kind} ${got.freshness}`);
    if (got.unwatched !== undefined) bump(tally.unwatched, tally.shorten(got.unwatched));
    if (!options.concurrent) {
      tally.latencies.push(got.ms);
      let list = tally.latencyByFreshness.get(got.freshness);
      if (!list) {
        list = [];
        tally.latencyByFreshness.set(got.freshness, list);
      }
      list.push(got.ms);
    }
    if (first && options.afterChange) bump(tally.firstAfterChange, got.freshness);
    first = false;
    if (got.target.viaDaemon && got.answeredBy) {
      tally.viaDaemon.answers++;
      if (got.answeredBy.daemon) {
        tally.viaDaemon.byDaemon++;
        tally.daemonPids.add(got.answeredBy.pid);
      } else if (tally.notByDaemon.length < 20) {
        tally.notByDaemon.push(
          `round ${tally.rounds}, after ${tally.shorten(options.after)}: ${got.kind} answered in this process (${got.answeredBy.pid})`,
        );
      }
    }
    if (got.cut) {
      tally.notCompared++;
      continue;
    }
    const want = await oracleOf(got.target).of(got.kind);
    if (want.length === got.value.length && want.every((x, i) => x === got.value[i])) continue;
    tally.stale++;
    const fuzzy = got.kind === "fuzzy" || got.kind === "ws.find";
    const line = `round ${tally.rounds}, after ${tally.shorten(options.after)}: ${got.kind} at ${got.target.label} (${got.freshness}${options.concurrent ? ", concurrent" : ""}${fuzzy ? `, query ${JSON.stringify(options.query)}` : ""}): ${difference(got.value, want)}`;
    tally.roundStale.push(line);
    if (tally.staleExamples.length < 20) tally.staleExamples.push(line);
  }
  if (options.rg && (await hasRipgrep())) {
    for (const target of targets) {
      if (!target.kinds.includes("grep")) continue;
      const want = sorted(await oracleOf(target).grepFiles());
      const rg = await ripgrep(target.root, options.literal);
      tally.rgChecked++;
      if (want.length !== rg.length || want.some((x, i) => x !== rg[i])) {
        tally.rgDisagreements++;
        if (tally.rgExamples.length < 10) {
          tally.rgExamples.push(
            `round ${tally.rounds}, after ${tally.shorten(options.after)}, at ${target.label}: rg vs the walk: ${difference(rg, want)}`,
          );
        }
      }
    }
  }
  return gots;
}

/**
 * Rounds (checked and counted like any) until glob and grep answer `live` at every target, or
 * `limit` rounds; returns whether they did.
 */
async function untilLive(
  tally: Tally,
  targets: readonly Target[],
  literal: string,
  query: string,
  limit = 40,
): Promise<boolean> {
  const skip = new Set<Kind>(["ws.glob", "ws.grep", "ws.find", "fuzzy", "glob:any"]);
  for (let i = 0; i < limit; i++) {
    const gots = await round(tally, targets, {
      literal,
      query,
      after: "waiting for the tree to be live",
      afterChange: false,
      skip,
    });
    if (gots.every((got) => got.freshness === "live")) return true;
    await sleep(i < 5 ? 5 : 50);
  }
  return false;
}

/** Closes every live tree (their watches with them) and returns to the environment's policy. */
export function resetLiveTrees(): void {
  configureLiveTrees({ enabled: false });
  configureLiveTrees(undefined);
}

async function inTemp<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), `freshfs-${prefix}-`)));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function inRepo<T>(use: (repo: TempRepo) => Promise<T>): Promise<T> {
  const repo = await createTempRepo();
  try {
    return await use(repo);
  } finally {
    await repo.remove();
  }
}

async function git(repo: TempRepo, args: readonly string[]): Promise<void> {
  const done = await repo.git(args);
  if (done.status !== 0) throw new Error(`git ${args.join(" ")}: ${done.stderr}`);
}

const COMMIT = ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--no-verify"];

function writeTree(root: string, files: Readonly<Record<string, string>>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
}

// ---------------------------------------------------------------------------------------------
// The randomized changes.

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "kappa",
  "sigma",
  "omega",
  "zeta",
  "theta",
  "lambda",
  "vega",
  "nova",
];
const EXTENSIONS = [".ts", ".js", ".md", ".txt", ".log", ".json", ""];

/** The tree as it is on disk, everything but `.git`: what the next change is drawn from. */
interface RawTree {
  readonly files: string[];
  readonly dirs: string[];
  readonly links: string[];
  /** Directories holding a `.git` directory ("" for the root). */
  readonly repos: string[];
}

function rawTree(root: string): RawTree {
  const tree: RawTree = { files: [], dirs: [], links: [], repos: [] };
  const visit = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(rel === "" ? root : join(root, rel));
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const path = rel === "" ? name : `${rel}/${name}`;
      let stats: ReturnType<typeof lstatSync>;
      try {
        stats = lstatSync(join(root, path));
      } catch {
        continue;
      }
      if (name === ".git") {
        if (stats.isDirectory()) tree.repos.push(rel);
        continue;
      }
      if (stats.isSymbolicLink()) tree.links.push(path);
      else if (stats.isDirectory()) {
        tree.dirs.push(path);
        visit(path);
      } else if (stats.isFile()) tree.files.push(path);
    }
  };
  visit("");
  return tree;
}

export interface Step {
  readonly changes: Change[];
  readonly label: string;
  /** A path the change is about: the fuzzy query is drawn from its name. */
  readonly focus: string | undefined;
}

interface GeneratorOptions {
  readonly root: string;
  readonly literal: string;
  /** Directories no change removes, renames or replaces (a search root inside the tree). */
  readonly protect: readonly string[];
  /** A directory outside the tree, for moves in and out and a `core.excludesFile`. */
  readonly outside: string;
  /** The global excludes file (under the home the searching process and git share), if any. */
  readonly globalExcludes?: string | undefined;
  readonly maxFiles: number;
  readonly maxDirs: number;
  /** Kinds of change never drawn (names as in `ChangeGenerator.next`), to isolate a failure. */
  readonly leaveOut?: readonly string[] | undefined;
}

/** Draws random changes from the tree as it is. */
export class ChangeGenerator {
  readonly #o: GeneratorOptions;
  readonly #rand: () => number;
  #serial = 0;
  /** Where `core.excludesFile` is set now, if anywhere. */
  #excludesFileIn: "--local" | "--global" | undefined;

  /**
   * Whether rg applies the same rules as git now: rg reads `core.excludesFile` from the global
   * configuration only, not from the repository's (`.git/config`).
   */
  get rgComparable(): boolean {
    return this.#excludesFileIn !== "--local";
  }

  constructor(options: GeneratorOptions, rand: () => number) {
    this.#o = options;
    this.#rand = rand;
  }

  #int(n: number): number {
    return Math.floor(this.#rand() * n);
  }

  #pick<T>(list: readonly T[]): T | undefined {
    return list.length === 0 ? undefined : list[this.#int(list.length)];
  }

  #name(hiddenChance = 0.08): string {
    const word = this.#pick(WORDS) as string;
    const tag = this.#rand() < 0.6 ? `-${this.#serial++}` : "";
    const ext = this.#pick(EXTENSIONS) as string;
    return `${this.#rand() < hiddenChance ? "." : ""}${word}${tag}${ext}`;
  }

  #text(withLiteral = this.#rand() < 0.5): string {
    const lines: string[] = [];
    const n = 1 + this.#int(4);
    for (let i = 0; i < n; i++) lines.push(`${this.#pick(WORDS)} ${this.#serial++}`);
    if (withLiteral) lines.splice(this.#int(lines.length + 1), 0, `found ${this.#o.literal} here`);
    return `${lines.join("\n")}\n`;
  }

  #protected(path: string): boolean {
    return this.#o.protect.some((p) => p === path || p.startsWith(`${path}/`));
  }

  #in(dir: string, name: string): string {
    return dir === "" ? name : `${dir}/${name}`;
  }

  /** A new path in a random directory (the root's or any other, ignored and hidden ones too). */
  #newPath(tree: RawTree, hiddenChance?: number): string {
    const dir = this.#rand() < 0.2 ? "" : (this.#pick(tree.dirs) ?? "");
    return this.#in(dir, this.#name(hiddenChance));
  }

  #movable(tree: RawTree): string[] {
    return tree.dirs.filter((d) => !this.#protected(d));
  }

  /** Changes to one ignore file (`file`, relative to the root or absolute): add, negate, drop. */
  #ignoreEdit(file: string, absolute: string, tree: RawTree, scope: string): Step {
    let current = "";
    try {
      current = readFileSync(absolute, "utf8");
    } catch {
      // None yet.
    }
    const lines = current.split("\n").filter((line) => line !== "");
    const r = this.#rand();
    let label: string;
    let focus: string | undefined;
    if (r < 0.6 || lines.length === 0) {
      const pattern = this.#pattern(tree, scope, r < 0.12);
      lines.push(pattern.line);
      label = `add ${JSON.stringify(pattern.line)} to ${file}`;
      focus = pattern.focus;
    } else if (r < 0.85) {
      const at = this.#int(lines.length);
      label = `drop ${JSON.stringify(lines[at])} from ${file}`;
      lines.splice(at, 1);
    } else if (r < 0.95) {
      return { changes: [{ op: "rm", path: file }], label: `rm ${file}`, focus: undefined };
    } else {
      lines.length = 0;
      label = `empty ${file}`;
    }
    const text = lines.length === 0 ? "" : `${lines.join("\n")}\n`;
    return { changes: [{ op: "write", path: file, text }], label, focus };
  }

  /** An ignore pattern naming something under `scope` ("" the root, `*` anywhere). */
  #pattern(tree: RawTree, scope: string, negate: boolean): { line: string; focus?: string } {
    const under = (path: string) => scope === "*" || scope === "" || path.startsWith(`${scope}/`);
    const candidates = [...tree.files, ...tree.dirs, ...tree.links].filter(
      (p) => under(p) && p !== "pkg",
    );
    const path = this.#pick(candidates);
    if (!path) return { line: `*${this.#pick(EXTENSIONS) || ".tmp"}` };
    const name = basename(path);
    const sub = scope === "*" || scope === "" ? path : path.slice(scope.length + 1);
    const isDir = tree.dirs.includes(path);
    const dot = name.lastIndexOf(".");
    const forms = [
      name,
      `**/${name}`,
      `/${sub}`,
      `${name.slice(0, 3)}*`,
      isDir ? `${name}/` : name,
      dot > 0 ? `*${name.slice(dot)}` : name,
      sub.includes("/") ? sub : `${sub}/**`,
    ];
    const line = this.#pick(forms) as string;
    return { line: negate ? `!${line.replace(/^\//, "")}` : line, focus: path };
  }

  /** One random change, or a batch of a few. */
  next(tree: RawTree, allowBatch = true): Step {
    const o = this.#o;
    const full = tree.files.length > o.maxFiles;
    const crowded = tree.dirs.length > o.maxDirs;
    const table: [string, number, () => Step | undefined][] = [
      ["createFile", 14, () => (full ? this.#deleteFile(tree) : this.#createFile(tree))],
      ["modifyFile", 12, () => this.#modifyFile(tree)],
      ["deleteFile", 7, () => this.#deleteFile(tree)],
      ["renameFile", 8, () => this.#renameFile(tree)],
      ["mkdirDeep", 5, () => (crowded || full ? this.#removeDir(tree) : this.#mkdirDeep(tree))],
      ["removeDir", 4, () => this.#removeDir(tree)],
      ["renameDir", 4, () => this.#renameDir(tree)],
      ["gitignore", 10, () => this.#gitignore(tree)],
      ["exclude", 3, () => this.#exclude(tree)],
      ["dotIgnore", 2, () => this.#dotIgnore(tree)],
      ["globalExcludes", 2, () => this.#globalExcludes(tree)],
      ["excludesFile", 1.5, () => this.#excludesFile(tree)],
      ["symlink", 4, () => this.#symlink(tree)],
      ["unlink", 2, () => this.#unlink(tree)],
      ["typeSwap", 3, () => this.#typeSwap(tree)],
      ["hideToggle", 3, () => this.#hideToggle(tree)],
      ["touch", 2, () => this.#touch(tree)],
      ["moveIn", 2, () => this.#moveIn(tree)],
      ["moveOut", 1.5, () => this.#moveOut(tree)],
      ["nestedRepo", 1.5, () => this.#nestedRepo(tree)],
      ["unrepo", 0.5, () => this.#unrepo(tree)],
      ["commit", 1.5, () => this.#commit()],
      ["batch", allowBatch ? 6 : 0, () => this.#batch(tree)],
    ];
    const leaveOut = new Set(o.leaveOut ?? []);
    const weight = (name: string, w: number) => (leaveOut.has(name) ? 0 : w);
    const total = table.reduce((sum, [name, w]) => sum + weight(name, w), 0);
    for (let attempt = 0; attempt < 20; attempt++) {
      let x = this.#rand() * total;
      for (const [name, w, make] of table) {
        x -= weight(name, w);
        if (x > 0) continue;
        const step = make();
        if (step) return step;
        break;
      }
    }
    return this.#createFile(tree);
  }

  #createFile(tree: RawTree): Step {
    const path = this.#newPath(tree);
    return {
      changes: [{ op: "write", path, text: this.#text() }],
      label: `create ${path}`,
      focus: path,
    };
  }

  #modifyFile(tree: RawTree): Step | undefined {
    const path = this.#pick(tree.files);
    if (!path) return undefined;
    if (this.#rand() < 0.3) {
      const text = this.#rand() < 0.5 ? `more ${this.#o.literal}\n` : "more text\n";
      return { changes: [{ op: "append", path, text }], label: `append to ${path}`, focus: path };
    }
    return {
      changes: [{ op: "write", path, text: this.#text() }],
      label: `rewrite ${path}`,
      focus: path,
    };
  }

  #deleteFile(tree: RawTree): Step | undefined {
    const path = this.#pick(tree.files);
    if (!path) return undefined;
    return { changes: [{ op: "rm", path }], label: `rm ${path}`, focus: path };
  }

  #renameFile(tree: RawTree): Step | undefined {
    const from = this.#pick(tree.files);
    if (!from) return undefined;
    const over = this.#rand() < 0.2 ? this.#pick(tree.files.filter((f) => f !== from)) : undefined;
    const to = over ?? this.#newPath(tree);
    return {
      changes: [{ op: "rename", from, to }],
      label: `mv ${from} ${to}${over ? " (over it)" : ""}`,
      focus: to,
    };
  }

  #mkdirDeep(tree: RawTree): Step {
    const base = this.#rand() < 0.3 ? "" : (this.#pick(tree.dirs) ?? "");
    const depth = 2 + this.#int(5);
    const parts: string[] = [];
    for (let i = 0; i < depth; i++) parts.push(this.#name(0.1).replace(/\.[a-z]+$/, ""));
    const deepest = this.#in(base, parts.join("/"));
    const changes: Change[] = [{ op: "mkdir", path: deepest }];
    const files = this.#int(4);
    for (let i = 0; i < files; i++) {
      const level = parts.slice(0, 1 + this.#int(depth)).join("/");
      changes.push({
        op: "write",
        path: this.#in(this.#in(base, level), this.#name()),
        text: this.#text(),
      });
    }
    return { changes, label: `mkdir -p ${deepest} (+${files} files)`, focus: deepest };
  }

  #removeDir(tree: RawTree): Step | undefined {
    const path = this.#pick(this.#movable(tree));
    if (!path) return undefined;
    return { changes: [{ op: "rm", path }], label: `rm -rf ${path}`, focus: path };
  }

  #renameDir(tree: RawTree): Step | undefined {
    const from = this.#pick(this.#movable(tree));
    if (!from) return undefined;
    const into = this.#rand() < 0.5 ? "" : (this.#pick(tree.dirs) ?? "");
    if (into === from || into.startsWith(`${from}/`)) return undefined;
    const to = this.#in(into, this.#name(0.1));
    return { changes: [{ op: "rename", from, to }], label: `mv ${from} ${to}`, focus: to };
  }

  #ignoreDir(tree: RawTree): string {
    const r = this.#rand();
    if (r < 0.4) return "";
    return this.#pick(tree.dirs) ?? "";
  }

  #gitignore(tree: RawTree): Step {
    const dir = this.#ignoreDir(tree);
    const file = this.#in(dir, ".gitignore");
    return this.#ignoreEdit(file, join(this.#o.root, file), tree, dir);
  }

  #dotIgnore(tree: RawTree): Step {
    const dir = this.#ignoreDir(tree);
    const file = this.#in(dir, ".ignore");
    return this.#ignoreEdit(file, join(this.#o.root, file), tree, dir);
  }

  #exclude(tree: RawTree): Step {
    const repo = this.#rand() < 0.5 ? "" : (this.#pick(tree.repos) ?? "");
    const file = this.#in(repo, ".git/info/exclude");
    return this.#ignoreEdit(file, join(this.#o.root, file), tree, repo);
  }

  #globalExcludes(tree: RawTree): Step | undefined {
    const file = this.#o.globalExcludes;
    if (!file) return undefined;
    const step = this.#ignoreEdit(file, file, tree, "*");
    return { ...step, label: step.label.split(file).join("the global excludes file") };
  }

  #excludesFile(tree: RawTree): Step {
    const file = join(this.#o.outside, "extra-excludes");
    if (this.#rand() < 0.35) {
      const was = this.#excludesFileIn;
      const args = was
        ? ["config", was, "--unset", "core.excludesFile"]
        : ["config", this.#rand() < 0.5 ? "--local" : "--global", "core.excludesFile", file];
      this.#excludesFileIn = was ? undefined : (args[1] as "--local" | "--global");
      return {
        changes: [{ op: "git", args }],
        label: was
          ? `git config ${was} --unset core.excludesFile`
          : `git config ${args[1]} core.excludesFile <outside>`,
        focus: undefined,
      };
    }
    const step = this.#ignoreEdit(file, file, tree, "*");
    return { ...step, label: step.label.split(file).join("core.excludesFile") };
  }

  #symlink(tree: RawTree): Step {
    const path = this.#newPath(tree, 0.05);
    const r = this.#rand();
    const to = r < 0.4 ? this.#pick(tree.files) : r < 0.8 ? this.#pick(tree.dirs) : undefined;
    const target =
      to === undefined
        ? `nowhere-${this.#serial++}`
        : relative(dirname(join(this.#o.root, path)), join(this.#o.root, to)) || ".";
    return {
      changes: [{ op: "symlink", path, target }],
      label: `ln -s ${target} ${path}`,
      focus: path,
    };
  }

  #unlink(tree: RawTree): Step | undefined {
    const path = this.#pick(tree.links);
    if (!path) return undefined;
    return { changes: [{ op: "rm", path }], label: `rm ${path} (a link)`, focus: path };
  }

  #typeSwap(tree: RawTree): Step | undefined {
    if (this.#rand() < 0.5) {
      const path = this.#pick(tree.files);
      if (!path) return undefined;
      return {
        changes: [
          { op: "rm", path },
          { op: "write", path: `${path}/${this.#name(0)}`, text: this.#text() },
        ],
        label: `file ${path} made a directory`,
        focus: path,
      };
    }
    const path = this.#pick(this.#movable(tree));
    if (!path) return undefined;
    return {
      changes: [
        { op: "rm", path },
        { op: "write", path, text: this.#text() },
      ],
      label: `directory ${path} made a file`,
      focus: path,
    };
  }

  #hideToggle(tree: RawTree): Step | undefined {
    const path = this.#pick([...tree.files, ...this.#movable(tree)]);
    if (!path) return undefined;
    const name = basename(path);
    const renamed = name.startsWith(".") ? name.slice(1) : `.${name}`;
    if (renamed === "" || renamed === ".git" || renamed === "git") return undefined;
    const to = this.#in(dirname(path) === "." ? "" : dirname(path), renamed);
    return { changes: [{ op: "rename", from: path, to }], label: `mv ${path} ${to}`, focus: to };
  }

  #touch(tree: RawTree): Step | undefined {
    const path = this.#pick([...tree.files, ...tree.dirs]);
    if (!path) return undefined;
    return { changes: [{ op: "touch", path }], label: `touch ${path}`, focus: path };
  }

  #moveIn(tree: RawTree): Step {
    const stage = join(this.#o.outside, `stage-${this.#serial++}`);
    const to = this.#newPath(tree, 0.05).replace(/\.[a-z]+$/, "");
    return {
      changes: [
        { op: "write", path: join(stage, this.#name(0)), text: this.#text(true) },
        { op: "write", path: join(stage, "inner", this.#name(0)), text: this.#text() },
        { op: "rename", from: stage, to },
      ],
      label: `mv <outside>/stage ${to} (a tree made elsewhere)`,
      focus: to,
    };
  }

  #moveOut(tree: RawTree): Step | undefined {
    const from = this.#pick(this.#movable(tree));
    if (!from) return undefined;
    const to = join(this.#o.outside, `gone-${this.#serial++}`);
    return { changes: [{ op: "rename", from, to }], label: `mv ${from} <outside>`, focus: from };
  }

  #nestedRepo(tree: RawTree): Step | undefined {
    const dir = this.#pick(tree.dirs.filter((d) => !tree.repos.includes(d)));
    if (!dir) return undefined;
    return {
      changes: [{ op: "git", args: ["init", "-q", dir] }],
      label: `git init ${dir}`,
      focus: dir,
    };
  }

  #unrepo(tree: RawTree): Step | undefined {
    const repo = this.#pick(tree.repos.filter((r) => r !== ""));
    if (!repo) return undefined;
    return {
      changes: [{ op: "rm", path: `${repo}/.git` }],
      label: `rm -rf ${repo}/.git`,
      focus: repo,
    };
  }

  #commit(): Step {
    const name = JSON.stringify(basename(this.#o.root));
    const c = COMMIT.join(" ");
    return {
      changes: [
        {
          op: "sh",
          cmd: `cd ${name} && git add -A >/dev/null 2>&1; git ${c} -m step >/dev/null 2>&1; true`,
        },
      ],
      label: "git add -A && git commit",
      focus: undefined,
    };
  }

  #batch(tree: RawTree): Step {
    const steps: Step[] = [];
    const n = 2 + this.#int(4);
    for (let i = 0; i < n; i++) steps.push(this.next(tree, false));
    return {
      changes: steps.flatMap((s) => s.changes),
      label: `[${steps.map((s) => s.label).join("; ")}]`,
      focus: steps.find((s) => s.focus !== undefined)?.focus,
    };
  }
}

/** A fuzzy query from the name of what changed: two to four of its first letters. */
function queryFor(focus: string | undefined, rand: () => number): string {
  const name = (focus ? basename(focus) : "").replace(/^\.+/, "").replace(/\.[^.]*$/, "");
  const letters = name.replace(/[^a-zA-Z0-9]/g, "");
  if (letters.length < 2) return (WORDS[Math.floor(rand() * WORDS.length)] as string).slice(0, 3);
  return letters.slice(0, 2 + Math.floor(rand() * 3));
}

// ---------------------------------------------------------------------------------------------
// Trees to start from.

/** A repository's first files: hidden, ignored, nested rules, node_modules, a package. */
function startingTree(literal: string, dirs: number, filesPerDir: number): Record<string, string> {
  const files: Record<string, string> = {
    ".gitignore": "build/\n*.log\n/secret.txt\n",
    "README.md": `readme ${literal}\n`,
    "secret.txt": `ignored ${literal}\n`,
    ".env": `hidden ${literal}\n`,
    ".config/settings.json": `{"a": "${literal}"}\n`,
    "build/out.js": `built ${literal}\n`,
    "logs/run.log": `log ${literal}\n`,
    "logs/keep.txt": "kept\n",
    "node_modules/lib/index.js": `module ${literal}\n`,
    "src/.gitignore": "gen/\n!important.log\n",
    "src/gen/made.ts": `generated ${literal}\n`,
    "src/important.log": `important ${literal}\n`,
    "src/main.ts": `main ${literal}\n`,
    "pkg/.gitignore": "dist/\n",
    "pkg/index.ts": `pkg ${literal}\n`,
    "pkg/dist/bundle.js": `bundle ${literal}\n`,
    "pkg/lib/util.ts": "util\n",
    "pkg/lib/deep/more.md": `more ${literal}\n`,
  };
  for (let d = 0; d < dirs; d++) {
    const dir = `${["src", "docs", "pkg/lib", "tools"][d % 4]}/${WORDS[d % WORDS.length]}-${d}`;
    for (let f = 0; f < filesPerDir; f++) {
      files[`${dir}/${WORDS[(d + f) % WORDS.length]}-${f}${EXTENSIONS[f % EXTENSIONS.length]}`] =
        f % 2 === 0 ? `text ${literal} ${d}.${f}\n` : `text ${d}.${f}\n`;
    }
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// a. Randomized changes.

export interface ChurnOptions {
  readonly steps: number;
  readonly seed: number;
  /** Starting directories (beside the fixed ones) and files in each. */
  readonly dirs: number;
  readonly filesPerDir: number;
  readonly maxFiles: number;
  readonly maxDirs: number;
  /** Workspace queries every this many rounds (0: never). */
  readonly workspaceEvery: number;
  /** rg checks every this many rounds (0: never). */
  readonly rgEvery: number;
  /** Share of rounds asked concurrently. */
  readonly concurrentShare: number;
  /** Named in the report. @default "churn" */
  readonly name?: string;
  /** Told every change made and every stale answer, as they happen (to reproduce one). */
  readonly trace?: (line: string) => void;
  /** Kinds of change never drawn (see `ChangeGenerator.next`). */
  readonly leaveOut?: readonly string[];
  /** Query `pkg/` too, beside the root. @default true */
  readonly subRoot?: boolean;
  /** Before the first query (the budget scenarios lower the watch budget here). */
  readonly setup?: (root: string) => void | Promise<void>;
  /**
   * The Workspace runs its tools in a real daemon (`daemon: "auto"`), started by its first call
   * with this process's environment, in a runtime and cache directory of the scenario's own;
   * killed at the end. @default false
   */
  readonly daemon?: boolean;
}

export async function randomChurn(options: ChurnOptions): Promise<ScenarioReport> {
  return inRepo(async (repo) => {
    const base = dirname(repo.dir);
    const tally = new Tally(options.name ?? "churn", base);
    const literal = `NEEDLE${options.seed}x`;
    const outside = join(base, "outside");
    mkdirSync(outside);
    // The searching process and git share one home, so the global excludes file is one file.
    const globalExcludes = join(repo.home, ".config", "git", "ignore");
    mkdirSync(dirname(globalExcludes), { recursive: true });
    const saved = { HOME: process.env.HOME, XDG: process.env.XDG_CONFIG_HOME };
    process.env.HOME = repo.home;
    process.env.XDG_CONFIG_HOME = join(repo.home, ".config");
    writeTree(repo.dir, startingTree(literal, options.dirs, options.filesPerDir));
    await git(repo, ["add", "-A"]);
    await git(repo, [...COMMIT, "-m", "start"]);
    const churn = new Churn(repo.dir, isolatedGitEnv(repo.home));
    // Set before the Workspace's first call starts the daemon, which inherits this environment,
    // the home above included (so that git's global excludes are the same file for both).
    const daemonDirs = options.daemon ? useDaemonDirs() : undefined;
    const ws = new Workspace({ roots: [repo.dir], daemon: options.daemon ? "auto" : "off" });
    try {
      await options.setup?.(repo.dir);
      const rand = seededRandom(options.seed);
      const main: Target = {
        root: repo.dir,
        label: "the root",
        kinds: ["glob", "glob:any", "grep", "fuzzy", "ws.glob", "ws.grep", "ws.find"],
        ws,
        viaDaemon: options.daemon,
      };
      const sub: Target = { root: join(repo.dir, "pkg"), label: "pkg/", kinds: ["glob", "grep"] };
      const targets = options.subRoot === false ? [main] : [main, sub];
      const generator = new ChangeGenerator(
        {
          root: repo.dir,
          literal,
          protect: ["pkg"],
          outside,
          globalExcludes,
          maxFiles: options.maxFiles,
          maxDirs: options.maxDirs,
          leaveOut: options.leaveOut,
        },
        rand,
      );
      const wsKinds = new Set<Kind>(["ws.glob", "ws.grep", "ws.find"]);
      // The first answers walk; the rounds after them watch the tree come alive.
      await round(tally, targets, {
        literal,
        query: "alp",
        after: "the start",
        afterChange: false,
      });
      for (let i = 0; i < options.steps; i++) {
        const step = generator.next(rawTree(repo.dir));
        const done = await churn.run(step.changes);
        tally.done(done);
        const n = i + 1;
        options.trace?.(
          `change ${n}: ${step.label}${done.errors.length > 0 ? ` (failed: ${done.errors.join("; ")})` : ""}`,
        );
        await round(tally, targets, {
          literal,
          query: queryFor(step.focus, rand),
          after: `change ${n}: ${step.label}`,
          afterChange: true,
          concurrent: rand() < options.concurrentShare,
          rg: options.rgEvery > 0 && n % options.rgEvery === 0 && generator.rgComparable,
          rand,
          skip:
            options.workspaceEvery > 0 && n % options.workspaceEvery === 0 ? undefined : wsKinds,
        });
        for (const line of tally.roundStale) options.trace?.(`  STALE ${line}`);
      }
      const tree = rawTree(repo.dir);
      tally.notes.push(
        `tree at the end: ${tree.files.length} files, ${tree.dirs.length} directories, ${tree.links.length} links, ${tree.repos.length - 1} nested repositories (on disk, ignored and hidden included)`,
      );
      if (options.daemon) {
        const { answers, byDaemon } = tally.viaDaemon;
        tally.notes.push(
          `Workspace answers by the daemon: ${count(byDaemon)} of ${count(answers)} (daemon processes: ${tally.daemonPids.size})`,
        );
        if (byDaemon < answers) {
          tally.notes.push(
            `**Workspace answers not by the daemon: ${count(answers - byDaemon)}**, the first: ${tally.notByDaemon.join("; ")}`,
          );
        }
      }
      return tally.report();
    } finally {
      await churn.close();
      ws.close();
      for (const pid of tally.daemonPids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
      // Any other (a daemon started and never heard from) goes with the directories.
      daemonDirs?.release();
      process.env.HOME = saved.HOME;
      if (saved.XDG === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved.XDG;
      resetLiveTrees();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// b. git checkout.

export interface CheckoutOptions {
  /** Files that differ between the two branches (half rewritten, a quarter each way only). */
  readonly files: number;
  /** Checkouts each way. */
  readonly roundTrips: number;
}

export async function checkoutSwitch(options: CheckoutOptions): Promise<ScenarioReport> {
  return inRepo(async (repo) => {
    const tally = new Tally("checkout", dirname(repo.dir));
    const literal = "CHECKOUTNEEDLE";
    const perDir = 100;
    const n = options.files;
    const rewritten = Math.floor(n / 2);
    const onlyHere = Math.floor(n / 4);
    const one: Record<string, string> = {
      ".gitignore": "*.log\n",
      "README.md": `readme ${literal}\n`,
    };
    const path = (set: string, i: number) =>
      `${set}/d${Math.floor(i / perDir)}/f${i}${i % 10 === 0 ? ".log" : ".txt"}`;
    for (let i = 0; i < rewritten; i++)
      one[path("shared", i)] = `one ${i}${i % 2 ? ` ${literal}` : ""}\n`;
    for (let i = 0; i < onlyHere; i++) one[path("one", i)] = `only one ${i} ${literal}\n`;
    writeTree(repo.dir, one);
    await git(repo, ["add", "-A"]);
    await git(repo, [...COMMIT, "-m", "one"]);
    await git(repo, ["branch", "-M", "one"]);
    await git(repo, ["checkout", "-q", "-b", "two"]);
    await rm(join(repo.dir, "one"), { recursive: true });
    const two: Record<string, string> = { ".gitignore": "*.log\nshared/d1/\n" };
    for (let i = 0; i < rewritten; i++)
      two[path("shared", i)] = `two ${i}${i % 2 ? "" : ` ${literal}`}\n`;
    for (let i = 0; i < n - rewritten - onlyHere; i++)
      two[path("two", i)] = `only two ${i} ${literal}\n`;
    writeTree(repo.dir, two);
    await git(repo, ["add", "-A"]);
    await git(repo, [...COMMIT, "-m", "two"]);
    await git(repo, ["checkout", "-q", "one"]);
    tally.notes.push(
      `branches one and two differ in ${n.toLocaleString("en-US")} files (${rewritten.toLocaleString("en-US")} rewritten, ${onlyHere.toLocaleString("en-US")} only in one, ${(n - rewritten - onlyHere).toLocaleString("en-US")} only in two) and in .gitignore`,
    );
    const churn = new Churn(repo.dir, isolatedGitEnv(repo.home));
    const target: Target = {
      root: repo.dir,
      label: "the root",
      kinds: ["glob", "glob:any", "grep", "fuzzy"],
    };
    const checkoutMs: number[] = [];
    try {
      let liveBefore = 0;
      for (let trip = 0; trip < options.roundTrips; trip++) {
        for (const branch of ["two", "one"]) {
          if (await untilLive(tally, [target], literal, "f1")) liveBefore++;
          const done = await churn.must([{ op: "git", args: ["checkout", "-q", branch] }]);
          tally.done(done);
          checkoutMs.push(Number(done.end - done.start) / 1e6);
          await round(tally, [target], {
            literal,
            query: "f1",
            after: `git checkout ${branch} (trip ${trip + 1})`,
            afterChange: true,
            rg: true,
          });
        }
      }
      tally.notes.push(
        `the tree was live before ${liveBefore} of ${options.roundTrips * 2} checkouts; a checkout took ${spread(checkoutMs).median.toFixed(0)} ms (median)`,
      );
      return tally.report();
    } finally {
      await churn.close();
      resetLiveTrees();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// c. A burst while the searching process is blocked.

export interface BurstOptions {
  readonly files: number;
  readonly blockMs: number;
  /** Bursts: creations and deletions alternately, starting with a creation. */
  readonly bursts: number;
}

/** Files a watched directory of the burst receives. */
const BURST_PER_DIR = 1000;

/**
 * Files created (or deleted) by another process in directories already watched, while this
 * process's main thread is blocked: each file an event or two in the kernel's queue for the
 * watcher's thread (which is not blocked), many times the 16,384 the queue holds.
 */
export async function blockedBurst(options: BurstOptions): Promise<ScenarioReport> {
  return inTemp("burst", async (base) => {
    const root = join(base, "tree");
    const tally = new Tally("burst", base);
    const literal = "BURSTNEEDLE";
    const dirs = Math.ceil(options.files / BURST_PER_DIR);
    const files: Record<string, string> = {};
    for (let d = 0; d < dirs; d++) files[`bulk/w${d}/keep.txt`] = d === 0 ? `${literal}\n` : "x\n";
    for (let d = 0; d < 20; d++) {
      for (let f = 0; f < 5; f++) files[`base/d${d}/f${f}.txt`] = f === 0 ? `${literal}\n` : "x\n";
    }
    writeTree(root, files);
    const churn = new Churn(root, process.env);
    const target: Target = {
      root,
      label: "the root",
      kinds: ["glob", "glob:any", "grep", "fuzzy"],
    };
    try {
      for (let b = 0; b < options.bursts; b++) {
        const live = await untilLive(tally, [target], literal, "b1");
        const create = b % 2 === 0;
        const prefix = `r${create ? b : b - 1}_`;
        const changes: Change[] = create
          ? [
              {
                op: "many",
                dir: "bulk",
                count: options.files,
                perDir: BURST_PER_DIR,
                dirPrefix: "w",
                prefix,
                text: "bulk\n",
                literal,
                every: 7,
              },
            ]
          : [{ op: "sh", cmd: `cd tree && find bulk -name '${prefix}*' -delete` }];
        let blockStart = 0n;
        let blockEnd = 0n;
        const done = await churn.must(changes, () => {
          blockStart = process.hrtime.bigint();
          blockThread(options.blockMs);
          blockEnd = process.hrtime.bigint();
        });
        tally.done(done);
        if (!create) tally.changes += options.files - 1;
        const made = Number(done.end - done.start) / 1e6;
        const from = done.start > blockStart ? done.start : blockStart;
        const to = done.end < blockEnd ? done.end : blockEnd;
        const overlap = Math.max(0, Number(to - from) / 1e6);
        const gots = await round(tally, [target], {
          literal,
          query: `${prefix}1`,
          after: `${create ? "creating" : "deleting"} ${options.files.toLocaleString("en-US")} files while blocked`,
          afterChange: true,
        });
        tally.notes.push(
          `burst ${b + 1} (${create ? "create" : "delete"} ${options.files.toLocaleString("en-US")} files in ${dirs} watched directories${live ? "" : "; the tree was not live before it"}): the other process took ${made.toFixed(0)} ms, ${overlap.toFixed(0)} ms of it while this thread was blocked (${options.blockMs} ms); answers after it: ${gots.map((g) => `${g.kind} ${g.freshness} ${g.ms.toFixed(0)} ms`).join(", ")}`,
        );
      }
      return tally.report();
    } finally {
      await churn.close();
      resetLiveTrees();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// d. A watched directory deleted and made again.

export interface RecreateOptions {
  readonly repetitions: number;
  /** Every this many repetitions, the root itself is deleted and made again (0: never). */
  readonly rootEvery: number;
}

export async function deleteRecreate(options: RecreateOptions): Promise<ScenarioReport> {
  return inTemp("recreate", async (base) => {
    const root = join(base, "tree");
    const tally = new Tally("recreate", base);
    const literal = "RECREATENEEDLE";
    writeTree(root, {
      "d/a.txt": `a ${literal}\n`,
      "d/sub/b.txt": "b\n",
      "d/sub/deeper/c.txt": `c ${literal}\n`,
      "e/keep.txt": "keep\n",
      ".ignore": "*.tmp\n",
      "top.txt": `${literal}\n`,
    });
    const churn = new Churn(root, process.env);
    const target: Target = {
      root,
      label: "the root",
      kinds: ["glob", "glob:any", "grep", "fuzzy"],
    };
    const forms: ((k: number) => [string, string])[] = [
      () => ["rm -rf d && mkdir d && touch d/new", "rm -rf d && mkdir d && touch d/new"],
      (k) => [
        `rm -rf d && mkdir -p d/x/y && touch d/x/y/new${k} && echo ${literal} > d/lit${k}.txt`,
        "rm -rf d && mkdir -p d/x/y && touch d/x/y/new<k> && echo <literal> > d/lit<k>.txt",
      ],
      (k) => [
        `rm -rf d-old* && mv d d-old${k} && mkdir d && touch d/new${k}`,
        "mv d d-old<k> && mkdir d && touch d/new<k>",
      ],
      () => [
        `rm -rf d && mkdir -p d/sub/deeper && touch d/a.txt d/sub/b.txt && echo ${literal} > d/sub/deeper/c.txt`,
        "rm -rf d && mkdir -p d/sub/deeper && touch d/a.txt d/sub/b.txt d/sub/deeper/c.txt (the same names again)",
      ],
      (k) => [
        `mkdir -p d && rm -rf d/sub && mkdir d/sub && touch d/sub/c${k}.tmp d/sub/c${k}.txt`,
        "rm -rf d/sub && mkdir d/sub && touch d/sub/c<k>.tmp d/sub/c<k>.txt",
      ],
      (k) => [
        `rm -rf d e${k - 1} && mkdir e${k} && touch e${k}/f && ln -s e${k} d`,
        "rm -rf d && mkdir e<k> && touch e<k>/f && ln -s e<k> d",
      ],
      (k) => [
        `rm -rf d && mkdir d && echo ${literal} > d/new${k}.txt && rm -rf d && mkdir d`,
        "rm -rf d && mkdir d && echo ... > d/new<k>.txt && rm -rf d && mkdir d",
      ],
    ];
    const rootForm = (k: number): [string, string] => [
      `rm -rf tree && mkdir -p tree/d && touch tree/new${k} && echo ${literal} > tree/d/x${k}.txt`,
      "rm -rf <root> && mkdir -p <root>/d && touch <root>/new<k> && echo ... > <root>/d/x<k>.txt",
    ];
    const kinds: Record<string, number> = {};
    try {
      for (let k = 0; k < options.repetitions; k++) {
        if (k % 2 === 0) await untilLive(tally, [target], literal, "new");
        const isRoot = options.rootEvery > 0 && k % options.rootEvery === options.rootEvery - 1;
        const [cmd, shown] = isRoot
          ? rootForm(k)
          : (forms[k % forms.length] as (k: number) => [string, string])(k);
        bump(kinds, shown);
        const inTree = isRoot ? cmd : `cd tree && ${cmd}`;
        tally.done(await churn.must([{ op: "sh", cmd: inTree }]));
        await round(tally, [target], {
          literal,
          query: "new",
          after: `repetition ${k + 1}: ${shown}${k % 2 === 0 ? " (live before)" : ""}`,
          afterChange: true,
          rg: k % 5 === 0,
        });
      }
      tally.notes.push(
        `forms: ${Object.entries(kinds)
          .map(([form, count]) => `\`${form}\` ×${count}`)
          .join("; ")}`,
      );
      return tally.report();
    } finally {
      await churn.close();
      resetLiveTrees();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// A nested repository made and unmade (what the churn found stale; kept as its own scenario).

export interface NestedOptions {
  readonly repetitions: number;
}

/**
 * In a repository, another process runs `git init sub`, then `rm -rf sub/.git`, then edits the
 * top `.gitignore`, then adds a file to `sub/` and rewrites one there, each followed by a round.
 */
export async function nestedRepository(options: NestedOptions): Promise<ScenarioReport> {
  return inRepo(async (repo) => {
    const tally = new Tally("nested repository", dirname(repo.dir));
    const literal = "NESTEDNEEDLE";
    writeTree(repo.dir, {
      ".gitignore": "*.log\n",
      "sub/a.txt": `a ${literal}\n`,
      "sub/deeper/b.txt": "b\n",
      "top.txt": "top\n",
    });
    await git(repo, ["add", "-A"]);
    await git(repo, [...COMMIT, "-m", "start"]);
    const churn = new Churn(repo.dir, isolatedGitEnv(repo.home));
    const target: Target = {
      root: repo.dir,
      label: "the root",
      kinds: ["glob", "glob:any", "grep", "fuzzy"],
    };
    const steps: ((k: number) => [Change[], string])[] = [
      () => [[{ op: "git", args: ["init", "-q", "sub"] }], "git init sub"],
      () => [[{ op: "rm", path: "sub/.git" }], "rm -rf sub/.git"],
      (k) => [
        [{ op: "write", path: ".gitignore", text: `*.log\nnothing-${k}\n` }],
        "edit .gitignore",
      ],
      (k) => [
        [{ op: "write", path: `sub/new${k}.txt`, text: `new ${literal}\n` }],
        "create sub/new<k>.txt",
      ],
      (k) => [
        [{ op: "write", path: `sub/deeper/more${k}.txt`, text: "more\n" }],
        "create sub/deeper/more<k>.txt",
      ],
    ];
    try {
      await untilLive(tally, [target], literal, "new");
      for (let k = 0; k < options.repetitions; k++) {
        for (const make of steps) {
          const [changes, label] = make(k);
          tally.done(await churn.must(changes));
          await round(tally, [target], {
            literal,
            query: "new",
            after: `${label} (repetition ${k + 1})`,
            afterChange: true,
          });
        }
      }
      return tally.report();
    } finally {
      await churn.close();
      resetLiveTrees();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// e. Watch budgets and limits.

export interface BudgetOptions {
  /** Directories of the tree (beside the fixed ones). */
  readonly dirs: number;
  /** Random changes with the budget below the tree's directory count. */
  readonly steps: number;
  /** Directories made at once, to grow a tree within the budget past it. */
  readonly grow: number;
  readonly seed: number;
}

export async function watchBudget(options: BudgetOptions): Promise<ScenarioReport[]> {
  const reports: ScenarioReport[] = [];
  // Below the budget from the start.
  let dirCount = 0;
  const below = await randomChurn({
    name: "budget: below from the start",
    steps: options.steps,
    seed: options.seed,
    dirs: options.dirs,
    filesPerDir: 2,
    maxFiles: options.dirs * 4,
    maxDirs: options.dirs * 2,
    workspaceEvery: 2,
    rgEvery: 0,
    concurrentShare: 0.2,
    subRoot: false,
    setup: (root) => {
      dirCount = rawTree(root).dirs.length;
      configureLiveTrees({ maxWatches: Math.floor(dirCount / 2) });
    },
  });
  (below.notes as string[]).push(
    `maxWatches ${Math.floor(dirCount / 2)}; the tree had ${dirCount} directories on disk at the start`,
  );
  reports.push(below);
  reports.push(await growPastBudget(options));
  return reports;
}

/** A tree within the budget, live, then grown past it by another process. */
async function growPastBudget(options: BudgetOptions): Promise<ScenarioReport> {
  return inTemp("budget", async (base) => {
    const root = join(base, "tree");
    const tally = new Tally("budget: grown past it", base);
    const literal = "BUDGETNEEDLE";
    const files: Record<string, string> = {};
    for (let d = 0; d < options.dirs; d++)
      files[`d${d}/f.txt`] = d % 3 === 0 ? `${literal}\n` : "x\n";
    writeTree(root, files);
    // Room for both trees (glob's and grep's: the budget counts each tree's watches), until the
    // growth takes each past it at once.
    const budget = 2 * (options.dirs + 1) + 10;
    if (options.dirs + 1 + options.grow <= budget) throw new Error("grow too small to cross");
    configureLiveTrees({ maxWatches: budget });
    const churn = new Churn(root, process.env);
    const target: Target = {
      root,
      label: "the root",
      kinds: ["glob", "glob:any", "grep", "fuzzy"],
    };
    try {
      const live = await untilLive(tally, [target], literal, "f");
      const gots = [];
      for (let g = 0; g < 3; g++) {
        tally.done(
          await churn.must([
            {
              op: "many",
              dir: ".",
              count: options.grow,
              perDir: 1,
              dirPrefix: `grown${g}-`,
              prefix: "g",
              text: "g\n",
              literal,
              every: 2,
            },
          ]),
        );
        gots.push(
          ...(await round(tally, [target], {
            literal,
            query: "g1",
            after: `${options.grow} directories made (${g + 1})`,
            afterChange: true,
            rg: true,
          })),
        );
      }
      tally.notes.push(
        `maxWatches ${budget}, ${options.dirs + 1} directories at the start (live before: ${live ? "yes" : "no"}), then ${options.grow} more three times; answers after the first growth: ${gots
          .slice(0, 4)
          .map((g) => `${g.kind} ${g.freshness}`)
          .join(", ")}`,
      );
      return tally.report();
    } finally {
      await churn.close();
      resetLiveTrees();
    }
  });
}

const WATCH_LIMIT = "/proc/sys/fs/inotify/max_user_watches";

/** inotify watches held by this user's processes now (their fdinfo). */
export function watchesInUse(): number {
  const uid = process.getuid?.();
  let count = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const owner = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      if (uid !== undefined && owner !== String(uid)) continue;
      for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
        let info: string;
        try {
          info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
        } catch {
          continue;
        }
        if (!info.includes("inotify wd:")) continue;
        count += info.split("\n").filter((line) => line.startsWith("inotify wd:")).length;
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return count;
}

/** Whether this process may lower the kernel's watch limit (root, a writable sysctl). */
export function canLowerWatchLimit(): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  try {
    writeFileSync(WATCH_LIMIT, readFileSync(WATCH_LIMIT, "utf8"));
    return true;
  } catch {
    return false;
  }
}

/**
 * `fs.inotify.max_user_watches` lowered to the watches in use plus `headroom` while a tree with
 * more directories than that is churned and searched; the limit is restored in any case.
 */
export async function realWatchLimit(
  options: BudgetOptions & { headroom: number },
): Promise<ScenarioReport> {
  const original = readFileSync(WATCH_LIMIT, "utf8").trim();
  const restore = () => writeFileSync(WATCH_LIMIT, `${original}\n`);
  const onSignal = (signal: NodeJS.Signals) => {
    restore();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let lowered = 0;
  let inUse = 0;
  let dirCount = 0;
  try {
    resetLiveTrees();
    // The budget out of the way: the kernel's limit is what is tested.
    configureLiveTrees({ maxWatches: 10_000_000 });
    await sleep(200);
    const report = await randomChurn({
      name: "budget: the kernel's limit",
      steps: options.steps,
      seed: options.seed,
      dirs: options.dirs,
      filesPerDir: 1,
      maxFiles: options.dirs * 3,
      maxDirs: options.dirs * 2,
      workspaceEvery: 2,
      rgEvery: 0,
      concurrentShare: 0.2,
      setup: (root) => {
        dirCount = rawTree(root).dirs.length;
        inUse = watchesInUse();
        lowered = inUse + options.headroom;
        writeFileSync(WATCH_LIMIT, `${lowered}\n`);
      },
    });
    restore();
    (report.notes as string[]).push(
      `max_user_watches ${original} lowered to ${lowered} (${inUse} in use + ${options.headroom}) for the run, restored after; the tree had ${dirCount} directories`,
    );
    return report;
  } finally {
    restore();
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    resetLiveTrees();
  }
}

// ---------------------------------------------------------------------------------------------
// The report.

const count = (n: number) => n.toLocaleString("en-US");
const modes = (map: Readonly<Record<string, number>>) =>
  Object.entries(map)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([mode, n]) => `${mode} ${count(n)}`)
    .join(", ") || "none";

export function table(reports: readonly ScenarioReport[]): string {
  const rows: [string, (r: ScenarioReport) => string][] = [
    ["commands to the other process (each followed by queries)", (r) => count(r.commands)],
    ["changes made (files and directories for bursts)", (r) => count(r.changes)],
    ["changes that failed (a batch naming what it removed)", (r) => count(r.failedChanges)],
    ["rounds of queries", (r) => count(r.rounds)],
    ["answers compared with a fresh walk", (r) => count(r.answers - r.notCompared)],
    ["**stale answers**", (r) => `**${count(r.stale)}**`],
    ["answers by mode", (r) => modes(r.byFreshness)],
    ["first answer after each change, by mode", (r) => modes(r.firstAfterChange)],
    [
      "latency, ms (median / p99), asked one at a time",
      (r) => `${r.latency.median.toFixed(2)} / ${r.latency.p99.toFixed(2)}`,
    ],
    [
      "... live answers",
      (r) => {
        const s = r.latencyByFreshness.live;
        return s ? `${s.median.toFixed(2)} / ${s.p99.toFixed(2)}` : "-";
      },
    ],
    [
      "... walked answers",
      (r) => {
        const s = r.latencyByFreshness.walked;
        return s ? `${s.median.toFixed(2)} / ${s.p99.toFixed(2)}` : "-";
      },
    ],
    [
      "grep's oracle checked against rg (disagreements)",
      (r) => (r.rgChecked === 0 ? "-" : `${count(r.rgChecked)} (${count(r.rgDisagreements)})`),
    ],
    ["elapsed", (r) => `${(r.elapsedMs / 1000).toFixed(1)} s`],
  ];
  const head = `| | ${reports.map((r) => r.name).join(" | ")} |`;
  const rule = `|---|${reports.map(() => "---:").join("|")}|`;
  const body = rows.map(([label, cell]) => `| ${label} | ${reports.map(cell).join(" | ")} |`);
  return [head, rule, ...body].join("\n");
}

export function details(report: ScenarioReport): string[] {
  const out: string[] = [];
  out.push(`- answers by kind and mode: ${modes(report.byKind)}`);
  for (const note of report.notes) out.push(`- ${note}`);
  for (const [reason, n] of Object.entries(report.unwatched))
    out.push(`- \`unwatched\` (${count(n)}×): ${reason}`);
  if (report.stale > 0) {
    out.push(
      `- **stale answers** (the first ${report.staleExamples.length} of ${count(report.stale)}):`,
    );
    for (const line of report.staleExamples) out.push(`  - ${line}`);
  }
  if (report.rgExamples.length > 0) {
    out.push(
      `- rg disagreed with the walk's grep oracle (${count(report.rgDisagreements)}), the first:`,
    );
    for (const line of report.rgExamples) out.push(`  - ${line}`);
  }
  return out;
}

export async function run(): Promise<string> {
  const reports: ScenarioReport[] = [];
  reports.push(
    await randomChurn({
      steps: 1200,
      seed: 14,
      dirs: 40,
      filesPerDir: 5,
      maxFiles: 1500,
      maxDirs: 400,
      workspaceEvery: 3,
      rgEvery: 4,
      concurrentShare: 0.25,
    }),
  );
  reports.push(
    await randomChurn({
      name: "churn, the Workspace through the daemon",
      steps: 600,
      seed: 14,
      dirs: 40,
      filesPerDir: 5,
      maxFiles: 1500,
      maxDirs: 400,
      workspaceEvery: 1,
      rgEvery: 4,
      concurrentShare: 0.25,
      daemon: true,
    }),
  );
  reports.push(await checkoutSwitch({ files: 20_000, roundTrips: 3 }));
  reports.push(await blockedBurst({ files: 50_000, blockMs: 2000, bursts: 4 }));
  reports.push(await deleteRecreate({ repetitions: 70, rootEvery: 10 }));
  reports.push(await nestedRepository({ repetitions: 20 }));
  reports.push(...(await watchBudget({ dirs: 300, steps: 150, grow: 320, seed: 15 })));
  let limitNote = "";
  if (canLowerWatchLimit()) {
    reports.push(
      await realWatchLimit({ dirs: 1200, steps: 150, grow: 0, seed: 16, headroom: 300 }),
    );
  } else {
    limitNote =
      "The kernel's own limit was not lowered: that needs root and a writable /proc/sys/fs/inotify/max_user_watches.";
  }
  const parts = [
    "Another process (test/fixtures/reliability/churn.mjs) makes each change; once it says the change is done, glob (`**/*`, files and any type), grep (a literal, files_with_matches) and fuzzyFind are asked with `cache: true, watch: true`, and through a Workspace (every few rounds), at the root and, in the churn, at `pkg/` (whose rules come partly from above it); rounds are in a random order, some concurrent. In the second churn the Workspace runs its tools in a real daemon (`daemon: 'auto'`, started by its first call), asked every round. Each answer is then compared with a fresh walk made after every answer was in (forceRescan with the same policy; grep: every candidate read; fuzzyFind: the same query with no cache): any difference is a stale answer.",
    "",
    table(reports),
    "",
  ];
  for (const report of reports) parts.push(`**${report.name}**`, "", ...details(report), "");
  if (limitNote) parts.push(limitNote);
  return parts.join("\n");
}

/**
 * The daemon killed under its clients: SIGKILL at random moments during 1,000 mixed calls must
 * leave every call answered (by the client in its own process, with a warning, or by a daemon
 * started again), no edit lost, none made twice, and no answer stale; and a content index
 * snapshot cut mid-write must never be loaded as a whole one.
 *
 * 1. Calls. A tree of a few hundred files, some holding a token; another process
 *    (test/fixtures/reliability/churn.mjs) adds and removes the token, creates and deletes files,
 *    one change before each CLI call (`freshfs grep -l/-c TOKEN`, `glob`, `files`, through the
 *    daemon: FRESHFS_DAEMON=1), whose answer is compared with rg's (same flags, run right after)
 *    or with a readdir walk. Beside it a `Workspace({ daemon: "auto" })` reads and edits files of
 *    its own, each edit adding a numbered line; when its daemon dies its calls run in this
 *    process (FreshfsDaemonWarning), and after a few cycles a new Workspace (an agent's next
 *    session) goes back to the daemon. Every 50-100 calls the daemon is killed: between calls,
 *    during a CLI call, or just after a Workspace edit was sent. At the end every edit reported
 *    done must be in its file, once; an edit refused after a kill (the session's reads died with
 *    the daemon) is looked for in the file, and made again only if the daemon had not made it.
 * 2. A snapshot cut mid-write. A daemon writes its content index snapshot of a tree large
 *    enough for the write to take a while (`<name>.snapshot.<pid>.tmp`, then renamed), and is
 *    killed once the temp file holds a random share of a whole one: on its first write (the real
 *    file must then be absent) and on a later one (the real file must be the previous one, byte
 *    for byte, and load); the temp file must be swept once a new snapshot is written; and a real
 *    snapshot cut short by hand must be discarded, the answers staying right.
 *
 * The clients run `dist/` (the CLI as `node dist/cli/main.js` and, every other call, as
 * `bin/freshfs`, the native relay where it runs; the Workspace imported from `dist/`): a
 * daemon of another build is asked to step aside, so a Workspace of the sources and a CLI of the
 * build would replace each other's daemon on every call. Build first (`npm run build`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  type FSWatcher,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  watch,
  writeFileSync,
} from "node:fs";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { FreshfsError, Workspace } from "../dist/index.js";
import type { DaemonStatus } from "../src/daemon/methods.js";
import { seededRandom } from "../test/fixtures/reliability/random.mjs";
import {
  type DaemonDirs,
  daemonsIn,
  killDaemonsIn,
  servesIn,
  useDaemonDirs,
} from "../test/helpers/daemon-env.js";
import { type Change, Churn } from "./freshness.js";

const BIN = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
/** The command a shell runs: the native relay (Linux x64), which turns to BIN when it must. */
const COMMAND = fileURLToPath(new URL("../bin/freshfs", import.meta.url));

/** The token, and a word of the same length: a file loses or gains it at the same size. */
const TOKEN = "KILLTOKEN";
const NOT_TOKEN = "KILLTAKEN";
/** The CLI's warning when it answers in its own process (src/cli/backend.ts). */
const CLI_FALLBACK = "searching in this process, without the daemon";

// ---------------------------------------------------------------------------------------------
// Processes.

interface Ran {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Killed at the bound: the call hung. */
  readonly timedOut: boolean;
}

/** Runs `command`, killed at `timeoutMs`; stdin is not a pipe (rg then searches the directory). */
function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
  onSpawn?: (child: ChildProcess) => void,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({
        status,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        timedOut,
      });
    });
    onSpawn?.(child);
  });
}

/** The environment of a CLI call: this process's (so the same daemon), the daemon asked for. */
function cliEnv(): NodeJS.ProcessEnv {
  return { ...process.env, FRESHFS_DAEMON: "1" };
}

function freshfs(args: readonly string[], cwd: string, timeoutMs = 60_000): Promise<Ran> {
  return runProcess(process.execPath, [BIN, ...args], { cwd, env: cliEnv(), timeoutMs });
}

const lines = (text: string) =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .sort();

/** Files under `root` as the listing has them: no hidden name (there is no ignore file). */
function walk(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...walk(root, path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Every name under `root`, hidden ones too: for temp files left in the tree. */
function allNames(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" });
}

function killPid(pid: number): boolean {
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/** Waits until no daemon serves a socket in `runtime` (a killed one is gone within ms). */
async function noDaemonIn(runtime: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (daemonsIn(runtime).length > 0) {
    if (Date.now() > deadline) throw new Error(`a daemon in ${runtime} outlived SIGKILL`);
    await sleep(10);
  }
}

/** What the daemon's log says: daemons that listened, and starts that found one listening. */
function daemonLog(runtime: string): { listened: number; steppedAside: number } {
  let listened = 0;
  let steppedAside = 0;
  for (const name of readdirSync(runtime)) {
    if (!name.endsWith(".log")) continue;
    const text = readFileSync(join(runtime, name), "utf8");
    listened += text.match(/: listening on /g)?.length ?? 0;
    steppedAside += text.match(/another daemon serves/g)?.length ?? 0;
  }
  return { listened, steppedAside };
}

// ---------------------------------------------------------------------------------------------
// 1. Kills during mixed calls.

export interface KillOptions {
  /** Calls in all, CLI and Workspace. */
  readonly calls: number;
  /** Directories of the tree, and files in each. */
  readonly dirs: number;
  readonly filesPerDir: number;
  /** Files the Workspace reads and edits. */
  readonly owned: number;
  /** Bytes of one large file, which only `SLOW` has to read. */
  readonly bigBytes: number;
  /** A kill every this many calls, drawn uniformly between the two. */
  readonly killEvery: readonly [number, number];
  /** Cycles a Workspace runs in this process after its daemon died, before a new one is made. */
  readonly cyclesAlone: number;
  /** Any one call longer than this is a hang. */
  readonly callTimeoutMs: number;
  readonly seed: number;
}

/** When the kill lands: between calls, during a CLI call, just after an edit was sent. */
export type KillMoment = "between calls" | "during a CLI call" | "after an edit was sent";

export interface KillReport {
  readonly calls: number;
  readonly cliCalls: number;
  readonly cliByDaemon: number;
  readonly cliInProcess: number;
  readonly workspaceCalls: number;
  readonly workspaceByDaemon: number;
  readonly workspaceInProcess: number;
  readonly workspaces: number;
  readonly kills: number;
  readonly killsBy: Readonly<Record<KillMoment, number>>;
  /** Kills put off to the next call because no daemon ran at that moment. */
  readonly killsPutOff: number;
  /** Daemons that listened (the first and every restart), and starts that found one running. */
  readonly daemonsStarted: number;
  readonly startsSteppedAside: number;
  readonly workspaceWarnings: number;
  readonly changes: number;
  readonly cliCompared: number;
  readonly stale: number;
  readonly edits: {
    readonly reported: number;
    /** Refused after a kill: the Workspace's reads died with its daemon's session. */
    readonly refused: number;
    /** Of those, found in the file (the daemon made it, then died before answering). */
    readonly madeUnanswered: number;
    /** Of those, made again after a fresh read. */
    readonly redone: number;
    readonly lost: number;
    readonly duplicated: number;
  };
  readonly ownedLines: number;
  readonly timedOut: number;
  readonly failures: number;
  readonly tempsInTree: number;
  readonly snapshotTempsLeft: number;
  readonly problems: readonly string[];
  readonly elapsedMs: number;
}

/** One CLI form, and how to compute its answer afresh. */
interface CliForm {
  readonly args: readonly string[];
  readonly oracle: (root: string) => Promise<{ status: number; lines: string[] }>;
}

function rgOracle(args: readonly string[]): CliForm["oracle"] {
  return async (root) => {
    const rg = await runProcess("rg", ["--no-config", ...args], { cwd: root, timeoutMs: 60_000 });
    if (rg.status !== 0 && rg.status !== 1) throw new Error(`rg ${args.join(" ")}: ${rg.stderr}`);
    return { status: rg.status, lines: lines(rg.stdout) };
  };
}

function walkOracle(filter: (path: string) => boolean): CliForm["oracle"] {
  return async (root) => {
    const found = walk(root).filter(filter).sort();
    return { status: found.length > 0 ? 0 : 1, lines: found };
  };
}

/**
 * A search with no literal for the content index to narrow by: it reads every file, a large one
 * too, long enough in the daemon (~50 ms) for a kill to land while it runs.
 */
const SLOW: CliForm = { args: ["grep", "-c", "T.K.N"], oracle: rgOracle(["-c", "T.K.N"]) };

const FORMS: readonly CliForm[] = [
  SLOW,
  { args: ["grep", "-l", TOKEN], oracle: rgOracle(["-l", TOKEN]) },
  { args: ["grep", "-c", TOKEN], oracle: rgOracle(["-c", TOKEN]) },
  { args: ["grep", "-l", TOKEN, "d01", "d02"], oracle: rgOracle(["-l", TOKEN, "d01", "d02"]) },
  { args: ["glob", "**/*.txt"], oracle: walkOracle((path) => path.endsWith(".txt")) },
  { args: ["files"], oracle: walkOracle(() => true) },
];

const dirName = (d: number) => `d${String(d).padStart(2, "0")}`;

function fileText(path: string, token: boolean): string {
  return `${path}\nthe writer's file\n${token ? TOKEN : NOT_TOKEN} here\nend\n`;
}

/** The Workspace's file: a head, its edits (`edit <n>`, one a line), `END`. */
const ownedText = (i: number) => `owned ${i}\nEND\n`;

/**
 * Runs `body` in a temp directory of its own, with a home of its own (no git configuration of
 * the user's: the daemon, the CLI's own walk and rg see one set of rules) and daemon directories
 * of its own; puts everything back after.
 */
async function isolated<T>(
  prefix: string,
  body: (base: string, dirs: DaemonDirs) => Promise<T>,
): Promise<T> {
  const base = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const home = join(base, "home");
  mkdirSync(home);
  const saved = { HOME: process.env.HOME, XDG: process.env.XDG_CONFIG_HOME };
  process.env.HOME = home;
  process.env.XDG_CONFIG_HOME = join(home, ".config");
  const dirs = useDaemonDirs();
  try {
    return await body(base, dirs);
  } finally {
    dirs.release();
    process.env.HOME = saved.HOME;
    if (saved.XDG === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved.XDG;
    rmSync(base, { recursive: true, force: true });
  }
}

export function killDuringCalls(options: KillOptions): Promise<KillReport> {
  const rand = seededRandom(options.seed);
  return isolated("freshfs-kill-", (base, dirs) => killIn(join(base, "tree"), dirs, options, rand));
}

async function killIn(
  root: string,
  dirs: DaemonDirs,
  options: KillOptions,
  rand: () => number,
): Promise<KillReport> {
  const started = performance.now();
  const between = (a: number, b: number) => a + Math.floor(rand() * (b - a + 1));
  const problems: string[] = [];
  const problem = (line: string) => {
    if (problems.length < 40) problems.push(line);
  };

  // The writer's files, with whether each holds the token.
  const files = new Map<string, boolean>();
  for (let d = 0; d < options.dirs; d++) {
    for (let f = 0; f < options.filesPerDir; f++) {
      const path = `${dirName(d)}/f${String(f).padStart(3, "0")}.txt`;
      const token = rand() < 0.3;
      files.set(path, token);
      mkdirSync(join(root, dirName(d)), { recursive: true });
      writeFileSync(join(root, path), fileText(path, token));
    }
  }
  const line = "a line of the large file, TAKEN, TIKEN, not the token\n";
  mkdirSync(join(root, "big"));
  writeFileSync(
    join(root, "big", "lines.log"),
    line.repeat(Math.ceil(options.bigBytes / line.length)),
  );
  const owned: string[] = [];
  mkdirSync(join(root, "ws"));
  for (let i = 0; i < options.owned; i++) {
    owned.push(`ws/own${i}.md`);
    writeFileSync(join(root, "ws", `own${i}.md`), ownedText(i));
  }

  let calls = 0;
  let cliCalls = 0;
  let cliByDaemon = 0;
  let cliInProcess = 0;
  let workspaceCalls = 0;
  let workspaceByDaemon = 0;
  let workspaceInProcess = 0;
  let cliCompared = 0;
  let stale = 0;
  let timedOut = 0;
  let failures = 0;
  let changes = 0;
  let workspaceWarnings = 0;
  const killsBy: Record<KillMoment, number> = {
    "between calls": 0,
    "during a CLI call": 0,
    "after an edit was sent": 0,
  };
  let killsPutOff = 0;
  const edits = { reported: 0, refused: 0, madeUnanswered: 0, redone: 0 };
  /** Per owned file, the edits reported done. */
  const done = new Map<string, number[]>(owned.map((path) => [path, []]));

  const onWarning = (warning: Error) => {
    if (warning.name === "FreshfsDaemonWarning") workspaceWarnings++;
  };
  process.on("warning", onWarning);

  // The kill: armed for a moment every `killEvery` calls, fired when that moment comes.
  let nextKill = between(options.killEvery[0], options.killEvery[1]);
  let armed: KillMoment | undefined;
  const arm = () => {
    if (armed || calls < nextKill) return;
    const r = rand();
    armed = r < 0.2 ? "between calls" : r < 0.6 ? "during a CLI call" : "after an edit was sent";
  };
  const fire = (moment: KillMoment) => {
    if (armed !== moment) return;
    const killed = killDaemonsIn(dirs.runtime);
    if (killed.length === 0) {
      // None runs (killed, and no call has started one since): the next call gets it.
      killsPutOff++;
      return;
    }
    killsBy[moment]++;
    armed = undefined;
    nextKill = calls + between(options.killEvery[0], options.killEvery[1]);
  };

  /** A bound on a Workspace call: a hang is reported, not waited for. */
  const bounded = <T>(what: string, call: Promise<T>): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        timedOut++;
        reject(new Error(`${what}: no answer within ${options.callTimeoutMs} ms`));
      }, options.callTimeoutMs);
      call.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });

  const churn = new Churn(root, process.env);
  let ws = new Workspace({ roots: [root], daemon: "auto" });
  let workspaces = 1;
  let cyclesAlone = 0;
  let cycle = 0;
  let editNumber = 0;

  const answered = (by: { daemon: boolean }) => {
    workspaceCalls++;
    if (by.daemon) workspaceByDaemon++;
    else workspaceInProcess++;
  };

  const wsRead = async (path: string) => {
    calls++;
    answered((await bounded(`read ${path}`, ws.read({ file_path: path }))).answeredBy);
  };

  const wsEdit = async (path: string, n: number, moment: boolean) => {
    calls++;
    const edit = ws.edit({ file_path: path, old_string: "END\n", new_string: `edit ${n}\nEND\n` });
    // The request is on its way (the session was open): the kill lands in the daemon's edit.
    if (moment) setTimeout(() => fire("after an edit was sent"), rand() * 8);
    answered((await bounded(`edit ${path}`, edit)).answeredBy);
  };

  /** A read, then an edit; an edit refused after a kill is looked for, then made again. */
  const workspaceCycle = async () => {
    const path = owned[cycle++ % owned.length] as string;
    const n = ++editNumber;
    try {
      await wsRead(path);
      try {
        await wsEdit(path, n, armed === "after an edit was sent" && ws.inDaemon);
        edits.reported++;
        done.get(path)?.push(n);
      } catch (error) {
        const code = error instanceof FreshfsError ? error.code : undefined;
        if (code !== "NOT_READ" && code !== "STALE") throw error;
        // Refused by this process's guard, which has recorded no read: an answer from here.
        answered({ daemon: false });
        edits.refused++;
        if (readFileSync(join(root, path), "utf8").includes(`\nedit ${n}\n`)) {
          edits.madeUnanswered++;
        } else {
          await wsRead(path);
          await wsEdit(path, n, false);
          edits.redone++;
          edits.reported++;
          done.get(path)?.push(n);
        }
      }
    } catch (error) {
      failures++;
      problem(`Workspace cycle ${cycle} (${path}, edit ${n}): ${(error as Error).message}`);
    }
    if (!ws.inDaemon && ++cyclesAlone >= options.cyclesAlone) {
      // An agent's next session: the daemon again (started anew if none runs).
      ws.close();
      ws = new Workspace({ roots: [root], daemon: "auto" });
      workspaces++;
      cyclesAlone = 0;
    }
  };

  /** One change by the other process, drawn from the files as they are. */
  const change = (): Change => {
    const paths = [...files.keys()];
    const path = paths[Math.floor(rand() * paths.length)] as string;
    const r = rand();
    if (r < 0.5) {
      const token = !files.get(path);
      files.set(path, token);
      return { op: "write", path, text: fileText(path, token) };
    }
    if (r < 0.7 || paths.length < (options.dirs * options.filesPerDir) / 2) {
      const made = `${dirName(between(0, options.dirs - 1))}/n${changes}.txt`;
      const token = rand() < 0.5;
      files.set(made, token);
      return { op: "write", path: made, text: fileText(made, token) };
    }
    if (r < 0.85) {
      files.delete(path);
      return { op: "rm", path };
    }
    files.set(path, true);
    return { op: "append", path, text: `${TOKEN} appended\n` };
  };

  const cliCall = async () => {
    const moment = armed === "during a CLI call";
    // The kill's moment: ~70 ms of node's start, then the search in the daemon.
    const form = moment ? SLOW : (FORMS[Math.floor(rand() * FORMS.length)] as CliForm);
    calls++;
    cliCalls++;
    const label = form.args.join(" ");
    // Every other call through the relay: a kill reaches it mid-call as it reaches Node's client.
    const relayed = cliCalls % 2 === 0;
    const ran = await runProcess(
      relayed ? COMMAND : process.execPath,
      relayed ? form.args : [BIN, ...form.args],
      { cwd: root, env: cliEnv(), timeoutMs: options.callTimeoutMs },
      () => {
        if (moment) setTimeout(() => fire("during a CLI call"), 50 + rand() * 100);
      },
    );
    if (ran.timedOut) {
      timedOut++;
      problem(`CLI call ${cliCalls} (${label}) hung: killed at ${options.callTimeoutMs} ms`);
      return;
    }
    const warned = ran.stderr.includes(CLI_FALLBACK);
    if (warned) cliInProcess++;
    else cliByDaemon++;
    const rest = ran.stderr
      .split("\n")
      .filter((line) => line !== "" && !line.includes(CLI_FALLBACK));
    if ((ran.status !== 0 && ran.status !== 1) || rest.length > 0) {
      failures++;
      problem(
        `CLI call ${cliCalls} (${label}) exited ${ran.status ?? ran.signal}: ${rest.join(" | ")}`,
      );
      return;
    }
    const want = await form.oracle(root);
    cliCompared++;
    const got = lines(ran.stdout);
    if (ran.status !== want.status || got.join("\n") !== want.lines.join("\n")) {
      stale++;
      const missing = want.lines.filter((line) => !got.includes(line));
      const extra = got.filter((line) => !want.lines.includes(line));
      problem(
        `stale: CLI call ${cliCalls} (${label}, ${warned ? "in its own process" : "by the daemon"}): exit ${ran.status} (fresh: ${want.status}); missing ${missing.slice(0, 4).join(", ") || "none"}; extra ${extra.slice(0, 4).join(", ") || "none"}`,
      );
    }
  };

  try {
    while (calls < options.calls) {
      arm();
      fire("between calls");
      const made = await churn.run([change()]);
      changes++;
      for (const error of made.errors) problem(`the writer: ${error}`);
      // The CLI call and the Workspace's cycle at once, as two clients of one daemon.
      await Promise.all([cliCall(), rand() < 0.5 ? workspaceCycle() : undefined]);
    }
  } finally {
    ws.close();
    await churn.close();
    process.off("warning", onWarning);
  }

  // Every edit reported done is in its file, once; no edit is in it twice.
  let lost = 0;
  let duplicated = 0;
  let ownedLines = 0;
  for (const path of owned) {
    const text = readFileSync(join(root, path), "utf8").split("\n");
    ownedLines += text.length - 1;
    const seen = new Map<number, number>();
    for (const line of text) {
      const n = /^edit (\d+)$/.exec(line)?.[1];
      if (n !== undefined) seen.set(Number(n), (seen.get(Number(n)) ?? 0) + 1);
    }
    for (const [n, times] of seen) {
      if (times > 1) {
        duplicated++;
        problem(`${path}: edit ${n} is in it ${times} times`);
      }
    }
    for (const n of done.get(path) ?? []) {
      if (!seen.has(n)) {
        lost++;
        problem(`${path}: edit ${n}, reported done, is not in it`);
      }
    }
    if (text.at(-2) !== "END") problem(`${path}: does not end with END`);
  }
  const tempsInTree = allNames(root).filter((name) => /freshfs|\.tmp$/.test(name)).length;
  const snapshots = join(dirs.cache, "snapshots");
  const snapshotTempsLeft = existsSync(snapshots)
    ? readdirSync(snapshots).filter((name) => name.endsWith(".tmp")).length
    : 0;
  // Each edit in its file is one line: the heads, the ends, and every edit made, once.
  const made = edits.reported + edits.madeUnanswered;
  if (ownedLines !== 2 * owned.length + made) {
    problem(`the Workspace's files have ${ownedLines} lines, not ${2 * owned.length} + ${made}`);
  }
  const log = daemonLog(dirs.runtime);
  return {
    calls,
    cliCalls,
    cliByDaemon,
    cliInProcess,
    workspaceCalls,
    workspaceByDaemon,
    workspaceInProcess,
    workspaces,
    kills: Object.values(killsBy).reduce((a, b) => a + b, 0),
    killsBy,
    killsPutOff,
    daemonsStarted: log.listened,
    startsSteppedAside: log.steppedAside,
    workspaceWarnings,
    changes,
    cliCompared,
    stale,
    edits: { ...edits, lost, duplicated },
    ownedLines,
    timedOut,
    failures,
    tempsInTree,
    snapshotTempsLeft,
    problems,
    elapsedMs: performance.now() - started,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. A snapshot cut mid-write.

export interface CutOptions {
  /** Directories of the tree, and files in each (a few KB of varied words apiece). */
  readonly dirs: number;
  readonly filesPerDir: number;
  /** Tries at killing a write while its temp file exists, before giving up. */
  readonly attempts: number;
  readonly seed: number;
}

/** One kill of a daemon writing its snapshot. */
export interface CutWrite {
  /** Tries it took: a write that ended before its kill landed is tried again. */
  readonly attempts: number;
  /** Bytes the temp file held when the kill was sent, and held after it. */
  readonly targetBytes: number;
  readonly tempBytes: number;
  /** What the real snapshot was after the kill. */
  readonly real: "absent" | "the previous one, byte for byte" | "changed";
  /** What the next daemon made of it (`roots[].snapshots[].outcome`). */
  readonly nextOutcome: string;
  /** The next daemon's answers equal rg's (of `QUERIES`). */
  readonly answersRight: number;
  /** The dead writer's temp file was gone once the next daemon wrote a snapshot. */
  readonly swept: boolean;
}

export interface CutReport {
  readonly files: number;
  readonly snapshotBytes: number;
  /** Whole writes seen (temp file made → renamed), in ms. */
  readonly writeMs: readonly number[];
  readonly first: CutWrite;
  readonly later: CutWrite;
  /** A real snapshot cut short by hand: the outcome, and answers right after it. */
  readonly truncated: { readonly outcome: string; readonly answersRight: number };
  readonly queries: number;
  readonly problems: readonly string[];
  readonly elapsedMs: number;
}

const WORDS = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliet",
  "kilo",
  "lima",
  "mike",
  "november",
  "oscar",
  "papa",
];

/** Queries the tree's answers are checked by, each as rg's flags. */
const QUERIES: readonly (readonly string[])[] = [
  ["-l", "needle_7\\b"],
  ["-c", "rewritten"],
  ["-l", "zq[0-9]{3}x"],
];

interface Cut {
  readonly pid: number;
  readonly temp: string;
  /** The temp file's size when the kill was sent. */
  readonly bytes: number;
}

/**
 * Watches the snapshot directory (inotify: an event for each write to a file in it), and kills
 * the writer of a temp file once it holds `bytes`; times the writes it lets finish.
 */
class SnapshotWatch {
  readonly #dir: string;
  readonly #runtime: string;
  readonly #watcher: FSWatcher;
  readonly writeMs: number[] = [];
  readonly #temps = new Map<string, number>();
  /** Temp files of killed writers: never renamed, and not timed. */
  readonly #killed = new Set<string>();
  #armed: { readonly bytes: number; readonly resolve: (cut: Cut) => void } | undefined;

  constructor(dir: string, runtime: string) {
    this.#dir = dir;
    this.#runtime = runtime;
    this.#watcher = watch(dir, (_event, name) => {
      if (name !== null) this.#heard(name);
    });
  }

  #heard(name: string): void {
    const now = performance.now();
    const pid = /\.snapshot\.(\d+)\.tmp$/.exec(name)?.[1];
    const path = join(this.#dir, name);
    if (pid !== undefined) {
      if (this.#killed.has(name)) return;
      let bytes: number;
      try {
        bytes = statSync(path).size;
      } catch {
        return;
      }
      if (!this.#temps.has(name)) this.#temps.set(name, now);
      const armed = this.#armed;
      if (!armed || bytes < armed.bytes || !servesIn(Number(pid), this.#runtime)) return;
      if (!killPid(Number(pid))) return;
      this.#armed = undefined;
      this.#temps.delete(name);
      this.#killed.add(name);
      armed.resolve({ pid: Number(pid), temp: path, bytes });
      return;
    }
    if (!name.endsWith(".snapshot")) return;
    for (const [temp, at] of this.#temps) {
      if (existsSync(join(this.#dir, temp))) continue;
      this.#temps.delete(temp);
      this.writeMs.push(now - at);
    }
  }

  /** Resolves with the kill of the next writer whose temp file holds `bytes`. */
  next(bytes: number): Promise<Cut> {
    return new Promise((resolve) => {
      this.#armed = { bytes, resolve };
    });
  }

  disarm(): void {
    this.#armed = undefined;
  }

  close(): void {
    this.#watcher.close();
  }
}

/** Resolves undefined after `ms`, without holding the process open. */
function timeout(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

export function cutSnapshot(options: CutOptions): Promise<CutReport> {
  return isolated("freshfs-cut-", async (base, dirs) => {
    const snapshots = join(dirs.cache, "snapshots");
    mkdirSync(snapshots, { mode: 0o700 });
    const watcher = new SnapshotWatch(snapshots, dirs.runtime);
    try {
      return await cutIn(join(base, "tree"), dirs, watcher, options);
    } finally {
      watcher.close();
    }
  });
}

async function cutIn(
  root: string,
  dirs: DaemonDirs,
  watcher: SnapshotWatch,
  options: CutOptions,
): Promise<CutReport> {
  const started = performance.now();
  const rand = seededRandom(options.seed);
  const problems: string[] = [];
  const snapshots = join(dirs.cache, "snapshots");

  // Varied words, so that the index (and its snapshot) is large: a write that takes a while.
  const paths: string[] = [];
  for (let d = 0; d < options.dirs; d++) {
    mkdirSync(join(root, `d${d}`), { recursive: true });
    for (let f = 0; f < options.filesPerDir; f++) {
      const path = `d${d}/f${f}.txt`;
      paths.push(path);
      const parts: string[] = [`needle_${(d * options.filesPerDir + f) % 97}`];
      for (let w = 0; w < 300; w++) {
        const word = WORDS[Math.floor(rand() * WORDS.length)] as string;
        parts.push(`${word}${Math.floor(rand() * 100_000).toString(36)}`);
        if (w % 12 === 11) parts.push("\n");
      }
      if (rand() < 0.05) parts.push(`zq${Math.floor(rand() * 1000)}x`);
      writeFileSync(join(root, path), `${parts.join(" ")}\n`);
    }
  }
  let rewrites = 0;
  /** Rewrites a few files, so that the next daemon's load reads them again and saves anew. */
  const rewriteSome = () => {
    for (let i = 0; i < 50; i++) {
      const path = paths[Math.floor(rand() * paths.length)] as string;
      writeFileSync(join(root, path), `rewritten ${++rewrites} zq${rewrites % 1000}x\n`);
    }
  };

  const statusOf = async () => {
    const ran = await freshfs(["daemon", "status", "--json"], root);
    return ran.status === 0 ? (JSON.parse(ran.stdout) as DaemonStatus) : undefined;
  };
  const snapshotStats = async () =>
    (await statusOf())?.roots.find((r) => r.root === root)?.snapshots[0];
  const until = async (what: string, test: () => Promise<boolean>, ms = 120_000) => {
    const deadline = Date.now() + ms;
    while (!(await test())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(200);
    }
  };
  /** The queries through the daemon against rg's; returns how many agreed. */
  const answers = async (when: string) => {
    let right = 0;
    for (const args of QUERIES) {
      const through = await freshfs(["grep", ...args], root);
      const want = await rgOracle(args)(root);
      const same =
        through.status === want.status &&
        lines(through.stdout).join("\n") === want.lines.join("\n");
      if (same && through.stderr === "") right++;
      else
        problems.push(
          `${when}: grep ${args.join(" ")} exited ${through.status} (rg: ${want.status}), ${lines(through.stdout).length} lines (rg: ${want.lines.length}), stderr ${JSON.stringify(through.stderr.slice(0, 200))}`,
        );
    }
    return right;
  };
  const realFile = () =>
    readdirSync(snapshots)
      .filter((name) => name.endsWith(".snapshot"))
      .map((name) => join(snapshots, name))[0];
  const digestOf = (file: string | undefined) =>
    file && existsSync(file)
      ? createHash("sha256").update(readFileSync(file)).digest("hex")
      : undefined;
  const stop = async () => {
    killDaemonsIn(dirs.runtime);
    await noDaemonIn(dirs.runtime);
  };
  /**
   * A daemon for the tree: started, then asked until it keeps the tree (a command answers a
   * tree the daemon does not keep live yet itself), and it walks, indexes and saves (or loads).
   */
  const ask = async () => {
    await freshfs(["daemon", "start"], root);
    await until("the daemon to keep the tree", async () => {
      const ran = await freshfs(["grep", "-c", "rewritten"], root);
      if (ran.status !== 0 && ran.status !== 1) {
        throw new Error(`grep exited ${ran.status}: ${ran.stderr}`);
      }
      return (await statusOf())?.roots.some((kept) => kept.root === root) === true;
    });
  };

  /**
   * Starts a daemon and kills it while its temp file holds a random share of a snapshot's
   * bytes; then checks what is left, and what the next daemon makes of it.
   */
  const cutWrite = async (
    bytes: number,
    prepare: () => void,
    previous: () => string | undefined,
  ): Promise<CutWrite> => {
    for (let attempts = 1; ; attempts++) {
      prepare();
      const before = previous();
      const targetBytes = Math.floor(bytes * (0.05 + 0.9 * rand()));
      const killed = watcher.next(targetBytes);
      await ask();
      const cut = await Promise.race([killed, timeout(120_000)]);
      if (!cut) {
        watcher.disarm();
        throw new Error("no snapshot write was seen within 120 s");
      }
      await noDaemonIn(dirs.runtime);
      const after = digestOf(realFile());
      if (!existsSync(cut.temp)) {
        // The write was renamed before the kill landed: try again.
        if (attempts >= options.attempts) throw new Error(`${attempts} writes ended unkilled`);
        await stop();
        continue;
      }
      const tempBytes = statSync(cut.temp).size;
      const real: CutWrite["real"] =
        after === undefined && before === undefined
          ? "absent"
          : after === before
            ? "the previous one, byte for byte"
            : "changed";
      const answersRight = await answers(`after the kill of ${cut.pid}`);
      await until(
        "the next daemon's load",
        async () => (await snapshotStats())?.restore === "done",
      );
      const nextOutcome = (await snapshotStats())?.outcome ?? "none to load";
      await until("a new snapshot", async () => (await snapshotStats())?.current === true);
      const swept = !existsSync(cut.temp);
      return {
        attempts,
        targetBytes: cut.bytes,
        tempBytes,
        real,
        nextOutcome,
        answersRight,
        swept,
      };
    }
  };

  // A whole write first: the snapshot's size, which the kills below take a share of.
  await ask();
  await until("the first snapshot", async () => (await snapshotStats())?.current === true);
  await stop();
  const whole = realFile();
  if (!whole) throw new Error("no snapshot was written");
  const snapshotBytes = statSync(whole).size;
  // The first write: no snapshot before it.
  const first = await cutWrite(
    snapshotBytes,
    () => {
      const file = realFile();
      if (file) rmSync(file);
    },
    () => undefined,
  );
  // A later write: the previous one whole on disk; the next daemon loads it, reads the
  // rewritten files again, and writes anew.
  await stop();
  const later = await cutWrite(snapshotBytes, rewriteSome, () => digestOf(realFile()));
  await stop();
  const file = realFile();
  if (!file) throw new Error("no snapshot to cut short");
  const size = statSync(file).size;
  truncateSync(file, size >> 1);
  const right = await answers("after the snapshot was cut short");
  await until("the load of the cut snapshot", async () => {
    return (await snapshotStats())?.restore === "done";
  });
  const outcome = (await snapshotStats())?.outcome ?? "none";
  await until("a whole snapshot again", async () => (await snapshotStats())?.current === true);
  if (statSync(file).size <= size >> 1) problems.push("the snapshot was not written anew");
  return {
    files: paths.length,
    snapshotBytes,
    writeMs: watcher.writeMs,
    first,
    later,
    truncated: { outcome, answersRight: right },
    queries: QUERIES.length,
    problems,
    elapsedMs: performance.now() - started,
  };
}

// ---------------------------------------------------------------------------------------------
// The report.

const count = (n: number) => n.toLocaleString("en-US");

export function killTable(r: KillReport): string {
  const rows: [string, string][] = [
    ["calls", `${count(r.calls)} (CLI ${count(r.cliCalls)}, Workspace ${count(r.workspaceCalls)})`],
    [
      "CLI answers: by the daemon / in its own process (a warning each)",
      `${count(r.cliByDaemon)} / ${count(r.cliInProcess)}`,
    ],
    [
      "Workspace answers: by the daemon / in this process",
      `${count(r.workspaceByDaemon)} / ${count(r.workspaceInProcess)}`,
    ],
    [
      "Workspaces (a new one after a few cycles alone) / FreshfsDaemonWarning",
      `${count(r.workspaces)} / ${count(r.workspaceWarnings)}`,
    ],
    [
      "kills (SIGKILL): between calls / during a CLI call / just after an edit was sent",
      `${count(r.kills)}: ${Object.values(r.killsBy).map(count).join(" / ")}`,
    ],
    ["kills put off (no daemon ran at that moment)", count(r.killsPutOff)],
    [
      "daemons started (the first and each restart) / starts that found one running",
      `${count(r.daemonsStarted)} / ${count(r.startsSteppedAside)}`,
    ],
    ["changes by the other process", count(r.changes)],
    ["CLI answers compared (rg, a readdir walk)", count(r.cliCompared)],
    ["**stale answers**", `**${count(r.stale)}**`],
    ["Workspace edits reported done", count(r.edits.reported)],
    [
      "... refused after a kill / found made by the daemon / made again",
      `${count(r.edits.refused)} / ${count(r.edits.madeUnanswered)} / ${count(r.edits.redone)}`,
    ],
    ["**edits lost** (reported done, not in the file)", `**${count(r.edits.lost)}**`],
    ["**edits made twice**", `**${count(r.edits.duplicated)}**`],
    ["lines of the Workspace's files at the end (2 each, and 1 an edit)", count(r.ownedLines)],
    ["calls that hung / failed (not 0 or 1, an error)", `${r.timedOut} / ${r.failures}`],
    [
      "temp files in the tree / snapshot temp files left",
      `${r.tempsInTree} / ${r.snapshotTempsLeft}`,
    ],
    ["elapsed", `${(r.elapsedMs / 1000).toFixed(1)} s`],
  ];
  return ["| | |", "|---|---:|", ...rows.map(([label, value]) => `| ${label} | ${value} |`)].join(
    "\n",
  );
}

export function cutTable(r: CutReport): string {
  const rows: [string, (w: CutWrite) => string][] = [
    ["tries (a write renamed before its kill landed is tried again)", (w) => `${w.attempts}`],
    [
      "bytes in the temp file when the kill was sent / after it",
      (w) => `${count(w.targetBytes)} / ${count(w.tempBytes)} of ${count(r.snapshotBytes)}`,
    ],
    ["the real snapshot after the kill", (w) => w.real],
    ["what the next daemon made of it", (w) => w.nextOutcome],
    ["its answers as rg's", (w) => `${w.answersRight} of ${r.queries}`],
    ["the temp file swept once a new snapshot was written", (w) => (w.swept ? "yes" : "**no**")],
  ];
  return [
    "| | the first write | a later write |",
    "|---|---|---|",
    ...rows.map(([label, cell]) => `| ${label} | ${cell(r.first)} | ${cell(r.later)} |`),
  ].join("\n");
}

/** What `killTable` and `cutTable` describe, for the report's text. */
export function killText(o: KillOptions): string {
  const files = count(o.dirs * o.filesPerDir);
  return `A tree of ${files} files in ${o.dirs} directories (30% holding a token), one large file (${count(o.bigBytes)} bytes) and ${o.owned} files of a Workspace's. Another process (churn.mjs) makes one change before each CLI call (the token added or removed at the same size, files created, deleted, appended to); then \`freshfs grep -l/-c TOKEN\`, \`grep -c T.K.N\` (no literal for the index: it reads every file), \`glob '**/*.txt'\` or \`files\` runs through the daemon (FRESHFS_DAEMON=1; every other call as \`bin/freshfs\`, the native relay, the others as \`node dist/cli/main.js\`), and its answer is compared with rg's (the same flags, stdin not a pipe) or a readdir walk, made right after. On half the calls, at the same time, a \`Workspace({ daemon: "auto" })\` reads one of its files and adds a numbered line to it. Every ${o.killEvery[0]}-${o.killEvery[1]} calls the daemon is killed (SIGKILL): between calls; during a CLI call (\`grep -c T.K.N\`, 50-150 ms after its start: Node's start or the relay's, then the search); or 0-8 ms after a Workspace edit was sent. A Workspace whose daemon died runs ${o.cyclesAlone} cycles in this process, then a new one goes back to the daemon. Every call is bounded (${o.callTimeoutMs / 1000} s).`;
}

export async function run(): Promise<string> {
  const options: KillOptions = {
    calls: 1000,
    dirs: 15,
    filesPerDir: 20,
    owned: 8,
    bigBytes: 8_000_000,
    killEvery: [50, 100],
    cyclesAlone: 3,
    callTimeoutMs: 60_000,
    seed: 31,
  };
  const kill = await killDuringCalls(options);
  const cut = await cutSnapshot({ dirs: 100, filesPerDir: 200, attempts: 5, seed: 32 });
  const writes = [...cut.writeMs].sort((x, y) => x - y);
  const parts = [`**Kills during mixed calls.** ${killText(options)}`, "", killTable(kill), ""];
  if (kill.problems.length > 0) {
    parts.push("Problems:", "", ...kill.problems.map((line) => `- ${line}`), "");
  }
  parts.push(
    `**A snapshot cut mid-write.** A tree of ${count(cut.files)} files (a few KB of varied words each); its content index snapshot is ${count(cut.snapshotBytes)} bytes, a whole write (temp file made → renamed) took ${writes.map((ms) => ms.toFixed(0)).join(", ")} ms. The daemon is killed once the temp file of a write holds a random share (5-95%) of that (inotify on the snapshot directory: an event each write), on its first write and on a later one (after a restart that loaded the snapshot and re-read 50 rewritten files); then the next daemon answers ${QUERIES.length} greps (compared with rg's) and writes a snapshot of its own.`,
    "",
    cutTable(cut),
    "",
    `A real snapshot cut to half its bytes by hand: the next daemon's outcome \`${cut.truncated.outcome}\`; its answers as rg's: ${cut.truncated.answersRight} of ${cut.queries}.`,
  );
  if (cut.problems.length > 0) {
    parts.push("", "Problems:", "", ...cut.problems.map((line) => `- ${line}`));
  }
  return parts.join("\n");
}

/**
 * `freshfs daemon`: runs the user's daemon in the foreground (`run`, what clients start), makes
 * sure one runs (`start`), stops it (`stop`), or shows what it keeps (`status`: its roots and
 * their watches, its content indexes, its memory and clients). Depends on `daemon/` (the server
 * only for `run`).
 */
import { DaemonClient, DaemonUnavailable } from "../client/connection.js";
import { DEFAULT_IDLE_MS, socketPath } from "../client/protocol.js";
import type { DaemonStatus } from "../daemon/methods.js";
import { badInput } from "./commands.js";

export interface DaemonCommandOptions {
  readonly socket: string | undefined;
  readonly idleMs: number | undefined;
  readonly reopenAfterMs?: number | undefined;
  readonly json: boolean;
  /** Runs a command line (`cli/run`'s runCli), for the native relay's requests. */
  readonly runCommand: (argv: readonly string[]) => Promise<number>;
}

/** The idle time: `--idle-ms`, else FRESHFS_DAEMON_IDLE_MS, else DEFAULT_IDLE_MS. */
function idleMs(given: number | undefined): number {
  if (given !== undefined) return given;
  const env = process.env.FRESHFS_DAEMON_IDLE_MS;
  if (env !== undefined && /^\d+$/.test(env)) return Number(env);
  return DEFAULT_IDLE_MS;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function describe(status: DaemonStatus): string {
  const lines = [
    `daemon ${status.pid}, freshfs ${status.version} (build ${status.build}), up ${(status.uptimeMs / 1000).toFixed(0)} s`,
    `socket ${status.socket}`,
    `${status.clients} client(s) connected, ${status.requests} request(s) answered, ${mib(status.memory.rss)} resident (${mib(status.memory.heapUsed)} heap)`,
    status.roots.length === 0 ? "no roots kept" : `${status.roots.length} root(s) kept:`,
  ];
  for (const root of status.roots) {
    const flags = `${root.hidden ? "hidden" : "no hidden"}, ${root.gitignore ? "gitignore" : "no ignore rules"}`;
    lines.push(
      `  ${root.root} (${flags}): ${root.status}, ${root.entries} entries, ${root.directories} directories watched, content index ${root.indexedFiles} files in ${mib(root.indexBytes)}`,
    );
    if (root.fromSavedListing > 0) {
      lines.push(`    ${root.fromSavedListing} call(s) answered from the saved listing`);
    }
    for (const snapshot of root.snapshots) {
      const written =
        snapshot.savedAgoMs === undefined
          ? "not written by this daemon"
          : `${mib(snapshot.savedBytes ?? 0)} written ${(snapshot.savedAgoMs / 1000).toFixed(0)} s ago`;
      const saved = `${written}, ${snapshot.current ? "current" : "changes since"}`;
      const loaded =
        snapshot.outcome ?? (snapshot.restore === "done" ? "none to load" : snapshot.restore);
      lines.push(`    snapshot: ${loaded}; ${saved}`);
    }
  }
  lines.push(
    `snapshots ${status.snapshotDir ?? "off (FRESHFS_SNAPSHOTS=0, or no private cache directory)"}`,
  );
  return `${lines.join("\n")}\n`;
}

/** Runs `freshfs daemon ACTION`; returns the exit status. */
export async function daemonCommand(
  action: string | undefined,
  options: DaemonCommandOptions,
): Promise<number> {
  const socket = options.socket ?? socketPath();
  switch (action ?? "run") {
    case "run": {
      const { runDaemon } = await import("../daemon/server.js");
      const { relayMethods } = await import("./relay.js");
      const end = await runDaemon({
        socket,
        methods: relayMethods(options.runCommand),
        idleMs: idleMs(options.idleMs),
        reopenAfterMs: options.reopenAfterMs,
        onListening: (path) =>
          process.stderr.write(`freshfs daemon ${process.pid}: listening on ${path}\n`),
      });
      if (end === "already-running") {
        process.stderr.write(`freshfs daemon: another daemon serves ${socket}\n`);
        return 0;
      }
      process.stderr.write(`freshfs daemon ${process.pid}: ${end}\n`);
      // Its watcher, index and grep threads would keep the process alive: it is done.
      process.exit(0);
      break;
    }
    case "start": {
      const client = await DaemonClient.connect({ socket });
      process.stdout.write(`${client.pid}\n`);
      client.close();
      return 0;
    }
    case "stop":
    case "status": {
      let client: DaemonClient;
      try {
        client = await DaemonClient.connect({ socket, start: false });
      } catch (error) {
        if (!(error instanceof DaemonUnavailable)) throw error;
        process.stderr.write(`freshfs: no daemon runs for ${socket}\n`);
        return 1;
      }
      try {
        if (action === "stop") {
          await client.request("stop", {});
          return 0;
        }
        const status = await client.request<DaemonStatus>("status", {});
        process.stdout.write(
          options.json ? `${JSON.stringify(status, null, 2)}\n` : describe(status),
        );
        return 0;
      } finally {
        client.close();
      }
    }
    default:
      throw badInput(`daemon takes run, start, stop or status, not '${action}'.`);
  }
}

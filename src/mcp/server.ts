/**
 * The freshfs MCP server: one Workspace per process (so the read-before-write guard holds across
 * calls), its tools registered with the official SDK, failures returned as `isError` results a
 * model can act on, and a client's roots narrowing (never widening) the server's. Logs go to
 * stderr only: stdout is the protocol. Depends on the library's public surface.
 */
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  RootsListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { FreshfsError } from "../errors.js";
import type { GuardPolicy, PartialReadPolicy, SearchProgress } from "../index.js";
// The tools' own modules, not the public API's index, which would load every search and index
// module into a server whose tools run in the daemon (`tools/definition` `later`).
import { boundText } from "../tools/output.js";
import { Workspace } from "../tools/workspace.js";
import { packageVersion } from "../version.js";
import { BoundedStdioTransport } from "./stdio.js";
import { callTool, MCP_TOOLS } from "./tools.js";

export interface FreshfsServerOptions {
  /** The directories the tools may use; a client's roots can only narrow them. */
  roots: readonly string[];
  /** @default "strict" */
  policy?: GuardPolicy | undefined;
  /** @default "reject" */
  partialReads?: PartialReadPolicy | undefined;
  /**
   * Where the tools run: the user's daemon (`auto`: every server on a tree shares its watches
   * and content index, each server's guard a session of its own there), this process (`off`),
   * or the daemon on a socket path. `freshfs mcp` asks for `auto` (`--no-daemon` for `off`): an
   * agent runs a server per agent, per sub-agent, per restart, and the daemon keeps them from
   * each walking, watching and indexing the tree. A server made in a caller's own process keeps
   * its work there unless asked, as the library's Workspace does.
   * @default "off"
   */
  daemon?: "auto" | "off" | (string & {}) | undefined;
  /** A guard session to join in the daemon (reads shared with its other clients). */
  session?: string | undefined;
}

function log(message: string): void {
  process.stderr.write(`freshfs mcp: ${message}\n`);
}

// A client that declared roots but does not answer must not hold every tool call for the
// SDK's default minute.
const ROOTS_TIMEOUT_MS = 5000;

export interface FreshfsServer {
  readonly server: Server;
  readonly workspace: Workspace;
}

// Often enough for a client's progress bar to move, rarely enough to cost nothing.
const PROGRESS_EVERY_MS = 100;

interface ProgressParams {
  progress: number;
  total?: number;
  message: string;
}

/**
 * The search's progress as MCP progress notifications: the first at once (so a client knows
 * the call is at work), then at most one every PROGRESS_EVERY_MS. MCP wants `progress` to grow
 * with each notification: the walk counts entries listed, the search then adds files read to
 * them (and the total is entries listed plus files to read).
 */
function progressSender(
  send: (params: ProgressParams) => Promise<void>,
): (progress: SearchProgress) => void {
  let sentAt = Number.NEGATIVE_INFINITY;
  let last = 0;
  let listed = 0;
  return (update) => {
    const now = performance.now();
    if (now - sentAt < PROGRESS_EVERY_MS) return;
    let params: ProgressParams;
    if (update.phase === "walk") {
      listed = update.done;
      params = { progress: update.done, message: `listed ${update.done} entries` };
    } else {
      const total = update.total ?? update.done;
      params = {
        progress: listed + update.done,
        total: listed + total,
        message: `searched ${update.done} of ${total} files`,
      };
    }
    if (params.progress <= last) return;
    last = params.progress;
    sentAt = now;
    // A client gone meanwhile: the call's own reply fails the same way and is logged there.
    send(params).catch(() => undefined);
  };
}

export function createFreshfsServer(options: FreshfsServerOptions): FreshfsServer {
  const workspace = new Workspace({
    roots: options.roots,
    policy: options.policy,
    partialReads: options.partialReads,
    daemon: options.daemon ?? "off",
    session: options.session,
  });
  // The SDK's low-level Server rather than McpServer: McpServer checks arguments against the
  // zod schemas before a handler sees them, which would refuse what the Workspace accepts.
  const server = new Server(
    { name: "freshfs", version: packageVersion() },
    {
      capabilities: { tools: {} },
      instructions:
        "File tools with a read-before-write guard: read a file in full (read, read_many) before you edit, write, patch or delete it; if it changed on disk since, the call is refused and you read it again (stat tells whether a file may be edited without reading it again). apply_patch changes several files at once, all or none. glob, grep, find and list always see the current tree.",
    },
  );
  // Tool calls wait for the client's roots, once it has said it has them.
  let rootsReady: Promise<void> = Promise.resolve();
  const refreshRoots = async () => {
    let roots: { uri: string }[];
    try {
      ({ roots } = await server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS }));
    } catch (error) {
      log(`could not list the client's roots (${(error as Error).message}); using the server's`);
      return;
    }
    // Each root on its own: one that is not a local directory opens nothing, and must not
    // make the list fall back to the server's wider roots.
    const dirs: string[] = [];
    for (const root of roots) {
      try {
        dirs.push(fileURLToPath(root.uri));
      } catch {
        log(`client root ${root.uri} is not a local file URL; it opens nothing`);
      }
    }
    const now = workspace.narrowTo(dirs);
    log(
      `client roots: ${dirs.join(", ") || "(none)"}; tools use: ${now.join(", ") || "(nothing)"}`,
    );
  };
  server.oninitialized = () => {
    if (server.getClientCapabilities()?.roots) rootsReady = refreshRoots();
  };
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    rootsReady = refreshRoots();
    await rootsReady;
  });

  const listed = MCP_TOOLS.map((tool) => tool.listed);
  const byName = new Map(MCP_TOOLS.map((tool) => [tool.listed.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${request.params.name}; the tools are ${listed.map((t) => t.name).join(", ")}.`,
      );
    }
    await rootsReady;
    const token = request.params._meta?.progressToken;
    const call = {
      // The SDK aborts it on the client's notifications/cancelled (and then sends no reply).
      signal: extra.signal,
      onProgress:
        token === undefined
          ? undefined
          : progressSender((params) =>
              extra.sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, ...params },
              }),
            ),
    };
    const { name } = tool.listed;
    try {
      return await callTool(workspace, tool, request.params.arguments ?? {}, call);
    } catch (error) {
      if (!(error instanceof FreshfsError)) {
        log(`${name} failed: ${(error as Error).stack ?? String(error)}`);
      }
      const text =
        error instanceof FreshfsError
          ? `${error.message} (${error.code})`
          : `${name} failed: ${(error as Error).message ?? String(error)}`;
      // A refusal says who refused, as an answer says who answered.
      const answeredBy = (error instanceof FreshfsError && error.answeredBy) || {
        pid: process.pid,
        daemon: false,
      };
      return {
        isError: true,
        content: [{ type: "text" as const, text: boundText(text) }],
        _meta: { "freshfs/answeredBy": answeredBy },
      };
    }
  });
  return { server, workspace };
}

/** Serves on stdin/stdout until the client goes away. */
export async function serveStdio(options: FreshfsServerOptions): Promise<void> {
  const { server, workspace } = createFreshfsServer(options);
  // Not the SDK's StdioServerTransport: see stdio.ts. This one also closes when stdin ends.
  const transport = new BoundedStdioTransport(log);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  await server.connect(transport);
  log(`serving ${workspace.roots.join(", ")} on stdio`);
  await closed;
  workspace.close();
}

/**
 * The MCP server's stdio transport: newline-delimited JSON-RPC on stdin and stdout, written
 * here rather than taken from the SDK. The SDK's StdioServerTransport keeps every unread byte
 * in one buffer capped at 10 MiB, concatenated again on each chunk (quadratic on a long line);
 * a longer message throws, the transport closes, and `freshfs mcp` exits silently with code 0
 * while the client waits. A line that is not JSON, or not JSON-RPC, only reaches `onerror`,
 * so the client never hears of it either. This one holds at most MCP_MAX_REQUEST_BYTES of a
 * line, answers every line it cannot pass on (JSON-RPC 2.0 §5.1's error objects) and goes on
 * serving. Stdio has no sessions: `sessionId` stays undefined, as in the SDK's transport.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
  RequestIdSchema,
} from "@modelcontextprotocol/sdk/types.js";

const MIB = 1024 * 1024;

/**
 * The longest request line (the bytes before its newline) the MCP server reads; a longer one
 * is answered with an error and otherwise ignored. 10 MiB is the SDK's own stdio limit, so
 * every message the server accepted before is still accepted: only what used to kill it is now
 * refused out loud. It also bounds memory: a line is held as bytes, joined once, decoded and
 * parsed, and a `write` of 10 MiB raises the server's peak memory by about 40 MiB.
 *
 * For writes through MCP this means a `write` carries at most about 10 MiB of content as
 * JSON-escaped text (a line break, quote or backslash takes two bytes, other control
 * characters six), well under the 32 MiB (MAX_FILE_BYTES) the tools handle: a larger file can
 * be read, edited (an edit sends only its strings), renamed and deleted through MCP, but is
 * written in parts (write the first, then extend it with edit) or through the library.
 */
export const MCP_MAX_REQUEST_BYTES = 10 * MIB;

// What is kept of each end of a line over the cap, to find its id: the envelope members a
// client puts before its params, or the id the SDK's client puts last, fit in far less.
const KEPT_BYTES = 4096;

/** One line of input: its text (a trailing `\r` dropped), or what was kept of a line over the cap. */
export type InputLine =
  | { readonly kind: "line"; readonly text: string; readonly bytes: number }
  | {
      readonly kind: "oversized";
      readonly bytes: number;
      readonly head: string;
      readonly tail: string;
    };

/**
 * Splits a byte stream at `\n`. A line's chunks are collected and joined once at its newline
 * (bytes, so a character split between chunks decodes whole); a line that passes `maxBytes`
 * is dropped as it passes, keeping only its first and its last KEPT_BYTES bytes.
 */
export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private kept: { head: Buffer; tail: Buffer } | undefined;

  constructor(private readonly maxBytes: number) {}

  /** The lines `chunk` completes, in order; its unfinished end waits for the next chunk. */
  *push(chunk: Buffer): Generator<InputLine> {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      this.append(chunk.subarray(start, newline));
      start = newline + 1;
      yield this.finish();
    }
    this.append(chunk.subarray(start));
  }

  /** Drops the unfinished line. */
  clear(): void {
    this.parts = [];
    this.size = 0;
    this.kept = undefined;
  }

  private append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.kept) {
      this.kept.tail = lastBytes([this.kept.tail, bytes], KEPT_BYTES);
      return;
    }
    this.parts.push(bytes);
    if (this.size <= this.maxBytes) return;
    // Copies, so the chunks themselves are released.
    this.kept = {
      head: Buffer.concat(this.parts, Math.min(this.size, KEPT_BYTES)),
      tail: lastBytes(this.parts, KEPT_BYTES),
    };
    this.parts = [];
  }

  private finish(): InputLine {
    const { parts, size, kept } = this;
    this.clear();
    if (kept) {
      return {
        kind: "oversized",
        bytes: size,
        head: kept.head.toString(),
        tail: kept.tail.toString(),
      };
    }
    const last = parts[parts.length - 1];
    if (last === undefined) return { kind: "line", text: "", bytes: 0 };
    const end = last[last.length - 1] === 0x0d ? size - 1 : size;
    const bytes = parts.length === 1 ? last : Buffer.concat(parts, size);
    return { kind: "line", text: bytes.toString("utf8", 0, end), bytes: size };
  }
}

/** A copy of the last `count` bytes of `list` taken as one sequence. */
function lastBytes(list: readonly Buffer[], count: number): Buffer {
  const taken: Buffer[] = [];
  let wanted = count;
  for (let i = list.length - 1; i >= 0 && wanted > 0; i--) {
    const part = list[i] as Buffer;
    const take = Math.min(wanted, part.length);
    taken.unshift(part.subarray(part.length - take));
    wanted -= take;
  }
  return Buffer.concat(taken);
}

// JSON tokens, matched only from a position known to be outside a string, so each match is a
// whole token: inside a string every quote is escaped.
const WS = "[ \\t\\n\\r]*";
const STRING = String.raw`"(?:[^"\\]|\\[\s\S])*"`;
const NUMBER = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;
const OPEN = new RegExp(`${WS}\\{`, "y");
const MEMBER_NAME = new RegExp(`${WS}(${STRING})${WS}:${WS}`, "y");
// A scalar followed by the delimiter that ends it: a value cut off by the head's end is not
// taken for a shorter one.
const SCALAR_MEMBER = new RegExp(`(${STRING}|${NUMBER}|true|false|null)${WS}([,}])`, "y");
// The member right before the line's final `}` belongs to the object that `}` closes: the
// top-level one. Its quote after a comma is unescaped, so `"id"` is a name, not string content.
const LAST_ID = new RegExp(`,${WS}"id"${WS}:${WS}(${STRING}|${NUMBER})${WS}\\}${WS}$`);

/** What can be told of a message from the ends of its line. */
export interface RecoveredMessage {
  /** Its top-level id, where one is certainly that; null otherwise. */
  readonly id: RequestId | null;
  /** Whether it is a response (a `result` or `error`, no `method`): a response gets no reply. */
  readonly response: boolean;
}

/**
 * The id of a message from the first and last bytes of its line (`head`, `tail`), without the
 * middle. An `"id"` counts only where it is certainly a top-level member: among the scalar
 * members that open the object before any nested value (`{"jsonrpc":"2.0","id":1,...`), or
 * right before the final `}` (`...,"id":1}`, the SDK client's order).
 */
export function recoverMessage(head: string, tail: string): RecoveredMessage {
  const names: string[] = [];
  let headId: RequestId | undefined;
  OPEN.lastIndex = 0;
  if (OPEN.test(head)) {
    let at = OPEN.lastIndex;
    for (;;) {
      MEMBER_NAME.lastIndex = at;
      const name = MEMBER_NAME.exec(head);
      const key = name && parseToken(name[1] as string);
      if (typeof key !== "string") break;
      names.push(key);
      SCALAR_MEMBER.lastIndex = MEMBER_NAME.lastIndex;
      const member = SCALAR_MEMBER.exec(head);
      if (!member) break; // a nested value, after which nothing is certainly top-level
      if (key === "id") headId = requestId(parseToken(member[1] as string));
      if (member[2] === "}") break;
      at = SCALAR_MEMBER.lastIndex;
    }
  }
  const last = LAST_ID.exec(tail);
  // JSON.parse keeps the last of repeated names, so the tail's id wins.
  const id = (last && requestId(parseToken(last[1] as string))) ?? headId ?? null;
  const response =
    !names.includes("method") && (names.includes("result") || names.includes("error"));
  return { id, response };
}

function parseToken(token: string): unknown {
  try {
    return JSON.parse(token);
  } catch {
    return undefined;
  }
}

function requestId(value: unknown): RequestId | undefined {
  const parsed = RequestIdSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON-RPC error response; `id` null where the request's could not be read (§5). */
interface ErrorReply {
  jsonrpc: "2.0";
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

/**
 * The server's side of MCP's stdio transport over this process's stdin and stdout. Lines it
 * cannot pass on are answered here and reported through `log`, one line each; `onerror` is
 * left to the streams.
 */
export class BoundedStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  private readonly reader = new LineReader(MCP_MAX_REQUEST_BYTES);
  private readonly stdin = process.stdin;
  private readonly stdout = process.stdout;
  private started = false;
  private closed = false;
  private drained: Promise<void> | undefined;

  constructor(private readonly log: (message: string) => void) {}

  async start(): Promise<void> {
    if (this.started) throw new Error("BoundedStdioTransport already started");
    this.started = true;
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onStdinError);
    // The client went away: close, so pending requests to it are dropped and the process can
    // exit. An unfinished last line is dropped with it, as the SDK's transport drops it.
    this.stdin.on("end", this.onEnd);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStdinError);
    this.stdin.off("end", this.onEnd);
    this.stdin.pause();
    this.reader.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  private readonly onData = (chunk: Buffer): void => {
    for (const line of this.reader.push(chunk)) {
      if (this.closed) return;
      if (line.kind === "oversized") this.refuseOversized(line.bytes, line.head, line.tail);
      else this.receive(line.text, line.bytes);
    }
  };

  private readonly onStdinError = (error: Error): void => {
    this.log(`reading stdin failed (${error.message}); closing`);
    void this.close();
  };

  private readonly onEnd = (): void => {
    void this.close();
  };

  private receive(text: string, bytes: number): void {
    if (/^[ \t\r]*$/.test(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = oneLine((error as Error).message);
      this.log(`a line of ${bytes} bytes is not JSON (${reason}); answered with a parse error`);
      this.reply(null, ErrorCode.ParseError, `Parse error: the line is not JSON (${reason}).`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) {
      this.deliver(parsed.data);
      return;
    }
    const id = isRecord(value) ? (requestId(value.id) ?? null) : null;
    if (isRecord(value) && !("method" in value) && ("result" in value || "error" in value)) {
      // Never answered (§5), and its id names one of our requests: an error under it would
      // be taken by the client for the answer to its own request of that number.
      this.log(`dropped a malformed response of ${bytes} bytes (id ${JSON.stringify(id)})`);
      return;
    }
    this.log(
      `a line of ${bytes} bytes is not a JSON-RPC message; answered with Invalid Request (id ${JSON.stringify(id)})`,
    );
    this.reply(
      id,
      ErrorCode.InvalidRequest,
      'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0" and a "method", or a "result" or "error" and the id it answers).',
    );
  }

  private refuseOversized(bytes: number, head: string, tail: string): void {
    const cap = `${MCP_MAX_REQUEST_BYTES} bytes (${MCP_MAX_REQUEST_BYTES / MIB} MiB)`;
    const { id, response } = recoverMessage(head, tail);
    if (response) {
      this.log(`dropped a response of ${bytes} bytes, over the cap of ${cap}`);
      return;
    }
    // Without an id the client cannot match the error to its request, which then waits for
    // the client's own timeout; the error still tells whoever reads the traffic why.
    this.log(
      `refused a request of ${bytes} bytes, over the cap of ${cap}; ${id === null ? "its id could not be read, answered with id null" : `answered id ${JSON.stringify(id)}`}`,
    );
    this.reply(
      id,
      ErrorCode.InvalidRequest,
      `Request too large: it is ${bytes} bytes, over the cap of ${cap} per request, and was not processed. Send less per request: write a larger file in parts (write the first part, then add the rest with edit).`,
      { requestBytes: bytes, maxRequestBytes: MCP_MAX_REQUEST_BYTES },
    );
  }

  private deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage?.(message);
    } catch (error) {
      // Thrown out of the data listener, it would end the process.
      this.log(`handling a message failed: ${oneLine((error as Error).message)}`);
      this.onerror?.(error as Error);
    }
  }

  private reply(id: RequestId | null, code: number, message: string, data?: unknown): void {
    const reply: ErrorReply = { jsonrpc: "2.0", id, error: { code, message } };
    if (data !== undefined) reply.error.data = data;
    void this.write(reply);
  }

  /** One JSON line on stdout; resolves once stdout has taken it or, when full, has drained. */
  private write(message: JSONRPCMessage | ErrorReply): Promise<void> {
    if (this.stdout.write(`${JSON.stringify(message)}\n`)) return Promise.resolve();
    // One listener for all the writers waiting, not one each (Node warns past ten).
    this.drained ??= new Promise((resolve) => {
      this.stdout.once("drain", () => {
        this.drained = undefined;
        resolve();
      });
    });
    return this.drained;
  }
}

function oneLine(text: string): string {
  return text.replace(/\p{Cc}+/gu, " ");
}

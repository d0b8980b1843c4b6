/**
 * The MCP server's stdio transport (src/mcp/stdio.ts): the line reader across chunk
 * boundaries, the id read from the ends of an oversized line, and the built `freshfs mcp`
 * answering oversized, non-JSON and non-JSON-RPC lines and serving on, driven by the SDK's
 * client and by raw lines on the child's stdin.
 */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  McpError,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  type InputLine,
  LineReader,
  MCP_MAX_REQUEST_BYTES,
  recoverMessage,
} from "../../src/mcp/stdio.js";
import { tempTree } from "../helpers/fs.js";
import { peakBytes } from "../helpers/proc.js";

const BIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const MIB = 1024 * 1024;

/** Feeds `chunks` to a reader; the lines it gives, oversized ones as a short record. */
function readLines(maxBytes: number, chunks: readonly Buffer[]): InputLine[] {
  const reader = new LineReader(maxBytes);
  return chunks.flatMap((chunk) => [...reader.push(chunk)]);
}

/** `bytes` cut at the given offsets. */
function cut(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const points = [...new Set(offsets)].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

describe("LineReader", () => {
  it("gives the same lines however the bytes are cut", () => {
    // Multi-byte characters of two, three and four bytes, CR, CRLF and empty lines.
    const piece = fc.constantFrom("a", "{}", "é", "€", "😀", " ", "\r", '"id":1');
    const line = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((text) => `${text}\n`).join(""));
          const chunks = cut(
            bytes,
            cuts.map((n) => n % (bytes.length + 1)),
          );
          const texts = readLines(1024, chunks).map((read) =>
            read.kind === "line" ? read.text : "(oversized)",
          );
          expect(texts).toEqual(lines.map((text) => text.replace(/\r$/, "")));
        },
      ),
      { seed: 7, numRuns: 500 },
    );
  });

  it("drops one trailing CR and keeps every other", () => {
    const lines = readLines(64, [Buffer.from("a\r\n\r\nb\r\r\n\rc\n")]);
    expect(lines.map((read) => (read.kind === "line" ? read.text : ""))).toEqual([
      "a",
      "",
      "b\r",
      "\rc",
    ]);
  });

  it("decodes a character split between chunks whole", () => {
    const bytes = Buffer.from("😀é\n");
    for (let at = 1; at < bytes.length - 1; at++) {
      const [line] = readLines(64, cut(bytes, [at]));
      expect(line).toEqual({ kind: "line", text: "😀é", bytes: 6 });
    }
  });

  it("waits for the newline: an unfinished line gives nothing yet", () => {
    const reader = new LineReader(64);
    expect([...reader.push(Buffer.from('{"a":'))]).toEqual([]);
    expect([...reader.push(Buffer.from("1}\n{"))]).toEqual([
      { kind: "line", text: '{"a":1}', bytes: 7 },
    ]);
  });

  it("takes a line of exactly the cap, and keeps only the ends of a longer one", () => {
    const atCap = "x".repeat(100);
    const head = `{"id":1,${"h".repeat(5000)}`;
    const tail = `${"t".repeat(5000)},"id":2}`;
    const over = `${head}${"m".repeat(3 * MIB)}${tail}`;
    const bytes = Buffer.from(`${atCap}\n${over}\nnext\n`);
    // Odd chunk sizes, so the cap and the kept ends fall inside chunks.
    const chunks = cut(
      bytes,
      Array.from({ length: Math.ceil(bytes.length / 65_521) }, (_, i) => i * 65_521),
    );
    const [first, second, third, ...rest] = readLines(100, chunks);
    expect(first).toEqual({ kind: "line", text: atCap, bytes: 100 });
    expect(second).toEqual({
      kind: "oversized",
      bytes: Buffer.byteLength(over),
      head: over.slice(0, 4096),
      tail: over.slice(-4096),
    });
    expect(third).toEqual({ kind: "line", text: "next", bytes: 4 });
    expect(rest).toEqual([]);
    expect(readLines(100, [Buffer.from(`${atCap}y\n`)])[0]?.kind).toBe("oversized");
  });
});

describe("recoverMessage", () => {
  const cases: { head: string; tail: string; id: RequestId | null; response?: boolean }[] = [
    // The SDK's client: id last.
    {
      head: '{"method":"tools/call","params":{"name"',
      tail: 'xx"}},"jsonrpc":"2.0","id":12}',
      id: 12,
    },
    {
      head: '{"method":"tools/call","params":{',
      tail: 'x"}},"jsonrpc":"2.0","id":"a\\"b"}\r',
      id: 'a"b',
    },
    // Id first, or after other scalar members.
    { head: '{"id":5,"method":"tools/call","params":{"content":"xx', tail: 'xx"}}', id: 5 },
    {
      head: ' { "jsonrpc" : "2.0" , "id" : "r-1" , "method":"x","params":{',
      tail: "}}",
      id: "r-1",
    },
    { head: '{"\\u0069d":7,"method":"x","params":{', tail: "}}", id: 7 },
    // Inside params, or after a nested value: not certainly top-level.
    { head: '{"method":"x","params":{"id":9,"a":"', tail: '"}}', id: null },
    { head: '{"method":"x","params":{},"id":9,"a":"', tail: '"}', id: null },
    { head: '{"method":"x","params":{"a":"', tail: '","id":3}}', id: null },
    { head: '{"method":"x","params":{"a":"', tail: 'ends with ,\\"id\\":4}"}}', id: null },
    { head: '{"method":"x","params":{"a":"', tail: '"},"id":3,"jsonrpc":"2.0"}', id: null },
    // Cut off by the head's end, or no request id.
    { head: '{"id":12', tail: "xx", id: null },
    { head: '{"id":"ab', tail: "xx", id: null },
    { head: '{"id":1.5,"method":"x","params":{', tail: "}}", id: null },
    { head: '{"id":null,"method":"x","params":{', tail: "}}", id: null },
    { head: "not json at all", tail: "not json", id: null },
    { head: "[", tail: "]", id: null },
    // Responses, in both orders.
    { head: '{"result":{"roots":[', tail: ']},"jsonrpc":"2.0","id":0}', id: 0, response: true },
    { head: '{"jsonrpc":"2.0","id":1,"error":{"code":1', tail: "}}", id: 1, response: true },
    { head: '{"jsonrpc":"2.0","id":1,"method":"x","result":{', tail: "}}", id: 1 },
  ];
  it.each(cases)("$head … $tail → $id", ({ head, tail, id, response = false }) => {
    expect(recoverMessage(head, tail)).toEqual({ id, response });
  });
});

/** A `freshfs mcp` child spoken to in raw lines on its stdin. */
class RawServer {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every message from the server, in order. */
  readonly received: Record<string, unknown>[] = [];
  private stderr = "";
  private readonly closed: Promise<unknown>;
  private pending = "";
  // By JSON id (null included): the first message, and who waits for one.
  private readonly byId = new Map<string, Record<string, unknown>>();
  private readonly waiting = new Map<string, (message: Record<string, unknown>) => void>();

  constructor(dir: string) {
    const child = spawn(process.execPath, [BIN, "mcp", "--no-daemon", "--root", dir], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.closed = once(child, "close");
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8");
    });
    child.stdout.on("data", (chunk: Buffer) => {
      const lines = (this.pending + chunk.toString("utf8")).split("\n");
      this.pending = lines.pop() ?? "";
      for (const line of lines) {
        const message = JSON.parse(line) as Record<string, unknown>;
        this.received.push(message);
        const key = JSON.stringify(message.id ?? null);
        if (this.byId.has(key)) continue;
        this.byId.set(key, message);
        this.waiting.get(key)?.(message);
      }
    });
  }

  /** Writes raw bytes, waiting for the pipe to drain when it is full. */
  async write(data: string | Buffer): Promise<void> {
    if (!this.child.stdin.write(data)) await once(this.child.stdin, "drain");
  }

  /** The first message with `id` (null: an error that could not name its request). */
  reply(id: RequestId | null): Promise<Record<string, unknown>> {
    const key = JSON.stringify(id);
    const message = this.byId.get(key);
    if (message) return Promise.resolve(message);
    return new Promise((resolve) => this.waiting.set(key, resolve));
  }

  async request(id: RequestId, method: string, params?: object): Promise<Record<string, unknown>> {
    await this.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return this.reply(id);
  }

  async initialize(): Promise<void> {
    const reply = await this.request("init", "initialize", {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "freshfs-test", version: "1.0.0" },
    });
    expect(reply.result).toBeDefined();
    await this.write(
      `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`,
    );
  }

  /** Closes stdin and waits for the process to end; its stderr lines other than the banner. */
  async end(): Promise<{ code: number | null; reports: string[] }> {
    this.child.stdin.end();
    await this.closed;
    const reports = this.stderr.split("\n").filter((line) => line && !/ on stdio$/.test(line));
    return { code: this.child.exitCode, reports };
  }

  /** Peak resident memory so far (VmHWM), in bytes. */
  peakBytes(): number {
    return peakBytes(this.child.pid as number);
  }
}

/** A tools/call of write with `bytes` of content, its id first or not at all. */
function writeLine(id: RequestId | undefined, path: string, bytes: number): string {
  const head = id === undefined ? "" : `"id":${JSON.stringify(id)},`;
  return `{${head}"jsonrpc":"2.0","method":"tools/call","params":{"name":"write","arguments":{"file_path":${JSON.stringify(path)},"content":"${"x".repeat(bytes)}"}}}\n`;
}

describe("freshfs mcp over stdio, on lines it cannot take", () => {
  it("answers a 12 MB request with an error under its id (SDK client) and serves on", async () => {
    const dir = await tempTree({ "a.txt": "hello\n" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--no-daemon", "--root", dir],
      stderr: "pipe",
    });
    const client = new Client({ name: "freshfs-test", version: "1.0.0" });
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(transport);
    const child = Reflect.get(transport, "_process") as ChildProcess;
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const closed = once(child, "close");
    try {
      const content = "x".repeat(12_000_000);
      const refused = await client
        .callTool({ name: "write", arguments: { file_path: "big.txt", content } })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      // Rejected, not timed out: the SDK matched the reply to its request by the id at the end.
      expect(refused).toBeInstanceOf(McpError);
      const error = refused as McpError;
      expect(error.code).toBe(ErrorCode.InvalidRequest);
      expect(error.message).toMatch(/Request too large: it is 120\d{5} bytes/);
      expect(error.data).toEqual({
        requestBytes: expect.any(Number),
        maxRequestBytes: MCP_MAX_REQUEST_BYTES,
      });
      expect(existsSync(join(dir, "big.txt"))).toBe(false);

      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("write");
      const read = await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
      expect(read.isError).toBeFalsy();
      expect(child.exitCode).toBeNull();
    } finally {
      await client.close();
    }
    await closed;
    expect(child.exitCode).toBe(0);
    expect(errors).toEqual([]);
    const reports = stderr.split("\n").filter((line) => /request of \d+ bytes/.test(line));
    expect(reports).toEqual([
      expect.stringMatching(
        /^freshfs mcp: refused a request of 120\d{5} bytes, over the cap of 10485760 bytes \(10 MiB\); answered id \d+$/,
      ),
    ]);
  });

  it("answers a raw 12 MB line with its id first, one without an id with id null, and serves on", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();

    const first = writeLine("big-first", "big.txt", 12_000_000);
    const firstBytes = first.length - 1;
    await server.write(first);
    expect(await server.reply("big-first")).toEqual({
      jsonrpc: "2.0",
      id: "big-first",
      error: {
        code: ErrorCode.InvalidRequest,
        message: `Request too large: it is ${firstBytes} bytes, over the cap of 10485760 bytes (10 MiB) per request, and was not processed. Send less per request: write a larger file in parts (write the first part, then add the rest with edit).`,
        data: { requestBytes: firstBytes, maxRequestBytes: MCP_MAX_REQUEST_BYTES },
      },
    });

    const anonymous = writeLine(undefined, "big.txt", 12_000_000);
    await server.write(anonymous);
    expect(await server.reply(null)).toMatchObject({
      id: null,
      error: {
        code: ErrorCode.InvalidRequest,
        data: { requestBytes: anonymous.length - 1 },
      },
    });

    const listed = await server.request(2, "tools/list");
    expect((listed.result as { tools: unknown[] }).tools).toHaveLength(14);
    expect(existsSync(join(dir, "big.txt"))).toBe(false);

    const { code, reports } = await server.end();
    expect(code).toBe(0);
    expect(reports).toEqual([
      `freshfs mcp: refused a request of ${firstBytes} bytes, over the cap of 10485760 bytes (10 MiB); answered id "big-first"`,
      `freshfs mcp: refused a request of ${anonymous.length - 1} bytes, over the cap of 10485760 bytes (10 MiB); its id could not be read, answered with id null`,
    ]);
  });

  it("takes a request line of exactly the cap and refuses one byte more", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();
    /** A write of `path` whose line is `bytes` long, newline not counted. */
    const sized = (id: string, path: string, bytes: number) =>
      writeLine(id, path, bytes - (writeLine(id, path, 0).length - 1));
    await server.write(sized("at-cap", "cap.txt", MCP_MAX_REQUEST_BYTES));
    expect((await server.reply("at-cap")).error).toBeUndefined();
    expect(existsSync(join(dir, "cap.txt"))).toBe(true);

    await server.write(sized("over", "over.txt", MCP_MAX_REQUEST_BYTES + 1));
    expect(await server.reply("over")).toMatchObject({
      error: { code: ErrorCode.InvalidRequest, data: { requestBytes: MCP_MAX_REQUEST_BYTES + 1 } },
    });
    expect(existsSync(join(dir, "over.txt"))).toBe(false);
    expect((await server.end()).code).toBe(0);
  });

  it("holds far less than a 100 MiB line while reading it", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();
    await server.request(1, "tools/list");
    const before = server.peakBytes();

    await server.write(
      '{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"write","arguments":{"file_path":"huge.txt","content":"',
    );
    const chunk = Buffer.alloc(MIB, "x");
    for (let i = 0; i < 100; i++) await server.write(chunk);
    await server.write('"}}}\n');
    expect((await server.reply("huge")).error).toMatchObject({ code: ErrorCode.InvalidRequest });
    const grown = server.peakBytes() - before;
    console.info(
      `freshfs mcp: peak RSS grew ${(grown / MIB).toFixed(1)} MiB reading a 100 MiB line`,
    );
    // The cap is held until the line passes it; beyond that, Node's own read buffers (64 KiB
    // each, garbage at once) wait for the collector: a bare stdin sink grows 27-40 MiB reading
    // 100-400 MiB, and the peak here stays at 32-43 MiB however long the line.
    expect(grown).toBeLessThan(MCP_MAX_REQUEST_BYTES + 48 * MIB);
    expect(existsSync(join(dir, "huge.txt"))).toBe(false);
    expect((await server.request(2, "ping")).result).toEqual({});
    expect((await server.end()).code).toBe(0);
  });

  it("answers a non-JSON line with a parse error under id null, and serves on", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();
    await server.write("this is not json\n");
    expect(await server.reply(null)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: ErrorCode.ParseError,
        message: expect.stringMatching(/^Parse error: the line is not JSON \(.+\)\.$/),
      },
    });
    expect((await server.request(1, "ping")).result).toEqual({});
    const { code, reports } = await server.end();
    expect(code).toBe(0);
    expect(reports).toEqual([
      expect.stringMatching(
        /^freshfs mcp: a line of 16 bytes is not JSON \(.+\); answered with a parse error$/,
      ),
    ]);
  });

  it("answers JSON that is not JSON-RPC with Invalid Request under its id", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();
    await server.write('{"jsonrpc":"1.0","id":41,"method":"tools/list"}\n');
    expect(await server.reply(41)).toEqual({
      jsonrpc: "2.0",
      id: 41,
      error: {
        code: ErrorCode.InvalidRequest,
        message: expect.stringMatching(
          /^Invalid Request: the line is JSON but not a JSON-RPC 2\.0 message/,
        ),
      },
    });
    await server.write("[1,2]\n");
    expect(await server.reply(null)).toMatchObject({ error: { code: ErrorCode.InvalidRequest } });
    expect((await server.request(42, "tools/list")).result).toBeDefined();
    const { reports } = await server.end();
    expect(reports).toEqual([
      "freshfs mcp: a line of 47 bytes is not a JSON-RPC message; answered with Invalid Request (id 41)",
      "freshfs mcp: a line of 5 bytes is not a JSON-RPC message; answered with Invalid Request (id null)",
    ]);
  });

  it("ignores empty lines and answers no malformed response", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();
    const before = server.received.length;
    // A response never gets a reply: an error under its id would answer the client's own
    // request of that number.
    await server.write('\n\r\n  \t\n{"jsonrpc":"2.0","id":1,"result":"not an object"}\n');
    await server.request(1, "ping");
    expect(server.received.slice(before)).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    const { reports } = await server.end();
    expect(reports).toEqual(["freshfs mcp: dropped a malformed response of 49 bytes (id 1)"]);
  });

  it("answers 10,000 requests sent in one write, stdout full, without a warning", async () => {
    const dir = await tempTree();
    const server = new RawServer(dir);
    await server.initialize();
    const ids = Array.from({ length: 10_000 }, (_, i) => i);
    const lines = ids.map((id) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`);
    // The replies outrun the pipe: writers wait for one shared drain (the SDK's transport adds
    // a listener each, and Node warns on stderr past ten).
    await server.write(lines.join(""));
    const replies = await Promise.all(ids.map((id) => server.reply(id)));
    expect(replies.every((reply) => JSON.stringify(reply.result) === "{}")).toBe(true);
    expect(server.received).toHaveLength(ids.length + 1);
    expect((await server.end()).reports).toEqual([]);
  });
});

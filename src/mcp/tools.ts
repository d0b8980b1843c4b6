/**
 * The tool table as MCP sees it: each entry listed with its schemas as JSON Schema and its
 * annotations, and a call run through the Workspace method of the same entry, its result
 * shaped into content blocks and structured content. Depends on the library's public surface.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type {
  Answered,
  AnyTool,
  CallOptions,
  ToolMethod,
  ToolResult,
  Workspace,
} from "../index.js";
import { TOOLS } from "../tools/table.js";

/** A tool's schema as JSON Schema (draft 7, which every MCP client reads). */
function jsonSchema(schema: z.ZodObject): { type: "object"; [key: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: "draft-7" });
  return { ...rest, type: "object" };
}

/** One entry of the table, with the name of the Workspace method that runs it. */
export interface McpTool {
  readonly method: ToolMethod;
  readonly tool: AnyTool;
  /** As tools/list answers. */
  readonly listed: Tool;
}

function listed(tool: AnyTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(tool.input),
    outputSchema: jsonSchema(tool.output),
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: !tool.readOnly,
      idempotentHint: tool.readOnly,
      openWorldHint: false,
    },
  };
}

/** Every tool, in the table's order. */
export const MCP_TOOLS: readonly McpTool[] = (Object.keys(TOOLS) as ToolMethod[]).map((method) => {
  const tool: AnyTool = TOOLS[method];
  return { method, tool, listed: listed(tool) };
});

/**
 * Runs the tool through its Workspace method (which caps the text within MAX_RESULT_BYTES) and
 * shapes the result: its content blocks (the text, and an image as an image block of its own,
 * bounded by MAX_IMAGE_BYTES), its structured content, and which process answered (`_meta`).
 */
export async function callTool(
  workspace: Workspace,
  { method, tool }: McpTool,
  args: Record<string, unknown>,
  call: CallOptions,
): Promise<CallToolResult> {
  const { answeredBy, ...result }: ToolResult & Answered = await workspace[method](args, call);
  return {
    content: tool.content?.(result) ?? [{ type: "text", text: result.text }],
    structuredContent: tool.structured(result),
    // Which process answered: the user's daemon, or this server (outside the tool's schema).
    _meta: { "freshfs/answeredBy": answeredBy },
  };
}

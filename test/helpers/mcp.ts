/**
 * Test helpers for MCP through the official SDK client: a call, its text, a call that must
 * succeed (with structured content) or fail (an `isError` result naming the code), the tools
 * listed by name, and a structured result checked against the tool's advertised output schema.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { expect } from "vitest";

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

export interface Ok {
  readonly result: CallToolResult;
  readonly text: string;
  readonly structured: Record<string, unknown>;
}

/** A successful call: no isError, and structured content present. */
export async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Ok> {
  const result = await call(client, name, args);
  expect(result.isError, `${name} failed: ${textOf(result)}`).toBeFalsy();
  expect(result.structuredContent, `${name} returned no structuredContent`).toBeDefined();
  return {
    result,
    text: textOf(result),
    structured: result.structuredContent as Record<string, unknown>,
  };
}

/** A failed call: an isError result whose text names `code`; returns the text. */
export async function fails(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  code: string,
): Promise<string> {
  const result = await call(client, name, args);
  const text = textOf(result);
  expect(result.isError, `${name} should have failed with ${code}, got: ${text}`).toBe(true);
  expect(text).toContain(code);
  return text;
}

export async function toolsOf(client: Client): Promise<Map<string, Tool>> {
  const { tools } = await client.listTools();
  return new Map(tools.map((tool) => [tool.name, tool]));
}

/** Validates `data` against a tool's advertised output schema (the SDK's own validator). */
export function validateOutput(tool: Tool | undefined, data: unknown): void {
  expect(tool, "tool listed").toBeDefined();
  expect(tool?.outputSchema, `${tool?.name} has an output schema`).toBeDefined();
  const validate = new AjvJsonSchemaValidator().getValidator(
    tool?.outputSchema as Record<string, unknown>,
  );
  const verdict = validate(data);
  expect(verdict.errorMessage, `${tool?.name}: ${JSON.stringify(data)}`).toBeUndefined();
  expect(verdict.valid).toBe(true);
}

/**
 * What one entry of the tool table is (`ToolDefinition`): the tool's surface for a model (name,
 * description, schemas, aliases, annotations) next to the function that runs it, and how its
 * result is shaped for a client that reads structured content. Depends on `tools/args`,
 * `tools/commit` (types), `tools/limits` and zod.
 */
import type { z } from "zod";
import type { Aliases } from "./args.js";
import type { CallOptions, ToolContext } from "./commit.js";
import { MAX_RESULT_BYTES } from "./limits.js";

/** What every tool resolves to: a result whose `text` is written for the model. */
export interface ToolResult {
  readonly text: string;
}

/** A block of a tool result's content, as MCP carries it. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string };

/** An array's items; nothing for anything else (a distributive helper of `ParamName`). */
type ItemOf<T> = T extends readonly (infer Item)[] ? Item : never;

/**
 * The names a tool's parameter type declares: its own, and those of the objects its lists
 * hold (multi_edit's `edits`), which are read with the same aliases.
 */
type ParamName<P> = P extends object
  ?
      | Extract<keyof P, string>
      | {
          [K in keyof P]-?: ItemOf<P[K]> extends infer Item
            ? Item extends object
              ? Extract<keyof Item, string>
              : never
            : never;
        }[keyof P]
  : never;

/** A tool's aliases, each of them (and the parameter it spells) declared by its parameter type. */
export type AliasesOf<P> = { readonly [K in ParamName<P>]?: readonly ParamName<P>[] };

/**
 * One tool. `P` is the parameter type the Workspace method takes and `R` its result; both are
 * taken from the handler alone. The functions are methods (checked bivariantly), so that entries of
 * different types are one list to the code that reads the table whole.
 */
export interface ToolDefinition<P, R extends ToolResult> {
  /** The tool's name for a model (its MCP name): Claude Code's, where it has the tool. */
  readonly name: string;
  readonly title: string;
  /** What a model is told: what the tool does, and every limit, from the constant enforcing it. */
  readonly description: string;
  /**
   * The parameters a model should send: Claude Code's names and types. Arguments are not
   * checked against it: the handler reads them (`Args`), so the aliases, numbers and booleans
   * sent as strings, `null` for "not given" and lists sent as JSON text all work, and every
   * complaint names the parameter in a sentence a model can act on.
   */
  readonly input: z.ZodObject;
  /** The other spellings of the parameters a model may send: opencode's and pi's. */
  readonly aliases: NoInfer<AliasesOf<P>>;
  /**
   * Changes nothing. Every other tool may replace or remove what is there (MCP's
   * `destructiveHint`) and is not idempotent.
   */
  readonly readOnly: boolean;
  /** Runs the tool in the Workspace's context; the Workspace then caps the text. */
  handler(
    context: ToolContext,
    params: P,
    aliases: Aliases,
    call: CallOptions | undefined,
  ): Promise<R>;
  /** The structured content's schema. */
  readonly output: z.ZodObject;
  /** The structured content: the result without its text (and without bulk the text holds). */
  structured(result: NoInfer<R>): Record<string, unknown>;
  /** The content blocks, when there is more than the text (images). */
  content?(result: NoInfer<R>): ContentBlock[];
}

/** A tool of any parameter and result types, as the code reading the whole table sees it. */
export type AnyTool = ToolDefinition<unknown, ToolResult>;

/**
 * A handler loaded at its tool's first call: a process that only lists the tools, or runs them
 * in the daemon (a `freshfs mcp` server, ~5 MB smaller for it), never loads the code that reads,
 * writes and searches.
 */
export function later<H extends AnyTool["handler"]>(load: () => Promise<H>): H {
  let loaded: Promise<AnyTool["handler"]> | undefined;
  const run: AnyTool["handler"] = async (context, params, aliases, call) => {
    loaded ??= load();
    return (await loaded)(context, params, aliases, call);
  };
  return run as H;
}

/** A table entry, its types taken from its handler. */
export function defineTool<P, R extends ToolResult>(
  tool: ToolDefinition<P, R>,
): ToolDefinition<P, R> {
  return tool;
}

/** The structured content of most tools: the result without its text. */
export function withoutText(result: object): Record<string, unknown> {
  const { text: _text, ...rest } = result as Record<string, unknown>;
  return rest;
}

/**
 * The text and the structured content travel in one result, and a client may forward either to
 * the model: a diff is kept in the structured content only while it takes at most half of
 * MAX_RESULT_BYTES (the text summarizes a longer one by its changed lines).
 */
export const DIFFS_KEPT_BYTES = MAX_RESULT_BYTES / 2;

/** A mutation's structured content: without its text, and without a diff past DIFFS_KEPT_BYTES. */
export function withoutTextOrLongDiff(result: {
  readonly diff?: string | undefined;
}): Record<string, unknown> {
  const rest = withoutText(result);
  if (result.diff !== undefined && Buffer.byteLength(result.diff) > DIFFS_KEPT_BYTES) {
    const { diff: _diff, ...kept } = rest;
    return { ...kept, diffOmitted: true };
  }
  return rest;
}

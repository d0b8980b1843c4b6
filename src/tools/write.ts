/**
 * The `write` tool: create a file, or overwrite one the model has read and that has not changed
 * since (the guard). An overwrite keeps the file's encoding, BOM, line endings and
 * trailing-newline state. Depends on `tools/`, `state/`.
 */
import { type Aliases, Args } from "./args.js";
import {
  assertBasedOnRead,
  type CallOptions,
  checkGuard,
  commitWrite,
  readCurrent,
  type ToolContext,
  underLocks,
} from "./commit.js";
import { firstChangedLine, unifiedDiff } from "./diff.js";
import { MAX_RESULT_BYTES } from "./limits.js";
import { diffForModel, NOTES_RESERVE_BYTES } from "./output.js";
import { changedCharacters, isCodeFile, normalizeIntroducedQuotes } from "./quotes.js";
import { encode, overwriting, splitLines } from "./text.js";

export interface WriteParams {
  /** Aliases: `filePath`, `path`. */
  file_path?: string;
  /** The whole new content of the file. Alias: `text`. */
  content?: string;
  filePath?: string;
  path?: string;
  text?: string;
}

export interface WriteResult {
  readonly path: string;
  /** The file did not exist before. */
  readonly created: boolean;
  /** Bytes written. */
  readonly bytes: number;
  readonly lines: number;
  /** For an overwrite: the unified diff against the previous content. */
  readonly diff: string | undefined;
  readonly firstChangedLine: number | undefined;
  /** Typographic quotes written as ASCII (in code files, where a curly quote ends no string). */
  readonly quotesNormalized: number;
  readonly warnings: readonly string[];
  readonly text: string;
}

// An overwrite's diff is for a reader; past this many lines the text says how many instead.
const DIFF_SHOWN_LINES = 200;
const DIFF_BUDGET = MAX_RESULT_BYTES - NOTES_RESERVE_BYTES;

export async function writeTool(
  context: ToolContext,
  input: WriteParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<WriteResult> {
  const args = new Args("write", input, aliases);
  const path = args.requiredText("file_path");
  const content = args.requiredString("content");
  const target = context.roots.confineFile(path);
  const shown = context.roots.display(target.lexical);
  const reconfine = () => context.roots.reconfine(path, target);
  return underLocks(context, [target.real], "write", call, reconfine, async () => {
    const current = await readCurrent(target, "write", shown);
    const warnings = await checkGuard(context, target);
    assertBasedOnRead(context, target, current);
    const overwrite = overwriting(current.exists ? current.bytes : undefined, content, true);
    const { before, like } = overwrite;
    let text = overwrite.text;
    let quotesNormalized = 0;
    if (isCodeFile(target.lexical)) {
      const normalized = normalizeIntroducedQuotes(text, before);
      quotesNormalized = changedCharacters(normalized, text);
      text = normalized;
    }
    const bytes = encode(text, like);
    await commitWrite(context, target, { current, bytes, warnings });

    const created = !current.exists;
    const lines = splitLines(text).length;
    const diff = created ? undefined : unifiedDiff(shown, before, text);
    const first = created ? undefined : firstChangedLine(before, text);
    const parts = [
      created
        ? `Created ${shown} (${lines} line${lines === 1 ? "" : "s"}).`
        : `Wrote ${shown} (${lines} line${lines === 1 ? "" : "s"})${first === undefined ? "; the content is unchanged" : `, first changed line ${first}`}.`,
    ];
    if (quotesNormalized > 0) {
      parts.push(
        `${quotesNormalized} typographic quote${quotesNormalized === 1 ? " was" : "s were"} written as ASCII: in code, a quote kind the file did not already use is taken for a model's slip.`,
      );
    }
    if (diff !== undefined && first !== undefined) {
      const diffLines = diff.split("\n");
      parts.push(
        diffLines.length <= DIFF_SHOWN_LINES
          ? diffForModel(diff, DIFF_BUDGET)
          : `(The diff has ${diffLines.length} lines; not shown.)`,
      );
    }
    parts.push(...warnings);
    return {
      path: target.lexical,
      created,
      bytes: bytes.byteLength,
      lines,
      diff,
      firstChangedLine: first,
      quotesNormalized,
      warnings,
      text: parts.join("\n\n"),
    };
  });
}

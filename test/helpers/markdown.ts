/**
 * Test helpers: the fenced code blocks of a Markdown page, with what the page says about each
 * (an `<!-- example: ... -->` comment on the line above, a ```text block right after), its
 * relative links and its headings' anchors. Pure: text in, records out.
 */

/** What the comment above a block asks: the fixture it runs in, or not to run it (and why). */
export type ExampleMarker =
  | { readonly kind: "fixture"; readonly name: string }
  | { readonly kind: "skip"; readonly reason: string };

export interface CodeBlock {
  /** The page, as given to `codeBlocks`. */
  readonly page: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string (`ts`, `sh`, `json`, `text`), empty when it has none. */
  readonly lang: string;
  /** The block's text, its fence's indentation removed, ending with a line break. */
  readonly code: string;
  readonly marker: ExampleMarker | undefined;
  /** The ```text block that follows with only blank lines between: what the example prints. */
  readonly output: string | undefined;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*$/;
const MARKER = /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/;

interface RawBlock {
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** Index of the first line after the closing fence. */
  readonly end: number;
}

/** The fenced block opening at `lines[start]`, or undefined when that line opens none. */
function blockAt(lines: readonly string[], start: number, page: string): RawBlock | undefined {
  const open = FENCE.exec(lines[start] ?? "");
  if (!open) return undefined;
  const indent = open[1]?.length ?? 0;
  const fence = open[2] ?? "";
  const body: string[] = [];
  for (let index = start + 1; index < lines.length; index++) {
    const text = lines[index] ?? "";
    if (text.trim() === fence) {
      return { line: start + 1, lang: open[3] ?? "", code: body.join(""), end: index + 1 };
    }
    body.push(`${text.slice(Math.min(indent, text.length - text.trimStart().length))}\n`);
  }
  throw new Error(`${page}:${start + 1}: a code fence that is never closed`);
}

function markerAbove(lines: readonly string[], fence: number, page: string) {
  let index = fence - 1;
  while (index >= 0 && (lines[index] ?? "").trim() === "") index--;
  const comment = MARKER.exec(lines[index] ?? "");
  if (!comment) return undefined;
  const [kind, ...rest] = (comment[1] ?? "").split(/\s+/);
  const argument = rest.join(" ");
  if (kind === "fixture" && /^[\w-]+$/.test(argument)) return { kind, name: argument } as const;
  if (kind === "skip" && argument !== "") return { kind, reason: argument } as const;
  throw new Error(
    `${page}:${index + 1}: an example marker is "fixture NAME" or "skip REASON", not "${comment[1]}"`,
  );
}

/** Every fenced block of `text`; a ```text block that follows another is that one's output. */
export function codeBlocks(page: string, text: string): CodeBlock[] {
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  let index = 0;
  while (index < lines.length) {
    const block = blockAt(lines, index, page);
    if (!block) {
      index++;
      continue;
    }
    let next = block.end;
    while (next < lines.length && (lines[next] ?? "").trim() === "") next++;
    const following = block.lang === "text" ? undefined : blockAt(lines, next, page);
    const output = following?.lang === "text" ? following : undefined;
    blocks.push({
      page,
      line: block.line,
      lang: block.lang,
      code: block.code,
      marker: markerAbove(lines, index, page),
      output: output?.code,
    });
    index = output ? output.end : block.end;
  }
  return blocks;
}

/** The text outside fenced blocks (where links and headings are). */
function prose(text: string): string[] {
  const lines = text.split("\n");
  const kept: string[] = [];
  for (let index = 0; index < lines.length; ) {
    const block = blockAt(lines, index, "page");
    if (block) {
      index = block.end;
      continue;
    }
    kept.push(lines[index] ?? "");
    index++;
  }
  return kept;
}

/** The targets of the page's inline links that are not web addresses: `path#anchor`. */
export function relativeLinks(text: string): string[] {
  const targets: string[] = [];
  for (const line of prose(text)) {
    for (const link of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = link[1] ?? "";
      if (!/^[a-z]+:/i.test(target)) targets.push(target);
    }
  }
  return targets;
}

/** The anchors GitHub gives the page's headings (`## The scan cache` → `the-scan-cache`). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] ?? "")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    let anchor = slug;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${slug}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

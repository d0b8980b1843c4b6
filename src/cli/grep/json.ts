/**
 * The JSON printers: rg's `--json` (JSON Lines: begin, match and context, end per file, a
 * summary at the end) and freshfs's `--json-result` (the library's result as one document).
 * Depends on io/bytes (paths that are not UTF-8) and the library's result types.
 */
import { statSync } from "node:fs";
import { encodeName, hasEscapedBytes } from "../../io/bytes.js";
import type { GrepLine } from "../../search/grep/grep.js";
import { linesByFile, type PathResult } from "./path-result.js";

/** `--json-result`: one path's result, or an array of them when several paths were searched. */
export function printJsonResult(results: readonly PathResult[]): string {
  const documents = results.map(({ result }) => result);
  return `${JSON.stringify(documents.length === 1 ? documents[0] : documents, null, 2)}\n`;
}

/** What rg's `end` record counts of one file, and its summary adds up. */
interface FileStats {
  readonly bytes_printed: number;
  readonly bytes_searched: number;
  readonly matched_lines: number;
  readonly matches: number;
}

/** rg's `--json`; `started`: when the command began, for the summary's elapsed time. */
export function printJsonLines(results: readonly PathResult[], started: number): string {
  const out: string[] = [];
  const emit = (value: unknown) => {
    const line = `${JSON.stringify(value)}\n`;
    out.push(line);
    return Buffer.byteLength(line);
  };
  const totals = { bytes_printed: 0, bytes_searched: 0, matched_lines: 0, matches: 0 };
  let searches = 0;
  for (const { result, name } of results) {
    for (const [path, lines] of linesByFile(result.lines)) {
      const stats = emitFile(name(path), lines, `${result.root}/${path}`, emit);
      totals.bytes_printed += stats.bytes_printed;
      totals.bytes_searched += stats.bytes_searched;
      totals.matched_lines += stats.matched_lines;
      totals.matches += stats.matches;
      // rg's summary counts the searches that printed something.
      searches++;
    }
  }
  // rg writes the summary's keys in sorted order.
  const total = elapsed(performance.now() - started);
  emit({
    data: {
      elapsed_total: { human: total.human, nanos: total.nanos, secs: total.secs },
      stats: {
        bytes_printed: totals.bytes_printed,
        bytes_searched: totals.bytes_searched,
        elapsed: { human: total.human, nanos: total.nanos, secs: total.secs },
        matched_lines: totals.matched_lines,
        matches: totals.matches,
        searches,
        searches_with_match: searches,
      },
    },
    type: "summary",
  });
  return out.join("");
}

/** One file's records: begin, its match and context lines, end with its stats. */
function emitFile(
  shown: string,
  lines: readonly GrepLine[],
  onDisk: string,
  emit: (value: unknown) => number,
): FileStats {
  const begun = performance.now();
  // rg's form for a path that is not UTF-8: its bytes, in base64.
  const path = hasEscapedBytes(shown)
    ? { bytes: encodeName(shown).toString("base64") }
    : { text: shown };
  let printedBytes = emit({ type: "begin", data: { path } });
  let matchedLines = 0;
  let matches = 0;
  for (const line of lines) {
    const submatches = (line.submatches ?? []).map((m) => ({
      match: { text: m.text },
      start: m.start,
      end: m.end,
    }));
    if (line.match) {
      matchedLines++;
      matches += submatches.length;
    }
    printedBytes += emit({
      type: line.match ? "match" : "context",
      data: {
        path,
        lines: { text: `${line.text}\n` },
        line_number: line.line,
        absolute_offset: line.offset ?? 0,
        submatches,
      },
    });
  }
  const stats = {
    elapsed: elapsed(performance.now() - begun),
    searches: 1,
    searches_with_match: 1,
    bytes_searched: sizeOf(onDisk),
    bytes_printed: printedBytes,
    matched_lines: matchedLines,
    matches,
  };
  emit({ type: "end", data: { path, binary_offset: null, stats } });
  return stats;
}

/** rg's `elapsed`: seconds, nanoseconds and the human form. */
function elapsed(ms: number) {
  const nanos = Math.round(ms * 1e6);
  return {
    secs: Math.floor(nanos / 1e9),
    nanos: nanos % 1e9,
    human: `${(ms / 1000).toFixed(6)}s`,
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

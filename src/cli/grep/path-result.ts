/**
 * One path's search as the sort and the printers take it: the library's result and how rg
 * names its files (joined to the path as it was written). Depends on the library's result types.
 */
import type { GrepLine, GrepResult } from "../../search/grep/grep.js";

export interface PathResult {
  readonly result: GrepResult;
  readonly name: (path: string) => string;
}

/** The lines of each file, files in the order they come. */
export function linesByFile(lines: readonly GrepLine[]): Map<string, GrepLine[]> {
  const out = new Map<string, GrepLine[]>();
  for (const line of lines) {
    const these = out.get(line.path);
    if (these) these.push(line);
    else out.set(line.path, [line]);
  }
  return out;
}

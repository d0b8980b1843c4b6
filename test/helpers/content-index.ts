/**
 * Test helpers for the content index: a tree's grep through the live tree (indexed) and without
 * a listing kept (every file read), the wait until it answers live and its index is built, and
 * an answer without the fields that say how it was reached.
 */
import { expect } from "vitest";
import { type GrepOptions, type GrepResult, grep, waitForContentIndex } from "../../src/index.js";

/**
 * Greps of the tree at `root()` (read at each call: tests set their root in `beforeAll`):
 * `indexed` through the live tree and its index, `plain` with no listing kept and no index.
 */
export function greps(root: () => string) {
  return {
    indexed: (pattern: string, options: GrepOptions = {}) =>
      grep(pattern, { path: root(), cache: true, watch: true, ...options }),
    plain: (pattern: string, options: GrepOptions = {}) =>
      grep(pattern, { path: root(), ...options }),
  };
}

/** Indexed greps until one answers live (the first walks; the next set the watches up). */
export async function untilLive(indexed: (pattern: string) => Promise<GrepResult>): Promise<void> {
  let last: GrepResult | undefined;
  for (let i = 0; i < 20 && last?.freshness !== "live"; i++) last = await indexed("warm-up");
  expect(last?.freshness).toBe("live");
}

/** Live, then the index built (a live answer starts it). */
export async function warmIndex(
  root: string,
  indexed: (pattern: string) => Promise<GrepResult>,
): Promise<void> {
  await untilLive(indexed);
  await waitForContentIndex(root);
}

/** What a grep answered, without the fields that say how (freshness, files read). */
export function answer(result: GrepResult) {
  return {
    lines: result.lines,
    files: result.files,
    counts: result.counts,
    totalRecords: result.totalRecords,
    truncated: result.truncated,
    filesSearched: result.filesSearched,
    binary: result.skipped.binary,
    tooLarge: result.skipped.tooLarge,
    unreadable: result.skipped.unreadable,
  };
}

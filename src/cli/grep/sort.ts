/**
 * `--sort` and `--sortr`: the files of each path's result in the order asked. Path order is the
 * library's own (the listing's); by a time, each directory's entries are ordered as rg's walk
 * orders them (`compareByEntries`), by their times in nanoseconds. Depends on scan/order and the
 * library's result types.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { compareByEntries } from "../../scan/order.js";
import type { GrepResult } from "../../search/grep/grep.js";
import { fromCwd } from "../io.js";
import type { FileSort } from "./args.js";
import { linesByFile, type PathResult } from "./path-result.js";

type TimeKey = "modified" | "accessed" | "created";

/**
 * A sort of the results `order` asks for. Made before the search: for `accessed`, the access
 * times are taken now, as reading a file or a directory moves its own.
 */
export function fileSorter(
  order: FileSort,
  paths: readonly (string | undefined)[],
): (results: readonly PathResult[]) => PathResult[] {
  const accessed = order.by === "accessed" ? accessTimesBefore(paths) : undefined;
  return (results) => results.map((one) => sorted(one, order, accessed));
}

function sorted(
  one: PathResult,
  order: FileSort,
  accessed: ReadonlyMap<string, bigint> | undefined,
): PathResult {
  const { by, reverse } = order;
  const { result } = one;
  if (by === "path" || by === "none") {
    if (!reverse) return one;
    return { ...one, result: reorder(result, (paths) => [...paths].reverse()) };
  }
  // rg sorts each directory's entries as it walks it: a directory by its own time, its
  // files after it together, wherever its time puts it among its siblings.
  const times = new Map<string, bigint>();
  const at = (path: string) => {
    let time = times.get(path);
    if (time === undefined) {
      time = timeOf(`${result.root}/${path}`, by, accessed);
      times.set(path, time);
    }
    return time;
  };
  const compare = (a: string, b: string) =>
    compareByEntries(a, b, (p, q) => {
      const [tp, tq] = [at(p), at(q)];
      const byTime = tp < tq ? -1 : tp > tq ? 1 : p < q ? -1 : 1;
      return reverse ? -byTime : byTime;
    });
  return { ...one, result: reorder(result, (paths) => [...paths].sort(compare)) };
}

/** The result with its files (lines grouped by file, counts, paths) in the order `arrange` gives. */
function reorder(result: GrepResult, arrange: (paths: readonly string[]) => string[]): GrepResult {
  const files = arrange(result.files);
  const countOf = new Map(result.counts.map((c) => [c.path, c]));
  const counts = arrange([...countOf.keys()]).map(
    (path) => countOf.get(path) as (typeof result.counts)[number],
  );
  const byPath = linesByFile(result.lines);
  const lines = arrange([...byPath.keys()]).flatMap((path) => byPath.get(path) ?? []);
  return { ...result, files, counts, lines };
}

/**
 * Access times as they were before this run read anything: every entry under the roots, each
 * taken before its directory is read, as rg's walk sorts a directory's entries before it
 * enters them.
 */
function accessTimesBefore(roots: readonly (string | undefined)[]): Map<string, bigint> {
  const times = new Map<string, bigint>();
  const visit = (path: string) => {
    let entries: string[];
    try {
      entries = readdirSync(path);
    } catch {
      return;
    }
    const dirs: string[] = [];
    for (const name of entries) {
      const child = `${path}/${name}`;
      try {
        const stat = statSync(child, { bigint: true });
        times.set(child, stat.atimeNs);
        if (stat.isDirectory() && name !== ".git") dirs.push(child);
      } catch {
        // Gone, or a dangling link: nothing to sort.
      }
    }
    for (const dir of dirs) visit(dir);
  };
  for (const root of roots) {
    try {
      visit(realpathSync(fromCwd(root ?? ".")));
    } catch {
      // A root that is not there: its search says so.
    }
  }
  return times;
}

function timeOf(
  path: string,
  by: TimeKey,
  accessed: ReadonlyMap<string, bigint> | undefined,
): bigint {
  const before = accessed?.get(resolve(path));
  if (before !== undefined) return before;
  try {
    // Nanoseconds, as rg compares them: files made within a millisecond still have an order.
    const stat = statSync(path, { bigint: true });
    return by === "modified" ? stat.mtimeNs : by === "accessed" ? stat.atimeNs : stat.birthtimeNs;
  } catch {
    return 0n;
  }
}

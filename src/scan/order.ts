/**
 * The listing order, defined once: paths compared component by component, sibling names by
 * UTF-16 code units (so `/` sorts before every other character). The walk lists in it, the
 * live tree keeps its entries in it, the content index's segments are keyed by it, and grep
 * streams results in it, so a merge of two of these never needs to sort again. It is
 * `rg --sort path`'s order, code units standing in for bytes: the two differ only between
 * names whose first difference is a character past U+FFFF and one from U+E000 up. Pure;
 * depends on nothing.
 */

/** Sibling names: by UTF-16 code units. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Two relative paths in listing order: a directory's entries come right after it. */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === 0x2f) return -1;
    if (y === 0x2f) return 1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Two paths in an order that sorts each directory's entries by `compareEntries` (given the two
 * entries' paths, which differ only in their last component) and keeps every directory's
 * contents together after it, as a walk that sorts each directory it reads lists them (rg's
 * `--sort modified`, say). With `compareNames` on the last components it is `comparePaths`.
 */
export function compareByEntries(
  a: string,
  b: string,
  compareEntries: (a: string, b: string) => number,
): number {
  let from = 0;
  for (;;) {
    const x = a.indexOf("/", from);
    const y = b.indexOf("/", from);
    const endA = x === -1 ? a.length : x;
    const endB = y === -1 ? b.length : y;
    if (endA !== endB || a.slice(from, endA) !== b.slice(from, endB)) {
      return compareEntries(a.slice(0, endA), b.slice(0, endB));
    }
    if (x === -1 || y === -1) return (x === -1 ? 0 : 1) - (y === -1 ? 0 : 1);
    from = endA + 1;
  }
}

/** The path of an item of a listing: itself for a string, else its `path`. */
function pathOf(item: string | { readonly path: string }): string {
  return typeof item === "string" ? item : item.path;
}

/** First index of `items` (in listing order) whose path is not before `path`. */
export function lowerBound(
  items: readonly (string | { readonly path: string })[],
  path: string,
): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePaths(pathOf(items[mid] as string), path) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * First index at or after `from` of `items` (in listing order) whose path is not inside the
 * directory `dir`: the contents of a directory are one run of the listing.
 */
export function subtreeEnd(
  items: readonly (string | { readonly path: string })[],
  from: number,
  dir: string,
): number {
  const prefix = `${dir}/`;
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pathOf(items[mid] as string).startsWith(prefix)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

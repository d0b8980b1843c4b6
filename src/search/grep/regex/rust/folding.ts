/**
 * Case folding where JavaScript cannot scope it: whether the whole pattern ignores case (the
 * `i` flag) or only parts of it do, and the orbits of simple case folding that spell those
 * parts out by hand (V8 in Node 20 has no scoped flags). Pure; depends on `tree` (types) and
 * V8's own `iu` matching, which the orbits are computed from.
 */
import type { ClassExpr, RNode } from "./tree.js";

/** Whether a character has a case (folding changes it). */
function hasCase(cp: number): boolean {
  const char = String.fromCodePoint(cp);
  return char.toLowerCase() !== char.toUpperCase();
}

/** Whether a literal or class can match a character that has a case. */
function cased(node: RNode): boolean {
  if (node.t === "lit") return hasCase(node.cp);
  if (node.t !== "class") return false;
  const anyCased = (set: ClassExpr): boolean => {
    switch (set.t) {
      case "perl":
        return set.kind === "w";
      case "ranges":
        // A wide range is taken to hold one; a narrow one is looked through.
        return set.ranges.some(([from, to]) => {
          if (to - from > 0x7f) return true;
          for (let cp = from; cp <= to; cp++) if (hasCase(cp)) return true;
          return false;
        });
      case "prop":
        return true;
      case "union":
        return set.items.some(anyCased);
      case "not":
        return true;
      default:
        return anyCased(set.a) || anyCased(set.b);
    }
  };
  return anyCased(node.set);
}

/** Counts the literals and classes with a case that fold, and those that do not. */
export function literalsAndClasses(node: RNode, out: { folded: number; plain: number }): void {
  switch (node.t) {
    case "lit":
    case "class":
      if (!cased(node)) return;
      if (node.fold) out.folded++;
      else out.plain++;
      return;
    case "group":
    case "repeat":
      literalsAndClasses(node.item, out);
      return;
    case "concat":
    case "alt":
      for (const item of node.items) literalsAndClasses(item, out);
      return;
    default:
      return;
  }
}

/** Case folding's orbits (simple case folding, as V8's `iu` applies it), built on first use. */
let orbits: Map<number, readonly number[]> | undefined;

export function caseOrbits(): Map<number, readonly number[]> {
  if (orbits) return orbits;
  /** Union-find over the code points a case mapping joins: each non-root to a smaller one. */
  const parent = new Map<number, number>();
  const root = (x: number): number => {
    let r = x;
    for (let up = parent.get(r); up !== undefined; up = parent.get(r)) r = up;
    return r;
  };
  const joined = new Set<number>();
  // Every cased letter is below U+20000; single code point case mappings join the orbits.
  for (let cp = 0; cp < 0x20000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const char = String.fromCodePoint(cp);
    for (const other of [char.toLowerCase(), char.toUpperCase()]) {
      const o = other.codePointAt(0) as number;
      if (o === cp || other.length !== String.fromCodePoint(o).length) continue;
      const [a, b] = [root(cp), root(o)];
      if (a !== b) parent.set(Math.max(a, b), Math.min(a, b));
      joined.add(cp);
      joined.add(o);
    }
  }
  const groups = new Map<number, number[]>();
  for (const cp of joined) {
    const r = root(cp);
    const group = groups.get(r) ?? [];
    group.push(cp);
    groups.set(r, group);
  }
  orbits = new Map();
  for (const group of groups.values()) {
    // Kept where V8's case-insensitive matching agrees: simple case folding, not the full
    // mappings that may have joined them.
    for (const cp of group) {
      const probe = new RegExp(`\\u{${cp.toString(16)}}`, "iu");
      const same = group.filter((other) => probe.test(String.fromCodePoint(other)));
      if (same.length > 1) orbits.set(cp, same);
    }
  }
  return orbits;
}

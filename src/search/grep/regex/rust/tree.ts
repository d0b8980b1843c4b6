/**
 * A pattern in rg's syntax as the parser reads it: the tree the writer turns into JavaScript,
 * with the flags in force at each point already applied to its nodes. Pure; depends on nothing.
 */

/** One character from a set: the tree of a class, leaves and set operations. */
export type ClassExpr =
  /** Code point ranges, inclusive. */
  | { readonly t: "ranges"; readonly ranges: readonly (readonly [number, number])[] }
  /** A Unicode property, as JavaScript names it (`Script=Greek`, `Lu`, `Alphabetic`). */
  | { readonly t: "prop"; readonly name: string }
  /** `\d`, `\s`, `\w`: Unicode, or ASCII under `(?-u)`. */
  | { readonly t: "perl"; readonly kind: "d" | "s" | "w"; readonly unicode: boolean }
  | { readonly t: "union"; readonly items: readonly ClassExpr[] }
  | { readonly t: "not"; readonly item: ClassExpr }
  | {
      readonly t: "and" | "minus" | "xor";
      readonly a: ClassExpr;
      readonly b: ClassExpr;
    };

export type RNode =
  | { readonly t: "empty" }
  | { readonly t: "lit"; readonly cp: number; readonly fold: boolean }
  | { readonly t: "dot"; readonly all: boolean }
  | { readonly t: "class"; readonly set: ClassExpr; readonly fold: boolean }
  /** `^` (`multi` true) or `\A`; `$` or `\z`. */
  | { readonly t: "start" | "end"; readonly multi: boolean }
  | { readonly t: "word"; readonly negated: boolean; readonly unicode: boolean }
  | { readonly t: "group"; readonly capture: boolean; readonly name?: string; readonly item: RNode }
  | { readonly t: "concat" | "alt"; readonly items: readonly RNode[] }
  | {
      readonly t: "repeat";
      readonly min: number;
      readonly max: number;
      readonly greedy: boolean;
      readonly item: RNode;
    };

/** The flags of rg's syntax as they stand at one point of the pattern. */
export interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
  u: boolean;
  x: boolean;
}

/** A sequence as one node: nothing, its one item, or a concatenation. */
export function concat(items: RNode[]): RNode {
  if (items.length === 0) return { t: "empty" };
  return items.length === 1 ? (items[0] as RNode) : { t: "concat", items };
}

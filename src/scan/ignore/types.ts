/**
 * rg's file types as filters (`-t`, `-T`): a type names globs of file names (the table is
 * `default-types`), matched against a path's last component. Depends on `errors`, picomatch
 * and `default-types`.
 */
import picomatch from "picomatch";
import { FreshfsError } from "../../errors.js";
import { FILE_TYPES } from "./default-types.js";

export interface TypeFilter {
  readonly passes: (path: string) => boolean;
  /** A `type` selected it: that overrides hiddenness, as in rg. */
  readonly selects: (path: string) => boolean;
}

function typeGlobs(name: string): readonly string[] {
  if (name === "all") return Object.values(FILE_TYPES).flat();
  const known = Object.hasOwn(FILE_TYPES, name) ? FILE_TYPES[name] : undefined;
  if (!known) {
    throw new FreshfsError(
      "INVALID_ARGUMENT",
      `Unknown file type ${JSON.stringify(name)} (rg's ${Object.keys(FILE_TYPES).length} types, and all; 'freshfs grep --type-list' lists them).`,
    );
  }
  return known;
}

/**
 * rg's `-t` and `-T`: of the types named, the last that holds the file decides (selected, or
 * not); a file of no type named is searched only when no type was selected.
 */
export function typeFilter(
  types: readonly string[],
  typesNot: readonly string[],
): TypeFilter | undefined {
  if (types.length === 0 && typesNot.length === 0) return undefined;
  // rg adds the selections first, then the negations: a negation wins over a selection.
  const named = [
    ...types.map((name) => ({ name, select: true })),
    ...typesNot.map((name) => ({ name, select: false })),
  ].map(({ name, select }) => ({
    select,
    test: picomatch(typeGlobs(name) as string[], { dot: true, basename: true, posix: true }),
  }));
  const selecting = types.length > 0;
  const verdict = (path: string): boolean | undefined => {
    for (let i = named.length - 1; i >= 0; i--) {
      const one = named[i] as (typeof named)[number];
      if (one.test(path)) return one.select;
    }
    return undefined;
  };
  return {
    passes: (path) => verdict(path) ?? !selecting,
    selects: (path) => verdict(path) === true,
  };
}

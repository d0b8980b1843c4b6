/**
 * The named classes of rg's syntax: POSIX's `[[:name:]]` (ASCII ranges) and Unicode properties
 * (`\pL`, `\p{Greek}`, `\p{sc=Latin}`), resolved as Rust's regex-syntax resolves their names,
 * to the names JavaScript knows (from the two unicode-property-*-aliases-ecmascript tables).
 * Pure; depends on `errors` (types).
 */
import propertyAliases from "unicode-property-aliases-ecmascript";
import valueAliases from "unicode-property-value-aliases-ecmascript";
import type { FreshfsError } from "../../../../errors.js";

export const POSIX: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

/** UAX44-LM3, as regex-syntax matches property names: case, spaces, `_`, `-` and an `is` prefix ignored. */
function loose(name: string): string {
  const out = name.toLowerCase().replace(/[\s_-]/g, "");
  return out.startsWith("is") && out.length > 2 ? out.slice(2) : out;
}

/** Loose names of JavaScript's properties and values, to their JavaScript spelling. */
interface PropertyTables {
  readonly binary: ReadonlyMap<string, string>;
  readonly category: ReadonlyMap<string, string>;
  readonly script: ReadonlyMap<string, string>;
}

let tables: PropertyTables | undefined;

function propertyTables(): PropertyTables {
  if (tables) return tables;
  const binary = new Map<string, string>();
  const nonBinary = new Set(["General_Category", "Script", "Script_Extensions"]);
  for (const [alias, canonical] of propertyAliases) {
    if (nonBinary.has(canonical)) continue;
    binary.set(loose(alias), canonical);
    binary.set(loose(canonical), canonical);
  }
  // Not in PropertyAliases.txt, and binary properties in ECMAScript (and names in Rust).
  for (const name of ["Any", "ASCII", "Assigned"]) binary.set(loose(name), name);
  const values = (property: string) => {
    const out = new Map<string, string>();
    for (const [alias, canonical] of valueAliases.get(property) ?? []) {
      out.set(loose(alias), canonical);
      out.set(loose(canonical), canonical);
    }
    return out;
  };
  tables = { binary, category: values("General_Category"), script: values("Script") };
  return tables;
}

/**
 * `\p{name}` as JavaScript spells it, resolved as regex-syntax resolves it: a lone name is a
 * binary property, else a general category, else a script (not its extensions); `key=value`
 * (or `key:value`) for `gc`, `sc` and `scx`. Undefined when Rust knows no such property; a
 * property Rust has and JavaScript lacks (Age, the break properties) throws.
 */
export function resolveProperty(
  raw: string,
  fail: (message: string) => FreshfsError,
): string | undefined {
  const t = propertyTables();
  const split = /^([^=:!]*)(?:!?[=:])(.*)$/s.exec(raw);
  if (split) {
    const key = loose(split[1] as string);
    const value = loose(split[2] as string);
    if (key === "gc" || key === "generalcategory") {
      const name = t.category.get(value);
      return name === undefined ? undefined : `General_Category=${name}`;
    }
    if (key === "sc" || key === "script") {
      const name = t.script.get(value);
      return name === undefined ? undefined : `Script=${name}`;
    }
    if (key === "scx" || key === "scriptextensions") {
      const name = t.script.get(value);
      return name === undefined ? undefined : `Script_Extensions=${name}`;
    }
    const unsupported = [
      "age",
      "gcb",
      "graphemeclusterbreak",
      "wb",
      "wordbreak",
      "sb",
      "sentencebreak",
    ];
    if (unsupported.includes(key)) {
      throw fail(
        `the Unicode property ${split[1]} is one JavaScript's regex engine does not have (rg has it); match the characters with a class instead`,
      );
    }
    return undefined;
  }
  const name = loose(raw);
  // regex-syntax's special case: `cf` is the Format category, not Case_Folding.
  if (name !== "cf") {
    const binary = t.binary.get(name);
    if (binary !== undefined) return binary;
  }
  const category = t.category.get(name);
  if (category !== undefined) return category;
  const script = t.script.get(name);
  return script === undefined ? undefined : `Script=${script}`;
}

/**
 * The house kept in order: every source file and every function short enough to read, each
 * folder importing only the layers below it, and no import cycle. The sources are read with
 * the TypeScript compiler API (syntax only, nothing is type-checked), so a failure names the
 * file, the line and the rule to fix.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

const MAX_FILE_LINES = 700;
const MAX_FUNCTION_LINES = 150;

/**
 * Files and functions over the limits whose splits are under way. Each must still offend: once
 * one is split, this test fails until it is taken off the list, so the list cannot go stale.
 * A function is named `file: name`, its name as `functionsOf` gives it.
 */
const KNOWN_LONG_FILES: readonly string[] = [];
const KNOWN_LONG_FUNCTIONS: readonly string[] = [];

/**
 * The layers of `src/`, each a folder (`errors`, `index` and `version` are the files at its top),
 * and the layers each imports, as the imports are: ARCHITECTURE.md's order, from the top,
 * cli → mcp, daemon → index (the public API) → tools → search → content → live → scan → io → errors,
 * state beside scan, client (the daemon's, which tools and cli use) beside them, never gone up. A file may always import its own layer. A new import of a
 * layer below is added here when it is meant; one of a layer above is what this test is for.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  cli: ["mcp", "daemon", "client", "search", "scan", "io", "errors", "version"],
  mcp: ["index", "tools", "errors", "version"],
  daemon: ["index", "content", "live", "scan", "client", "io", "errors", "version"],
  index: ["tools", "client", "search", "content", "live", "scan", "state", "io", "errors"],
  tools: ["client", "search", "scan", "state", "io", "errors"],
  search: ["content", "live", "scan", "native", "io", "errors"],
  native: ["errors"],
  content: ["live", "scan", "io"],
  live: ["scan", "io", "errors"],
  scan: ["native", "io", "errors"],
  state: ["io", "errors"],
  client: ["io", "errors", "version"],
  io: ["errors"],
  version: [],
  errors: [],
};

/** Whether `layer` imports `other`, directly or through the layers it imports (by the table). */
function dependsOn(layer: string, other: string, seen = new Set<string>()): boolean {
  if (seen.has(layer)) return false;
  seen.add(layer);
  return (MAY_IMPORT[layer] ?? []).some((next) => next === other || dependsOn(next, other, seen));
}

/** A place in the sources, as a failure names it: `src/file.ts:line`. */
function at(file: string, line: number): string {
  return `src/${file}:${line}`;
}

/** Every TypeScript source under `src/`, relative to it, `/`-separated, sorted. */
function sourceFiles(dir = SRC): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      files.push(relative(SRC, path).split("\\").join("/"));
    }
  }
  return files.sort();
}

function parse(file: string): ts.SourceFile {
  const text = readFileSync(join(SRC, file), "utf8");
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line + 1;
}

function lineCount(source: ts.SourceFile): number {
  const text = source.getFullText();
  const lines = text.split("\n").length;
  return text.endsWith("\n") ? lines - 1 : lines;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

function nameText(name: ts.Node | undefined, source: ts.SourceFile): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return name.getText(source);
}

/**
 * A function's own name: its declared name; a class member's as `Class.member`; a function
 * expression's or an arrow's, the variable or property it is assigned to; else `(anonymous)`.
 */
function ownName(node: FunctionNode, source: ts.SourceFile): string {
  const className = (member: ts.Node) => {
    const owner = member.parent;
    return owner && ts.isClassLike(owner) ? (nameText(owner.name, source) ?? "(class)") : "";
  };
  if (ts.isConstructorDeclaration(node)) return `${className(node)}.constructor`;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    const member = nameText(node.name, source) ?? "(member)";
    const owner = className(node);
    return owner === "" ? member : `${owner}.${member}`;
  }
  if (ts.isFunctionDeclaration(node)) return nameText(node.name, source) ?? "(default)";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
    return nameText(parent.name, source) ?? "(anonymous)";
  }
  if (ts.isPropertyDeclaration(parent)) {
    return `${className(parent)}.${nameText(parent.name, source) ?? "(member)"}`;
  }
  if (ts.isFunctionExpression(node) && node.name) return node.name.text;
  return "(anonymous)";
}

interface FunctionFacts {
  /** Its own name, after the names of the functions it is nested in (`outer > inner`). */
  readonly name: string;
  readonly line: number;
  /** From the line of its signature to the line of its closing brace. */
  readonly lines: number;
}

/** Every function with a body in the file, nested ones too. */
function functionsOf(source: ts.SourceFile): FunctionFacts[] {
  const found: FunctionFacts[] = [];
  const visit = (node: ts.Node, outer: string | undefined) => {
    let inside = outer;
    if (isFunction(node) && node.body) {
      const own = ownName(node, source);
      inside = outer === undefined ? own : `${outer} > ${own}`;
      const line = lineOf(source, node.getStart(source));
      found.push({ name: inside, line, lines: lineOf(source, node.end) - line + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(source, undefined);
  return found;
}

interface ImportFacts {
  /** The file imported, relative to `src/`. */
  readonly target: string;
  readonly line: number;
}

/**
 * The files of `src/` a file imports: static imports and re-exports (types too: a type is a
 * dependency as well) and dynamic `import()`s of a literal path.
 */
function importsOf(file: string, source: ts.SourceFile): ImportFacts[] {
  const found: ImportFacts[] = [];
  const note = (specifier: ts.Expression | undefined, node: ts.Node) => {
    if (!specifier || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith(".")) return;
    const path = resolve(SRC, dirname(file), specifier.text.replace(/\.js$/, ".ts"));
    found.push({
      target: relative(SRC, path).split("\\").join("/"),
      line: lineOf(source, node.getStart(source)),
    });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      note(node.moduleSpecifier, node);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      note(node.arguments[0], node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The layer of a file: its folder under `src/`, or its name for a file at the top. */
function layerOf(file: string): string {
  const slash = file.indexOf("/");
  return slash === -1 ? file.replace(/\.ts$/, "") : file.slice(0, slash);
}

/** The import cycles among `graph`'s files (Tarjan's strongly connected components). */
function cyclesOf(graph: ReadonlyMap<string, readonly ImportFacts[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const { target } of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfImport = (graph.get(file) ?? []).some(({ target }) => target === file);
    if (component.length > 1 || selfImport) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return cycles;
}

/** One cycle written out: each file with the line of its import of the next. */
function describeCycle(
  component: readonly string[],
  graph: ReadonlyMap<string, readonly ImportFacts[]>,
): string {
  const members = new Set(component);
  const first = component[0] as string;
  const path: string[] = [];
  const seen = new Set<string>();
  for (let file = first; !seen.has(file); ) {
    seen.add(file);
    const next = (graph.get(file) ?? []).find(({ target }) => members.has(target));
    if (!next) break;
    path.push(`${at(file, next.line)} imports ${next.target}`);
    file = next.target;
  }
  return `import cycle: ${path.join(" → ")} (a module must not depend on itself through others)`;
}

const files = sourceFiles();
const sources = new Map(files.map((file) => [file, parse(file)]));

describe("the house", () => {
  it(`has no file in src/ over ${MAX_FILE_LINES} lines`, () => {
    const problems: string[] = [];
    for (const [file, source] of sources) {
      const lines = lineCount(source);
      const known = KNOWN_LONG_FILES.includes(file);
      if (lines > MAX_FILE_LINES && !known) {
        problems.push(
          `${at(file, 1)}: ${lines} lines, over the ${MAX_FILE_LINES} a file may have: split it along its seams`,
        );
      } else if (lines <= MAX_FILE_LINES && known) {
        problems.push(
          `${at(file, 1)}: ${lines} lines now, within the limit: take it off KNOWN_LONG_FILES in test/house.test.ts`,
        );
      }
    }
    for (const file of KNOWN_LONG_FILES) {
      if (!sources.has(file)) {
        problems.push(`src/${file} is gone: take it off KNOWN_LONG_FILES in test/house.test.ts`);
      }
    }
    expect(problems).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const problems: string[] = [];
    const offending = new Set<string>();
    for (const [file, source] of sources) {
      for (const fn of functionsOf(source)) {
        if (fn.lines <= MAX_FUNCTION_LINES) continue;
        const key = `${file}: ${fn.name}`;
        offending.add(key);
        if (KNOWN_LONG_FUNCTIONS.includes(key)) continue;
        problems.push(
          `${at(file, fn.line)}: ${fn.name} is ${fn.lines} lines, over the ${MAX_FUNCTION_LINES} a function may have: split it into the steps it takes`,
        );
      }
    }
    for (const key of KNOWN_LONG_FUNCTIONS) {
      if (!offending.has(key)) {
        problems.push(
          `src/${key} is no longer over ${MAX_FUNCTION_LINES} lines (or is gone): take it off KNOWN_LONG_FUNCTIONS in test/house.test.ts`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it("imports only downward: each layer of src/ the layers below it", () => {
    const problems: string[] = [];
    for (const [file, source] of sources) {
      const layer = layerOf(file);
      const allowed = MAY_IMPORT[layer];
      if (!allowed) {
        problems.push(
          `${at(file, 1)}: its layer "${layer}" is not in MAY_IMPORT (test/house.test.ts): say which layers it may import`,
        );
        continue;
      }
      for (const { target, line } of importsOf(file, source)) {
        const to = layerOf(target);
        if (to === layer || allowed.includes(to)) continue;
        problems.push(
          dependsOn(to, layer)
            ? `${at(file, line)}: imports ${target}, a layer above ${layer}/ (${to} depends on ${layer}): a lower layer never imports an upper one; move what both need down`
            : `${at(file, line)}: imports ${target}, but ${layer}/ imports only ${allowed.join(", ") || "nothing"}: if ${to}/ is meant as a dependency of ${layer}/, add it to MAY_IMPORT in test/house.test.ts`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it("states its rules itself: no comment cites a design document that is not in the repository", () => {
    // The documents freshfs was first built from are not here; a rule they gave is written out
    // where it applies (and in docs/), so a reader never meets a reference they cannot follow.
    const citation = /\bcontract (?:part )?\d|\bseeds? 0\d\d\b|\bthe seed'?s?\b/i;
    const problems: string[] = [];
    for (const [file, source] of sources) {
      source.text.split("\n").forEach((line, i) => {
        if (citation.test(line)) problems.push(`${at(file, i + 1)}: ${line.trim()}`);
      });
    }
    expect(problems).toEqual([]);
  });

  it("has no import cycle between modules", () => {
    const graph = new Map(
      [...sources].map(([file, source]) => [file, importsOf(file, source)] as const),
    );
    const cycles = cyclesOf(graph).map((component) => describeCycle(component, graph));
    expect(cycles).toEqual([]);
  });

  it("finds what it checks: functions of every kind, imports of every kind, and cycles", () => {
    const source = ts.createSourceFile(
      "sample.ts",
      [
        'import type { A } from "./a.js";',
        'export { B } from "../b.js";',
        "export function top() {",
        "  const inner = () => {",
        '    return import("./c.js");',
        "  };",
        "  return inner;",
        "}",
        "class K {",
        "  constructor() {}",
        "  get g() { return 1; }",
        "  #m() { return function named() {}; }",
        "  p = () => 0;",
        "}",
      ].join("\n"),
      ts.ScriptTarget.Latest,
      true,
      ts.ScriptKind.TS,
    );
    expect(functionsOf(source).map(({ name, line, lines }) => [name, line, lines])).toEqual([
      ["top", 3, 6],
      ["top > inner", 4, 3],
      ["K.constructor", 10, 1],
      ["K.g", 11, 1],
      ["K.#m", 12, 1],
      ["K.#m > named", 12, 1],
      ["K.p", 13, 1],
    ]);
    expect(importsOf("scan/sample.ts", source)).toEqual([
      { target: "scan/a.ts", line: 1 },
      { target: "b.ts", line: 2 },
      { target: "scan/c.ts", line: 5 },
    ]);
    const graph = new Map<string, ImportFacts[]>([
      ["a.ts", [{ target: "b.ts", line: 1 }]],
      ["b.ts", [{ target: "c.ts", line: 2 }]],
      ["c.ts", [{ target: "a.ts", line: 3 }]],
      ["d.ts", [{ target: "a.ts", line: 4 }]],
    ]);
    expect(cyclesOf(graph)).toEqual([["a.ts", "b.ts", "c.ts"]]);
    expect(describeCycle(["a.ts", "b.ts", "c.ts"], graph)).toBe(
      "import cycle: src/a.ts:1 imports b.ts → src/b.ts:2 imports c.ts → src/c.ts:3 imports a.ts (a module must not depend on itself through others)",
    );
  });
});

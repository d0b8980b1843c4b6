/**
 * The rule files a live tree's listing depends on, and what a change to one re-walks. Inside
 * the listing they are names in a watched directory (`.gitignore`, `.ignore`, `.rgignore`,
 * `.git`): a change there re-derives that directory from its parent, or the whole tree at the
 * root. Outside it (ancestors' ignore files, a repository's `info/exclude` and configuration,
 * the global excludes file, where a linked `.ignore` leads, the root's own name in its parent)
 * they are `RuleSources`' places, watched apart: a change to one re-walks the whole tree. Each
 * file is fingerprinted as soon as the walk has read it, so a change made while its watch is set
 * up is seen at the watch's confirmation. Depends on `scan/` (the walk's types) and `io/bytes`.
 */
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fsPath } from "../io/bytes.js";
import type { WalkedDirectory } from "../scan/walk.js";

/** Names whose change re-derives the rules of the directory holding them. */
const RULE_NAMES = new Set([".gitignore", ".ignore", ".rgignore", ".git"]);

/**
 * What changes to `names` in the listed directory `rel` re-walk: nothing when no rule file is
 * among them; the whole tree for the root's own; else the directory itself, as the entry `name`
 * of its parent `parent`, so that its rules are derived again from the parent's.
 */
export function rewalkFor(
  rel: string,
  names: Iterable<string>,
): "tree" | { readonly parent: string; readonly name: string } | undefined {
  for (const name of names) {
    if (!RULE_NAMES.has(name)) continue;
    if (rel === "") return "tree";
    const parent = dirname(rel);
    return { parent: parent === "." ? "" : parent, name: basename(rel) };
  }
  return undefined;
}

/** The ignore-file bytes a directory's rules came from, kept only when it has any. */
export function heldIgnoreBytes(dir: WalkedDirectory): WalkedDirectory["ignoreBytes"] | undefined {
  const [gitignore, ignore, rgignore] = dir.ignoreBytes;
  return gitignore || ignore || rgignore ? dir.ignoreBytes : undefined;
}

/** Whether the ignore files of a directory still hold the bytes its rules came from. */
export function sameIgnoreBytes(
  absolute: string,
  bytes: WalkedDirectory["ignoreBytes"] | undefined,
): boolean {
  const read = (name: string) => {
    try {
      return readFileSync(fsPath(`${absolute}/${name}`));
    } catch {
      return undefined;
    }
  };
  if (!bytes) return true;
  const now = [read(".gitignore"), read(".ignore"), read(".rgignore")];
  return bytes.every((was, i) => {
    const is = now[i];
    return was === undefined ? is === undefined : is?.equals(was) === true;
  });
}

/**
 * Fingerprints, right after the walk read `dir`, the rule files it brought: a nested
 * repository's sources, and where a `.ignore` or `.rgignore` that is a symlink leads.
 */
export function printSources(dir: WalkedDirectory, prints: Map<string, string>): void {
  for (const file of nestedSources(dir)) prints.set(file, fingerprint(file));
  for (const link of dir.linkedIgnore) {
    try {
      const target = realpathSync(link);
      prints.set(target, fingerprint(target));
    } catch {
      // Dangling since: the link's own name is watched in its directory.
    }
  }
}

/** A nested repository's sources, when `dir` is the top of one. */
function nestedSources(dir: WalkedDirectory): readonly string[] {
  const repository = dir.frame.ignore?.repository;
  return repository && repository.root === dir.frame.absolute && dir.frame.rel !== ""
    ? repository.sources
    : [];
}

/** A file's state, to tell whether a rule source changed while its watch was set up. */
export function fingerprint(path: string): string {
  try {
    const stats = lstatSync(fsPath(path));
    if (!stats.isFile()) return `${stats.isDirectory() ? "d" : "o"}:${stats.dev}:${stats.ino}`;
    return `f:${createHash("sha1")
      .update(readFileSync(fsPath(path)))
      .digest("hex")}`;
  } catch {
    return "-";
  }
}

/**
 * Adds the place to watch for `file` to `places`: its nearest existing directory, with the name
 * that leads to it (so that making the missing directories is seen too).
 */
function addPlace(places: Map<string, Set<string>>, file: string): void {
  let dir = dirname(file);
  let name = basename(file);
  while (!isDirectory(dir) && dirname(dir) !== dir) {
    name = basename(dir);
    dir = dirname(dir);
  }
  let names = places.get(dir);
  if (!names) {
    names = new Set();
    places.set(dir, names);
  }
  names.add(name);
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(fsPath(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A tree's watched places outside its listing, whose change means its rules changed (or, for
 * the root's name in its parent, that the root moved): the fingerprint of each rule file, and
 * the places whose watch is not yet confirmed.
 */
export class RuleSources {
  readonly #root: string;
  /** Watched directory → names whose change means "rescan". */
  #places = new Map<string, Set<string>>();
  /** Each rule file's fingerprint, taken when the walk read it. */
  #prints = new Map<string, string>();
  /** Places whose watch is not yet confirmed → the request that confirms it. */
  readonly #unconfirmed = new Map<string, number>();

  constructor(root: string) {
    this.#root = root;
  }

  /** Places whose watch is not yet confirmed. */
  get unconfirmed(): number {
    return this.#unconfirmed.size;
  }

  /** Whether `dir` is watched as a place of rule files. */
  has(dir: string): boolean {
    return this.#places.has(dir);
  }

  /**
   * What a change to `name` in `dir` ("" for any name) means: the root was moved or deleted,
   * the rules changed, or nothing to the rules.
   */
  changeAt(dir: string, name: string): "root" | "rules" | undefined {
    const names = this.#places.get(dir);
    if (!names || (name !== "" && !names.has(name))) return undefined;
    const root = this.#root;
    return dir === dirname(root) && (name === "" || name === basename(root)) ? "root" : "rules";
  }

  /**
   * Makes the rule files of a whole walk (`prints`) the sources, with the root's name in its
   * parent, every place awaiting `request`. Returns the places to watch, and those no longer
   * needed.
   */
  /** The rule files fingerprinted. */
  files(): string[] {
    return [...this.#prints.keys()];
  }

  replace(prints: Map<string, string>, request: number): { watch: string[]; dropped: string[] } {
    const places = new Map<string, Set<string>>();
    for (const file of prints.keys()) addPlace(places, file);
    if (dirname(this.#root) !== this.#root) addPlace(places, this.#root);
    const dropped = [...this.#places.keys()].filter((dir) => !places.has(dir));
    this.#places = places;
    this.#prints = prints;
    this.#unconfirmed.clear();
    for (const dir of places.keys()) this.#unconfirmed.set(dir, request);
    return { watch: [...places.keys()], dropped };
  }

  /**
   * Adds the rule files a walk below the root found (a `git init` in a subdirectory, a linked
   * ignore file's target), their places awaiting `request`. Returns the places to watch.
   */
  add(prints: Map<string, string>, request: number): string[] {
    const added = new Map<string, Set<string>>();
    for (const [file, print] of prints) {
      this.#prints.set(file, print);
      addPlace(added, file);
    }
    for (const [dir, names] of added) {
      const known = this.#places.get(dir);
      if (known) for (const name of names) known.add(name);
      else this.#places.set(dir, names);
      this.#unconfirmed.set(dir, request);
    }
    return [...added.keys()];
  }

  /** Whether the report of `request` on `dir` confirms a place awaiting it (then no longer). */
  confirm(dir: string, request: number): boolean {
    const awaited = this.#unconfirmed.get(dir);
    if (awaited === undefined || request < awaited) return false;
    this.#unconfirmed.delete(dir);
    return true;
  }

  /** Whether a rule file no longer has its fingerprint: changed while its watch was set up. */
  changedSincePrinted(): boolean {
    for (const [file, print] of this.#prints) if (fingerprint(file) !== print) return true;
    return false;
  }

  /** Forgets every place (the tree stops watching) and returns them. */
  release(): string[] {
    const places = [...this.#places.keys()];
    this.#places.clear();
    return places;
  }
}

/**
 * The directories a live tree's listing entered, each with what the walk saw when it read it,
 * and which of their watches are confirmed. A watch is set up after the read, so it is confirmed
 * by a read made after it: a difference says what changed in between, for the tree to look at
 * again. Depends on `scan/` (the walk's types), `live/backend` (the reports), `live/sources`
 * (the ignore files' bytes) and `live/edits` (the names a listing holds).
 */
import { readdirSync } from "node:fs";
import { fsPath } from "../io/bytes.js";
import {
  type DirectoryFrame,
  type EntryType,
  typeOf,
  type WalkedDirectory,
  withRealNames,
} from "../scan/walk.js";
import type { WatchedReport } from "./backend.js";
import { childNames, type LiveListing } from "./edits.js";
import { heldIgnoreBytes, sameIgnoreBytes } from "./sources.js";

interface DirState {
  readonly frame: DirectoryFrame;
  readonly dev: number;
  readonly ino: number;
  readonly digest: string;
  /** The `.gitignore`, `.ignore` and `.rgignore` bytes its rules came from, when it has any. */
  readonly ignoreBytes: WalkedDirectory["ignoreBytes"] | undefined;
  /** The watch request whose report (or a later one) confirms it; 0 once confirmed. */
  request: number;
}

function stateOf(dir: WalkedDirectory, request: number): DirState {
  return {
    frame: dir.frame,
    dev: dir.dev,
    ino: dir.ino,
    digest: dir.digest,
    ignoreBytes: heldIgnoreBytes(dir),
    request,
  };
}

/**
 * What a watch's confirmation found of its directory since the walk read it: nothing; other
 * names (`names`); other ignore-file bytes (`rules`); another directory under its path
 * (`replaced`); no directory it can watch (`gone`).
 */
export type Finding = "same" | "names" | "rules" | "replaced" | "gone";

/** A live tree's directories by relative path, and the ones it watches. */
export class WatchedDirectories {
  readonly #states = new Map<string, DirState>();
  /** Directories watched for this tree (absolute), confirmed or not. */
  readonly #watched = new Set<string>();
  #unconfirmed = 0;
  /**
   * Paths (relative) named by events that no listing took in: each may be another directory by
   * now, even one under the old inode number (ext4 hands a freed number to the next mkdir), so
   * the next walk of the whole tree watches it and everything below it anew.
   */
  readonly #suspects = new Set<string>();

  /** Directories whose watch is not yet confirmed. */
  get unconfirmed(): number {
    return this.#unconfirmed;
  }

  /** Directories watched for this tree. */
  get watchCount(): number {
    return this.#watched.size;
  }

  /** Where directory `rel` is and the ignore rules inside it, when the listing entered it. */
  frame(rel: string): DirectoryFrame | undefined {
    return this.#states.get(rel)?.frame;
  }

  /** The relative paths of every directory the listing entered. */
  rels(): Iterable<string> {
    return this.#states.keys();
  }

  isWatched(absolute: string): boolean {
    return this.#watched.has(absolute);
  }

  /**
   * Events about to be dropped unapplied (`pending`: directory → names, "" for all of them):
   * a walk of the whole tree takes their changes in, but only a new watch sees a directory
   * replaced.
   */
  suspect(pending: ReadonlyMap<string, ReadonlySet<string>>): void {
    for (const [rel, names] of pending) {
      for (const name of names) {
        this.#suspects.add(name === "" ? rel : rel === "" ? name : `${rel}/${name}`);
      }
    }
  }

  #suspected(rel: string): boolean {
    if (this.#suspects.size === 0) return false;
    if (this.#suspects.has("")) return true;
    for (let at = rel.length; at > 0; at = rel.lastIndexOf("/", at - 1)) {
      if (this.#suspects.has(rel.slice(0, at))) return true;
    }
    return false;
  }

  /**
   * The directories of a walk of the whole tree (`walked`, by relative path). `trusted`: the
   * events so far are sound, so a directory still watched and confirmed, the same one (device
   * and inode) and named by no dropped event, stays confirmed; every other one awaits
   * `request`. Returns the directories to watch (`fresh`) and those no longer in the listing
   * (`gone`).
   */
  replaceAll(
    walked: ReadonlyMap<string, WalkedDirectory>,
    trusted: boolean,
    request: number,
  ): { fresh: string[]; gone: string[] } {
    const previous = this.#states;
    const keep = new Map<string, DirState>();
    const fresh: string[] = [];
    for (const [rel, dir] of walked) {
      const old = previous.get(rel);
      const same = old?.request === 0 && old.dev === dir.dev && old.ino === dir.ino;
      if (trusted && same && !this.#suspected(rel)) {
        keep.set(rel, stateOf(dir, 0));
      } else {
        keep.set(rel, stateOf(dir, request));
        fresh.push(dir.frame.absolute);
      }
    }
    this.#suspects.clear();
    const gone: string[] = [];
    for (const [rel, old] of previous) if (!keep.has(rel)) gone.push(old.frame.absolute);
    previous.clear();
    for (const [rel, dir] of keep) previous.set(rel, dir);
    this.#unconfirmed = fresh.length;
    for (const path of gone) this.#watched.delete(path);
    for (const path of fresh) this.#watched.add(path);
    return { fresh, gone };
  }

  /**
   * The directories an application of changes removed (`removed`, relative) and walked
   * (`added`, awaiting `request`; one both removed and added is walked again). Returns the
   * directories to watch, and those to stop watching.
   */
  edit(
    removed: readonly string[],
    added: readonly WalkedDirectory[],
    request: number,
  ): { watch: string[]; unwatch: string[] } {
    const addedByRel = new Map(added.map((dir) => [dir.frame.rel, dir]));
    const unwatch: string[] = [];
    for (const rel of removed) {
      const state = this.#states.get(rel);
      if (!state) continue;
      this.#states.delete(rel);
      if (state.request !== 0) this.#unconfirmed--;
      if (!addedByRel.has(rel)) {
        unwatch.push(state.frame.absolute);
        this.#watched.delete(state.frame.absolute);
      }
    }
    const watch: string[] = [];
    for (const [rel, dir] of addedByRel) {
      this.#states.set(rel, stateOf(dir, request));
      this.#unconfirmed++;
      this.#watched.add(dir.frame.absolute);
      watch.push(dir.frame.absolute);
    }
    return { watch, unwatch };
  }

  /**
   * Whether directory `rel` awaits the report of `request`. Only a read made after this tree's
   * own request confirms: an earlier one (another tree's) may predate changes this tree was not
   * yet subscribed to hear about.
   */
  awaits(rel: string, request: number): boolean {
    const state = this.#states.get(rel);
    return state !== undefined && state.request !== 0 && request >= state.request;
  }

  /** Confirms directory `rel` (which `awaits` the report) with `report`: what it found. */
  confirm(rel: string, report: WatchedReport): Finding {
    const state = this.#states.get(rel) as DirState;
    let found: Finding = "same";
    if (report.code !== undefined) {
      this.#watched.delete(report.path);
      found = "gone";
    } else if (report.dev !== state.dev || report.ino !== state.ino) {
      found = "replaced";
    } else if (report.digest !== state.digest) {
      found = "names";
    } else if (!sameIgnoreBytes(report.path, state.ignoreBytes)) {
      found = "rules";
    }
    state.request = 0;
    this.#unconfirmed--;
    return found;
  }

  /** Forgets every directory (the tree stops watching) and returns those watched. */
  release(): string[] {
    const watched = [...this.#watched];
    this.#watched.clear();
    this.#states.clear();
    this.#suspects.clear();
    this.#unconfirmed = 0;
    return watched;
  }
}

/** Every name the directory holds now (with its type) or held as far as `listing` knows. */
export function namesNow(
  listing: LiveListing,
  frame: DirectoryFrame,
): Map<string, EntryType | undefined> {
  const types = new Map<string, EntryType | undefined>();
  const { rel, prefix, absolute } = frame;
  for (const name of childNames(listing, rel, prefix)) types.set(name, undefined);
  try {
    const dirents = withRealNames(readdirSync(fsPath(absolute), { withFileTypes: true }), absolute);
    for (const dirent of dirents) types.set(dirent.name, typeOf(dirent));
  } catch {
    // Gone or unreadable: its parent's event says so; every name known is gone from here.
  }
  return types;
}

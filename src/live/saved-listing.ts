/**
 * A live tree's listing as a process that kept it saved it (the daemon, beside its content
 * index snapshot), to answer the first calls of the next one while its own walk and watches come
 * up. Depends on `scan/` and `live/sources`.
 *
 * A listing is what the walk makes of each walked directory's names and types, and of the rule
 * files: a saved listing keeps, beside its entries, each walked directory's stat (device, inode, mtime and
 * ctime in nanoseconds, taken before the listing was last synchronized with the watcher) and each
 * rule file's print (its content's digest, in the tree or not). It answers a call only when, for
 * that call, every directory's stat and every rule file's print is still the one kept: any name
 * made, removed or renamed in a directory changes its mtime and ctime, and a rule file edited in
 * place changes its print, so the listing is then the one a walk would make now. As with the
 * content index (git's racy-timestamp rule), a directory changed within `RACY_NS` of the save is
 * never trusted. Anything else, and the call waits for the walk.
 */
import { type BigIntStats, lstatSync } from "node:fs";
import { basename } from "node:path";
import { fsPath } from "../io/bytes.js";
import type { ScanResult } from "../scan/cache.js";
import { type EntryType, entryKinds, ScanEntry, type SkippedFile } from "../scan/walk.js";
import { fingerprint } from "./sources.js";

/**
 * As the content index's snapshots (`content/snapshot` RACY_NS): two seconds covers the coarsest
 * file-system clocks. Its own copy: `content/` sits above `live/`, and the index's build thread,
 * which loads the snapshot module, would load the walker through this one.
 */
const RACY_NS = 2_000_000_000n;
export const SAVED_LISTING_FORMAT = 1;

/** The rule files a directory may hold, whose content the listing depends on. */
const RULE_NAMES = new Set([".gitignore", ".ignore", ".rgignore"]);

const TYPE_CHAR: Readonly<Record<EntryType, string>> = { file: "f", dir: "d", symlink: "l" };
const CHAR_TYPE: Readonly<Record<string, EntryType>> = { f: "file", d: "dir", l: "symlink" };

/** A saved listing, as JSON holds it. */
export interface SavedListingData {
  readonly format: number;
  readonly root: string;
  readonly includeHidden: boolean;
  readonly useGitignore: boolean;
  /** Wall-clock nanoseconds when the stamps were taken, as a string. */
  readonly savedAtNs: string;
  /** The entries' paths, NUL-joined, in listing order, and one letter per entry for its type. */
  readonly paths: string;
  readonly types: string;
  /** Skipped files: path, then 1/0 for hidden and ignored. */
  readonly skipped: readonly (readonly [string, number, number])[];
  readonly warnings: readonly { readonly path: string; readonly message: string }[];
  /** The walked directories (relative, NUL-joined) and their stamps, `dev:ino:mtimeNs:ctimeNs`. */
  readonly dirs: string;
  readonly stamps: readonly string[];
  /** Rule files (absolute) and their prints (`sources.fingerprint`). */
  readonly rules: readonly (readonly [string, string])[];
}

/** What a saved listing needs from before the sync: the time, the directories' stamps, the rule prints. */
export interface ListingStamps {
  readonly savedAtNs: bigint;
  readonly dirs: readonly string[];
  readonly stamps: readonly string[];
  readonly rules: readonly (readonly [string, string])[];
}

function stampOf(stats: BigIntStats | undefined): string {
  return stats === undefined || !stats.isDirectory()
    ? "-"
    : `${stats.dev}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

function statOf(path: string): BigIntStats | undefined {
  try {
    return lstatSync(fsPath(path), { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function absolute(root: string, rel: string): string {
  return rel === "" ? root : `${root}/${rel}`;
}

/**
 * The stamps of `dirs` and the prints of the rule files: the outside ones (`sources`) and those
 * the listing (entries and skipped files) holds.
 */
export function takeStamps(
  root: string,
  dirs: readonly string[],
  sources: Iterable<string>,
  listing: Pick<ScanResult, "entries" | "skipped">,
): ListingStamps {
  const savedAtNs = BigInt(Date.now()) * 1_000_000n;
  const stamps = dirs.map((rel) => stampOf(statOf(absolute(root, rel))));
  const files = new Set(sources);
  for (const { path } of [...listing.entries, ...listing.skipped]) {
    if (RULE_NAMES.has(basename(path))) files.add(absolute(root, path));
  }
  const rules = [...files].sort().map((file) => [file, fingerprint(file)] as const);
  return { savedAtNs, dirs, stamps, rules };
}

/** What is saved of a listing synchronized after `stamps` were taken. */
export function savedListingOf(
  tree: { readonly root: string; readonly includeHidden: boolean; readonly useGitignore: boolean },
  stamps: ListingStamps,
  listing: Pick<ScanResult, "entries" | "skipped" | "warnings">,
): SavedListingData {
  return {
    format: SAVED_LISTING_FORMAT,
    root: tree.root,
    includeHidden: tree.includeHidden,
    useGitignore: tree.useGitignore,
    savedAtNs: stamps.savedAtNs.toString(),
    paths: listing.entries.map((entry) => entry.path).join("\0"),
    types: listing.entries.map((entry) => TYPE_CHAR[entry.type]).join(""),
    skipped: listing.skipped.map((s) => [s.path, s.hidden ? 1 : 0, s.ignored ? 1 : 0] as const),
    warnings: listing.warnings.map(({ path, message }) => ({ path, message })),
    dirs: stamps.dirs.join("\0"),
    stamps: stamps.stamps,
    rules: stamps.rules,
  };
}

/** A saved listing loaded: its data, and its listing made once. */
export class SavedListing {
  readonly data: SavedListingData;
  readonly #dirs: readonly string[];
  #listing: Pick<ScanResult, "entries" | "skipped" | "warnings"> | undefined;

  constructor(data: SavedListingData) {
    this.data = data;
    this.#dirs = data.dirs === "" && data.stamps.length === 0 ? [] : data.dirs.split("\0");
  }

  /** Whether the data is whole and of this format (a foreign or damaged one is never used). */
  get wellFormed(): boolean {
    const { data } = this;
    const entries = data.paths === "" ? 0 : data.paths.split("\0").length;
    return (
      data.format === SAVED_LISTING_FORMAT &&
      typeof data.root === "string" &&
      entries === data.types.length &&
      this.#dirs.length === data.stamps.length &&
      Array.isArray(data.rules) &&
      Array.isArray(data.skipped) &&
      Array.isArray(data.warnings)
    );
  }

  /**
   * Whether the listing is the one a walk would make now: every directory's stamp and every rule
   * file's print as kept, none within the racy window. A stat per directory and a digest per
   * rule file (the Linux tree: 5,092 and ~40, about 20 ms).
   */
  confirmed(): boolean {
    const { data } = this;
    const racyFrom = BigInt(data.savedAtNs) - RACY_NS;
    for (let i = 0; i < this.#dirs.length; i++) {
      const stats = statOf(absolute(data.root, this.#dirs[i] as string));
      if (stampOf(stats) !== data.stamps[i]) return false;
      if (!stats || stats.mtimeNs >= racyFrom || stats.ctimeNs >= racyFrom) return false;
    }
    return data.rules.every(([file, print]) => fingerprint(file) === print);
  }

  /** The listing, as a walk made for this call would answer it. */
  answer(): ScanResult {
    this.#listing ??= this.#build();
    return { root: this.data.root, ...this.#listing, cacheAgeMs: 0, freshness: "walked" };
  }

  #build(): Pick<ScanResult, "entries" | "skipped" | "warnings"> {
    const { data } = this;
    const kinds = entryKinds(data.root);
    const paths = data.paths === "" ? [] : data.paths.split("\0");
    const entries = paths.map(
      (path, i) => new ScanEntry(kinds[CHAR_TYPE[data.types[i] as string] ?? "file"], path),
    );
    const skipped: SkippedFile[] = data.skipped.map(([path, hidden, ignored]) => ({
      path,
      hidden: hidden === 1,
      ignored: ignored === 1,
    }));
    return { entries, skipped, warnings: data.warnings };
  }
}

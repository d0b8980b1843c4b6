/**
 * A tree's content index: which files may hold a literal, answered from trigram postings kept
 * in memory, so that a repeated grep reads only the files that can match. Kept exact by the
 * live tree: every change it hears of marks the files below the changed path stale at once, and
 * a stale file is read from disk as if there were no index. Depends on `live/` (the observer
 * seam, the listing order) and `trigrams`; the building is the registry's.
 *
 * The index is a list of segments, each built by the build thread from one run of files (in
 * listing order, so each segment's paths are sorted): a change finds its files in each segment
 * by binary search. A file indexed again (changed, or compacted) goes into a new segment and the
 * old entry is left stale; a segment with nothing live left is dropped.
 */
import type { TreeObserver } from "../live/tree.js";
import { lowerBound } from "../scan/order.js";
import { BINARY, FOLDS_ASIDE, NON_ASCII, type SegmentData, UNINDEXED } from "./format.js";
import { type LiteralKey, literalKeys } from "./trigrams.js";

/** What a matching line must contain (the grep regex analysis's literal query). */
export type CandidateQuery =
  | { readonly kind: "all" }
  | { readonly kind: "none" }
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "and" | "or"; readonly of: readonly CandidateQuery[] }
  /**
   * The file holds a non-ASCII byte (its NON_ASCII flag); with `then` (ASCII), a non-ASCII
   * character right before `then`: a UTF-8 continuation byte (0x80-0xBF), then `then`.
   */
  | { readonly kind: "nonAscii"; readonly then?: string | undefined };

export interface Consulted {
  /** Indexes (into the paths consulted) of the files to read: candidates, and those unvouched. */
  readonly read: number[];
  /**
   * Files the index knows to be binary, by index into the paths consulted (grep counts them
   * where it would have read them: not past where a full page stopped it).
   */
  readonly binary: number[];
  /** Files the index ruled out without reading them. */
  readonly ruledOut: number;
  /**
   * For files to read in part (a large file indexed in blocks): by index into the paths
   * consulted, [offset, end, first line] of each stretch that can match, flat.
   */
  readonly blocks: Map<number, number[]>;
  /**
   * For an alternation of literals (`or` of `literal`s, at most 31): by index into the paths
   * consulted, which of them (bit i for the i-th) the file can hold, for files to read that
   * cannot hold them all. The search then looks only for those.
   */
  readonly branches: Map<number, number>;
}

/** Estimated heap per indexed file beyond the segment's arrays: its map slot and path slot. */
export const INDEX_FILE_BYTES = 72;
const SEGMENT_ID = 0x10000;

/** What a segment holds: its arrays, its stale flags, and the per-file estimate. */
export function segmentBytes(data: SegmentData): number {
  return (
    data.keys.byteLength +
    data.starts.byteLength +
    data.lists.byteLength +
    data.denseKeys.byteLength +
    data.bitmaps.byteLength +
    data.flags.byteLength * 2 +
    data.sizes.byteLength +
    data.fileUnits.byteLength +
    data.unitOffsets.byteLength +
    data.unitLines.byteLength +
    data.count * INDEX_FILE_BYTES
  );
}

/** The position of `key` in ascending `keys`, or -1. */
function find(keys: Uint32Array, key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as number) < key) lo = mid + 1;
    else hi = mid;
  }
  return keys[lo] === key ? lo : -1;
}

export class Segment {
  readonly id: number;
  /** The index's change count when its files began to be read. */
  readonly startedAt: number;
  readonly paths: readonly string[];
  readonly data: SegmentData;
  /** 1: changed since it was read, or indexed again elsewhere. */
  readonly stale: Uint8Array;
  live: number;

  constructor(id: number, startedAt: number, paths: readonly string[], data: SegmentData) {
    this.id = id;
    this.startedAt = startedAt;
    this.paths = paths;
    this.data = data;
    this.stale = new Uint8Array(data.count);
    this.live = data.count;
  }

  get bytes(): number {
    return segmentBytes(this.data);
  }

  markStale(local: number): void {
    if (this.stale[local]) return;
    this.stale[local] = 1;
    this.live--;
  }

  /** Marks `rel` and everything below it stale ("" is everything). */
  changed(rel: string): void {
    const paths = this.paths;
    if (rel === "") {
      for (let i = 0; i < paths.length; i++) this.markStale(i);
      return;
    }
    const prefix = `${rel}/`;
    for (let i = lowerBound(paths, rel); i < paths.length; i++) {
      const path = paths[i] as string;
      if (path !== rel && !path.startsWith(prefix)) break;
      this.markStale(i);
    }
  }

  #nonAscii: Uint16Array | undefined;

  /** The units of the files holding a non-ASCII byte (a copy: callers combine in place). */
  #nonAsciiUnits(): Uint16Array {
    if (!this.#nonAscii) {
      const { data } = this;
      const units = new Uint16Array(Math.ceil(data.units / 16));
      for (let f = 0; f < data.count; f++) {
        if (!((data.flags[f] as number) & NON_ASCII)) continue;
        for (let u = data.fileUnits[f] as number; u < (data.fileUnits[f + 1] as number); u++) {
          units[u >>> 4] = (units[u >>> 4] as number) | (1 << (u & 15));
        }
      }
      this.#nonAscii = units;
    }
    return this.#nonAscii.slice();
  }

  /**
   * The units holding every key (16 per word), with its follow bits where the posting keeps
   * them; undefined when one key is absent.
   */
  /**
   * The units with a non-ASCII character right before `then`: a character's last UTF-8 byte is
   * one of the 64 continuation bytes, so one of 64 literals of bytes, each a trigram or more.
   */
  #nonAsciiBefore(then: string, exactCase: boolean): Uint16Array {
    const words = Math.ceil(this.data.units / 16);
    const out = new Uint16Array(words);
    const bytes = Buffer.alloc(then.length + 1);
    bytes.write(then, 1, "latin1");
    for (let last = 0x80; last <= 0xbf; last++) {
      bytes[0] = last;
      const these = this.#withAll(literalKeys(bytes, exactCase));
      if (these) for (let w = 0; w < words; w++) out[w] = (out[w] as number) | (these[w] as number);
    }
    const units = this.#nonAsciiUnits();
    for (let w = 0; w < words; w++) out[w] = (out[w] as number) & (units[w] as number);
    return out;
  }

  #withAll(keys: readonly LiteralKey[]): Uint16Array | undefined {
    const words = Math.ceil(this.data.units / 16);
    let out: Uint16Array | undefined;
    for (const literalKey of keys) {
      const these = this.#holding(literalKey, words);
      if (!these) return undefined;
      if (!out) out = these;
      else for (let w = 0; w < words; w++) out[w] = (out[w] as number) & (these[w] as number);
    }
    return out;
  }

  /** The units holding one key with its follow bits, or undefined when none does. */
  #holding({ key, follow, capitals }: LiteralKey, words: number): Uint16Array | undefined {
    const { data } = this;
    // A trigram asked for in capitals: its upper-case key where the segment keeps one (beside
    // every common folded key, empty where no unit has it in capitals), else the folded key.
    let k = capitals ? find(data.keys, key | 1) : -1;
    if (k === -1) {
      const common = find(data.denseKeys, key);
      if (common !== -1) return data.bitmaps.slice(common * words, (common + 1) * words);
      k = find(data.keys, key);
    }
    if (k === -1) return undefined;
    const these = new Uint16Array(words);
    const { lists } = data;
    const end = data.starts[k + 1] as number;
    let unit = -1;
    for (let at = data.starts[k] as number; at < end; ) {
      let gap = 0;
      let shift = 0;
      let byte: number;
      do {
        byte = lists[at++] as number;
        gap |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      unit += gap;
      const mask = lists[at++] as number;
      if ((mask & follow) !== follow) continue;
      these[unit >>> 4] = (these[unit >>> 4] as number) | (1 << (unit & 15));
    }
    return these;
  }

  /**
   * Files that may satisfy `query`: a bitmap, or true for all. `exactCase`: its literals are to
   * be found as written (else in any ASCII case).
   */
  evaluate(query: CandidateQuery, exactCase: boolean): Uint16Array | true {
    const words = Math.ceil(this.data.units / 16);
    switch (query.kind) {
      case "all":
        return true;
      case "none":
        return new Uint16Array(words);
      case "nonAscii":
        return query.then === undefined
          ? this.#nonAsciiUnits()
          : this.#nonAsciiBefore(query.then, exactCase);
      case "literal": {
        const keys = literalKeys(query.text, exactCase);
        if (keys.length === 0) return true;
        return this.#withAll(keys) ?? new Uint16Array(words);
      }
      case "and": {
        let out: Uint16Array | true = true;
        for (const part of query.of) {
          const these = this.evaluate(part, exactCase);
          if (these === true) continue;
          if (out === true) out = these;
          else for (let w = 0; w < words; w++) out[w] = (out[w] as number) & (these[w] as number);
        }
        return out;
      }
      case "or": {
        const out = new Uint16Array(words);
        for (const part of query.of) {
          const these = this.evaluate(part, exactCase);
          if (these === true) return true;
          for (let w = 0; w < words; w++) out[w] = (out[w] as number) | (these[w] as number);
        }
        return out;
      }
    }
  }
}

/** Paths consulted, and the entry of each: its segment (none: unindexed) and local number. */
interface View {
  readonly paths: readonly string[];
  readonly segments: readonly (Segment | undefined)[];
  readonly locals: Int32Array;
}

/** The units any of `parts` holds. */
function union(parts: readonly (Uint16Array | true)[], words: number): Uint16Array | true {
  const out = new Uint16Array(words);
  for (const part of parts) {
    if (part === true) return true;
    for (let w = 0; w < words; w++) out[w] = (out[w] as number) | (part[w] as number);
  }
  return out;
}

/** Which of `parts` (bit i for the i-th) hold one of the units from `first` to `end`. */
function branchesIn(parts: readonly (Uint16Array | true)[], first: number, end: number): number {
  let mask = 0;
  parts.forEach((part, b) => {
    if (part === true) mask |= 1 << b;
    else {
      for (let unit = first; unit < end; unit++) {
        if (((part[unit >>> 4] as number) >>> (unit & 15)) & 1) {
          mask |= 1 << b;
          break;
        }
      }
    }
  });
  return mask;
}

/** A run of files being indexed: changes heard meanwhile apply to its segment when it lands. */
interface InFlight {
  readonly startedAt: number;
  readonly generation: number;
}

/**
 * One tree's index. The registry feeds it segments and decides when to build; this class keeps
 * them, hears the tree's changes, and answers which files a search must read.
 */
export class ContentIndex implements TreeObserver {
  readonly root: string;
  readonly #segments = new Map<number, Segment>();
  /** Path → the entry that describes it now: segment id × 65536 + local number. */
  readonly #files = new Map<string, number>();
  #nextSegment = 1;
  /** Changes heard so far: a segment is valid for changes heard before it began reading. */
  #changes = 0;
  /** Changes heard while runs are being indexed, to apply to their segments on arrival. */
  #recent: { readonly rel: string; readonly at: number }[] = [];
  readonly #inFlight = new Set<InFlight>();
  /** Bumped by `reset`: runs started before it land nowhere. */
  #generation = 0;
  #closed = false;
  /**
   * The entries of the last paths consulted, by position: a warm grep of an unchanged tree asks
   * about the same 78,000 paths each time, and a lookup by position costs a fraction of one by
   * name (a string hash and compare per path). Dropped whenever a path's entry changes (not its
   * staleness, which is read from the segment), so it never holds a dropped segment either.
   */
  #view: View | undefined;
  /** Paths changed since the index last looked for files to index again. */
  changedSinceMaintenance = true;
  /** Bumped by every change heard and every segment landed: a snapshot says which it holds. */
  version = 0;
  /** A snapshot being loaded: searches wait for it rather than read every file. */
  restoring: Promise<void> | undefined;
  /** When the first build began and ended (performance.now()). */
  buildStarted: number | undefined;
  buildEnded: number | undefined;
  textBytes = 0;
  readonly #onClosed: (index: ContentIndex) => void;

  constructor(root: string, onClosed: (index: ContentIndex) => void) {
    this.root = root;
    this.#onClosed = onClosed;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  get generation(): number {
    return this.#generation;
  }

  get segments(): number {
    return this.#segments.size;
  }

  get files(): number {
    return this.#files.size;
  }

  get building(): number {
    return this.#inFlight.size;
  }

  get bytes(): number {
    let bytes = 0;
    for (const segment of this.#segments.values()) bytes += segment.bytes;
    return bytes;
  }

  changed(rel: string): void {
    const at = ++this.#changes;
    this.version++;
    this.changedSinceMaintenance = true;
    for (const segment of this.#segments.values()) segment.changed(rel);
    if (this.#inFlight.size > 0) this.#recent.push({ rel, at });
  }

  reset(): void {
    this.#generation++;
    this.version++;
    this.#view = undefined;
    this.#segments.clear();
    this.#files.clear();
    this.#recent = [];
    this.#inFlight.clear();
    this.textBytes = 0;
    this.buildStarted = undefined;
    this.buildEnded = undefined;
    this.changedSinceMaintenance = true;
  }

  closed(): void {
    this.reset();
    this.#closed = true;
    this.#onClosed(this);
  }

  /** A run of files is about to be read: changes heard from now on apply to its segment. */
  begin(): InFlight {
    const run = { startedAt: this.#changes, generation: this.#generation };
    this.#inFlight.add(run);
    return run;
  }

  /** The run failed or was dropped: nothing lands. */
  abandon(run: InFlight): void {
    this.#inFlight.delete(run);
    this.#trimRecent();
  }

  /** A run's segment: `paths` are the run's (the segment covers the first `data.count`). */
  land(run: InFlight, paths: readonly string[], data: SegmentData): void {
    this.landAll(run, [{ paths: paths.slice(0, data.count), data }]);
  }

  /**
   * A run's segments (a snapshot's, or one built): changes heard since the run began, and the
   * files each says are stale, are marked before any search sees it.
   */
  landAll(
    run: InFlight,
    landed: readonly { paths: readonly string[]; data: SegmentData; stale?: Uint8Array }[],
  ): void {
    this.#inFlight.delete(run);
    if (run.generation !== this.#generation || this.#closed) {
      this.#trimRecent();
      return;
    }
    for (const { paths, data, stale } of landed) {
      const segment = new Segment(this.#nextSegment++, run.startedAt, paths, data);
      if (stale)
        for (let local = 0; local < data.count; local++) if (stale[local]) segment.markStale(local);
      for (const change of this.#recent) {
        if (change.at > run.startedAt) segment.changed(change.rel);
      }
      const base = segment.id * SEGMENT_ID;
      for (let local = 0; local < segment.paths.length; local++) {
        const path = segment.paths[local] as string;
        const before = this.#files.get(path);
        if (before !== undefined) this.#entry(before)?.segment.markStale(before % SEGMENT_ID);
        this.#files.set(path, base + local);
      }
      this.#segments.set(segment.id, segment);
      this.textBytes += data.textBytes;
    }
    this.#view = undefined;
    this.version++;
    this.#trimRecent();
    this.#dropEmpty();
  }

  /** The segments as they stand, each with a copy of its stale flags: what a snapshot keeps. */
  saved(): { paths: readonly string[]; data: SegmentData; stale: Uint8Array }[] {
    return [...this.#segments.values()].map((segment) => ({
      paths: segment.paths,
      data: segment.data,
      stale: segment.stale.slice(),
    }));
  }

  #trimRecent(): void {
    if (this.#inFlight.size === 0) {
      this.#recent = [];
      return;
    }
    let oldest = Number.POSITIVE_INFINITY;
    for (const run of this.#inFlight) oldest = Math.min(oldest, run.startedAt);
    this.#recent = this.#recent.filter((change) => change.at > oldest);
  }

  #entry(ref: number): { segment: Segment; local: number } | undefined {
    const segment = this.#segments.get(Math.floor(ref / SEGMENT_ID));
    return segment ? { segment, local: ref % SEGMENT_ID } : undefined;
  }

  #dropEmpty(): void {
    for (const [id, segment] of this.#segments) {
      if (segment.live > 0) continue;
      this.#segments.delete(id);
      this.#view = undefined;
      const base = id * SEGMENT_ID;
      for (let local = 0; local < segment.paths.length; local++) {
        const path = segment.paths[local] as string;
        if (this.#files.get(path) === base + local) this.#files.delete(path);
      }
    }
  }

  /** Each path's entry (segment and local number), by position in `paths`. */
  #viewOf(paths: readonly string[]): View {
    const view = this.#view;
    if (view && view.paths.length === paths.length) {
      let same = true;
      for (let i = 0; i < paths.length && same; i++) same = view.paths[i] === paths[i];
      if (same) return view;
    }
    const segments: (Segment | undefined)[] = new Array(paths.length);
    const locals = new Int32Array(paths.length);
    for (let i = 0; i < paths.length; i++) {
      const ref = this.#files.get(paths[i] as string);
      const entry = ref === undefined ? undefined : this.#entry(ref);
      segments[i] = entry?.segment;
      locals[i] = entry ? entry.local : 0;
    }
    this.#view = { paths, segments, locals };
    return this.#view;
  }

  /**
   * Which of `paths` a search for `query` must read. A file is ruled out only when its entry is
   * not stale, was indexed whole, is no larger than `maxFileSize`, and cannot hold a match.
   */
  consult(
    paths: readonly string[],
    query: CandidateQuery,
    options: {
      readonly requiresNonAscii: boolean;
      /** The query's literals are to be found as written, not in any ASCII case. */
      readonly exactCase: boolean;
      /**
       * The folded literals hold `k` or `s` (RegexPlan's `foldsAside`): a file holding U+017F
       * or U+212A is read, whole.
       */
      readonly foldsAside?: boolean | undefined;
      readonly maxFileSize: number;
      /** Large files may be read in blocks (no context lines, no multiline matches). */
      readonly blocks: boolean;
      /**
       * Matches may span lines, so a file's literals may lie in different blocks: a file indexed
       * in blocks is then always read (the query holds per file, not per block).
       */
      readonly multiline: boolean;
      /**
       * Binary files are searched (`report`, `text`), not left out at their first NUL (`skip`,
       * `quit`, which the index answers without reading them, as it knows where their NUL is).
       */
      readonly readsBinary?: boolean | undefined;
    },
  ): Consulted {
    const read: number[] = [];
    const blocks = new Map<number, number[]>();
    const branches = new Map<number, number>();
    const alternatives =
      query.kind === "or" &&
      query.of.length <= 31 &&
      query.of.every((part) => part.kind === "literal")
        ? query.of
        : undefined;
    /** Per segment, with `alternatives`: each one's units. */
    const perBranch = new Map<number, (Uint16Array | true)[]>();
    const binary: number[] = [];
    let ruledOut = 0;
    const evaluated = new Map<number, Uint16Array | true>();
    const view = this.#viewOf(paths);
    for (let i = 0; i < paths.length; i++) {
      const segment = view.segments[i];
      const local = view.locals[i] as number;
      if (!segment || segment.stale[local]) {
        read.push(i);
        continue;
      }
      const { data } = segment;
      const flags = data.flags[local] as number;
      if (flags & UNINDEXED || (data.sizes[local] as number) > options.maxFileSize) {
        read.push(i);
        continue;
      }
      if (flags & BINARY) {
        // Not indexed: read whole when binary files are searched.
        if (options.readsBinary) read.push(i);
        else binary.push(i);
        continue;
      }
      if (options.requiresNonAscii && !(flags & NON_ASCII)) {
        ruledOut++;
        continue;
      }
      if (options.foldsAside && flags & FOLDS_ASIDE) {
        read.push(i);
        continue;
      }
      let these = evaluated.get(segment.id);
      if (these === undefined) {
        if (alternatives) {
          const parts = alternatives.map((part) => segment.evaluate(part, options.exactCase));
          perBranch.set(segment.id, parts);
          these = union(parts, Math.ceil(data.units / 16));
        } else these = segment.evaluate(query, options.exactCase);
        evaluated.set(segment.id, these);
      }
      if (these === true) {
        read.push(i);
        continue;
      }
      const first = data.fileUnits[local] as number;
      const end = data.fileUnits[local + 1] as number;
      if (options.multiline && end - first > 1) {
        read.push(i);
        continue;
      }
      let stretches: number[] | undefined;
      let all = true;
      for (let unit = first; unit < end; unit++) {
        if (!(((these[unit >>> 4] as number) >>> (unit & 15)) & 1)) {
          all = false;
          continue;
        }
        stretches ??= [];
        const from = data.unitOffsets[unit] as number;
        const to =
          unit + 1 < end ? (data.unitOffsets[unit + 1] as number) : (data.sizes[local] as number);
        // A block right after the last one extends it.
        if (stretches.length > 0 && stretches[stretches.length - 2] === from) {
          stretches[stretches.length - 2] = to;
        } else stretches.push(from, to, data.unitLines[unit] as number);
      }
      if (!stretches) ruledOut++;
      else {
        read.push(i);
        if (!all && options.blocks) blocks.set(i, stretches);
        const parts = perBranch.get(segment.id);
        if (parts) {
          const mask = branchesIn(parts, first, end);
          if (mask !== 2 ** parts.length - 1) branches.set(i, mask);
        }
      }
    }
    return { read, binary, ruledOut, blocks, branches };
  }

  /**
   * Of the tree's files now (listing order), from `from` on, the first `limit` the index should
   * read: never indexed, or stale; and where the first of them is (`files.length` if none), since
   * every file before it is indexed. Runs of a segment mostly stale are indexed again whole
   * (their live files too), so that the segment can go.
   */
  unindexed(
    files: readonly string[],
    from: number,
    limit: number,
  ): { readonly paths: string[]; readonly first: number } {
    const paths: string[] = [];
    let first = files.length;
    const compact = new Set<number>();
    for (const segment of this.#segments.values()) {
      if (segment.live < segment.paths.length / 2) compact.add(segment.id);
    }
    for (let i = from; i < files.length && paths.length < limit; i++) {
      const path = files[i] as string;
      const ref = this.#files.get(path);
      const entry = ref === undefined ? undefined : this.#entry(ref);
      if (!entry || entry.segment.stale[entry.local] || compact.has(entry.segment.id)) {
        if (paths.length === 0) first = i;
        paths.push(path);
      }
    }
    return { paths, first };
  }

  /** Entries of paths no longer in the tree: forgotten, so that their segments can go. */
  forgetGone(files: ReadonlySet<string>): void {
    for (const [path, ref] of this.#files) {
      if (files.has(path)) continue;
      this.#entry(ref)?.segment.markStale(ref % SEGMENT_ID);
      this.#files.delete(path);
      this.#view = undefined;
    }
    this.#dropEmpty();
  }
}

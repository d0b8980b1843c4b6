/**
 * What the content index's build thread is asked and answers: a run of files, and the segment
 * of postings it makes of them. Pure data; depends on nothing (the caller's thread loads this,
 * not the thread's module with its tables).
 */

/** A run of files to index: the segment covers the first `count` of them. */
export interface BuildJob {
  readonly id: number;
  /** The tree's canonical root; `paths` are relative to it. */
  readonly root: string;
  /** Joined by NUL, in listing order. */
  readonly paths: string;
  /** Larger files are left unindexed (grep reads them). */
  readonly maxFileBytes: number;
  /** The segment ends after the file that brings its text past this. */
  readonly maxSegmentBytes: number;
}

/** A snapshot to load: its segments come back as a run's do, each file confirmed by its stat. */
export interface RestoreJob {
  readonly kind: "restore";
  readonly id: number;
  /** The tree's canonical root, which the snapshot must be of. */
  readonly root: string;
  readonly policy: string;
  /** The snapshot file. */
  readonly path: string;
  /** Largest snapshot accepted (the index's budget). */
  readonly maxBytes: number;
}

/** What a restore job answers: the segments and which of their files changed, or why none. */
export type Restored =
  | {
      readonly kind: "restored";
      readonly id: number;
      readonly segments: readonly RestoredSegment[];
      /** Files whose stat no longer matched (or that are gone): left stale. */
      readonly changed: number;
      /** Files confirmed unchanged. */
      readonly confirmed: number;
    }
  | { readonly kind: "rejected"; readonly id: number; readonly reason: string };

export interface RestoredSegment {
  readonly paths: readonly string[];
  readonly data: SegmentData;
  /** 1 for each file not to be trusted: changed, gone, or stale when saved. */
  readonly stale: Uint8Array;
}

export const STAMP_FIELDS = 4;

/** Per-file flags. */
export const BINARY = 1;
export const NON_ASCII = 2;
/** Not a regular file, unreadable, too large or a link: grep must read it itself. */
export const UNINDEXED = 4;
/** A NUL past the first 8 KiB: binary if it matches, so it is read whole, never in blocks. */
export const HAS_NUL = 8;
/**
 * Holds U+017F or U+212A (`FOLDED_ASIDE`), which a case-insensitive Unicode search matches as
 * `s` and `k`: the folded trigrams of a literal with either letter cannot rule it out.
 */
export const FOLDS_ASIDE = 16;

/**
 * The two characters that Unicode case folding (`iu`) maps to ASCII letters, U+017F LONG S to
 * `s` and U+212A KELVIN SIGN to `k`, as UTF-8: the index and the byte search fold ASCII only,
 * and a text holding either is searched without its folded literals.
 */
export const FOLDED_ASIDE: readonly { readonly letter: string; readonly bytes: Buffer }[] = [
  { letter: "s", bytes: Buffer.from("\u017f", "utf8") },
  { letter: "k", bytes: Buffer.from("\u212a", "utf8") },
];

export interface SegmentData {
  readonly id: number;
  /** Files covered: the job's first `count` paths. */
  readonly count: number;
  /**
   * Posting units: one per file, or per block of a large file. Postings and bitmaps are over
   * units; `fileUnits[f]` to `fileUnits[f + 1]` are file f's.
   */
  readonly units: number;
  readonly fileUnits: Uint32Array;
  /** Per unit: its first byte in the file, and that byte's line number (1-based). */
  readonly unitOffsets: Float64Array;
  readonly unitLines: Float64Array;
  /** Keys whose units are few, ascending: each has a list in `lists`. */
  readonly keys: Uint32Array;
  /** keys.length + 1 byte offsets into `lists`. */
  readonly starts: Uint32Array;
  /**
   * Per key of `keys`, its units in ascending order, each as the gap from the one before (the
   * first from -1) in 7-bit groups, low first, the high bit set on all but the last; then one
   * byte of follow bits: the bytes after the trigram in the unit. Gaps are mostly under 128: a
   * posting takes two bytes where a 16-bit unit and its mask took three.
   */
  readonly lists: Uint8Array;
  /** Keys held by more than one unit in 4, ascending: each a bitmap, without follow bits. */
  readonly denseKeys: Uint32Array;
  /** The bitmaps of `denseKeys`, ceil(units / 16) words each, in their order. */
  readonly bitmaps: Uint16Array;
  readonly flags: Uint8Array;
  /** Bytes of each file when read. */
  readonly sizes: Float64Array;
  /**
   * Each file's stat when it was opened, `STAMP_FIELDS` per file: device, inode, mtime and ctime
   * in nanoseconds (all 0 for a file left unindexed). A snapshot's entry is trusted again only
   * where the file's stat still says the same.
   */
  readonly stamps: BigInt64Array;
  /** Bytes of text read. */
  readonly textBytes: number;
}

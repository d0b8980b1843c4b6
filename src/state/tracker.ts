/**
 * The read-before-write guard: what was read, and whether the file on disk is still that. An
 * edit of a file never read, read only in part, or changed since is refused (or, under `warn`,
 * allowed with a warning); creating a file needs no read. Depends on `io/`, `errors` and the
 * rest of `state/`: the records (`records`), what a read saw (`observe`), the texts (`messages`).
 *
 * The check is in two stages: equal stat data (nanosecond mtime and ctime, size, inode,
 * device) proves the file unchanged with one `stat`, unless it was taken too close to the
 * file's last change; otherwise the whole file is hashed and compared with the read's hash.
 */
import type { BigIntStats } from "node:fs";
import { FreshfsError, fromFsError, isGone } from "../errors.js";
import { type FsSeam, nodeFs } from "../io/fs.js";
import { absolutePath, canonicalPath } from "../io/paths.js";
import {
  notReadMessage,
  type PartialFacts,
  partialReadMessage,
  partialReadWarning,
  type StaleFacts,
  type StaleReason,
  type StatFacts,
  staleMessage,
  staleWarning,
  uncheckedWarning,
} from "./messages.js";
import { observeContent, observeFile } from "./observe.js";
import { type ReadRecord, ReadRecords, type ReadWindow } from "./records.js";
import {
  describeNonFile,
  type Fingerprint,
  fingerprintOf,
  hexDigest,
  isRacy,
  mtimeMsOf,
  mtimeNsOf,
  type Snapshot,
  sameFingerprint,
  snapshotFile,
} from "./snapshot.js";

/**
 * - `strict`: an edit of a file not read, or changed since, is refused with `FreshfsError`.
 * - `warn`: the edit may go ahead; the verdict carries a warning for the model (ChatCLI).
 */
export type GuardPolicy = "strict" | "warn";

/**
 * - `reject`: a partial read (an offset/limit window that did not cover the file) does not
 *   allow an edit: lines not seen are no ground for a safe edit.
 * - `allow-within-window`: an edit whose lines lie inside the window last shown is allowed;
 *   the whole-file hash still makes staleness exact.
 */
export type PartialReadPolicy = "reject" | "allow-within-window";

export interface FileStateTrackerOptions {
  /** @default "strict" */
  policy?: GuardPolicy | undefined;
  /** @default "reject" */
  partialReads?: PartialReadPolicy | undefined;
  /**
   * A read taken less than this long after the file last changed is always verified by content
   * hash, never by stat data alone: file timestamps are coarse (a kernel tick; 2 s on FAT), so
   * a same-size rewrite in the same tick leaves every stat field unchanged.
   * @default 2000
   */
  racyWindowMs?: number | undefined;
  /** Most paths tracked; the least recently used is forgotten first. @default 10000 */
  maxEntries?: number | undefined;
  /** @internal The file-system calls the tracker makes; tests wrap it to count them. */
  fs?: FsSeam | undefined;
}

export interface RecordReadOptions {
  /** 1-based first line shown; 1 or less means from the start. @default 1 */
  offset?: number | undefined;
  /** Number of lines shown; 0 means to the end. @default 0 */
  limit?: number | undefined;
  /**
   * The whole file as the caller read it, even when only a window was shown: its bytes, or the
   * text decoded from them (UTF-8 with or without BOM, CRLF shown as LF, or Latin-1 are
   * recognized; for anything else, or a lossy decode, pass the bytes). With it, the record
   * describes what the caller saw, even if the file changed a moment later. Without it, the
   * tracker reads the file itself.
   */
  content?: string | Uint8Array | undefined;
}

export interface RecordEditOptions {
  /** The bytes just written (or their text, as for `recordRead`). Without it, the file is read. */
  content?: string | Uint8Array | undefined;
}

export interface CheckEditOptions {
  /**
   * The 1-based lines (inclusive) the edit replaces. Only `partialReads: "allow-within-window"`
   * uses it; leave it out for a whole-file overwrite.
   */
  lines?: { start: number; end: number } | undefined;
}

/** The latest read of a path, as `latest()` reports it. */
export interface ReadEntry extends ReadWindow {
  /** Canonical absolute path (symlinks resolved). */
  readonly path: string;
  /** mtime of those bytes, when the stat data is known to describe them. */
  readonly mtimeMs: number | undefined;
}

/**
 * - `fresh`: unchanged since the latest full read (or within the window shown).
 * - `new-file`: never read and does not exist: creating it needs no read.
 * - `not-read`, `partial`, `stale`, `unchecked`: only under `warn` (strict throws instead).
 */
export type EditState = "fresh" | "new-file" | "not-read" | "partial" | "stale" | "unchecked";

export interface EditVerdict {
  /** Canonical absolute path. */
  readonly path: string;
  readonly state: EditState;
  /** How freshness was established: one stat, a content hash, or not at all. */
  readonly verifiedBy: "stat" | "hash" | "none";
  /** Messages for the model (warn policy only), in the ChatCLI shape. */
  readonly warnings: readonly string[];
}

const DEFAULTS = {
  policy: "strict",
  partialReads: "reject",
  racyWindowMs: 2000,
  maxEntries: 10_000,
} as const;

interface ResolvedOptions {
  readonly policy: GuardPolicy;
  readonly partialReads: PartialReadPolicy;
  readonly racyWindowMs: number;
  readonly maxEntries: number;
  readonly fs: FsSeam;
}

function invalid(message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", message);
}

function resolveOptions(options: FileStateTrackerOptions): ResolvedOptions {
  const policy = options.policy ?? DEFAULTS.policy;
  if (policy !== "strict" && policy !== "warn") {
    throw invalid(`policy must be "strict" or "warn", not ${JSON.stringify(policy)}.`);
  }
  const partialReads = options.partialReads ?? DEFAULTS.partialReads;
  if (partialReads !== "reject" && partialReads !== "allow-within-window") {
    throw invalid(
      `partialReads must be "reject" or "allow-within-window", not ${JSON.stringify(partialReads)}.`,
    );
  }
  const racyWindowMs = options.racyWindowMs ?? DEFAULTS.racyWindowMs;
  if (!Number.isFinite(racyWindowMs) || racyWindowMs < 0) {
    throw invalid(`racyWindowMs must be a number of milliseconds >= 0, not ${racyWindowMs}.`);
  }
  const maxEntries = options.maxEntries ?? DEFAULTS.maxEntries;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw invalid(`maxEntries must be a whole number >= 1, not ${maxEntries}.`);
  }
  return {
    policy,
    partialReads,
    racyWindowMs,
    maxEntries,
    fs: options.fs ?? nodeFs,
  };
}

function lineNumber(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value)) throw invalid(`${name} must be a whole number, not ${value}.`);
  return value;
}

type Probe =
  | { readonly kind: "file"; readonly stats: BigIntStats }
  | { readonly kind: "gone" }
  | { readonly kind: "error"; readonly error: unknown };

export class FileStateTracker {
  readonly #options: ResolvedOptions;
  readonly #records: ReadRecords;

  constructor(options: FileStateTrackerOptions = {}) {
    this.#options = resolveOptions(options);
    this.#records = new ReadRecords(this.#options.maxEntries);
  }

  /** Number of paths tracked. */
  get size(): number {
    return this.#records.size;
  }

  /**
   * Records that `path` was read: the window shown (`offset`, `limit`) and what the whole file
   * was. Any source counts (a read tool, `cat` in a shell); the caller says what it read.
   * Throws `NOT_FOUND` or `NOT_A_FILE` when `content` is omitted and the file cannot be read.
   */
  async recordRead(path: string, options: RecordReadOptions = {}): Promise<ReadEntry> {
    const offset = Math.max(1, lineNumber(options.offset, "offset", 1));
    const limit = lineNumber(options.limit, "limit", 0);
    if (limit < 0) throw invalid(`limit must be 0 (to the end) or more, not ${limit}.`);
    return this.#record(path, offset, limit, options.content);
  }

  /**
   * Records the result of a successful edit as a fresh full read, so a chain of edits does not
   * trip on its own writes (forgetting the path instead, as ChatCLI does, would leave the next
   * write unguarded). Pass the bytes written: without them, the file is read back, and a change
   * another process made right after the write would be taken as yours.
   */
  async recordEdit(path: string, options: RecordEditOptions = {}): Promise<ReadEntry> {
    return this.#record(path, 1, 0, options.content);
  }

  /**
   * Checks, against the file on disk, that `path` may be edited or overwritten now. Costs one
   * `stat` when the file is unchanged since a read whose stat data can be trusted; otherwise
   * hashes the file. Resolves when the edit may go ahead (under `warn`, always, with warnings);
   * under `strict` throws `FreshfsError` `NOT_READ` or `STALE`, and fails closed on I/O errors
   * other than "the file is gone".
   */
  async checkEdit(path: string, options: CheckEditOptions = {}): Promise<EditVerdict> {
    const lines = options.lines;
    if (
      lines &&
      !(Number.isSafeInteger(lines.start) && lines.start >= 1 && lines.end >= lines.start)
    ) {
      throw invalid(`lines must be 1-based with start <= end, not ${lines.start}-${lines.end}.`);
    }
    const lexical = absolutePath(path);
    const probe = await this.#probe(lexical);
    let record = this.#records.lookup(lexical);
    // The alias is only a hint: unless the file is exactly the one recorded, resolve again,
    // since symlinks may have moved and inode numbers are reused at once.
    if (!record || !this.#passesFastPath(record, probe)) {
      let key: string;
      try {
        key = canonicalPath(lexical, this.#options.fs);
      } catch (error) {
        return this.#unchecked(lexical, lexical, error);
      }
      record = this.#records.get(key);
      this.#records.noteSpelling(lexical, key);
      if (!record) {
        if (probe.kind === "gone") return verdict(key, "new-file", "none");
        if (this.#options.policy === "warn") return verdict(key, "not-read", "none");
        throw new FreshfsError("NOT_READ", notReadMessage(lexical), { path: lexical });
      }
    }
    this.#records.touch(record);
    return this.#decide(record, lexical, probe, lines);
  }

  /** The latest read of `path` across windows, or undefined. */
  latest(path: string): ReadEntry | undefined {
    const key = this.#keyOf(path);
    const record = key === undefined ? undefined : this.#records.get(key);
    return record && entryOf(record);
  }

  /** Drops what is known of `path`: the next edit needs a new read. */
  forget(path: string): void {
    const key = this.#keyOf(path);
    if (key !== undefined) this.#records.forget(key);
  }

  /** Drops every record. */
  clear(): void {
    this.#records.clear();
  }

  async #record(
    path: string,
    offset: number,
    limit: number,
    content: string | Uint8Array | undefined,
  ): Promise<ReadEntry> {
    const lexical = absolutePath(path);
    const seq = this.#records.beginRead();
    const readAt = Date.now();
    try {
      let key: string;
      try {
        key = canonicalPath(lexical, this.#options.fs);
      } catch (error) {
        throw fromFsError(error, "record a read of", lexical);
      }
      const { fs, racyWindowMs } = this.#options;
      const seen =
        content === undefined
          ? await observeFile(key, fs, racyWindowMs)
          : await observeContent(key, content, fs, racyWindowMs);
      const partial = offset > 1 || (limit > 0 && (seen.lines === undefined || limit < seen.lines));
      const record: ReadRecord = {
        key,
        seq,
        offset,
        limit,
        partial,
        lines: seen.lines,
        readAt,
        hash: seen.hash,
        size: seen.size,
        fingerprint: seen.fingerprint,
        racy: seen.racy,
        aliases: undefined,
      };
      return entryOf(this.#records.store(record, lexical));
    } finally {
      this.#records.endRead();
    }
  }

  async #probe(path: string): Promise<Probe> {
    try {
      return { kind: "file", stats: await this.#options.fs.stat(path) };
    } catch (error) {
      return isGone(error) ? { kind: "gone" } : { kind: "error", error };
    }
  }

  #passesFastPath(record: ReadRecord, probe: Probe): boolean {
    return (
      probe.kind === "file" &&
      record.fingerprint !== undefined &&
      !record.racy &&
      sameFingerprint(record.fingerprint, fingerprintOf(probe.stats))
    );
  }

  async #decide(
    record: ReadRecord,
    shown: string,
    probe: Probe,
    lines: CheckEditOptions["lines"],
  ): Promise<EditVerdict> {
    const warnings: string[] = [];
    if (record.partial && !this.#withinWindow(record, lines)) {
      const facts: PartialFacts = {
        path: shown,
        offset: record.offset,
        limit: record.limit,
        lines: record.lines,
      };
      if (this.#options.policy === "strict") {
        throw new FreshfsError("NOT_READ", partialReadMessage(facts), { path: shown });
      }
      warnings.push(partialReadWarning(facts));
    }
    if (probe.kind === "error") return this.#unchecked(record.key, shown, probe.error, warnings);
    if (probe.kind === "gone") return this.#stale(record, shown, "deleted", undefined, warnings);
    if (!probe.stats.isFile()) {
      return this.#stale(record, shown, "replaced", probe.stats, warnings);
    }
    const state = warnings.length > 0 ? "partial" : "fresh";
    if (this.#passesFastPath(record, probe)) return verdict(record.key, state, "stat", warnings);
    if (record.hash === undefined) {
      return this.#stale(record, shown, "unverifiable", probe.stats, warnings);
    }
    let snapshot: Snapshot;
    try {
      // Through the spelling the edit will write through.
      snapshot = await snapshotFile(shown, this.#options.fs);
    } catch (error) {
      const code = error instanceof FreshfsError ? error.code : undefined;
      if (code === "NOT_FOUND") return this.#stale(record, shown, "deleted", undefined, warnings);
      if (code === "NOT_A_FILE") return this.#stale(record, shown, "replaced", undefined, warnings);
      return this.#unchecked(record.key, shown, error, warnings);
    }
    if (snapshot.hash !== record.hash) {
      return this.#stale(record, shown, "modified", snapshot.fingerprint, warnings);
    }
    // Equal bytes read while the file kept moving may be a torn read: not proof of anything.
    if (!snapshot.stable) {
      return this.#stale(record, shown, "changing", snapshot.fingerprint, warnings);
    }
    this.#refresh(record, snapshot);
    return verdict(record.key, state, "hash", warnings);
  }

  #withinWindow(record: ReadRecord, lines: CheckEditOptions["lines"]): boolean {
    if (this.#options.partialReads !== "allow-within-window" || !lines) return false;
    const last = record.limit > 0 ? record.offset + record.limit - 1 : Number.POSITIVE_INFINITY;
    return lines.start >= record.offset && lines.end <= last;
  }

  /**
   * The bytes are still the ones read: adopt the current stat data (git's index refresh), so
   * the next check of an untouched file is one `stat` again once it is out of the racy window.
   */
  #refresh(record: ReadRecord, snapshot: Snapshot): void {
    if (!this.#records.holds(record)) return;
    record.fingerprint = snapshot.fingerprint;
    record.racy = isRacy(snapshot.fingerprint, snapshot.startedAtMs, this.#options.racyWindowMs);
  }

  #stale(
    record: ReadRecord,
    shown: string,
    reason: StaleReason,
    now: BigIntStats | Fingerprint | undefined,
    warnings: string[],
  ): EditVerdict {
    const before: StatFacts = {
      mtimeNs: record.fingerprint && mtimeNsOf(record.fingerprint),
      size: record.size,
    };
    let after: StatFacts | undefined;
    if (now && "isFile" in now) after = { mtimeNs: now.mtimeNs, size: Number(now.size) };
    else if (now) after = { mtimeNs: mtimeNsOf(now), size: now.size };
    const facts: StaleFacts = {
      path: shown,
      reason,
      before,
      after,
      nowIs: now && "isFile" in now ? describeNonFile(now) : undefined,
    };
    if (this.#options.policy === "strict") {
      throw new FreshfsError("STALE", staleMessage(facts), { path: shown });
    }
    const verifiedBy = reason === "modified" || reason === "changing" ? "hash" : "stat";
    return verdict(record.key, "stale", verifiedBy, [...warnings, staleWarning(facts)]);
  }

  #unchecked(key: string, shown: string, error: unknown, warnings: string[] = []): EditVerdict {
    const failure = fromFsError(error, "check for changes", shown);
    if (this.#options.policy === "strict") {
      throw new FreshfsError(
        failure.code,
        `${failure.message} The edit was refused, since the file might have changed; retry once it can be read.`,
        { path: shown, cause: error },
      );
    }
    return verdict(key, "unchecked", "none", [
      ...warnings,
      uncheckedWarning(shown, failure.message),
    ]);
  }

  /** The canonical key of `path`, or undefined when it cannot be resolved. */
  #keyOf(path: string): string | undefined {
    try {
      return canonicalPath(path, this.#options.fs);
    } catch {
      return undefined;
    }
  }
}

function verdict(
  path: string,
  state: EditState,
  verifiedBy: EditVerdict["verifiedBy"],
  warnings: readonly string[] = [],
): EditVerdict {
  return { path, state, verifiedBy, warnings };
}

function entryOf(record: ReadRecord): ReadEntry {
  return {
    path: record.key,
    offset: record.offset,
    limit: record.limit,
    partial: record.partial,
    lines: record.lines,
    readAt: record.readAt,
    hash: record.hash === undefined ? undefined : hexDigest(record.hash),
    size: record.size,
    mtimeMs: record.fingerprint && mtimeMsOf(record.fingerprint),
  };
}

/**
 * The read-before-write guard (contract Part 1; seeds 000 and 002): what was read, and whether
 * the file on disk is still that. Depends on `io/`, `errors` and the rest of `state/`.
 *
 * Per path it keeps only the latest read: the window shown, a stat fingerprint and a SHA-256 of
 * the whole file. Never the content: an agent reads before every edit, and retained content
 * grows to hundreds of MB in a long session (seed 000).
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
import {
  countLines,
  describeNonFile,
  type Fingerprint,
  fingerprintOf,
  hexDigest,
  isRacy,
  mtimeMsOf,
  mtimeNsOf,
  type Snapshot,
  sameFingerprint,
  sha256,
  snapshotFile,
} from "./snapshot.js";

/**
 * - `strict`: an edit of a file not read, or changed since, is refused with `FreshfsError`.
 * - `warn`: the edit may go ahead; the verdict carries a warning for the model (ChatCLI).
 */
export type GuardPolicy = "strict" | "warn";

/**
 * - `reject`: a partial read (an offset/limit window that did not cover the file) does not
 *   allow an edit (seed 000).
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
export interface ReadEntry {
  /** Canonical absolute path (symlinks resolved). */
  readonly path: string;
  readonly offset: number;
  /** 0 = to the end. */
  readonly limit: number;
  /** The window left lines of the file unseen. */
  readonly partial: boolean;
  /** Lines in the file as read; undefined when the bytes were not known. */
  readonly lines: number | undefined;
  /** Wall clock (ms) when the read was recorded. */
  readonly readAt: number;
  /** SHA-256 (hex) of the whole file as read; undefined when the bytes were not known. */
  readonly hash: string | undefined;
  /** Bytes in the file as read, when known. */
  readonly size: number | undefined;
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

interface ReadRecord {
  readonly key: string;
  /** Order of the calls that recorded reads: a slow early read never replaces a later one. */
  readonly seq: number;
  readonly offset: number;
  readonly limit: number;
  readonly partial: boolean;
  readonly lines: number | undefined;
  readonly readAt: number;
  readonly hash: string | undefined;
  readonly size: number | undefined;
  /** Stat data known to describe the bytes behind `hash`; undefined when not known. */
  fingerprint: Fingerprint | undefined;
  /** `fingerprint` was taken too close to the file's last change to be trusted alone. */
  racy: boolean;
  /** Other spellings of the path (through symlinks) seen for this record. */
  aliases: string[] | undefined;
}

/** What was observed of a file at a read: its bytes' hash and the stat data of those bytes. */
interface Observation {
  readonly hash: string | undefined;
  readonly lines: number | undefined;
  readonly size: number | undefined;
  readonly fingerprint: Fingerprint | undefined;
  readonly racy: boolean;
}

type Probe =
  | { readonly kind: "file"; readonly stats: BigIntStats }
  | { readonly kind: "gone" }
  | { readonly kind: "error"; readonly error: unknown };

// A handful covers every symlink spelling a session uses for one file; the cap bounds memory.
const MAX_ALIASES = 4;

export class FileStateTracker {
  readonly #options: ResolvedOptions;
  /** Keyed by canonical path; insertion order is recency (least recently used first). */
  readonly #records = new Map<string, ReadRecord>();
  /** Absolute spelling → canonical key: a hint that lets the fast path skip `realpath`. */
  readonly #aliases = new Map<string, string>();
  #seq = 0;
  /** Reads in flight, and the paths forgotten while they were: a late read must not undo it. */
  #pending = 0;
  readonly #forgotten = new Map<string, number>();
  #clearedAt = 0;

  constructor(options: FileStateTrackerOptions = {}) {
    this.#options = resolveOptions(options);
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
   * trip on its own writes (seed 000 `RecordEdit`; ChatCLI's forgetting would leave the next
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
    let record = this.#lookup(lexical);
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
      this.#noteSpelling(lexical, key);
      if (!record) {
        if (probe.kind === "gone") return verdict(key, "new-file", "none");
        if (this.#options.policy === "warn") return verdict(key, "not-read", "none");
        throw new FreshfsError("NOT_READ", notReadMessage(lexical), { path: lexical });
      }
    }
    this.#touch(record);
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
    if (key === undefined) return;
    const record = this.#records.get(key);
    if (record) this.#remove(record);
    if (this.#pending > 0) this.#forgotten.set(key, this.#seq);
  }

  /** Drops every record. */
  clear(): void {
    this.#records.clear();
    this.#aliases.clear();
    this.#clearedAt = this.#seq;
  }

  async #record(
    path: string,
    offset: number,
    limit: number,
    content: string | Uint8Array | undefined,
  ): Promise<ReadEntry> {
    const lexical = absolutePath(path);
    const seq = ++this.#seq;
    const readAt = Date.now();
    this.#pending++;
    try {
      let key: string;
      try {
        key = canonicalPath(lexical, this.#options.fs);
      } catch (error) {
        throw fromFsError(error, "record a read of", lexical);
      }
      const seen =
        content === undefined
          ? await this.#observeFile(key)
          : await this.#observeContent(key, content);
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
      return entryOf(this.#store(record, lexical));
    } finally {
      if (--this.#pending === 0) this.#forgotten.clear();
    }
  }

  /** The tracker reads the file itself: its snapshot is the record. */
  async #observeFile(key: string): Promise<Observation> {
    let snapshot: Snapshot;
    try {
      snapshot = await snapshotFile(key, this.#options.fs);
    } catch (error) {
      const code = error instanceof FreshfsError ? error.code : undefined;
      if (code !== "PERMISSION_DENIED" && code !== "IO_ERROR") throw error;
      return this.#observeStatOnly(key, error);
    }
    return {
      hash: snapshot.hash,
      lines: snapshot.lines,
      size: snapshot.fingerprint.size,
      fingerprint: snapshot.stable ? snapshot.fingerprint : undefined,
      racy: this.#isRacy(snapshot.fingerprint, snapshot.startedAtMs),
    };
  }

  /**
   * The file is there but its bytes cannot be read: keep its stat data and mark the content
   * unknown, which is never mistaken for empty (contract 1.2).
   */
  async #observeStatOnly(key: string, readError: unknown): Promise<Observation> {
    const startedAtMs = Date.now();
    let stats: BigIntStats;
    try {
      stats = await this.#options.fs.stat(key);
    } catch (error) {
      throw fromFsError(error, "record a read of", key);
    }
    if (!stats.isFile()) {
      throw new FreshfsError(
        "NOT_A_FILE",
        `Cannot read ${key}: it is ${describeNonFile(stats)}, not a regular file.`,
        { path: key, cause: readError },
      );
    }
    const fingerprint = fingerprintOf(stats);
    return {
      hash: undefined,
      lines: undefined,
      size: fingerprint.size,
      fingerprint,
      racy: this.#isRacy(fingerprint, startedAtMs),
    };
  }

  /**
   * The caller read the bytes at some earlier moment. Its stat data is trusted only when the
   * file, read again now, still has those bytes: otherwise a change between the caller's read
   * and this call would leave a fingerprint that vouches for bytes nobody saw.
   */
  async #observeContent(key: string, content: string | Uint8Array): Promise<Observation> {
    let snapshot: Snapshot | undefined;
    try {
      snapshot = await snapshotFile(key, this.#options.fs);
    } catch {
      snapshot = undefined;
    }
    const candidates = typeof content === "string" ? encodingsOf(content) : [content];
    if (snapshot?.stable && candidates.some((bytes) => sha256(bytes) === snapshot.hash)) {
      return {
        hash: snapshot.hash,
        lines: snapshot.lines,
        size: snapshot.fingerprint.size,
        fingerprint: snapshot.fingerprint,
        racy: this.#isRacy(snapshot.fingerprint, snapshot.startedAtMs),
      };
    }
    const bytes = candidates[0] as Uint8Array;
    return {
      hash: sha256(bytes),
      lines: countLines(bytes),
      size: bytes.byteLength,
      fingerprint: undefined,
      racy: true,
    };
  }

  #isRacy(fingerprint: Fingerprint, startedAtMs: number): boolean {
    return isRacy(fingerprint, startedAtMs, this.#options.racyWindowMs);
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
    if (this.#records.get(record.key) !== record) return;
    record.fingerprint = snapshot.fingerprint;
    record.racy = this.#isRacy(snapshot.fingerprint, snapshot.startedAtMs);
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

  #lookup(lexical: string): ReadRecord | undefined {
    return this.#records.get(this.#aliases.get(lexical) ?? lexical);
  }

  /** The canonical key of `path`, or undefined when it cannot be resolved. */
  #keyOf(path: string): string | undefined {
    try {
      return canonicalPath(path, this.#options.fs);
    } catch {
      return undefined;
    }
  }

  #store(record: ReadRecord, lexical: string): ReadRecord {
    const { key } = record;
    // A read that began before a forget() or clear() of its path must not bring it back.
    if (record.seq <= this.#clearedAt || record.seq <= (this.#forgotten.get(key) ?? 0)) {
      return record;
    }
    const existing = this.#records.get(key);
    if (existing && existing.seq > record.seq) {
      this.#noteSpelling(lexical, key);
      return existing;
    }
    let stored = record;
    if (existing) {
      stored = withMergedWindow(existing, record);
      stored.aliases = existing.aliases;
      this.#records.delete(key);
    }
    this.#records.set(key, stored);
    this.#noteSpelling(lexical, key);
    for (const oldest of this.#records.values()) {
      if (this.#records.size <= this.#options.maxEntries) break;
      this.#remove(oldest);
    }
    return stored;
  }

  #touch(record: ReadRecord): void {
    if (this.#records.get(record.key) !== record) return;
    this.#records.delete(record.key);
    this.#records.set(record.key, record);
  }

  /** `lexical` was just resolved to `key`: keep the alias hint true to that. */
  #noteSpelling(lexical: string, key: string): void {
    const record = this.#records.get(key);
    if (lexical === key || !record) {
      this.#aliases.delete(lexical);
      return;
    }
    if (this.#aliases.get(lexical) === key) return;
    this.#aliases.set(lexical, key);
    const aliases = [...(record.aliases ?? []), lexical];
    while (aliases.length > MAX_ALIASES) this.#dropAlias(record, aliases.shift() as string);
    record.aliases = aliases;
  }

  #dropAlias(record: ReadRecord, alias: string): void {
    if (this.#aliases.get(alias) === record.key) this.#aliases.delete(alias);
  }

  #remove(record: ReadRecord): void {
    this.#records.delete(record.key);
    for (const alias of record.aliases ?? []) this.#dropAlias(record, alias);
  }
}

/**
 * Two partial windows of the same bytes that touch or overlap are one window: a file longer
 * than a read tool shows at once (2,000 lines) is read in consecutive windows, and once they
 * cover every line of one unchanged content, nothing was left unseen. The hash makes "the
 * same bytes" exact. A partial read after a full one stays partial (seed 000: the newest read
 * is the one judged), since that newest window is all the caller says it looked at.
 */
function withMergedWindow(existing: ReadRecord, next: ReadRecord): ReadRecord {
  if (!next.partial || !existing.partial) return next;
  if (next.hash === undefined || next.hash !== existing.hash || next.lines === undefined) {
    return next;
  }
  const last = (r: ReadRecord) => (r.limit > 0 ? r.offset + r.limit - 1 : Number.POSITIVE_INFINITY);
  if (next.offset > last(existing) + 1 || existing.offset > last(next) + 1) return next;
  const offset = Math.min(existing.offset, next.offset);
  const end = Math.max(last(existing), last(next));
  const limit = end >= next.lines ? 0 : end - offset + 1;
  return { ...next, offset, limit, partial: offset > 1 || limit > 0 };
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The raw bytes a caller's decoded string may have come from: UTF-8 with or without a byte
 * order mark (decoders drop it), with line ends as given or as CRLF (readers that normalize
 * them), or Latin-1. Raw bytes are what the guard compares (contract 1.2); these forms spare
 * a caller that only kept the text a false STALE. The first form is the text as UTF-8.
 */
function encodingsOf(text: string): Uint8Array[] {
  const forms = [text];
  if (text.includes("\n") && !text.includes("\r")) forms.push(text.replaceAll("\n", "\r\n"));
  const encoded: Uint8Array[] = [];
  for (const form of forms) {
    const utf8 = Buffer.from(form, "utf8");
    encoded.push(utf8);
    if (!form.startsWith("\uFEFF")) encoded.push(Buffer.concat([UTF8_BOM, utf8]));
  }
  if (isLatin1Beyond7Bit(text)) encoded.push(Buffer.from(text, "latin1"));
  return encoded;
}

/** Latin-1 differs from UTF-8 only for U+0080..U+00FF, and cannot encode anything above. */
function isLatin1Beyond7Bit(text: string): boolean {
  let beyond = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) return false;
    if (code >= 0x80) beyond = true;
  }
  return beyond;
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

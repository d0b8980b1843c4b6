/**
 * The guard's memory: per canonical path, the latest read only (never the content: an agent
 * reads before every edit, and content kept for a long session grows to hundreds of MB),
 * bounded, the least recently used forgotten first. Other spellings of a path (through
 * symlinks) are kept as hints to its record, and reads are ordered, so that a slow read never
 * replaces a later one nor brings back a path forgotten meanwhile. Depends on `snapshot`.
 */
import type { Fingerprint } from "./snapshot.js";

/** What a read was: the window shown and what the file held then. */
export interface ReadWindow {
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
}

export interface ReadRecord extends ReadWindow {
  readonly key: string;
  /** Order of the calls that recorded reads: a slow early read never replaces a later one. */
  readonly seq: number;
  /** Stat data known to describe the bytes behind `hash`; undefined when not known. */
  fingerprint: Fingerprint | undefined;
  /** `fingerprint` was taken too close to the file's last change to be trusted alone. */
  racy: boolean;
  /** Other spellings of the path (through symlinks) seen for this record. */
  aliases: string[] | undefined;
}

// A handful covers every symlink spelling a session uses for one file; the cap bounds memory.
const MAX_ALIASES = 4;

export class ReadRecords {
  readonly #maxEntries: number;
  /** Keyed by canonical path; insertion order is recency (least recently used first). */
  readonly #records = new Map<string, ReadRecord>();
  /** Absolute spelling → canonical key: a hint that lets the fast path skip `realpath`. */
  readonly #aliases = new Map<string, string>();
  #seq = 0;
  /** Reads in flight, and the paths forgotten while they were: a late read must not undo it. */
  #pending = 0;
  readonly #forgotten = new Map<string, number>();
  #clearedAt = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#records.size;
  }

  get(key: string): ReadRecord | undefined {
    return this.#records.get(key);
  }

  /** The record an absolute spelling leads to, through the alias hint; not proof of identity. */
  lookup(lexical: string): ReadRecord | undefined {
    return this.#records.get(this.#aliases.get(lexical) ?? lexical);
  }

  /** Whether `record` is still the one kept for its path (not replaced, forgotten or evicted). */
  holds(record: ReadRecord): boolean {
    return this.#records.get(record.key) === record;
  }

  /** A read begins: its sequence number, for `store`. Every `beginRead` is paired with `endRead`. */
  beginRead(): number {
    this.#pending++;
    return ++this.#seq;
  }

  endRead(): void {
    if (--this.#pending === 0) this.#forgotten.clear();
  }

  /**
   * Keeps `record` as its path's latest read, reached through `lexical` too; returns what is
   * kept, which is an earlier call's record when that one began later.
   */
  store(record: ReadRecord, lexical: string): ReadRecord {
    const { key } = record;
    // A read that began before a forget() or clear() of its path must not bring it back.
    if (record.seq <= this.#clearedAt || record.seq <= (this.#forgotten.get(key) ?? 0)) {
      return record;
    }
    const existing = this.#records.get(key);
    if (existing && existing.seq > record.seq) {
      this.noteSpelling(lexical, key);
      return existing;
    }
    let stored = record;
    if (existing) {
      stored = withMergedWindow(existing, record);
      stored.aliases = existing.aliases;
      this.#records.delete(key);
    }
    this.#records.set(key, stored);
    this.noteSpelling(lexical, key);
    for (const oldest of this.#records.values()) {
      if (this.#records.size <= this.#maxEntries) break;
      this.#remove(oldest);
    }
    return stored;
  }

  /** `record` was just used: it becomes the most recently used. */
  touch(record: ReadRecord): void {
    if (!this.holds(record)) return;
    this.#records.delete(record.key);
    this.#records.set(record.key, record);
  }

  /** `lexical` was just resolved to `key`: keep the alias hint true to that. */
  noteSpelling(lexical: string, key: string): void {
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

  /** Drops the record of `key`; a read of it in flight will not bring it back. */
  forget(key: string): void {
    const record = this.#records.get(key);
    if (record) this.#remove(record);
    if (this.#pending > 0) this.#forgotten.set(key, this.#seq);
  }

  /** Drops every record; reads in flight will not bring them back. */
  clear(): void {
    this.#records.clear();
    this.#aliases.clear();
    this.#clearedAt = this.#seq;
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
 * same bytes" exact. A partial read after a full one stays partial (the newest read is the one
 * an edit is judged on), since that newest window is all the caller says it looked at.
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

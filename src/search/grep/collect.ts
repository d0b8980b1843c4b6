/**
 * grep's answer: the records a search yields (lines, files or counts, by output mode), taken
 * in file order as the workers' outcomes arrive, paged (`offset`, `limit`), with every file it
 * skipped and why, and the warnings a caller must see. The printer's shapes are here; the
 * search that feeds them is `schedule`. Depends on `scan/cache` (freshness) and grep's
 * options and worker types.
 */
import type { Freshness } from "../../scan/cache.js";
import type { ListingAnswer, SearchProgress } from "../listing.js";
import type { LineSpans } from "./engine.js";
import type { GrepOutputMode, ResolvedGrep } from "./options.js";
import type { LineTable, WorkerOutcome } from "./worker.js";

export interface GrepLine {
  readonly path: string;
  /** 1-based. */
  readonly line: number;
  readonly text: string;
  /** A matching line, or a context line around one. */
  readonly match: boolean;
  /**
   * With `submatches` or `onlyMatching`, on a matching line: the 1-based byte column of its
   * first match (with `onlyMatching`, of this match).
   */
  readonly column?: number | undefined;
  /** With `submatches`: the line's byte offset in the file. */
  readonly offset?: number | undefined;
  /** With `submatches`, on a matching line: each match, its byte offsets in the line, its text. */
  readonly submatches?: readonly GrepSubmatch[] | undefined;
  /**
   * Not a line of the file but rg's notice about it (with `binary` `quit` or `report`): the
   * offset of its first NUL, and whether the search stopped there after the lines before
   * (`quit`) or the file matched as a whole (`report`; then `match` is true).
   */
  readonly binary?: { readonly offset: number; readonly stopped: boolean } | undefined;
}

export interface GrepSubmatch {
  /** Byte offsets in the line, [start, end). */
  readonly start: number;
  readonly end: number;
  /** The matched text (with `replace`, its replacement). */
  readonly text: string;
}

export interface GrepSkipped {
  readonly binary: number;
  readonly tooLarge: readonly { readonly path: string; readonly size: number }[];
  readonly unreadable: readonly { readonly path: string; readonly code: string }[];
  /** Files abandoned because the regex ran past `fileTimeoutMs` on them. */
  readonly timedOut: readonly string[];
  /** Files on which the regex itself failed (a stack overflow on a deeply nested match). */
  readonly failed: readonly { readonly path: string; readonly message: string }[];
}

export interface GrepResult extends ListingAnswer {
  readonly mode: GrepOutputMode;
  /** `content` mode: matching and context lines, by path then line. */
  readonly lines: readonly GrepLine[];
  /** `files_with_matches` (and `files_without_match`) mode: the files, by path. */
  readonly files: readonly string[];
  /** `count` mode: matching lines per file, by path. */
  readonly counts: readonly { readonly path: string; readonly count: number }[];
  /** Records (lines, files or counts) found, or found before the search stopped at `offset + limit`. */
  readonly totalRecords: number;
  /** Files searched (candidates after the filters). */
  readonly filesSearched: number;
  /** Files read to answer: fewer than `filesSearched` when the content index ruled some out. */
  readonly filesRead: number;
  readonly skipped: GrepSkipped;
  /** The search stopped at `timeoutMs`: what is here is only part of the answer. */
  readonly partial: boolean;
  readonly warnings: readonly string[];
}

/** Where the answer came from, as the result reports it. */
export interface Answered {
  readonly root: string;
  readonly freshness: Freshness;
  readonly unwatched: string | undefined;
}

// Often enough for a progress line to move, rarely enough to cost nothing.
const PROGRESS_EVERY_MS = 100;

function cut(text: string, maxColumns: number): string {
  if (text.length <= maxColumns) return text;
  return `${text.slice(0, maxColumns)} [… ${text.length - maxColumns} more characters]`;
}

/**
 * The byte offsets in `text`'s UTF-8 of the character offsets `at` (matches' [start, end), in
 * order), each measured from the one before: a line of many matches is measured once.
 */
function byteOffsets(text: string, at: readonly number[]): number[] {
  const out: number[] = [];
  let char = 0;
  let byte = 0;
  for (const offset of at) {
    if (offset >= char) byte += Buffer.byteLength(text.slice(char, offset));
    else byte = Buffer.byteLength(text.slice(0, offset));
    char = offset;
    out.push(byte);
  }
  return out;
}

/**
 * Takes the workers' outcomes in file order and keeps the records of the page: the records
 * before `offset` are counted and dropped, and once one record more than the page is in hand
 * (it says the answer is truncated) the search is told to stop.
 */
export class RecordSink {
  readonly #options: ResolvedGrep;
  /** The files read, in order (the feed the outcomes are numbered by). */
  #files: readonly string[] = [];
  /** For each file read, its index among the candidates (when the index left some out). */
  #positions: readonly number[] | undefined;
  /** Candidates the content index knows to be binary, by index, ascending. */
  #knownBinary: readonly number[] = [];
  #binaryCounted = 0;
  #reportedAt = Number.NEGATIVE_INFINITY;
  readonly #lines: GrepLine[] = [];
  readonly #paths: string[] = [];
  readonly #counts: { path: string; count: number }[] = [];
  #records = 0;
  #binary = 0;
  readonly #tooLarge: { path: string; size: number }[] = [];
  readonly #unreadable: { path: string; code: string }[] = [];
  readonly #failed: { path: string; message: string }[] = [];

  constructor(options: ResolvedGrep) {
    this.#options = options;
  }

  /**
   * The files the outcomes are numbered by; with `positions` (their indexes among the
   * candidates) and `knownBinary` (candidates the index did not read because they are binary,
   * counted as if read) when the content index left some out.
   */
  reading(
    files: readonly string[],
    positions?: readonly number[] | undefined,
    knownBinary: readonly number[] = [],
  ): void {
    this.#files = files;
    this.#positions = positions;
    this.#knownBinary = knownBinary;
  }

  /** Whether the page is full, and a record more is in hand: the search may stop. */
  get full(): boolean {
    return this.#records > this.#options.wanted;
  }

  /** Takes the outcome of file `at` (undefined: not searched); false once the page is full. */
  readonly take = (at: number, outcome: WorkerOutcome | undefined): boolean => {
    this.#progress(at);
    const positions = this.#positions;
    if (positions) this.#countBinaryBefore(positions[at] as number);
    const path = this.#files[at] as string;
    const { withoutMatch } = this.#options;
    // A file that was read and held no match; binary, unreadable or too large is not one.
    if (!outcome || outcome.kind === "none") {
      if (withoutMatch && this.#counted()) this.#paths.push(path);
      return !this.full;
    }
    switch (outcome.kind) {
      case "binary":
        this.#binary++;
        break;
      case "too-large":
        this.#tooLarge.push({ path, size: outcome.size });
        break;
      case "unreadable":
        // Deleted since the listing was taken (a cached one, say): not there, as rg would see it.
        if (outcome.code !== "ENOENT" && outcome.code !== "ENOTDIR") {
          this.#unreadable.push({ path, code: outcome.code });
        }
        break;
      case "failed":
        this.#failed.push({ path, message: outcome.message });
        break;
      case "hits":
        if (!withoutMatch) this.#hits(path, outcome);
        break;
    }
    return !this.full;
  };

  /** The answer, once the search is over (`partial`: its deadline stopped it). */
  result(
    answered: Answered,
    scheduled: { readonly timedOut: readonly number[]; readonly partial: boolean },
    filesSearched: number,
  ): GrepResult {
    // Searched to the end: every known binary file was reached.
    if (!this.full && !scheduled.partial) this.#countBinaryBefore(filesSearched);
    const timedOut = scheduled.timedOut.map((at) => this.#files[at] as string);
    const { mode, wanted } = this.#options;
    return {
      ...answered,
      mode,
      lines: this.#lines,
      files: this.#paths,
      counts: this.#counts,
      totalRecords: this.#records,
      truncated: this.#records > wanted,
      filesSearched,
      filesRead: this.#files.length,
      skipped: {
        binary: this.#binary,
        tooLarge: this.#tooLarge,
        unreadable: this.#unreadable,
        timedOut,
        failed: this.#failed,
      },
      partial: scheduled.partial,
      warnings: this.#warnings(timedOut, scheduled.partial),
    };
  }

  #warnings(timedOut: readonly string[], partial: boolean): string[] {
    const { fileTimeoutMs, timeoutMs, maxFileSize } = this.#options;
    const warnings: string[] = [];
    if (timedOut.length > 0) {
      warnings.push(
        `The regex ran longer than ${fileTimeoutMs} ms on ${timedOut.length} file(s), which were skipped: ${timedOut.join(", ")}. Simplify the pattern (avoid nested or adjacent unbounded repeats) or add a literal it must contain.`,
      );
    }
    if (this.#failed.length > 0) {
      const list = this.#failed.map((f) => `${f.path} (${f.message})`).join(", ");
      warnings.push(
        `The regex failed on ${this.#failed.length} file(s), which were skipped: ${list}.`,
      );
    }
    if (partial) warnings.push(`The search stopped after ${timeoutMs} ms: results are partial.`);
    if (this.#tooLarge.length > 0) {
      warnings.push(
        `${this.#tooLarge.length} file(s) larger than ${maxFileSize} bytes were not searched.`,
      );
    }
    return warnings;
  }

  /** The first result is reported at once: a progress line shows the search has begun. */
  #progress(at: number): void {
    const report = this.#options.onProgress;
    if (!report || performance.now() - this.#reportedAt < PROGRESS_EVERY_MS) return;
    this.#reportedAt = performance.now();
    const progress: SearchProgress = { phase: "search", done: at + 1, total: this.#files.length };
    report(progress);
  }

  /** Counts the known binary files before candidate `upTo`, as reading them would have. */
  #countBinaryBefore(upTo: number): void {
    const known = this.#knownBinary;
    while (this.#binaryCounted < known.length && (known[this.#binaryCounted] as number) < upTo) {
      this.#binary++;
      this.#binaryCounted++;
    }
  }

  /** Whether the record counted last falls in the page (after `offset`, within `limit`). */
  #inPage(): boolean {
    return this.#records > this.#options.page.offset && this.#records <= this.#options.wanted;
  }

  /** Counts one record; whether it falls in the page, to be kept. */
  #counted(): boolean {
    this.#records++;
    return this.#inPage();
  }

  #hits(path: string, outcome: Extract<WorkerOutcome, { kind: "hits" }>): void {
    const { mode, binary } = this.#options;
    const binaryAt = outcome.binaryAt;
    // rg counts nothing in a file it stopped searching at a NUL.
    if (binaryAt !== undefined && binary === "quit" && mode === "count") {
      this.#binary++;
      return;
    }
    if (mode === "count") {
      if (this.#counted()) this.#counts.push({ path, count: outcome.matches });
      return;
    }
    if (mode !== "content") {
      if (this.#counted()) this.#paths.push(path);
      return;
    }
    const table = outcome.lines;
    for (let i = 0; i < table.line.length; i++) this.#line(path, table, i);
    // After the lines before its first NUL, rg's notice: it stopped there, or the file
    // matched (a notice that is the file's only record counts as one).
    if (binaryAt !== undefined) {
      const stopped = binary === "quit";
      if (!stopped && table.line.length === 0) this.#records++;
      if (this.#inPage()) {
        const notice = { offset: binaryAt, stopped };
        this.#lines.push({ path, line: 0, text: "", match: !stopped, binary: notice });
      }
    }
  }

  /**
   * Line `i` of a file's answer: as it is, one record per match (`-o`), or with its matches
   * (placed by its spans, present with `spans`).
   */
  #line(path: string, table: LineTable, i: number): void {
    const { maxColumns, submatches, onlyMatching } = this.#options;
    const line = table.line[i] as number;
    const text = table.text[i] as string;
    const match = table.match[i] as boolean;
    const spans: LineSpans | undefined = table.offset && {
      offset: table.offset[i] as number,
      at: table.at?.[i] ?? [],
      texts: table.texts?.[i] ?? [],
    };
    if (!spans || !match) {
      if (!this.#counted()) return;
      const shown = cut(text, maxColumns);
      this.#lines.push(
        !spans || !submatches
          ? { path, line, text: shown, match }
          : { path, line, text: shown, match, offset: spans.offset, submatches: [] },
      );
    } else if (onlyMatching) {
      // Each match a line of its own (context lines stay whole, as rg's -o shows them).
      const bytes = byteOffsets(text, spans.at);
      for (let k = 0; k < spans.texts.length; k++) {
        if (!this.#counted()) continue;
        const column = (bytes[2 * k] as number) + 1;
        const shown = cut(spans.texts[k] as string, maxColumns);
        this.#lines.push({ path, line, text: shown, match: true, column });
      }
    } else if (this.#counted()) {
      this.#lines.push(this.#detailed(path, line, text, spans));
    }
  }

  /** A matching line with its matches: replaced (`replace`), and placed (`submatches`). */
  #detailed(path: string, line: number, text: string, spans: LineSpans): GrepLine {
    const { replace, submatches, maxColumns } = this.#options;
    const { at, texts } = spans;
    let shown = text;
    if (replace !== undefined) {
      shown = "";
      let from = 0;
      for (let k = 0; k < texts.length; k++) {
        const start = Math.min(at[2 * k] as number, text.length);
        shown += text.slice(from, start) + (texts[k] as string);
        from = Math.min(at[2 * k + 1] as number, text.length);
      }
      shown += text.slice(from);
      // A run of lines replaced as one (`-U`) ends with its last line's break, if not replaced.
      if (shown.endsWith("\n")) shown = shown.slice(0, -1);
    }
    const first = at[0];
    const column = first === undefined ? undefined : Buffer.byteLength(text.slice(0, first)) + 1;
    if (!submatches) return { path, line, text: cut(shown, maxColumns), match: true, column };
    const bytes = byteOffsets(text, at);
    const found: GrepSubmatch[] = texts.map((matched, k) => ({
      start: bytes[2 * k] as number,
      end: bytes[2 * k + 1] as number,
      text: matched,
    }));
    return {
      path,
      line,
      text: cut(shown, maxColumns),
      match: true,
      column,
      offset: spans.offset,
      submatches: found,
    };
  }
}

/**
 * Searching one file's bytes: the grep worker's inner loop. Pure (a Buffer in, lines out);
 * depends on `finder`.
 *
 * Lines are found on the raw bytes: with a required literal, a `Finder` (~2 GB/s) picks
 * the candidate lines and only those are decoded and handed to the regex; without one, every
 * line is. A match never spans lines unless the search is multiline, as with ripgrep.
 */

import type { Finder } from "./finder.js";
import type { LinePrefilter } from "./regex/index.js";

export type SearchMode = "content" | "files_with_matches" | "count";

export interface EngineSettings {
  readonly regex: RegExp;
  /** Finds the text every match contains (exactly, or in any ASCII case). */
  readonly finder: Finder | undefined;
  /**
   * Without a finder: the lines that may match, found on the raw bytes (a lazy DFA), so the
   * regex runs only on those.
   */
  readonly prefilter: LinePrefilter | undefined;
  /** The literal is the whole pattern: a line that contains it matches, with no regex run. */
  readonly exact: boolean;
  readonly multiline: boolean;
  /**
   * The regex may run over a whole file's text: it has no lookaround, which there could see
   * past the end of a line.
   */
  readonly wholeText: boolean;
  readonly before: number;
  readonly after: number;
  /** Most matching lines per file. */
  readonly maxCount: number;
  readonly mode: SearchMode;
  /** The lines that do not match are the matches (`-v`). */
  readonly invert: boolean;
  /**
   * Where each match is, for matching lines (`-o`, `--column`, `--json`, `-r`): records carry
   * their byte offset in the file, the matches' character offsets and their texts.
   */
  readonly spans: boolean;
  /** Each match's text replaced by this template (rg's `-r`: `$1`, `${name}`, `$$`). */
  readonly replace: string | undefined;
  /** `count` mode counts matches, not lines (`--count-matches`). */
  readonly countMatches: boolean;
  /** What a NUL byte (a binary file) does to the search: see `BinaryMode`. */
  readonly binary: BinaryMode;
}

/**
 * A file holding a NUL byte is: `skip`ped (freshfs's default: a NUL in the first 8 KiB, or
 * anywhere in a file that matched, leaves the file out, counted as binary); searched in the
 * lines before its first NUL, where the search `quit`s (rg's way with files it finds: the
 * matches there, and the offset); searched whole with each NUL as a line break and `report`ed
 * as matching (rg's way with a file it is given, and `--binary`: the matches before the NUL
 * shown, then the offset); or searched as `text` (`-a`).
 */
export type BinaryMode = "skip" | "quit" | "report" | "text";

/** One line of a file's answer: a matching line, or a context line around one. */
export interface LineRecord {
  /** 1-based. */
  readonly line: number;
  /** Without the newline. */
  readonly text: string;
  readonly match: boolean;
  /** With `spans`: where the line is, and (on a matching line) where its matches are. */
  readonly spans?: LineSpans;
}

/**
 * A line's place and its matches. In multiline mode a match's offsets count from its first
 * line's start and may run past that line.
 */
export interface LineSpans {
  /** The line's byte offset in the file. */
  readonly offset: number;
  /** The matches' [start, end) character offsets in the text, flat: 2 numbers a match. */
  readonly at: readonly number[];
  /** Each match's text (or its replacement). */
  readonly texts: readonly string[];
}

export type FileOutcome =
  | { readonly kind: "binary" }
  | { readonly kind: "none" }
  | {
      readonly kind: "hits";
      readonly matches: number;
      readonly lines: LineRecord[];
      /** `quit` or `report`: the offset of the file's first NUL (it is binary). */
      readonly binaryAt?: number;
    };

const NEWLINE = 0x0a;
/** ripgrep's first look: a NUL byte in the first 8 KiB makes a file binary (a later one, too). */
const BINARY_PROBE = 8192;
const NONE: FileOutcome = { kind: "none" };
const BINARY: FileOutcome = { kind: "binary" };

interface Line {
  readonly start: number;
  readonly end: number;
  readonly number: number;
}

/**
 * Searches a file's bytes, or (`whole` false) a stretch of whole lines from a file known to hold
 * no NUL (the content index's block): then there is no binary test, line numbers count from the
 * stretch's first line as 1, and a byte order mark is stripped only when the stretch begins the
 * file (`atStart`).
 */
export function searchBuffer(
  raw: Buffer,
  settings: EngineSettings,
  whole = true,
  atStart = whole,
): FileOutcome {
  let buffer = whole ? transcoded(raw) : raw;
  const mode = whole ? settings.binary : "text";
  // A NUL in the first read leaves nothing for `quit` to search, as for `skip`.
  if ((mode === "skip" || mode === "quit") && buffer.subarray(0, BINARY_PROBE).includes(0)) {
    return BINARY;
  }
  let binaryAt = -1;
  /** The original bytes, before a `report` file's NULs became line breaks. */
  const unconverted = buffer;
  if (mode === "report") {
    binaryAt = buffer.indexOf(0);
    if (binaryAt !== -1) {
      buffer = Buffer.from(buffer);
      for (let at = binaryAt; at !== -1; at = buffer.indexOf(0, at + 1)) buffer[at] = NEWLINE;
    }
  }
  // A UTF-8 byte order mark is not part of the first line's text (ripgrep strips it too).
  const start = atStart && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  const { finder } = settings;
  if (finder !== undefined && !settings.invert && finder.find(buffer, start) === -1) return NONE;
  let matched: Line[];
  // Matching lines, as ripgrep counts them; in multiline mode a match over several lines
  // counts once.
  let count: number;
  if (settings.invert) {
    matched = invertedLines(buffer, start, settings);
    count = matched.length;
  } else if (settings.multiline) {
    ({ lines: matched, count } = multilineMatches(buffer, start, settings));
  } else {
    matched =
      finder === undefined && settings.prefilter === undefined && settings.wholeText
        ? textMatches(buffer, start, settings)
        : lineMatches(buffer, start, settings);
    count = matched.length;
  }
  if (matched.length === 0) return NONE;
  // A NUL past the first 8 KiB makes the file binary too, as ripgrep finds it while reading;
  // looked for only in a file that matched (elsewhere it changes nothing), at memchr speed.
  if (mode === "skip" && buffer.indexOf(0, BINARY_PROBE) !== -1) return BINARY;
  if (mode === "quit") {
    const nul = buffer.indexOf(0);
    if (nul !== -1) {
      const before = linesBefore(buffer, nul, settings);
      return before.kind === "hits" ? { ...before, binaryAt: nul } : BINARY;
    }
  }
  if (binaryAt !== -1 && settings.mode === "content") {
    // The matching lines before the NUL are shown; after it, only that the file matches.
    const before = linesBefore(unconverted, binaryAt, settings);
    const lines = before.kind === "hits" ? before.lines : [];
    return { kind: "hits", matches: count, lines, binaryAt };
  }
  const binary = binaryAt === -1 ? {} : { binaryAt };
  if (settings.mode === "count" && settings.countMatches && !settings.invert) {
    count = countAll(buffer, start, matched, settings);
  }
  if (settings.mode !== "content") return { kind: "hits", matches: count, lines: [], ...binary };
  let lines = withContext(buffer, start, matched, settings);
  if (settings.multiline && settings.replace !== undefined)
    lines = replacedBlocks(buffer, lines, settings);
  return { kind: "hits", matches: count, lines, ...binary };
}

/** rg's read buffer: it reads a file this much at a time (more for a longer line). */
const RG_BUFFER = 64 * 1024;

/**
 * Where rg's read that brings the first NUL (at `nul`) begins: rg looks for NULs in each read,
 * and on finding one searches nothing from that read on. Each read fills its buffer after the
 * unfinished last line it keeps; the buffer doubles when that line fills it.
 */
function readWithNul(buffer: Buffer, nul: number): number {
  let capacity = RG_BUFFER;
  let from = 0;
  let to = Math.min(buffer.length, capacity);
  while (nul >= to) {
    const kept = to - (buffer.lastIndexOf(NEWLINE, to - 1) + 1);
    if (kept >= capacity) capacity *= 2;
    from = to;
    to = Math.min(buffer.length, from + capacity - kept);
  }
  return from;
}

/**
 * The search of what rg reads of a binary file before it stops (the whole lines before the
 * read that brought its first NUL, at `nul`), as text.
 */
function linesBefore(buffer: Buffer, nul: number, settings: EngineSettings): FileOutcome {
  const from = readWithNul(buffer, nul);
  const end = from === 0 ? 0 : buffer.lastIndexOf(NEWLINE, from - 1) + 1;
  return searchBuffer(buffer.subarray(0, end), { ...settings, binary: "text" });
}

/**
 * A text that begins with a UTF-16 byte order mark, as UTF-8 (its mark dropped), as rg
 * transcodes it before searching; any other buffer as it is. Line numbers and offsets are then
 * the transcoded text's.
 */
export function transcoded(buffer: Buffer): Buffer {
  if (buffer.length < 2) return buffer;
  const le = buffer[0] === 0xff && buffer[1] === 0xfe;
  const be = buffer[0] === 0xfe && buffer[1] === 0xff;
  if (!le && !be) return buffer;
  const text = new TextDecoder(le ? "utf-16le" : "utf-16be").decode(buffer.subarray(2));
  return Buffer.from(text, "utf8");
}

/** Where the line holding byte `at` starts (never before `start`). */
function lineStartAt(buffer: Buffer, at: number, start: number): number {
  // lastIndexOf with a negative offset counts from the end: never pass one.
  if (at <= start) return start;
  const newline = buffer.lastIndexOf(NEWLINE, at - 1);
  return newline < start ? start : newline + 1;
}

function decode(buffer: Buffer, line: Line): string {
  return buffer.toString("utf8", line.start, line.end);
}

/** Matching lines, in order, at most `maxCount` (one, for files-with-matches). */
function lineMatches(buffer: Buffer, start: number, settings: EngineSettings): Line[] {
  const { regex, finder, prefilter, exact } = settings;
  const limit = settings.mode === "files_with_matches" ? 1 : settings.maxCount;
  // Only lines shown need their numbers.
  const numbered = settings.mode === "content";
  const found: Line[] = [];
  let from = start;
  let counted = start;
  let number = 1;
  while (from <= buffer.length && found.length < limit) {
    let lineStart = from;
    if (finder !== undefined) {
      const at = finder.find(buffer, from);
      if (at === -1) break;
      lineStart = lineStartAt(buffer, at, start);
    } else if (prefilter !== undefined) {
      // `from` is a line's start: the first line from there that may match.
      const at = prefilter.nextCandidateLine(buffer, from, buffer.length);
      if (at === -1) break;
      lineStart = at;
    }
    let lineEnd = buffer.indexOf(NEWLINE, lineStart);
    if (lineEnd === -1) lineEnd = buffer.length;
    // The line number: newlines between the last counted position and this line.
    for (
      let at = numbered ? buffer.indexOf(NEWLINE, counted) : -1;
      at !== -1 && at < lineStart;
      at = buffer.indexOf(NEWLINE, at + 1)
    ) {
      number++;
    }
    counted = lineStart;
    // Past a final newline (or in an empty file) there is no line.
    if (lineStart === buffer.length && (lineStart > start || buffer.length === start)) break;
    const line = { start: lineStart, end: lineEnd, number };
    if (exact) {
      found.push(line);
    } else {
      regex.lastIndex = 0;
      if (regex.test(decode(buffer, line))) found.push(line);
    }
    from = lineEnd + 1;
  }
  return found;
}

/**
 * The lines no match touches (`-v`), in order, at most `maxCount`. The finder (or the line
 * prefilter) still skips ahead: every line before the next candidate is an inverted match
 * without the regex running.
 */
function invertedLines(buffer: Buffer, start: number, settings: EngineSettings): Line[] {
  const { regex, finder, prefilter, exact } = settings;
  const limit = settings.mode === "files_with_matches" ? 1 : settings.maxCount;
  const found: Line[] = [];
  if (settings.multiline) {
    const covered = new Set(
      multilineMatches(buffer, start, {
        ...settings,
        maxCount: Number.POSITIVE_INFINITY,
      }).lines.map((line) => line.number),
    );
    let number = 1;
    for (let at = start; at < buffer.length && found.length < limit; number++) {
      let end = buffer.indexOf(NEWLINE, at);
      if (end === -1) end = buffer.length;
      if (!covered.has(number)) found.push({ start: at, end, number });
      at = end + 1;
    }
    return found;
  }
  let candidate = -1;
  let number = 1;
  for (let at = start; at < buffer.length && found.length < limit; number++) {
    let end = buffer.indexOf(NEWLINE, at);
    if (end === -1) end = buffer.length;
    if (candidate < at) {
      if (finder !== undefined) {
        const hit = finder.find(buffer, at);
        candidate = hit === -1 ? buffer.length + 1 : lineStartAt(buffer, hit, start);
      } else if (prefilter !== undefined) {
        const next = prefilter.nextCandidateLine(buffer, at, buffer.length);
        candidate = next === -1 ? buffer.length + 1 : next;
      } else {
        candidate = at;
      }
    }
    let matches = false;
    if (candidate === at) {
      if (exact) matches = true;
      else {
        regex.lastIndex = 0;
        matches = regex.test(buffer.toString("utf8", at, end));
      }
    }
    if (!matches) found.push({ start: at, end, number });
    at = end + 1;
  }
  return found;
}

/** Matches in the matching lines (`--count-matches`), a multiline match once. */
function countAll(buffer: Buffer, start: number, lines: Line[], settings: EngineSettings): number {
  if (settings.multiline) {
    const text = buffer.toString("utf8", start);
    return matchesIn(text, settings.regex, undefined).starts.length / 2;
  }
  let count = 0;
  for (const line of lines)
    count += matchesIn(decode(buffer, line), settings.regex, undefined).starts.length / 2;
  return count;
}

/**
 * Every match of the (global) regex in `text`: [start, end) character offsets, flat, and each
 * match's text, or its replacement. As Rust's regex iterates: an empty match moves on by one
 * character, and one right where the previous match ended is not a match.
 */
function matchesIn(
  text: string,
  regex: RegExp,
  replace: string | undefined,
): { starts: number[]; texts: string[] } {
  const starts: number[] = [];
  const texts: string[] = [];
  regex.lastIndex = 0;
  let previousEnd = -1;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const end = m.index + m[0].length;
    if (m[0].length > 0 || m.index !== previousEnd) {
      starts.push(m.index, end);
      texts.push(replace === undefined ? m[0] : expand(replace, m));
    }
    previousEnd = end;
    if (m[0].length === 0) {
      if (m.index >= text.length) break;
      const code = text.codePointAt(m.index) ?? 0;
      regex.lastIndex = m.index + (code > 0xffff && regex.unicode ? 2 : 1);
    }
  }
  return { starts, texts };
}

/**
 * rg's replacement syntax: `$N` and `$name` (the longest run of letters, digits and `_`),
 * `${N}` and `${name}`, `$$` for a dollar; a group that did not take part, or does not exist,
 * is empty.
 */
function expand(template: string, m: RegExpExecArray): string {
  let out = "";
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    if (c !== "$") {
      out += c;
      continue;
    }
    if (template[i + 1] === "$") {
      out += "$";
      i++;
      continue;
    }
    let name: string;
    let end: number;
    if (template[i + 1] === "{") {
      const close = template.indexOf("}", i + 2);
      name = close === -1 ? "" : template.slice(i + 2, close);
      if (close === -1 || !/^[_0-9A-Za-z]+$/.test(name)) {
        out += c;
        continue;
      }
      end = close;
    } else {
      const run = /^[_0-9A-Za-z]*/.exec(template.slice(i + 1))?.[0] ?? "";
      if (run === "") {
        out += c;
        continue;
      }
      name = run;
      end = i + run.length;
    }
    const value = /^\d+$/.test(name) ? m[Number(name)] : m.groups?.[name];
    out += value ?? "";
    i = end;
  }
  return out;
}

/**
 * Matching lines when no literal narrows the search: the file is decoded once and the regex
 * runs over the whole text (one exec per matching line, not one decode and exec per line). A
 * match is a line's only if it stays within it; one that runs over a newline is checked again
 * against its first line alone, as a line-by-line search would.
 */
function textMatches(buffer: Buffer, start: number, settings: EngineSettings): Line[] {
  const text = buffer.toString("utf8", start);
  const { regex } = settings;
  const limit = settings.mode === "files_with_matches" ? 1 : settings.maxCount;
  const numbers: number[] = [];
  let number = 1;
  let lineStart = 0;
  regex.lastIndex = 0;
  while (numbers.length < limit) {
    const m = regex.exec(text);
    if (m === null) break;
    // Advance the line count to the line holding the match.
    for (
      let at = text.indexOf("\n", lineStart);
      at !== -1 && at < m.index;
      at = text.indexOf("\n", at + 1)
    ) {
      number++;
      lineStart = at + 1;
    }
    if (m.index === text.length && (text.length === 0 || text.endsWith("\n"))) break; // past the last line
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const within = m.index + m[0].length <= lineEnd;
    if (within || oneLine(regex, text.slice(lineStart, lineEnd))) numbers.push(number);
    // One match makes the line: go on from the next one.
    regex.lastIndex = lineEnd + 1;
    if (lineEnd >= text.length) break;
  }
  return linesAt(buffer, start, numbers);
}

function oneLine(regex: RegExp, line: string): boolean {
  const saved = regex.lastIndex;
  regex.lastIndex = 0;
  const found = regex.test(line);
  regex.lastIndex = saved;
  return found;
}

/** Byte bounds of the given 1-based line numbers (ascending). */
function linesAt(buffer: Buffer, start: number, numbers: readonly number[]): Line[] {
  const lines: Line[] = [];
  let number = 1;
  let lineStart = start;
  for (const wanted of numbers) {
    while (number < wanted) {
      lineStart = buffer.indexOf(NEWLINE, lineStart) + 1;
      number++;
    }
    let end = buffer.indexOf(NEWLINE, lineStart);
    if (end === -1) end = buffer.length;
    lines.push({ start: lineStart, end, number });
  }
  return lines;
}

/** Lines touched by matches that may span lines (`-U`), in order, at most `maxCount`. */
function multilineMatches(
  buffer: Buffer,
  start: number,
  settings: EngineSettings,
): { lines: Line[]; count: number } {
  const text = buffer.toString("utf8", start);
  if (text.length === 0) return { lines: [], count: 0 };
  const { regex } = settings;
  const limit = settings.mode === "files_with_matches" ? 1 : settings.maxCount;
  // Character offsets of line starts, to turn match offsets into lines.
  const starts = [0];
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  // After a final newline there is no line.
  const lastLine = text.endsWith("\n") ? starts.length - 2 : starts.length - 1;
  const lineOf = (offset: number) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((starts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  };
  // Matches grouped by the lines they cover: matches on lines already covered join the group.
  const groups: [number, number][] = [];
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    if (m[0].length === 0) regex.lastIndex++;
    const first = lineOf(m.index);
    if (first > lastLine) break;
    const last = Math.min(lastLine, lineOf(Math.max(m.index, m.index + m[0].length - 1)));
    const group = groups[groups.length - 1];
    if (group && first <= group[1]) group[1] = Math.max(group[1], last);
    else if (groups.length >= limit) break;
    else groups.push([first, last]);
  }
  const numbers: number[] = [];
  for (const [first, last] of groups)
    for (let line = first; line <= last; line++) numbers.push(line + 1);
  return { lines: linesAt(buffer, start, numbers), count: groups.length };
}

/** The matching lines with `before`/`after` context lines around them, merged, in order. */
function withContext(
  buffer: Buffer,
  start: number,
  matched: Line[],
  settings: EngineSettings,
): LineRecord[] {
  const { before, after, regex, invert } = settings;
  const spans =
    settings.spans && !invert
      ? settings.multiline
        ? multilineSpans(buffer, start, settings)
        : undefined
      : null;
  const matchRecord = (line: Line): LineRecord => {
    const text = decode(buffer, line);
    if (spans === null) return { line: line.number, text, match: true };
    const found = spans ? spans.get(line.number) : matchesIn(text, regex, settings.replace);
    const at = found?.starts ?? [];
    return {
      line: line.number,
      text,
      match: true,
      spans: { offset: line.start, at, texts: found?.texts ?? [] },
    };
  };
  if (before === 0 && after === 0) return matched.map(matchRecord);
  // A context line that matches is shown as a match (as ripgrep does past a -m limit).
  const context = (line: Line): LineRecord => {
    const text = decode(buffer, line);
    regex.lastIndex = 0;
    const matches = !settings.multiline && regex.test(text) !== invert;
    if (spans === null) return { line: line.number, text, match: matches };
    if (matches) return matchRecord(line);
    return {
      line: line.number,
      text,
      match: false,
      spans: { offset: line.start, at: [], texts: [] },
    };
  };
  const records = new Map<number, LineRecord>();
  // The furthest line an after-context reached: the next match's goes on from there, so that
  // context of every line (`--passthru`) costs a pass over the file, not one per match.
  let furthest: Line | undefined;
  for (const line of matched) {
    let previous = line;
    for (let i = 0; i < before && previous.start > start; i++) {
      const end = previous.start - 1;
      const lineStart = lineStartAt(buffer, end, start);
      previous = { start: lineStart, end, number: previous.number - 1 };
      // Lines before it are an earlier match's, or its context's, already.
      if (records.has(previous.number)) break;
      records.set(previous.number, context(previous));
    }
    records.set(line.number, matchRecord(line));
    let next = furthest && furthest.number > line.number ? furthest : line;
    for (let i = next.number - line.number; i < after && next.end < buffer.length; i++) {
      const lineStart = next.end + 1;
      if (lineStart >= buffer.length) break; // nothing after the final newline
      let end = buffer.indexOf(NEWLINE, lineStart);
      if (end === -1) end = buffer.length;
      next = { start: lineStart, end, number: next.number + 1 };
      if (!records.has(next.number)) records.set(next.number, context(next));
    }
    furthest = next;
  }
  return [...records.values()].sort((a, b) => a.line - b.line);
}

/**
 * For `-U -r`: each run of matching lines as one record, its text the lines' (and the line
 * break after the last), its matches found in that text, so that a replacement can take in a
 * line break, as rg prints it.
 */
function replacedBlocks(
  buffer: Buffer,
  records: LineRecord[],
  settings: EngineSettings,
): LineRecord[] {
  const out: LineRecord[] = [];
  // Matched over the whole text, as found (a lookbehind sees before a run), then taken by run.
  const whole = buffer.toString("utf8");
  const all = matchesIn(whole, settings.regex, settings.replace);
  let k = 0;
  for (let i = 0; i < records.length; ) {
    const first = records[i] as LineRecord;
    if (!first.match || !first.spans) {
      out.push(first);
      i++;
      continue;
    }
    let j = i + 1;
    while (j < records.length) {
      const next = records[j] as LineRecord;
      const previous = records[j - 1] as LineRecord;
      if (!next.match || next.line !== previous.line + 1) break;
      j++;
    }
    const last = records[j - 1] as LineRecord;
    const from = first.spans.offset;
    const lastEnd = (last.spans?.offset as number) + Buffer.byteLength(last.text);
    const to = lastEnd < buffer.length ? lastEnd + 1 : lastEnd;
    const text = buffer.toString("utf8", from, to);
    const offset = buffer.toString("utf8", 0, from).length;
    const starts: number[] = [];
    const texts: string[] = [];
    while (k < all.texts.length && (all.starts[2 * k] as number) < offset) k++;
    for (; k < all.texts.length && (all.starts[2 * k] as number) < offset + text.length; k++) {
      starts.push(
        (all.starts[2 * k] as number) - offset,
        (all.starts[2 * k + 1] as number) - offset,
      );
      texts.push(all.texts[k] as string);
    }
    out.push({ line: first.line, text, match: true, spans: { offset: from, at: starts, texts } });
    i = j;
  }
  return out;
}

/**
 * For `-U`: each match, under the line it starts on, its offsets counted from that line's
 * start (so they may run past its end).
 */
function multilineSpans(
  buffer: Buffer,
  start: number,
  settings: EngineSettings,
): Map<number, { starts: number[]; texts: string[] }> {
  const text = buffer.toString("utf8", start);
  const { starts, texts } = matchesIn(text, settings.regex, settings.replace);
  const out = new Map<number, { starts: number[]; texts: string[] }>();
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < texts.length; k++) {
    const at = starts[2 * k] as number;
    for (
      let nl = text.indexOf("\n", lineStart);
      nl !== -1 && nl < at;
      nl = text.indexOf("\n", lineStart)
    ) {
      line++;
      lineStart = nl + 1;
    }
    const entry = out.get(line) ?? { starts: [], texts: [] };
    out.set(line, entry);
    entry.starts.push(at - lineStart, (starts[2 * k + 1] as number) - lineStart);
    entry.texts.push(texts[k] as string);
  }
  return out;
}

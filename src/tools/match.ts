/**
 * Finding an edit's old text in a file: verbatim first, then with the model's line breaks in
 * the file's style, then through the 1:1 quote map (`tools/quotes`). When nothing matches, the
 * nearest lines and the likely difference, so the model can fix its next try. Depends on
 * `tools/quotes`, `tools/text`, `tools/limits`.
 */
import { NO_MATCH_CANDIDATES } from "./limits.js";
import { normalizeQuotes } from "./quotes.js";
import { type LineIndex, splitLines, toCrlf, toLf } from "./text.js";

/** An occurrence: offsets into the file's text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

export type MatchKind = "exact" | "quotes";

export interface Found {
  readonly spans: readonly Span[];
  /** `quotes`: found only with typographic quotes read as ASCII. */
  readonly kind: MatchKind;
}

/** Non-overlapping occurrences, left to right (as `replaceAll` counts them). */
function occurrences(haystack: string, needle: string): Span[] {
  const spans: Span[] = [];
  for (
    let at = haystack.indexOf(needle);
    at !== -1;
    at = haystack.indexOf(needle, at + needle.length)
  ) {
    spans.push({ start: at, end: at + needle.length });
  }
  return spans;
}

/** The old text as written, and with its line breaks as the file writes them. */
function spellings(text: string, old: string): string[] {
  const forms = [old];
  if (old.includes("\n") && !old.includes("\r") && text.includes("\r\n")) forms.push(toCrlf(old));
  if (old.includes("\r\n")) forms.push(toLf(old));
  if (old.includes("\n") && !text.includes("\n") && text.includes("\r")) {
    forms.push(old.replace(/\r?\n/g, "\r"));
  }
  return forms;
}

/** Where `old` occurs in `text`, or undefined. `old` must not be empty. */
export function findOld(text: string, old: string): Found | undefined {
  const forms = spellings(text, old);
  for (const form of forms) {
    const spans = occurrences(text, form);
    if (spans.length > 0) return { spans, kind: "exact" };
  }
  const plain = normalizeQuotes(text);
  if (plain === text && forms.every((form) => normalizeQuotes(form) === form)) return undefined;
  for (const form of forms) {
    const spans = occurrences(plain, normalizeQuotes(form));
    if (spans.length > 0) return { spans, kind: "quotes" };
  }
  return undefined;
}

export interface Candidate {
  /** 1-based. */
  readonly line: number;
  readonly text: string;
}

export interface Miss {
  readonly candidates: readonly Candidate[];
  /** Why the text probably did not match, when that can be told. */
  readonly hint: string | undefined;
}

const LINE_NUMBER_PREFIX = /^ *\d+\t/;
const collapse = (s: string) => s.replace(/\s+/g, " ").trim();

/** The lines of `text` nearest to `old`, and the likely difference. */
export function explainMiss(text: string, old: string): Miss {
  const oldLines = splitLines(old);
  let hint: string | undefined;
  if (oldLines.length > 0 && oldLines.every((line) => LINE_NUMBER_PREFIX.test(line))) {
    const stripped = oldLines.map((line) => line.replace(LINE_NUMBER_PREFIX, "")).join("\n");
    if (findOld(text, stripped)) {
      hint =
        "old_string starts each line with the line-number prefix that read shows; leave the prefix (spaces, number, tab) out.";
    }
  }
  if (
    !hint &&
    collapse(old).length > 0 &&
    collapse(normalizeQuotes(text)).includes(collapse(normalizeQuotes(old)))
  ) {
    hint =
      "The text is there with different whitespace (indentation, tabs or spaces, or line breaks); copy it exactly as read shows it.";
  }
  return { candidates: nearestLines(text, oldLines), hint };
}

/** Character bigrams of a trimmed line, for a Dice similarity that costs one pass per line. */
function bigrams(line: string): Map<string, number> {
  const grams = new Map<string, number>();
  const s = line.trim();
  for (let at = 0; at < s.length - 1; at++) {
    const gram = s.slice(at, at + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

function dice(a: Map<string, number>, sizeA: number, line: string): number {
  const s = line.trim();
  if (s.length < 2 || sizeA === 0) return 0;
  let shared = 0;
  const seen = new Map<string, number>();
  for (let at = 0; at < s.length - 1; at++) {
    const gram = s.slice(at, at + 2);
    const used = seen.get(gram) ?? 0;
    if (used < (a.get(gram) ?? 0)) shared++;
    seen.set(gram, used + 1);
  }
  return (2 * shared) / (sizeA + s.length - 1);
}

// Past this many lines the search for near lines would cost more than the miss is worth.
const MAX_LINES_COMPARED = 200_000;

function nearestLines(text: string, oldLines: readonly string[]): Candidate[] {
  // The longest line of the old text says most about where it was meant to match.
  const probe = oldLines.reduce(
    (best, line) => (line.trim().length > best.trim().length ? line : best),
    "",
  );
  const grams = bigrams(probe);
  const size = Math.max(0, probe.trim().length - 1);
  if (size === 0) return [];
  const lines = splitLines(text).slice(0, MAX_LINES_COMPARED);
  const scored: { line: number; text: string; score: number }[] = [];
  const length = probe.trim().length;
  lines.forEach((line, index) => {
    const trimmed = line.trim().length;
    if (trimmed < length / 3 || trimmed > length * 3) return;
    const score = dice(grams, size, line);
    if (score >= 0.5) scored.push({ line: index + 1, text: line, score });
  });
  scored.sort((a, b) => b.score - a.score || a.line - b.line);
  return scored.slice(0, NO_MATCH_CANDIDATES).map(({ line, text }) => ({ line, text }));
}

/** The 1-based first and last lines the spans cover. */
export function linesOf(index: LineIndex, spans: readonly Span[]): { start: number; end: number } {
  const first = spans[0] as Span;
  const last = spans[spans.length - 1] as Span;
  return {
    start: index.lineOf(first.start),
    end: index.lineOf(Math.max(first.start, last.end - 1)),
  };
}

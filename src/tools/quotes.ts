/**
 * Typographic quotes, ChatCLI's normalization made safe: matching through a length-preserving
 * quote map, the file's own quote style kept inside an edited span, and quotes a model
 * introduced into code normalized to ASCII. Documents are never touched. Depends on nothing.
 */
import { basename, extname } from "node:path";

/**
 * Extensions of code files, where a typographic quote a model introduces is a bug (a curly
 * quote ends no string literal). Documents (.md, .txt, .rst, ...) are absent on purpose: their
 * typography is intended.
 */
export const CODE_FILE_EXTENSIONS: ReadonlySet<string> = new Set([
  ".bash",
  ".bat",
  ".c",
  ".cc",
  ".cfg",
  ".cjs",
  ".clj",
  ".cmake",
  ".cpp",
  ".cs",
  ".css",
  ".cts",
  ".cxx",
  ".dart",
  ".elm",
  ".erl",
  ".ex",
  ".exs",
  ".fish",
  ".fs",
  ".go",
  ".gradle",
  ".graphql",
  ".groovy",
  ".h",
  ".hh",
  ".hpp",
  ".hs",
  ".ini",
  ".java",
  ".jl",
  ".js",
  ".json",
  ".jsonc",
  ".jsx",
  ".kt",
  ".kts",
  ".less",
  ".lua",
  ".m",
  ".mjs",
  ".mk",
  ".ml",
  ".mm",
  ".mts",
  ".php",
  ".pl",
  ".pm",
  ".proto",
  ".ps1",
  ".py",
  ".r",
  ".rb",
  ".rs",
  ".scala",
  ".scss",
  ".sh",
  ".sql",
  ".svelte",
  ".swift",
  ".tf",
  ".toml",
  ".ts",
  ".tsx",
  ".vue",
  ".xml",
  ".yaml",
  ".yml",
  ".zsh",
]);

/** File names (without an extension that says so) that are code too. */
export const CODE_FILE_NAMES: ReadonlySet<string> = new Set([
  "Makefile",
  "GNUmakefile",
  "Dockerfile",
  "Containerfile",
  "Gemfile",
  "Rakefile",
  "Justfile",
  "Vagrantfile",
  "Jenkinsfile",
  "Procfile",
  ".gitignore",
  ".dockerignore",
  ".editorconfig",
  ".env",
]);

export function isCodeFile(path: string): boolean {
  const name = basename(path);
  return CODE_FILE_NAMES.has(name) || CODE_FILE_EXTENSIONS.has(extname(name).toLowerCase());
}

// The 1:1 map only: ChatCLI's « » → << >> changes lengths, so offsets found through it would
// not map back to the file's bytes.
const TO_ASCII: Readonly<Record<string, string>> = {
  "\u2018": "'",
  "\u2019": "'",
  "\u2032": "'",
  "\u201C": '"',
  "\u201D": '"',
  "\u2033": '"',
};
const TYPOGRAPHIC = /[\u2018\u2019\u2032\u201C\u201D\u2033]/g;

/** `text` with typographic quotes as ASCII; the same length, so offsets carry over. */
export function normalizeQuotes(text: string): string {
  return text.replace(TYPOGRAPHIC, (quote) => TO_ASCII[quote] as string);
}

/**
 * In code, the typographic quote characters of `next` that `previous` never used are a model's
 * introduction: those become ASCII. A kind the code already used (a curly apostrophe in a
 * message string) is left alone, so an edit near it cannot break it.
 */
export function normalizeIntroducedQuotes(next: string, previous: string): string {
  return next.replace(TYPOGRAPHIC, (quote) =>
    previous.includes(quote) ? quote : (TO_ASCII[quote] as string),
  );
}

const OPENS_AFTER = /[\s([{<\u2014\u2013-]/;

/**
 * `next` written in the quote style of `span` (the file's text the edit replaces), where the
 * model wrote ASCII quotes and the file used typographic ones: an opening or closing quote
 * by what precedes it, and an apostrophe inside a word as a right single quote.
 *
 * In code (`strict`), a kind is the span's style only when the span opens quotes of that kind
 * typographically and never uses the ASCII one: a curly apostrophe in a message string, or a
 * comment's typography beside ASCII string quotes, says nothing about the code's quotes.
 */
export function inQuoteStyleOf(next: string, span: string, strict = false): string {
  const singles = strict
    ? span.includes("\u2018") && !span.includes("'")
    : /[\u2018\u2019]/.test(span);
  const doubles = strict
    ? span.includes("\u201C") && !span.includes('"')
    : /[\u201C\u201D]/.test(span);
  if (!singles && !doubles) return next;
  let out = "";
  for (let at = 0; at < next.length; at++) {
    const char = next[at] as string;
    const before = at === 0 ? " " : (next[at - 1] as string);
    const opening = OPENS_AFTER.test(before);
    if (char === "'" && singles) out += opening ? "\u2018" : "\u2019";
    else if (char === '"' && doubles) out += opening ? "\u201C" : "\u201D";
    else out += char;
  }
  return out;
}

/**
 * The new text for a span found only through the quote map (the file's own quote style inside
 * the matched span, never the model's). Lines of `next` that equal a line of the span once quotes are
 * read as ASCII are lines the edit kept: they keep the file's exact characters. Changed lines
 * take the span's typographic style; in code only where the span is consistent about it, and
 * quote kinds the file never used become ASCII (a curly quote ends no string literal).
 */
export function restyleQuoted(next: string, span: string, code: boolean, file: string): string {
  const kept = new Map<string, string>();
  for (const line of span.split(/\r\n|\r|\n/)) {
    const key = normalizeQuotes(line);
    if (!kept.has(key)) kept.set(key, line);
  }
  return next
    .split(/(\r\n|\r|\n)/)
    .map((part, index) => {
      if (index % 2 === 1) return part; // a line break
      const same = kept.get(normalizeQuotes(part));
      if (same !== undefined) return same;
      return code
        ? inQuoteStyleOf(normalizeIntroducedQuotes(part, file), span, true)
        : inQuoteStyleOf(part, span);
    })
    .join("");
}

/** How many characters differ between two texts of equal length (quotes rewritten, say). */
export function changedCharacters(a: string, b: string): number {
  let changed = 0;
  for (let at = 0; at < a.length; at++) if (a.charCodeAt(at) !== b.charCodeAt(at)) changed++;
  return changed;
}

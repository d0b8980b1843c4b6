/**
 * rg's standard printer: `path:line:text` or headings, context lines and their separators,
 * `--vimgrep`, `-o`, counts, file names, `--trim`, `-M` and its preview, binary notices; and
 * freshfs's notes on the files a search skipped. No colours: freshfs prints none. Pure; depends
 * on the library's result types and the printer's settings (`options`).
 */
import type { GrepLine } from "../../search/grep/grep.js";
import type { PrintSettings } from "./options.js";
import type { PathResult } from "./path-result.js";

/** What an omitted line says, as rg's `-M`. */
const OMITTED = { match: "[Omitted long matching line]", context: "[Omitted long context line]" };

/** The results as rg prints them: lines, counts, or the files that match (or do not). */
export function printStandard(results: readonly PathResult[], settings: PrintSettings): string {
  const out: string[] = [];
  for (const { result, name } of results) {
    if (result.mode === "files_with_matches" || result.mode === "files_without_match") {
      for (const file of result.files) out.push(name(file) + (settings.nul ? "\0" : "\n"));
    } else if (result.mode === "count") {
      for (const { path, count } of result.counts) {
        out.push(
          settings.withFilename
            ? `${name(path)}${settings.nul ? "\0" : ":"}${count}\n`
            : `${count}\n`,
        );
      }
    } else {
      printLines(result.lines, name, settings, out);
    }
  }
  return out.join("");
}

/** `--files`: each result's files, one a line (or each ending with NUL). */
export function printPaths(results: readonly PathResult[], nul: boolean): string {
  const end = nul ? "\0" : "\n";
  return results
    .flatMap(({ result, name }) => result.files.map((file) => name(file) + end))
    .join("");
}

/** Appends one result's lines to `out`, which holds what was printed before them. */
function printLines(
  lines: readonly GrepLine[],
  name: (path: string) => string,
  settings: PrintSettings,
  out: string[],
): void {
  let previous: GrepLine | undefined;
  for (const line of lines) {
    if (line.binary) {
      out.push(`${name(line.path)}: ${binaryNotice(line.binary)}\n`);
      continue;
    }
    const newFile = previous?.path !== line.path;
    if (settings.heading && newFile) {
      if (out.length > 0) out.push("\n");
      out.push(`${name(line.path)}${settings.nul ? "\0" : "\n"}`);
    } else if (
      settings.showsContext &&
      settings.contextSeparator !== undefined &&
      previous &&
      (newFile || line.line > previous.line + 1)
    ) {
      out.push(`${settings.contextSeparator}\n`);
    }
    previous = line;
    const pieces =
      settings.vimgrep && line.match && !settings.onlyMatching
        ? (line.submatches ?? [])
        : [undefined];
    const separator = line.match ? settings.fieldMatchSeparator : settings.fieldContextSeparator;
    const prefix = (lineNumber: number, column: number | undefined) => {
      let head = "";
      if (settings.withFilename && !settings.heading) {
        head += name(line.path) + (settings.nul ? "\0" : separator);
      }
      if (settings.lineNumber) head += `${lineNumber}${separator}`;
      if (settings.column && line.match && column !== undefined) head += `${column}${separator}`;
      return head;
    };
    for (const piece of pieces) {
      // A multiline match (`-U -o`) prints as its lines, each numbered as the line it is.
      for (const [k, part] of line.text.split("\n").entries()) {
        const head = prefix(
          line.line + k,
          k === 0 ? (piece ? piece.start + 1 : line.column) : undefined,
        );
        out.push(`${head}${shown(part, line, settings)}\n`);
      }
    }
  }
}

function binaryNotice(binary: { offset: number; stopped: boolean }): string {
  const found = `(found "\\0" byte around offset ${binary.offset})`;
  return binary.stopped
    ? `WARNING: stopped searching binary file after match ${found}`
    : `binary file matches ${found}`;
}

/**
 * A line's text as printed: trimmed (`--trim`), omitted or previewed past `-M`. Where rg knows
 * the line's matches (`-r`, a column), an omitted line says how many it had.
 */
function shown(given: string, line: GrepLine, settings: PrintSettings): string {
  const trim = (value: string) => (settings.trim ? value.replace(/^[ \t\f\v\r]+/, "") : value);
  const max = settings.maxColumns;
  // rg bounds a line as it is and trims its preview after the cut; a match (-o) it trims first.
  const text = settings.onlyMatching ? trim(given) : given;
  if (max === undefined || max === 0 || Buffer.byteLength(text) <= max) return trim(text);
  // With -o, rg knows the one match the line is.
  const known = line.match ? (settings.onlyMatching ? [{ start: 0 }] : line.submatches) : undefined;
  if (settings.maxColumnsPreview) {
    const preview = trim(text.slice(0, max));
    if (!known) return `${preview} [... omitted end of long line]`;
    const more = known.filter((m) => m.start >= max).length;
    return `${preview} [... ${more} more match${more === 1 ? "" : "es"}]`;
  }
  if (known) return `[Omitted long line with ${known.length} matches]`;
  return line.match ? OMITTED.match : OMITTED.context;
}

/** freshfs's notes on stderr: the files a search skipped, and why. */
export function skipNotes({ result, name }: PathResult): string[] {
  const out: string[] = [];
  for (const file of result.skipped.tooLarge) {
    out.push(
      `${name(file.path)}: skipped, ${file.size} bytes is over the size bound (--max-filesize)`,
    );
  }
  for (const file of result.skipped.unreadable) {
    out.push(`${name(file.path)}: skipped, cannot be read (${file.code})`);
  }
  for (const path of result.skipped.timedOut) {
    out.push(`${name(path)}: skipped, the regex ran too long on it`);
  }
  for (const file of result.skipped.failed) {
    out.push(`${name(file.path)}: skipped, ${file.message}`);
  }
  return out;
}

/**
 * grep's lines as ripgrep prints them with `--no-heading --with-filename`: `path:line:text` for
 * a match, `path-line-text` for context, and `--` between groups that do not touch (only when
 * context was asked for). The CLI prints this so its output can be diffed with rg's; the agent
 * tools show it to models, who have seen it often. Depends on nothing.
 */

export interface FormattableLine {
  readonly path: string;
  readonly line: number;
  readonly text: string;
  readonly match: boolean;
}

export interface FormatGrepOptions {
  /** Show line numbers (`-n`). @default true */
  lineNumbers?: boolean | undefined;
  /** Context was asked for: separate groups with `--`. @default false */
  context?: boolean | undefined;
}

export function formatGrepLines(
  lines: readonly FormattableLine[],
  options: FormatGrepOptions = {},
): string[] {
  const numbers = options.lineNumbers ?? true;
  const out: string[] = [];
  let previous: FormattableLine | undefined;
  for (const line of lines) {
    const apart = previous && (previous.path !== line.path || line.line > previous.line + 1);
    if (options.context && apart) out.push("--");
    const sep = line.match ? ":" : "-";
    out.push(
      numbers
        ? `${line.path}${sep}${line.line}${sep}${line.text}`
        : `${line.path}${sep}${line.text}`,
    );
    previous = line;
  }
  return out;
}

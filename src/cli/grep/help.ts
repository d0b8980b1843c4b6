/**
 * What `freshfs grep` prints without searching: its help, and `--type-list`, rg 13's table of
 * file types byte for byte. Depends on the library's grep (its defaults, its types).
 */
import { FILE_TYPES } from "../../scan/ignore/default-types.js";
import { GREP_DEFAULT_TIMEOUT_MS, GREP_MAX_FILE_BYTES } from "../../search/grep/defaults.js";

export const GREP_HELP = `Usage: freshfs grep [OPTIONS] PATTERN [PATH ...]
       freshfs grep [OPTIONS] -e PATTERN ... [PATH ...]
       freshfs grep [OPTIONS] -f PATTERNFILE ... [PATH ...]
       freshfs grep [OPTIONS] --files [PATH ...]
       freshfs grep --type-list

Searches file contents with ripgrep's flags and output. PATTERN is a regex in rg's syntax
(Rust's regex crate: \\pL, [[:alpha:]], (?i), Unicode \\w and \\b), a literal with -F, or
JavaScript's with -P. Lines print as 'rg --no-heading --with-filename --line-number' prints
them, sorted by path; -N, -I and --heading change that. Exit status: 0 found, 1 not, 2 error.

Patterns:
  -e, --regexp PATTERN       a pattern; repeatable (a line matching any is a match)
  -f, --file PATTERNFILE     patterns, one per line; repeatable
  -F, --fixed-strings        patterns are literal strings
  -i, --ignore-case          -s, --case-sensitive       -S, --smart-case
  -w, --word-regexp          -x, --line-regexp          -v, --invert-match
  -U, --multiline            --multiline-dotall (with -U, . matches a line break too)
  -P, --pcre2                JavaScript's regex syntax (lookaround, backreferences), where rg's
                             -P runs PCRE2

Output:
  -o, --only-matching        each match on its own line
  -r, --replace TEXT         print matches replaced ($1, $name, \${1}, $$); files are untouched
  -c, --count                matching lines per file    --count-matches  matches per file
  -l, --files-with-matches   --files-without-match
  -n, --line-number          -N, --no-line-number
  -H, --with-filename        -I, --no-filename          --heading, --no-heading
  -0, --null                 NUL after each path
  --column                   the column (bytes, from 1) of the first match
  --vimgrep                  every match as path:line:column:text
  -A, -B, -C NUM             lines of context after, before, around each match
  --context-separator SEP    --field-match-separator SEP   --field-context-separator SEP
  -m, --max-count NUM        at most NUM matching lines per file
  -M, --max-columns NUM      omit lines longer than NUM bytes; --max-columns-preview shows
                             their start
  --trim                     strip leading white space
  -q, --quiet                print nothing; exit 0 at the first match
  --json                     rg's JSON Lines (begin, match, context, end, summary)
  --json-result              freshfs's own: one JSON document with the whole result
  --sort path|modified|accessed|created|none, --sortr ...   order of files (default path)

Files:
  -g, --glob GLOB            only files matching GLOB (!GLOB excludes); repeatable
  --iglob GLOB               the same, without regard to case; --glob-case-insensitive
  -t, --type TYPE            only files of TYPE (rg 13's 169 types; all); repeatable
  -T, --type-not TYPE        not files of TYPE; --type-list lists the types
  --files                    list the files that would be searched, search nothing
  -., --hidden               search files and directories whose name starts with a dot
  --no-ignore                do not apply .gitignore, .ignore and git's exclude files
  -u, -uu, -uuu              --no-ignore; and --hidden; and --text
  -a, --text                 search binary files as text
  -L, --follow               follow symbolic links
  --max-depth NUM            descend at most NUM directories
  --max-filesize NUM[K|M|G]  skip larger files, naming each on stderr; default ${GREP_MAX_FILE_BYTES / 1024 / 1024}M. rg
                             needs no bound as it reads a file lazily; freshfs reads each
                             file whole, so this bound keeps its memory bounded

freshfs's own:
  --timeout MS    stop searching after MS milliseconds (default ${GREP_DEFAULT_TIMEOUT_MS}); a search
                  stopped there prints what it found, says so on stderr and exits 2
  --limit N       print at most N results

Accepted, no effect: --color never|auto, --no-config, --line-buffered, --block-buffered, -j N.
`;

/** `--type-list`: each type and its globs, as rg 13 lists them. */
export function typeList(): string {
  return `${Object.entries(FILE_TYPES)
    .map(([name, globs]) => `${name}: ${globs.join(", ")}`)
    .join("\n")}\n`;
}

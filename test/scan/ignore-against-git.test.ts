/**
 * The ignore-file compiler (src/scan/ignore/pattern.ts) against real git, case by case. Each row
 * of the table is one `.gitignore` and one path: the test writes both into a subdirectory of a
 * temporary repository, asks `git check-ignore --no-index -v` (with `core.ignorecase` for the
 * case-folding rows), and checks that our verdict, the deciding line and its pattern are git's.
 * The compiler decides one path at a time, so "our verdict" applies git's other rule here: a path
 * under an ignored directory is ignored, whatever its own match. Each row's `expected` is
 * checked against git too, so the table reads as a record of git's behaviour.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteForm, IgnoreFile, type IgnoreRule } from "../../src/scan/ignore/pattern.js";
import {
  type CheckIgnoreAnswer,
  checkIgnore,
  createTempRepo,
  type TempRepo,
} from "../helpers/git.js";

interface Case {
  readonly name: string;
  /** The `.gitignore` text, written as UTF-8. */
  readonly gitignore: string;
  /** Relative to the `.gitignore`'s directory, `/` separated. */
  readonly path: string;
  /** The path is created as a directory (else as an empty file, parents as directories). */
  readonly isDir?: boolean;
  /** Whether git ignores the path. */
  readonly expected: boolean;
  /** Run git with `core.ignorecase=true`, compile with `{ ignoreCase: true }`. */
  readonly ignoreCase?: boolean;
}

const CASES: readonly Case[] = [
  // Plain names: the basename, at any depth, files and directories alike.
  { name: "plain name matches a file at the top", gitignore: "foo\n", path: "foo", expected: true },
  {
    name: "plain name matches a file deep down",
    gitignore: "foo\n",
    path: "a/b/foo",
    expected: true,
  },
  {
    name: "plain name matches a directory",
    gitignore: "foo\n",
    path: "a/foo",
    isDir: true,
    expected: true,
  },
  {
    name: "plain name does not match a longer name",
    gitignore: "foo\n",
    path: "foobar",
    expected: false,
  },
  {
    name: "plain name does not match a name with a suffix",
    gitignore: "foo\n",
    path: "foo.txt",
    expected: false,
  },
  {
    name: "plain name excludes what is inside a directory of that name",
    gitignore: "node_modules\n",
    path: "pkg/node_modules/x/index.js",
    expected: true,
  },
  { name: "*.log matches at any depth", gitignore: "*.log\n", path: "a/b/x.log", expected: true },
  {
    name: "*.log does not match x.log.txt",
    gitignore: "*.log\n",
    path: "x.log.txt",
    expected: false,
  },
  {
    name: "*.c matches a directory named x.c",
    gitignore: "*.c\n",
    path: "x.c",
    isDir: true,
    expected: true,
  },
  { name: "a space inside a name is literal", gitignore: "a b\n", path: "a b", expected: true },

  // A leading slash anchors to the .gitignore's directory.
  { name: "/foo matches foo at the top", gitignore: "/foo\n", path: "foo", expected: true },
  { name: "/foo does not match foo deeper", gitignore: "/foo\n", path: "a/foo", expected: false },
  {
    name: "/foo excludes the contents of directory foo",
    gitignore: "/foo\n",
    path: "foo/x.txt",
    expected: true,
  },
  { name: "/*.c matches a.c at the top", gitignore: "/*.c\n", path: "a.c", expected: true },
  { name: "/*.c does not match sub/a.c", gitignore: "/*.c\n", path: "sub/a.c", expected: false },
  {
    name: "./foo is not normalised and does not match foo",
    gitignore: "./foo\n",
    path: "foo",
    expected: false,
  },

  // A slash in the middle anchors too.
  {
    name: "doc/frotz matches doc/frotz",
    gitignore: "doc/frotz\n",
    path: "doc/frotz",
    expected: true,
  },
  {
    name: "doc/frotz does not match a/doc/frotz",
    gitignore: "doc/frotz\n",
    path: "a/doc/frotz",
    expected: false,
  },
  {
    name: "doc/frotz/ matches the directory doc/frotz",
    gitignore: "doc/frotz/\n",
    path: "doc/frotz",
    isDir: true,
    expected: true,
  },
  {
    name: "doc/frotz/ does not match the directory a/doc/frotz",
    gitignore: "doc/frotz/\n",
    path: "a/doc/frotz",
    isDir: true,
    expected: false,
  },
  {
    name: "doc/frotz excludes a file inside the directory doc/frotz",
    gitignore: "doc/frotz\n",
    path: "doc/frotz/x.txt",
    expected: true,
  },

  // A trailing slash: directories only.
  {
    name: "build/ matches the directory build",
    gitignore: "build/\n",
    path: "build",
    isDir: true,
    expected: true,
  },
  {
    name: "build/ does not match a file named build",
    gitignore: "build/\n",
    path: "build",
    expected: false,
  },
  {
    name: "build/ matches a directory build deeper",
    gitignore: "build/\n",
    path: "a/build",
    isDir: true,
    expected: true,
  },
  {
    name: "build/ does not match a file named build deeper",
    gitignore: "build/\n",
    path: "a/build",
    expected: false,
  },
  {
    name: "build/ excludes a file inside build",
    gitignore: "build/\n",
    path: "build/out.o",
    expected: true,
  },
  {
    name: "build/ excludes a file inside a/build",
    gitignore: "build/\n",
    path: "a/build/out.o",
    expected: true,
  },
  { name: "*.d/ does not match a file x.d", gitignore: "*.d/\n", path: "x.d", expected: false },
  {
    name: "*.d/ matches a directory x.d",
    gitignore: "*.d/\n",
    path: "x.d",
    isDir: true,
    expected: true,
  },
  { name: "*/ matches any directory", gitignore: "*/\n", path: "a", isDir: true, expected: true },
  { name: "*/ does not match a file", gitignore: "*/\n", path: "a.txt", expected: false },
  {
    name: "*/ excludes a file inside a directory",
    gitignore: "*/\n",
    path: "a/b.txt",
    expected: true,
  },
  { name: "a lone / matches nothing", gitignore: "/\n", path: "a", isDir: true, expected: false },

  // Negation.
  {
    name: "!important.log re-includes a file after *.log",
    gitignore: "*.log\n!important.log\n",
    path: "important.log",
    expected: false,
  },
  {
    name: "!important.log leaves other .log files ignored",
    gitignore: "*.log\n!important.log\n",
    path: "other.log",
    expected: true,
  },
  {
    name: "a file cannot be re-included when its directory is excluded (build/)",
    gitignore: "build/\n!build/keep.txt\n",
    path: "build/keep.txt",
    expected: true,
  },
  {
    name: "dir/* then !dir/keep.txt re-includes the file",
    gitignore: "build/*\n!build/keep.txt\n",
    path: "build/keep.txt",
    expected: false,
  },
  {
    name: "dir/* then !dir/keep.txt leaves the other files ignored",
    gitignore: "build/*\n!build/keep.txt\n",
    path: "build/other.txt",
    expected: true,
  },
  {
    name: "dir/* then !dir/keep re-includes the directory keep and its contents",
    gitignore: "build/*\n!build/keep\n",
    path: "build/keep/x.txt",
    expected: false,
  },
  {
    name: "a re-included directory under an excluded one stays excluded",
    gitignore: "/a/\n!/a/b/\n",
    path: "a/b/c.txt",
    expected: true,
  },
  {
    name: "a negation with nothing to negate ignores nothing",
    gitignore: "!foo\n",
    path: "foo",
    expected: false,
  },
  {
    name: "!foo/ re-includes a directory",
    gitignore: "logs/\n!logs/\n",
    path: "logs/a.txt",
    expected: false,
  },
  {
    name: "!scratch.tmp/ re-includes the directory",
    gitignore: "*.tmp\n!scratch.tmp/\n",
    path: "scratch.tmp",
    isDir: true,
    expected: false,
  },
  {
    name: "!scratch.tmp/ does not re-include a file",
    gitignore: "*.tmp\n!scratch.tmp/\n",
    path: "scratch.tmp",
    expected: true,
  },
  {
    name: "* then !*/ then !*.c keeps .c files",
    gitignore: "*\n!*/\n!*.c\n",
    path: "src/x.c",
    expected: false,
  },
  {
    name: "* then !*/ then !*.c ignores other files",
    gitignore: "*\n!*/\n!*.c\n",
    path: "src/x.h",
    expected: true,
  },
  {
    name: "logs/** then !logs/keep.txt re-includes the file",
    gitignore: "logs/**\n!logs/keep.txt\n",
    path: "logs/keep.txt",
    expected: false,
  },
  {
    name: "logs/** excludes logs/sub, so !logs/sub/keep.txt cannot re-include",
    gitignore: "logs/**\n!logs/sub/keep.txt\n",
    path: "logs/sub/keep.txt",
    expected: true,
  },

  // The last matching line wins.
  {
    name: "pattern, negation, pattern again: the last one ignores",
    gitignore: "*.txt\n!x.txt\nx*.txt\n",
    path: "x.txt",
    expected: true,
  },
  { name: "foo then !foo: not ignored", gitignore: "foo\n!foo\n", path: "foo", expected: false },
  {
    name: "a later non-matching line does not override",
    gitignore: "*.txt\n!x.txt\ny*.txt\n",
    path: "x.txt",
    expected: false,
  },

  // ** as a whole segment.
  { name: "**/foo matches foo at the top", gitignore: "**/foo\n", path: "foo", expected: true },
  { name: "**/foo matches foo deep down", gitignore: "**/foo\n", path: "a/b/foo", expected: true },
  {
    name: "**/foo excludes the contents of a/foo",
    gitignore: "**/foo\n",
    path: "a/foo/y.txt",
    expected: true,
  },
  {
    name: "**/foo/bar matches x/foo/bar",
    gitignore: "**/foo/bar\n",
    path: "x/foo/bar",
    expected: true,
  },
  {
    name: "**/foo/bar matches foo/bar",
    gitignore: "**/foo/bar\n",
    path: "foo/bar",
    expected: true,
  },
  {
    name: "**/foo/bar does not match foo/x/bar",
    gitignore: "**/foo/bar\n",
    path: "foo/x/bar",
    expected: false,
  },
  { name: "abc/** matches abc/x", gitignore: "abc/**\n", path: "abc/x", expected: true },
  { name: "abc/** matches abc/x/y", gitignore: "abc/**\n", path: "abc/x/y", expected: true },
  {
    name: "abc/** does not match the directory abc",
    gitignore: "abc/**\n",
    path: "abc",
    isDir: true,
    expected: false,
  },
  {
    name: "abc/** does not match x/abc/y",
    gitignore: "abc/**\n",
    path: "x/abc/y",
    expected: false,
  },
  { name: "a/**/b matches a/b", gitignore: "a/**/b\n", path: "a/b", expected: true },
  { name: "a/**/b matches a/x/b", gitignore: "a/**/b\n", path: "a/x/b", expected: true },
  { name: "a/**/b matches a/x/y/b", gitignore: "a/**/b\n", path: "a/x/y/b", expected: true },
  { name: "a/**/b does not match a/xb", gitignore: "a/**/b\n", path: "a/xb", expected: false },
  { name: "a/**/*.c matches a/z.c", gitignore: "a/**/*.c\n", path: "a/z.c", expected: true },
  {
    name: "a/**/*.c matches a/x/y/z.c",
    gitignore: "a/**/*.c\n",
    path: "a/x/y/z.c",
    expected: true,
  },
  {
    name: "a/**\\/b (escaped slash) needs a directory",
    gitignore: "a/**\\/b\n",
    path: "a/b",
    expected: false,
  },
  {
    name: "a/**\\/b (escaped slash) matches a/x/b",
    gitignore: "a/**\\/b\n",
    path: "a/x/b",
    expected: true,
  },
  { name: "** alone matches everything", gitignore: "**\n", path: "a/b.txt", expected: true },

  // ** that is not a whole segment acts like *.
  { name: "a**b matches axyb", gitignore: "a**b\n", path: "axyb", expected: true },
  { name: "x/a**b matches x/ayb", gitignore: "x/a**b\n", path: "x/ayb", expected: true },
  {
    name: "x/a**b does not cross / (x/a/y/b)",
    gitignore: "x/a**b\n",
    path: "x/a/y/b",
    expected: false,
  },
  { name: "**foo matches xfoo", gitignore: "**foo\n", path: "xfoo", expected: true },
  { name: "d/**foo matches d/xfoo", gitignore: "d/**foo\n", path: "d/xfoo", expected: true },
  {
    name: "d/**foo does not cross / (d/a/foo)",
    gitignore: "d/**foo\n",
    path: "d/a/foo",
    expected: false,
  },
  { name: "a/**b does not cross / (a/x/b)", gitignore: "a/**b\n", path: "a/x/b", expected: false },
  { name: "a**/b matches ax/b", gitignore: "a**/b\n", path: "ax/b", expected: true },
  {
    // git matches the literal prefix "a" first and wildmatches the rest, "**/b", where the **
    // now starts the pattern and so counts as a whole segment that crosses directories.
    name: "a**/b crosses / (a/x/b): after the literal prefix a, **/ leads",
    gitignore: "a**/b\n",
    path: "a/x/b",
    expected: true,
  },
  { name: "a**/b matches a/b", gitignore: "a**/b\n", path: "a/b", expected: true },
  {
    name: "a**/b matches ab: after the literal prefix a, **/ may match nothing",
    gitignore: "a**/b\n",
    path: "ab",
    expected: true,
  },
  {
    name: "x/y**/z crosses / (x/y/q/z): the literal prefix is x/y",
    gitignore: "x/y**/z\n",
    path: "x/y/q/z",
    expected: true,
  },
  {
    name: "?a**/b does not cross / (xa/y/b): no literal prefix to strip",
    gitignore: "?a**/b\n",
    path: "xa/y/b",
    expected: false,
  },

  // * and ? never cross / in a pattern with a slash.
  { name: "a/*.c matches a/b.c", gitignore: "a/*.c\n", path: "a/b.c", expected: true },
  { name: "a/*.c does not match a/b/c.c", gitignore: "a/*.c\n", path: "a/b/c.c", expected: false },
  { name: "a/* excludes a/b and so a/b/c", gitignore: "a/*\n", path: "a/b/c", expected: true },
  {
    name: "*.c without a slash matches a/b/c.c",
    gitignore: "*.c\n",
    path: "a/b/c.c",
    expected: true,
  },
  { name: "?.txt matches a.txt", gitignore: "?.txt\n", path: "a.txt", expected: true },
  { name: "?.txt does not match ab.txt", gitignore: "?.txt\n", path: "ab.txt", expected: false },
  { name: "x/a?b does not match x/a/b", gitignore: "x/a?b\n", path: "x/a/b", expected: false },
  { name: "*/b matches a/b", gitignore: "*/b\n", path: "a/b", expected: true },
  { name: "*/b does not match a/x/b", gitignore: "*/b\n", path: "a/x/b", expected: false },
  {
    name: "a class never matches / (a[/]b vs a/b)",
    gitignore: "a[/]b\n",
    path: "a/b",
    expected: false,
  },
  {
    name: "a negated class never matches / (x/a[!c]b)",
    gitignore: "x/a[!c]b\n",
    path: "x/a/b",
    expected: false,
  },

  // Bracket expressions.
  { name: "[abc].txt matches b.txt", gitignore: "[abc].txt\n", path: "b.txt", expected: true },
  {
    name: "[abc].txt does not match d.txt",
    gitignore: "[abc].txt\n",
    path: "d.txt",
    expected: false,
  },
  { name: "[a-z].txt matches q.txt", gitignore: "[a-z].txt\n", path: "q.txt", expected: true },
  {
    name: "[a-z].txt does not match Q.txt",
    gitignore: "[a-z].txt\n",
    path: "Q.txt",
    expected: false,
  },
  {
    name: "[a-z].txt does not match 5.txt",
    gitignore: "[a-z].txt\n",
    path: "5.txt",
    expected: false,
  },
  {
    name: "[!a].txt does not match a.txt",
    gitignore: "[!a].txt\n",
    path: "a.txt",
    expected: false,
  },
  { name: "[!a].txt matches b.txt", gitignore: "[!a].txt\n", path: "b.txt", expected: true },
  {
    name: "[^a].txt does not match a.txt",
    gitignore: "[^a].txt\n",
    path: "a.txt",
    expected: false,
  },
  { name: "[^a].txt matches b.txt", gitignore: "[^a].txt\n", path: "b.txt", expected: true },
  { name: "[]a].txt matches ].txt", gitignore: "[]a].txt\n", path: "].txt", expected: true },
  { name: "[]a].txt matches a.txt", gitignore: "[]a].txt\n", path: "a.txt", expected: true },
  {
    name: "[]a].txt does not match b.txt",
    gitignore: "[]a].txt\n",
    path: "b.txt",
    expected: false,
  },
  {
    name: "[!]a].txt does not match ].txt",
    gitignore: "[!]a].txt\n",
    path: "].txt",
    expected: false,
  },
  { name: "[!]a].txt matches b.txt", gitignore: "[!]a].txt\n", path: "b.txt", expected: true },
  {
    name: "[[:digit:]].txt matches 5.txt",
    gitignore: "[[:digit:]].txt\n",
    path: "5.txt",
    expected: true,
  },
  {
    name: "[[:digit:]].txt does not match a.txt",
    gitignore: "[[:digit:]].txt\n",
    path: "a.txt",
    expected: false,
  },
  { name: "[[:alpha:]]x matches bx", gitignore: "[[:alpha:]]x\n", path: "bx", expected: true },
  {
    name: "[[:alpha:]]x does not match 1x",
    gitignore: "[[:alpha:]]x\n",
    path: "1x",
    expected: false,
  },
  {
    name: "a[[:space:]]b matches 'a b'",
    gitignore: "a[[:space:]]b\n",
    path: "a b",
    expected: true,
  },
  {
    name: "an unknown class [[:foo:]] never matches f",
    gitignore: "[[:foo:]]\n",
    path: "f",
    expected: false,
  },
  {
    name: "an unknown class [[:foo:]] never matches its own text",
    gitignore: "[[:foo:]].txt\n",
    path: "[[:foo:]].txt",
    expected: false,
  },
  {
    name: "a line after [[:foo:]] still works",
    gitignore: "[[:foo:]]\nbar\n",
    path: "bar",
    expected: true,
  },
  {
    name: "an unclosed POSIX class [[:alpha:] never matches",
    gitignore: "x[[:alpha:]\n",
    path: "xa",
    expected: false,
  },
  {
    name: "[[:digit]] is a set of [, :, d, i, g, t then ]",
    gitignore: "x[[:digit]]\n",
    path: "xd]",
    expected: true,
  },
  {
    name: "[[:digit]] is not the digit class",
    gitignore: "x[[:digit]]\n",
    path: "x5]",
    expected: false,
  },
  {
    name: "an unclosed [ never matches its own text",
    gitignore: "[abc\n",
    path: "[abc",
    expected: false,
  },
  { name: "an unclosed [ never matches a member", gitignore: "[abc\n", path: "a", expected: false },
  { name: "a trailing - in a class is literal", gitignore: "x[a-]\n", path: "x-", expected: true },
  {
    name: "a reversed range [z-a] still matches z",
    gitignore: "[z-a].txt\n",
    path: "z.txt",
    expected: true,
  },
  {
    name: "a reversed range [z-a] matches nothing between",
    gitignore: "[z-a].txt\n",
    path: "m.txt",
    expected: false,
  },
  { name: "[\\]] matches ]", gitignore: "x[\\]]\n", path: "x]", expected: true },
  { name: "[a\\-z] matches -", gitignore: "x[a\\-z]\n", path: "x-", expected: true },
  { name: "[a\\-z] is not a range", gitignore: "x[a\\-z]\n", path: "xm", expected: false },

  // Comments, escapes at the start of a line, blank lines.
  { name: "\\# at line start matches #foo", gitignore: "\\#foo\n", path: "#foo", expected: true },
  { name: "# at line start is a comment", gitignore: "#foo\n", path: "#foo", expected: false },
  { name: "\\! at line start matches !foo", gitignore: "\\!foo\n", path: "!foo", expected: true },
  {
    name: "blank lines count in line numbers",
    gitignore: "\n\nfoo\n",
    path: "foo",
    expected: true,
  },
  {
    name: "a comment line counts in line numbers",
    gitignore: "# build output\nfoo\n",
    path: "foo",
    expected: true,
  },
  { name: "a # after the start is literal", gitignore: "a#b\n", path: "a#b", expected: true },
  { name: "!!foo re-includes !foo", gitignore: "*\n!!foo\n", path: "!foo", expected: false },
  { name: "a lone ! matches nothing", gitignore: "!\n", path: "a", expected: false },

  // Trailing spaces, line endings, BOM.
  { name: "trailing spaces are trimmed", gitignore: "foo   \n", path: "foo", expected: true },
  {
    name: "trimmed trailing spaces do not match a name ending in space",
    gitignore: "foo   \n",
    path: "foo ",
    expected: false,
  },
  { name: "\\  keeps one trailing space", gitignore: "foo\\ \n", path: "foo ", expected: true },
  {
    name: "\\  does not match the name without the space",
    gitignore: "foo\\ \n",
    path: "foo",
    expected: false,
  },
  {
    name: "\\  then more spaces keeps only the escaped one",
    gitignore: "foo\\   \n",
    path: "foo ",
    expected: true,
  },
  { name: "a trailing tab is not trimmed", gitignore: "foo\t\n", path: "foo", expected: false },
  { name: "leading spaces are kept", gitignore: " foo\n", path: "foo", expected: false },
  {
    name: "leading spaces are part of the name",
    gitignore: " foo\n",
    path: " foo",
    expected: true,
  },
  {
    name: "an escaped backslash before trailing spaces",
    gitignore: "foo\\\\  \n",
    path: "foo\\",
    expected: true,
  },
  {
    name: "CRLF: the first line matches",
    gitignore: "foo\r\nbar\r\n",
    path: "foo",
    expected: true,
  },
  {
    name: "CRLF: the second line matches",
    gitignore: "foo\r\nbar\r\n",
    path: "bar",
    expected: true,
  },
  {
    name: "CRLF with a directory pattern",
    gitignore: "x\r\nbuild/\r\n",
    path: "build/o",
    expected: true,
  },
  {
    name: "CRLF: spaces before the CR are trimmed",
    gitignore: "foo  \r\n",
    path: "foo",
    expected: true,
  },
  {
    name: "a CR before trailing spaces is kept",
    gitignore: "foo\r  \n",
    path: "foo",
    expected: false,
  },
  {
    name: "a UTF-8 BOM at the start is skipped",
    gitignore: "\uFEFFfoo\nbar\n",
    path: "foo",
    expected: true,
  },
  {
    name: "a BOM after the first line is part of the pattern",
    gitignore: "foo\n\uFEFFbar\n",
    path: "bar",
    expected: false,
  },
  { name: "no final newline", gitignore: "a\nfoo", path: "foo", expected: true },

  // Backslash escapes of glob characters.
  { name: "\\* matches a literal *", gitignore: "\\*.txt\n", path: "*.txt", expected: true },
  {
    name: "\\* does not match anything else",
    gitignore: "\\*.txt\n",
    path: "a.txt",
    expected: false,
  },
  { name: "\\? matches a literal ?", gitignore: "a\\?\n", path: "a?", expected: true },
  { name: "\\? does not match any character", gitignore: "a\\?\n", path: "ab", expected: false },
  { name: "\\[ matches a literal [", gitignore: "\\[abc]\n", path: "[abc]", expected: true },
  { name: "\\[ does not start a class", gitignore: "\\[abc]\n", path: "a", expected: false },
  { name: "\\\\ matches a backslash", gitignore: "a\\\\b\n", path: "a\\b", expected: true },
  {
    name: "an escaped plain letter is that letter",
    gitignore: "\\foo\n",
    path: "foo",
    expected: true,
  },
  {
    name: "a trailing backslash does not match the name",
    gitignore: "foo\\\n",
    path: "foo",
    expected: false,
  },
  {
    name: "a trailing backslash does not match a name ending in \\",
    gitignore: "foo\\\n",
    path: "foo\\",
    expected: false,
  },

  // Non-ASCII: ? and classes see bytes of UTF-8.
  {
    name: "caf?.txt does not match café.txt (? is one byte)",
    gitignore: "caf?.txt\n",
    path: "café.txt",
    expected: false,
  },
  {
    name: "caf??.txt matches café.txt (é is two bytes)",
    gitignore: "caf??.txt\n",
    path: "café.txt",
    expected: true,
  },
  { name: "café.txt matches itself", gitignore: "café.txt\n", path: "café.txt", expected: true },
  { name: "caf*.txt matches café.txt", gitignore: "caf*.txt\n", path: "café.txt", expected: true },
  {
    name: "caf[é].txt does not match café.txt (a class is one byte)",
    gitignore: "caf[é].txt\n",
    path: "café.txt",
    expected: false,
  },
  {
    name: "[à-é]?.txt matches é.txt byte by byte",
    gitignore: "[à-é]?.txt\n",
    path: "é.txt",
    expected: true,
  },
  {
    name: "a non-ASCII directory excludes its contents",
    gitignore: "日本/\n",
    path: "日本/a.txt",
    expected: true,
  },
  {
    name: "a non-ASCII anchored path",
    gitignore: "/données/*.csv\n",
    path: "données/x.csv",
    expected: true,
  },

  // Dot files.
  { name: ".* matches .env", gitignore: ".*\n", path: ".env", expected: true },
  { name: ".* does not match a.env", gitignore: ".*\n", path: "a.env", expected: false },
  { name: "* matches a dot file", gitignore: "*\n", path: ".hidden", expected: true },
  { name: ".env matches config/.env", gitignore: ".env\n", path: "config/.env", expected: true },
  {
    name: "*.txt matches .txt (a leading dot is not special)",
    gitignore: "*.txt\n",
    path: ".txt",
    expected: true,
  },

  // Case: sensitive by default, folded (ASCII only) under core.ignorecase.
  { name: "*.TXT does not match a.txt", gitignore: "*.TXT\n", path: "a.txt", expected: false },
  { name: "Foo does not match foo", gitignore: "Foo\n", path: "foo", expected: false },
  {
    name: "doc/Frotz does not match doc/frotz",
    gitignore: "doc/Frotz\n",
    path: "doc/frotz",
    expected: false,
  },
  {
    name: "ignoreCase: *.TXT matches a.txt",
    gitignore: "*.TXT\n",
    path: "a.txt",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: Foo matches foo",
    gitignore: "Foo\n",
    path: "foo",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [A-C].md matches b.md",
    gitignore: "[A-C].md\n",
    path: "b.md",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [a-c].md matches B.md",
    gitignore: "[a-c].md\n",
    path: "B.md",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [abc].txt matches B.txt",
    gitignore: "[abc].txt\n",
    path: "B.txt",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [!a].txt does not match A.txt",
    gitignore: "[!a].txt\n",
    path: "A.txt",
    expected: false,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [!a].txt matches B.txt",
    gitignore: "[!a].txt\n",
    path: "B.txt",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [A].txt does not match a.txt (git folds the text, not the member)",
    gitignore: "[A].txt\n",
    path: "a.txt",
    expected: false,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [A].txt does not match even A.txt (the text folds to a)",
    gitignore: "[A].txt\n",
    path: "A.txt",
    expected: false,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [A].txt does not match a].txt",
    gitignore: "[A].txt\n",
    path: "a].txt",
    expected: false,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [[:lower:]].txt matches A.txt",
    gitignore: "[[:lower:]].txt\n",
    path: "A.txt",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: Doc/*.TXT matches doc/x.txt",
    gitignore: "Doc/*.TXT\n",
    path: "doc/x.txt",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: build/ excludes BUILD/x",
    gitignore: "build/\n",
    path: "BUILD/x",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: [[:upper:]].txt matches a.txt",
    gitignore: "[[:upper:]].txt\n",
    path: "a.txt",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: doc/Frotz matches DOC/frotz",
    gitignore: "doc/Frotz\n",
    path: "DOC/frotz",
    expected: true,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: only ASCII folds (CAFÉ.TXT vs café.txt)",
    gitignore: "CAFÉ.TXT\n",
    path: "café.txt",
    expected: false,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: !KEEP.log re-includes keep.log",
    gitignore: "*.log\n!KEEP.log\n",
    path: "keep.log",
    expected: false,
    ignoreCase: true,
  },
  {
    name: "ignoreCase: *.Log (a suffix pattern) matches x.LOG",
    gitignore: "*.Log\n",
    path: "x.LOG",
    expected: true,
    ignoreCase: true,
  },
  // Literal paths (looked up by path), name globs with a literal head, and one-segment path
  // globs (never matched past a slash): the shortcuts the compiler takes for them.
  {
    name: "literal path with a trailing slash does not match a file of that path",
    gitignore: "/build/\nkeep\n",
    path: "build",
    expected: false,
  },
  {
    name: "literal path with a trailing slash matches the directory",
    gitignore: "/build/\n",
    path: "build",
    isDir: true,
    expected: true,
  },
  {
    name: "a later literal path rule overrides an earlier name rule",
    gitignore: "out\n!/docs/out\n",
    path: "docs/out",
    expected: false,
  },
  {
    name: "a later name rule overrides an earlier literal path rule",
    gitignore: "!/docs/out\nout\n",
    path: "docs/out",
    expected: true,
  },
  {
    name: "literal path rules fold case with core.ignorecase",
    gitignore: "/Docs/Out.txt\n",
    path: "docs/OUT.txt",
    ignoreCase: true,
    expected: true,
  },
  {
    name: "name glob with a literal head matches a name that starts with it",
    gitignore: "cscope.*\n",
    path: "a/cscope.out",
    expected: true,
  },
  {
    name: "name glob with a literal head does not match a name with more before it",
    gitignore: "cscope.*\n",
    path: "a/ncscope.out",
    expected: false,
  },
  {
    name: "name glob's literal head folds case with core.ignorecase",
    gitignore: "CScope.*\n",
    path: "a/cscope.out",
    ignoreCase: true,
    expected: true,
  },
  {
    name: "anchored one-segment glob matches at its own level",
    gitignore: "/*.spec\n",
    path: "kernel.spec",
    expected: true,
  },
  {
    name: "anchored one-segment glob does not match deeper down",
    gitignore: "/*.spec\n",
    path: "a/kernel.spec",
    expected: false,
  },
  {
    name: "anchored glob with a bracket does not match across a slash",
    gitignore: "/a[/]b\n",
    path: "a/b",
    expected: false,
  },
  {
    name: "path glob with a double star that is not a whole segment does not cross a slash",
    gitignore: "/docs**.txt\n",
    path: "docs/a/b.txt",
    expected: false,
  },
  {
    name: "path glob with a double-star segment matches deeper down",
    gitignore: "/docs/**/b.txt\n",
    path: "docs/a/c/b.txt",
    expected: true,
  },
];

/** What decided a path: the verdict and the deciding line, as git reports it. */
interface Verdict {
  readonly ignored: boolean;
  readonly line: number | undefined;
  readonly pattern: string | undefined;
}

function fromRule(rule: IgnoreRule | undefined): Verdict {
  return {
    ignored: rule !== undefined && !rule.negated,
    line: rule?.line,
    pattern: rule?.pattern,
  };
}

/**
 * Our verdict for a whole path, the way git reaches it: the outermost ignored ancestor
 * directory decides if there is one, else the path's own match.
 */
function ourVerdict(file: IgnoreFile, path: string, isDir: boolean): Verdict {
  const parts = byteForm(path).split("/");
  for (let i = 0; i < parts.length - 1; i++) {
    const rule = file.match(parts[i] as string, true, parts.slice(0, i + 1).join("/"));
    if (rule && !rule.negated) return fromRule(rule);
  }
  return fromRule(file.match(parts.at(-1) as string, isDir, parts.join("/")));
}

function gitVerdict(answer: CheckIgnoreAnswer): Verdict {
  return { ignored: answer.ignored, line: answer.match?.line, pattern: answer.match?.pattern };
}

/** The subdirectory of the repository holding case `index`. */
function caseDir(index: number): string {
  return `case-${String(index).padStart(3, "0")}`;
}

let repo: TempRepo | undefined;
const answers = new Map<Case, CheckIgnoreAnswer>();

beforeAll(async () => {
  repo = await createTempRepo();
  const root = repo.dir;
  await Promise.all(
    CASES.map(async (c, index) => {
      const dir = join(root, caseDir(index));
      const full = join(dir, c.path);
      await mkdir(c.isDir ? full : dirname(full), { recursive: true });
      if (!c.isDir) await writeFile(full, "");
      await writeFile(join(dir, ".gitignore"), c.gitignore);
    }),
  );
  for (const ignoreCase of [false, true]) {
    const batch = CASES.filter((c) => (c.ignoreCase ?? false) === ignoreCase);
    const paths = batch.map((c) => `${caseDir(CASES.indexOf(c))}/${c.path}`);
    const config = ignoreCase ? { "core.ignorecase": "true" } : {};
    const results = await checkIgnore(repo, paths, { config });
    for (const [i, c] of batch.entries()) answers.set(c, results[i] as CheckIgnoreAnswer);
  }
});

afterAll(async () => {
  await repo?.remove();
});

function gitAnswer(c: Case): CheckIgnoreAnswer {
  const answer = answers.get(c);
  if (!answer) throw new Error(`no answer from git for ${c.name}`);
  return answer;
}

describe("ignore patterns against git check-ignore", () => {
  it("has at least 80 cases, with distinct names", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(80);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it("records git's answer as each case's expected verdict", () => {
    const wrong = CASES.filter((c) => gitAnswer(c).ignored !== c.expected).map(
      (c) => `${c.name}: git says ${gitAnswer(c).ignored ? "ignored" : "not ignored"}`,
    );
    expect(wrong).toEqual([]);
  });

  for (const c of CASES) {
    it(c.name, () => {
      const file = IgnoreFile.compile(
        Buffer.from(c.gitignore, "utf8"),
        ".gitignore",
        c.ignoreCase ? { ignoreCase: true } : {},
      );
      expect(ourVerdict(file, c.path, c.isDir ?? false)).toEqual(gitVerdict(gitAnswer(c)));
    });
  }
});

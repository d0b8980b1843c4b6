/**
 * git's wildmatch, as a matcher over byte-form strings (see pattern.ts). Pure; depends on
 * nothing.
 *
 * A matcher and not a translation to RegExp: V8's regex engine backtracks, and a line such as
 * `*a*a*a*a*a*a*b` against a long name of `a`s took 13 s as a regex. wildmatch gives up as soon
 * as the text runs out behind a star (ABORT_ALL) or a `/` stops a single star (ABORT_TO_STARSTAR),
 * which keeps it polynomial. Every way a star can fail returns one of the two, as in git since
 * 1f2e05f0b7 (2.41, "wildmatch: fix exponential behavior"): one plain NOMATCH in their place
 * lets each outer star retry every later start, and `*a` 16 times against 60 `a`s and a `b`
 * then ran for hours. The semantics follow git's master, rule for rule, including its quirks
 * under case folding (the text is lowered, an escaped or bracketed letter is not).
 */

const MATCH = 0;
const NOMATCH = 1;
const ABORT_ALL = -1;
const ABORT_TO_STARSTAR = -2;

export interface WildmatchFlags {
  /** WM_PATHNAME: `*` and `?` stop at `/`; only a whole-segment `**` crosses directories. */
  readonly pathname: boolean;
  /** WM_CASEFOLD: ASCII letters of the text are lowered before comparing. */
  readonly casefold: boolean;
}

const SLASH = 0x2f;

function lower(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

function isGlobSpecial(code: number): boolean {
  return code === 0x2a || code === 0x3f || code === 0x5b || code === 0x5c; // * ? [ \
}

/** git's sane ctype classes (ASCII only; `space` is " \t\n\r", without \v and \f). */
const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a),
  alpha: (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a),
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: (c) => c >= 0x30 && c <= 0x39,
  graph: (c) => c >= 0x21 && c <= 0x7e,
  lower: (c) => c >= 0x61 && c <= 0x7a,
  print: (c) => c >= 0x20 && c <= 0x7e,
  punct: (c) =>
    (c >= 0x21 && c <= 0x2f) ||
    (c >= 0x3a && c <= 0x40) ||
    (c >= 0x5b && c <= 0x60) ||
    (c >= 0x7b && c <= 0x7e),
  space: (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d,
  upper: (c) => c >= 0x41 && c <= 0x5a,
  xdigit: (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

/** Whether wildmatch would abort on `pattern` whatever the text: a line that never matches. */
export function neverMatches(pattern: string): string | undefined {
  for (let p = 0; p < pattern.length; p++) {
    const c = pattern.charCodeAt(p);
    if (c === 0x5c) {
      if (p + 1 >= pattern.length) return "trailing backslash";
      p++;
    } else if (c === 0x5b) {
      const end = bracketEnd(pattern, p);
      if (typeof end === "string") return end;
      p = end;
    }
  }
  return undefined;
}

/** Index of the `]` closing the bracket expression at `start`, or why there is none. */
export function bracketEnd(p: string, start: number): number | string {
  let i = start + 1;
  if (p[i] === "!" || p[i] === "^") i++;
  for (let first = true; ; first = false) {
    if (i >= p.length) return "unclosed [";
    const c = p[i];
    if (c === "]" && !first) return i;
    if (c === "\\") {
      if (++i >= p.length) return "unclosed [";
    } else if (c === "[" && p[i + 1] === ":") {
      const close = p.indexOf("]", i + 2);
      if (close === -1) return "unclosed [";
      if (close - (i + 2) >= 1 && p[close - 1] === ":") {
        const name = p.slice(i + 2, close - 1);
        if (!CLASSES[name]) return `unknown character class [:${name}:]`;
        i = close;
      }
    }
    i++;
  }
}

/** Matches `text` against `pattern` (both in byte form) as git's wildmatch does. */
export function wildmatch(pattern: string, text: string, flags: WildmatchFlags): boolean {
  return dowild(pattern, 0, text, 0, flags) === MATCH;
}

function dowild(p: string, pi: number, t: string, ti: number, flags: WildmatchFlags): number {
  const { pathname, casefold } = flags;
  for (; pi < p.length; pi++, ti++) {
    let pc = p.charCodeAt(pi);
    if (ti >= t.length && pc !== 0x2a) return ABORT_ALL;
    let tc = ti < t.length ? t.charCodeAt(ti) : 0;
    if (casefold) {
      tc = lower(tc);
      pc = lower(pc);
    }
    switch (pc) {
      case 0x5c: // \ : the next character, literally (and not lowered)
        pi++;
        if (pi >= p.length || tc !== p.charCodeAt(pi)) return NOMATCH;
        continue;
      case 0x3f: // ?
        if (pathname && tc === SLASH) return NOMATCH;
        continue;
      case 0x5b: {
        // [
        const matched = bracket(p, pi, tc, casefold);
        if (matched === ABORT_ALL) return ABORT_ALL;
        if (matched.ok === false || (pathname && tc === SLASH)) return NOMATCH;
        pi = matched.end;
        continue;
      }
      case 0x2a: {
        // *
        let matchSlash: boolean;
        if (p.charCodeAt(pi + 1) === 0x2a) {
          const before = pi - 1;
          pi++;
          while (p.charCodeAt(pi + 1) === 0x2a) pi++;
          const next = pi + 1;
          if (!pathname) {
            matchSlash = true;
          } else if (
            (before < 0 || p.charCodeAt(before) === SLASH) &&
            (next >= p.length ||
              p.charCodeAt(next) === SLASH ||
              (p.charCodeAt(next) === 0x5c && p.charCodeAt(next + 1) === SLASH))
          ) {
            // A whole `**` segment: first try it as no directories at all.
            if (p.charCodeAt(next) === SLASH && dowild(p, next + 1, t, ti, flags) === MATCH) {
              return MATCH;
            }
            matchSlash = true;
          } else {
            matchSlash = false;
          }
        } else {
          matchSlash = !pathname;
        }
        pi++;
        if (pi >= p.length) {
          // A trailing `**` matches everything; a trailing `*` only up to the next `/`, which
          // no outer single star starting later gets past either (a `**` may).
          if (!matchSlash && t.indexOf("/", ti) !== -1) return ABORT_TO_STARSTAR;
          return MATCH;
        }
        if (!matchSlash && p.charCodeAt(pi) === SLASH) {
          // One star then `/`: the rest of this directory name, then the `/` below. With no
          // `/` left, no outer star can supply one by starting later.
          const slash = t.indexOf("/", ti);
          if (slash === -1) return ABORT_ALL;
          ti = slash;
          continue;
        }
        for (;;) {
          if (ti >= t.length) break;
          if (!isGlobSpecial(p.charCodeAt(pi))) {
            // A literal follows: skip ahead to its next occurrence.
            const literal = casefold ? lower(p.charCodeAt(pi)) : p.charCodeAt(pi);
            while (ti < t.length) {
              const c = t.charCodeAt(ti);
              if (!matchSlash && c === SLASH) break;
              if ((casefold ? lower(c) : c) === literal) break;
              ti++;
            }
            const here = ti < t.length ? t.charCodeAt(ti) : 0;
            // The literal is not in the rest of the text (or of this segment): an outer star
            // starting later cannot find it either, so abort rather than let it retry.
            if ((casefold ? lower(here) : here) !== literal) {
              return matchSlash ? ABORT_ALL : ABORT_TO_STARSTAR;
            }
          }
          tc = casefold ? lower(t.charCodeAt(ti)) : t.charCodeAt(ti);
          const matched = dowild(p, pi, t, ti, flags);
          if (matched !== NOMATCH) {
            if (!matchSlash || matched !== ABORT_TO_STARSTAR) return matched;
          } else if (!matchSlash && tc === SLASH) {
            return ABORT_TO_STARSTAR;
          }
          ti++;
        }
        return ABORT_ALL;
      }
      default:
        if (tc !== pc) return NOMATCH;
    }
  }
  return ti < t.length ? NOMATCH : MATCH;
}

/**
 * One bracket expression at `p[start]` against the text character `tc` (already lowered when
 * folding): whether it matched and where it ends, or ABORT_ALL when it is malformed.
 */
function bracket(
  p: string,
  start: number,
  tc: number,
  casefold: boolean,
): { ok: boolean; end: number } | typeof ABORT_ALL {
  let i = start + 1;
  let pc = p.charCodeAt(i);
  if (pc === 0x5e) pc = 0x21; // ^ as !
  const negated = pc === 0x21;
  if (negated) pc = p.charCodeAt(++i);
  let previous = 0;
  let matched = false;
  do {
    if (i >= p.length) return ABORT_ALL;
    if (pc === 0x5c) {
      pc = p.charCodeAt(++i);
      if (i >= p.length) return ABORT_ALL;
      if (tc === pc) matched = true;
    } else if (pc === 0x2d && previous !== 0 && i + 1 < p.length && p.charCodeAt(i + 1) !== 0x5d) {
      pc = p.charCodeAt(++i);
      if (pc === 0x5c) {
        pc = p.charCodeAt(++i);
        if (i >= p.length) return ABORT_ALL;
      }
      if (tc <= pc && tc >= previous) matched = true;
      else if (casefold && tc >= 0x61 && tc <= 0x7a) {
        const upper = tc - 0x20;
        if (upper <= pc && upper >= previous) matched = true;
      }
      pc = 0;
    } else if (pc === 0x5b && p.charCodeAt(i + 1) === 0x3a) {
      const close = p.indexOf("]", i + 2);
      if (close === -1) return ABORT_ALL;
      if (close - (i + 2) < 1 || p.charCodeAt(close - 1) !== 0x3a) {
        // No ":]": the "[" is an ordinary member, and ":" comes next.
        if (tc === 0x5b) matched = true;
      } else {
        const name = p.slice(i + 2, close - 1);
        const test = CLASSES[name];
        if (!test) return ABORT_ALL;
        // Folding lowers the text, so [:upper:] takes lower-case letters instead.
        if (test(tc) || (casefold && name === "upper" && tc >= 0x61 && tc <= 0x7a)) matched = true;
        i = close;
        pc = 0;
      }
    } else if (tc === pc) {
      matched = true;
    }
    previous = pc;
    pc = p.charCodeAt(++i);
  } while (i < p.length && pc !== 0x5d);
  if (i >= p.length) return ABORT_ALL;
  return { ok: matched !== negated, end: i };
}

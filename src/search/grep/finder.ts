/**
 * Finding a required literal in a file's raw bytes, as a grep prefilter: exactly, by its rarest
 * byte with memchr (`Buffer.indexOf` of one byte) and then whole, or ignoring ASCII case without
 * folding the file. Pure; depends on nothing.
 *
 * Folding a whole file to lower case to search it (what `-i` did) costs a decode and a copy of
 * every byte, ~0.8 GB/s; searching for the few case variants of a short window of the literal
 * with `Buffer.indexOf`, then checking the whole literal where one is found, runs at 1.7 GB/s
 * and more (measured over 5,000 C files of the Linux tree: 4 variants of `m_r` for
 * `pm_resume`). A finder is used for one buffer at a time: it remembers where each variant
 * occurs next, so a search that moves forward never scans a stretch twice.
 */

export interface Finder {
  /** Where the literal next occurs in `buffer` at or after `from`, or -1. */
  find(buffer: Buffer, from: number): number;
}

/**
 * Every byte, from the rarest in source text to the most common, as hex: measured on freshfs's
 * two benchmark corpora (the Linux tree's C, an npm tree's JavaScript and TypeScript, weighted
 * alike). A literal is looked for by its rarest byte, with `Buffer.indexOf` of one byte (memchr),
 * then checked whole where it is found, as rg's memchr prefilter does: on 744 MB of the Linux
 * tree in one thread, `PM_RESUME` took 135 ms so (on `U`) against 309 ms with `Buffer.indexOf`
 * of the literal, `ERR_SYS` 68 against 167 ms.
 */
const BY_FREQUENCY =
  "00010203040506070b0e0f101112131415161718191a1b1c1d1e1ff77fc0c1ca" +
  "cbcccddcdddeeef1f2f3f4f5f6f8f9fafbfcfdfedfffc708f00cd4c8c6eaed0d" +
  "d3ebc9d6d2ecdac29d8e9192efa2c5a3cf8990ac9798c4b7dbd5e9ada99bb6a0" +
  "968f939aaba58a8b9f9ca1cee899d7bbb4b987ba958cbc9e85e786b388bfb184" +
  "af8dc3a87ee4aaa4b5a6bebde6a7e3aeb28382e1e581b8d9b05ed124d8e2944a" +
  "80d021e025405a2b5c51606a393f7c3c377a2659275d5b3558363857344b7156" +
  "3e33482377424755326b3d2d3128292f764f462e3b4d4c78797d7b444e62502a" +
  "67524968434554533a41666d2c3009706c756463220a6f736e61695f72746520";

/** Per byte, its place in `BY_FREQUENCY` (0: the rarest). */
const RANK = new Uint8Array(256);
for (let r = 0; r < 256; r++) RANK[Number.parseInt(BY_FREQUENCY.slice(2 * r, 2 * r + 2), 16)] = r;

/**
 * A candidate found by the rare byte that is not the literal, more often than one in this many
 * bytes searched (a text where the byte is common after all): the literal is then searched for
 * whole from there, at `Buffer.indexOf`'s steady speed, instead of stopping every few bytes.
 */
const MISS_SPACING = 64;

/** The literal's bytes, exactly. */
export function exactFinder(literal: Buffer): Finder {
  const length = literal.length;
  if (length < 2) return { find: (buffer, from) => buffer.indexOf(literal, from) };
  let rare = 0;
  for (let i = 1; i < length; i++) {
    if ((RANK[literal[i] as number] as number) < (RANK[literal[rare] as number] as number))
      rare = i;
  }
  const byte = literal[rare] as number;
  return {
    find(buffer, from) {
      let misses = 0;
      for (
        let at = buffer.indexOf(byte, from + rare);
        at !== -1;
        at = buffer.indexOf(byte, at + 1)
      ) {
        const start = at - rare;
        // Every later candidate starts later still: none fits.
        if (start + length > buffer.length) return -1;
        let i = 0;
        while (i < length && buffer[start + i] === literal[i]) i++;
        if (i === length) return start;
        if (++misses > 16 && misses * MISS_SPACING > at - from) {
          return buffer.indexOf(literal, start + 1);
        }
      }
      return -1;
    },
  };
}

function isLetter(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a);
}

/**
 * The window of the literal to search for: the fewest case variants (letters double them), then
 * the longest (fewer false starts), from 3 to 4 bytes (the whole literal when shorter).
 */
function chooseWindow(lower: Buffer): { offset: number; length: number } {
  let best = { offset: 0, length: Math.min(lower.length, 3), variants: Number.POSITIVE_INFINITY };
  for (let length = Math.min(lower.length, 3); length <= Math.min(lower.length, 4); length++) {
    for (let offset = 0; offset + length <= lower.length; offset++) {
      let letters = 0;
      for (let i = offset; i < offset + length; i++) if (isLetter(lower[i] as number)) letters++;
      const variants = 2 ** letters;
      if (variants < best.variants || (variants === best.variants && length > best.length)) {
        best = { offset, length, variants };
      }
    }
  }
  return best;
}

/** The literal's rarest byte in either case (a letter counts as the more common of its two). */
function rarestByte(lower: Buffer): { offset: number; length: number } {
  const rankOf = (byte: number) =>
    isLetter(byte)
      ? Math.max(RANK[byte] as number, RANK[byte ^ 0x20] as number)
      : (RANK[byte] as number);
  let offset = 0;
  for (let i = 1; i < lower.length; i++) {
    if (rankOf(lower[i] as number) < rankOf(lower[offset] as number)) offset = i;
  }
  return { offset, length: 1 };
}

/** Every spelling of `window` with its ASCII letters in either case. */
function caseVariants(window: Buffer): Buffer[] {
  let variants = [Buffer.from(window)];
  for (let i = 0; i < window.length; i++) {
    const code = window[i] as number;
    if (!isLetter(code)) continue;
    variants = variants.flatMap((variant) => {
      const other = Buffer.from(variant);
      other[i] = code ^ 0x20;
      return [variant, other];
    });
  }
  return variants;
}

/** A window search's answer when it gave up at `at` (see `windowSearch`): `GAVE_UP - at`. */
const GAVE_UP = -2;

/**
 * Finds the literal (ASCII, lower case) by the case variants of one window of it. With
 * `patience`, it gives up (answering `GAVE_UP - at`, to go on from `at`) once its candidates
 * that are not the literal come more often than one in `MISS_SPACING` bytes.
 */
function windowSearch(
  lower: Buffer,
  window: { offset: number; length: number },
  patience: boolean,
): (buffer: Buffer, from: number, fresh: boolean) => number {
  const length = lower.length;
  const variants = caseVariants(lower.subarray(window.offset, window.offset + window.length));
  // One byte is found by memchr when given as a number.
  const needles = variants.map((variant) =>
    variant.length === 1 ? (variant[0] as number) : variant,
  );
  // Where each variant occurs next in the buffer, at or after `searchedFrom[v]`.
  const next = new Array<number>(variants.length).fill(-1);
  const searchedFrom = new Array<number>(variants.length).fill(Number.POSITIVE_INFINITY);
  const matchesAt = (buffer: Buffer, at: number): boolean => {
    if (at < 0 || at + length > buffer.length) return false;
    for (let i = 0; i < length; i++) {
      let code = buffer[at + i] as number;
      if (code >= 0x41 && code <= 0x5a) code |= 0x20;
      if (code !== lower[i]) return false;
    }
    return true;
  };
  return (buffer, from, fresh) => {
    if (fresh) searchedFrom.fill(Number.POSITIVE_INFINITY);
    let misses = 0;
    for (let at = from; ; ) {
      const windowFrom = at + window.offset;
      let best = -1;
      for (let v = 0; v < needles.length; v++) {
        // What was found for a variant holds while it is still ahead of `windowFrom` (or
        // there was none past an earlier start); else it is looked for again from here.
        const found = next[v] as number;
        if (!((searchedFrom[v] as number) <= windowFrom && (found === -1 || found >= windowFrom))) {
          next[v] = buffer.indexOf(needles[v] as Buffer | number, windowFrom);
          searchedFrom[v] = windowFrom;
        }
        const occurs = next[v] as number;
        if (occurs !== -1 && (best === -1 || occurs < best)) best = occurs;
      }
      if (best === -1) return -1;
      const candidate = best - window.offset;
      if (matchesAt(buffer, candidate)) return candidate;
      at = candidate + 1;
      if (patience && ++misses > 16 && misses * MISS_SPACING > at - from) return GAVE_UP - at;
    }
  };
}

/**
 * The literal (ASCII, lower case) in any mix of ASCII case. First by its rarest byte, in its one
 * or two cases, with memchr: on the Linux tree, 2.8× faster than the window below for `err_sys`,
 * 3.8× for `link_req_rst`. Where that byte turns out common (`pm_resume`: every letter of it is),
 * by the case variants of a window of 3 to 4 bytes with `Buffer.indexOf`, for the rest of the
 * buffer: at most eight passes, still no slower than folding the file.
 */
export function foldedFinder(lowerLiteral: string): Finder {
  const lower = Buffer.from(lowerLiteral, "latin1");
  const rare = windowSearch(lower, rarestByte(lower), true);
  const steady = windowSearch(lower, chooseWindow(lower), false);
  let seen: Buffer | undefined;
  let lastFrom = 0;
  /** Where the rare byte gave up in `seen` (the window is used from there on), or -1. */
  let gaveUpAt = -1;
  let steadyFresh = true;
  return {
    find(buffer, from) {
      const fresh = buffer !== seen || from < lastFrom;
      if (fresh) {
        seen = buffer;
        gaveUpAt = -1;
        steadyFresh = true;
      }
      lastFrom = from;
      if (gaveUpAt === -1) {
        const found = rare(buffer, from, fresh);
        if (found > GAVE_UP) return found;
        gaveUpAt = GAVE_UP - found;
      }
      const answer = steady(buffer, Math.max(from, gaveUpAt), steadyFresh);
      steadyFresh = false;
      return answer;
    },
  };
}

/**
 * The first place any of `finders` finds its literal: for an alternation of literals
 * (`ERR_SYS|PME_TURN_OFF`), whose every match holds one of them. Each finder's last answer is
 * kept while the search moves forward past it, so a literal that no longer occurs is not
 * searched for again from every line.
 */
export function anyFinder(finders: readonly Finder[]): Finder {
  const next = new Array<number>(finders.length).fill(-1);
  const searchedFrom = new Array<number>(finders.length).fill(Number.POSITIVE_INFINITY);
  let seen: Buffer | undefined;
  let lastFrom = 0;
  return {
    find(buffer, from) {
      if (buffer !== seen || from < lastFrom) {
        seen = buffer;
        searchedFrom.fill(Number.POSITIVE_INFINITY);
      }
      lastFrom = from;
      let best = -1;
      for (let f = 0; f < finders.length; f++) {
        const found = next[f] as number;
        if (!((searchedFrom[f] as number) <= from && (found === -1 || found >= from))) {
          next[f] = (finders[f] as Finder).find(buffer, from);
          searchedFrom[f] = from;
        }
        const at = next[f] as number;
        if (at !== -1 && (best === -1 || at < best)) best = at;
      }
      return best;
    },
  };
}

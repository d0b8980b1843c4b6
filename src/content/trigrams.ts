/**
 * The content index's keys: trigrams of a file's bytes with ASCII letters folded to lower case,
 * hashed into 21 bits, and a 22nd bit for the trigram's upper-case twin (`upperKey`). One index
 * then serves case-sensitive and `-i` searches alike (it only selects candidates; the search
 * itself decides), and the builder's per-key tables stay at 4 Mi entries (16 MiB each) where
 * exact 24-bit keys would need 64 MiB. A hash collision only adds candidates, never loses one. Pure; depends on nothing; shared by the build thread and
 * the caller's thread.
 */

export const KEY_BITS = 22;

/** ASCII upper case to lower case; every other byte is itself. */
export const FOLD = new Uint8Array(256).map((_, byte) =>
  byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte,
);

/**
 * The bit (of 8) a folded byte sets in a posting's follow mask: each posting of a sparse key
 * says which bytes follow the trigram in the file, hashed into 8 bits. A literal then asks for
 * its trigrams *with the byte that follows each*, almost as a 4-gram index would, at one byte a
 * posting: `pm_resume` no longer takes every file with `pm_runtime_resume` in it.
 */
export function followBit(folded: number): number {
  return 1 << (Math.imul(folded + 1, 0x9e3779b1) >>> 29);
}

/**
 * The key of the (folded) trigram `t` = a << 16 | b << 8 | c: even, so that its upper-case key
 * (`upperKey`) is the odd one next to it.
 */
export function trigramKey(t: number): number {
  return (Math.imul(t, 0x9e3779b1) >>> (33 - KEY_BITS)) << 1;
}

/**
 * The second key of the (folded) trigram `t`, for where it is written in capitals: its letters
 * all upper case. Folding alone cannot tell `PM_RESUME` from the `pm_resume` of every power
 * management file in the kernel, and these keys, one more posting where a unit has the trigram
 * in capitals, can: on the Linux tree, `PM_RESUME` selects about 200 units (11 MB) where the
 * folded keys select 2,820 (113 MB). A segment keeps a trigram's upper-case key only where its
 * folded key is common (held by more than one unit in 16), empty where no unit has the trigram
 * in capitals: where it is rare, the folded key's postings and follow bits narrow almost as
 * well, and the second postings would cost memory for little. Only a case-sensitive search
 * asks for them.
 */
export function upperKey(t: number): number {
  return trigramKey(t) | 1;
}

/** 1 for ASCII upper-case letters. */
export const UPPER = new Uint8Array(256).map((_, byte) => (byte >= 0x41 && byte <= 0x5a ? 1 : 0));
/** 1 for ASCII lower-case letters. */
export const LOWER = new Uint8Array(256).map((_, byte) => (byte >= 0x61 && byte <= 0x7a ? 1 : 0));

/** A trigram every file holding a literal must have, and the follow bits it must show. */
export interface LiteralKey {
  /** The folded trigram's key (even). */
  readonly key: number;
  /** Follow bits required together (0: none, the trigram ends the literal). */
  readonly follow: number;
  /**
   * The literal has the trigram in capitals, to be found as written: where the segment keeps
   * its upper-case key (`key | 1`), that key is asked for instead.
   */
  readonly capitals: boolean;
}

/**
 * The keys every file holding `literal` (a string, as UTF-8, or bytes) must have, each with the bytes the literal has
 * after it; empty when the literal is shorter than three bytes (it narrows nothing). With
 * `exactCase` the literal is to be found as written, and its trigrams in capitals ask for their
 * upper-case keys; without, it is found in any ASCII case.
 */
export function literalKeys(literal: string | Uint8Array, exactCase: boolean): LiteralKey[] {
  const bytes = typeof literal === "string" ? Buffer.from(literal, "utf8") : literal;
  const keys = new Map<number, { follow: number; capitals: boolean }>();
  for (let i = 2; i < bytes.length; i++) {
    const a = bytes[i - 2] as number;
    const b = bytes[i - 1] as number;
    const c = bytes[i] as number;
    const t = ((FOLD[a] as number) << 16) | ((FOLD[b] as number) << 8) | (FOLD[c] as number);
    const capitals =
      exactCase &&
      ((LOWER[a] as number) | (LOWER[b] as number) | (LOWER[c] as number)) === 0 &&
      ((UPPER[a] as number) | (UPPER[b] as number) | (UPPER[c] as number)) === 1;
    const key = trigramKey(t);
    const next = i + 1 < bytes.length ? followBit(FOLD[bytes[i + 1] as number] as number) : 0;
    const before = keys.get(key);
    // The same folded trigram twice (`abcABC` folds to `abcabc`): both occurrences' needs hold
    // at once; capitals only if both are (the upper-case postings would miss the other).
    keys.set(key, {
      follow: (before?.follow ?? 0) | next,
      capitals: (before?.capitals ?? true) && capitals,
    });
  }
  return [...keys].map(([key, { follow, capitals }]) => ({ key, follow, capitals }));
}

/**
 * The content index's keys: trigrams of a file's bytes with ASCII letters folded to lower case,
 * hashed into 22 bits. One index then serves case-sensitive and `-i` searches alike (it only
 * selects candidates; the search itself decides), and the builder's per-key tables stay at
 * 4 Mi entries (16 MiB each) where exact 24-bit keys would need 64 MiB. A hash collision only
 * adds candidates, never loses one. Pure; depends on nothing; shared by the build thread and
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

/** The key of the (folded) trigram `t` = a << 16 | b << 8 | c. */
export function trigramKey(t: number): number {
  return Math.imul(t, 0x9e3779b1) >>> (32 - KEY_BITS);
}

/** A trigram every file holding a literal must have, and the follow bits it must show. */
export interface LiteralKey {
  readonly key: number;
  /** Follow bits required together (0: none, the trigram ends the literal). */
  readonly follow: number;
}

/**
 * The keys every file holding `literal` (UTF-8, any ASCII case) must have, each with the bytes
 * the literal has after it; empty when the literal is shorter than three bytes (it narrows
 * nothing).
 */
export function literalKeys(literal: string): LiteralKey[] {
  const bytes = Buffer.from(literal, "utf8");
  const keys = new Map<number, number>();
  for (let i = 2; i < bytes.length; i++) {
    const t =
      ((FOLD[bytes[i - 2] as number] as number) << 16) |
      ((FOLD[bytes[i - 1] as number] as number) << 8) |
      (FOLD[bytes[i] as number] as number);
    const key = trigramKey(t);
    const next = i + 1 < bytes.length ? followBit(FOLD[bytes[i + 1] as number] as number) : 0;
    keys.set(key, (keys.get(key) ?? 0) | next);
  }
  return [...keys].map(([key, follow]) => ({ key, follow }));
}

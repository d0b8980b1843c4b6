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

/** The key of the (folded) trigram `t` = a << 16 | b << 8 | c. */
export function trigramKey(t: number): number {
  return Math.imul(t, 0x9e3779b1) >>> (32 - KEY_BITS);
}

/**
 * The keys every file holding `literal` (UTF-8, any ASCII case) must have, deduplicated;
 * empty when the literal is shorter than three bytes (it narrows nothing).
 */
export function literalKeys(literal: string): number[] {
  const bytes = Buffer.from(literal, "utf8");
  const keys = new Set<number>();
  for (let i = 2; i < bytes.length; i++) {
    const t =
      ((FOLD[bytes[i - 2] as number] as number) << 16) |
      ((FOLD[bytes[i - 1] as number] as number) << 8) |
      (FOLD[bytes[i] as number] as number);
    keys.add(trigramKey(t));
  }
  return [...keys];
}

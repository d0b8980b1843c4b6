/**
 * Test helper: deterministic source-like text (indented words and a little punctuation) from a
 * seed, so differential tests against rg have real lines to match without committing a corpus.
 */
export function generatedSource(
  seed: number,
  lines: number,
  words: readonly string[],
  maxWordsPerLine: number,
): string {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const n = next() % (maxWordsPerLine + 1);
    const picked = Array.from({ length: n }, () => words[next() % words.length]);
    const tail = ["", " = 1;", "();", " // note", ": value", "(x) {"][next() % 6];
    out.push(`${"  ".repeat(next() % 3)}${picked.join(" ")}${tail}`);
  }
  return `${out.join("\n")}\n`;
}

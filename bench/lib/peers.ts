/**
 * Peers and the corpus: which peer programs are installed (a missing one is reported, never
 * silently dropped), and where the benchmark corpus is.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface Peer {
  /** The names looked for, in order (Debian calls fd `fdfind`). */
  readonly names: readonly string[];
  /** The first name found on the PATH, or undefined. */
  readonly command: string | undefined;
}

export function peer(...names: string[]): Peer {
  const command = names.find(
    (name) => spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0,
  );
  return { names, command };
}

/** Where `npm run bench` builds the corpus (gitignored). */
export const CORPUS_DIR = fileURLToPath(new URL("../.corpus", import.meta.url));

/** `FRESHFS_CORPUS`, else `bench/.corpus` (built by `bench/make-corpus.sh`). */
export function findCorpus(): string | undefined {
  const candidates = [process.env.FRESHFS_CORPUS, CORPUS_DIR];
  return candidates.find((dir): dir is string => dir !== undefined && existsSync(dir));
}

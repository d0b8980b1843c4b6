/**
 * Peers and the corpus: which peer programs are installed (a missing one is reported, never
 * silently dropped), and where the benchmark corpus is.
 */
import { execFile, spawnSync } from "node:child_process";
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

/**
 * `FRESHFS_CORPUS` (which must exist: a mistyped one is not quietly replaced), else
 * `bench/.corpus` if it was built (by `bench/make-corpus.sh`).
 */
export function findCorpus(): string | undefined {
  const given = process.env.FRESHFS_CORPUS;
  if (given !== undefined && given !== "") {
    if (!existsSync(given)) throw new Error(`FRESHFS_CORPUS is ${given}, which does not exist`);
    return given;
  }
  return existsSync(CORPUS_DIR) ? CORPUS_DIR : undefined;
}

/**
 * Runs a peer in `cwd` and reads its output in full, as an agent spawning it would. Exit 1 is
 * an answer (rg and fzf: nothing matched), not a failure.
 */
export function runPeer(
  command: string,
  args: readonly string[],
  cwd: string,
  input?: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      { cwd, maxBuffer: 512 * 1024 * 1024 },
      (error, stdout) => {
        if (error && (error as { code?: unknown }).code !== 1) reject(error);
        else resolve(stdout);
      },
    );
    // rg reads its standard input when that is not a terminal and no path is given: close it.
    // A peer that exits without reading it (rg given a path) breaks the pipe: not a failure,
    // its answer is on stdout.
    child.stdin?.on("error", () => {});
    child.stdin?.end(input ?? "");
  });
}

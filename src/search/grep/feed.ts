/**
 * What a search is handed and gives back, whichever runs it (the workers' scheduler or the
 * native core): the feed of files, the consumer of their outcomes, the budget, the content
 * index's hints, and how it ended. Depends on the worker's types only.
 */
import type { WorkerOutcome } from "./worker.js";

/**
 * The files a search goes through: all known at the start, or appended while a walk lists
 * them (in final order), until `finish`.
 */
export class FileFeed {
  readonly #files: readonly string[];
  /** The same array, while files are pushed (none for a feed complete from the start). */
  readonly #growing: string[] | undefined;
  #complete: boolean;
  #waiters: (() => void)[] = [];

  /** All the files, complete (the array is not copied); or none yet, to be pushed. */
  constructor(files: readonly string[] | undefined) {
    this.#growing = files ? undefined : [];
    this.#files = files ?? (this.#growing as string[]);
    this.#complete = files !== undefined;
  }

  get files(): readonly string[] {
    return this.#files;
  }

  get complete(): boolean {
    return this.#complete;
  }

  push(paths: readonly string[]): void {
    if (paths.length === 0) return;
    for (const path of paths) this.#growing?.push(path);
    this.#wake();
  }

  finish(): void {
    this.#complete = true;
    this.#wake();
  }

  /** Resolves at the next push, at the end, or when `signal` fires. */
  next(signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#complete) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
      this.#waiters.push(done);
    });
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/** Takes the outcome of file `index` of the feed (undefined: skipped); false stops the search. */
export type Consume = (index: number, outcome: WorkerOutcome | undefined) => boolean;

export interface Budget {
  /** A file on which the regex runs longer is abandoned. */
  readonly fileTimeoutMs: number;
  /** The search halts here, flagged partial; counted from the start, waits for a worker included. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** What the content index told of the files, by index in the feed. */
export interface FileHints {
  /** Only these stretches of the file can hold a match: [from, to, first line] triples. */
  readonly stretches: ReadonlyMap<number, readonly number[]>;
  /** Which alternatives of an alternation of literals the file can hold (a bit each). */
  readonly branches: ReadonlyMap<number, number>;
}

/** Files known only by their names: every file read whole. */
export const NO_HINTS: FileHints = { stretches: new Map(), branches: new Map() };

export interface Scheduled {
  /** Feed indexes of the files abandoned because the regex ran past its budget on them. */
  readonly timedOut: number[];
  /** The deadline halted the search. */
  partial: boolean;
}

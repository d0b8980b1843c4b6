/**
 * The progress line: on stderr, only when stderr is a terminal, and only once a walk or search
 * has taken longer than a moment; erased when it ends, so it never mixes with the output.
 */
import type { SearchProgress } from "../search/listing.js";
import { io, type Output } from "./io.js";

const SHOW_AFTER_MS = 300;
const REDRAW_MS = 100;

export class ProgressLine {
  readonly #label: string;
  readonly #stream: Output = io().stderr;
  readonly #started = performance.now();
  #latest: SearchProgress | undefined;
  #timer: NodeJS.Timeout | undefined;
  #shown = false;

  constructor(label: string) {
    this.#label = label;
    if (this.#stream.isTTY) {
      this.#timer = setInterval(() => this.#draw(), REDRAW_MS);
      this.#timer.unref();
    }
  }

  /** For the search's `onProgress`. */
  readonly update = (progress: SearchProgress): void => {
    this.#latest = progress;
  };

  #draw(): void {
    const elapsed = performance.now() - this.#started;
    if (elapsed < SHOW_AFTER_MS) return;
    const seconds = (elapsed / 1000).toFixed(1);
    const p = this.#latest;
    let where = "";
    if (p?.phase === "walk") where = `, ${p.done.toLocaleString("en-US")} entries listed`;
    if (p?.phase === "search") {
      where = `, ${p.done.toLocaleString("en-US")} of ${(p.total ?? 0).toLocaleString("en-US")} files searched`;
    }
    this.#stream.write(`\r\x1b[2Kfreshfs: ${this.#label}${where} (${seconds} s)`);
    this.#shown = true;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#shown) this.#stream.write("\r\x1b[2K");
  }
}

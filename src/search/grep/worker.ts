/**
 * The grep worker: searches a list of files and posts what it finds. Runs in a worker thread so
 * that the caller's event loop never waits on file reads or on a regex, and so that a regex
 * that backtracks without end can be stopped: the thread is terminated, which no code on the
 * main thread could do to a running `RegExp.exec`. Depends on `engine`.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { parentPort, receiveMessageOnPort } from "node:worker_threads";
import { type EngineSettings, type FileOutcome, type SearchMode, searchBuffer } from "./engine.js";

export interface WorkerJob {
  /** Tags this job's batches: a batch posted just before a stop must not reach the next job. */
  readonly id: number;
  readonly files: readonly string[];
  readonly startAt: number;
  /** Files to pass over (a regex timed out on them in an earlier worker). */
  readonly skip: readonly number[];
  readonly source: string;
  readonly flags: string;
  readonly literal: string | undefined;
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
  readonly before: number;
  readonly after: number;
  readonly maxCount: number;
  readonly mode: SearchMode;
  readonly maxFileSize: number;
  /** [0]: index of the file being searched, written before each file (-1 until the first). */
  readonly current: SharedArrayBuffer;
}

export type WorkerOutcome =
  | FileOutcome
  | { readonly kind: "too-large"; readonly size: number }
  | { readonly kind: "unreadable"; readonly code: string };

export interface WorkerBatch {
  readonly id: number;
  /** Every file before this index is done. */
  readonly next: number;
  readonly results: readonly (readonly [number, WorkerOutcome])[];
  readonly done: boolean;
}

const FLUSH_MS = 10;
const FLUSH_RESULTS = 128;

function read(path: string, maxFileSize: number): Buffer | WorkerOutcome {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    return { kind: "unreadable", code: (error as NodeJS.ErrnoException).code ?? "EIO" };
  }
  try {
    const size = fstatSync(fd).size;
    if (size > maxFileSize) return { kind: "too-large", size };
    const buffer = Buffer.allocUnsafe(size);
    let total = 0;
    while (total < size) {
      const n = readSync(fd, buffer, total, size - total, total);
      if (n === 0) break;
      total += n;
    }
    return total === size ? buffer : buffer.subarray(0, total);
  } catch (error) {
    return { kind: "unreadable", code: (error as NodeJS.ErrnoException).code ?? "EIO" };
  } finally {
    closeSync(fd);
  }
}

function run(job: WorkerJob): void {
  const port = parentPort;
  if (!port) return;
  const settings: EngineSettings = {
    regex: new RegExp(job.source, job.flags),
    literal:
      job.literal === undefined
        ? undefined
        : job.ignoreCase
          ? job.literal
          : Buffer.from(job.literal, "utf8"),
    multiline: job.multiline,
    before: job.before,
    after: job.after,
    maxCount: job.maxCount,
    mode: job.mode,
  };
  const current = new Int32Array(job.current);
  const skip = new Set(job.skip);
  let results: [number, WorkerOutcome][] = [];
  let flushed = performance.now();
  const flush = (next: number, done: boolean) => {
    const batch: WorkerBatch = { id: job.id, next, results, done };
    port.postMessage(batch);
    results = [];
    flushed = performance.now();
  };
  for (let i = job.startAt; i < job.files.length; i++) {
    if (results.length >= FLUSH_RESULTS || performance.now() - flushed >= FLUSH_MS) {
      flush(i, false);
      // The caller has enough (or gave up): stop between files.
      if (receiveMessageOnPort(port)?.message === "stop") return;
    }
    if (skip.has(i)) continue;
    Atomics.store(current, 0, i);
    const file = read(job.files[i] as string, job.maxFileSize);
    const outcome = Buffer.isBuffer(file) ? searchBuffer(file, settings) : file;
    if (outcome.kind !== "none") results.push([i, outcome]);
  }
  flush(job.files.length, true);
}

parentPort?.on("message", (message: WorkerJob | "stop") => {
  if (message !== "stop") run(message);
});

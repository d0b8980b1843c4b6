/**
 * The watcher's thread: it owns every `fs.watch` of the process, so the kernel's inotify queue is
 * read however busy the main thread is (measured: with the watches on the main thread, 40,000
 * creates while it was blocked became 16,384 events, the rest dropped without an error; owned
 * by this thread, all 200,000 events of 100,000 creates arrived). It forwards raw
 * `(directory, name)` pairs in one message per burst, and judges nothing: the live tree
 * does. Depends only on `scan/digest` (the thread loads as little as it can).
 *
 * Protocol (`WatcherRequest` in, `WatcherReport` out) in `backend.ts`.
 */
import { type Dirent, type FSWatcher, lstatSync, readdirSync, readFileSync, watch } from "node:fs";
import { parentPort } from "node:worker_threads";
import { fsPath } from "../io/bytes.js";
import { byName, namesDigest } from "../scan/digest.js";
import type { WatchedReport, WatcherReport, WatcherRequest } from "./backend.js";

const port = parentPort;
if (!port) throw new Error("watcher-thread.ts runs as a worker thread");

/**
 * The kernel drops events only when its queue for this inotify instance holds
 * `max_queued_events`; libuv reads the queue until it is empty in one callback, and Node calls
 * the watchers' listeners in that same callback. So a loss implies a burst (events between two
 * turns of this thread's loop) at least that long. libuv drops events of watches already
 * removed before they reach a listener, so the threshold keeps a margin: a quarter of the queue.
 */
function overflowThreshold(): number {
  try {
    const queued = Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim());
    if (Number.isSafeInteger(queued) && queued > 0) return Math.max(1, Math.floor(queued * 0.75));
  } catch {
    // Not Linux, or no /proc: libuv's other backends report what they lose as errors, if at all.
  }
  return 12_288;
}

const THRESHOLD = overflowThreshold();
/** How long one turn may spend setting watches up before it lets syncs and events through. */
const SLICE_MS = 5;

const watchers = new Map<string, FSWatcher>();
/** Events of the current burst, flat: directory, name. */
let pending: string[] = [];
let burst = 0;
let flushScheduled = false;
const queue: { readonly path: string; readonly id: number }[] = [];
let draining = false;

function send(report: WatcherReport): void {
  port?.postMessage(report);
}

/** At the end of the turn that brought the burst: send it. */
function flush(): void {
  flushScheduled = false;
  if (burst >= THRESHOLD) send({ op: "overflow", events: burst });
  burst = 0;
  if (pending.length > 0) {
    send({ op: "events", events: pending });
    pending = [];
  }
}

/**
 * Answers `ids` at the end of the loop turn after this one. The poll phase that brought their
 * messages may have begun before the changes they wait for (Node drains every message queued
 * on a port in one go, so one that arrived while this thread was busy is read without a new
 * look at the inotify queue); the next turn's poll begins after they arrived, so it reads
 * every event the kernel queued before they were sent.
 */
function answerNextTurn(ids: number[]): void {
  setImmediate(() =>
    setImmediate(() => {
      flush();
      for (const id of ids) send({ op: "synced", id });
    }),
  );
}

function scheduleFlush(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flush);
}

/** Watches closed a moment from now: their events still count towards a burst. */
const retiring = new Set<FSWatcher>();

/**
 * Closes `watcher` two loop turns from now, counting its events meanwhile: libuv drops the
 * events of a closed watch before they reach a listener, and a flood in a directory unwatched
 * just before the queue was read would otherwise hide an overflow that cost other directories
 * their events.
 */
function retire(watcher: FSWatcher): void {
  retiring.add(watcher);
  setImmediate(() =>
    setImmediate(() => {
      retiring.delete(watcher);
      watcher.close();
    }),
  );
}

function listen(path: string): FSWatcher {
  const watcher = watch(fsPath(path) as string, { persistent: false }, (_type, name) => {
    burst++;
    if (retiring.has(watcher)) {
      scheduleFlush();
      return;
    }
    // A name Node could not give (none, or not UTF-8, which it decodes with U+FFFD): the whole
    // directory is in doubt, and the tree reads it again with the names' bytes.
    pending.push(path, typeof name === "string" && !name.includes("\uFFFD") ? name : "");
    scheduleFlush();
  });
  watcher.on("error", (error: NodeJS.ErrnoException) => {
    watchers.delete(path);
    watcher.close();
    send({ op: "lost", path, code: error.code ?? "EIO" });
  });
  return watcher;
}

/** Watches `path`, then reads it: the live tree compares that read with its own. */
function watchOne(path: string): WatchedReport {
  try {
    // Always a new watch, made before the old one is closed: a directory replaced at the same
    // path (even by one given the same inode number) is watched anew, and a watch that other
    // trees share loses nothing in between (inotify hands back the same descriptor).
    const fresh = listen(path);
    const old = watchers.get(path);
    if (old) retire(old);
    watchers.set(path, fresh);
    const stats = lstatSync(fsPath(path));
    if (!stats.isDirectory()) return { path, code: "ENOTDIR" };
    const dirents: Dirent[] = readdirSync(fsPath(path), { withFileTypes: true }).sort(byName);
    return { path, dev: stats.dev, ino: stats.ino, digest: namesDigest(dirents) };
  } catch (error) {
    const watcher = watchers.get(path);
    if (watcher) {
      watchers.delete(path);
      watcher.close();
    }
    return { path, code: (error as NodeJS.ErrnoException).code ?? "EIO" };
  }
}

/** Sets up queued watches in slices, so that a sync never waits behind a whole tree's setup. */
function drain(): void {
  draining = true;
  const started = performance.now();
  const done: WatchedReport[] = [];
  let id = -1;
  while (queue.length > 0 && performance.now() - started < SLICE_MS) {
    const next = queue[0] as { path: string; id: number };
    if (id !== -1 && next.id !== id) break;
    queue.shift();
    id = next.id;
    done.push(watchOne(next.path));
  }
  if (done.length > 0) send({ op: "watched", id, dirs: done });
  if (queue.length > 0) setImmediate(drain);
  else draining = false;
}

port.on("message", (request: WatcherRequest) => {
  switch (request.op) {
    case "watch":
      for (const path of request.paths) queue.push({ path, id: request.id });
      if (!draining) setImmediate(drain);
      return;
    case "unwatch":
      for (const path of request.paths) {
        const watcher = watchers.get(path);
        if (!watcher) continue;
        watchers.delete(path);
        retire(watcher);
      }
      return;
    case "stall":
      Atomics.wait(new Int32Array(request.release), 0, 0, request.ms);
      return;
    case "sync":
      // The kernel queues an event inside the system call that makes the change, so every
      // change completed before this message was sent is in the inotify queue by now.
      answerNextTurn([request.id]);
      return;
  }
});

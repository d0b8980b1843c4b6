/**
 * The `stat` tool: what a path is (kind, size, times, mode, a link's target) and whether the
 * guard holds a full read of it that is still fresh, so a model can ask "may I edit this
 * without reading it again?" instead of finding out from a refusal. Depends on `tools/`,
 * `state/`, `errors`.
 */
import { type BigIntStats, readlinkSync } from "node:fs";
import { lstat, stat } from "node:fs/promises";
import { FreshfsError, fromFsError, isGone } from "../errors.js";
import { type Aliases, Args } from "./args.js";
import type { ToolContext } from "./commit.js";

export interface StatParams {
  /** Aliases: `file_path`, `filePath`. */
  path?: string;
  file_path?: string;
  filePath?: string;
}

export type EntryKind = "file" | "directory" | "symlink" | "fifo" | "socket" | "device";

/**
 * What the guard knows of a file: `fresh`, read in full and unchanged since (an edit may go
 * ahead); `partial`, only part of it read; `stale`, changed (or gone) since the read;
 * `not_read`, no read recorded.
 */
export type ReadState = "fresh" | "partial" | "stale" | "not_read";

export interface StatResult {
  readonly path: string;
  /**
   * The kind of what the path leads to (a link is followed; `symlink` says it was one); a link
   * that leads nowhere is `symlink` itself.
   */
  readonly kind: EntryKind;
  /** The path itself is a symbolic link: its target as written. */
  readonly symlink: string | undefined;
  readonly size: number;
  readonly mtime: string;
  readonly mtimeMs: number;
  readonly ctime: string;
  readonly ctimeMs: number;
  /** Permission bits as octal (`0644`). */
  readonly mode: string;
  /** A file's state in the guard; undefined for anything else. */
  readonly read: ReadState | undefined;
  /** An edit, write or delete would pass the guard now without a new read. */
  readonly editable: boolean;
  readonly text: string;
}

function kindOf(stats: BigIntStats): EntryKind {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  return "device";
}

const PERMISSIONS = ["---", "--x", "-w-", "-wx", "r--", "r-x", "rw-", "rwx"];

function permissions(mode: number): string {
  return [6, 3, 0].map((shift) => PERMISSIONS[(mode >> shift) & 7]).join("");
}

/** `340 B`, `1.2 KiB`: a size as `ls -h` would say it (list's column). */
export function humanSize(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** `1.2 KiB (1234 bytes)`. */
function sizeText(size: number): string {
  if (size < 1024) return `${size} byte${size === 1 ? "" : "s"}`;
  return `${humanSize(size)} (${size} bytes)`;
}

/** The guard's view of `lexical`, without refusing anything (strict's refusals are states here). */
export async function readStateOf(context: ToolContext, lexical: string): Promise<ReadState> {
  const latest = context.tracker.latest(lexical);
  if (!latest) return "not_read";
  if (latest.partial) return "partial";
  try {
    const verdict = await context.tracker.checkEdit(lexical);
    if (verdict.state === "fresh") return "fresh";
    if (verdict.state === "partial") return "partial";
    if (verdict.state === "not-read" || verdict.state === "new-file") return "not_read";
    return "stale";
  } catch (error) {
    if (error instanceof FreshfsError && error.code === "NOT_READ") return "not_read";
    return "stale";
  }
}

const READ_TEXT: Record<ReadState, string> = {
  fresh:
    "Read in full and unchanged since: it may be edited, overwritten or deleted without reading it again.",
  partial: "Read only in part: read the rest before editing it.",
  stale: "Changed on disk (or replaced) since it was read: read it again before editing it.",
  not_read: "Not read yet: read it before editing, overwriting or deleting it.",
};

export async function statTool(
  context: ToolContext,
  input: StatParams,
  aliases: Aliases,
): Promise<StatResult> {
  const args = new Args("stat", input, aliases);
  const path = args.requiredText("path");
  const target = context.roots.confine(path, "path");
  const shown = context.roots.display(target.lexical);
  let stats: BigIntStats;
  let symlink: string | undefined;
  try {
    const own = await lstat(target.lexical, { bigint: true });
    if (own.isSymbolicLink()) symlink = readlinkSync(target.lexical);
    // A link that leads nowhere is itself what is there (list shows it too).
    stats =
      symlink === undefined
        ? own
        : await stat(target.real, { bigint: true }).catch((error: unknown) => {
            if (isGone(error)) return own;
            throw error;
          });
  } catch (error) {
    if (isGone(error)) {
      throw new FreshfsError("NOT_FOUND", `${shown} does not exist.`, {
        path: target.lexical,
        cause: error,
      });
    }
    throw fromFsError(error, "stat", shown);
  }
  const kind = kindOf(stats);
  const read = kind === "file" ? await readStateOf(context, target.lexical) : undefined;
  const mode = Number(stats.mode & 0o7777n);
  const mtimeMs = Number(stats.mtimeNs / 1_000_000n);
  const ctimeMs = Number(stats.ctimeNs / 1_000_000n);
  const mtime = new Date(mtimeMs).toISOString();
  const ctime = new Date(ctimeMs).toISOString();
  const size = Number(stats.size);
  const what =
    kind === "file"
      ? `a file, ${sizeText(size)}`
      : kind === "directory"
        ? "a directory"
        : `a ${kind}`;
  const lines = [
    `${shown}: ${what}${symlink === undefined ? "" : ` (through the symbolic link ${shown} -> ${symlink})`}.`,
    `Modified ${mtime}; status changed ${ctime}; mode ${mode.toString(8).padStart(4, "0")} (${permissions(mode)}).`,
  ];
  if (read) lines.push(READ_TEXT[read]);
  return {
    path: target.lexical,
    kind,
    symlink,
    size,
    mtime,
    mtimeMs,
    ctime,
    ctimeMs,
    mode: mode.toString(8).padStart(4, "0"),
    read,
    editable: read === "fresh",
    text: lines.join("\n"),
  };
}

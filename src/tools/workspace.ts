/**
 * `Workspace`: the agent file tools over one or more roots, wiring the read-before-write
 * guard, the path locks, atomic writes and the scan cache together (contract Part 4). Each
 * tool takes one argument object with Claude Code's parameter names (opencode's and pi's
 * spellings accepted) and resolves to a structured result with a `text` for the model, or
 * rejects with `FreshfsError`, whose `message` is written for the model. Depends on `state/`,
 * `scan/`, `search/`, `tools/`.
 */
import { FileStateTracker, type GuardPolicy, type PartialReadPolicy } from "../state/tracker.js";
import { type ApplyPatchParams, type ApplyPatchResult, applyPatchTool } from "./apply-patch.js";
import type { CallOptions, ToolContext } from "./commit.js";
import {
  type EditParams,
  type EditResult,
  editTool,
  type MultiEditParams,
  multiEditTool,
} from "./edit.js";
import {
  type DeleteParams,
  type DeleteResult,
  deleteTool,
  type RenameParams,
  type RenameResult,
  renameTool,
} from "./files.js";
import { type ListParams, type ListResult, listTool } from "./list.js";
import { type MkdirParams, type MkdirResult, mkdirTool } from "./mkdir.js";
import { boundText } from "./output.js";
import { type ReadParams, type ReadResult, readTool } from "./read.js";
import { type ReadManyParams, type ReadManyResult, readManyTool } from "./read-many.js";
import { Roots } from "./roots.js";
import {
  type FindParams,
  type FindToolResult,
  findTool,
  type GlobParams,
  type GlobToolResult,
  type GrepParams,
  type GrepToolResult,
  globTool,
  grepTool,
} from "./search.js";
import { type StatParams, type StatResult, statTool } from "./stat.js";
import { type WriteParams, type WriteResult, writeTool } from "./write.js";

export interface WorkspaceOptions {
  /** The directories the tools may touch; relative paths resolve against the first. */
  roots: string | readonly string[];
  /**
   * `strict` refuses an edit of a file not read, or changed since (`NOT_READ`, `STALE`);
   * `warn` makes it, and returns a warning when the file changed since its read or was read
   * only in part (a file never read passes silently, as in ChatCLI; contract 1.3).
   * @default "strict"
   */
  policy?: GuardPolicy | undefined;
  /**
   * `reject`: only a full read (every line shown, in one window or consecutive ones) allows
   * an edit; `allow-within-window`: an edit inside the lines last shown is allowed too.
   * @default "reject"
   */
  partialReads?: PartialReadPolicy | undefined;
  /** glob, grep and find read the shared scan cache (every mutation here invalidates it). @default true */
  cache?: boolean | undefined;
  /**
   * glob, grep and find answer from live trees: each root searched is watched after its first
   * walk and synchronized with the watcher on every call, so answers reflect every change made
   * before the call, by any process (contract 5.2). Needs `cache`. Off, or where a root cannot
   * be watched, the cache's TTL policy applies (`FS_LIVE_WATCH=0` turns it off everywhere).
   * @default true
   */
  watch?: boolean | undefined;
  /** @see FileStateTrackerOptions.racyWindowMs @default 2000 */
  racyWindowMs?: number | undefined;
  /** Most files the guard remembers reads of (least recently used dropped). @default 10000 */
  maxTrackedFiles?: number | undefined;
}

/**
 * Every tool's text under `MAX_RESULT_BYTES`, whatever it holds: the tools fit their own records
 * first, so this only cuts what they cannot shape.
 */
async function bounded<R extends { readonly text: string }>(result: Promise<R>): Promise<R> {
  const done = await result;
  const text = boundText(done.text);
  return text === done.text ? done : { ...done, text };
}

export class Workspace {
  /**
   * The guard. Record reads made outside these tools here (`cat` in a shell tool, say), so
   * edits after them are judged on what the model saw.
   */
  readonly tracker: FileStateTracker;
  readonly #outer: Roots;
  #context: ToolContext;

  constructor(options: WorkspaceOptions) {
    const roots = new Roots(options.roots);
    const policy = options.policy ?? "strict";
    const partialReads = options.partialReads ?? "reject";
    this.tracker = new FileStateTracker({
      policy,
      partialReads,
      racyWindowMs: options.racyWindowMs,
      maxEntries: options.maxTrackedFiles,
    });
    this.#outer = roots;
    this.#context = {
      roots,
      tracker: this.tracker,
      policy,
      partialReads,
      cache: options.cache ?? true,
      watch: options.watch ?? true,
    };
  }

  /** The canonical paths of the directories the tools may use now. */
  get roots(): readonly string[] {
    return this.#context.roots.real;
  }

  /**
   * Limits the tools to `dirs` (an MCP client's roots, say) without forgetting any read: a
   * directory inside a root given at construction is kept, a root inside a directory is kept,
   * anything else is dropped, so the result is never wider than the construction's roots (and
   * may be empty: then every path is refused with `OUTSIDE_ROOT`). `undefined` lifts the limit.
   * Returns the roots now in force.
   */
  narrowTo(dirs: readonly string[] | undefined): readonly string[] {
    const roots = dirs === undefined ? this.#outer : this.#outer.narrowed(dirs);
    this.#context = { ...this.#context, roots };
    return roots.real;
  }

  /**
   * Shows lines `offset`.. of a text file, numbered, and records the read; an image is returned
   * as its bytes and type, a PDF as its pages' text.
   */
  read(params: ReadParams, call?: CallOptions): Promise<ReadResult> {
    return bounded(readTool(this.#context, params, call));
  }

  /** Several files, each read and recorded as `read` would; one output cap for the call. */
  readMany(params: ReadManyParams, call?: CallOptions): Promise<ReadManyResult> {
    return bounded(readManyTool(this.#context, params, call));
  }

  /** A directory's entries (or a tree to `depth`) with kind, size and mtime, from the live listing. */
  list(params: ListParams = {}, call?: CallOptions): Promise<ListResult> {
    return bounded(listTool(this.#context, params, call));
  }

  /** A path's kind, size, times and mode, and whether the guard holds a fresh full read of it. */
  stat(params: StatParams): Promise<StatResult> {
    return bounded(statTool(this.#context, params));
  }

  /** Makes a directory and the parents it needs; an existing directory is no error. */
  mkdir(params: MkdirParams, call?: CallOptions): Promise<MkdirResult> {
    return bounded(mkdirTool(this.#context, params, call));
  }

  /** Applies a patch in Codex's format to several files: all of them, or none. */
  applyPatch(params: ApplyPatchParams, call?: CallOptions): Promise<ApplyPatchResult> {
    return bounded(applyPatchTool(this.#context, params, call));
  }

  /** Creates a file, or overwrites one that was read in full and has not changed since. */
  write(params: WriteParams, call?: CallOptions): Promise<WriteResult> {
    return bounded(writeTool(this.#context, params, call));
  }

  /** Replaces `old_string` (once, or every occurrence with `replace_all`) in a read file. */
  edit(params: EditParams, call?: CallOptions): Promise<EditResult> {
    return bounded(editTool(this.#context, params, call));
  }

  /** Several replacements in one file, all matched against its current text; all or nothing. */
  multiEdit(params: MultiEditParams, call?: CallOptions): Promise<EditResult> {
    return bounded(multiEditTool(this.#context, params, call));
  }

  /** Deletes a file that was read in full and has not changed since (a link: just the link). */
  delete(params: DeleteParams, call?: CallOptions): Promise<DeleteResult> {
    return bounded(deleteTool(this.#context, params, call));
  }

  /** Moves a file or directory; replaces an existing file only with `overwrite`. */
  rename(params: RenameParams, call?: CallOptions): Promise<RenameResult> {
    return bounded(renameTool(this.#context, params, call));
  }

  /** Files matching a glob, newest first. */
  glob(params: GlobParams, call?: CallOptions): Promise<GlobToolResult> {
    return bounded(globTool(this.#context, params, call));
  }

  /** Searches file contents (ripgrep semantics). */
  grep(params: GrepParams, call?: CallOptions): Promise<GrepToolResult> {
    return bounded(grepTool(this.#context, params, call));
  }

  /** The files a few letters most likely mean (fuzzy, ranked). */
  find(params: FindParams, call?: CallOptions): Promise<FindToolResult> {
    return bounded(findTool(this.#context, params, call));
  }
}

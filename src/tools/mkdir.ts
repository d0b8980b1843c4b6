/**
 * The `mkdir` tool: a directory and the parents it needs (`mkdir -p`), confined like every
 * mutation, under the path's lock, the scan cache told. An existing directory is no error
 * (the model asked for it to exist, and it does). Depends on `tools/`, `scan/`, `errors`.
 */
import { type BigIntStats, lstatSync, realpathSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { errnoOf, FreshfsError, fromFsError } from "../errors.js";
import { invalidateFsScanAfterWrite } from "../scan/cache.js";
import { describeNonFile } from "../state/snapshot.js";
import { type Aliases, Args } from "./args.js";
import { type CallOptions, removeMade, type ToolContext, underLocks } from "./commit.js";

export interface MkdirParams {
  /** The directory (absolute, or relative to the first root). Aliases: `dir_path`, `file_path`. */
  path?: string;
  dir_path?: string;
  file_path?: string;
}

export interface MkdirResult {
  readonly path: string;
  /** False when the directory already existed. */
  readonly created: boolean;
  /** The first directory made (the others are below it); undefined when none was. */
  readonly firstCreated: string | undefined;
  readonly text: string;
}

export async function mkdirTool(
  context: ToolContext,
  input: MkdirParams,
  aliases: Aliases,
  call: CallOptions = {},
): Promise<MkdirResult> {
  const args = new Args("mkdir", input, aliases);
  const path = args.requiredText("path");
  const target = context.roots.confine(path, "path");
  const shown = context.roots.display(target.lexical);
  const reconfine = () => context.roots.reconfine(path, target, "path");
  return underLocks(context, [target.real], "mkdir", call, reconfine, async () => {
    let existing: BigIntStats | undefined;
    try {
      existing = lstatSync(target.real, { bigint: true, throwIfNoEntry: false });
    } catch (error) {
      if (errnoOf(error) === "ENOTDIR") throw fileOnTheWay(shown, target.lexical, error);
      throw fromFsError(error, "make the directory", shown);
    }
    if (existing?.isDirectory()) {
      return {
        path: target.lexical,
        created: false,
        firstCreated: undefined,
        text: `${shown} already exists (a directory); nothing was made.`,
      };
    }
    if (existing) {
      throw new FreshfsError(
        "ALREADY_EXISTS",
        `Cannot make the directory ${shown}: it is ${existing.isFile() ? "a file" : describeNonFile(existing)} already.`,
        { path: target.lexical },
      );
    }
    let first: string | undefined;
    try {
      first = await mkdir(target.real, { recursive: true });
    } catch (error) {
      const errno = errnoOf(error);
      if (errno === "EEXIST" || errno === "ENOTDIR")
        throw fileOnTheWay(shown, target.lexical, error);
      throw fromFsError(error, "make the directory", shown);
    }
    // The path was confined with its parents resolved; one swapped for a link out while
    // `mkdir` walked them would have put the new directories there. Made is made: take them
    // back, deepest first, and say so.
    let landed: string | undefined;
    try {
      landed = realpathSync.native(target.real);
    } catch {
      landed = undefined;
    }
    if (landed !== target.real) {
      removeMade(target.real, first);
      throw new FreshfsError(
        "STALE",
        `A directory on the way to ${shown} changed (a symbolic link was put there) while it was being made; nothing was kept. Check the path, then retry.`,
        { path: target.lexical },
      );
    }
    invalidateFsScanAfterWrite(target.real);
    // As the model named it: the path given, less the parts that were there already.
    const firstGiven =
      first === undefined ? undefined : join(target.lexical, relative(target.real, first));
    const made = firstGiven === undefined ? shown : context.roots.display(firstGiven);
    return {
      path: target.lexical,
      created: true,
      firstCreated: firstGiven,
      text:
        first === undefined || first === target.real
          ? `Created the directory ${shown}.`
          : `Created the directory ${shown} (and the directories above it, from ${made}).`,
    };
  });
}

function fileOnTheWay(shown: string, lexical: string, cause: unknown): FreshfsError {
  return new FreshfsError(
    "NOT_A_DIRECTORY",
    `Cannot make the directory ${shown}: a part of its path is a file, not a directory.`,
    { path: lexical, cause },
  );
}

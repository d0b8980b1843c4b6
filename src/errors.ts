/**
 * The one error class freshfs throws, with stable codes. Depends on nothing.
 *
 * The library throws these; the CLI and MCP layers render `message` (already written for a
 * model to act on) and may branch on `code`.
 */

/**
 * Stable error codes. Callers branch on these, never on message text.
 *
 * - `NOT_READ`: an edit or overwrite of a file that was never read, or only partially read.
 * - `STALE`: the file changed on disk (or vanished) since it was last read.
 * - `NOT_FOUND`: the path does not exist.
 * - `INVALID_PATTERN`: a glob or regular expression that cannot be used.
 * - `NOT_A_FILE`: a directory (or a pipe, socket or device) was given where a file is needed.
 * - `NOT_A_DIRECTORY`: a file was given where a directory is needed.
 * - `PERMISSION_DENIED`: the operating system refused access.
 * - `IO_ERROR`: any other file-system failure.
 * - `INVALID_ARGUMENT`: an option or parameter is malformed.
 * - `ABORTED`: the caller's `AbortSignal` fired.
 * - `DEADLOCK`: a call holding path locks asked for more (take them all in one call).
 * - `LOCKED`: another freshfs process kept the file's lock past the wait bound (the message
 *   names it).
 * - `OUTSIDE_ROOT`: a path that is, or resolves to, a place outside the workspace's roots.
 * - `NO_MATCH`: an edit's old text is not in the file.
 * - `AMBIGUOUS`: an edit's old text is in the file more than once.
 * - `BINARY`: a binary file (a NUL byte near its start) where text is needed.
 * - `TOO_LARGE`: a file past the size a tool handles.
 * - `ALREADY_EXISTS`: a rename onto an existing path without `overwrite`, a patch that adds a
 *   file (or moves one) where one exists, a directory where a file is.
 * - `UNSUPPORTED_ENCODING`: text that is not UTF-8 (or UTF-16 with a byte order mark).
 * - `INVALID_PATCH`: `apply_patch` input that does not follow the patch grammar (the message
 *   names the line).
 */
export type FreshfsErrorCode =
  | "NOT_READ"
  | "STALE"
  | "NOT_FOUND"
  | "INVALID_PATTERN"
  | "NOT_A_FILE"
  | "NOT_A_DIRECTORY"
  | "PERMISSION_DENIED"
  | "IO_ERROR"
  | "INVALID_ARGUMENT"
  | "ABORTED"
  | "DEADLOCK"
  | "LOCKED"
  | "OUTSIDE_ROOT"
  | "NO_MATCH"
  | "AMBIGUOUS"
  | "BINARY"
  | "TOO_LARGE"
  | "ALREADY_EXISTS"
  | "UNSUPPORTED_ENCODING"
  | "INVALID_PATCH";

export interface FreshfsErrorOptions {
  /** The absolute path the error is about, when there is one. */
  path?: string | undefined;
  /** The underlying error (a Node.js `ErrnoException`, usually). */
  cause?: unknown;
}

export class FreshfsError extends Error {
  override readonly name = "FreshfsError";
  readonly code: FreshfsErrorCode;
  readonly path: string | undefined;
  /**
   * Which process refused, where a call may cross to the daemon (a `Workspace` with `daemon`):
   * as a result's `answeredBy` says who answered. Undefined for the library's own calls.
   */
  answeredBy: { readonly pid: number; readonly daemon: boolean } | undefined;

  constructor(code: FreshfsErrorCode, message: string, options: FreshfsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
  }
}

/** The errno of a Node.js file-system error, if it is one. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** ENOENT, or ENOTDIR (a parent component is no longer a directory): the path is not there. */
export function isGone(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === "ENOENT" || errno === "ENOTDIR";
}

/**
 * Turns a Node.js file-system error into a `FreshfsError` whose message names the action, the
 * path and the reason.
 */
export function fromFsError(error: unknown, action: string, path: string): FreshfsError {
  if (error instanceof FreshfsError) return error;
  const errno = errnoOf(error);
  const detail = errno ?? (error instanceof Error ? error.message : String(error));
  const options = { path, cause: error };
  switch (errno) {
    case "ENOENT":
    case "ENOTDIR":
      return new FreshfsError("NOT_FOUND", `Cannot ${action} ${path}: no such file.`, options);
    case "EISDIR":
      return new FreshfsError(
        "NOT_A_FILE",
        `Cannot ${action} ${path}: it is a directory, not a file.`,
        options,
      );
    case "EEXIST":
      return new FreshfsError(
        "ALREADY_EXISTS",
        `Cannot ${action} ${path}: something already exists there.`,
        options,
      );
    case "ENAMETOOLONG":
      return new FreshfsError(
        "INVALID_ARGUMENT",
        `Cannot ${action} ${path}: the name is too long for the file system.`,
        options,
      );
    case "ELOOP":
      return new FreshfsError(
        "IO_ERROR",
        `Cannot ${action} ${path}: its symbolic links form a loop, or nest too deep (ELOOP).`,
        options,
      );
    case "EACCES":
    case "EPERM":
      return new FreshfsError(
        "PERMISSION_DENIED",
        `Cannot ${action} ${path}: permission denied (${errno}).`,
        options,
      );
    default:
      return new FreshfsError("IO_ERROR", `Cannot ${action} ${path}: ${detail}.`, options);
  }
}

// Enough of a pattern or value to recognize it; a model's 70 KB pattern repeated in full
// would crowd out the reason.
const QUOTE_MAX = 120;

/** `text` as it is, shortened in the middle past `QUOTE_MAX` characters (a pattern echoed back). */
export function elided(text: string): string {
  if (text.length <= QUOTE_MAX) return text;
  const half = QUOTE_MAX / 2;
  return `${text.slice(0, half)}…(${text.length - QUOTE_MAX} characters)…${text.slice(-half)}`;
}

/** `text` JSON-quoted for a message, shortened in the middle past `QUOTE_MAX` characters. */
export function quoted(text: string): string {
  if (text.length <= QUOTE_MAX) return JSON.stringify(text);
  const half = QUOTE_MAX / 2;
  return `${JSON.stringify(text.slice(0, half))}…(${text.length - QUOTE_MAX} characters)…${JSON.stringify(text.slice(-half))}`;
}

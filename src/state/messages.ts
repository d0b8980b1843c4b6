/**
 * The guard's refusal and warning texts, written for a model to act on. Neutral about the cause
 * ("changed on disk"), they name the remedy ("read it again") and never blame a user or a tool:
 * the file may have changed for any reason. Depends on nothing.
 */

/** Why a record no longer vouches for the file. */
export type StaleReason =
  /** The bytes differ from the ones that were read. */
  | "modified"
  /** Another writer kept changing the file while it was being hashed. */
  | "changing"
  /** The file is gone. */
  | "deleted"
  /** A directory, pipe or device now stands at the path. */
  | "replaced"
  /** Stat data moved and the read was recorded without its bytes: unknown is never "same". */
  | "unverifiable";

/** Stat data of one side of a change; a field is undefined when it is not known. */
export interface StatFacts {
  readonly mtimeNs: bigint | undefined;
  readonly size: number | undefined;
}

export interface StaleFacts {
  readonly path: string;
  readonly reason: StaleReason;
  /** Stat data at the read. */
  readonly before: StatFacts;
  /** Stat data now; undefined when the file is gone. */
  readonly after: StatFacts | undefined;
  /** What stands at the path now, for `replaced`. */
  readonly nowIs: string | undefined;
}

export interface PartialFacts {
  readonly path: string;
  readonly offset: number;
  readonly limit: number;
  /** Lines in the file at the read, when the bytes were known. */
  readonly lines: number | undefined;
}

const NS_PER_MS = 1_000_000n;

function isoTime(ns: bigint): string {
  // Floor division, so that times before 1970 keep a non-negative sub-millisecond part.
  let ms = ns / NS_PER_MS;
  if (ns < 0n && ms * NS_PER_MS !== ns) ms -= 1n;
  const date = new Date(Number(ms));
  // Past Date's range (year 275760; tmpfs and Btrfs accept it) there is no calendar form.
  if (Number.isNaN(date.getTime())) return `${ns} ns since the epoch`;
  // Same-millisecond rewrites are the common case the guard exists for: show the nanoseconds
  // so the two sides of an arrow do not look identical when they are not.
  const sub = (ns - ms * NS_PER_MS).toString().padStart(6, "0");
  const iso = date.toISOString();
  return sub === "000000" ? iso : `${iso.slice(0, -1)}${sub}Z`;
}

function statChange(facts: StaleFacts): string {
  const mtime = (s: StatFacts) => (s.mtimeNs === undefined ? "unknown" : isoTime(s.mtimeNs));
  const size = (s: StatFacts) => (s.size === undefined ? "unknown" : `${s.size}`);
  const after = facts.after;
  const newMtime = after ? mtime(after) : "gone";
  const newSize = after ? size(after) : "gone";
  return `mtime: ${mtime(facts.before)} → ${newMtime}, size: ${size(facts.before)} → ${newSize}`;
}

function reasonText(facts: StaleFacts): string {
  switch (facts.reason) {
    case "modified":
      return "content changed";
    case "changing":
      return "another process kept writing it while it was being checked";
    case "deleted":
      return "file deleted";
    case "replaced":
      return `replaced by ${facts.nowIs ?? "something that is not a file"}`;
    case "unverifiable":
      return "stat data changed and the read was recorded without its bytes, so the content cannot be compared";
  }
}

function windowText(facts: PartialFacts): string {
  const last = facts.limit > 0 ? facts.offset + facts.limit - 1 : undefined;
  const reachesEnd = last === undefined || (facts.lines !== undefined && last >= facts.lines);
  const end = reachesEnd ? (facts.lines ?? "end") : last;
  return `lines ${facts.offset}-${end}${facts.lines === undefined ? "" : ` of ${facts.lines}`}`;
}

export function staleMessage(facts: StaleFacts): string {
  const detail = `${reasonText(facts)}; ${statChange(facts)}`;
  if (facts.reason === "deleted") {
    return `${facts.path} has been deleted since you last read it (${detail}). Read it again (or create it anew), then retry.`;
  }
  return `${facts.path} has changed on disk since you last read it (${detail}). Read it again, then retry.`;
}

/** The ChatCLI warning shape: the file, the reason with old → new mtime and size, the advice. */
export function staleWarning(facts: StaleFacts): string {
  return [
    `WARNING: File "${facts.path}" has changed on disk since you last read it.`,
    `Reason: ${reasonText(facts)} (${statChange(facts)})`,
    "You should re-read the file before making changes to avoid overwriting those changes.",
    "If you proceed anyway, the changes made since your read will be lost.",
  ].join("\n");
}

export function notReadMessage(path: string): string {
  return `${path} has not been read yet. Read it fully before editing or overwriting it.`;
}

export function partialReadMessage(facts: PartialFacts): string {
  return `${facts.path} was only partially read (${windowText(facts)}). Read the lines you have not seen (consecutive windows of the unchanged file add up), then retry.`;
}

export function partialReadWarning(facts: PartialFacts): string {
  return [
    `WARNING: File "${facts.path}" was only partially read (${windowText(facts)}).`,
    "You should read the whole file before changing it, so that the change fits the lines you have not seen.",
  ].join("\n");
}

export function uncheckedWarning(path: string, problem: string): string {
  return [
    `WARNING: File "${path}" could not be checked for changes since you last read it (${problem}).`,
    "You should re-read the file before making changes to avoid overwriting changes made since your read.",
  ].join("\n");
}

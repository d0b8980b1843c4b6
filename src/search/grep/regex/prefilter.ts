/**
 * A line prefilter: a lazily built DFA over UTF-8 bytes that says which lines a regex may match,
 * so that V8's backtracking engine runs only on those. The automaton recognizes a superset of
 * the regex's language at the byte level: an ASCII character is its byte; any non-ASCII one
 * (a code point, a UTF-16 code unit without `u`, or U+FFFD for invalid bytes) is 1 to 4 bytes
 * of 0x80-0xFF; lookarounds and word boundaries always hold; a backreference is any text;
 * `^` and `$` are a line's ends. States are subsets of a Thompson NFA, made on a table miss
 * (RE2's DFA); the cache is bounded, flushed when full, and given up (every line a candidate)
 * when flushes come too often to pay. Depends on `parse` (types) and `charset`.
 */
import type { CharSet, CharSets } from "./charset.js";
import type { Node } from "./parse.js";

export interface LinePrefilter {
  /**
   * The start of the first line at or after `from` (a line start) and before `end` (a line
   * end: a `\n`'s offset plus one, or the buffer's end) that may match, or -1. `buffer` is UTF-8
   * text (any bytes), lines end at `\n`; a byte order mark must be skipped by the caller.
   */
  nextCandidateLine(buffer: Uint8Array, from: number, end: number): number;
}

export interface PrefilterLimits {
  /** Most DFA states cached at once (each is a 1 KiB row of the transition table). */
  readonly maxStates: number;
  /** Most NFA nodes: a larger regex (e.g. a large bounded repeat) gets no prefilter. */
  readonly maxNodes: number;
}

const DEFAULT_LIMITS: PrefilterLimits = { maxStates: 4096, maxNodes: 20_000 };

/** A cache that fills within fewer bytes than this per state is not paying (RE2 uses 10). */
const MIN_BYTES_PER_STATE = 10;
/** Bytes of NFA state sets the cache may hold, besides the table (about 8 per node kept). */
const MAX_SET_BYTES = 8 * 1024 * 1024;
/** Bounded repeats are expanded up to this count; beyond, `x{n,m}` is taken as `x{32,}`. */
const REPEAT_LIMIT = 32;

const BYTES = 0;
const SPLIT = 1;
const LINE_START = 2;
const LINE_END = 3;
const MATCH = 4;

const NEWLINE = 10;
/** Table entries: a state's row offset (state × 256) when >= 0, or one of these. */
const UNKNOWN = -1;
const MATCHED = -2;
/** What a miss returns when the cache gives up. */
const GAVE_UP = -3;
/** What `run` returns when it found no candidate. */
const NOT_FOUND = -4;

class TooBig extends Error {}

/** Byte sets, shared by the nodes that test them. */
function byteSet(bytes: Iterable<number>): Uint8Array {
  const set = new Uint8Array(256);
  for (const b of bytes) set[b] = 1;
  return set;
}

const HIGH_BYTES = byteSet(Array.from({ length: 128 }, (_, i) => 128 + i));
const ASTRAL_LEAD_BYTES = byteSet(Array.from({ length: 16 }, (_, i) => 0xf0 + i));
const ANY_BUT_NEWLINE = byteSet(Array.from({ length: 256 }, (_, i) => i).filter((b) => b !== 10));

class Nfa {
  readonly kinds: number[] = [];
  readonly outs: number[][] = [];
  /** For BYTES nodes, an index into `byteSets`; -1 for the others. */
  readonly setOf: number[] = [];
  readonly byteSets: Uint8Array[] = [];
  private readonly setIds = new Map<Uint8Array, number>();
  /** Each character set's ASCII part as bytes, made once. */
  private readonly asciiBytes = new Map<CharSet, Uint8Array>();
  readonly match: number;
  readonly start: number;

  constructor(
    root: Node,
    private readonly sets: CharSets,
    unicode: boolean,
    private readonly maxNodes: number,
  ) {
    this.match = this.add(MATCH, []);
    const start = this.compile(root, this.match);
    // With `u`, V8's classes never match half of a surrogate pair, so compilePattern's `^` and
    // `$` (lookarounds on `[^\n]`) also hold between the two halves of an astral character: a
    // regex that matches an empty line matches, empty, inside any line that has one (whose
    // UTF-8 starts with F0-F4).
    this.start =
      unicode && start >= 0 && this.matchesEmptyLine(start)
        ? this.split([start, this.bytes(ASTRAL_LEAD_BYTES, this.match)])
        : start;
  }

  /** Whether MATCH is reached from `start` through assertions and splits alone. */
  private matchesEmptyLine(start: number): boolean {
    const seen = new Set<number>();
    const stack = [start];
    while (stack.length > 0) {
      const node = stack.pop() as number;
      if (seen.has(node)) continue;
      seen.add(node);
      if (this.kinds[node] === MATCH) return true;
      if (this.kinds[node] !== BYTES) stack.push(...(this.outs[node] as number[]));
    }
    return false;
  }

  private add(kind: number, outs: number[], set = -1): number {
    if (this.kinds.length >= this.maxNodes) throw new TooBig();
    this.kinds.push(kind);
    this.outs.push(outs);
    this.setOf.push(set);
    return this.kinds.length - 1;
  }

  /** A node taking a byte of `set` (the same set object, the same id: sets are few). */
  private bytes(set: Uint8Array, next: number): number {
    let id = this.setIds.get(set);
    if (id === undefined) {
      id = this.byteSets.length;
      this.byteSets.push(set);
      this.setIds.set(set, id);
    }
    return this.add(BYTES, [next], id);
  }

  /** A node that goes to any of `outs` (-1: a dead end), or -1 when all are dead. */
  private split(outs: number[]): number {
    const live = outs.filter((out) => out >= 0);
    if (live.length === 0) return -1;
    return live.length === 1 ? (live[0] as number) : this.add(SPLIT, live);
  }

  /** Any byte but `\n`, any number of times, then `next`. */
  private anyText(next: number): number {
    const loop = this.add(SPLIT, []);
    this.outs[loop] = [this.bytes(ANY_BUT_NEWLINE, loop), next];
    return loop;
  }

  /** The entry of `node` followed by `next` (continuation style), or -1 if nothing gets past. */
  private compile(node: Node, next: number): number {
    if (next < 0) return -1;
    switch (node.kind) {
      case "empty":
      case "look":
      case "wordBoundary":
        return next;
      case "lineStart":
        return this.add(LINE_START, [next]);
      case "lineEnd":
        return this.add(LINE_END, [next]);
      case "backreference":
        return this.anyText(next);
      case "atom": {
        const set = this.sets.of(node.atom);
        const entries: number[] = [];
        if (set.asciiCount > 0) {
          let ascii = this.asciiBytes.get(set);
          if (ascii === undefined) {
            ascii = new Uint8Array(256);
            ascii.set(set.ascii);
            this.asciiBytes.set(set, ascii);
          }
          entries.push(this.bytes(ascii, next));
        }
        if (set.nonAscii) {
          // 1 to 4 bytes of 0x80-0xFF.
          let tail = this.bytes(HIGH_BYTES, next);
          for (let k = 0; k < 3; k++) tail = this.bytes(HIGH_BYTES, this.split([next, tail]));
          entries.push(tail);
        }
        return this.split(entries);
      }
      case "concat": {
        let entry = next;
        for (let i = node.items.length - 1; i >= 0; i--) {
          entry = this.compile(node.items[i] as Node, entry);
        }
        return entry;
      }
      case "alt":
        return this.split(node.items.map((item) => this.compile(item, next)));
      case "repeat": {
        let { min, max } = node;
        // Looser bounds recognize more: still a superset.
        if (max - min > REPEAT_LIMIT) max = Infinity;
        if (min > REPEAT_LIMIT) [min, max] = [REPEAT_LIMIT, Infinity];
        let entry: number;
        if (max === Infinity) {
          const loop = this.add(SPLIT, []);
          this.outs[loop] = [this.compile(node.item, loop), next].filter((out) => out >= 0);
          entry = loop;
        } else {
          entry = next;
          for (let i = min; i < max; i++)
            entry = this.split([this.compile(node.item, entry), next]);
        }
        for (let i = 0; i < min; i++) entry = this.compile(node.item, entry);
        return entry;
      }
    }
  }
}

class LazyDfa implements LinePrefilter {
  private readonly kinds: Int8Array;
  private readonly outs: readonly (readonly number[])[];
  private readonly setOf: Int32Array;
  private readonly byteSets: readonly Uint8Array[];
  private readonly start: number;
  private readonly matchNode: number;
  /** Bytes that every NFA node treats alike share a class; one of each is computed per state. */
  private readonly classOf = new Uint8Array(256);
  private readonly classBytes: number[][] = [];

  private table: Int32Array;
  private eolAccepts: Uint8Array;
  private states: Int32Array[] = [];
  private readonly ids = new Map<string, number>();
  private setBytes = 0;
  /** Bytes run over, and at the last flush: how well the cache pays. */
  private scanned = 0;
  private scannedAtFlush = 0;
  /** The state (a row offset) `run` ended in. */
  private endState = 0;
  private saturated = false;

  /** Closure scratch: a node is in the current closure when `marks[node] === generation`. */
  private readonly marks: Int32Array;
  private generation = 0;
  private readonly stack: number[] = [];

  constructor(
    nfa: Nfa,
    private readonly maxStates: number,
  ) {
    this.kinds = Int8Array.from(nfa.kinds);
    this.outs = nfa.outs;
    this.setOf = Int32Array.from(nfa.setOf);
    this.byteSets = nfa.byteSets;
    this.start = nfa.start;
    this.matchNode = nfa.match;
    this.marks = new Int32Array(nfa.kinds.length);
    const classIds = new Map<string, number>();
    for (let b = 0; b < 256; b++) {
      const key = b === NEWLINE ? "\n" : this.byteSets.map((set) => set[b]).join("");
      let id = classIds.get(key);
      if (id === undefined) {
        id = this.classBytes.length;
        classIds.set(key, id);
        this.classBytes.push([]);
      }
      this.classOf[b] = id;
      (this.classBytes[id] as number[]).push(b);
    }
    const capacity = Math.min(16, maxStates);
    this.table = new Int32Array(capacity * 256).fill(UNKNOWN);
    this.eolAccepts = new Uint8Array(capacity);
    this.intern(this.closure([this.start], true), true);
  }

  /** Whether a line may match at its very start (then a prefilter rejects nothing). */
  acceptsAtLineStart(): boolean {
    return this.closure([this.start], true).includes(this.matchNode);
  }

  nextCandidateLine(buffer: Uint8Array, from: number, end: number): number {
    if (from >= end) return -1;
    if (this.saturated) return from;
    const found = this.run(buffer, from, end);
    if (found !== NOT_FOUND) return found;
    if (this.eolAccepts[this.endState >> 8] === 1) {
      const last = lineStartBefore(buffer, from, end);
      if (last < end) return last;
    }
    return -1;
  }

  /**
   * Runs the automaton over [from, end) from a line start: the start of the line where it
   * matched (or gave up), or NOT_FOUND with the state at `end` in `endState`.
   */
  private run(buffer: Uint8Array, from: number, end: number): number {
    let table = this.table;
    let s = 0;
    let i = from;
    for (;;) {
      // Two bytes a turn (15% faster, measured): stops before a byte with a negative entry.
      while (i + 1 < end) {
        const t = table[s + (buffer[i] as number)] as number;
        if (t < 0) break;
        const u = table[t + (buffer[i + 1] as number)] as number;
        if (u < 0) {
          s = t;
          i++;
          break;
        }
        s = u;
        i += 2;
      }
      if (i >= end) break;
      let t = table[s + (buffer[i] as number)] as number;
      if (t >= 0) {
        s = t;
        i++;
        continue;
      }
      if (t === UNKNOWN) {
        // The bytes run so far count when the miss decides whether a flush pays.
        this.scanned += i - from;
        t = this.miss(s >> 8, buffer[i] as number);
        this.scanned -= i - from;
        table = this.table;
      }
      if (t === MATCHED || t === GAVE_UP) {
        this.scanned += i - from;
        return lineStartBefore(buffer, from, i);
      }
      s = t;
      i++;
    }
    this.scanned += end - from;
    this.endState = s;
    return NOT_FOUND;
  }

  /** The epsilon closure of `seeds`: the BYTES, LINE_END and MATCH nodes reached, sorted. */
  private closure(seeds: readonly number[], atLineStart: boolean): number[] {
    const found: number[] = [];
    this.generation++;
    this.closeInto(found, seeds, atLineStart);
    return found.sort((a, b) => a - b);
  }

  private closeInto(found: number[], seeds: readonly number[], atLineStart: boolean): void {
    const { stack, marks, generation } = this;
    for (const seed of seeds) stack.push(seed);
    while (stack.length > 0) {
      const node = stack.pop() as number;
      if (marks[node] === generation) continue;
      marks[node] = generation;
      const kind = this.kinds[node];
      if (kind === SPLIT) {
        for (const out of this.outs[node] as number[]) stack.push(out);
      } else if (kind === LINE_START) {
        if (atLineStart) stack.push((this.outs[node] as number[])[0] as number);
      } else {
        found.push(node);
      }
    }
  }

  /** Whether a line that ends in this state matches: past its LINE_END nodes, to MATCH. */
  private acceptsAtLineEnd(nodes: readonly number[], atLineStart: boolean): boolean {
    const { stack, marks } = this;
    const generation = ++this.generation;
    for (const node of nodes) if (this.kinds[node] === LINE_END) stack.push(node);
    let accepts = false;
    while (stack.length > 0) {
      const node = stack.pop() as number;
      if (marks[node] === generation) continue;
      marks[node] = generation;
      const kind = this.kinds[node];
      if (kind === MATCH) accepts = true;
      else if (kind === SPLIT || kind === LINE_END || (kind === LINE_START && atLineStart)) {
        for (const out of this.outs[node] as number[]) stack.push(out);
      }
    }
    return accepts;
  }

  /** The row offset of the state of `nodes`, made if new; GAVE_UP if the cache gives up. */
  private intern(nodes: number[], initial: boolean): number {
    const key = `${initial ? "^" : ""}${nodes.join(",")}`;
    const known = this.ids.get(key);
    if (known !== undefined) return known * 256;
    if (this.states.length >= this.maxStates || this.setBytes > MAX_SET_BYTES) {
      if (!this.flush()) return GAVE_UP;
    }
    const id = this.states.length;
    if (id * 256 >= this.table.length) {
      const table = new Int32Array(this.table.length * 2).fill(UNKNOWN);
      table.set(this.table);
      this.table = table;
      const eol = new Uint8Array(this.eolAccepts.length * 2);
      eol.set(this.eolAccepts);
      this.eolAccepts = eol;
    }
    this.states.push(Int32Array.from(nodes));
    this.ids.set(key, id);
    this.setBytes += 8 * nodes.length;
    const eolAccepts = this.acceptsAtLineEnd(nodes, initial);
    this.eolAccepts[id] = eolAccepts ? 1 : 0;
    // A line ends: it matched, or the next begins in the initial state (row 0).
    this.table[id * 256 + NEWLINE] = eolAccepts ? MATCHED : 0;
    return id * 256;
  }

  /**
   * Empties the cache (RE2's reset), keeping the initial state as state 0; false, and no
   * prefilter from then on, when the last flush was too few bytes ago to be worth another.
   */
  private flush(): boolean {
    if (this.scanned - this.scannedAtFlush < MIN_BYTES_PER_STATE * this.maxStates) {
      this.saturated = true;
      return false;
    }
    this.scannedAtFlush = this.scanned;
    this.states = [];
    this.ids.clear();
    this.setBytes = 0;
    this.table.fill(UNKNOWN);
    this.intern(this.closure([this.start], true), true);
    return true;
  }

  /** Computes the transition of `state` on `byte`'s class and records it for the class. */
  private miss(state: number, byte: number): number {
    const nodes = this.states[state] as Int32Array;
    const found: number[] = [];
    this.generation++;
    for (const node of nodes) {
      if (this.kinds[node] !== BYTES) continue;
      if ((this.byteSets[this.setOf[node] as number] as Uint8Array)[byte] === 1) {
        this.closeInto(found, this.outs[node] as number[], false);
      }
    }
    // Unanchored: a match may begin at any byte.
    this.closeInto(found, [this.start], false);
    const target = found.includes(this.matchNode)
      ? MATCHED
      : this.intern(
          found.sort((a, b) => a - b),
          false,
        );
    // A flush forgot `state`: its row is not there to fill.
    if (target === GAVE_UP || this.states[state] !== nodes) return target;
    for (const b of this.classBytes[this.classOf[byte] as number] as number[]) {
      this.table[state * 256 + b] = target;
    }
    return target;
  }
}

/** Where the line holding offset `at` starts (not before `from`). */
function lineStartBefore(buffer: Uint8Array, from: number, at: number): number {
  const newline = at > from ? buffer.lastIndexOf(NEWLINE, at - 1) : -1;
  return newline >= from ? newline + 1 : from;
}

/**
 * The prefilter for a regex's tree, or undefined when it could not reject a line (the regex
 * matches the empty string at a line's start) or its automaton would be too big.
 */
export function linePrefilter(
  root: Node,
  sets: CharSets,
  unicode: boolean,
  limits: PrefilterLimits = DEFAULT_LIMITS,
): LinePrefilter | undefined {
  let nfa: Nfa;
  try {
    nfa = new Nfa(root, sets, unicode, limits.maxNodes);
  } catch (error) {
    if (error instanceof TooBig) return undefined;
    throw error;
  }
  if (nfa.start < 0) return undefined;
  const dfa = new LazyDfa(nfa, limits.maxStates);
  return dfa.acceptsAtLineStart() ? undefined : dfa;
}

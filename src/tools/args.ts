/**
 * Tool arguments as models send them: Claude Code's parameter names, the spellings opencode and
 * pi use (each tool's alias map, kept in the tool table), and numbers or booleans sent as
 * strings. Depends on `errors` only.
 *
 * Hand-written rather than a schema library: each parameter has aliases, and every complaint
 * must name the parameter the way the tool documents it, in a sentence a model can act on.
 */
import { FreshfsError } from "../errors.js";

/**
 * A tool's other spellings of its parameters: canonical name → aliases. One map per tool, the
 * parameters of the objects in its lists (multi_edit's `edits`) included.
 */
export type Aliases = Readonly<Record<string, readonly string[]>>;

/** For a caller that builds the arguments itself, with the canonical names. */
export const NO_ALIASES: Aliases = {};

function invalid(tool: string, message: string): FreshfsError {
  return new FreshfsError("INVALID_ARGUMENT", `${tool}: ${message}`);
}

/** One tool call's arguments, read by canonical name with the tool's aliases. */
export class Args {
  readonly #tool: string;
  readonly #input: Record<string, unknown>;
  readonly #aliases: Aliases;

  constructor(tool: string, input: unknown, aliases: Aliases) {
    this.#tool = tool;
    this.#aliases = aliases;
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw invalid(tool, "the arguments must be an object of named parameters.");
    }
    this.#input = input as Record<string, unknown>;
  }

  /** The value under `name` or one of its aliases; two different values is an error. */
  #raw(name: string): unknown {
    let found: { key: string; value: unknown } | undefined;
    for (const key of [name, ...(this.#aliases[name] ?? [])]) {
      const value = this.#input[key];
      if (value === undefined || value === null) continue;
      if (found && found.value !== value) {
        throw invalid(
          this.#tool,
          `${found.key} and ${key} name the same parameter (${name}) with different values; send one.`,
        );
      }
      found ??= { key, value };
    }
    return found?.value;
  }

  string(name: string): string | undefined {
    const value = this.#raw(name);
    if (value === undefined) return undefined;
    if (typeof value !== "string") {
      throw invalid(this.#tool, `${name} must be a string, not ${describe(value)}.`);
    }
    return value;
  }

  requiredString(name: string): string {
    const value = this.string(name);
    if (value === undefined) throw invalid(this.#tool, `${name} is required.`);
    return value;
  }

  /** A non-empty string (paths, patterns, queries). */
  requiredText(name: string): string {
    const value = this.requiredString(name);
    if (value.length === 0) throw invalid(this.#tool, `${name} must not be empty.`);
    return value;
  }

  integer(name: string, bounds: { min: number; max?: number } = { min: 0 }): number | undefined {
    const value = this.#raw(name);
    if (value === undefined) return undefined;
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
    if (typeof number !== "number" || !Number.isSafeInteger(number)) {
      throw invalid(this.#tool, `${name} must be a whole number, not ${describe(value)}.`);
    }
    if (number < bounds.min || number > max) {
      const range = bounds.max === undefined ? `>= ${bounds.min}` : `${bounds.min}-${max}`;
      throw invalid(this.#tool, `${name} must be ${range}, not ${number}.`);
    }
    return number;
  }

  boolean(name: string): boolean | undefined {
    const value = this.#raw(name);
    if (value === undefined || typeof value === "boolean") return value;
    if (value === "true") return true;
    if (value === "false") return false;
    throw invalid(this.#tool, `${name} must be true or false, not ${describe(value)}.`);
  }

  /** One of `choices`. */
  choice<T extends string>(name: string, choices: readonly T[]): T | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    if (!(choices as readonly string[]).includes(value)) {
      throw invalid(
        this.#tool,
        `${name} must be one of ${choices.join(", ")}, not ${JSON.stringify(value)}.`,
      );
    }
    return value as T;
  }

  /** An array of strings (or one string, as a list of one); undefined when absent. */
  strings(name: string): string[] | undefined {
    let value = this.#raw(name);
    if (value === undefined) return undefined;
    if (typeof value === "string") {
      // Some clients send arrays as JSON text; any other string is a list of one.
      try {
        const parsed: unknown = JSON.parse(value);
        value = Array.isArray(parsed) ? parsed : [value];
      } catch {
        value = [value];
      }
    }
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
      throw invalid(this.#tool, `${name} must be an array of strings, not ${describe(value)}.`);
    }
    return value as string[];
  }

  /** An array of objects, each read with its own `Args` and this call's aliases (multi-edit's `edits`). */
  list(name: string): Args[] {
    let value = this.#raw(name);
    // Some clients send nested arrays as JSON text.
    if (typeof value === "string") {
      try {
        value = JSON.parse(value);
      } catch {
        throw invalid(this.#tool, `${name} must be an array, not a string that is not JSON.`);
      }
    }
    if (value === undefined) throw invalid(this.#tool, `${name} is required.`);
    if (!Array.isArray(value)) {
      throw invalid(this.#tool, `${name} must be an array, not ${describe(value)}.`);
    }
    return value.map(
      (item, index) => new Args(`${this.#tool} ${name}[${index}]`, item, this.#aliases),
    );
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return String(value);
}

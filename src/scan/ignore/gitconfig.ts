/**
 * What the gitignore family needs from git's configuration: `core.excludesFile` and
 * `core.ignoreCase`, read from the files git reads, in git's order (system, global, repository,
 * `GIT_CONFIG_COUNT` pairs; the last value wins). Depends on nothing inside freshfs.
 *
 * Parsed by hand: the format is small, and spawning `git config` for every walk costs more
 * than the walk of a small tree. Supported: sections and subsections, quoting and escapes,
 * line continuations, comments, `include.path`. Not supported: `includeIf` (its conditions
 * need repository state); a value set only there is not seen.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";

export interface GitSettings {
  /** `core.excludesFile` as configured (expanded), or undefined when unset. */
  readonly excludesFile: string | undefined;
  readonly ignoreCase: boolean;
}

type Env = NodeJS.ProcessEnv;

/** `~/` expanded against HOME, as git's `git_config_pathname`. */
export function expandHome(path: string, env: Env): string {
  if (path === "~" || path.startsWith("~/")) return join(env.HOME ?? homedir(), path.slice(1));
  return path;
}

function xdgConfigHome(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return xdg ? xdg : join(env.HOME ?? homedir(), ".config");
}

/** Where git looks for the global excludes file when `core.excludesFile` is unset. */
export function defaultExcludesFile(env: Env): string {
  return join(xdgConfigHome(env), "git", "ignore");
}

/** The system and global configuration files, in the order git reads them. */
export function userConfigFiles(env: Env): string[] {
  const files: string[] = [];
  if (!isTrue(env.GIT_CONFIG_NOSYSTEM)) files.push(env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig");
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== "") files.push(env.GIT_CONFIG_GLOBAL);
  } else {
    files.push(join(xdgConfigHome(env), "git", "config"));
    files.push(join(env.HOME ?? homedir(), ".gitconfig"));
  }
  return files;
}

function isTrue(value: string | undefined): boolean {
  if (value === undefined) return false;
  return /^(1|true|yes|on)$/i.test(value.trim());
}

/** A git boolean: a key without "=" is true, and so is any integer but 0. */
function parseBool(value: string | null): boolean {
  if (value === null) return true;
  const text = value.trim();
  if (/^-?\d+$/.test(text)) return Number(text) !== 0;
  return /^(true|yes|on)$/i.test(text);
}

type Entry = readonly [key: string, value: string | null];

/**
 * Reads settings from `files` (later files win), then the `GIT_CONFIG_COUNT` pairs. Missing
 * or unreadable files are skipped, as git skips them.
 */
export function readGitSettings(files: readonly string[], env: Env): GitSettings {
  let excludesFile: string | undefined;
  let ignoreCase = false;
  const apply = ([key, value]: Entry) => {
    if (key === "core.excludesfile" && value !== null) excludesFile = expandHome(value, env);
    else if (key === "core.ignorecase") ignoreCase = parseBool(value);
  };
  for (const file of files) for (const entry of readConfigFile(file, env, 0)) apply(entry);
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? "", 10);
  for (let i = 0; Number.isSafeInteger(count) && i < count; i++) {
    const key = env[`GIT_CONFIG_KEY_${i}`];
    if (key) apply([key.toLowerCase(), env[`GIT_CONFIG_VALUE_${i}`] ?? ""]);
  }
  return { excludesFile, ignoreCase };
}

// git's own limit on nested includes.
const MAX_INCLUDE_DEPTH = 10;

function readConfigFile(file: string, env: Env, depth: number): Entry[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const entries: Entry[] = [];
  for (const [key, value] of parseConfig(text)) {
    if (key === "include.path" && value !== null && depth < MAX_INCLUDE_DEPTH) {
      const expanded = expandHome(value, env);
      const included = isAbsolute(expanded) ? expanded : join(dirname(file), expanded);
      entries.push(...readConfigFile(included, env, depth + 1));
    } else {
      entries.push([key, value]);
    }
  }
  return entries;
}

/** Parses git config text into `section[.subsection].key` → value pairs (null: no "="). */
export function parseConfig(source: string): Entry[] {
  const text = source.replace(/^\uFEFF/, "");
  const entries: Entry[] = [];
  let section = "";
  let i = 0;
  const n = text.length;
  const skipSpace = () => {
    while (i < n && (text[i] === " " || text[i] === "\t")) i++;
  };
  const skipLine = () => {
    while (i < n && text[i] !== "\n") i++;
    i++;
  };
  while (i < n) {
    skipSpace();
    const c = text[i];
    if (c === undefined) break;
    if (c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === "#" || c === ";") {
      skipLine();
      continue;
    }
    if (c === "[") {
      const close = text.indexOf("]", i);
      if (close === -1) break;
      section = parseSectionHeader(text.slice(i + 1, close));
      i = close + 1;
      continue;
    }
    let key = "";
    while (i < n && /[A-Za-z0-9-]/.test(text[i] as string)) key += text[i++];
    if (key === "") {
      skipLine();
      continue;
    }
    skipSpace();
    let value: string | null = null;
    if (text[i] === "=") {
      i++;
      [value, i] = parseValue(text, i);
    } else {
      skipLine();
    }
    entries.push([`${section}.${key.toLowerCase()}`, value]);
  }
  return entries;
}

function parseSectionHeader(header: string): string {
  const quoted = /^\s*([A-Za-z0-9.-]+)\s+"((?:[^"\\]|\\.)*)"\s*$/.exec(header);
  if (quoted) {
    const sub = (quoted[2] as string).replace(/\\(.)/g, "$1");
    return `${(quoted[1] as string).toLowerCase()}.${sub}`;
  }
  // [section.subsection], the old form: the subsection is lower-cased too.
  return header.trim().toLowerCase();
}

/** A value: quotes, escapes, continuations and comments, as git's parse_value. */
function parseValue(text: string, start: number): [string, number] {
  let i = start;
  let out = "";
  let pendingSpace = "";
  let quoted = false;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "\n") {
      i++;
      break;
    }
    if (!quoted && (c === "#" || c === ";")) {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (!quoted && (c === " " || c === "\t" || c === "\r")) {
      if (out !== "") pendingSpace += c === "\r" ? "" : c;
      i++;
      continue;
    }
    out += pendingSpace;
    pendingSpace = "";
    if (c === "\\") {
      const next = text[i + 1];
      i += 2;
      if (next === "\n") continue; // continuation
      if (next === "\r" && text[i] === "\n") {
        i++;
        continue;
      }
      if (next === "n") out += "\n";
      else if (next === "t") out += "\t";
      else if (next === "b") out = out.slice(0, -1);
      else if (next === "\\" || next === '"') out += next;
      continue;
    }
    if (c === '"') {
      quoted = !quoted;
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return [out, i];
}

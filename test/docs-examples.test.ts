/**
 * Every example in README.md and docs/*.md, run as written, so that none can rot.
 *
 * - ```ts: written to a temporary project whose `node_modules/freshfs` links to this repository
 *   (package.json's `exports` serve dist/, which `npm test` builds first), type-checked against
 *   the published declarations, then run with tsx. A `// => text` comment asserts a line the
 *   example prints, in order.
 * - ```sh: each command run by bash, `freshfs` on the PATH as the built CLI; it must exit 0,
 *   and a `# => text` line after it asserts a line it prints. Set-up commands (`npm ...`,
 *   `git ...`) cannot run inside a test: each must be a command `.ci/run` runs, so CI proves it.
 *   `claude mcp add NAME -- COMMAND...` starts COMMAND as an MCP server and lists its tools.
 * - ```json: an MCP client configuration; each server it names is started and asked for its
 *   tools over the SDK's client. `/path/to/freshfs` stands for this checkout and
 *   `/path/to/your/project` for the example's directory.
 * - A ```text block right after an example is all it prints (an sh block: its last command).
 *
 * Each example runs in a fresh copy of a fixture (FIXTURES below): `project` unless the line
 * above the block says `<!-- example: fixture NAME -->`. A block that must not run says
 * `<!-- example: skip REASON -->`; those are counted (SKIPPED). The pages (and RELIABILITY.md)
 * must link to files and headings that exist, name in backticks only files that exist (under
 * src/, test/, bench/ or stress/, in the repository or the sample project), and cite no
 * document that is not in the repository.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Tree, tempTree } from "./helpers/fs.js";
import { isolatedGitEnv, runGit } from "./helpers/git.js";
import { type CodeBlock, codeBlocks, headingAnchors, relativeLinks } from "./helpers/markdown.js";
import { toolsOf } from "./helpers/mcp.js";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const PAGES = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
const CHECKED_PAGES = [...PAGES, "RELIABILITY.md"];

/** The blocks marked `skip`, each with its reason on the page; adding one is a decision. */
const SKIPPED = 0;

/** npm's report flags, which change nothing that is installed: CI may add them to a command. */
const QUIET_FLAGS = new Set(["--no-audit", "--no-fund"]);

const EXAMPLE_TIMEOUT_MS = 30_000;

interface Fixture {
  /** A git repository (`git init`), so that `.gitignore` applies as it does in a clone. */
  readonly git: boolean;
  readonly files: Tree;
}

const APP_TS = `import { retry } from "./util/retry.js";

// TODO(ana): read the count from the config
const retries = 3;

export function start(): Promise<void> {
  return retry(connect, retries);
}

async function connect(): Promise<void> {}
`;

const RETRY_TS = `export async function retry(run: () => Promise<void>, times: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= times) throw error;
    }
  }
}
`;

const FIXTURES: Record<string, Fixture> = {
  /** The sample project README.md describes. */
  project: {
    git: true,
    files: {
      ".gitignore": "dist/\n*.log\n",
      "src/app.ts": APP_TS,
      "src/util/retry.ts": RETRY_TS,
      "test/app.test.ts": 'import { start } from "../src/app.js";\n\nawait start();\n',
      "dist/app.js": "export {};\n",
      "debug.log": "connecting\n",
    },
  },
};

const blocks: CodeBlock[] = PAGES.flatMap((page) =>
  codeBlocks(page, readFileSync(join(REPO, page), "utf8")),
);
const examples = blocks.filter((block) => block.lang !== "text" && block.marker?.kind !== "skip");
const tsExamples = examples.filter((block) => block.lang === "ts");

function nameOf(block: CodeBlock): string {
  return `${block.page}:${block.line} (${block.lang})`;
}

function fixtureOf(block: CodeBlock): Fixture {
  const name = block.marker?.kind === "fixture" ? block.marker.name : "project";
  const fixture = FIXTURES[name];
  if (!fixture) throw new Error(`${nameOf(block)}: no fixture named "${name}"`);
  return fixture;
}

/** The temporary project the ts examples are files of, and the `freshfs` command's directory. */
let project = "";
let home = "";
/** tsc's verdict on every ts example at once, per example file. */
const typeErrors = new Map<string, string[]>();

function exampleFile(block: CodeBlock): string {
  return join(project, "examples", `${block.page.replace(/\W/g, "_")}_${block.line}.ts`);
}

beforeAll(async () => {
  if (!existsSync(join(REPO, "dist/index.js"))) {
    throw new Error("dist/ is missing: run `npm run build` first (`npm test` does).");
  }
  project = await realpath(await mkdtemp(join(tmpdir(), "freshfs-docs-")));
  home = join(project, "home");
  await mkdir(join(project, "node_modules"), { recursive: true });
  await mkdir(join(project, "examples"));
  await mkdir(join(project, "bin"));
  await mkdir(home);
  // A runtime directory of the examples' own: a daemon an example starts is theirs.
  await mkdir(join(project, "run"), { mode: 0o700 });
  await symlink(REPO, join(project, "node_modules/freshfs"));
  await symlink(join(REPO, "node_modules/@types"), join(project, "node_modules/@types"));
  await writeFile(join(project, "package.json"), '{ "type": "module" }\n');
  await writeFile(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
      },
      include: ["examples/*.ts"],
    }),
  );
  // As `npm link` makes it: a link to the command the package ships (the relay, then Node).
  await symlink(join(REPO, "bin/freshfs"), join(project, "bin/freshfs"));
  for (const block of tsExamples) await writeFile(exampleFile(block), block.code);
  if (tsExamples.length > 0) {
    const tsc = spawnSync(
      process.execPath,
      [join(REPO, "node_modules/typescript/bin/tsc"), "-p", ".", "--pretty", "false"],
      { cwd: project, encoding: "utf8" },
    );
    for (const line of tsc.stdout.split("\n")) {
      const at = /^(examples\/[^(]+)\(/.exec(line);
      if (!at?.[1]) continue;
      const file = join(project, at[1]);
      typeErrors.set(file, [...(typeErrors.get(file) ?? []), line]);
    }
    if (tsc.status !== 0 && typeErrors.size === 0) throw new Error(`tsc failed:\n${tsc.stdout}`);
  }
}, 120_000);

afterAll(async () => {
  if (!project) return;
  // A daemon an example left running stops with the examples.
  spawnSync(process.execPath, [join(REPO, "dist/cli/main.js"), "daemon", "stop"], {
    env: environment(),
    stdio: "ignore",
  });
  await rm(project, { recursive: true, force: true });
});

/** A fresh copy of the block's fixture; returns its directory. */
async function treeFor(block: CodeBlock): Promise<string> {
  const fixture = fixtureOf(block);
  const dir = await tempTree(fixture.files);
  if (fixture.git) {
    const init = await runGit(["init", "-q"], { cwd: dir, home });
    if (init.status !== 0) throw new Error(`git init failed: ${init.stderr}`);
  }
  return dir;
}

function environment(): NodeJS.ProcessEnv {
  const env = isolatedGitEnv(home);
  env.PATH = [join(project, "bin"), dirname(process.execPath), env.PATH].join(":");
  env.FRESHFS_RUNTIME_DIR = join(project, "run");
  return env;
}

/** Each `expected` line is a line of `stdout`, in that order. */
function expectLines(stdout: string, expected: readonly string[], where: string): void {
  const printed = stdout.split("\n").map((line) => line.trimEnd());
  let from = 0;
  for (const line of expected) {
    const at = printed.indexOf(line.trimEnd(), from);
    expect(at, `${where}: "${line}" not printed (in order); it printed:\n${stdout}`).not.toBe(-1);
    from = at + 1;
  }
}

function expectOutput(block: CodeBlock, stdout: string): void {
  if (block.output === undefined) return;
  expect(stdout.trimEnd(), `${nameOf(block)}: the output shown after it`).toBe(
    block.output.trimEnd(),
  );
}

/** Paths in the docs that stand for this checkout and for the user's project. */
function placeholders(text: string, dir: string): string {
  return text.replaceAll("/path/to/freshfs", REPO).replaceAll("/path/to/your/project", dir);
}

/** Starts an MCP server as a client would, and lists its tools over the SDK's client. */
async function expectMcpServer(command: string, args: readonly string[], dir: string) {
  const transport = new StdioClientTransport({
    command: command === "node" ? process.execPath : command,
    args: args.map((arg) => placeholders(arg, dir)),
    cwd: dir,
    env: environment() as Record<string, string>,
    stderr: "pipe",
  });
  const client = new Client({ name: "freshfs-docs", version: "1.0.0" });
  await client.connect(transport);
  try {
    const names = [...(await toolsOf(client)).keys()];
    for (const name of ["read", "edit", "write", "grep"]) expect(names).toContain(name);
  } finally {
    await client.close();
  }
}

async function runTs(block: CodeBlock): Promise<void> {
  const file = exampleFile(block);
  expect(typeErrors.get(file) ?? [], `${nameOf(block)} type-checks`).toEqual([]);
  for (const source of block.code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gms)) {
    const specifier = source[1] ?? "";
    expect(
      specifier === "freshfs" || specifier.startsWith("node:"),
      `${nameOf(block)} imports the public API ("freshfs") or Node's, not "${specifier}"`,
    ).toBe(true);
  }
  const dir = await treeFor(block);
  const run = spawnSync(process.execPath, [join(REPO, "node_modules/tsx/dist/cli.mjs"), file], {
    cwd: dir,
    encoding: "utf8",
    env: environment(),
    timeout: EXAMPLE_TIMEOUT_MS,
  });
  expect(run.status, `${nameOf(block)} failed:\n${run.stderr}${run.stdout}`).toBe(0);
  const expected = [...block.code.matchAll(/\/\/ => (.*)$/gm)].map((line) => line[1] ?? "");
  expectLines(run.stdout, expected, nameOf(block));
  expectOutput(block, run.stdout);
}

interface Command {
  readonly text: string;
  /** The `# => ...` lines after it. */
  readonly expected: string[];
}

function commandsOf(block: CodeBlock): Command[] {
  const commands: Command[] = [];
  let pending = "";
  for (const raw of block.code.split("\n")) {
    const line = pending + raw;
    pending = "";
    if (line.endsWith("\\")) {
      pending = `${line.slice(0, -1)} `;
      continue;
    }
    const expected = /^\s*# => (.*)$/.exec(line);
    if (expected) {
      const last = commands.at(-1);
      if (!last) throw new Error(`${nameOf(block)}: "# =>" before any command`);
      last.expected.push(expected[1] ?? "");
    } else if (line.trim() !== "" && !line.trim().startsWith("#")) {
      commands.push({ text: line.trim(), expected: [] });
    }
  }
  return commands;
}

/** `.ci/run`'s commands, each as its words without npm's report flags. */
function ciCommands(): string[] {
  return readFileSync(join(REPO, ".ci/run"), "utf8")
    .split("\n")
    .map((line) =>
      line
        .trim()
        .split(/\s+/)
        .filter((word) => !QUIET_FLAGS.has(word))
        .join(" "),
    );
}

/** The command's words before a `#` comment (set-up commands hold no quoted `#`). */
function wordsOf(command: string): string[] {
  return (command.split("#")[0] ?? "").trim().split(/\s+/);
}

async function runSh(block: CodeBlock): Promise<void> {
  const dir = await treeFor(block);
  let stdout = "";
  for (const command of commandsOf(block)) {
    const words = wordsOf(command.text);
    const where = `${nameOf(block)}: ${command.text}`;
    if (words[0] === "npm" || words[0] === "git") {
      expect(ciCommands(), `${where} is a command .ci/run runs`).toContain(words.join(" "));
      continue;
    }
    if (words[0] === "claude" && words[1] === "mcp" && words[2] === "add") {
      expect(words, `${where} names its server after --`).toContain("--");
      const server = words.slice(words.indexOf("--") + 1);
      await expectMcpServer(server[0] ?? "", server.slice(1), dir);
      continue;
    }
    const run = spawnSync("bash", ["-c", command.text], {
      cwd: dir,
      encoding: "utf8",
      env: environment(),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: EXAMPLE_TIMEOUT_MS,
    });
    expect(run.status, `${where} failed:\n${run.stderr}${run.stdout}`).toBe(0);
    expectLines(run.stdout, command.expected, where);
    stdout = run.stdout;
  }
  expectOutput(block, stdout);
}

async function runJson(block: CodeBlock): Promise<void> {
  const config = JSON.parse(block.code) as {
    mcpServers?: Record<string, { command: string; args?: string[] }>;
  };
  const servers = Object.values(config.mcpServers ?? {});
  expect(
    servers.length,
    `${nameOf(block)} is an MCP configuration naming a server`,
  ).toBeGreaterThan(0);
  const dir = await treeFor(block);
  for (const server of servers) await expectMcpServer(server.command, server.args ?? [], dir);
}

describe("the docs' examples", () => {
  it("are fenced as ts, sh, json or text, and few are skipped", () => {
    for (const block of blocks) {
      expect(["ts", "sh", "json", "text"], `${nameOf(block)}: its language`).toContain(block.lang);
    }
    const skipped = blocks.filter((block) => block.marker?.kind === "skip");
    expect(skipped.map(nameOf), "blocks marked skip (SKIPPED)").toHaveLength(SKIPPED);
    expect(examples.length).toBeGreaterThan(0);
  });

  it.each(examples.map((block) => [nameOf(block), block] as const))(
    "%s runs as written",
    async (_name, block) => {
      if (block.lang === "ts") await runTs(block);
      else if (block.lang === "sh") await runSh(block);
      else await runJson(block);
    },
  );
});

/** A file or directory of the repository; a `*` in the last name stands for any characters. */
function existsInRepo(path: string): boolean {
  if (!path.includes("*")) return existsSync(join(REPO, path));
  const dir = join(REPO, dirname(path));
  const name = new RegExp(`^${basename(path).split("*").map(escapeRegExp).join(".*")}$`);
  return existsSync(dir) && readdirSync(dir).some((entry) => name.test(entry));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("what the docs point at", () => {
  it.each(CHECKED_PAGES)("%s links to files and headings that exist", (page) => {
    for (const target of relativeLinks(readFileSync(join(REPO, page), "utf8"))) {
      const [path = "", anchor] = target.split("#");
      const file = path === "" ? join(REPO, page) : join(REPO, dirname(page), path);
      expect(existsSync(file), `${page} links to ${target}`).toBe(true);
      if (anchor !== undefined && file.endsWith(".md")) {
        expect(
          [...headingAnchors(readFileSync(file, "utf8"))],
          `${page} links to ${target}`,
        ).toContain(anchor);
      }
    }
  });

  it.each(CHECKED_PAGES)("%s names files of the repository or of the sample project", (page) => {
    const text = readFileSync(join(REPO, page), "utf8");
    for (const named of text.matchAll(/`((?:src|test|bench|stress)\/[^`\s]*)`/g)) {
      const path = named[1] ?? "";
      const inSample = path in (FIXTURES.project?.files ?? {});
      expect(inSample || existsInRepo(path), `${page} names ${path}`).toBe(true);
    }
  });

  it.each(CHECKED_PAGES)("%s cites no document outside the repository", (page) => {
    const text = readFileSync(join(REPO, page), "utf8");
    expect(text).not.toMatch(/\bcontract \d|\bseeds? 0\d\d|\bthe seed's\b/i);
  });
});

/**
 * Test helper: a second process running the built library (`npm run build`), for claims about
 * other processes. The script is an ES module body with `lib` (the library) and `args` in scope.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

const DIST = new URL("../../dist/index.js", import.meta.url).href;

export interface LibChild {
  readonly process: ChildProcess;
  /** Resolves with the next line the child prints. */
  readonly line: () => Promise<string>;
  /** Resolves once the child has exited, with its exit code. */
  readonly exited: Promise<number | null>;
}

export interface LibChildOptions {
  /** Variables set over this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

export function libChild(
  script: string,
  args: readonly string[] = [],
  options: LibChildOptions = {},
): LibChild {
  const body = `const lib = await import(${JSON.stringify(DIST)});\nconst args = ${JSON.stringify(args)};\n${script}`;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", body], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...options.env },
  });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queue.push(line);
  });
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return {
    process: proc,
    line: () => {
      const ready = queue.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.push(resolve));
    },
    exited,
  };
}

/** A child that takes the lock of `file`, prints `held`, and keeps it until killed. */
export function lockHolder(file: string, options: LibChildOptions = {}): LibChild {
  return libChild(
    `await lib.withPathLock(args[0], async () => {
       process.stdout.write("held\\n");
       // Alive until killed (a pending promise alone would let the process exit).
       await new Promise(() => setInterval(() => {}, 1000));
     }, { operation: "edit" });`,
    [file],
    options,
  );
}

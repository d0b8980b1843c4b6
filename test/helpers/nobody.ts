/**
 * Running the built library as an unprivileged user: root reads every directory, so the tests
 * of permission errors run a child process as `nobody` (uid 65534) through `setpriv`. The
 * child imports a world-readable copy of `dist/` (and of the runtime dependencies), since the
 * checkout may sit in a private
 * directory (a CI clone in a `mktemp -d`, say).
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";

const NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"];

/** Whether this process may drop to nobody (it runs as root and `setpriv` works). */
export const canRunAsNobody =
  process.getuid?.() === 0 && spawnSync("setpriv", [...NOBODY, "true"]).status === 0;

let copy: string | undefined;

function openToAll(path: string): void {
  chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  if (statSync(path).isDirectory())
    for (const name of readdirSync(path)) openToAll(join(path, name));
}

/** The URL of `index.js` in a world-readable copy of the built library, made once per file. */
function entry(): string {
  if (!copy) {
    copy = mkdtempSync(join(tmpdir(), "freshfs-dist-"));
    const repo = new URL("../../", import.meta.url);
    cpSync(fileURLToPath(new URL("dist", repo)), join(copy, "dist"), { recursive: true });
    // The native core, which reads directories and searches where it loads (as it does here).
    cpSync(fileURLToPath(new URL("prebuilds", repo)), join(copy, "prebuilds"), { recursive: true });
    // The runtime dependencies too, where the copy resolves them.
    const manifest = JSON.parse(readFileSync(new URL("package.json", repo), "utf8"));
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      cpSync(
        fileURLToPath(new URL(`node_modules/${name}`, repo)),
        join(copy, "node_modules", name),
        {
          recursive: true,
        },
      );
    }
    writeFileSync(join(copy, "package.json"), '{ "type": "module" }\n');
    openToAll(copy);
  }
  return new URL(`file://${join(copy, "dist", "index.js")}`).href;
}

afterAll(() => {
  if (copy) spawnSync("rm", ["-rf", copy]);
});

/** Runs an ES module script as nobody; `ENTRY` in it stands for the library's URL. */
export function runAsNobody(script: string): {
  stdout: string;
  stderr: string;
  status: number | null;
} {
  // Not the test file's runtime directory (test/setup.ts): it is root's, and nobody's own is
  // its default one.
  const { FRESHFS_RUNTIME_DIR: _ours, ...env } = process.env;
  const run = spawnSync(
    "setpriv",
    [...NOBODY, process.execPath, "--input-type=module", "-e", script.replaceAll("ENTRY", entry())],
    { encoding: "utf8", env },
  );
  return { stdout: run.stdout, stderr: run.stderr, status: run.status };
}

/** The package's version, from package.json. Depends on nothing. */
import { readFileSync } from "node:fs";

export function packageVersion(): string {
  // dist/version.js and src/version.ts both sit one level below package.json.
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return String(manifest.version);
}

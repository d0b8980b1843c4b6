// The SHA-256 of what the native core is built from (Cargo.toml, Cargo.lock and src/, in name
// order): built into the addon by scripts/build-native.mjs, and compared with the committed
// addon's by test/native/core.test.ts, so that an addon built from other sources is caught.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const CRATE = fileURLToPath(new URL("../native/core", import.meta.url));

export function sourceDigest() {
  const hash = createHash("sha256");
  const sources = readdirSync(join(CRATE, "src"))
    .sort()
    .map((name) => `src/${name}`);
  for (const file of ["Cargo.toml", "Cargo.lock", ...sources]) {
    hash.update(`${file}\0`).update(readFileSync(join(CRATE, file)));
  }
  return hash.digest("hex");
}

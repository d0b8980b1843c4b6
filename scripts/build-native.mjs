// Builds the native search core (native/core, Rust) into prebuilds/linux-x64/freshfs-core.node,
// the addon the package ships and src/native/core.ts loads: `npm run build:native`, on Linux x64
// with cargo, offline, from the crates Debian packages (native/core/.cargo/config.toml):
//   apt-get install cargo librust-grep-searcher-dev librust-grep-regex-dev \
//     librust-grep-matcher-dev librust-regex-dev librust-regex-automata-dev \
//     librust-regex-syntax-dev librust-memchr-dev librust-libc-dev
// The sources' SHA-256 is built into the addon (scripts/native-digest.mjs), so that a test can tell an
// addon built from other sources. `--out PATH` builds elsewhere (CI checks that the sources
// build, without touching the committed addon).

import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CRATE as crate, sourceDigest } from "./native-digest.mjs";

if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(`build:native builds for Linux x64 only, not ${process.platform} ${process.arch}`);
  process.exit(1);
}
const at = process.argv.indexOf("--out");
const out =
  at === -1
    ? fileURLToPath(new URL("../prebuilds/linux-x64/freshfs-core.node", import.meta.url))
    : process.argv[at + 1];

const digest = sourceDigest();
execFileSync("cargo", ["build", "--release", "--offline", "--locked"], {
  cwd: crate,
  stdio: "inherit",
  env: { ...process.env, FRESHFS_CORE_SOURCE_DIGEST: digest },
});
mkdirSync(dirname(out), { recursive: true });
copyFileSync(join(crate, "target", "release", "libfreshfs_core.so"), out);
console.log(`built ${out} from native/core ${digest.slice(0, 12)}`);

// Builds the native relay (native/relay/relay.c) into prebuilds/linux-x64/freshfs-relay, the
// binary the package ships and bin/freshfs runs: `npm run build:relay`, on Linux x64 with a C
// compiler (`cc`). The source's SHA-256 is built into the binary, so that a test can tell a
// binary built from another version of the source (test/cli/relay.test.ts). `--out PATH` builds
// elsewhere (CI checks that the source builds, warnings as errors, without touching the binary).

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(`build:relay builds for Linux x64 only, not ${process.platform} ${process.arch}`);
  process.exit(1);
}
const source = fileURLToPath(new URL("../native/relay/relay.c", import.meta.url));
const at = process.argv.indexOf("--out");
const out =
  at === -1
    ? fileURLToPath(new URL("../prebuilds/linux-x64/freshfs-relay", import.meta.url))
    : process.argv[at + 1];
const digest = createHash("sha256").update(readFileSync(source)).digest("hex");
mkdirSync(dirname(out), { recursive: true });
// Static: no C library to match at run time (a dynamic build needs the glibc it was built
// against or newer, 2.34 here), and no dynamic loader to start.
const flags = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-s", "-static"];
execFileSync("cc", [...flags, `-DRELAY_SOURCE_DIGEST="${digest}"`, "-o", out, source], {
  stdio: "inherit",
});
console.log(`built ${out} from relay.c ${digest.slice(0, 12)}`);

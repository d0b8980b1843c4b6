// Writes dist/build.json after `tsc`: a fresh id for each build, so that a client never talks to
// a daemon of another build (src/daemon/protocol.ts). Run by `npm run build`.
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const build = `${version}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
writeFileSync(new URL("../dist/build.json", import.meta.url), `${JSON.stringify({ build })}\n`);

/**
 * `npm run stress -- [suite ...]`: the long reliability runs (issue 7), not part of CI. Each
 * suite prints Markdown with what it tried and what it found, for RELIABILITY.md.
 */
import { parseArgs } from "node:util";
import { machine } from "../bench/lib/measure.js";

type Suite = () => Promise<string>;

// Suites register here as they land; each lives in its own file under stress/.
const SUITES: Record<string, () => Promise<Suite>> = {};

const { positionals } = parseArgs({ allowPositionals: true });
const unknown = positionals.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  console.error(
    `stress: unknown suite ${unknown.join(", ")}; known: ${Object.keys(SUITES).join(", ")}`,
  );
  process.exit(2);
}
const chosen = positionals.length > 0 ? positionals : Object.keys(SUITES);
console.log(`Machine: ${machine()}\n`);
for (const name of chosen) {
  const load = SUITES[name] as () => Promise<Suite>;
  const started = performance.now();
  console.log(`## ${name}\n`);
  console.log(await (await load())());
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

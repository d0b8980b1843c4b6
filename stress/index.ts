/**
 * `npm run stress -- [suite ...]`: the long reliability runs (issue 7), not part of CI. Each
 * suite prints Markdown with what it tried and what it found, for RELIABILITY.md.
 */
import { parseArgs } from "node:util";
import { machine } from "../bench/lib/measure.js";

/** Each suite is `stress/<name>.ts`, exporting `run(): Promise<string>`. */
const SUITES = [
  "lost-updates",
  "lost-updates-processes",
  "crash",
  "patch-crash",
  "out-of-tree",
  "escapes",
  "hostile",
  "ignore-fuzz",
  "load",
  "mcp-flood",
  "freshness",
  "daemon-kill",
];

const { positionals } = parseArgs({ allowPositionals: true });
const unknown = positionals.filter((name) => !SUITES.includes(name));
if (unknown.length > 0) {
  console.error(`stress: unknown suite ${unknown.join(", ")}; known: ${SUITES.join(", ")}`);
  process.exit(2);
}
const chosen = positionals.length > 0 ? positionals : SUITES;
console.log(`Machine: ${machine()}\n`);
for (const name of chosen) {
  const suite: { run: () => Promise<string> } = await import(`./${name}.js`);
  const started = performance.now();
  console.log(`## ${name}\n`);
  console.log(await suite.run());
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

/**
 * `npm run bench -- [guard] [--quick]`: runs the named benchmarks (all when none is named) and
 * prints Markdown for BENCHMARKS.md.
 */
import { parseArgs } from "node:util";
import { benchGuard } from "./guard.js";
import { machine } from "./lib/measure.js";
import { benchScan } from "./scan.js";
import { benchSearch } from "./search.js";
import { benchTools } from "./tools.js";

const SUITES = {
  guard: benchGuard,
  scan: benchScan,
  search: benchSearch,
  tools: benchTools,
} as const;

const { values, positionals } = parseArgs({
  options: { quick: { type: "boolean", default: false } },
  allowPositionals: true,
});
const unknown = positionals.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  console.error(
    `bench: unknown suite ${unknown.join(", ")}; known: ${Object.keys(SUITES).join(", ")}`,
  );
  process.exit(2);
}
const chosen = (
  positionals.length > 0 ? positionals : Object.keys(SUITES)
) as (keyof typeof SUITES)[];
console.log(
  `Machine: ${machine()}${values.quick ? " (quick mode: numbers are a smoke test only)" : ""}\n`,
);
for (const name of chosen) {
  console.log(`## ${name}\n`);
  console.log(await SUITES[name]({ quick: values.quick }));
  console.log("");
}

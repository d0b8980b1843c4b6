/**
 * The benchmark report, end to end: `npm run bench -- --quick --out DIR` writes the
 * page and one SVG per chart there, states the machine, and names peers that are not installed
 * instead of dropping them. Runs the real script, once with the peers on the PATH (when this
 * machine has them) and once with a PATH that holds only node.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const tsx = join(repo, "node_modules", "tsx", "dist", "cli.mjs");

function quickReport(path: string): { dir: string; page: string; charts: Map<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), "freshfs-bench-report-"));
  execFileSync(process.execPath, [tsx, "bench/index.ts", "--quick", "--out", dir], {
    cwd: repo,
    env: { ...process.env, PATH: path },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 120_000,
  });
  const charts = new Map(
    readdirSync(join(dir, "charts")).map((name) => [
      name,
      readFileSync(join(dir, "charts", name), "utf8"),
    ]),
  );
  return { dir, page: readFileSync(join(dir, "BENCHMARKS.md"), "utf8"), charts };
}

const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

/** A PATH with node only: every peer is missing, git too. */
function barePath(): string {
  const bin = mkdtempSync(join(tmpdir(), "freshfs-bare-path-"));
  cleanup.push(bin);
  symlinkSync(process.execPath, join(bin, "node"));
  return bin;
}

describe("npm run bench -- --quick", () => {
  it("writes the page and a chart per comparison, with the machine, outside the repository", () => {
    const page = join(repo, "BENCHMARKS.md");
    const before = statSync(page).mtimeMs;
    const report = quickReport(process.env.PATH ?? "");
    expect(statSync(page).mtimeMs).toBe(before);
    expect([...report.charts.keys()].sort()).toEqual([
      "fuzzy-speed.svg",
      "fuzzy.svg",
      "glob.svg",
      "grep.svg",
      "guard.svg",
      "linux.svg",
      "live-change.svg",
      "live-glob.svg",
      "scan.svg",
      "tools.svg",
    ]);
    for (const [name, svg] of report.charts) {
      expect(svg.startsWith("<svg"), name).toBe(true);
      expect(report.page).toContain(`(charts/${name})`);
    }
    expect(report.page).toMatch(/Machine: \d+ × .+, \d+ GiB, Node\.js v\d+/);
    expect(report.page).toContain("Quick mode");
    for (const suite of ["guard", "scan", "search", "live", "linux", "tools"]) {
      expect(report.page).toContain(`(\`bench/${suite}.ts\`)`);
    }
    // Medians with the fastest and slowest run beside them.
    expect(report.page).toMatch(/\d+(\.\d+)? (µs|ms) \(\d+(\.\d+)? (µs|ms)–\d+(\.\d+)? (µs|ms)\)/);
    rmSync(report.dir, { recursive: true, force: true });
  }, 180_000);

  it("names every missing peer on the page, in the tables and in the charts", () => {
    const report = quickReport(barePath());
    expect(report.page).toMatch(/\*\*Missing peers\*\*.*`rg`.*`fdfind`.*`fzf`/);
    expect(report.page).toContain("| `rg --files` | not installed: not measured | — |");
    expect(report.page).toContain(
      "| `fzf` | not installed: not measured | not installed: not measured |",
    );
    for (const chart of ["grep.svg", "glob.svg", "scan.svg", "fuzzy.svg", "fuzzy-speed.svg"]) {
      expect(report.charts.get(chart), chart).toContain("not installed");
    }
    expect(report.page).toContain(
      "| `git ls-files -co --exclude-standard` | not installed: not measured | — |",
    );
    expect(report.page).toMatch(/\*\*Missing peers\*\*.*`git`/);
    expect(existsSync(join(report.dir, "BENCHMARKS.md"))).toBe(true);
    rmSync(report.dir, { recursive: true, force: true });
  }, 180_000);
});

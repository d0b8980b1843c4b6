import { describe, expect, it } from "vitest";
import { renderChart } from "../../bench/lib/chart.js";
import type { Bar, BarKind, Chart } from "../../bench/lib/chart-types.js";

function bar(label: string, kind: BarKind, median?: number, spread = 0.1): Bar {
  return {
    label,
    kind,
    timing:
      median === undefined
        ? undefined
        : { median, min: median * (1 - spread), max: median * (1 + spread), runs: 5 },
  };
}

function chart(groups: Chart["groups"], unit: Chart["unit"] = "time"): Chart {
  return { name: "sample", title: "Sample chart", subtitle: "Shorter is better", unit, groups };
}

const grep = chart([
  {
    label: "rare literal `BadRequestException`",
    bars: [bar("freshfs", "freshfs", 900), bar("rg", "peer", 12_000), bar("ag", "peer")],
  },
  {
    label: "regex `\\w+Expression\\(`",
    bars: [bar("freshfs", "freshfs", 1500), bar("rg", "peer", 14_000), bar("git grep", "peer", 30)],
  },
]);

/**
 * Tokenises the whole document into tags and text, so a stray `<`, an unquoted attribute or an
 * unbalanced element fails; an XML parser would be a dependency for one test.
 */
function expectWellFormed(svg: string): void {
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|[^<>]+/y;
  const open: string[] = [];
  while (token.lastIndex < svg.length) {
    const match = token.exec(svg);
    if (match === null) break;
    const [, closing, name, , selfClosing] = match;
    if (name === undefined || selfClosing === "/") continue;
    if (closing === "/") expect(open.pop()).toBe(name);
    else open.push(name);
  }
  expect(token.lastIndex).toBe(svg.length);
  expect(open).toEqual([]);
  expect(svg).not.toMatch(/&(?!(?:amp|lt|gt|quot|apos);)/);
}

function barWidths(svg: string): number[] {
  return [...svg.matchAll(/<rect class="bar"[^>]*\bwidth="([\d.]+)"/g)].map((m) => Number(m[1]));
}

function tickLabels(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*class="tick"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] ?? "");
}

describe("renderChart", () => {
  it("renders a well-formed standalone SVG with one bar per measured tool", () => {
    const svg = renderChart(grep);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="760" height="')).toBe(
      true,
    );
    expect(svg).toMatch(/viewBox="0 0 760 \d+"/);
    expect(svg).toContain("<title>Sample chart</title>");
    expectWellFormed(svg);
    expect(barWidths(svg)).toHaveLength(5);
  });

  it("keeps a missing peer as a row saying it was not measured", () => {
    const svg = renderChart(grep);
    expect(svg).toMatch(
      />ag<\/text>\n<text[^>]*font-style="italic"[^>]*>not installed: not measured</,
    );
  });

  it("escapes XML special characters and strips Markdown backticks", () => {
    const svg = renderChart(
      chart([{ label: "`{README,readme}` & co", bars: [bar(`a<b & "c" 'd'`, "peer", 10)] }]),
    );
    expectWellFormed(svg);
    expect(svg).toContain("a&lt;b &amp; &quot;c&quot; &apos;d&apos;");
    expect(svg).toContain("{README,readme} &amp; co");
    expect(svg).not.toContain("a<b");
    expect(svg).not.toContain("`");
  });

  it("truncates labels too long for the label column", () => {
    const svg = renderChart(chart([{ label: "g", bars: [bar("x".repeat(50), "peer", 10)] }]));
    expect(svg).toContain(`>${"x".repeat(33)}…</text>`);
    expect(svg).not.toContain("x".repeat(34));
  });

  it("uses a log scale over whole decades when the medians span more than 20×", () => {
    expect(tickLabels(renderChart(grep))).toEqual(["10 µs", "100 µs", "1 ms", "10 ms", "100 ms"]);
  });

  it("uses a linear scale from zero with 1-2-5 steps otherwise", () => {
    const svg = renderChart(
      chart([{ label: "g", bars: [bar("freshfs", "freshfs", 100), bar("rg", "peer", 200)] }]),
    );
    expect(tickLabels(svg)).toEqual(["0", "50 µs", "100 µs", "150 µs", "200 µs", "250 µs"]);
  });

  it("labels durations with how much faster or slower freshfs is than each other tool", () => {
    const svg = renderChart(
      chart([
        {
          label: "g",
          bars: [bar("freshfs", "freshfs", 100), bar("rg", "peer", 200), bar("cat", "floor", 5)],
        },
        { label: "no freshfs", bars: [bar("rg", "peer", 300)] },
      ]),
    );
    expect(svg).toContain(">100.0 µs</text>");
    expect(svg).toContain(">200.0 µs · freshfs 2.00× faster</text>");
    expect(svg).toContain(">5.00 µs · freshfs 20× slower</text>");
    expect(svg).toContain(">300.0 µs</text>");
    expect(svg.match(/<path class="whisker"/g)).toHaveLength(4);
  });

  it("writes factors of 10 and over without decimals, and equal times as 1.00× faster", () => {
    const svg = renderChart(
      chart([
        {
          label: "g",
          bars: [bar("freshfs", "freshfs", 10), bar("rg", "peer", 1000), bar("fd", "peer", 10)],
        },
      ]),
    );
    expect(svg).toContain("· freshfs 100× faster");
    expect(svg).toContain("· freshfs 1.00× faster");
  });

  it("draws score charts on a 0..1 axis with three-decimal scores and no whiskers", () => {
    const svg = renderChart(
      chart(
        [
          {
            label: "fuzzy",
            bars: [bar("freshfs", "freshfs", 0.8125, 0), bar("fzf", "peer", 0.5, 0)],
          },
        ],
        "score",
      ),
    );
    expectWellFormed(svg);
    expect(tickLabels(svg)).toEqual(["0", "0.25", "0.5", "0.75", "1"]);
    expect(svg).toContain(">0.813</text>");
    expect(svg).toContain(">0.500</text>");
    expect(svg).not.toContain("whisker");
    expect(svg).not.toContain("×");
  });

  it("shows in the legend only the kinds the chart has", () => {
    const svg = renderChart(grep);
    expect(svg.match(/<rect[^>]*width="10" height="10"/g)).toHaveLength(2);
    expect(svg).toContain(">peer</text>");
    expect(svg).not.toContain("floor (the physical limit)");
  });

  it("is deterministic", () => {
    expect(renderChart(grep)).toBe(renderChart(structuredClone(grep)));
  });

  it("rounds coordinates to one decimal", () => {
    const numbers = renderChart(grep).match(/="-?\d+\.\d+"/g) ?? [];
    for (const n of numbers) expect(n).toMatch(/^="-?\d+\.\d"$/);
  });

  it.each([
    ["linear", [100, 120, 80, 150, 90]],
    ["log", [30, 5000, 400, 12, 90_000]],
  ])("makes bar lengths monotonic in the medians (%s)", (_, medians) => {
    const svg = renderChart(
      chart([{ label: "g", bars: medians.map((m, i) => bar(`tool ${i}`, "peer", m)) }]),
    );
    const widths = barWidths(svg);
    const byMedian = medians.map((m, i) => [m, widths[i] ?? Number.NaN] as const);
    byMedian.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < byMedian.length; i++) {
      expect(byMedian[i]?.[1]).toBeGreaterThan(byMedian[i - 1]?.[1] ?? Number.POSITIVE_INFINITY);
    }
  });

  it("keeps every value label inside the 760px width", () => {
    const svg = renderChart(
      chart([
        {
          label: "g",
          bars: [bar("freshfs", "freshfs", 1), bar("slow", "peer", 123_456, 0.5)],
        },
      ]),
    );
    const labels = [...svg.matchAll(/<text x="([\d.]+)"[^>]*>([^<]*× (?:faster|slower))<\/text>/g)];
    expect(labels).toHaveLength(1);
    for (const [, x, content = ""] of labels) {
      // 6.5px per character is generous for 12px sans-serif digits.
      expect(Number(x) + content.length * 6.5).toBeLessThanOrEqual(760);
    }
  });
});

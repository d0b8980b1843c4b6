/**
 * Draws a benchmark chart as a standalone SVG, by hand. A charting library such as vega would be
 * a heavy dependency for a few bar charts, and the result has to be a static SVG file that a
 * README can show on GitHub, which blocks scripts: string templates are all it takes.
 */
import type { Bar, BarGroup, BarKind, Chart } from "./chart-types.js";
import { formatUs, type Timing, times } from "./measure.js";

const WIDTH = 760;
const PAD = 16;
/** Enough for the longest tool names ("freshfs (listing cached)") with room to spare. */
const LABEL_CHARS = 34;
/**
 * Average glyph width of a 12px sans-serif, slightly generous: the SVG cannot measure its text,
 * so every layout decision uses this estimate and errs towards more room.
 */
const CHAR_WIDTH = 6.5;
const PLOT_LEFT = PAD + LABEL_CHARS * CHAR_WIDTH + 12;
const PLOT_TOP = 64;
const GROUP_HEAD = 22;
const ROW = 22;
const GROUP_GAP = 8;
const FONT = "system-ui, -apple-system, Segoe UI, sans-serif";
const COLOURS: Record<BarKind, string> = { freshfs: "#2563eb", peer: "#9ca3af", floor: "#4b5563" };
const LEGEND: Record<BarKind, string> = {
  freshfs: "freshfs",
  peer: "peer",
  floor: "floor (the physical limit)",
};

/** Where a value falls along the plot (0 at the left edge, 1 at the right) and its gridlines. */
interface Axis {
  position(value: number): number;
  ticks: { at: number; label: string }[];
}

export function renderChart(chart: Chart): string {
  const axis = chart.unit === "score" ? scoreAxis() : timeAxis(chart);
  const values = chart.groups.map((group) =>
    group.bars.map((bar) => valueLabel(chart, group, bar)),
  );
  // Value labels sit after the bar ends, so the longest one decides where the plot must stop.
  const room = Math.max(40, ...values.flat().map(textWidth)) + 10;
  const right = WIDTH - PAD - room;
  const x = (value: number) => PLOT_LEFT + axis.position(value) * (right - PLOT_LEFT);

  const rows: string[] = [];
  let y = PLOT_TOP;
  for (const [g, group] of chart.groups.entries()) {
    rows.push(text(PAD, y + 15, group.label, 'font-size="13" font-weight="600" fill="#111827"'));
    y += GROUP_HEAD;
    for (const [b, bar] of group.bars.entries()) {
      rows.push(...drawBar(bar, values[g]?.[b] ?? "", y, x, chart.unit === "time"));
      y += ROW;
    }
    y += GROUP_GAP;
  }
  const bottom = y;

  // Log axes over many decades crowd their labels: label every n-th gridline only.
  const spacing = (right - PLOT_LEFT) / Math.max(1, axis.ticks.length - 1);
  const every = Math.ceil((Math.max(...axis.ticks.map((t) => textWidth(t.label))) + 8) / spacing);
  const grid = axis.ticks.flatMap((tick, i) => {
    const at = PLOT_LEFT + tick.at * (right - PLOT_LEFT);
    const line = `<line x1="${r(at)}" y1="${PLOT_TOP}" x2="${r(at)}" y2="${bottom}" stroke="#e5e7eb"/>`;
    if (i % every !== 0) return [line];
    const attrs = 'class="tick" font-size="12" fill="#6b7280" text-anchor="middle"';
    return [line, text(at, bottom + 14, tick.label, attrs)];
  });

  const legend: string[] = [];
  let legendX = PAD;
  const kinds = new Set(chart.groups.flatMap((group) => group.bars.map((bar) => bar.kind)));
  for (const kind of ["freshfs", "peer", "floor"] as const) {
    if (!kinds.has(kind)) continue;
    legend.push(
      `<rect x="${r(legendX)}" y="${bottom + 30}" width="10" height="10" fill="${COLOURS[kind]}"/>`,
      text(legendX + 14, bottom + 39, LEGEND[kind], 'font-size="12" fill="#374151"'),
    );
    legendX += 14 + textWidth(LEGEND[kind]) + 18;
  }

  const height = bottom + 56;
  return `${[
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}" role="img">`,
    `<title>${escapeXml(plain(chart.title))}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    text(PAD, 28, chart.title, 'font-size="15" font-weight="700" fill="#111827"'),
    text(PAD, 48, chart.subtitle, 'font-size="12" fill="#4b5563"'),
    ...grid,
    ...rows,
    ...legend,
    "</svg>",
  ].join("\n")}\n`;
}

function drawBar(
  bar: Bar,
  value: string,
  top: number,
  x: (value: number) => number,
  whiskers: boolean,
): string[] {
  const middle = top + ROW / 2;
  const label = text(
    PLOT_LEFT - 12,
    middle + 4,
    truncateLabel(bar.label),
    'font-size="12" fill="#374151" text-anchor="end"',
  );
  if (bar.timing === undefined) {
    const attrs = 'class="missing" font-size="12" font-style="italic" fill="#6b7280"';
    return [label, text(PLOT_LEFT, middle + 4, "not installed: not measured", attrs)];
  }
  const { median, min, max } = bar.timing;
  const end = x(median);
  const parts = [
    label,
    `<rect class="bar" x="${r(PLOT_LEFT)}" y="${r(middle - 7)}" width="${r(end - PLOT_LEFT)}" height="14" fill="${COLOURS[bar.kind]}"/>`,
  ];
  let valueX = end;
  if (whiskers) {
    const [from, to] = [r(x(min)), r(x(max))];
    const d = `M${from} ${r(middle)}H${to}M${from} ${r(middle - 4)}V${r(middle + 4)}M${to} ${r(middle - 4)}V${r(middle + 4)}`;
    parts.push(`<path class="whisker" d="${d}" stroke="#111827" stroke-width="1" fill="none"/>`);
    valueX = Math.max(end, to);
  }
  parts.push(text(valueX + 6, middle + 4, value, 'font-size="12" fill="#111827"'));
  return parts;
}

function valueLabel(chart: Chart, group: BarGroup, bar: Bar): string {
  if (bar.timing === undefined) return "";
  if (chart.unit === "score") return bar.timing.median.toFixed(3);
  const reference = group.bars.find((other) => other.kind === "freshfs")?.timing;
  if (bar.kind === "freshfs" || reference === undefined) return formatUs(bar.timing.median);
  // Said as "faster" or "slower" rather than a bare quotient, whose direction a reader must
  // guess (the tables print "rg ÷ freshfs" for glob and "freshfs ÷ rg" for grep).
  const ratio = reference.median / bar.timing.median;
  const factor = ratio <= 1 ? 1 / ratio : ratio;
  return `${formatUs(bar.timing.median)} · freshfs ${times(factor)} ${ratio <= 1 ? "faster" : "slower"}`;
}

function scoreAxis(): Axis {
  return {
    position: (value) => value,
    ticks: [0, 0.25, 0.5, 0.75, 1].map((at) => ({ at, label: String(at) })),
  };
}

/**
 * Linear from zero unless the medians span more than a factor of 20: then the fastest bars would
 * be slivers, so the axis runs over whole decades instead.
 */
function timeAxis(chart: Chart): Axis {
  const timings = chart.groups.flatMap((group) =>
    group.bars.flatMap((bar): Timing[] => (bar.timing ? [bar.timing] : [])),
  );
  const medians = timings.map((t) => t.median);
  const lowest = Math.min(...timings.map((t) => t.min));
  const highest = Math.max(0, ...timings.map((t) => t.max));
  if (timings.length > 0 && lowest > 0 && Math.max(...medians) / Math.min(...medians) > 20) {
    // Half the fastest run, so even the shortest bar keeps a visible length.
    const lo = Math.floor(Math.log10(lowest / 2));
    const hi = Math.ceil(Math.log10(highest));
    return {
      position: (value) => (Math.log10(value) - lo) / (hi - lo),
      ticks: Array.from({ length: hi - lo + 1 }, (_, i) => ({
        at: i / (hi - lo),
        label: compactUs(10 ** (lo + i)),
      })),
    };
  }
  const step = niceStep(highest || 1);
  const count = Math.ceil((highest || 1) / step);
  return {
    position: (value) => value / (count * step),
    ticks: Array.from({ length: count + 1 }, (_, i) => ({
      at: i / count,
      label: compactUs(i * step),
    })),
  };
}

/** The smallest 1, 2 or 5 times a power of ten that covers `max` in at most five steps. */
function niceStep(max: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(max / 5));
  for (const factor of [1, 2, 5]) {
    if (Math.ceil(max / (factor * magnitude)) <= 5) return factor * magnitude;
  }
  return 10 * magnitude;
}

/** Gridline labels read better as "1 ms" and "250 µs" than with formatUs's fixed decimals. */
function compactUs(us: number): string {
  if (us === 0) return "0";
  if (us >= 1e6) return `${Number((us / 1e6).toPrecision(3))} s`;
  if (us >= 1e3) return `${Number((us / 1e3).toPrecision(3))} ms`;
  return `${Number(us.toPrecision(3))} µs`;
}

/** Labels are Markdown-ish (`code` in backticks), and an SVG has no code font to show them in. */
function plain(label: string): string {
  return label.replaceAll("`", "");
}

function truncateLabel(label: string): string {
  const clean = plain(label);
  return clean.length > LABEL_CHARS ? `${clean.slice(0, LABEL_CHARS - 1)}…` : clean;
}

function text(x: number, y: number, content: string, attrs: string): string {
  return `<text x="${r(x)}" y="${r(y)}" ${attrs}>${escapeXml(plain(content))}</text>`;
}

function textWidth(content: string): number {
  return content.length * CHAR_WIDTH;
}

function escapeXml(content: string): string {
  return content
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&apos;");
}

/** One decimal keeps the files small and the output identical across runs and platforms. */
function r(n: number): number {
  return Math.round(n * 10) / 10;
}

/**
 * Timing for benchmarks: several runs of a fixed number of operations, reported as the median
 * time per operation with the fastest and slowest run beside it.
 */
import { cpus, totalmem } from "node:os";

export interface Timing {
  /** Microseconds per operation: median, fastest and slowest run. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

export interface SampleOptions {
  runs: number;
  /** Operations per run. */
  iterations: number;
  /** Untimed operations first, so the JIT and the page cache are warm. */
  warmup?: number;
}

/**
 * Times each operation in `operations` over the same runs, interleaved (a, b, a, b, ...), so
 * drift in the machine's speed lands on both sides of a ratio alike.
 */
export async function sample<K extends string>(
  operations: Record<K, (i: number) => Promise<unknown>>,
  options: SampleOptions,
): Promise<Record<K, Timing>> {
  const names = Object.keys(operations) as K[];
  const perOp = new Map<K, number[]>(names.map((name) => [name, []]));
  for (const name of names) {
    for (let i = 0; i < (options.warmup ?? Math.min(100, options.iterations)); i++) {
      await operations[name](i);
    }
  }
  for (let run = 0; run < options.runs; run++) {
    for (const name of names) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < options.iterations; i++) await operations[name](i);
      perOp.get(name)?.push(Number(process.hrtime.bigint() - start) / 1000 / options.iterations);
    }
  }
  return Object.fromEntries(
    names.map((name) => [name, summarize(perOp.get(name) ?? [])]),
  ) as Record<K, Timing>;
}

/** Median, fastest and slowest of `values` (microseconds per operation). */
export function summarize(values: number[]): Timing {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor(sorted.length / 2)] as number,
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
    runs: sorted.length,
  };
}

/** The value at quantile `q` (0 to 1) of ascending `sorted`: the one at floor(q × n); 0 if empty. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** Single-operation latencies, in milliseconds. */
export interface Latencies {
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly n: number;
}

export function latencies(values: readonly number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    p10: quantile(sorted, 0.1),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? 0,
    n: sorted.length,
  };
}

export function formatUs(us: number): string {
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  return `${us.toFixed(us < 10 ? 2 : 1)} µs`;
}

/** `x` as a ratio: two decimals under 10, none from 10 up. */
export function times(x: number): string {
  return x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(2)}×`;
}

export function formatTiming(timing: Timing): string {
  return `${formatUs(timing.median)} (${formatUs(timing.min)}–${formatUs(timing.max)})`;
}

export function machine(): string {
  const cpu = cpus();
  const gib = (totalmem() / 2 ** 30).toFixed(0);
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${gib} GiB, Node.js ${process.version}, ${process.platform}`;
}

/**
 * Heap measurement for tests and benchmarks: a real garbage collection before each reading.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** Bytes held by the JS heap and by ArrayBuffers (where Buffer contents live), after a GC. */
export function retainedBytes(): number {
  for (let i = 0; i < 3; i++) collect();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

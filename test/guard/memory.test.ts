/**
 * Rule 7's memory bound: no content is retained, and a tracked path costs hundreds of bytes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileStateTracker } from "../../src/index.js";
import { tempTree } from "../helpers/fs.js";
import { retainedBytes } from "../helpers/heap.js";

describe("tracker memory", () => {
  it("keeps no file content", async () => {
    const dir = await tempTree();
    const files = Array.from({ length: 8 }, (_, i) => join(dir, `big-${i}.txt`));
    for (const file of files) writeFileSync(file, "x".repeat(4 << 20));
    const tracker = new FileStateTracker();
    const before = retainedBytes();
    for (const file of files) await tracker.recordRead(file);
    // 32 MiB was read; what stays is eight records.
    expect(retainedBytes() - before).toBeLessThan(256 * 1024);
    expect(tracker.size).toBe(8);
  });

  it("holds 10,000 paths in hundreds of bytes each, and no more than 10,000", async () => {
    const dir = await tempTree();
    const files = Array.from({ length: 10_001 }, (_, i) =>
      join(dir, `d${i % 100}`, `source-file-${String(i).padStart(5, "0")}.ts`),
    );
    for (let d = 0; d < 100; d++) {
      const { mkdirSync } = await import("node:fs");
      mkdirSync(join(dir, `d${d}`));
    }
    for (const file of files) writeFileSync(file, `export const value = ${file.length};\n`);
    const tracker = new FileStateTracker();
    const paths = files.slice(0, 10_000);
    const before = retainedBytes();
    for (const file of paths) await tracker.recordRead(file);
    const perPath = (retainedBytes() - before) / paths.length;
    console.info(`tracker: ${Math.round(perPath)} bytes per tracked path (10,000 paths)`);
    expect(perPath).toBeLessThan(1000);
    expect(tracker.size).toBe(10_000);
    await tracker.recordRead(files[10_000] as string);
    expect(tracker.size).toBe(10_000);
    expect(tracker.latest(files[0] as string)).toBeUndefined();
  });
});

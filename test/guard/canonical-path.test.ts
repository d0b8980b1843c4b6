/**
 * canonicalPath under a path that changes while it is resolved: a link swapped in and out
 * between realpath's look at a name and its readlink gives EINVAL, which is a race, not an
 * answer. Seen under the reliability runs' directory swaps (RELIABILITY.md).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type FsSeam, nodeFs } from "../../src/io/fs.js";
import { canonicalPath } from "../../src/io/paths.js";
import { tempTree } from "../helpers/fs.js";

/** The real seam, whose realpath fails with EINVAL the first `times` calls. */
function changing(times: number): { fs: FsSeam; calls: () => number } {
  let calls = 0;
  const fs: FsSeam = {
    ...nodeFs,
    realpathSync: (path) => {
      calls++;
      if (calls <= times) throw Object.assign(new Error("EINVAL"), { code: "EINVAL" });
      return nodeFs.realpathSync(path);
    },
  };
  return { fs, calls: () => calls };
}

describe("canonicalPath while the path changes", () => {
  it("resolves again when a name changed between the look and the read", async () => {
    const root = await tempTree({ "a/b.txt": "x\n" });
    const { fs, calls } = changing(2);
    expect(canonicalPath(join(root, "a", "b.txt"), fs)).toBe(
      nodeFs.realpathSync(join(root, "a", "b.txt")),
    );
    expect(calls()).toBe(3);
  });

  it("gives up with the error when the path keeps changing", async () => {
    const root = await tempTree({ "a/b.txt": "x\n" });
    const { fs, calls } = changing(Number.POSITIVE_INFINITY);
    expect(() => canonicalPath(join(root, "a", "b.txt"), fs)).toThrow(
      expect.objectContaining({ code: "EINVAL" }),
    );
    expect(calls()).toBe(4);
  });

  it("does not retry other errors", async () => {
    const root = await tempTree({ "a/b.txt": "x\n" });
    let calls = 0;
    const fs: FsSeam = {
      ...nodeFs,
      realpathSync: () => {
        calls++;
        throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      },
    };
    expect(() => canonicalPath(join(root, "a", "b.txt"), fs)).toThrow(
      expect.objectContaining({ code: "EACCES" }),
    );
    expect(calls).toBe(1);
  });
});

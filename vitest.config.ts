import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real files and real child processes: give slow disks room, but never hang CI.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

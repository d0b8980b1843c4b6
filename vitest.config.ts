import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The CLI answers through the user's daemon by default: the tests spawn it in-process unless
    // a test (test/daemon/) asks for a daemon of its own, in a runtime directory of its own.
    env: { FRESHFS_DAEMON: "0" },
    setupFiles: ["test/setup.ts"],
    // Real files and real child processes: give slow disks room, but never hang CI.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

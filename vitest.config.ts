import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most test files spend their time waiting on the processes they start
    // (servers, the CLI, PostgreSQL, Go, Python, Chromium), so vitest's default
    // of one worker per core but one left idle kept a 2-core box half idle: one
    // worker more than cores. On a 2-core AMD EPYC, `npm test` took 974 s with
    // 1 worker, 598 s with 2 and 414 s with 3 (that one with the lazy CLI too).
    maxWorkers: availableParallelism() + 1,
  },
});

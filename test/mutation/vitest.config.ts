import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * The tests a mutation run may use: in-process unit tests only. Stryker
 * switches mutants on inside the test process, so a test that does its work
 * in a spawned process would never see them, and PostgreSQL makes every run
 * slow; `SESSIOND_TEST_PG=off` drops the PostgreSQL engine from the store
 * suites (test/support/store-engines.ts). The property test of hostile
 * entries on every engine (src/store/hostile-entries.test.ts) covers nearly
 * every line of planning and storage at ~5 s a run: it would run for each of
 * their mutants; the rule-by-rule suites are what kills those.
 */
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["src/**/*.test.ts"],
    exclude: [
      ...configDefaults.exclude,
      "src/storage/postgres/**",
      "src/storage/jsonl/two-processes.test.ts",
      "src/server/rpc/reflection.test.ts",
      "src/store/hostile-entries.test.ts",
    ],
    env: { SESSIOND_TEST_PG: "off" },
    // One module graph for all test files (about half the time per mutant; no
    // src test mocks modules or changes the environment). A static mutant needs
    // the modules loaded afresh: the static pass of run.ts sets SESSIOND_MUTATION_ISOLATE.
    isolate: process.env.SESSIOND_MUTATION_ISOLATE === "1",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

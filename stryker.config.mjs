// Mutation testing (issue 11): `npm run test:mutation [-- --quick [--base REF]]`,
// see test/mutation/run.ts. This file is the full run; the script narrows `mutate`
// for --quick and reads the JSON report.

/** The code whose every rule must have a test that fails without it. */
export const MUTATED = [
  // src/core/codec included: the record's JSON both ways and the response encoders.
  "src/core/**/*.ts",
  "src/store/**/*.ts",
  // The JSONL engine's record / reader / repair code: framing and CRC (record.ts),
  // the indexed fields read from the payload bytes (entry-meta.ts) that record.ts
  // reads every line with (its payload decoder is core/codec/entry-from-json.ts),
  // damage classification (reader.ts) and the torn-tail cut (repair.ts).
  "src/storage/jsonl/record.ts",
  "src/storage/jsonl/entry-meta.ts",
  "src/storage/jsonl/reader.ts",
  "src/storage/jsonl/repair.ts",
];

/** Unit tests sit next to their code; test support lives under test/. Never mutated. */
export const NOT_MUTATED = ["src/**/*.test.ts"];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner", "./test/mutation/survivors-so-far.mjs"],
  vitest: { configFile: "test/mutation/vitest.config.ts" },
  coverageAnalysis: "perTest",
  // A static mutant (module-level code only: a pattern, a table) is only seen
  // by a fresh load of every module, which the shared module graph of
  // test/mutation/vitest.config.ts does not do: test/mutation/run.ts runs
  // them in a second pass over their lines, with modules isolated.
  ignoreStatic: true,
  mutate: [...MUTATED, ...NOT_MUTATED.map((glob) => `!${glob}`)],
  concurrency: 2,
  reporters: ["clear-text", "progress", "json", "html", "survivors-so-far"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  clearTextReporter: { allowColor: false, reportTests: false, reportMutants: false },
  tempDirName: ".stryker-tmp",
  // Other runs' sandboxes (--files runs side by side) are not part of this one.
  // .venv: the README test's Python environment (its lib64 symlink to a directory stops the sandbox copy); .cache: built tools.
  ignorePatterns: [
    "dist",
    ".venv",
    ".cache",
    "bench",
    "reports",
    ".sessiond",
    "coverage",
    ".stryker-tmp*",
  ],
  thresholds: { high: 90, low: 80, break: null },
};

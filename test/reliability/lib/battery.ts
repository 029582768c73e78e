/**
 * The shape of one reliability test (T1–T12, see ../README.md) and the
 * `main` that runs it as a script:
 *
 *   node --import tsx test/reliability/t1-kill9.ts [--quick] [--seed N] [--control SWITCH]
 *
 * Each test counts violations of the durability contract instead of
 * throwing at the first one, so that its summary line is a measurement:
 * `T1 kill-9: 200 crashes, 41532 acked, 0 lost, ... (seed 1234)`.
 *
 * With `--control SWITCH` the test runs with that durability rule switched
 * off (SESSIOND_DEBUG for spawned servers, engine `debug` options
 * in-process) and must then FIND violations: the script's exit code is 0
 * only when the outcome is the expected one (0 violations normally, > 0
 * under a control). The last stdout line is `RESULT {json}` for run.ts.
 */
import type { DebugSwitch } from "../../../src/cli/debug-switches.js";

/**
 * Negative controls that live in the test, not in the server: the old
 * behaviour rebuilt around a correct server (e.g. a relay in front of it),
 * for rules that are not durability switches of `sessiond serve`.
 */
export const TEST_CONTROLS = {
  /** A relay that speaks only after the client: HTTP/2 SETTINGS in reply to the preface. Caught by T12. */
  lazyPort: "the port sends HTTP/2 SETTINGS before the client speaks",
} as const;

/** A control: a server debug switch or a test-side control. */
export type Control = DebugSwitch | keyof typeof TEST_CONTROLS;

export interface RunOptions {
  /** Small sizes (CI); the full size fits the battery in ~15 minutes. */
  readonly quick: boolean;
  readonly seed: number;
  /** The durability rule switched off for a negative control, if any. */
  readonly control: Control | undefined;
  /** The test should wrap up by this time (Date.now() ms); the runner kills it a bit later. */
  readonly deadline: number;
  /** One line of progress on stderr (not part of the summary). */
  log(line: string): void;
}

export interface Outcome {
  /** Comma-separated figures, e.g. "200 crashes, 41532 acked, 0 lost". */
  readonly figures: string;
  /** Total violations of the contract found (0 is the only passing value). */
  readonly violations: number;
  /** What the violations were (first few), for the log. */
  readonly details?: readonly string[];
}

export interface ReliabilityTest {
  readonly id: string;
  readonly name: string;
  /** The negative controls this test is the proof for. */
  readonly controls: readonly Control[];
  /** Time budget of a full run / a quick run, ms. */
  readonly budgetMs: { full: number; quick: number };
  run(o: RunOptions): Promise<Outcome>;
}

export interface Result {
  id: string;
  name: string;
  seed: number;
  quick: boolean;
  control: string | undefined;
  figures: string;
  violations: number;
  details: readonly string[];
  ms: number;
  /** True when the outcome is the expected one (see the file comment). */
  ok: boolean;
}

export function summaryLine(r: Result): string {
  const control = r.control === undefined ? "" : ` [control ${r.control}]`;
  return `${r.id} ${r.name}${control}: ${r.figures}, ${r.violations} violations (seed ${r.seed}, ${(r.ms / 1000).toFixed(1)} s)`;
}

function argValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Runs `test` as a script (see the file comment) and exits. */
export async function main(test: ReliabilityTest, argv = process.argv.slice(2)): Promise<never> {
  const quick = argv.includes("--quick");
  const seedArg = argValue(argv, "--seed");
  const seed = seedArg === undefined ? (Date.now() % 2_000_000_000) + 1 : Number(seedArg);
  const control = argValue(argv, "--control") as Control | undefined;
  const budget = quick ? test.budgetMs.quick : test.budgetMs.full;
  const started = Date.now();
  let outcome: Outcome;
  try {
    outcome = await test.run({
      quick,
      seed,
      control,
      deadline: started + budget,
      log: (line) => process.stderr.write(`${test.id}: ${line}\n`),
    });
  } catch (err) {
    // A test that crashes has not measured anything: report it as a violation.
    outcome = {
      figures: "the test itself failed",
      violations: 1,
      details: [(err as Error).stack ?? String(err)],
    };
  }
  const result: Result = {
    id: test.id,
    name: test.name,
    seed,
    quick,
    control,
    figures: outcome.figures,
    violations: outcome.violations,
    details: (outcome.details ?? []).slice(0, 20),
    ms: Date.now() - started,
    ok: control === undefined ? outcome.violations === 0 : outcome.violations > 0,
  };
  for (const d of result.details) process.stderr.write(`${test.id}: violation: ${d}\n`);
  process.stdout.write(`${summaryLine(result)}\nRESULT ${JSON.stringify(result)}\n`);
  process.exit(result.ok ? 0 : 1);
}

/** True when this module is the script being run (not imported by run.ts). */
export function isMain(meta: ImportMeta): boolean {
  return process.argv[1] !== undefined && meta.filename === process.argv[1];
}

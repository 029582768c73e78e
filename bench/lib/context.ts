/** What every scenario gets from the runner. */
export interface BenchContext {
  /** Small sizes for a CI smoke run (figures are not judged). */
  readonly quick: boolean;
  /** A scratch directory on the same disk as the data dirs; removed after the run. */
  readonly tmpDir: string;
  /** Progress lines (stderr). */
  log(line: string): void;
}

/** A scenario: measures sessiond and its baselines in the same run. */
export interface Scenario {
  readonly id: string;
  readonly title: string;
  run(ctx: BenchContext): Promise<import("./row.js").Row[]>;
}

/**
 * One line of the benchmark table: a sessiond figure, the baseline measured
 * in the same run, their ratio and the target it is held to.
 */
export interface Row {
  /** Scenario number and variant, e.g. "1" or "7/1000". */
  id: string;
  scenario: string;
  /** What the figures are (e.g. "p50 ms", "ops/s", "MB"). */
  unit: string;
  sessiond: number;
  baseline: number;
  /** Which baseline (e.g. "echo p50 + fdatasync p50"). */
  baselineName: string;
  /** sessiond / baseline. */
  ratio: number;
  /** The target in words, e.g. "ratio <= 1.3". */
  target: string;
  pass: boolean;
  /** Anything else worth keeping (samples, p99, sizes). */
  details?: Record<string, unknown>;
  /**
   * A target no longer held (why, in words): the row stays in the table as
   * information, its result shown as "info", and counts neither as a pass
   * nor as a miss.
   */
  retired?: string;
}

/** `row` kept as information only: its target is retired, for `why`. */
export function retired(row: Row, why: string): Row {
  return { ...row, retired: why };
}

/** A row whose figure must not exceed `limit` × baseline (latency, time, memory). */
export function atMost(r: Omit<Row, "ratio" | "pass" | "target">, limit: number): Row {
  const ratio = r.sessiond / r.baseline;
  return { ...r, ratio, target: `ratio <= ${limit}`, pass: ratio <= limit };
}

/** A row whose figure must reach at least `limit` × baseline (throughput). */
export function atLeast(r: Omit<Row, "ratio" | "pass" | "target">, limit: number): Row {
  const ratio = r.sessiond / r.baseline;
  return { ...r, ratio, target: `ratio >= ${limit}`, pass: ratio >= limit };
}

/** A row held to an absolute limit (the baseline column shows the limit). */
export function absoluteAtMost(
  r: Omit<Row, "ratio" | "pass" | "target" | "baseline" | "baselineName">,
  limit: number,
): Row {
  return {
    ...r,
    baseline: limit,
    baselineName: "absolute limit",
    ratio: r.sessiond / limit,
    target: `<= ${limit} ${r.unit}`,
    pass: r.sessiond <= limit,
  };
}

const fmt = (n: number) =>
  !Number.isFinite(n)
    ? String(n)
    : Math.abs(n) >= 100
      ? n.toFixed(0)
      : Math.abs(n) >= 1
        ? n.toFixed(2)
        : n.toFixed(3);

/** The table as Markdown (pasted into the README as is). */
export function renderTable(rows: readonly Row[]): string {
  const head =
    "| # | scenario | unit | sessiond | baseline | baseline is | ratio | target | result |";
  const sep = "|---|---|---|---|---|---|---|---|---|";
  const lines = rows.map(
    (r) =>
      `| ${r.id} | ${r.scenario} | ${r.unit} | ${fmt(r.sessiond)} | ${fmt(r.baseline)} | ${r.baselineName} | ${fmt(r.ratio)} | ${r.target}${r.retired === undefined ? "" : ` (retired: ${r.retired})`} | ${r.retired !== undefined ? "info" : r.pass ? "PASS" : "FAIL"} |`,
  );
  return [head, sep, ...lines].join("\n");
}

/**
 * Reads Stryker's JSON report (the mutation-testing-report-schema) into the
 * figures issue 11 asks for: per folder, how many mutants the tests killed
 * and how many they let live, and the list of those left to explain.
 */
import { readFileSync } from "node:fs";
import { dirname } from "node:path";

/** Stryker's mutant statuses, as the JSON report spells them. */
export type MutantStatus =
  | "Killed"
  | "Survived"
  | "NoCoverage"
  | "Timeout"
  | "CompileError"
  | "RuntimeError"
  | "Ignored"
  | "Pending";

/** The part of a report mutant this script reads. */
export interface ReportMutant {
  mutatorName: string;
  replacement?: string;
  status: MutantStatus;
  statusReason?: string;
  location: { start: Position; end: Position };
  coveredBy?: string[];
  killedBy?: string[];
}

interface Position {
  line: number;
  column: number;
}

export interface Report {
  files: Record<string, { mutants: ReportMutant[] }>;
}

/** The reason Stryker gives a mutant disabled by a comment that says no why. */
const REASONLESS_DISABLE = "Ignored using a comment";

/** A static mutant left out by `ignoreStatic` (stryker.config.mjs): not tested, not disabled. */
export function isStaticNotRun(mutant: ReportMutant): boolean {
  return mutant.status === "Ignored" && (mutant.statusReason ?? "").startsWith("Static mutant");
}

export function readReport(file: string): Report {
  return JSON.parse(readFileSync(file, "utf8")) as Report;
}

/** Stryker `mutate` entries (`file:line-line`) covering the lines of every static mutant left out. */
export function staticRanges(report: Report): string[] {
  const ranges = new Set<string>();
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants.filter(isStaticNotRun)) {
      ranges.add(`${file}:${m.location.start.line}-${m.location.end.line}`);
    }
  }
  return [...ranges].sort();
}

/**
 * `report` with each static mutant it left out replaced by that mutant's
 * result in `staticRun` (same file, place, mutator and replacement). Their
 * test ids belong to the other run, so they are dropped.
 */
export function withStaticResults(report: Report, staticRun: Report): Report {
  const key = (file: string, m: ReportMutant) =>
    JSON.stringify([file, m.location, m.mutatorName, m.replacement]);
  const results = new Map<string, ReportMutant>();
  for (const [file, { mutants }] of Object.entries(staticRun.files)) {
    for (const m of mutants) results.set(key(file, m), m);
  }
  const files: Report["files"] = {};
  for (const [file, entry] of Object.entries(report.files)) {
    const mutants = entry.mutants.map((m) => {
      const result = isStaticNotRun(m) ? results.get(key(file, m)) : undefined;
      if (result === undefined) return m;
      const { coveredBy: _covered, killedBy: _killed, ...rest } = result;
      return { ...m, ...rest, static: true };
    });
    files[file] = { ...entry, mutants };
  }
  return { ...report, files };
}

/** A mutant no test detects and no comment explains: survived, no coverage, or disabled without a reason. */
export function isUnexplained(mutant: ReportMutant): boolean {
  if (mutant.status === "Survived" || mutant.status === "NoCoverage") return true;
  return (
    mutant.status === "Ignored" &&
    (mutant.statusReason ?? REASONLESS_DISABLE) === REASONLESS_DISABLE
  );
}

export interface Tally {
  killed: number;
  survived: number;
  timeout: number;
  noCoverage: number;
  /** Disabled by a `// Stryker disable` comment. */
  ignored: number;
  /** Static mutants left out by `ignoreStatic`. */
  staticNotRun: number;
  /** Mutants that could not run (a runtime or compile error): not counted in the score. */
  errors: number;
}

/** Counts per folder (or per file) of the mutated files, plus "all". */
export function tally(report: Report, by: "folder" | "file"): Map<string, Tally> {
  const tallies = new Map<string, Tally>();
  const add = (key: string, mutant: ReportMutant) => {
    let tally = tallies.get(key);
    if (tally === undefined) {
      tally = {
        killed: 0,
        survived: 0,
        timeout: 0,
        noCoverage: 0,
        ignored: 0,
        staticNotRun: 0,
        errors: 0,
      };
      tallies.set(key, tally);
    }
    switch (mutant.status) {
      case "Killed":
        tally.killed++;
        break;
      case "Survived":
        tally.survived++;
        break;
      case "Timeout":
        tally.timeout++;
        break;
      case "NoCoverage":
        tally.noCoverage++;
        break;
      case "Ignored":
        if (isStaticNotRun(mutant)) tally.staticNotRun++;
        else tally.ignored++;
        break;
      case "CompileError":
      case "RuntimeError":
        tally.errors++;
        break;
      case "Pending":
        break;
    }
  };
  for (const file of Object.keys(report.files).sort()) {
    for (const mutant of report.files[file]?.mutants ?? []) {
      add(by === "folder" ? dirname(file) : file, mutant);
      add("all", mutant);
    }
  }
  const all = tallies.get("all");
  if (all !== undefined) {
    tallies.delete("all");
    tallies.set("all", all);
  }
  return tallies;
}

/**
 * Stryker's mutation score: detected (killed or timed out) over detected
 * plus undetected (survived or not covered); ignored and errored mutants
 * are left out. NaN when nothing counts.
 */
export function score(tally: Tally): number {
  const detected = tally.killed + tally.timeout;
  return (100 * detected) / (detected + tally.survived + tally.noCoverage);
}

const COLUMNS = [
  "killed",
  "survived",
  "timeout",
  "no coverage",
  "ignored",
  "static, not run",
  "errors",
  "score",
];

function rows(tallies: Map<string, Tally>): string[][] {
  return [...tallies].map(([folder, t]) => [
    folder,
    String(t.killed),
    String(t.survived),
    String(t.timeout),
    String(t.noCoverage),
    String(t.ignored),
    String(t.staticNotRun),
    String(t.errors),
    Number.isNaN(score(t)) ? "-" : `${score(t).toFixed(1)} %`,
  ]);
}

/** The table for a terminal; `what` names the first column. */
export function table(tallies: Map<string, Tally>, what: string): string {
  const cells = [[what, ...COLUMNS], ...rows(tallies)];
  const widths = cells[0]?.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === 0 ? cell.padEnd : cell.padStart).call(cell, widths?.[i] ?? 0))
        .join("  "),
    )
    .join("\n");
}

/** The table in Markdown; `what` names the first column. */
export function tableMarkdown(tallies: Map<string, Tally>, what: string): string {
  const header = `| ${what} | ${COLUMNS.join(" | ")} |`;
  const rule = `|---|${COLUMNS.map(() => "--:").join("|")}|`;
  return [header, rule, ...rows(tallies).map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

/** One line per unexplained mutant: `line:column Mutator -> replacement [status]`, grouped by file. */
export function unexplainedByFile(report: Report): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const file of Object.keys(report.files).sort()) {
    const mutants = (report.files[file]?.mutants ?? [])
      .filter(isUnexplained)
      .sort(
        (a, b) =>
          a.location.start.line - b.location.start.line ||
          a.location.start.column - b.location.start.column,
      );
    if (mutants.length === 0) continue;
    byFile.set(
      file,
      mutants.map((m) => {
        const status = m.status === "Ignored" ? "disabled without a reason" : m.status;
        return `${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} -> ${oneLine(m.replacement ?? "")} [${status}]`;
      }),
    );
  }
  return byFile;
}

/** A replacement on one line, cut to a readable length. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 100 ? `${flat.slice(0, 97)}...` : flat;
}

/**
 * The ledger of passing mutation runs (test/mutation/ledger.json): for each
 * file of the mutated set, the content (git blob hash) of its last run that
 * left no mutant unexplained, with the day and the counts. Why: quick mode
 * used to mutate only what the last commit changed, so a file changed and
 * then followed by any other commit was never run in CI (store/shares.ts
 * and store/blobs.ts went unrun for days that way). With the ledger, quick
 * mode runs every file whose content has no passing run on record: those
 * changed since the base, and those recorded whose content moved on since;
 * a file whose content is the one recorded is not run again. A checked run
 * (--files, --quick) that passes records its files; commit the ledger with
 * the change it vouches for.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Tally } from "./report.js";

export const LEDGER_FILE = "test/mutation/ledger.json";

export interface LedgerEntry {
  /** `git hash-object` of the file as it was run. */
  readonly blob: string;
  /** The day of the run (UTC). */
  readonly date: string;
  /** killed / survived / timeout / no coverage / disabled with a reason. */
  readonly result: string;
}

export type Ledger = Record<string, LedgerEntry>;

export function readLedger(file = LEDGER_FILE): Ledger {
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Ledger) : {};
}

/** Writes the ledger with its files in order (stable diffs). */
export function writeLedger(ledger: Ledger, file = LEDGER_FILE): void {
  const sorted = Object.fromEntries(Object.entries(ledger).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
}

/** The git blob hash of a file as it is in the working tree, or undefined when it is gone. */
export function contentHash(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  return execFileSync("git", ["hash-object", "--", file], { encoding: "utf8" }).trim();
}

/**
 * What quick mode mutates: the files `changed` since its base and the files
 * the ledger holds, less every one whose content (`hashOf`) is the one the
 * ledger recorded as passing, or that no longer exists. `vouched`: the
 * changed files left out because the ledger already has their content.
 */
export function filesToMutate(
  changed: readonly string[],
  ledger: Ledger,
  hashOf: (file: string) => string | undefined,
): { run: string[]; vouched: string[] } {
  const run: string[] = [];
  const vouched: string[] = [];
  for (const file of new Set([...changed, ...Object.keys(ledger)])) {
    const hash = hashOf(file);
    if (hash === undefined) continue;
    if (ledger[file]?.blob === hash) {
      if (changed.includes(file)) vouched.push(file);
    } else {
      run.push(file);
    }
  }
  return { run: run.sort(), vouched: vouched.sort() };
}

/** The ledger with `files` recorded as passing now, each with its counts. */
export function recorded(
  ledger: Ledger,
  files: ReadonlyMap<string, Tally>,
  hashOf: (file: string) => string | undefined,
  day: string,
): Ledger {
  const next: Ledger = { ...ledger };
  for (const [file, t] of files) {
    const blob = hashOf(file);
    if (blob === undefined) continue;
    next[file] = {
      blob,
      date: day,
      result: `${t.killed} / ${t.survived} / ${t.timeout} / ${t.noCoverage} / ${t.ignored}`,
    };
  }
  return next;
}

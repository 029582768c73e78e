// A Stryker reporter that appends each mutant left alive to
// reports/mutation/survivors-so-far.txt the moment it is known, so a run of
// hours can be worked from before it ends. The complete list, grouped by file,
// is written by run.ts from the JSON report at the end (same line format).
// Plain .mjs: Stryker loads plugins in processes that cannot read TypeScript.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const FILE = "reports/mutation/survivors-so-far.txt";

class SurvivorsSoFar {
  static inject = [];

  constructor() {
    mkdirSync("reports/mutation", { recursive: true });
    writeFileSync(FILE, "");
  }

  /** @param {{ fileName: string, status: string, mutatorName: string, replacement?: string, location: { start: { line: number, column: number } } }} mutant */
  onMutantTested(mutant) {
    if (mutant.status !== "Survived" && mutant.status !== "NoCoverage") return;
    const { line, column } = mutant.location.start;
    const replacement = (mutant.replacement ?? "").replace(/\s+/g, " ").trim();
    const shown = replacement.length > 100 ? `${replacement.slice(0, 97)}...` : replacement;
    const file = relative(process.cwd(), mutant.fileName);
    appendFileSync(
      FILE,
      `${file}:${line}:${column} ${mutant.mutatorName} -> ${shown} [${mutant.status}]\n`,
    );
  }
}

export const strykerPlugins = [
  { kind: "Reporter", name: "survivors-so-far", injectableClass: SurvivorsSoFar },
];

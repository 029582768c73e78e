/**
 * `npm run test:mutation [-- --quick [--base REF]] [-- --no-static]`
 * `npm run test:mutation -- --files A.ts,B.ts [--name NAME] [--concurrency N]`
 * `npm run test:mutation -- --report FILE [--markdown FILE]`
 *
 * Runs StrykerJS (stryker.config.mjs) over the mutated set: src/core,
 * src/store and the JSONL engine's record / reader / repair code. Prints
 * the per-folder table (killed / survived / timeout / no coverage /
 * ignored / score) and writes the mutants left to explain, by file, to
 * reports/mutation/survivors.txt (survivors-quick.txt for --quick); the
 * JSON and HTML reports are mutation.* (quick.* for --quick) there.
 *
 * --quick mutates only the files of that set changed since REF (default
 * HEAD~1, working tree included) or changed since their passing run on
 * record (test/mutation/ledger.json, ledger.ts), less those whose content
 * is the one on record, and exits 1 when any of their mutants is
 * unexplained: it survived, no test covers it, or a `// Stryker disable`
 * comment turned it off without saying why after a colon. Nothing to run:
 * exit 0 with a message; no HEAD~1 (first commit, shallow clone): only the
 * ledger's files are compared; an explicit --base that names no commit is
 * an error (exit 2). A checked run (--quick, --files) that passes records
 * its files in the ledger.
 *
 * Static mutants (module-level code, see stryker.config.mjs) run in a
 * second Stryker run over their lines only, with modules loaded afresh,
 * and their results replace the "static, not run" entries of the JSON
 * report (the HTML report stays the first run's). --no-static skips it.
 *
 * --files mutates just those files (comma-separated paths or globs of the
 * mutated set) and, like --quick, exits 1 on an unexplained mutant: the loop
 * for killing one file's survivors. Its reports are files-NAME.* (NAME
 * defaults to the first file's base name) and Stryker's sandbox is its own,
 * so runs over different files can go on side by side.
 *
 * --report FILE.json prints the table of an existing JSON report and
 * writes its survivors list to FILE-survivors.txt, without running
 * anything; --markdown FILE also writes both as Markdown
 * (test/mutation/baseline.md is made that way).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Stryker } from "@stryker-mutator/core";
import { changedMutatedFiles } from "./changed-files.js";
import {
  contentHash,
  filesToMutate,
  LEDGER_FILE,
  readLedger,
  recorded,
  writeLedger,
} from "./ledger.js";
import {
  isStaticNotRun,
  isUnexplained,
  readReport,
  staticRanges,
  table,
  tableMarkdown,
  tally,
  unexplainedByFile,
  withStaticResults,
} from "./report.js";

const ROOT = new URL("../../", import.meta.url);
const OUT = "reports/mutation";

const argv = process.argv.slice(2);
const arg = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = argv.includes("--quick");
const noStatic = argv.includes("--no-static");
const base = arg("--base") ?? "HEAD~1";
const existingReport = arg("--report");
const markdownFile = arg("--markdown");
const filesArg = arg("--files");
const concurrency = arg("--concurrency");

process.chdir(fileURLToPath(ROOT));

if (existingReport !== undefined) {
  summarise(existingReport, existingReport.replace(/(\.json)?$/, "-survivors.txt"));
  process.exit(0);
}

const config = (await import(new URL("stryker.config.mjs", ROOT).href)) as {
  MUTATED: string[];
  NOT_MUTATED: string[];
};

let mutate: string[] | undefined;
if (quick) {
  const changed = changedMutatedFiles(base, config.MUTATED, config.NOT_MUTATED);
  if ("noBase" in changed) {
    if (arg("--base") !== undefined) {
      console.error(`mutation --quick: ${changed.noBase}`);
      process.exit(2);
    }
    console.log(`mutation --quick: ${changed.noBase}; only the ledger's files are compared`);
  }
  const { run, vouched } = filesToMutate(
    "noBase" in changed ? [] : changed.files,
    readLedger(),
    contentHash,
  );
  if (vouched.length > 0) {
    console.log(
      `mutation --quick: changed since ${base}, but passing on record as they are (${LEDGER_FILE}):\n  ${vouched.join("\n  ")}`,
    );
  }
  if (run.length === 0) {
    console.log(
      `mutation --quick: every file of the mutated set changed since ${base} or recorded in ${LEDGER_FILE} has a passing run on record as it is; nothing to do`,
    );
    process.exit(0);
  }
  mutate = run;
  console.log(
    `mutation --quick: mutating what changed since ${base} or since its run on record:\n  ${mutate.join("\n  ")}`,
  );
}

if (filesArg !== undefined) {
  mutate = filesArg.split(",").filter((f) => f.length > 0);
  console.log(`mutation --files: mutating\n  ${mutate.join("\n  ")}`);
  // A glob such as src/core/*.ts names the unit tests beside the code too: never mutate those.
  mutate.push(...config.NOT_MUTATED.map((glob) => `!${glob}`));
}
const checked = quick || filesArg !== undefined;
const name =
  filesArg !== undefined
    ? `files-${arg("--name") ?? baseName(mutate?.[0] ?? "")}`
    : quick
      ? "quick"
      : "mutation";
const jsonFile = `${OUT}/${name}.json`;
const started = Date.now();
const sandbox = {
  tempDirName: `.stryker-tmp${name === "mutation" ? "" : `-${name}`}`,
  ...(concurrency !== undefined && { concurrency: Number(concurrency) }),
};
await stryker({
  ...sandbox,
  ...(mutate !== undefined && { mutate }),
  jsonReporter: { fileName: jsonFile },
  htmlReporter: { fileName: `${OUT}/${name}.html` },
});
const firstPass = readReport(jsonFile);
const ranges = staticRanges(firstPass);
if (!noStatic && ranges.length > 0) {
  const count = Object.values(firstPass.files)
    .flatMap((f) => f.mutants)
    .filter(isStaticNotRun).length;
  console.log(`\nmutation: second pass, ${count} static mutant(s), modules loaded afresh for each`);
  process.env.SESSIOND_MUTATION_ISOLATE = "1";
  const staticFile = `${OUT}/${name}-static.json`;
  await stryker({
    ...sandbox,
    mutate: ranges,
    ignoreStatic: false,
    reporters: ["progress", "json"],
    warnings: { slow: false },
    jsonReporter: { fileName: staticFile },
  });
  const merged = withStaticResults(firstPass, readReport(staticFile));
  writeFileSync(jsonFile, JSON.stringify(merged));
}
const minutes = (Date.now() - started) / 60_000;
console.log(`\nmutation: done in ${minutes.toFixed(1)} min`);

const unexplained = summarise(
  jsonFile,
  `${OUT}/survivors${name === "mutation" ? "" : `-${name}`}.txt`,
);
if (checked && unexplained.length > 0) {
  console.log(
    `\nmutation: FAILED, ${unexplained.length} mutant(s) in the mutated files are not explained.\n` +
      "Kill each with a test named after the rule it proves, or, when no test can tell the\n" +
      "mutant from the code (equivalent), disable it on its line with the reason:\n" +
      "  // Stryker disable next-line <Mutator>: <why no observable difference>\n",
  );
  for (const line of unexplained) console.log(`  ${line}`);
  process.exit(1);
}
if (checked) {
  // Every file of this run is passing: on record with its content (ledger.ts).
  const report = readReport(jsonFile);
  const files = new Map([...tally(report, "file")].filter(([file]) => file in report.files));
  writeLedger(recorded(readLedger(), files, contentHash, new Date().toISOString().slice(0, 10)));
  console.log(`mutation: ${[...files.keys()].join(", ")} recorded in ${LEDGER_FILE}`);
}
process.exit(0);

/** "src/core/entry.ts" → "entry". */
function baseName(path: string): string {
  return (path.split("/").pop() ?? "run").replace(/\.ts$/, "").replace(/[^\w.-]/g, "_");
}

/** One Stryker run with stryker.config.mjs and these overrides; exit 2 when it fails. */
async function stryker(options: Record<string, unknown>): Promise<void> {
  try {
    await new Stryker({
      ...options,
      allowConsoleColors: process.stdout.isTTY === true,
    }).runMutationTest();
  } catch (err) {
    console.error(`mutation: Stryker failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
}

/** Prints the table, writes the survivors list (and Markdown if asked); returns the unexplained mutants. */
function summarise(reportFile: string, survivorsFile: string): string[] {
  const report = readReport(reportFile);
  const byFolder = tally(report, "folder");
  const byFile = unexplainedByFile(report);
  const unexplained = [...byFile.values()].flat();
  console.log(`\n${table(byFolder, "folder")}\n`);
  mkdirSync(dirname(survivorsFile), { recursive: true });
  writeFileSync(
    survivorsFile,
    [...byFile]
      .map(([file, lines]) => `${file} (${lines.length})\n${lines.join("\n")}\n`)
      .join("\n"),
  );
  const explained = Object.values(report.files)
    .flatMap((f) => f.mutants)
    .filter((m) => m.status === "Ignored" && !isUnexplained(m) && !isStaticNotRun(m)).length;
  console.log(
    `${unexplained.length} unexplained mutant(s) listed in ${survivorsFile}; ${explained} disabled with a reason`,
  );
  if (markdownFile !== undefined) {
    const sections = [...byFile].map(
      ([file, lines]) =>
        `### ${file} (${lines.length})\n\n${lines.map((l) => `- \`${l}\``).join("\n")}\n`,
    );
    writeFileSync(
      markdownFile,
      [
        tableMarkdown(byFolder, "folder"),
        tableMarkdown(tally(report, "file"), "file"),
        `## Unexplained mutants by file\n\n${sections.join("\n")}`,
      ].join("\n\n"),
    );
  }
  return unexplained;
}

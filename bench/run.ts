/**
 * `npm run bench [-- --quick] [-- --only 1,2]`: runs every scenario in one
 * process tree (servers and clients are child processes on 127.0.0.1),
 * measures each baseline in the same run next to sessiond, prints one table
 * and writes it as JSON to bench/results/latest.json (a --quick smoke run
 * writes quick.json instead, so it never replaces the figures of a full run). Targets are ratios
 * against same-run baselines because these machines are shared and noisy.
 */
import { execSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { BenchContext, Scenario } from "./lib/context.js";
import { REPO } from "./lib/procs.js";
import { type Row, renderTable } from "./lib/row.js";
import { SCENARIOS } from "./scenarios/index.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyIdx = args.indexOf("--only");
const only = onlyIdx >= 0 ? new Set((args[onlyIdx + 1] ?? "").split(",")) : undefined;

// Measure the server as `npm start` runs it: compiled JavaScript (bin/sessiond.js
// falls back to the TypeScript loader only when dist/ is missing or stale).
execSync("npm run build", { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });

const base = join(REPO, ".bench-tmp");
mkdirSync(base, { recursive: true });
const tmpDir = mkdtempSync(join(base, "run-"));
const ctx: BenchContext = {
  quick,
  tmpDir,
  log: (line) => process.stderr.write(`[bench] ${line}\n`),
};

const rows: Row[] = [];
const failures: string[] = [];
const started = Date.now();
try {
  for (const s of SCENARIOS as readonly Scenario[]) {
    if (only && !only.has(s.id)) continue;
    ctx.log(`scenario ${s.id}: ${s.title}`);
    const at = Date.now();
    try {
      rows.push(...(await s.run(ctx)));
    } catch (err) {
      failures.push(`${s.id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      ctx.log(`scenario ${s.id} failed: ${String(err)}`);
    }
    // Where a run's time goes (CI's smoke run has a budget).
    ctx.log(`scenario ${s.id} took ${((Date.now() - at) / 1000).toFixed(1)} s`);
  }
} finally {
  rmSync(tmpDir, { recursive: true, force: true });
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${new Date().toISOString()}`;
const table = renderTable(rows);
process.stdout.write(
  `\nsessiond benchmark (${quick ? "quick" : "full"}) on ${machine}\n\n${table}\n`,
);
if (failures.length > 0)
  process.stdout.write(`\nScenarios that did not run:\n${failures.join("\n")}\n`);
const held = rows.filter((r) => r.retired === undefined);
const passed = held.filter((r) => r.pass).length;
const info = rows.length - held.length;
process.stdout.write(
  `\n${passed}/${held.length} targets pass${info > 0 ? ` (and ${info} retired rows, information only)` : ""}; ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);
mkdirSync(join(REPO, "bench/results"), { recursive: true });
writeFileSync(
  join(REPO, "bench/results", quick ? "quick.json" : "latest.json"),
  `${JSON.stringify({ quick, machine, rows, failures }, null, 2)}\n`,
);
process.exitCode = failures.length > 0 ? 1 : 0;

/**
 * `npm run test:reliability [-- --quick] [-- --only T1,T4] [-- --controls] [-- --seed N]`
 *
 * Runs the reliability battery (T1–T12, one script each, see README.md in
 * this folder) one after another, each in its own process with a time
 * limit, and prints their summary lines. With `--controls` it then runs the
 * negative controls: every test again with each durability rule it proves
 * switched off, where it must find violations. Exits 1 when any test finds
 * a violation, any control finds none, or a script fails to report.
 * Results go to test/reliability/results/{latest,quick}.json.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { DEBUG_SWITCHES } from "../../src/cli/debug-switches.js";
import {
  type Control,
  summaryLine as line,
  type ReliabilityTest,
  type Result,
  TEST_CONTROLS,
} from "./lib/battery.js";
import { Rng } from "./lib/random.js";

const HERE = import.meta.dirname;
const argv = process.argv.slice(2);
const arg = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = argv.includes("--quick");
const withControls = argv.includes("--controls");
const only = arg("--only")
  ?.split(",")
  .map((s) => s.trim().toUpperCase());
const masterSeed = Number(arg("--seed") ?? (Date.now() % 2_000_000_000) + 1);
const rng = new Rng(masterSeed);

interface Script {
  file: string;
  test: ReliabilityTest;
}

async function discover(): Promise<Script[]> {
  const files = readdirSync(HERE)
    .filter((f) => /^t\d+-.*\.ts$/.test(f))
    .sort((a, b) => Number(/^t(\d+)/.exec(a)?.[1]) - Number(/^t(\d+)/.exec(b)?.[1]));
  const scripts: Script[] = [];
  for (const f of files) {
    const mod = (await import(join(HERE, f))) as { default: ReliabilityTest };
    if (only === undefined || only.includes(mod.default.id)) {
      scripts.push({ file: join(HERE, f), test: mod.default });
    }
  }
  return scripts;
}

/** Runs one script; a script that dies or overruns is reported as a failure. */
function runScript(s: Script, seed: number, control: string | undefined): Promise<Result> {
  const args = ["--import", "tsx", s.file, "--seed", String(seed)];
  if (quick) args.push("--quick");
  if (control !== undefined) args.push("--control", control);
  const budget = quick ? s.test.budgetMs.quick : s.test.budgetMs.full;
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.length > 1_000_000) err = err.slice(-500_000);
      if (process.env.RELIABILITY_VERBOSE) process.stderr.write(d);
    });
    // The script gets its budget plus a grace to wrap up and clean up.
    const timer = setTimeout(() => child.kill("SIGKILL"), budget + 60_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (line !== undefined) {
        resolve(JSON.parse(line.slice("RESULT ".length)) as Result);
        return;
      }
      resolve({
        id: s.test.id,
        name: s.test.name,
        seed,
        quick,
        control,
        figures: `no result (exit ${code ?? signal})`,
        violations: 1,
        details: [err.slice(-3000)],
        ms: Date.now() - started,
        ok: false,
      });
    });
  });
}

const scripts = await discover();
if (scripts.length === 0) {
  console.error(`no reliability test matches --only ${only?.join(",")}`);
  process.exit(2);
}
const startedAt = new Date();
console.log(
  `reliability battery${quick ? " (quick)" : ""}: ${scripts.map((s) => s.test.id).join(" ")}, master seed ${masterSeed}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${startedAt.toISOString()}`,
);
const results: Result[] = [];
for (const s of scripts) {
  const r = await runScript(s, rng.int(1, 2_000_000_000), undefined);
  results.push(r);
  console.log(`${r.ok ? "ok  " : "FAIL"} ${line(r)}`);
  if (!r.ok) for (const d of r.details) console.log(`     ${d.split("\n").join("\n     ")}`);
}
const controls: Result[] = [];
if (withControls) {
  console.log("\nnegative controls (each must find violations):");
  for (const s of scripts) {
    for (const c of s.test.controls) {
      const r = await runScript(s, rng.int(1, 2_000_000_000), c);
      controls.push(r);
      console.log(`${r.ok ? "ok  " : "FAIL"} ${line(r)}`);
    }
  }
  console.log("\n| rule switched off | switch | test | violations | caught |");
  console.log("|---|---|---|---|---|");
  for (const r of controls) {
    console.log(
      `| ${{ ...DEBUG_SWITCHES, ...TEST_CONTROLS }[r.control as Control] ?? r.control} | \`${r.control}\` | ${r.id} ${r.name} | ${r.violations} | ${r.ok ? "yes" : "NO"} |`,
    );
  }
}
const failed = [...results, ...controls].filter((r) => !r.ok);
mkdirSync(join(HERE, "results"), { recursive: true });
writeFileSync(
  join(HERE, "results", quick ? "quick.json" : "latest.json"),
  `${JSON.stringify({ startedAt, masterSeed, quick, node: process.version, cpus: cpus().length, results, controls }, null, 2)}\n`,
);
console.log(
  failed.length === 0
    ? `\nall ${results.length + controls.length} runs as expected`
    : `\n${failed.length} run(s) NOT as expected: ${failed.map((r) => r.id + (r.control ? `/${r.control}` : "")).join(", ")}`,
);
process.exit(failed.length === 0 ? 0 : 1);

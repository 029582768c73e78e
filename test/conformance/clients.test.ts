/**
 * One conformance suite for every client (conformance/README.md): each
 * runner (TypeScript, Python sync and asyncio, Go, Java) executes every
 * vector of conformance/vectors against a server this file starts, through
 * its own client layer, in a workspace of its own; this file restarts the
 * server when a runner asks (the restart handshake), prints a count per
 * runner, and requires every vector to pass in every runner and every
 * recorded state to be the same protobuf bytes as the TypeScript runner's.
 *
 * A runner whose toolchain is missing is skipped loudly, except under
 * CI=true (a failure there).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveRestarts } from "../harness/client-servers.js";
import { GO_CLIENT_DIR, GO_ENV, missingGoTools } from "../harness/go.js";
import { installPythonClient, missingPythonClientTools } from "../harness/python-client.js";
import { REPO, removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

const VECTORS = join(REPO, "conformance/vectors");
const inCi = process.env.CI === "true";

interface Results {
  runner: string;
  vectors: { name: string; steps: number; passed: boolean; failedStep?: number; error?: string }[];
  states: Record<string, string>;
}

interface Runner {
  name: string;
  /** Why it cannot run here, or undefined. */
  missing: () => string | undefined;
  /** The command, once its set-up is done. */
  command: (
    work: string,
  ) => Promise<{ cmd: string; args: string[]; cwd: string; env?: NodeJS.ProcessEnv }>;
}

let pythonVenv: Promise<string> | undefined;
/** One venv with the package installed, shared by both Python runners. */
function pythonClient(work: string): Promise<string> {
  pythonVenv ??= installPythonClient(join(work, "python")).then((r) => r.python);
  return pythonVenv;
}
const pythonRunner = (mode: "sync" | "async"): Runner => ({
  name: `python-${mode}`,
  missing: missingPythonClientTools,
  command: async (work) => ({
    cmd: await pythonClient(work),
    args: [join(REPO, "clients/python/tests/conformance_runner.py"), mode],
    cwd: work,
  }),
});

const RUNNERS: Runner[] = [
  {
    name: "ts",
    missing: () => undefined,
    command: async () => ({
      cmd: process.execPath,
      args: ["--import", "tsx", join(REPO, "test/conformance/clients/ts-runner.ts")],
      cwd: REPO,
    }),
  },
  pythonRunner("sync"),
  pythonRunner("async"),
  {
    name: "go",
    missing: missingGoTools,
    command: async () => ({
      cmd: "go",
      args: ["run", "./conformance"],
      cwd: GO_CLIENT_DIR,
      env: GO_ENV,
    }),
  },
  {
    name: "java",
    missing: () => {
      const probe = spawnOk("mvn", ["-B", "-v"]) && spawnOk("java", ["-version"]);
      return probe ? undefined : "java / mvn not found (Java 17 and Maven are needed)";
    },
    command: async () => ({
      cmd: "bash",
      args: [join(REPO, "clients/java/run-conformance.sh")],
      cwd: REPO,
    }),
  },
];

function spawnOk(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: "ignore", timeout: 30_000 }).status === 0;
}

let server: SessiondProcess;
let work: string;
const results = new Map<string, Results>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "sessiond-conformance-"));
  server = await startSessiond();
});
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs one runner to its end, restarting the server whenever it asks. */
async function runRunner(runner: Runner): Promise<{ code: number | null; output: string }> {
  const handshake = mkdtempSync(join(work, `restart-${runner.name}-`));
  const out = join(work, `${runner.name}.json`);
  const { cmd, args, cwd, env } = await runner.command(work);
  const child: ChildProcess = spawn(cmd, args, {
    cwd,
    env: {
      ...(env ?? process.env),
      SESSIOND_ADDR: `127.0.0.1:${server.port}`,
      CONFORMANCE_VECTORS: VECTORS,
      CONFORMANCE_WORKSPACE: `conf-${runner.name}-${Date.now().toString(36)}`,
      CONFORMANCE_OUT: out,
      SESSIOND_RESTART_DIR: handshake,
    },
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const restarts = serveRestarts(handshake, server);
  const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  const code = await exited;
  clearTimeout(timer);
  await restarts.stop();
  server = restarts.current();
  if (existsSync(out)) results.set(runner.name, JSON.parse(readFileSync(out, "utf8")) as Results);
  return { code, output };
}

describe("client conformance vectors (conformance/vectors)", () => {
  const vectorCount = readdirSync(VECTORS).filter((f) => f.endsWith(".json")).length;

  for (const runner of RUNNERS) {
    const missing = runner.missing();
    if (missing !== undefined && !inCi) {
      console.warn(`\n*** SKIPPING the ${runner.name} conformance runner: ${missing} ***\n`);
      it.skip(`${runner.name}: SKIPPED (${missing})`, () => {});
      continue;
    }
    it(`${runner.name}: every vector passes`, { timeout: 300_000 }, async () => {
      if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
      const { code, output } = await runRunner(runner);
      const r = results.get(runner.name);
      expect(r, `${runner.name} wrote no results (exit ${code}):\n${output}`).toBeDefined();
      const res = r as Results;
      const passed = res.vectors.filter((v) => v.passed).length;
      console.log(`conformance: ${runner.name} ${passed}/${res.vectors.length} vectors passed`);
      const failures = res.vectors
        .filter((v) => !v.passed)
        .map((v) => `${runner.name} / ${v.name} / step ${v.failedStep}: ${v.error}`);
      expect(failures, output).toEqual([]);
      expect(res.vectors.map((v) => v.name)).toHaveLength(vectorCount);
      expect(code, output).toBe(0);
      // Every runner folds the same states to the same bytes as the TypeScript client.
      const ts = results.get("ts");
      if (runner.name !== "ts") {
        expect(ts, "the ts runner ran first").toBeDefined();
        expect(Object.keys(res.states).sort()).toEqual(Object.keys(ts?.states ?? {}).sort());
        for (const [key, bytes] of Object.entries(res.states)) {
          expect(bytes, `${runner.name}: state ${key} differs from the ts runner's`).toBe(
            ts?.states[key],
          );
        }
      } else {
        expect(Object.keys(res.states).length).toBeGreaterThan(5);
      }
    });
  }
});

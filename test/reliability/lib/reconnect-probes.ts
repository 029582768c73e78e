/**
 * The clients of T12 (t12-reconnect.ts): long-running probe processes,
 * each one gRPC channel calling Health/Check every 100 ms, that print
 * `UP <unix ms>` / `DOWN <unix ms> <error>` when their calls start or stop
 * succeeding. grpcio from the test venv (test/harness/python.ts), on its
 * default EventEngine client and on grpc-core's older iomgr poller (what
 * grpcio 1.51 uses), and grpc-go built from reconnect-probe.go against the
 * versions clients/go pins.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GO_ENV, goUserModule, missingGoTools } from "../../harness/go.js";
import { missingPythonTools, PYTHON } from "../../harness/python.js";

/** One kind of client and how soon after the server listens it must be connected again. */
export interface ProbeKind {
  readonly name: string;
  readonly boundMs: number;
}

export interface Probe {
  readonly kind: ProbeKind;
  /** Unix ms of each transition, in order. */
  readonly ups: number[];
  readonly downs: number[];
  stop(): void;
}

/** Why the probes cannot run here, or undefined. */
export function missingProbeTools(): string | undefined {
  return missingPythonTools() ?? missingGoTools();
}

function watch(kind: ProbeKind, proc: ChildProcess, log: (line: string) => void): Probe {
  const probe: Probe = { kind, ups: [], downs: [], stop: () => proc.kill("SIGKILL") };
  let rest = "";
  proc.stdout?.on("data", (d: Buffer) => {
    const lines = (rest + d.toString()).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      const [what, at] = line.split(" ");
      if (what === "UP") probe.ups.push(Number(at));
      else if (what === "DOWN") probe.downs.push(Number(at));
      log(`${kind.name}: ${line}`);
    }
  });
  proc.stderr?.on("data", (d: Buffer) => log(`${kind.name} stderr: ${d.toString().trim()}`));
  return probe;
}

/** A grpcio probe; `iomgr` runs grpc-core's older poller instead of the EventEngine client. */
export function grpcioProbe(
  kind: ProbeKind,
  port: number,
  backoff: "default" | "short",
  iomgr: boolean,
  log: (line: string) => void,
): Probe {
  const env = { ...process.env, ...(iomgr ? { GRPC_EXPERIMENTS: "-event_engine_client" } : {}) };
  const script = join(import.meta.dirname, "reconnect_probe.py");
  const proc = spawn(PYTHON, ["-u", script, String(port), backoff], { env, stdio: "pipe" });
  return watch(kind, proc, log);
}

/** Builds the grpc-go probe once; returns its binary and a cleanup. */
export function buildGoProbe(): { binary: string; remove(): void } {
  const mod = goUserModule();
  mod.writeMain("probe", readFileSync(join(import.meta.dirname, "reconnect-probe.go"), "utf8"));
  const binary = join(mod.dir, "probe-bin");
  const built = spawnSync("go", ["build", "-o", binary, "./probe"], {
    cwd: mod.dir,
    env: GO_ENV,
    encoding: "utf8",
    timeout: 300_000,
  });
  if (built.status !== 0) throw new Error(`go build of the probe failed:\n${built.stderr}`);
  return { binary, remove: mod.remove };
}

export function goProbe(
  kind: ProbeKind,
  binary: string,
  port: number,
  log: (line: string) => void,
): Probe {
  return watch(kind, spawn(binary, [String(port)], { stdio: "pipe" }), log);
}

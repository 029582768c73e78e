import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");
const TSX = ["--import", "tsx"];

/**
 * Runs a TypeScript client script in its own process (clients never share
 * a process with the server they measure) and returns the JSON object it
 * prints as its last stdout line.
 */
export async function runClient<T>(
  script: string,
  args: Record<string, unknown>,
  timeoutMs = 600_000,
  env: NodeJS.ProcessEnv = {},
): Promise<T> {
  const child = spawn(
    process.execPath,
    [...TSX, join(REPO, "bench", script), JSON.stringify(args)],
    {
      cwd: REPO,
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)));
  clearTimeout(timer);
  const last = out.trim().split("\n").pop() ?? "";
  if (code !== 0) throw new Error(`${script} exited with ${code}: ${out.slice(-2000)}`);
  return JSON.parse(last) as T;
}

export interface ServerProcess {
  url: string;
  pid: number;
  proc: ChildProcess;
  /** The last ~4,000 characters the process wrote on stderr (sessiond: request log lines). */
  stderrTail(): string;
  stop(): Promise<void>;
}

/**
 * Starts a server process that prints "listening on <url>," on stdout:
 * `sessiond serve` (bin/sessiond.js) or the echo baseline.
 */
export async function startProcess(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ServerProcess> {
  const proc = spawn(process.execPath, argv, {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => {
    // Request logs are one line per call: keep only the tail for errors.
    err = (err + d.toString()).slice(-4000);
  });
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start: ${out} ${err}`)), 60_000);
    proc.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+?),/.exec(out);
      if (m) {
        clearTimeout(timer);
        done(m[1] as string);
      }
    });
    proc.once("exit", (c) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${c}: ${out} ${err}`));
    });
  });
  const exited = new Promise<void>((done) => proc.once("exit", () => done()));
  return {
    url,
    pid: proc.pid as number,
    proc,
    stderrTail: () => err,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `sessiond serve` on a free loopback port; request logs discarded. */
export function startSessiond(args: string[]): Promise<ServerProcess> {
  return startProcess([join(REPO, "bin/sessiond.js"), "serve", "--listen", "127.0.0.1:0", ...args]);
}

/** The echo baseline: the same connect-node stack doing no work. */
export function startEcho(): Promise<ServerProcess> {
  return startProcess([...TSX, join(REPO, "bench/echo-server.ts")]);
}

/**
 * The native-gRPC baseline: a bare @grpc/grpc-js server doing no work
 * (`--durable <dir>`: it also answers CreateSession, and Append with a
 * write + fdatasync of the request's bytes).
 */
export function startGrpcEcho(args: string[] = []): Promise<ServerProcess> {
  return startProcess([...TSX, join(REPO, "bench/grpc-echo-server.ts"), ...args]);
}

/** Resident and peak resident memory of a process, bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) =>
    Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Resets the peak-RSS counter of a process (Linux: write 5 to clear_refs). */
export function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // Not supported: the peak then covers the whole life of the process.
  }
}

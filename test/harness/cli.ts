/**
 * Running the `sessiond` command as a user does, for process-level CLI
 * tests: a child process whose stdout, stderr and exit code are checked.
 * Both stdout and stderr are pipes, as in a script; the environment's
 * SESSIOND_URL / SESSIOND_TOKEN are cleared so a test names its server.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { BIN, REPO } from "./server.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Written to stdin, which is then closed. */
  input?: string;
  /** Killed (and the promise rejected) after this long; default 20 s. */
  timeoutMs?: number;
  /** Extra environment. */
  env?: Record<string, string>;
}

function spawnCli(args: readonly string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: REPO,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, SESSIOND_URL: "", SESSIOND_TOKEN: "", NO_COLOR: "1", ...env },
  });
}

/** Runs `sessiond ARGS` to completion. */
export function runCli(args: readonly string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((done, fail) => {
    const proc = spawnCli(args, opts.env);
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      fail(new Error(`sessiond ${args.join(" ")} timed out\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 20_000);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    proc.stdin.end(opts.input ?? "");
  });
}

/** A `sessiond` process that keeps running (e.g. `tail -f`), watched as it prints. */
export interface RunningCli {
  readonly proc: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr matches; rejects after `timeoutMs` with what was printed. */
  waitForStderr(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `sessiond ARGS` without waiting for it to end. */
export function startCli(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  const proc = spawnCli(args, env);
  proc.stdin.end();
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  proc.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((done) => proc.once("exit", done));
  return {
    proc,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForStderr(pattern, timeoutMs) {
      return new Promise((done, fail) => {
        const check = () => {
          const m = pattern.exec(stderr);
          if (m === null) return;
          clearTimeout(timer);
          proc.stderr.off("data", check);
          done(m);
        };
        const timer = setTimeout(() => {
          proc.stderr.off("data", check);
          fail(new Error(`sessiond ${args.join(" ")} never printed ${pattern}:\n${stderr}`));
        }, timeoutMs);
        proc.stderr.on("data", check);
        check();
      });
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      return exited;
    },
  };
}

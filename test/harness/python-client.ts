/**
 * The Python client package (clients/python) as a user installs it: with pip
 * into a fresh venv on the machine's python3, its dependencies from PyPI at
 * the lowest versions it declares (clients/python/constraints.txt); and a
 * runner for its unittest suite that can stop and start the server under
 * test when the suite asks (clients/python/tests/support.py:
 * `SESSIOND-CONTROL <command>` on stdout, answered by one line on stdin).
 * Also the developer's side: a venv with clients/python/requirements-dev.txt
 * (mypy and the type stubs, build), the wheel and the sdist `python -m build`
 * makes, and a fresh venv with the wheel installed.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { REPO } from "./server.js";

const run = promisify(execFile);

export const PYTHON_CLIENT_DIR = join(REPO, "clients/python");
/** The interpreter venvs are made from: the machine's python3 (3.10 or newer). */
export const SYSTEM_PYTHON = "python3";

/** What installing the package needs: python3 (3.10+) with venv and ensurepip. */
export function missingPythonClientTools(): string | undefined {
  const probe =
    "import sys, venv, ensurepip; ensurepip.version(); assert sys.version_info >= (3, 10)";
  try {
    execFileSync(SYSTEM_PYTHON, ["-c", probe], { stdio: "ignore", timeout: 15_000 });
    return undefined;
  } catch {
    return `${SYSTEM_PYTHON} (3.10 or newer, with venv and ensurepip) not found`;
  }
}

/** The install arguments (pip install ...), run from a copy of the repository root. */
export const INSTALL_ARGS = ["install", "--disable-pip-version-check", "--quiet"];

/**
 * Makes a fresh venv in `dir` and installs the package into it with pip
 * (build isolation, dependencies from PyPI under constraints.txt). It installs
 * from a copy of clients/python: pip builds a local project in place, and
 * its build/ and *.egg-info must not land in the working tree. Returns the
 * venv's python.
 */
export async function installPythonClient(dir: string): Promise<{ python: string; log: string }> {
  const src = copyPythonClient(join(dir, "src"));
  const python = await makeVenv(join(dir, "venv"));
  const { stdout, stderr } = await pip(python, ["-c", join(src, "constraints.txt"), src]);
  return { python, log: stdout + stderr };
}

/**
 * Copies clients/python to `dest`, without what builds leave (build/, dist/,
 * *.egg-info, caches): setuptools writes build/ and src/*.egg-info next to
 * the sources it builds, which must never be the working tree. Returns `dest`.
 */
export function copyPythonClient(dest: string): string {
  cpSync(PYTHON_CLIENT_DIR, dest, {
    recursive: true,
    filter: (p) => !/(__pycache__|\.egg-info|\.mypy_cache|[/\\]build|[/\\]dist)$/.test(p),
  });
  return dest;
}

/** A fresh venv on the machine's python3; returns its python. */
export async function makeVenv(venv: string): Promise<string> {
  await run(SYSTEM_PYTHON, ["-m", "venv", venv], { timeout: 60_000 });
  return join(venv, "bin/python");
}

/** `pip install` into the venv of `python` (quiet, no version check, no prompts). */
function pip(
  python: string,
  args: string[],
  timeoutMs = 300_000,
): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1" };
  return run(python, ["-m", "pip", ...INSTALL_ARGS, ...args], {
    timeout: timeoutMs,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Makes a fresh venv in `dir` with the package and one of its SDK extras
 * (`clients/python[extra]`, the SDK at the version
 * clients/python/requirements-<extra>.txt pins), from a copy of the package
 * as installPythonClient does; with `constraints`, grpcio and protobuf at the
 * floor constraints.txt names. Returns the venv's python.
 */
export async function installPythonExtra(
  dir: string,
  extra: string,
  opts: { constraints: boolean; timeoutMs: number },
): Promise<string> {
  const reuse = process.env.SESSIOND_TEST_VENV_REUSE;
  if (reuse !== undefined && reuse !== "") return reusedPythonExtra(reuse, extra, opts);
  return freshPythonExtra(dir, extra, opts);
}

async function freshPythonExtra(
  dir: string,
  extra: string,
  opts: { constraints: boolean; timeoutMs: number },
): Promise<string> {
  const src = copyPythonClient(join(dir, "src"));
  const python = await makeVenv(join(dir, "venv"));
  const floor = opts.constraints ? ["-c", join(src, "constraints.txt")] : [];
  const pinned = ["-r", join(src, `requirements-${extra}.txt`)];
  await pip(python, [...floor, ...pinned, `${src}[${extra}]`], opts.timeoutMs);
  return python;
}

/**
 * SESSIOND_TEST_VENV_REUSE=DIR (set by .ci/run): the first install of an
 * extra from the current clients/python is made fresh, as without it, but
 * under DIR, and a later one of the same extra from the same files reuses
 * it. CI runs the SDK suites twice, on JSONL (npm test) and on PostgreSQL
 * (test:integration:pg): the second install of the same sources proved
 * nothing the first did not, and cost 25-40 s per SDK.
 */
async function reusedPythonExtra(
  cacheDir: string,
  extra: string,
  opts: { constraints: boolean; timeoutMs: number },
): Promise<string> {
  const key = createHash("sha256").update(`${extra} ${opts.constraints}\n`);
  const copied = copyPythonClient(join(cacheDir, `src-${extra}-${process.pid}`));
  for (const f of filesUnder(copied).sort()) {
    key.update(`${relative(copied, f)}\n`).update(readFileSync(f));
  }
  rmSync(copied, { recursive: true, force: true });
  const dir = join(cacheDir, `${extra}-${key.digest("hex").slice(0, 16)}`);
  if (existsSync(join(dir, "ready"))) {
    console.log(`python ${extra}: reusing the venv installed earlier in this run (${dir})`);
    return join(dir, "venv/bin/python");
  }
  rmSync(dir, { recursive: true, force: true });
  const python = await freshPythonExtra(dir, extra, opts);
  writeFileSync(join(dir, "ready"), `${new Date().toISOString()}\n`);
  return python;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** A venv with clients/python/requirements-dev.txt (mypy, the type stubs, build); returns its python. */
export async function installPythonDevTools(dir: string): Promise<string> {
  const python = await makeVenv(join(dir, "dev-venv"));
  await pip(python, ["-r", join(PYTHON_CLIENT_DIR, "requirements-dev.txt")]);
  return python;
}

/**
 * `mypy` as clients/python/pyproject.toml configures it (strict, src and
 * tests), and `--strict` besides, run in clients/python with its cache in
 * `cacheDir` (so nothing is written into the working tree).
 */
export async function runMypy(
  devPython: string,
  cacheDir: string,
): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(
      devPython,
      ["-m", "mypy", "--strict", "--cache-dir", cacheDir],
      { cwd: PYTHON_CLIENT_DIR, timeout: 300_000 },
    );
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    return {
      code: typeof e.code === "number" ? e.code : -1,
      output: `${e.stdout ?? ""}${e.stderr ?? e.message}`,
    };
  }
}

/**
 * `python -m build` (isolated, setuptools from PyPI) of a copy of
 * clients/python into `outDir`: the sdist, then the wheel built from it.
 */
export async function buildPythonClient(
  devPython: string,
  dir: string,
  outDir: string,
): Promise<{ wheel: string; sdist: string; log: string }> {
  const src = copyPythonClient(join(dir, "build-src"));
  const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1" };
  const { stdout, stderr } = await run(devPython, ["-m", "build", "--outdir", outDir, src], {
    timeout: 300_000,
    env,
  });
  const files = readdirSync(outDir);
  const wheel = files.find((f) => f.endsWith(".whl"));
  const sdist = files.find((f) => f.endsWith(".tar.gz"));
  if (!wheel || !sdist)
    throw new Error(`python -m build made ${files.join(", ")}:\n${stdout}${stderr}`);
  return { wheel: join(outDir, wheel), sdist: join(outDir, sdist), log: stdout + stderr };
}

/** A fresh venv with `wheel` installed (its dependencies the newest in range); returns its python. */
export async function installPythonWheel(dir: string, wheel: string): Promise<string> {
  const python = await makeVenv(join(dir, "wheel-venv"));
  await pip(python, [wheel]);
  return python;
}

export interface UnittestSummary {
  ran: number;
  ok: boolean;
  failures: number;
  errors: number;
  skipped: number;
}

/** Parses the end of `python -m unittest` output ("Ran N tests", "OK (skipped=K)"). */
export function parseUnittest(output: string): UnittestSummary | undefined {
  const ran = /^Ran (\d+) tests? in /m.exec(output);
  const verdict = /^(OK|FAILED)(?: \(([^)]*)\))?\s*$/m.exec(output.slice(ran?.index ?? 0));
  if (!ran || !verdict) return undefined;
  const count = (name: string) =>
    Number(new RegExp(`${name}=(\\d+)`).exec(verdict[2] ?? "")?.[1] ?? 0);
  return {
    ran: Number(ran[1]),
    ok: verdict[1] === "OK",
    failures: count("failures"),
    errors: count("errors"),
    skipped: count("skipped"),
  };
}

export interface RunOptions {
  python: string;
  /** The suite's directory under clients/python (default `tests`; the SDK suites have their own). */
  suite?: string;
  /** Environment for the suite (SESSIOND_URL, ...). */
  env: Record<string, string>;
  /** Handles `SESSIOND-CONTROL <command>`; a throw answers with the error. */
  control?: (command: string) => Promise<void>;
  timeoutMs: number;
}

/** Runs a suite of clients/python (`tests`) with unittest; resolves with its output when it exits. */
export function runPythonClientTests(
  opts: RunOptions,
): Promise<{ code: number | null; stdout: string; stderr: string; controls: string[] }> {
  const tests = join(PYTHON_CLIENT_DIR, opts.suite ?? "tests");
  const proc = spawn(opts.python, ["-m", "unittest", "discover", "-v", "-s", tests, "-t", tests], {
    cwd: join(opts.python, "../.."), // not the repo: the package must come from the venv
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1", ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let pending = "";
  const controls: string[] = [];
  let chain = Promise.resolve();
  proc.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  proc.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    pending += d.toString();
    let nl = pending.indexOf("\n");
    while (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const m = /^SESSIOND-CONTROL (\S+)$/.exec(line.trim());
      if (m) {
        const command = m[1] as string;
        controls.push(command);
        chain = chain.then(async () => {
          let answer = "ok";
          try {
            if (!opts.control) throw new Error("no control handler");
            await opts.control(command);
          } catch (err) {
            answer = `error: ${(err as Error).message.replace(/\s+/g, " ")}`;
          }
          if (proc.exitCode === null) proc.stdin.write(`${answer}\n`);
        });
      }
      nl = pending.indexOf("\n");
    }
  });
  proc.stdin.on("error", () => {}); // the suite may exit before an answer arrives
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`python tests timed out after ${opts.timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, opts.timeoutMs);
    proc.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      chain.then(() => resolve({ code, stdout, stderr, controls }));
    });
  });
}

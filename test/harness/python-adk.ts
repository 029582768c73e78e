/**
 * The Python client with its `adk` extra (clients/python[adk], google-adk
 * pinned by clients/python/requirements-adk.txt) in a fresh venv, and a
 * runner for its ADK suite (clients/python/tests_adk). Built on
 * harness/python-client.ts: the same copy of the package, the same venv,
 * the same pip arguments. The bench keeps one such venv in a cache
 * (`cachedPythonAdk`).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { copyPythonClient, INSTALL_ARGS, makeVenv, PYTHON_CLIENT_DIR } from "./python-client.js";

const run = promisify(execFile);

/** Installs `clients/python[adk]` and the pinned SDK into a fresh venv under `dir`; returns its python. */
export async function installPythonAdk(dir: string): Promise<string> {
  const src = copyPythonClient(join(dir, "src"));
  const python = await makeVenv(join(dir, "venv"));
  const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1" };
  const args = [
    "-m",
    "pip",
    ...INSTALL_ARGS,
    `${src}[adk]`,
    "-r",
    join(src, "requirements-adk.txt"),
  ];
  await run(python, args, { timeout: 600_000, env, maxBuffer: 16 * 1024 * 1024 });
  return python;
}

/**
 * A venv with clients/python[adk] and the pinned google-adk, built once
 * under `cacheDir` and reused while clients/python/pyproject.toml and
 * requirements-adk.txt are unchanged (installing google-adk takes minutes).
 * The venv's copy of the package may be older than the working tree: run
 * with `pythonAdkEnv()` so that the working tree's sources are imported.
 * Returns the venv's python.
 */
export async function cachedPythonAdk(cacheDir: string): Promise<string> {
  const key = createHash("sha256");
  for (const f of ["pyproject.toml", "requirements-adk.txt"])
    key.update(readFileSync(join(PYTHON_CLIENT_DIR, f)));
  const dir = join(cacheDir, `python-adk-${key.digest("hex").slice(0, 12)}`);
  const ready = join(dir, "ready");
  if (existsSync(ready)) return join(dir, "venv/bin/python");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const python = await installPythonAdk(dir);
  writeFileSync(ready, `${new Date().toISOString()}\n`);
  return python;
}

/** The environment that makes a venv's python import sessiond from the working tree (and write no bytecode there). */
export function pythonAdkEnv(): Record<string, string> {
  return { PYTHONPATH: join(PYTHON_CLIENT_DIR, "src"), PYTHONDONTWRITEBYTECODE: "1" };
}

/** Runs clients/python/tests_adk with unittest from outside the repository; resolves with its output. */
export async function runPythonAdkTests(
  python: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const tests = join(PYTHON_CLIENT_DIR, "tests_adk");
  try {
    const { stdout, stderr } = await run(
      python,
      ["-m", "unittest", "discover", "-v", "-s", tests, "-t", tests],
      {
        cwd: join(python, "../.."), // not the repo: the package must come from the venv
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", ...env },
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    return {
      code: typeof e.code === "number" ? e.code : -1,
      stdout: e.stdout ?? "",
      stderr: e.stderr ?? e.message,
    };
  }
}

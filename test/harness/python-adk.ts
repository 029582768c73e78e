/**
 * The Python client with its `adk` extra (clients/python[adk], google-adk
 * pinned by clients/python/requirements-adk.txt) in a fresh venv, and a
 * runner for its ADK suite (clients/python/tests_adk). Built on
 * harness/python-client.ts: the same copy of the package, the same venv,
 * the same pip arguments.
 */
import { execFile } from "node:child_process";
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

/**
 * The Python client with its `adk` extra (clients/python[adk], google-adk
 * pinned by clients/python/requirements-adk.txt) in a fresh venv
 * (harness/python-client.ts: installPythonExtra; its suite runs with
 * runPythonClientTests). The bench keeps one such venv in a cache
 * (`cachedPythonAdk`).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installPythonExtra, PYTHON_CLIENT_DIR } from "./python-client.js";

/** Installs `clients/python[adk]` and the pinned SDK into a fresh venv under `dir`; returns its python. */
export function installPythonAdk(dir: string): Promise<string> {
  return installPythonExtra(dir, "adk", { constraints: false, timeoutMs: 600_000 });
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

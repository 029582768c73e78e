/**
 * The Google ADK adapter of the Python client (sessiond.adk), as a user
 * gets it: clients/python installed with its `adk` extra and the pinned
 * google-adk (requirements-adk.txt) into a fresh venv, then its suite
 * (clients/python/tests_adk) against a live server: ADK's Runner over
 * SessiondSessionService equal to InMemorySessionService across an agent
 * restart, the two-writer conflict and its negative control, the event
 * mapping, the state scopes, fork / rewind / watch. Runs on JSONL, and on
 * PostgreSQL with SESSIOND_TEST_STORAGE=postgres. Then the README's ADK
 * example (a Runner turn with a scripted model, stored in sessiond and read
 * back) runs in the same venv and must print what the README says.
 *
 * Without python3 (3.10+) the test is skipped loudly, except under CI=true.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { installPythonAdk, runPythonAdkTests } from "../harness/python-adk.js";
import {
  missingPythonClientTools,
  PYTHON_CLIENT_DIR,
  parseUnittest,
} from "../harness/python-client.js";
import { readmeExample } from "../harness/readme-example.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

const run = promisify(execFile);

/** Tests in clients/python/tests_adk: update when adding one (a lost test file would go unnoticed). */
const ADK_TESTS = 27;

const missing = missingPythonClientTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python ADK adapter test: ${missing} ***\n`);
}

describe("Python ADK adapter (sessiond.adk)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("installs with the adk extra and passes its suite under ADK's Runner against a live server", {
    timeout: 900_000,
  }, async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const dir = mkdtempSync(join(tmpdir(), "sessiond-pyadk-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const external = process.env.SESSIOND_URL;
    const installing = installPythonAdk(dir);
    let server: SessiondProcess | undefined;
    if (!external) {
      server = await startSessiond();
      cleanups.push(async () => {
        await server?.stop();
        if (server) await removeDataDir(server.dataDir);
      });
    }
    const python = await installing;
    const url = external ?? (server as SessiondProcess).url;
    const result = await runPythonAdkTests(python, { SESSIOND_URL: url }, 600_000);
    const summary = parseUnittest(result.stderr);
    expect(summary, result.stderr.slice(-4000)).toBeDefined();
    expect({ ...summary, tail: summary?.ok ? "" : result.stderr.slice(-4000) }).toEqual({
      ran: ADK_TESTS,
      ok: true,
      failures: 0,
      errors: 0,
      skipped: 0,
      tail: "",
    });
    expect(result.code).toBe(0);

    const example = readmeExample(
      readFileSync(join(PYTHON_CLIENT_DIR, "README.md"), "utf8"),
      "Google ADK",
    );
    if (example === undefined)
      throw new Error("no Google ADK example with its output in the README");
    expect(example.code).toContain('"http://127.0.0.1:50051"');
    writeFileSync(join(dir, "example.py"), example.code.replace("http://127.0.0.1:50051", url));
    const printed = await run(python, [join(dir, "example.py")], {
      cwd: dir, // not the repo: the package must come from the venv
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 60_000,
    });
    expect(printed.stdout).toBe(example.printed);
  });
});

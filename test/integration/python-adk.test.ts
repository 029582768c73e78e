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
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installPythonAdk } from "../harness/python-adk.js";
import {
  missingPythonClientTools,
  parseUnittest,
  runPythonClientTests,
} from "../harness/python-client.js";
import { runReadmeExample } from "../harness/readme-example.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/** Tests in clients/python/tests_adk: update when adding one (a lost test file would go unnoticed). */
const ADK_TESTS = 32;

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
    const result = await runPythonClientTests({
      python,
      suite: "tests_adk",
      env: { SESSIOND_URL: url },
      timeoutMs: 600_000,
    });
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

    const example = await runReadmeExample(python, dir, "Google ADK", url);
    expect(example.stdout).toBe(example.printed);
  });
});

/**
 * The OpenAI Agents SDK adapter of the Python client (sessiond.openai_agents),
 * as a user installs it: the package with its `[openai-agents]` extra into a
 * fresh venv, the SDK at the version pinned in
 * clients/python/requirements-openai-agents.txt, grpcio and protobuf at the
 * floor (constraints.txt). Its unittest suite (clients/python/tests_openai_agents:
 * under the SDK's Runner and ScriptedModel, equal to SQLiteSession across an
 * agent process restart, and the adapter's rules) runs against a server
 * started here (JSONL, or PostgreSQL with SESSIOND_TEST_STORAGE=postgres);
 * then the README's example runs and prints what the README says.
 *
 * Without python3 (3.10+) the test is skipped loudly, except under CI=true.
 */

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  installPythonExtra,
  missingPythonClientTools,
  PYTHON_CLIENT_DIR,
  parseUnittest,
  runPythonClientTests,
} from "../harness/python-client.js";
import { runReadmeExample } from "../harness/readme-example.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

const run = promisify(execFile);

/** Tests in clients/python/tests_openai_agents: update when adding one. */
const TESTS = 28;

const missing = missingPythonClientTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python OpenAI Agents adapter test: ${missing} ***\n`);
}

describe("Python OpenAI Agents adapter (sessiond.openai_agents)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }

  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("installs with the [openai-agents] extra and passes its suite under the SDK's Runner", {
    timeout: 420_000,
  }, async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const dir = mkdtempSync(join(tmpdir(), "sessiond-py-openai-agents-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const server: SessiondProcess = await startSessiond();
    cleanups.push(async () => {
      await server.stop();
      await removeDataDir(server.dataDir);
    });

    const python = await installPythonExtra(dir, "openai-agents", {
      constraints: true,
      timeoutMs: 300_000,
    });
    const sdk = await run(python, ["-c", "import agents; print(agents.__version__)"], { cwd: dir });
    const pinned = /^openai-agents==(\S+)$/m.exec(
      readFileSync(join(PYTHON_CLIENT_DIR, "requirements-openai-agents.txt"), "utf8"),
    )?.[1];
    expect(sdk.stdout.trim()).toBe(pinned);

    const result = await runPythonClientTests({
      python,
      suite: "tests_openai_agents",
      env: { SESSIOND_URL: server.url },
      timeoutMs: 300_000,
    });
    const output = result.stderr + result.stdout;
    const summary = parseUnittest(output);
    expect(summary, output).toBeDefined();
    expect(summary?.ok, output).toBe(true);
    expect(result.code, output).toBe(0);
    expect(summary?.failures).toBe(0);
    expect(summary?.errors).toBe(0);
    expect(summary?.skipped, output).toBe(0);
    expect(summary?.ran, output).toBe(TESTS);

    const example = await runReadmeExample(python, dir, "OpenAI Agents SDK", server.url);
    expect(example.stdout).toBe(example.printed);
    console.log(
      `python openai-agents: ${summary?.ran} tests passed with openai-agents ${pinned} on ${server.url}; the README example printed what it says`,
    );
  });
});

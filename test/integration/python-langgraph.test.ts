/**
 * The LangGraph checkpointer of the Python client (sessiond.langgraph), as a
 * user installs it: the package with its `[langgraph]` extra into a fresh
 * venv, langgraph-checkpoint, langgraph and langgraph-checkpoint-conformance
 * at the versions clients/python/requirements-langgraph.txt pins, grpcio
 * and protobuf at the floor (constraints.txt). Its unittest suite
 * (clients/python/tests_langgraph: every base case of LangGraph's
 * conformance suite on the async and the sync client and the suite's own
 * verdict; a graph with a scripted model, a tool and a human interrupt equal
 * to InMemorySaver through a resume in a new process, a time-travel fork and
 * an update_state fork; two writers; the mapping) runs against a server
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

/**
 * Tests in clients/python/tests_langgraph: update when adding one. 117 are
 * the conformance suite's (58 base cases on two clients, and its verdict).
 */
const TESTS = 132;

const missing = missingPythonClientTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python LangGraph checkpointer test: ${missing} ***\n`);
}

describe("Python LangGraph checkpointer (sessiond.langgraph)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }

  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("installs with the [langgraph] extra and passes LangGraph's conformance suite and its graph tests", {
    timeout: 600_000,
  }, async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const dir = mkdtempSync(join(tmpdir(), "sessiond-py-langgraph-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const server: SessiondProcess = await startSessiond();
    cleanups.push(async () => {
      await server.stop();
      await removeDataDir(server.dataDir);
    });

    const python = await installPythonExtra(dir, "langgraph", {
      constraints: true,
      timeoutMs: 400_000,
    });
    const probe = [
      "from importlib.metadata import version",
      "print(' '.join(version(p) for p in ('langgraph-checkpoint', 'langgraph', 'langgraph-checkpoint-conformance')))",
    ].join("\n");
    const installed = await run(python, ["-c", probe], { cwd: dir });
    const pins = readFileSync(join(PYTHON_CLIENT_DIR, "requirements-langgraph.txt"), "utf8");
    const pinned = ["langgraph-checkpoint", "langgraph", "langgraph-checkpoint-conformance"].map(
      (p) => new RegExp(`^${p}==(\\S+)$`, "m").exec(pins)?.[1],
    );
    expect(installed.stdout.trim()).toBe(pinned.join(" "));

    const result = await runPythonClientTests({
      python,
      suite: "tests_langgraph",
      env: { SESSIOND_URL: server.url },
      timeoutMs: 400_000,
    });
    const output = result.stderr + result.stdout;
    const summary = parseUnittest(output);
    expect(summary, output.slice(-6000)).toBeDefined();
    expect({ ...summary, tail: summary?.ok ? "" : output.slice(-6000) }).toEqual({
      ran: TESTS,
      ok: true,
      failures: 0,
      errors: 0,
      skipped: 0,
      tail: "",
    });
    expect(result.code, output.slice(-6000)).toBe(0);

    const example = await runReadmeExample(python, dir, "LangGraph", server.url);
    expect(example.stdout).toBe(example.printed);
    console.log(
      `python langgraph: ${summary?.ran} tests passed (the conformance suite's 58 base cases on two clients) with ${pinned.join(" / ")} on ${server.url}; the README example printed what it says`,
    );
  });
});

/**
 * The Python client package (clients/python), as a user gets it: installed
 * with pip into a fresh venv (grpcio and protobuf from PyPI, at the lowest
 * versions it declares: constraints.txt), then its unittest suite
 * (clients/python/tests) runs against live servers: the server under test,
 * which the suite stops and restarts through the control protocol of
 * harness/python-client.ts (retry across an outage, watch resume across a
 * restart), one with bearer tokens and one with TLS.
 *
 * Without python3 (3.10+) the test is skipped loudly, except under CI=true
 * (a failure there).
 */

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { makeCertificates } from "../harness/certs.js";
import {
  installPythonClient,
  missingPythonClientTools,
  PYTHON_CLIENT_DIR,
  parseUnittest,
  runPythonClientTests,
} from "../harness/python-client.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

const run = promisify(execFile);

/** Tests in clients/python/tests: update when adding one (a lost test file would go unnoticed). */
const PYTHON_TESTS = 49;
/** Of those, the ones that restart the server (skipped against an external one). */
const RESTART_TESTS = 3;

const missing = missingPythonClientTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python client package test: ${missing} ***\n`);
}

describe("Python client package (clients/python)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }

  const cleanups: Array<() => Promise<unknown> | undefined> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("installs with pip into a fresh venv and passes its unittest suite against live servers", {
    timeout: 110_000,
  }, async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const dir = mkdtempSync(join(tmpdir(), "sessiond-pyclient-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));

    const installing = installPythonClient(dir);
    installing.catch(() => {}); // awaited below

    const external = process.env.SESSIOND_URL;
    let server: SessiondProcess | undefined;
    if (!external) {
      server = await startSessiond();
      cleanups.push(async () => {
        await server?.stop();
        if (server) await removeDataDir(server.dataDir);
      });
    }

    const token = "python-client-token-0123456789abcdef";
    writeFileSync(
      join(dir, "tokens.json"),
      JSON.stringify({ tokens: [{ token, workspaces: ["*"] }] }),
    );
    const certs = makeCertificates(dir);
    const [auth, tls] = await Promise.all([
      startSessiond({ args: ["--auth-tokens", join(dir, "tokens.json"), "--storage", "memory"] }),
      startSessiond({
        args: ["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--storage", "memory"],
      }),
    ]);
    for (const s of [auth, tls]) {
      cleanups.push(async () => {
        await s.stop();
        await removeDataDir(s.dataDir);
      });
    }
    expect(tls.url.startsWith("https://")).toBe(true);

    let python: string;
    try {
      ({ python } = await installing);
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`pip install failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
    }

    // The venv imports the installed copy, not the source tree.
    const where = await run(
      python,
      ["-c", "import sessiond.v1.session_service_pb2_grpc as g; print(g.__file__)"],
      { cwd: dir },
    );
    expect(where.stdout.startsWith(join(dir, "venv"))).toBe(true);

    const control = async (command: string) => {
      if (server === undefined) throw new Error("an external server cannot be restarted");
      const { dataDir, port } = server;
      if (!["stop", "start", "restart", "crash"].includes(command)) {
        throw new Error(`unknown command ${command}`);
      }
      if (command === "crash") await server.kill9();
      else if (command !== "start") await server.stop();
      if (command !== "stop") server = await startSessiond({ dataDir, port });
    };

    const env: Record<string, string> = {
      SESSIOND_URL: external ?? (server as SessiondProcess).url,
      SESSIOND_AUTH_URL: auth.url,
      SESSIOND_AUTH_TOKEN: token,
      SESSIOND_TLS_URL: tls.url,
      SESSIOND_TLS_CA: certs.ca,
    };
    if (!external) env.SESSIOND_CONTROL = "stdio";
    const result = await runPythonClientTests({ python, env, control, timeoutMs: 90_000 });
    const summary = parseUnittest(result.stderr);
    const output = `${result.stderr}\n${result.stdout}`;
    expect(summary, output).toBeDefined();
    expect(summary?.ok, output).toBe(true);
    expect(result.code, output).toBe(0);
    expect(summary?.failures).toBe(0);
    expect(summary?.errors).toBe(0);
    if (external) {
      // unittest reports a module skipped in setUpModule as one skip, not as a test run.
      expect(summary?.ran).toBe(PYTHON_TESTS - RESTART_TESTS);
      expect(summary?.skipped).toBe(1);
      console.warn(
        "\n*** SESSIOND_URL is external: the Python restart tests were skipped (they need a server this process can restart) ***\n",
      );
    } else {
      expect(summary?.ran, output).toBe(PYTHON_TESTS);
      expect(summary?.skipped, output).toBe(0);
      expect(result.controls).toEqual(["stop", "start", "crash", "restart"]);
    }

    // The README's example, as written but for the address, prints what the README says.
    const readme = readFileSync(join(PYTHON_CLIENT_DIR, "README.md"), "utf8");
    const example = /```python\n([\s\S]*?)```/.exec(readme)?.[1];
    const printed = /\nprints\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example?.split("\n").filter((l) => l !== "").length).toBeLessThanOrEqual(10);
    expect(example).toContain('"http://127.0.0.1:50051"');
    const script = (example as string).replace(
      "http://127.0.0.1:50051",
      env.SESSIOND_URL as string,
    );
    writeFileSync(join(dir, "example.py"), script);
    const { stdout } = await run(python, [join(dir, "example.py")], { cwd: dir, timeout: 30_000 });
    expect(stdout).toBe(printed);

    console.log(
      `python client: ${summary?.ran} unittest tests passed (${summary?.skipped} skipped) against ${env.SESSIOND_URL}`,
    );
  });
});

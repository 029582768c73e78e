/**
 * The Python client package (clients/python), as a user gets it: installed
 * with pip into a fresh venv (grpcio and protobuf from PyPI, at the lowest
 * versions it declares: constraints.txt), then its unittest suite
 * (clients/python/tests: SessiondClient and AsyncSessiondClient) runs
 * against live servers: the server under test, which the suite stops and
 * restarts through the control protocol of harness/python-client.ts (retry
 * across an outage, watch resume across a restart), one with bearer tokens
 * and one with TLS. Then the developer's side: `mypy --strict` over the
 * package (generated .pyi included) and the tests with the pinned
 * requirements-dev.txt; `python -m build` makes the wheel and the sdist (from
 * a copy: nothing lands in the working tree); the wheel, installed into a
 * fresh venv with the newest dependencies in range, runs the README's
 * examples against the live server and prints what the README says.
 *
 * The venvs for mypy, build and the wheel are made while the suite runs
 * (most of its time is waiting on servers), so the file takes about as
 * long as the suite.
 *
 * Without python3 (3.10+) the test is skipped loudly, except under CI=true
 * (a failure there).
 */

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCertificates } from "../harness/certs.js";
import {
  buildPythonClient,
  installPythonClient,
  installPythonDevTools,
  installPythonWheel,
  missingPythonClientTools,
  PYTHON_CLIENT_DIR,
  parseUnittest,
  runMypy,
  runPythonClientTests,
} from "../harness/python-client.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

const run = promisify(execFile);

/** Tests in clients/python/tests: update when adding one (a lost test file would go unnoticed). */
const PYTHON_TESTS = 146;
/** Of those, the ones that restart the server (skipped against an external one)... */
const RESTART_TESTS = 7;
/** ...in modules that skip themselves in setUpModule (unittest counts each as one skip). */
const RESTART_MODULES = 2;
/** The restarts they ask for, in order: test_async_restart.py, then test_restart.py. */
const CONTROLS = [
  ...["stop", "start", "stop", "start", "restart"],
  ...["stop", "start", "stop", "start", "crash", "restart"],
];

const missing = missingPythonClientTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python client package test: ${missing} ***\n`);
}

/** The README's ```python blocks, each with the ``` block after its "prints" line. */
function readmeExamples(readme: string): { code: string; printed: string }[] {
  const found = [...readme.matchAll(/```python\n([\s\S]*?)```\n\nprints\n\n```\n([\s\S]*?)```/g)];
  return found.map((m) => ({ code: m[1] as string, printed: m[2] as string }));
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

  let dir: string;
  let installing: Promise<{ python: string; log: string }>;
  let devTools: Promise<string>;
  let built: Promise<{ wheel: string; sdist: string; wheelPython: string }>;
  const external = process.env.SESSIOND_URL;
  let server: SessiondProcess | undefined;
  const serverUrl = () => external ?? (server as SessiondProcess).url;

  beforeAll(async () => {
    if (missing !== undefined) return;
    dir = mkdtempSync(join(tmpdir(), "sessiond-pyclient-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    // Everything pip does starts now and runs while the suite waits on servers.
    installing = installPythonClient(dir);
    devTools = installPythonDevTools(dir);
    built = devTools.then(async (devPython) => {
      const out = join(dir, "dist");
      mkdirSync(out);
      const { wheel, sdist } = await buildPythonClient(devPython, dir, out);
      return { wheel, sdist, wheelPython: await installPythonWheel(dir, wheel) };
    });
    for (const p of [installing, devTools, built]) p.catch(() => {}); // awaited by the tests
    if (!external) {
      server = await startSessiond();
      cleanups.push(async () => {
        await server?.stop();
        if (server) await removeDataDir(server.dataDir);
      });
    }
  }, 60_000);

  it("installs with pip into a fresh venv and passes its unittest suite against live servers", {
    timeout: 180_000,
  }, async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);

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
      SESSIOND_URL: serverUrl(),
      SESSIOND_AUTH_URL: auth.url,
      SESSIOND_AUTH_TOKEN: token,
      SESSIOND_TLS_URL: tls.url,
      SESSIOND_TLS_CA: certs.ca,
    };
    if (!external) env.SESSIOND_CONTROL = "stdio";
    const result = await runPythonClientTests({ python, env, control, timeoutMs: 150_000 });
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
      expect(summary?.skipped).toBe(RESTART_MODULES);
      console.warn(
        "\n*** SESSIOND_URL is external: the Python restart tests were skipped (they need a server this process can restart) ***\n",
      );
    } else {
      expect(summary?.ran, output).toBe(PYTHON_TESTS);
      expect(summary?.skipped, output).toBe(0);
      expect(result.controls).toEqual(CONTROLS);
    }

    // The README's first example, as written but for the address, prints what the README says
    // (here with the lowest dependencies; the wheel's test below runs every example with the newest).
    const [example] = readmeExamples(readFileSync(join(PYTHON_CLIENT_DIR, "README.md"), "utf8"));
    if (example === undefined)
      throw new Error("no ```python example with its output in the README");
    expect(example.code.split("\n").filter((l) => l !== "").length).toBeLessThanOrEqual(10);
    expect(example.code).toContain('"http://127.0.0.1:50051"');
    writeFileSync(
      join(dir, "example.py"),
      example.code.replace("http://127.0.0.1:50051", serverUrl()),
    );
    const { stdout } = await run(python, [join(dir, "example.py")], { cwd: dir, timeout: 30_000 });
    expect(stdout).toBe(example.printed);

    console.log(
      `python client: ${summary?.ran} unittest tests passed (${summary?.skipped} skipped) against ${serverUrl()}`,
    );
  });

  it("is mypy --strict clean: the package (generated .pyi included) and its tests", {
    timeout: 180_000,
  }, async () => {
    const devPython = await devTools;
    const { code, output } = await runMypy(devPython, join(dir, "mypy-cache"));
    expect(output).toMatch(/^Success: no issues found in \d+ source files$/m);
    expect(code, output).toBe(0);
    const versions = await run(devPython, ["-m", "mypy", "--version"]);
    console.log(`python client: ${versions.stdout.trim()}: ${output.trim()}`);
  });

  it("builds a wheel and an sdist; the wheel, in a fresh venv, runs the README's examples", {
    timeout: 180_000,
  }, async () => {
    const { wheel, sdist, wheelPython } = await built;
    expect(wheel).toMatch(/[/\\]sessiond-0\.1\.0-py3-none-any\.whl$/);
    expect(sdist).toMatch(/[/\\]sessiond-0\.1\.0\.tar\.gz$/);

    const list = async (code: string, file: string) =>
      (await run(wheelPython, ["-c", code, file])).stdout.split("\n").filter((l) => l !== "");
    const inWheel = await list(
      "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
      wheel,
    );
    for (const f of [
      "sessiond/py.typed",
      "sessiond/client.py",
      "sessiond/async_client.py",
      "sessiond/v1/session_service_pb2.py",
      "sessiond/v1/session_service_pb2_grpc.pyi",
      "sessiond/v1/store_service_pb2.pyi",
    ]) {
      expect(inWheel, f).toContain(f);
    }
    expect(inWheel.filter((f) => !f.startsWith("sessiond"))).toEqual([]);
    const inSdist = await list(
      "import sys, tarfile; print('\\n'.join(tarfile.open(sys.argv[1]).getnames()))",
      sdist,
    );
    for (const f of [
      "pyproject.toml",
      "README.md",
      "constraints.txt",
      "requirements-dev.txt",
      "src/sessiond/async_client.py",
      "src/sessiond/v1/store_service_pb2_grpc.pyi",
      "tests/support.py",
      "tests/test_async_client.py",
      "tests/conformance_runner.py",
    ]) {
      expect(inSdist, f).toContain(`sessiond-0.1.0/${f}`);
    }
    // (Built from a copy, so this test leaves no build/ or *.egg-info in the
    // checkout; the README's `pip install ./clients/python`, run by
    // test/readme beside this file, builds in place as pip does for a user,
    // so the checkout's state is not asserted here.)

    const where = await run(wheelPython, ["-c", "import sessiond; print(sessiond.__file__)"], {
      cwd: dir,
    });
    expect(where.stdout.startsWith(join(dir, "wheel-venv"))).toBe(true);

    const examples = readmeExamples(readFileSync(join(PYTHON_CLIENT_DIR, "README.md"), "utf8"));
    expect(examples.length).toBe(2); // SessiondClient, AsyncSessiondClient
    for (const [i, example] of examples.entries()) {
      expect(example.code).toContain('"http://127.0.0.1:50051"');
      const file = join(dir, `wheel-example-${i}.py`);
      writeFileSync(file, example.code.replace("http://127.0.0.1:50051", serverUrl()));
      const { stdout } = await run(wheelPython, [file], { cwd: dir, timeout: 30_000 });
      expect(stdout, example.code).toBe(example.printed);
    }
    const deps = await run(wheelPython, [
      "-c",
      "import grpc, google.protobuf as p; print(f'grpcio {grpc.__version__}, protobuf {p.__version__}')",
    ]);
    console.log(
      `python client: wheel and sdist built; the wheel ran ${examples.length} README examples (${deps.stdout.trim()})`,
    );
  });
});

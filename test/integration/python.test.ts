/**
 * Interop: a Python grpcio client (test/python/sessiond_client.py) calls every
 * RPC of both services against a real server process, all answered by the
 * grpc-js path (the request log says so). The Python message
 * classes are generated here by the pinned protoc (--python_out) from a descriptor set
 * that buf builds.
 *
 * Needs grpcio and protobuf from PyPI and protoc, pinned, as
 * scripts/gen-tools.sh installs them (test/harness/python.ts). Without them
 * the test is skipped loudly, except under CI=true (a failure there).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { missingPythonTools, PROTOC, PYTHON } from "../harness/python.js";
import { REPO, serverUnderTest } from "../harness/server.js";

const run = promisify(execFile);
const CLIENT = join(REPO, "test/python/sessiond_client.py");
const BUF = join(REPO, "node_modules/.bin/buf");
const PROTOS = ["entry", "session", "store_service", "session_service"].map(
  (name) => `sessiond/v1/${name}.proto`,
);

const missing = missingPythonTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python interop test: ${missing} ***\n`);
}

describe("Python grpcio client (interop)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }

  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("calls every RPC of StoreService and SessionService", { timeout: 50_000 }, async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const gen = mkdtempSync(join(tmpdir(), "sessiond-py-"));
    dirs.push(gen);
    const descriptors = join(gen, "sessiond.binpb");
    await run(BUF, ["build", "--as-file-descriptor-set", "-o", descriptors], {
      cwd: REPO,
      timeout: 20_000,
    });
    await run(PROTOC, [`--descriptor_set_in=${descriptors}`, `--python_out=${gen}`, ...PROTOS], {
      cwd: REPO,
      timeout: 20_000,
    });

    const server = await serverUnderTest();
    try {
      const target = new URL(server.url).host;
      const token = process.env.SESSIOND_TOKEN;
      const argv = [CLIENT, target, gen, ...(token ? ["--token", token] : [])];
      let stdout: string;
      try {
        ({ stdout } = await run(PYTHON, argv, { cwd: REPO, timeout: 40_000 }));
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; message: string };
        throw new Error(`python client failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
      }
      const last = stdout.trim().split("\n").at(-1) ?? "";
      const summary = JSON.parse(last) as {
        ok: boolean;
        rpcs: string[];
        not_found: string;
        entries: number;
        grpcio: string;
        protobuf: string;
      };
      expect(summary.ok).toBe(true);
      expect(summary.rpcs).toEqual([
        "SessionService/Append",
        "SessionService/GetEntries",
        "SessionService/GetState",
        "SessionService/GetTree",
        "SessionService/GetUsage",
        "SessionService/RedactEntries",
        "SessionService/Reset",
        "SessionService/Rewind",
        "SessionService/WatchEntries",
        "StoreService/CreateSession",
        "StoreService/DeleteSession",
        "StoreService/EraseSessions",
        "StoreService/ForkSession",
        "StoreService/GetBlob",
        "StoreService/GetSession",
        "StoreService/ImportSession",
        "StoreService/ListSessions",
        "StoreService/ListShares",
        "StoreService/ListWorkspaces",
        "StoreService/PutBlob",
        "StoreService/ReadShare",
        "StoreService/RevokeShare",
        "StoreService/SearchEntries",
        "StoreService/ShareSession",
        "StoreService/UsageReport",
        "StoreService/WatchSessions",
      ]);
      expect(summary.not_found).toBe("NOT_FOUND");
      expect(summary.entries).toBe(11);
      if (server.local !== undefined) {
        // grpcio speaks native gRPC: @grpc/grpc-js answered every call (the server's
        // default), never connect-node's fallback. Each request log line says which.
        const calls = server.local
          .stderr()
          .split("\n")
          .filter((l) => l.includes('"method":"sessiond.v1.'))
          .map((l) => JSON.parse(l) as { method: string; via?: string });
        expect(calls.length).toBeGreaterThanOrEqual(summary.rpcs.length);
        expect(calls.filter((c) => c.via !== "grpc-js")).toEqual([]);
      }
      console.log(
        `python interop: ${summary.rpcs.length} RPCs OK with grpcio ${summary.grpcio}, protobuf ${summary.protobuf}`,
      );
    } finally {
      await server.close();
    }
  });
});

/**
 * A generic client with no local proto files: `buf curl` over gRPC, schema
 * from server reflection only (run from an empty directory).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { REPO } from "../harness/server.js";
import { serverUnderTest, uniqueWorkspace } from "./support/server.js";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;
let emptyDir: string;
const ws = uniqueWorkspace("bufcurl");

beforeAll(async () => {
  srv = await serverUnderTest();
  emptyDir = mkdtempSync(join(tmpdir(), "sessiond-bufcurl-"));
});

afterAll(async () => {
  await srv?.close();
  if (emptyDir) rmSync(emptyDir, { recursive: true, force: true });
});

interface CurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npx buf curl --protocol grpc --http2-prior-knowledge ...` from an empty directory (no protos). */
function bufCurl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    execFile(
      "npx",
      [
        "--no",
        "--prefix",
        REPO,
        "buf",
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        ...args,
      ],
      { cwd: emptyDir, timeout: 20_000, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && (err as { killed?: boolean }).killed) {
          reject(new Error(`buf curl timed out: ${args.join(" ")}\n${stderr}`));
          return;
        }
        const code = err ? Number((err as { code?: number }).code ?? 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function call(method: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await bufCurl(["-d", JSON.stringify(body), `${srv.url}/${method}`]);
  expect(r.code, `buf curl ${method} failed:\n${r.stderr}${r.stdout}`).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe("buf curl with server reflection (no local protos)", () => {
  test("--list-methods lists both services", async () => {
    const r = await bufCurl(["--list-methods", srv.url]);
    expect(r.code, r.stderr).toBe(0);
    const methods = r.stdout.trim().split("\n");
    for (const m of [
      "CreateSession",
      "GetSession",
      "ListSessions",
      "DeleteSession",
      "ForkSession",
      "WatchSessions",
    ]) {
      expect(methods).toContain(`sessiond.v1.StoreService/${m}`);
    }
    for (const m of [
      "Append",
      "Rewind",
      "Reset",
      "GetState",
      "GetEntries",
      "GetTree",
      "WatchEntries",
    ]) {
      expect(methods).toContain(`sessiond.v1.SessionService/${m}`);
    }
    const services = await bufCurl(["--list-services", srv.url]);
    expect(services.code, services.stderr).toBe(0);
    expect(services.stdout).toContain("grpc.health.v1.Health");
  });

  test("CreateSession, Append and GetState with JSON bodies", async () => {
    const sessionId = `curl-${Date.now().toString(36)}`;
    const created = await call("sessiond.v1.StoreService/CreateSession", {
      workspace: ws,
      sessionId,
      title: "from buf curl",
    });
    expect(created).toMatchObject({
      created: true,
      session: {
        id: sessionId,
        workspace: ws,
        title: "from buf curl",
        headSeq: "1",
        health: "HEALTH_OK",
      },
    });

    const appended = await call("sessiond.v1.SessionService/Append", {
      workspace: ws,
      session: sessionId,
      entries: [
        { id: "m1", message: { role: "ROLE_USER", content: [{ text: "hello from buf" }] } },
        {
          id: "m2",
          message: { role: "ROLE_ASSISTANT", content: [{ text: "hi there" }], model: "m" },
        },
      ],
    });
    expect(appended).toMatchObject({ leafId: "m2", headSeq: "3" });
    expect((appended.entries as Array<Record<string, unknown>>).map((e) => [e.id, e.seq])).toEqual([
      ["m1", "2"],
      ["m2", "3"],
    ]);

    const state = await call("sessiond.v1.SessionService/GetState", {
      workspace: ws,
      session: sessionId,
      view: "VIEW_HISTORY",
    });
    expect(state).toMatchObject({
      state: {
        leafId: "m2",
        headSeq: "3",
        view: "VIEW_HISTORY",
        messages: [
          { entryId: "m1", message: { role: "ROLE_USER", content: [{ text: "hello from buf" }] } },
          { entryId: "m2", message: { role: "ROLE_ASSISTANT", content: [{ text: "hi there" }] } },
        ],
      },
    });
  });

  test("an error comes back as a gRPC status (NOT_FOUND naming the id)", async () => {
    const r = await bufCurl([
      "-d",
      JSON.stringify({ workspace: ws, session: "no-such-curl" }),
      `${srv.url}/sessiond.v1.StoreService/GetSession`,
    ]);
    expect(r.code).not.toBe(0);
    const err = JSON.parse(r.stderr) as { code: string; message: string };
    expect(err.code).toBe("not_found");
    expect(err.message).toContain("no-such-curl");
  });
});

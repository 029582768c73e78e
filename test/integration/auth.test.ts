/**
 * Bearer-token auth against a real server process (`sessiond serve
 * --auth-tokens FILE`): missing and wrong tokens, workspace grants (another
 * tenant's session is NOT_FOUND, never PERMISSION_DENIED), open health
 * checks, and the refusal to bind a non-loopback address without tokens.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { createSessiondClient } from "../../src/client/index.js";
import {
  BIN,
  REPO,
  removeDataDir,
  type SessiondProcess,
  startSessiond,
} from "../harness/server.js";

const TOKEN_A = "token-for-workspace-a-only-0123456789";
const TOKEN_ALL = "token-for-every-workspace-0123456789";
const WS_A = "team-a";
const WS_B = "team-b";

/** The error code a call fails with (fails the test if it succeeds). */
async function codeOf(call: Promise<unknown> | (() => Promise<unknown>)): Promise<ConnectError> {
  try {
    await (typeof call === "function" ? call() : call);
  } catch (err) {
    const e = ConnectError.from(err);
    expect(e.rawMessage).not.toMatch(/\n\s+at |\.ts:\d+|node_modules/);
    return e;
  }
  throw new Error("expected the call to fail");
}

/** Reads the first message of a server stream (so its error surfaces), then stops. */
async function firstOf(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) return;
}

/** Runs `sessiond serve` with the given flags; resolves on exit or, with `untilListening`, once it listens. */
function serve(
  args: string[],
  untilListening: boolean,
): Promise<{
  code: number | null;
  stdout: string;
  stderr: string;
  stop(): Promise<number | null>;
}> {
  const proc = spawn(process.execPath, [BIN, "serve", ...args], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  proc.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((done) => proc.once("exit", (code) => done(code)));
  const stop = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    return exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(
        new Error(`sessiond serve ${args.join(" ")}: no result in 15 s\n${stdout}\n${stderr}`),
      );
    }, 15_000);
    if (untilListening) {
      proc.stdout.on("data", () => {
        if (/listening on /.test(stdout)) {
          clearTimeout(timer);
          resolve({ code: null, stdout, stderr, stop });
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, stop });
    });
  });
}

describe("auth: bearer tokens with workspace grants", () => {
  let server: SessiondProcess;
  let tokensDir: string;
  const client = (token?: string, protocol: "grpc" | "connect" = "grpc") =>
    createSessiondClient({
      baseUrl: server.url,
      protocol,
      retry: false,
      timeoutMs: 10_000,
      ...(token === undefined ? {} : { token }),
    });
  let sessionB: string;

  beforeAll(async () => {
    tokensDir = mkdtempSync(join(tmpdir(), "sessiond-auth-"));
    const file = join(tokensDir, "tokens.json");
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [
          { token: TOKEN_A, workspaces: [WS_A] },
          { token: TOKEN_ALL, workspaces: ["*"] },
        ],
      }),
    );
    server = await startSessiond({ args: ["--auth-tokens", file] });
    const created = await client(TOKEN_ALL).store.createSession({
      workspace: WS_B,
      title: "secret",
      sessionId: "b-session-0001",
    });
    sessionB = created.session?.id ?? "";
    expect(sessionB).toBe("b-session-0001");
  });

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
    if (tokensDir) rmSync(tokensDir, { recursive: true, force: true });
  });

  it("rejects a request without a token or with a wrong one (UNAUTHENTICATED)", async () => {
    for (const protocol of ["grpc", "connect"] as const) {
      const none = await codeOf(
        client(undefined, protocol).store.listSessions({ workspace: WS_A }),
      );
      expect(Code[none.code]).toBe("Unauthenticated");
      const wrong = await codeOf(
        client("not-a-valid-token-0000000000", protocol).store.listSessions({ workspace: WS_A }),
      );
      expect(Code[wrong.code]).toBe("Unauthenticated");
      // A prefix of a real token is just as wrong.
      const prefix = await codeOf(
        client(TOKEN_A.slice(0, 20), protocol).session.getState({
          workspace: WS_A,
          session: "x-session",
        }),
      );
      expect(Code[prefix.code]).toBe("Unauthenticated");
    }
    // Not a bearer token at all.
    const basic = await codeOf(
      createSessiondClient({
        baseUrl: server.url,
        retry: false,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Basic ${Buffer.from("u:p").toString("base64")}`);
            return next(req);
          },
        ],
      }).store.listSessions({ workspace: WS_A }),
    );
    expect(Code[basic.code]).toBe("Unauthenticated");
    // Streams are guarded too.
    const watch = await codeOf(() => firstOf(client().store.watchSessions({ workspace: WS_A })));
    expect(Code[watch.code]).toBe("Unauthenticated");
  });

  it("hides another workspace's session: NOT_FOUND, with the same message as a missing one", async () => {
    const a = client(TOKEN_A);
    const missing = "b-session-9999";
    const calls: Array<[string, (session: string) => Promise<unknown>]> = [
      ["GetSession", (s) => a.store.getSession({ workspace: WS_B, session: s })],
      ["DeleteSession", (s) => a.store.deleteSession({ workspace: WS_B, session: s })],
      ["ForkSession", (s) => a.store.forkSession({ workspace: WS_B, session: s })],
      ["GetState", (s) => a.session.getState({ workspace: WS_B, session: s })],
      ["GetEntries", (s) => a.session.getEntries({ workspace: WS_B, session: s })],
      ["GetTree", (s) => a.session.getTree({ workspace: WS_B, session: s })],
      ["Rewind", (s) => a.session.rewind({ workspace: WS_B, session: s, target: "x" })],
      ["Reset", (s) => a.session.reset({ workspace: WS_B, session: s })],
      [
        "Append",
        (s) =>
          a.session.append({
            workspace: WS_B,
            session: s,
            entries: [
              {
                kind: {
                  case: "message",
                  value: { role: Role.USER, content: [{ part: { case: "text", value: "hi" } }] },
                },
              },
            ],
          }),
      ],
      ["WatchEntries", (s) => firstOf(a.session.watchEntries({ workspace: WS_B, session: s }))],
    ];
    for (const [name, call] of calls) {
      const existing = await codeOf(() => call(sessionB));
      const absent = await codeOf(() => call(missing));
      expect(`${name}: ${Code[existing.code]}`).toBe(`${name}: NotFound`);
      expect(`${name}: ${Code[absent.code]}`).toBe(`${name}: NotFound`);
      // No oracle: the answer for a real session reads like the one for a missing one.
      expect(existing.rawMessage.replace(sessionB, "ID")).toBe(
        absent.rawMessage.replace(missing, "ID"),
      );
    }
    // The session is untouched and still visible to the token that may see it.
    const meta = await client(TOKEN_ALL).store.getSession({ workspace: WS_B, session: sessionB });
    expect(meta.session?.headSeq).toBe(1n);
  });

  it("refuses workspace-level calls on another workspace (PERMISSION_DENIED)", async () => {
    const a = client(TOKEN_A);
    const create = await codeOf(a.store.createSession({ workspace: WS_B }));
    expect(Code[create.code]).toBe("PermissionDenied");
    const list = await codeOf(a.store.listSessions({ workspace: WS_B }));
    expect(Code[list.code]).toBe("PermissionDenied");
    const watch = await codeOf(() => firstOf(a.store.watchSessions({ workspace: WS_B })));
    expect(Code[watch.code]).toBe("PermissionDenied");
    // The default workspace is another workspace too.
    const dflt = await codeOf(a.store.listSessions({}));
    expect(Code[dflt.code]).toBe("PermissionDenied");
    // Nothing was created in B.
    const listed = await client(TOKEN_ALL).store.listSessions({ workspace: WS_B });
    expect(listed.sessions.map((s) => s.id)).toEqual([sessionB]);
  });

  it("lets the token work in its own workspace", async () => {
    const a = client(TOKEN_A);
    const created = await a.store.createSession({ workspace: WS_A, title: "mine" });
    const id = created.session?.id ?? "";
    const appended = await a.session.append({
      workspace: WS_A,
      session: id,
      entries: [
        {
          kind: {
            case: "message",
            value: { role: Role.USER, content: [{ part: { case: "text", value: "hello" } }] },
          },
        },
      ],
    });
    expect(appended.headSeq).toBe(2n);
    const state = await a.session.getState({ workspace: WS_A, session: id });
    expect(state.state?.messages).toHaveLength(1);
    const listed = await a.store.listSessions({ workspace: WS_A });
    expect(listed.sessions.map((s) => s.id)).toEqual([id]);
    // The connect protocol carries the token the same way.
    const viaConnect = await client(TOKEN_A, "connect").store.getSession({
      workspace: WS_A,
      session: id,
    });
    expect(viaConnect.session?.headSeq).toBe(2n);
  });

  it("answers health checks and reflection without a token", async () => {
    const transport = createGrpcTransport({ baseUrl: server.url });
    const health = createClient(Health, transport);
    const all = await health.check({ service: "" }, { timeoutMs: 5_000 });
    expect(all.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const store = await health.check({ service: "sessiond.v1.StoreService" }, { timeoutMs: 5_000 });
    expect(store.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    // A wrong token does not matter to the open services either.
    const withWrong = createClient(
      Health,
      createGrpcTransport({
        baseUrl: server.url,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", "Bearer not-a-valid-token-0000000000");
            return next(req);
          },
        ],
      }),
    );
    expect((await withWrong.check({ service: "" }, { timeoutMs: 5_000 })).status).toBe(
      HealthCheckResponse_ServingStatus.SERVING,
    );
    // Server reflection lists the services without a token (so buf curl works).
    const reflection = createClient(ServerReflection, transport);
    async function* ask() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
    }
    const services: string[] = [];
    for await (const res of reflection.serverReflectionInfo(ask(), { timeoutMs: 5_000 })) {
      if (res.messageResponse.case === "listServicesResponse") {
        services.push(...res.messageResponse.value.service.map((s) => s.name));
      }
    }
    expect(services).toContain("sessiond.v1.StoreService");
    expect(services).toContain("sessiond.v1.SessionService");
  });
});

describe("auth: binding without tokens", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), "sessiond-bind-"));
    dirs.push(d);
    return d;
  };

  it("refuses a non-loopback address without tokens: exit non-zero, one clear line", async () => {
    const r = await serve(["--listen", "0.0.0.0:0", "--data-dir", dataDir()], false);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/refusing to listen on 0\.0\.0\.0 without auth tokens/);
    expect(lines[0]).toMatch(/--auth-tokens/);
    expect(lines[0]).toMatch(/--insecure/);
  });

  it("starts on a non-loopback address with --insecure", async () => {
    const r = await serve(
      ["--listen", "0.0.0.0:0", "--data-dir", dataDir(), "--storage", "memory", "--insecure"],
      true,
    );
    try {
      const m = /listening on http:\/\/0\.0\.0\.0:(\d+)/.exec(r.stdout);
      expect(m).not.toBeNull();
      // Talk to it over loopback only.
      const c = createSessiondClient({
        baseUrl: `http://127.0.0.1:${m?.[1]}`,
        retry: false,
        timeoutMs: 5_000,
      });
      const listed = await c.store.listSessions({});
      expect(listed.sessions).toEqual([]);
    } finally {
      expect(await r.stop()).toBe(0);
    }
  });
});

/**
 * `--idle-timeout-ms` closes idle connections only: a connection with an open
 * stream, or with traffic in either direction, is not idle. Watch streams of
 * plain gRPC clients (@grpc/grpc-js, Python grpcio) outlive many idle periods
 * and still get events that happen late, even with heartbeats rarer than the
 * idle timeout; a connection with no stream and no traffic is closed, and so
 * is one that sent half a client preface and went silent.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SessionService,
  type WatchEntriesResponse,
} from "../../gen/sessiond/v1/session_service_pb.js";
import {
  SessionEventType,
  StoreService,
  type WatchSessionsResponse,
} from "../../gen/sessiond/v1/store_service_pb.js";
import type { SessiondClient } from "../../src/client/index.js";
import { missingPythonTools, PROTOC, PYTHON } from "../harness/python.js";
import { REPO, removeDataDir } from "../harness/server.js";
import { envelope, PREFACE, rawCall } from "../reliability/lib/hostile-wire.js";
import { user } from "./support/entries.js";
import { grpcJsClient, serverStream } from "./support/grpc-js.js";
import { client, type SessiondProcess, startSessiond, uniqueWorkspace } from "./support/server.js";
import { eventually, sleep } from "./support/stream.js";

const IDLE_MS = 400;
/** Rarer than the idle timeout: between heartbeats, only the open stream keeps the connection. */
const HEARTBEAT_MS = 1500;
/** How long each stream must stay open: many idle periods, two heartbeats. */
const OPEN_MS = 8 * IDLE_MS;
/** Generous bound for the server to close an idle connection (a lower bound is not asserted). */
const CLOSED_WITHIN_MS = 30 * IDLE_MS;

let server: SessiondProcess;
let c: SessiondClient;

beforeAll(async () => {
  server = await startSessiond({
    args: ["--idle-timeout-ms", String(IDLE_MS), "--heartbeat-ms", String(HEARTBEAT_MS)],
  });
  c = client(server.url);
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

async function newSession(ws: string): Promise<string> {
  const { session } = await c.store.createSession({ workspace: ws, title: "idle" });
  if (session === undefined) throw new Error("no session in CreateSession response");
  return session.id;
}

/**
 * Holds a grpc-js server stream open for OPEN_MS, runs `late` (on another
 * connection) halfway, and returns what arrived and how the stream ended;
 * past OPEN_MS it also waits (10 s at most) until `enough` says so of the
 * messages: a server starved by a loaded machine sends its heartbeats late,
 * and the stream must outlive them all the same.
 */
async function holdOpen<T>(
  call: grpc.ClientReadableStream<unknown>,
  late: () => Promise<void>,
  enough: (messages: T[]) => boolean,
): Promise<{ messages: T[]; error: grpc.ServiceError | undefined; ended: boolean }> {
  const messages: T[] = [];
  let error: grpc.ServiceError | undefined;
  let ended = false;
  call.on("data", (m: T) => messages.push(m));
  call.on("error", (e: grpc.ServiceError) => {
    error = e;
  });
  call.on("end", () => {
    ended = true;
  });
  try {
    await eventually(() => messages.length > 0, 10_000, "the first message");
    await sleep(OPEN_MS / 2);
    await late();
    await sleep(OPEN_MS / 2);
    await eventually(
      () => enough(messages) || ended || error !== undefined,
      10_000,
      "two heartbeats",
    );
    return { messages: [...messages], error, ended };
  } finally {
    call.cancel();
  }
}

describe("an open stream is not idle", () => {
  it("a grpc-js WatchEntries stream is not cut by the idle timeout and gets a late entry", async () => {
    const ws = uniqueWorkspace("idle-entries");
    const id = await newSession(ws);
    const sessionClient = grpcJsClient(SessionService, new URL(server.url).host);
    try {
      const call = serverStream(sessionClient, "watchEntries", { workspace: ws, session: id });
      const got = await holdOpen<WatchEntriesResponse>(
        call,
        async () => {
          await c.session.append({
            workspace: ws,
            session: id,
            entries: [user("late", { id: "late" })],
          });
        },
        (messages) => messages.filter((m) => m.event.case === "heartbeat").length > 1,
      );
      expect(got.error?.details).toBeUndefined();
      expect(got.ended).toBe(false);
      const entries = got.messages.flatMap((m) =>
        m.event.case === "entry" ? [m.event.value.id] : [],
      );
      expect(entries).toContain("late");
      expect(got.messages.filter((m) => m.event.case === "heartbeat").length).toBeGreaterThan(1);
    } finally {
      sessionClient.close();
    }
  });

  it("a grpc-js WatchSessions stream is not cut by the idle timeout and gets a late event", async () => {
    const ws = uniqueWorkspace("idle-sessions");
    const storeClient = grpcJsClient(StoreService, new URL(server.url).host);
    try {
      const call = serverStream(storeClient, "watchSessions", { workspace: ws });
      let created = "";
      const got = await holdOpen<WatchSessionsResponse>(
        call,
        async () => {
          created = await newSession(ws);
        },
        (messages) => messages.filter((m) => m.type === SessionEventType.UNSPECIFIED).length > 1,
      );
      expect(got.error?.details).toBeUndefined();
      expect(got.ended).toBe(false);
      const events = got.messages.filter(
        (m) => m.type === SessionEventType.CREATED && m.sessionId === created,
      );
      expect(events).toHaveLength(1);
      const heartbeats = got.messages.filter((m) => m.type === SessionEventType.UNSPECIFIED);
      expect(heartbeats.length).toBeGreaterThan(1);
    } finally {
      storeClient.close();
    }
  });
});

const missing = missingPythonTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Python idle-timeout test: ${missing} ***\n`);
}

describe("an open stream is not idle (Python grpcio)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }
  let gen = "";
  beforeAll(async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    gen = mkdtempSync(join(tmpdir(), "sessiond-py-idle-"));
    const run = promisify(execFile);
    const descriptors = join(gen, "sessiond.binpb");
    await run(
      join(REPO, "node_modules/.bin/buf"),
      ["build", "--as-file-descriptor-set", "-o", descriptors],
      {
        cwd: REPO,
        timeout: 20_000,
      },
    );
    const protos = ["entry", "session", "store_service", "session_service"].map(
      (name) => `sessiond/v1/${name}.proto`,
    );
    await run(PROTOC, [`--descriptor_set_in=${descriptors}`, `--python_out=${gen}`, ...protos], {
      cwd: REPO,
      timeout: 20_000,
    });
  });
  afterAll(() => {
    if (gen !== "") rmSync(gen, { recursive: true, force: true });
  });

  it("a grpcio WatchEntries stream is not cut by the idle timeout and gets a late entry", {
    timeout: 30_000,
  }, async () => {
    const ws = uniqueWorkspace("idle-py");
    const id = await newSession(ws);
    const script = join(REPO, "test/python/watch_entries.py");
    const argv = [script, new URL(server.url).host, gen, "--workspace", ws, "--session", id];
    // Open for OPEN_MS plus a heartbeat period past its first message: the two
    // heartbeats asserted below (1.5 s and 3 s in) then have 1.7 s to spare; with
    // OPEN_MS alone the second had 0.2 s, and a loaded CI box missed it once.
    const seconds = (OPEN_MS + HEARTBEAT_MS) / 1000;
    const py = spawn(PYTHON, [...argv, "--seconds", String(seconds)], { cwd: REPO });
    let out = "";
    let err = "";
    py.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    py.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((done) => py.once("exit", done));
    await eventually(
      () => out.includes("\n") || py.exitCode !== null,
      15_000,
      "grpcio's first message",
    );
    await sleep(OPEN_MS / 2);
    await c.session.append({ workspace: ws, session: id, entries: [user("late", { id: "late" })] });
    expect(await exited, err).toBe(0);
    const lines = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event?: string; id?: string; end?: string; details?: string });
    expect(lines.at(-1), out).toMatchObject({ end: "deadline" });
    expect(lines.filter((l) => l.event === "entry").map((l) => l.id)).toContain("late");
    expect(lines.filter((l) => l.event === "heartbeat").length).toBeGreaterThan(1);
  });
});

/** Resolves true when `session` closes within `ms`, false when it is still open then. */
function closesWithin(
  session: http2.ClientHttp2Session | net.Socket,
  ms: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    session.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

const HEALTH_CHECK = "/grpc.health.v1.Health/Check";

describe("an idle connection is closed", () => {
  it("a connection whose last call ended is closed after the idle timeout", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      const answer = await rawCall(
        session,
        HEALTH_CHECK,
        "application/grpc",
        envelope(new Uint8Array()),
      );
      expect(answer.code).toBe("Ok");
      expect(await closesWithin(session, CLOSED_WITHIN_MS)).toBe(true);
    } finally {
      session.destroy();
    }
  });

  it("a connection that sent half a client preface and went silent is closed", async () => {
    const socket = net.connect(server.port, "127.0.0.1");
    socket.on("error", () => {});
    socket.resume(); // reads the server's SETTINGS, so that its close is seen
    try {
      await new Promise<void>((resolve) => socket.once("connect", resolve));
      socket.write(PREFACE.subarray(0, 10));
      expect(await closesWithin(socket, CLOSED_WITHIN_MS)).toBe(true);
    } finally {
      socket.destroy();
    }
  });
});

describe("traffic keeps a connection open", () => {
  it("a connection with a unary call every quarter idle period is not closed between calls", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    let closed = false;
    session.once("close", () => {
      closed = true;
    });
    try {
      const answers: string[] = [];
      for (let t = 0; t < OPEN_MS; t += IDLE_MS / 4) {
        if (closed) break;
        answers.push(
          (await rawCall(session, HEALTH_CHECK, "application/grpc", envelope(new Uint8Array())))
            .code,
        );
        await sleep(IDLE_MS / 4);
      }
      expect(closed).toBe(false);
      expect(new Set(answers)).toEqual(new Set(["Ok"]));
    } finally {
      session.destroy();
    }
  });
});

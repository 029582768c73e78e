/**
 * The request log: every request writes exactly one JSON line with the code
 * its client received, including requests connect-node refuses before any
 * handler runs (a request over `--max-message-bytes`, an unknown method);
 * watch streams are logged with their workspace and session.
 */
import http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDataDir } from "../harness/server.js";
import { envelope, rawCall } from "../reliability/lib/hostile-wire.js";
import { user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import { type LogLine, requestLog } from "./support/request-log.js";
import {
  client,
  PROTOCOLS,
  type SessiondProcess,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually } from "./support/stream.js";

const MAX_MESSAGE_BYTES = 65_536;

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond({ args: ["--max-message-bytes", String(MAX_MESSAGE_BYTES)] });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

/** Waits for the log lines `pick` selects to number `n`, and returns them. */
async function linesOf(pick: (l: LogLine) => boolean, n: number, what: string) {
  const lines = () => requestLog(server).filter(pick);
  await eventually(() => lines().length >= n, 5_000, what);
  return lines();
}

describe.each(PROTOCOLS)("a request over --max-message-bytes, over %s", (protocol) => {
  it("is refused before the handler and still logged once, RESOURCE_EXHAUSTED", async () => {
    const c = client(server.url, protocol, { retry: false });
    const ws = uniqueWorkspace(`log-oversize-${protocol}`);
    const { session } = await c.store.createSession({ workspace: ws });
    const append = (bytes: number) =>
      c.session.append({
        workspace: ws,
        session: session?.id ?? "",
        entries: [user("x".repeat(bytes), { id: `e${bytes}` })],
      });
    const isAppend = (l: LogLine) => l.method === "sessiond.v1.SessionService/Append";
    const before = requestLog(server).filter(isAppend).length;
    await expectCode(append(MAX_MESSAGE_BYTES + 1000), Code.ResourceExhausted);
    // A normal call after it, so that the oversize one's line had its time to appear.
    await append(10);
    const lines = (await linesOf(isAppend, before + 2, "two Append lines")).slice(before);
    expect(lines.map((l) => l.code)).toEqual(["ResourceExhausted", "ok"]);
    expect(lines[1]?.workspace).toBe(ws);
  });
});

describe("every request is logged exactly once", () => {
  it("a unary call writes one line", async () => {
    const c = client(server.url);
    const ws = uniqueWorkspace("log-once");
    await c.store.createSession({ workspace: ws });
    await c.store.listSessions({ workspace: ws });
    // A later call: lines are written in the order calls end (after the turn
    // that answered them), so once its line is out, both lines above are too.
    const after = uniqueWorkspace("log-once-after");
    await c.store.listSessions({ workspace: after });
    await linesOf((l) => l.workspace === after, 1, "the later call's line");
    const lines = requestLog(server).filter((l) => l.workspace === ws);
    expect(lines.map((l) => [l.method, l.code])).toEqual([
      ["sessiond.v1.StoreService/CreateSession", "ok"],
      ["sessiond.v1.StoreService/ListSessions", "ok"],
    ]);
  });

  it("a request for an unknown method is logged with its HTTP status", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      const answer = await rawCall(
        session,
        "/sessiond.v1.StoreService/NoSuchMethod",
        "application/grpc",
        envelope(new Uint8Array()),
      );
      expect(answer.code).toBe("http-404");
    } finally {
      session.close();
    }
    const lines = await linesOf(
      (l) => l.method === "sessiond.v1.StoreService/NoSuchMethod",
      1,
      "the NoSuchMethod line",
    );
    expect(lines.map((l) => l.code)).toEqual(["HTTP 404"]);
  });
});

/** Opens a stream, reads its first message, then cancels it (as a client that is done). */
async function cancelAfterFirst(open: (signal: AbortSignal) => AsyncIterable<unknown>) {
  const stop = new AbortController();
  try {
    for await (const _ of open(stop.signal)) stop.abort();
  } catch (err) {
    if (ConnectError.from(err).code !== Code.Canceled) throw err;
  }
}

describe("watch streams are logged with what they watched", () => {
  it("a WatchEntries line carries its workspace and session", async () => {
    const c = client(server.url);
    const ws = uniqueWorkspace("log-watch-entries");
    const { session } = await c.store.createSession({ workspace: ws });
    const id = session?.id ?? "";
    await cancelAfterFirst((signal) =>
      c.session.watchEntries({ workspace: ws, session: id }, { signal }),
    );
    const lines = await linesOf(
      (l) => l.method === "sessiond.v1.SessionService/WatchEntries" && l.workspace === ws,
      1,
      "the WatchEntries line",
    );
    expect(lines.map((l) => [l.session, l.code])).toEqual([[id, "Canceled"]]);
  });

  it("a WatchSessions line carries its workspace", async () => {
    const c = client(server.url);
    const ws = uniqueWorkspace("log-watch-sessions");
    await cancelAfterFirst((signal) => c.store.watchSessions({ workspace: ws }, { signal }));
    const lines = await linesOf(
      (l) => l.method === "sessiond.v1.StoreService/WatchSessions" && l.workspace === ws,
      1,
      "the WatchSessions line",
    );
    expect(lines.map((l) => l.code)).toEqual(["Canceled"]);
  });
});

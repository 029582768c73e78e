/**
 * The plaintext port speaks HTTP/2 (prior knowledge) and HTTP/1.1, told
 * apart by each connection's first bytes (src/server/http/plaintext-port.ts):
 * browsers and HTTP/1.1-only clients reach Connect and gRPC-Web there, gRPC
 * clients keep HTTP/2, whatever way the first bytes arrive.
 */
import http from "node:http";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { createConnectTransport as createWebConnectTransport } from "@connectrpc/connect-web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { PREFACE, SETTINGS } from "../reliability/lib/hostile-wire.js";
import { user } from "./support/entries.js";
import { client, type SessiondProcess, startSessiond, uniqueWorkspace } from "./support/server.js";

/** Writes `parts` to a new connection with a pause between them; resolves to what came back. */
function dribble(port: number, parts: Buffer[], waitMs = 600): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, "127.0.0.1", async () => {
      for (const part of parts) {
        socket.write(part);
        await sleep(80);
      }
      await sleep(waitMs);
      socket.destroy();
      resolve(Buffer.concat(chunks));
    });
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", reject);
  });
}

const connectUnary = (body: string) =>
  Buffer.from(
    "POST /sessiond.v1.StoreService/ListSessions HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );

describe("one plaintext port for HTTP/2 and HTTP/1.1", () => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await startSessiond();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("HTTP/1.1: Connect and gRPC-Web calls, several on one kept-alive connection", async () => {
    const ws = uniqueWorkspace("h1");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<net.Socket>();
    for (const make of [createConnectTransport, createGrpcWebTransport]) {
      const transport = make({
        baseUrl: server.url,
        httpVersion: "1.1",
        nodeOptions: { agent },
      });
      const store = createClient(StoreService, transport);
      const { session } = await store.createSession({ workspace: ws, title: "over http/1.1" });
      const listed = await store.listSessions({ workspace: ws });
      expect(listed.sessions.map((s) => s.id)).toContain(session?.id);
    }
    for (const list of Object.values(agent.freeSockets)) for (const s of list ?? []) sockets.add(s);
    expect(sockets.size).toBe(1); // four calls, one connection
    agent.destroy();
  });

  it("HTTP/1.1 and HTTP/2 clients side by side see the same sessions", async () => {
    const ws = uniqueWorkspace("both");
    const h2 = client(server.url, "grpc");
    const { session } = await h2.store.createSession({ workspace: ws, title: "from h2" });
    const h1 = createClient(
      StoreService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    const got = await h1.getSession({ workspace: ws, session: session?.id ?? "" });
    expect(got.session?.title).toBe("from h2");
  });

  it("the first bytes may come one piece at a time: a split preface is HTTP/2, a split request line HTTP/1.1", async () => {
    const h2 = await dribble(server.port, [
      PREFACE.subarray(0, 1),
      PREFACE.subarray(1, 5),
      Buffer.concat([PREFACE.subarray(5), SETTINGS]),
    ]);
    // The server's connection preface is a SETTINGS frame: 3 bytes length, type 4.
    expect(h2.length).toBeGreaterThanOrEqual(9);
    expect(h2[3]).toBe(4);
    const request = connectUnary("{}");
    const h1 = await dribble(server.port, [request.subarray(0, 1), request.subarray(1)]);
    expect(h1.toString("latin1")).toMatch(/^HTTP\/1\.1 200 /);
    expect(h1.toString("latin1")).toMatch(/content-type: application\/json/i);
  });

  it("garbage is answered 400 or closed; the server keeps serving both protocols", async () => {
    const answer = await dribble(server.port, [
      Buffer.from("\x16\x03\x01 not http at all\r\n\r\n"),
    ]);
    expect(answer.toString("latin1")).toMatch(/^(HTTP\/1\.1 400 |$)/);
    const h2 = client(server.url, "grpc");
    await h2.store.listSessions({ workspace: uniqueWorkspace("after") });
    const h1 = await dribble(server.port, [connectUnary("{}")]);
    expect(h1.toString("latin1")).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("a watch over HTTP/1.1 gets live entries, and UNAVAILABLE when the server shuts down", async () => {
    const own = await startSessiond();
    try {
      const ws = uniqueWorkspace("h1watch");
      const writer = client(own.url, "grpc");
      const { session } = await writer.store.createSession({ workspace: ws });
      const id = session?.id ?? "";
      // connect-web over Node's fetch (HTTP/1.1 only), as a browser watches.
      const sessions = createClient(
        SessionService,
        createWebConnectTransport({ baseUrl: own.url }),
      );
      const seen: bigint[] = [];
      const watching = (async () => {
        for await (const ev of sessions.watchEntries({
          workspace: ws,
          session: id,
          afterSeq: 0n,
        })) {
          if (ev.event.case === "entry") seen.push(ev.event.value.seq);
          if (seen.length === 2) void own.stop();
        }
      })().then(
        // Caught at once: the watch may end before the append below has its answer.
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      await writer.session.append({ workspace: ws, session: id, entries: [user("late")] });
      const err = await watching;
      expect(seen).toEqual([1n, 2n]);
      expect(err?.code).toBe(Code.Unavailable);
    } finally {
      await own.stop();
    }
  }, 30_000);
});

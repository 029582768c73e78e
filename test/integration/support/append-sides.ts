/**
 * Two servers for comparing a direct Append path with the generic one
 * (test/integration/direct-append.test.ts for native gRPC,
 * direct-connect-append.test.ts for Connect): each with its own store, two
 * sessions (ws/s1, ws/s2), tokens, a small max message size, its log lines
 * and metrics, and an HTTP/2 session to it. Root entry ids are random per
 * store: `sameRoots` / `sameRootBytes` name them alike before comparing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { AppendRequestSchema } from "../../../gen/sessiond/v1/session_service_pb.js";
import { openStore, type SessionStore } from "../../../src/index.js";
import {
  type RunningServer,
  ServerMetrics,
  serverConfig,
  startServer,
} from "../../../src/server/index.js";

export const TOKEN = "direct-append-token-0123456789";
export const NARROW = "direct-append-narrow-0123456789";
export const MAX_MESSAGE = 64 * 1024;
export const PATH = "/sessiond.v1.SessionService/Append";
export const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

export interface Side {
  readonly name: string;
  readonly dir: string;
  readonly store: SessionStore;
  readonly server: RunningServer;
  readonly session: http2.ClientHttp2Session;
  readonly lines: Record<string, unknown>[];
  readonly metrics: ServerMetrics;
  /** The root entry ids of its sessions (random): named alike before comparing. */
  readonly roots: string[];
}

export async function side(name: string, directAppend: boolean): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), `sessiond-direct-append-${name}-`));
  const store = openStore({ dataDir: dir });
  const lines: Record<string, unknown>[] = [];
  const metrics = new ServerMetrics({ processMetrics: false });
  const server = await startServer(
    store,
    serverConfig({
      port: 0,
      directAppend,
      tokens: [
        { token: TOKEN, workspaces: ["*"] },
        { token: NARROW, workspaces: ["only-this-one"] },
      ],
      limits: { ...serverConfig().limits, maxMessageBytes: MAX_MESSAGE },
      log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
      metrics,
    }),
  );
  const roots: string[] = [];
  for (const id of ["s1", "s2"]) {
    await store.create({ workspace: "ws", sessionId: id });
    roots.push((await (await store.open("ws", id)).tree()).leafId);
  }
  const session = http2.connect(server.url);
  return { name, dir, store, server, session, lines, metrics, roots };
}

export async function closeSide(s: Side): Promise<void> {
  s.session.close();
  await s.server.close();
  rmSync(s.dir, { recursive: true, force: true });
}

export const auth = (token = TOKEN): http2.OutgoingHttpHeaders => ({
  authorization: `Bearer ${token}`,
});

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The log line a side writes for a call that began when it had `before` lines, without its time and duration. */
export async function lineAfter(
  s: Side,
  before: number,
): Promise<Record<string, unknown> | undefined> {
  // The line is written a turn or two after the call ends.
  for (let i = 0; i < 100 && s.lines.length === before; i++) await sleep(10);
  const line = s.lines[before];
  if (line === undefined) return undefined;
  const logged = { ...line };
  delete logged.time;
  delete logged.ms;
  return logged;
}

/** Each root id of a side's sessions named `root<i>`, padded to its length. */
function rootName(i: number, id: string): string {
  return `root${i}`.padEnd(id.length, "_");
}

export function sameRoots(s: Side, fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    let text = String(v);
    s.roots.forEach((id, i) => {
      text = text.replaceAll(id, rootName(i, id));
    });
    out[k] = typeof v === "number" ? v : text;
  }
  return out;
}

export function sameRootBytes(s: Side, body: Buffer): Buffer {
  let text = body.toString("latin1");
  s.roots.forEach((id, i) => {
    text = text.replaceAll(id, rootName(i, id));
  });
  return Buffer.from(text, "latin1");
}

/** The request counts by method and code of a side (sessiond_requests_total), Append's and refusals'. */
export async function appendCounts(s: Side): Promise<string[]> {
  return (await s.metrics.registry.getSingleMetricAsString("sessiond_requests_total"))
    .split("\n")
    .filter((l) => l.includes("Append") || l.includes("unknown"))
    .sort();
}

/** A user message entry with a fixed timestamp (both servers store the same bytes). */
export const userEntry = (id: string, text = "hello", parentId?: string) =>
  create(EntrySchema, {
    id,
    parentId,
    timestamp: { seconds: 1_700_000_000n, nanos: 5 },
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });

/** An AppendRequest's bytes. */
export const appendRequest = (init: MessageInitShape<typeof AppendRequestSchema>) =>
  Buffer.from(toBinary(AppendRequestSchema, create(AppendRequestSchema, init)));

/** Sends `body` 3 bytes at a time, pausing a millisecond every 300 bytes (an exchange's `send`). */
export function inPieces(body: Buffer): (stream: http2.ClientHttp2Stream) => void {
  return (stream) => {
    let at = 0;
    const next = () => {
      if (at >= body.length) {
        stream.end();
        return;
      }
      stream.write(body.subarray(at, at + 3));
      at += 3;
      if (at % 300 === 0) setTimeout(next, 1);
      else next();
    };
    next();
  };
}

/**
 * A client that goes away is CANCELED on every protocol: a watch stream the
 * client aborts (a browser tab navigating away, over Connect or gRPC-Web on
 * HTTP/1.1 or HTTP/2, or a native gRPC client) is logged at info with code
 * Canceled and no error, and counted in sessiond_requests_total as
 * Canceled, never as Internal (which the shipped alert rules page on).
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { removeDataDir } from "../harness/server.js";
import { getH1, parseScrape, sampleOf } from "../support/prometheus.js";
import { type LogLine, requestLog } from "./support/request-log.js";
import {
  EXTERNAL,
  type SessiondProcess,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually } from "./support/stream.js";
import { transportOf, WAYS, type Way } from "./support/ways.js";

if (EXTERNAL) skipExternal("the log and metrics of cancelled streams (needs a server of its own)");

/** Opens a stream, reads its first message, then aborts it (as a viewer that navigates away). */
async function abortAfterFirst(open: (signal: AbortSignal) => AsyncIterable<unknown>) {
  const stop = new AbortController();
  try {
    for await (const _ of open(stop.signal)) stop.abort();
  } catch (err) {
    if (ConnectError.from(err).code !== Code.Canceled) throw err;
  }
}

const WATCH_ENTRIES = "sessiond.v1.SessionService/WatchEntries";
const WATCH_SESSIONS = "sessiond.v1.StoreService/WatchSessions";

describe.skipIf(EXTERNAL)("a watch stream the client aborts", () => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await startSessiond();
  });
  afterAll(async () => {
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  async function lineOf(method: string, ws: string): Promise<LogLine> {
    const pick = (l: LogLine) => l.method === method && l.workspace === ws;
    await eventually(() => requestLog(server).some(pick), 5_000, `the ${method} line`);
    return requestLog(server).find(pick) as LogLine;
  }

  describe.each(WAYS)("over %s on HTTP/%s", (protocol, httpVersion) => {
    const way: Way = [protocol, httpVersion];
    it("is logged Canceled at info, with no error", async () => {
      const transport = transportOf(server.url, way);
      const store = createClient(StoreService, transport);
      const session = createClient(SessionService, transport);
      const ws = uniqueWorkspace(`cancel-${way.join("-")}`);
      const id = (await store.createSession({ workspace: ws })).session?.id ?? "";
      await abortAfterFirst((signal) =>
        session.watchEntries({ workspace: ws, session: id }, { signal }),
      );
      await abortAfterFirst((signal) => store.watchSessions({ workspace: ws }, { signal }));
      for (const method of [WATCH_ENTRIES, WATCH_SESSIONS]) {
        const line = await lineOf(method, ws);
        expect({ method, level: line.level, code: line.code, error: line.error }).toEqual({
          method,
          level: "info",
          code: "Canceled",
          error: undefined,
        });
      }
    });
  });

  it("is counted Canceled in sessiond_requests_total, never Internal", async () => {
    const before = parseScrape((await getH1(server.url, "/metrics")).body);
    for (const way of WAYS) {
      const transport = transportOf(server.url, way);
      const store = createClient(StoreService, transport);
      const ws = uniqueWorkspace("cancel-metrics");
      await abortAfterFirst((signal) => store.watchSessions({ workspace: ws }, { signal }));
      await lineOf(WATCH_SESSIONS, ws);
    }
    const after = parseScrape((await getH1(server.url, "/metrics")).body);
    const watch = { service: "sessiond.v1.StoreService", method: "WatchSessions" };
    const delta = (code: string) =>
      sampleOf(after, "sessiond_requests_total", { ...watch, code }) -
      sampleOf(before, "sessiond_requests_total", { ...watch, code });
    expect({ canceled: delta("Canceled"), internal: delta("Internal") }).toEqual({
      canceled: WAYS.length,
      internal: 0,
    });
  });
});

/**
 * A request the client refuses before sending it (over its own max message
 * size) is, at most, a call the client cancelled: connect-node's client
 * opens the stream (gRPC and gRPC-Web), finds the message too large, and
 * closes the stream (END_STREAM, then RST_STREAM) with no message sent. The
 * server answers such a call UNIMPLEMENTED ("no request message", as
 * grpc-js and connect-es do), which no one reads; its log line says
 * `Canceled`, not an `Unimplemented` Append. Connect sends nothing at all,
 * so no line.
 */
import { createClient } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { user } from "./support/entries.js";
import { ownServers } from "./support/own-servers.js";
import { type LogLine, requestLog } from "./support/request-log.js";
import { EXTERNAL, type SessiondProcess, skipExternal, uniqueWorkspace } from "./support/server.js";
import { eventually } from "./support/stream.js";
import { transportOf, WAYS } from "./support/ways.js";

if (EXTERNAL) skipExternal("the log of refused requests (needs servers of its own)");

const CLIENT_MAX_BYTES = 1000;
const APPEND = "sessiond.v1.SessionService/Append";

const own = ownServers();

describe.skipIf(EXTERNAL).each(["grpc-js", "connect"])("on --grpc-server %s", (grpcServer) => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await own.server(["--grpc-server", grpcServer]);
  });

  describe.each(WAYS)("over %s on HTTP/%s", (protocol, httpVersion) => {
    it("an Append the client refuses to send is logged Canceled or not at all", async () => {
      const transport = transportOf(server.url, [protocol, httpVersion], {
        writeMaxBytes: CLIENT_MAX_BYTES,
      });
      const before = requestLog(server).length;
      const session = createClient(SessionService, transport);
      await expect(
        session.append({ workspace: "w", session: "s", entries: [user("x".repeat(5000))] }),
      ).rejects.toThrow(/writeMaxBytes/);
      // A later call on the same connection: lines are written in the order
      // calls end, so once its line is out, the refused call's is too.
      const marker = uniqueWorkspace("refused-marker");
      await createClient(StoreService, transport).listSessions({ workspace: marker });
      const since = () => requestLog(server).slice(before);
      await eventually(() => since().some((l) => l.workspace === marker), 5_000, "marker line");
      const appends = since().filter((l: LogLine) => l.method === APPEND);
      expect(appends.map((l) => [l.code, l.level])).toEqual(
        protocol === "connect" ? [] : [["Canceled", "info"]],
      );
    });
  });
});

/**
 * A request over the server's max message size is refused RESOURCE_EXHAUSTED
 * with a message that names what to change: the server's
 * `--max-message-bytes` (and `--max-entry-bytes`, which an entry that large
 * also needs), never connect-node's `readMaxBytes` or grpc-js's "Received
 * message larger than max". Over every protocol and HTTP version, for a
 * unary method (refused before any interceptor) and a streaming one, on
 * both server paths for native gRPC (the grpc-js front and connect-node).
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { user } from "./support/entries.js";
import { ownServers } from "./support/own-servers.js";
import { EXTERNAL, type SessiondProcess, skipExternal } from "./support/server.js";
import { transportOf, WAYS } from "./support/ways.js";

if (EXTERNAL) skipExternal("oversize requests (needs servers with their own limits)");

const MAX_MESSAGE_BYTES = 65_536;
const OVER = 100_000;

const own = ownServers();

/** The code and message a call was refused with. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: Code[e.code], message: e.rawMessage };
  }
  throw new Error("the oversize request was accepted");
}

describe.skipIf(EXTERNAL).each(["grpc-js", "connect"])("on --grpc-server %s", (grpcServer) => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await own.server([
      "--max-message-bytes",
      String(MAX_MESSAGE_BYTES),
      "--grpc-server",
      grpcServer,
    ]);
  });

  describe.each(WAYS)("over %s on HTTP/%s", (protocol, httpVersion) => {
    it("an oversize Append names --max-message-bytes and --max-entry-bytes", async () => {
      const c = createClient(SessionService, transportOf(server.url, [protocol, httpVersion]));
      const answer = await refusal(
        c.append({ workspace: "w", session: "s", entries: [user("x".repeat(OVER))] }),
      );
      expect(answer.code).toBe("ResourceExhausted");
      expect(answer.message).toMatch(/--max-message-bytes/);
      expect(answer.message).toMatch(/--max-entry-bytes/);
      expect(answer.message).not.toMatch(/readMaxBytes|larger than max/);
    });

    it("an oversize WatchEntries request names --max-message-bytes", async () => {
      const c = createClient(SessionService, transportOf(server.url, [protocol, httpVersion]));
      const answer = await refusal(
        (async () => {
          for await (const _ of c.watchEntries({ workspace: "w", session: "s".repeat(OVER) }));
        })(),
      );
      expect(answer.code).toBe("ResourceExhausted");
      expect(answer.message).toMatch(/--max-message-bytes/);
      expect(answer.message).not.toMatch(/readMaxBytes|larger than max/);
    });
  });
});

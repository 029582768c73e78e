/**
 * Watches that fail cost the TS client's connection nothing. A watch of a
 * session that does not exist ends at once with NOT_FOUND; connect-node's
 * client used to reset each such stream (RST_STREAM) although the server
 * had ended it, and the server's HTTP/2 layer, counting resets against its
 * rapid-reset budget (1,000, then 33 a second), closed the connection
 * after ~1,000 of them, failing the calls then in flight with INTERNAL
 * (src/client/session-manager.ts). 3,200 failed watches from 16 loops on
 * one connection: every one NOT_FOUND, over each protocol. The control is
 * connect-node's own session manager: some calls fail INTERNAL.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect, test } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { ownServers } from "./support/own-servers.js";
import { client, EXTERNAL, PROTOCOLS, skipExternal } from "./support/server.js";

if (EXTERNAL) skipExternal("failed watches (needs a server of its own: its connections are spent)");

const own = ownServers();
const LOOPS = 16;
const PER_LOOP = 200;

type Watch = (session: string) => AsyncIterable<unknown>;

/** LOOPS loops of PER_LOOP watches of sessions that do not exist: the codes they ended with. */
async function failedWatches(watch: Watch): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      for (let i = 0; i < PER_LOOP; i++) {
        let code = "no error";
        try {
          for await (const _ of watch(`nope-${loop}-${i}`)) break;
        } catch (err) {
          code = Code[ConnectError.from(err).code] as string;
        }
        codes[code] = (codes[code] ?? 0) + 1;
      }
    }),
  );
  return codes;
}

for (const protocol of PROTOCOLS) {
  test(`${protocol}: ${LOOPS * PER_LOOP} failed watches on one connection are all NOT_FOUND`, async () => {
    const srv = await own.server([]);
    const c = client(srv.url, protocol, { retry: false });
    const codes = await failedWatches((session) => c.session.watchEntries({ session }));
    expect(codes).toEqual({ NotFound: LOOPS * PER_LOOP });
  });
}

test("control: with connect-node's own session manager some of them fail INTERNAL", async () => {
  const srv = await own.server([]);
  const bare = createClient(
    SessionService,
    createGrpcTransport({ baseUrl: srv.url, defaultTimeoutMs: 15_000 }),
  );
  const codes = await failedWatches((session) => bare.watchEntries({ session }));
  expect(codes.Internal ?? 0).toBeGreaterThan(0);
  expect((codes.NotFound ?? 0) + (codes.Internal ?? 0)).toBe(LOOPS * PER_LOOP);
});

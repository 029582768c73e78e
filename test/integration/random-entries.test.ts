/**
 * Random entries of every kind (test/support/entry-arbitrary.ts: hard
 * strings, Struct data with keys such as "toString", 64-bit numbers and
 * timestamps at their edges) appended to a live `sessiond serve` over
 * native gRPC (the grpc-js front), Connect and gRPC-Web, one protocol per
 * request: each Append is stored or refused with a client's code (never
 * INTERNAL or UNKNOWN) and a message without a stack trace or a server
 * path, and every protocol then reads the same state, log and tree.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { REPO, type SessiondProcess, startSessiond } from "../harness/server.js";
import { entryArb } from "../support/entry-arbitrary.js";

const WS = "random";
const IDS = ["a1", "b2", "c3", "d4"];
const PROTOCOLS = ["grpc", "connect", "grpc-web"] as const;

let server: SessiondProcess;
let clients: SessiondClient[];

beforeAll(async () => {
  server = await startSessiond();
  clients = PROTOCOLS.map((protocol) =>
    createSessiondClient({ baseUrl: server.url, protocol, retry: false }),
  );
}, 30_000);

afterAll(async () => {
  await server?.stop();
});

const step = fc.record({
  entry: entryArb,
  id: fc.oneof(fc.constant(undefined), fc.constantFrom(...IDS)),
  // Mostly the current leaf, so that most appends have a parent to go under.
  parent: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 3 },
    { arbitrary: fc.constantFrom(...IDS), weight: 1 },
  ),
  via: fc.nat(PROTOCOLS.length - 1),
});

/** Why a refusal is not one a client may get, or undefined when it is. */
function wrongRefusal(err: unknown): string | undefined {
  if (!(err instanceof ConnectError)) return `not a ConnectError: ${String(err)}`;
  if (err.code === Code.Internal || err.code === Code.Unknown) {
    return `${Code[err.code]}: ${err.rawMessage}`;
  }
  if (/\n\s+at |\.ts:\d+|\.js:\d+|node_modules/.test(err.rawMessage)) return "stack trace";
  if (err.rawMessage.includes(server.dataDir) || err.rawMessage.includes(REPO)) {
    return "server path";
  }
  return undefined;
}

describe("random entries over every protocol", () => {
  test("each Append is stored or refused with a client's code; every protocol reads the same", async () => {
    let stored = 0;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), async (steps) => {
        const session = `r-${run++}`;
        await clients[0]?.store.createSession({ workspace: WS, sessionId: session });
        for (const { entry, id, parent, via } of steps) {
          const e = create(EntrySchema, { ...entry, seq: 0n, parentId: parent });
          e.id = id ?? "";
          try {
            await clients[via]?.session.append({ workspace: WS, session, entries: [e] });
            stored++;
          } catch (err) {
            expect(wrongRefusal(err), `Append of ${e.kind.case} via ${PROTOCOLS[via]}`).toBe(
              undefined,
            );
          }
        }
        const read = (c: SessiondClient) =>
          Promise.all([
            c.session.getState({ workspace: WS, session, view: View.HISTORY }),
            c.session.getEntries({ workspace: WS, session }),
            c.session.getTree({ workspace: WS, session }),
          ]);
        const [first, ...others] = await Promise.all(clients.map(read));
        for (const other of others) expect(other).toEqual(first);
      }),
      { numRuns: 60 },
    );
    // Not only refusals: a good share of the appends were stored and read back.
    expect(stored).toBeGreaterThan(30);
  }, 120_000);
});

/**
 * Random entries of every kind (test/support/entry-arbitrary.ts: hard
 * strings, Struct data with keys such as "toString", 64-bit numbers and
 * timestamps at their edges) appended to a live `sessiond serve` over
 * native gRPC (the grpc-js front), Connect and gRPC-Web, one protocol per
 * request: each Append is stored or refused with a client's code (never
 * INTERNAL or UNKNOWN) and a message without a stack trace or a server
 * path, and every protocol then reads the same state, log and tree, and
 * a watcher on each protocol received that log live.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { REPO, type SessiondProcess, startSessiond } from "../harness/server.js";
import { appendStep } from "../support/entry-arbitrary.js";

const WS = "random";
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

/** Entries a watcher from the start of the session receives, live; `until(n)` waits for n of them. */
function watch(client: SessiondClient, session: string) {
  const got: Entry[] = [];
  const stop = new AbortController();
  const done = (async () => {
    const stream = client.session.watchEntries({ workspace: WS, session }, { signal: stop.signal });
    for await (const r of stream) if (r.event.case === "entry") got.push(r.event.value);
  })().catch((err) => {
    if (!stop.signal.aborted) throw err;
  });
  return {
    async until(n: number): Promise<Entry[]> {
      const deadline = Date.now() + 10_000;
      while (got.length < n && Date.now() < deadline) await sleep(5);
      stop.abort();
      await done;
      return got;
    },
  };
}

describe("random entries over every protocol", () => {
  test("each Append is stored or refused with a client's code; every protocol reads the same", async () => {
    let stored = 0;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(appendStep, fc.nat(PROTOCOLS.length - 1)), {
          minLength: 1,
          maxLength: 5,
        }),
        async (steps) => {
          const session = `r-${run++}`;
          await clients[0]?.store.createSession({ workspace: WS, sessionId: session });
          const watched = clients.map((c) => watch(c, session));
          /** The ids of the entries the appends wrote, in order. */
          const written: string[] = [];
          for (const [{ entry, id, parent }, via] of steps) {
            const e = create(EntrySchema, { ...entry, seq: 0n, parentId: parent });
            e.id = id ?? "";
            try {
              const r = await clients[via]?.session.append({
                workspace: WS,
                session,
                entries: [e],
              });
              if (r !== undefined && !r.deduplicated) written.push(...r.entries.map((w) => w.id));
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
          const log = first?.[1].entries ?? [];
          // What was acknowledged is the log, in order, after the root.
          expect(log.slice(1).map((w) => w.id)).toEqual(written);
          stored += written.length;
          for (const [i, w] of watched.entries()) {
            expect(await w.until(log.length), `watched via ${PROTOCOLS[i]}`).toEqual(log);
          }
        },
      ),
      { numRuns: 60 },
    );
    // Not only refusals: a good share of the appends were stored and read back.
    expect(stored).toBeGreaterThan(30);
  }, 120_000);
});

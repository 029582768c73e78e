/**
 * A response larger than `--max-message-bytes` fails for the client with
 * RESOURCE_EXHAUSTED and a message that names the flag, over every protocol,
 * and the request log records that code, not "ok". Pages are filled up to
 * the limit (big-entries.test.ts), so what is left to exceed it is one
 * entry alone: the largest entry an Append request can carry, read back
 * with the fields the server adds (parent, seq, timestamp) that the request
 * did not have. A response under the limit still arrives whole.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Protocol } from "../../src/client/index.js";
import { removeDataDir } from "../harness/server.js";
import { textOf, user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import { requestLog } from "./support/request-log.js";
import {
  client,
  PROTOCOLS,
  type SessiondProcess,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually } from "./support/stream.js";

const MAX_MESSAGE_BYTES = 65_536;
/** Four entries of this size fit in a request; together they do not fit in one response. */
const ENTRY_TEXT = "x".repeat(12_000);

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond({ args: ["--max-message-bytes", String(MAX_MESSAGE_BYTES)] });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

let sessions = 0;

/**
 * A session in the default workspace under a short id (so that the Append
 * request's own fields are smaller than what the server adds to the entry),
 * holding the largest entry an Append takes, found by bisection: the
 * request of `high` bytes of text is refused, the one of `low` stored.
 * Returns the seq of that entry.
 */
async function largestEntry(protocol: Protocol): Promise<{ id: string; seq: bigint }> {
  const c = client(server.url, protocol);
  const id = `ovr${sessions++}-${protocol}`;
  await c.store.createSession({ sessionId: id });
  let low = 1_000;
  let high = MAX_MESSAGE_BYTES;
  let seq = 0n;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    try {
      const r = await c.session.append({ session: id, entries: [user("x".repeat(mid))] });
      seq = r.headSeq;
      low = mid;
    } catch (err) {
      if (ConnectError.from(err).code !== Code.ResourceExhausted) throw err;
      high = mid;
    }
  }
  return { id, seq };
}

/** A session of four ~12 KB entries after its root, in a workspace of its own. */
async function bigSession(protocol: Protocol): Promise<{ ws: string; id: string }> {
  const c = client(server.url, protocol);
  const ws = uniqueWorkspace(`oversize-${protocol}`);
  const { session } = await c.store.createSession({ workspace: ws });
  const id = session?.id ?? "";
  await c.session.append({
    workspace: ws,
    session: id,
    entries: Array.from({ length: 4 }, () => user(ENTRY_TEXT)),
  });
  return { ws, id };
}

describe.each(PROTOCOLS)("a response over --max-message-bytes, over %s", (protocol) => {
  it("fails RESOURCE_EXHAUSTED with a message naming --max-message-bytes", async () => {
    const { id, seq } = await largestEntry(protocol);
    const c = client(server.url, protocol);
    const err = await expectCode(
      c.session.getEntries({ session: id, afterSeq: seq - 1n, limit: 1 }),
      Code.ResourceExhausted,
      `exceeds the server's max message size ${MAX_MESSAGE_BYTES} (--max-message-bytes)`,
    );
    expect(err.rawMessage).toMatch(/^response of \d+ bytes exceeds/);
    expect(err.rawMessage).not.toContain("writeMaxBytes");
  });

  it("is logged with RESOURCE_EXHAUSTED, not ok", async () => {
    const { id, seq } = await largestEntry(protocol);
    const c = client(server.url, protocol);
    await expectCode(
      c.session.getEntries({ session: id, afterSeq: seq - 1n, limit: 1 }),
      Code.ResourceExhausted,
    );
    const lines = () =>
      requestLog(server).filter(
        (l) => l.session === id && l.method === "sessiond.v1.SessionService/GetEntries",
      );
    await eventually(() => lines().length > 0, 5_000, "the GetEntries log line");
    expect(lines().map((l) => l.code)).toEqual(["ResourceExhausted"]);
  });

  it("a response under the limit arrives whole", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    const page = await c.session.getEntries({ workspace: ws, session: id, afterSeq: 1n, limit: 2 });
    const texts = page.entries.map((e) => [
      e.seq,
      textOf(e.kind.case === "message" ? e.kind.value : undefined),
    ]);
    expect(texts).toEqual([
      [2n, ENTRY_TEXT],
      [3n, ENTRY_TEXT],
    ]);
    expect(page.headSeq).toBe(5n);
  });
});

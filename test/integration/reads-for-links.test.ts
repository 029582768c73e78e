/**
 * The two reads a viewer needs to show a link at once, over the wire:
 * GetEntries by entry_ids (an entry known by its id, not its seq) and
 * GetState from_end (the end of a long path from one call, earlier
 * messages page by page backwards), with every protocol and both codecs.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Protocol, readState, type SessiondClient, View } from "../../src/client/index.js";
import { userMessage } from "../../src/core/entry-builders.js";
import { createSessiondClient as createWebClient } from "../../src/web/index.js";
import { expectCode } from "./support/errors.js";
import { client, serverUnderTest, uniqueWorkspace } from "./support/server.js";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;
const MESSAGES = 300;

beforeAll(async () => {
  srv = await serverUnderTest();
});

afterAll(async () => {
  await srv?.close();
});

describe.each([
  ["grpc", false],
  ["connect", false],
  ["connect", true], // over sessiond/web (fetch, HTTP/1.1) with JSON
  ["grpc-web", false],
] as [Protocol, boolean][])("reads for links over %s (JSON: %s)", (protocol, useJson) => {
  let c: SessiondClient;
  const ws = uniqueWorkspace("links");
  const session = "long-path";

  beforeAll(async () => {
    // JSON is what the browser client can speak (sessiond/web, over fetch); the Node client is binary.
    c = useJson
      ? createWebClient({ baseUrl: srv.url, useJson: true, timeoutMs: 15_000 })
      : client(srv.url, protocol);
    await c.store.createSession({ workspace: ws, sessionId: session });
    const entries = Array.from({ length: MESSAGES }, (_, i) =>
      userMessage(`message ${i} ${"x".repeat(200)}`, { id: `m${i}` }),
    );
    await c.session.append({ workspace: ws, session, entries });
  });

  it("GetEntries with entry_ids answers those entries in seq order", async () => {
    const res = await c.session.getEntries({
      workspace: ws,
      session,
      entryIds: ["m299", "m7", "m150"],
    });
    expect(res.entries.map((e) => [e.id, e.seq])).toEqual([
      ["m7", 9n],
      ["m150", 152n],
      ["m299", 301n],
    ]);
    expect(res.headSeq).toBe(301n);
  });

  it("GetEntries with an entry id not in the session is NOT_FOUND naming it", async () => {
    await expectCode(
      c.session.getEntries({ workspace: ws, session, entryIds: ["m1", "no-such-entry"] }),
      Code.NotFound,
      "no-such-entry",
    );
  });

  it("GetEntries with entry_ids and after_seq is INVALID_ARGUMENT", async () => {
    await expectCode(
      c.session.getEntries({ workspace: ws, session, entryIds: ["m1"], afterSeq: 3n }),
      Code.InvalidArgument,
      "entry_ids",
    );
  });

  it("GetState from_end: the last messages first, earlier ones page by page, message_count on each", async () => {
    const req = { workspace: ws, session, view: View.HISTORY, maxResponseBytes: 16 * 1024 };
    const first = await c.session.getState({ ...req, fromEnd: true });
    const shown = first.state?.messages.map((m) => m.entryId) ?? [];
    expect(shown.at(-1)).toBe(`m${MESSAGES - 1}`);
    expect(shown.length).toBeLessThan(MESSAGES);
    expect(first.messageCount).toBe(BigInt(MESSAGES));
    expect(first.nextPageToken).not.toBe("");
    const second = await c.session.getState({
      ...req,
      fromEnd: true,
      pageToken: first.nextPageToken,
    });
    const before = second.state?.messages.map((m) => m.entryId) ?? [];
    expect(before.at(-1)).toBe(`m${MESSAGES - 1 - shown.length}`);
    expect(second.messageCount).toBe(BigInt(MESSAGES));

    const backwards = await readState(c, { ...req, fromEnd: true });
    const forwards = await readState(c, req);
    expect(backwards.state?.messages.map((m) => m.entryId)).toEqual(
      Array.from({ length: MESSAGES }, (_, i) => `m${i}`),
    );
    expect(backwards.state).toEqual(forwards.state);
  });

  it("GetState refuses a from_end page token read forwards", async () => {
    const req = { workspace: ws, session, view: View.HISTORY, pageSize: 10 };
    const first = await c.session.getState({ ...req, fromEnd: true });
    await expectCode(
      c.session.getState({ ...req, pageToken: first.nextPageToken }),
      Code.InvalidArgument,
      "from_end",
    );
  });
});

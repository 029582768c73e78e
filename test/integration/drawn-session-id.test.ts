/**
 * A session id the client drew (CreateSession, ForkSession, ImportSession
 * without one) can be another session's: two clients drawing in the same
 * second share the 32 random bits once in 2^32 pairs. The client then
 * draws again instead of answering with the other caller's session
 * (created=false) or failing ALREADY_EXISTS; an id the caller gave, and a
 * retry after an attempt that may have created the session, keep their
 * answers. A drawer that gives a taken id first stands in for the chance.
 */
import { create } from "@bufbuild/protobuf";
import {
  type Client,
  Code,
  ConnectError,
  createClient,
  type Interceptor,
} from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { idsInterceptor } from "../../src/client/ids-interceptor.js";
import { retryInterceptor } from "../../src/client/retry-interceptor.js";
import { newSessionId } from "../../src/core/ids.js";
import { user } from "./support/entries.js";
import { client, serverUnderTest, uniqueWorkspace } from "./support/server.js";

let server: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  server = await serverUnderTest();
});

afterAll(async () => {
  await server?.close();
});

/** Draws `taken` for the first `times` draws, then fresh ids; counts its draws, keeps the last. */
function drawer(
  taken: string,
  times = 1,
): { draw: () => string; draws: () => number; last: () => string } {
  let n = 0;
  let last = "";
  const draw = () => {
    last = ++n <= times ? taken : newSessionId();
    return last;
  };
  return { draw, draws: () => n, last: () => last };
}

/**
 * A StoreService client with the production ids and retry interceptors (in
 * their order) and the session id drawer given; `inner` runs inside retry,
 * next to the transport. `retry: false` leaves the retry layer out.
 */
function storeWith(
  draw: () => string,
  inner: Interceptor[] = [],
  retry = true,
): Client<typeof StoreService> {
  const interceptors = [
    idsInterceptor({ newSessionId: draw }),
    ...(retry ? [retryInterceptor({ baseDelayMs: 1, maxDelayMs: 5 })] : []),
    ...inner,
  ];
  const transport = createGrpcTransport({
    baseUrl: server.url,
    defaultTimeoutMs: 15_000,
    interceptors,
  });
  return createClient(StoreService, transport);
}

/**
 * Loses the answer of the first `method` call after the server acted on it
 * (a reset connection); `meanwhile` runs before the loss is reported.
 */
function loseFirstAnswer(method: string, meanwhile = async () => {}): Interceptor {
  let sent = 0;
  return (next) => async (req) => {
    if (req.method.name !== method || ++sent > 1) return next(req);
    await next(req);
    await meanwhile();
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    throw new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, reset);
  };
}

/** Refuses the first `method` call before it is sent (a connection never made). */
function refuseFirst(method: string): Interceptor {
  let sent = 0;
  return (next) => async (req) => {
    if (req.method.name !== method || ++sent > 1) return next(req);
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    throw new ConnectError("connect ECONNREFUSED", Code.Unavailable, undefined, undefined, refused);
  };
}

/** An existing session with the caller's own id: the one a drawer will hit. */
async function existing(ws: string, init: { title?: string } = {}): Promise<string> {
  const id = newSessionId();
  const c = client(server.url);
  const res = await c.store.createSession({ workspace: ws, sessionId: id, ...init });
  expect(res.created).toBe(true);
  return id;
}

async function titleOf(ws: string, id: string): Promise<string | undefined> {
  return (await client(server.url).store.getSession({ workspace: ws, session: id })).session?.title;
}

async function idsIn(ws: string): Promise<string[]> {
  const res = await client(server.url).store.listSessions({ workspace: ws, pageSize: 100 });
  return res.sessions.map((s) => s.id).sort();
}

describe("a drawn session id another session has is drawn again", () => {
  test("CreateSession equal to the other session's (created=false with it) makes a new session", async () => {
    const ws = uniqueWorkspace("drawn-create-equal");
    const theirs = await existing(ws);
    const d = drawer(theirs);
    const res = await storeWith(d.draw).createSession({ workspace: ws });
    expect(d.draws()).toBe(2);
    expect(res.created).toBe(true);
    expect(res.session?.id).not.toBe(theirs);
    expect(res.session?.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
    expect(await idsIn(ws)).toEqual([theirs, res.session?.id].sort());
  });

  test("CreateSession unlike the other session's (ALREADY_EXISTS) makes a new session; theirs keeps its title", async () => {
    const ws = uniqueWorkspace("drawn-create-other");
    const theirs = await existing(ws, { title: "theirs" });
    const d = drawer(theirs);
    const res = await storeWith(d.draw).createSession({ workspace: ws, title: "mine" });
    expect(res.created).toBe(true);
    expect(res.session?.id).not.toBe(theirs);
    expect(res.session?.title).toBe("mine");
    expect(await titleOf(ws, theirs)).toBe("theirs");
  });

  test("ForkSession onto a taken id forks under a new one", async () => {
    const ws = uniqueWorkspace("drawn-fork");
    const theirs = await existing(ws, { title: "theirs" });
    const source = await existing(ws, { title: "source" });
    const d = drawer(theirs);
    const res = await storeWith(d.draw).forkSession({ workspace: ws, session: source });
    expect(d.draws()).toBe(2);
    expect(res.session?.id).not.toBe(theirs);
    expect(res.session?.forkedFrom?.sessionId).toBe(source);
    expect(await titleOf(ws, theirs)).toBe("theirs");
  });

  test("ImportSession without an id imports under a new one", async () => {
    const ws = uniqueWorkspace("drawn-import");
    const theirs = await existing(ws, { title: "theirs" });
    const d = drawer(theirs);
    const root = create(EntrySchema, {
      id: "root",
      kind: { case: "sessionInfo", value: { title: "imported" } },
    });
    const res = await storeWith(d.draw).importSession({ workspace: ws, entries: [root] });
    expect(res.created).toBe(true);
    expect(res.session?.id).not.toBe(theirs);
    expect(res.session?.title).toBe("imported");
    expect(await titleOf(ws, theirs)).toBe("theirs");
  });

  test("without the retry layer too", async () => {
    const ws = uniqueWorkspace("drawn-no-retry");
    const theirs = await existing(ws);
    const d = drawer(theirs);
    const res = await storeWith(d.draw, [], false).createSession({ workspace: ws });
    expect(res.created).toBe(true);
    expect(res.session?.id).not.toBe(theirs);
  });

  test("after an attempt that never reached the server, created=false is still another session's", async () => {
    const ws = uniqueWorkspace("drawn-refused");
    const theirs = await existing(ws);
    const d = drawer(theirs);
    const res = await storeWith(d.draw, [refuseFirst("CreateSession")]).createSession({
      workspace: ws,
    });
    expect(res.created).toBe(true);
    expect(res.session?.id).not.toBe(theirs);
  });

  test("eight taken ids in a row end the call with the last answer", async () => {
    const ws = uniqueWorkspace("drawn-bound");
    const theirs = await existing(ws, { title: "theirs" });
    const d = drawer(theirs, Number.POSITIVE_INFINITY);
    const err = await storeWith(d.draw)
      .createSession({ workspace: ws, title: "mine" })
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.AlreadyExists);
    expect(d.draws()).toBe(8);
    expect(await idsIn(ws)).toEqual([theirs]);
  });
});

describe("answers that are not a taken drawn id", () => {
  test("a retry after an attempt that may have created the session answers that session (created=false)", async () => {
    const ws = uniqueWorkspace("drawn-lost-answer");
    const d = drawer("unused", 0);
    const res = await storeWith(d.draw, [loseFirstAnswer("CreateSession")]).createSession({
      workspace: ws,
      title: "once",
    });
    expect(d.draws()).toBe(1);
    expect(res.created).toBe(false);
    expect(await idsIn(ws)).toEqual([res.session?.id]);
  });

  test("a fork retried after its lost attempt forked the leaf before another append is refused, not drawn again", async () => {
    const ws = uniqueWorkspace("drawn-lost-fork");
    const source = await existing(ws);
    const other = client(server.url);
    await other.session.append({ workspace: ws, session: source, entries: [user("one")] });
    const moveLeaf = async () => {
      await other.session.append({ workspace: ws, session: source, entries: [user("two")] });
    };
    const d = drawer("unused", 0);
    const err = await storeWith(d.draw, [loseFirstAnswer("ForkSession", moveLeaf)])
      .forkSession({ workspace: ws, session: source })
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.AlreadyExists);
    expect(d.draws()).toBe(1);
    const ours = await other.store.getSession({ workspace: ws, session: d.last() });
    expect(ours.session?.forkedFrom?.sessionId).toBe(source);
    expect(await idsIn(ws)).toEqual([source, d.last()].sort());
  });

  test("a caller's own id is not drawn again: created=false when equal, ALREADY_EXISTS when not", async () => {
    const ws = uniqueWorkspace("drawn-caller-id");
    const theirs = await existing(ws, { title: "theirs" });
    const d = drawer("unused", 0);
    const store = storeWith(d.draw);
    const equal = await store.createSession({ workspace: ws, sessionId: theirs, title: "theirs" });
    expect(equal.created).toBe(false);
    expect(equal.session?.id).toBe(theirs);
    const err = await store
      .createSession({ workspace: ws, sessionId: theirs, title: "mine" })
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.AlreadyExists);
    expect(d.draws()).toBe(0);
    expect(await idsIn(ws)).toEqual([theirs]);
  });
});

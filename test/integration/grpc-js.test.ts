/**
 * Interop: a plain @grpc/grpc-js client (generic client built from the
 * protobuf-es descriptors, binary serializers, no Connect code) calls every
 * RPC of the real server.
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import {
  EntryKind,
  type SessionMeta,
  type SessionState,
  type TreeNode,
  View,
} from "../../gen/sessiond/v1/session_pb.js";
import {
  type AppendResponse,
  type ResetResponse,
  type RewindResponse,
  SessionService,
  type WatchEntriesResponse,
} from "../../gen/sessiond/v1/session_service_pb.js";
import {
  SessionEventType,
  StoreService,
  type WatchSessionsResponse,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { assistant, label, textOf, user } from "./support/entries.js";
import { expectNoLeak } from "./support/errors.js";
import { grpcJsClient, serverStream, unary } from "./support/grpc-js.js";
import { serverUnderTest, uniqueWorkspace } from "./support/server.js";
import { eventually } from "./support/stream.js";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;
let store: ReturnType<typeof grpcJsClient>;
let session: ReturnType<typeof grpcJsClient>;
const ws = uniqueWorkspace("grpcjs");

beforeAll(async () => {
  srv = await serverUnderTest();
  const url = new URL(srv.url);
  if (url.protocol !== "http:")
    throw new Error(`grpc-js test expects an h2c server, got ${srv.url}`);
  store = grpcJsClient(StoreService, url.host);
  session = grpcJsClient(SessionService, url.host);
});

afterAll(async () => {
  store?.close();
  session?.close();
  await srv?.close();
});

describe("@grpc/grpc-js generic client", () => {
  test("every unary RPC of StoreService and SessionService", async () => {
    // CreateSession: no id given, the server generates one.
    const created = await unary<{ session: SessionMeta; created: boolean }>(
      store,
      "createSession",
      {
        workspace: ws,
        title: "from grpc-js",
        metadata: { lang: "js" },
      },
    );
    expect(created.created).toBe(true);
    const id = created.session.id;
    expect(id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
    expect(created.session).toMatchObject({ workspace: ws, title: "from grpc-js", headSeq: 1n });
    expect(created.session.metadata).toEqual({ lang: "js" });
    const root = created.session.leafId;

    const got = await unary<{ session: SessionMeta }>(store, "getSession", {
      workspace: ws,
      session: id.slice(0, 12),
    });
    expect(got.session.id).toBe(id);

    // Append (batch), with ids chosen here.
    const appended = await unary<AppendResponse>(session, "append", {
      workspace: ws,
      session: id,
      entries: [user("q1", { id: "u1" }), assistant("a1", { id: "a1" }), label("L", { id: "lb" })],
    });
    expect(appended.entries.map((e) => [e.id, e.seq])).toEqual([
      ["u1", 2n],
      ["a1", 3n],
      ["lb", 4n],
    ]);
    expect(appended.entries[0]?.parentId).toBe(root);
    expect(appended.headSeq).toBe(4n);
    const second = await unary<AppendResponse>(session, "append", {
      workspace: ws,
      session: id,
      entries: [user("q2", { id: "u2" })],
      expectedLeafId: "lb",
    });
    expect(second.leafId).toBe("u2");

    const state = await unary<{ state: SessionState }>(session, "getState", {
      workspace: ws,
      session: id,
      view: View.HISTORY,
    });
    expect(state.state.messages.map((m) => m.entryId)).toEqual(["u1", "a1", "u2"]);
    expect(textOf(state.state.messages[1]?.message)).toBe("a1");
    expect(state.state.label).toBe("L");

    const rewound = await unary<RewindResponse>(session, "rewind", {
      workspace: ws,
      session: id,
      target: "L",
    });
    expect(rewound.leafId).toBe("lb");
    expect(rewound.headSeq).toBe(6n);

    const entries = await unary<{ entries: Entry[]; headSeq: bigint }>(session, "getEntries", {
      workspace: ws,
      session: id,
      afterSeq: 1n,
      limit: 3,
    });
    expect(entries.entries.map((e) => e.id)).toEqual(["u1", "a1", "lb"]);
    expect(entries.headSeq).toBe(6n);

    const tree = await unary<{ nodes: TreeNode[]; leafId: string }>(session, "getTree", {
      workspace: ws,
      session: id,
    });
    expect(tree.leafId).toBe("lb");
    expect(tree.nodes.map((n) => [n.id, n.onCurrentPath])).toEqual([
      [root, true],
      ["u1", true],
      ["a1", true],
      ["lb", true],
      ["u2", false],
      [rewound.leafEntryId, false],
    ]);
    expect(tree.nodes[5]?.kind).toBe(EntryKind.LEAF);

    const reset = await unary<ResetResponse>(session, "reset", { workspace: ws, session: id });
    expect(reset.leafId).toBe(root);

    const fork = await unary<{ session: SessionMeta }>(store, "forkSession", {
      workspace: ws,
      session: id,
      entry: "a1",
      title: "fork",
    });
    expect(fork.session.forkedFrom).toMatchObject({ sessionId: id, entryId: "a1" });
    expect(fork.session.headSeq).toBe(3n);

    const listed = await unary<{ sessions: SessionMeta[]; nextPageToken: string }>(
      store,
      "listSessions",
      {
        workspace: ws,
        pageSize: 10,
      },
    );
    expect(listed.sessions.map((s) => s.id).sort()).toEqual([id, fork.session.id].sort());

    const deleted = await unary<{ deletedSessionIds: string[] }>(store, "deleteSession", {
      workspace: ws,
      session: fork.session.id,
    });
    expect(deleted.deletedSessionIds).toEqual([fork.session.id]);
  });

  test("both server-streaming RPCs: WatchEntries and WatchSessions", async () => {
    const sw = uniqueWorkspace("grpcjs-watch");
    const sessionsCall = serverStream(store, "watchSessions", { workspace: sw });
    const sessionEvents: WatchSessionsResponse[] = [];
    let sessionsError: grpc.ServiceError | undefined;
    sessionsCall.on("data", (m: WatchSessionsResponse) => sessionEvents.push(m));
    sessionsCall.on("error", (e: grpc.ServiceError) => {
      sessionsError = e;
    });
    try {
      await eventually(() => sessionEvents.length > 0, 5000, "first WatchSessions heartbeat");
      const { session: meta } = await unary<{ session: SessionMeta }>(store, "createSession", {
        workspace: sw,
        title: "watched",
      });
      await unary(session, "append", {
        workspace: sw,
        session: meta.id,
        entries: [user("hello", { id: "h1" })],
      });
      const entriesCall = serverStream(session, "watchEntries", {
        workspace: sw,
        session: meta.id,
        afterSeq: 0n,
      });
      const got: WatchEntriesResponse[] = [];
      entriesCall.on("data", (m: WatchEntriesResponse) => got.push(m));
      entriesCall.on("error", () => {});
      try {
        await eventually(
          () => got.filter((m) => m.event.case === "entry").length >= 2,
          5000,
          "replayed entries",
        );
        await unary(session, "append", {
          workspace: sw,
          session: meta.id,
          entries: [assistant("live", { id: "l1" })],
        });
        await eventually(
          () => got.filter((m) => m.event.case === "entry").length >= 3,
          5000,
          "live entry",
        );
        const seqs = got.flatMap((m) =>
          m.event.case === "entry" ? [Number(m.event.value.seq)] : [],
        );
        expect(seqs).toEqual([1, 2, 3]);
        expect(got.some((m) => m.event.case === "heartbeat" && m.event.value.headSeq >= 2n)).toBe(
          true,
        );
      } finally {
        entriesCall.cancel();
      }
      await eventually(
        () =>
          sessionEvents.some(
            (e) => e.type === SessionEventType.CREATED && e.sessionId === meta.id,
          ) &&
          sessionEvents.some((e) => e.type === SessionEventType.UPDATED && e.sessionId === meta.id),
        5000,
        "CREATED and UPDATED events",
      );
      expect(sessionsError).toBeUndefined();
    } finally {
      sessionsCall.cancel();
    }
  });

  test("errors carry the gRPC status code and a clean message (NOT_FOUND, INVALID_ARGUMENT)", async () => {
    const err = await unary(store, "getSession", {
      workspace: ws,
      session: "no-such-session",
    }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(grpc.status.NOT_FOUND);
    expect(err?.details).toContain("no-such-session");
    expectNoLeak(err?.details ?? "");

    const bad = await unary(session, "append", {
      workspace: ws,
      session: "no-such-session",
      entries: [user("x")],
    }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(bad?.code).toBe(grpc.status.NOT_FOUND);

    const invalid = await unary(store, "getSession", { workspace: ws, session: "../../etc" }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(invalid?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expectNoLeak(invalid?.details ?? "");

    // A stream that fails before its first message: NOT_FOUND as the stream's status.
    const streamErr = await new Promise<grpc.ServiceError | undefined>((resolve) => {
      const call = serverStream(session, "watchEntries", {
        workspace: ws,
        session: "no-such-session",
      });
      call.on("data", () => {});
      call.on("error", (e: grpc.ServiceError) => resolve(e));
      call.on("end", () => resolve(undefined));
    });
    expect(streamErr?.code).toBe(grpc.status.NOT_FOUND);
    expect(streamErr?.details).toContain("no-such-session");
  });
});

/**
 * Share links over a real server with auth tokens on (an in-process
 * `startServer`, so that the store's clock can be moved: no sleeps), on
 * both fronts (grpc-js and connect-node run the same handlers and the same
 * auth interceptor): ReadShare answers without a token and nothing else
 * does; ShareSession without a token is UNAUTHENTICATED; revoke, expiry
 * and delete make the link NOT_FOUND at once, with one message.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { openStore } from "../../src/index.js";
import { type RunningServer, serverConfig, startServer } from "../../src/server/index.js";
import { client } from "./support/server.js";

const TOKEN = "share-test-token-for-every-workspace-0123";
/** A token for one workspace only. */
const TOKEN_A = "share-test-token-for-workspace-a-only-456";
const WS_A = "share-tenant-a";
const DAY = 24 * 60 * 60 * 1000;

let server: RunningServer;
let dataDir: string;
let nowMs = Date.parse("2026-06-01T10:00:00.000Z");
/** Every line the server logged, and every share token made: no line may hold one. */
const logged: string[] = [];
const tokensMade: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-shares-"));
  // A stand-in for the built viewer: /share/<token> serves its index.html.
  const uiDir = join(dataDir, "ui");
  mkdirSync(uiDir);
  writeFileSync(join(uiDir, "index.html"), "<!doctype html><title>share page</title>");
  const store = openStore({ dataDir, now: () => new Date(nowMs) });
  server = await startServer(
    store,
    serverConfig({
      port: 0,
      uiDir,
      tokens: [
        { token: TOKEN, workspaces: ["*"] },
        { token: TOKEN_A, workspaces: [WS_A] },
      ],
      log: (line) => {
        logged.push(line);
      },
    }),
  );
});

afterAll(async () => {
  await server?.close();
  // The request log names methods, workspaces and sessions, never a share token (a live link).
  expect(logged.length).toBeGreaterThan(0);
  expect(tokensMade.length).toBeGreaterThan(5);
  for (const token of tokensMade) {
    expect(logged.filter((l) => l.includes(token))).toEqual([]);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    const e = ConnectError.from(err);
    expect(e.rawMessage).not.toMatch(/\n\s+at |\.ts:\d+|node_modules/);
    return e;
  }
  throw new Error("expected the call to fail");
}

const text = (id: string, role: Role, value: string) => ({
  id,
  kind: {
    case: "message" as const,
    value: { role, content: [{ part: { case: "text" as const, value } }] },
  },
});

describe.each(["grpc", "connect"] as const)("share links over %s", (protocol) => {
  const url = () => `http://127.0.0.1:${server.port}`;
  const owner = () => client(url(), protocol, { token: TOKEN });
  const anonymous = () => client(url(), protocol);

  /** ShareSession as the owner, its token remembered for the log check. */
  async function shareOf(req: Parameters<ReturnType<typeof owner>["store"]["shareSession"]>[0]) {
    const res = await owner().store.shareSession(req);
    tokensMade.push(res.share?.token as string);
    return res;
  }

  async function sharedSession(ws: string) {
    const c = owner();
    const id = (await c.store.createSession({ workspace: ws, title: "Shared over the wire" }))
      .session?.id as string;
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [text("u1", Role.USER, "hello share"), text("a1", Role.ASSISTANT, "hi there")],
    });
    return id;
  }

  test("ReadShare needs no token; ShareSession, ListShares, RevokeShare and every other call do", async () => {
    const ws = `share-${protocol}-auth`;
    const id = await sharedSession(ws);
    const anon = anonymous();
    const refused = await failure(anon.store.shareSession({ workspace: ws, session: id }));
    expect(refused.code).toBe(Code.Unauthenticated);
    const { share } = await shareOf({ workspace: ws, session: id, by: "ana" });
    expect(share?.path).toBe(`/share/${share?.token}`);
    const read = await anon.store.readShare({ token: share?.token as string });
    expect(read.title).toBe("Shared over the wire");
    expect(read.entries.map((e) => e.id).slice(1)).toEqual(["u1", "a1"]);
    expect(read.share?.token).toBe("");
    expect(read.share?.sessionId).toBe(id);
    expect(read.nextPageToken).toBe("");
    // The share opens nothing else: the session, its tree, listings still want a token.
    for (const call of [
      anon.store.getSession({ workspace: ws, session: id }),
      anon.session.getTree({ workspace: ws, session: id }),
      anon.store.listShares({ workspace: ws }),
      anon.store.revokeShare({ workspace: ws, token: share?.token as string }),
      anon.store.listSessions({ workspace: ws }),
    ]) {
      expect((await failure(call)).code).toBe(Code.Unauthenticated);
    }
    // A wrong bearer token does not stop ReadShare either (it is not looked at).
    const wrong = client(url(), protocol, { token: "not-a-valid-token-0123456789" });
    expect((await wrong.store.readShare({ token: share?.token as string })).entries).toHaveLength(
      3,
    );
  });

  test("a token for another workspace can neither share, list nor revoke this one's sessions and shares", async () => {
    const ws = `share-${protocol}-tenant`;
    const id = await sharedSession(ws);
    const { share } = await shareOf({ workspace: ws, session: id });
    const tenant = client(url(), protocol, { token: TOKEN_A });
    await tenant.store.createSession({ workspace: WS_A });
    const other = await failure(tenant.store.shareSession({ workspace: ws, session: id }));
    expect(other.code).toBe(Code.NotFound);
    expect((await failure(tenant.store.listShares({ workspace: ws }))).code).toBe(
      Code.PermissionDenied,
    );
    const revoke = tenant.store.revokeShare({ workspace: ws, token: share?.token as string });
    expect((await failure(revoke)).code).toBe(Code.PermissionDenied);
    // Its own workspace knows nothing of that share.
    const own = tenant.store.revokeShare({ workspace: WS_A, token: share?.token as string });
    expect((await failure(own)).code).toBe(Code.NotFound);
    expect((await tenant.store.listShares({ workspace: WS_A })).shares).toEqual([]);
    await anonymous().store.readShare({ token: share?.token as string });
  });

  test("revoke: NOT_FOUND at once, with the answer of an unknown token", async () => {
    const ws = `share-${protocol}-revoke`;
    const id = await sharedSession(ws);
    const { share } = await shareOf({ workspace: ws, session: id });
    const token = share?.token as string;
    await anonymous().store.readShare({ token });
    expect((await fetch(`${url()}/share/${token}`)).status).toBe(200);
    const listed = await owner().store.listShares({ workspace: ws });
    expect(listed.shares.map((s) => s.token)).toEqual([token.slice(0, 12)]);
    const revoked = await owner().store.revokeShare({ workspace: ws, token });
    expect(revoked.share?.revoked).toBe(true);
    const gone = await failure(anonymous().store.readShare({ token }));
    expect(gone.code).toBe(Code.NotFound);
    // The link's page answers 404 at once too (the same page, which draws the 404).
    const page = await fetch(`${url()}/share/${token}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("share page");
    expect((await fetch(`${url()}/share/${"x".repeat(43)}`)).status).toBe(404);
    const unknown = await failure(anonymous().store.readShare({ token: "x".repeat(43) }));
    expect(gone.rawMessage).toBe(unknown.rawMessage);
    expect(gone.rawMessage).not.toContain(id);
    expect((await owner().store.listShares({ workspace: ws })).shares[0]?.revoked).toBe(true);
  });

  test("expiry: NOT_FOUND once the server's clock passes expires_at", async () => {
    const ws = `share-${protocol}-expiry`;
    const id = await sharedSession(ws);
    const { share } = await shareOf({
      workspace: ws,
      session: id,
      expiresAt: timestampFromMs(nowMs + DAY),
    });
    const token = share?.token as string;
    await anonymous().store.readShare({ token });
    const before = nowMs;
    nowMs += DAY;
    try {
      expect((await failure(anonymous().store.readShare({ token }))).code).toBe(Code.NotFound);
      expect((await fetch(`${url()}/share/${token}`)).status).toBe(404);
    } finally {
      nowMs = before;
    }
    const bad = await failure(
      shareOf({
        workspace: ws,
        session: id,
        expiresAt: timestampFromMs(nowMs - 1),
      }),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
  });

  test("deleting the session makes its links NOT_FOUND and lists them revoked", async () => {
    const ws = `share-${protocol}-delete`;
    const id = await sharedSession(ws);
    const { share } = await shareOf({ workspace: ws, session: id });
    const token = share?.token as string;
    await anonymous().store.readShare({ token });
    await owner().store.deleteSession({ workspace: ws, session: id });
    expect((await failure(anonymous().store.readShare({ token }))).code).toBe(Code.NotFound);
    expect((await owner().store.listShares({ workspace: ws })).shares[0]?.revoked).toBe(true);
  });

  test("pages: page_size 1 reads the path one entry at a time", async () => {
    const ws = `share-${protocol}-pages`;
    const id = await sharedSession(ws);
    const { share } = await shareOf({ workspace: ws, session: id });
    const ids: string[] = [];
    let pageToken = "";
    do {
      const r = await anonymous().store.readShare({
        token: share?.token as string,
        pageSize: 1,
        pageToken,
      });
      expect(r.entries).toHaveLength(1);
      ids.push(...r.entries.map((e) => e.id));
      pageToken = r.nextPageToken;
    } while (pageToken !== "");
    expect(ids.slice(1)).toEqual(["u1", "a1"]);
  });
});

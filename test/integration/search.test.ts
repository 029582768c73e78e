/**
 * SearchEntries over the wire (every protocol of the Connect client) and
 * `sessiond search`, against the real `sessiond serve` process (or
 * SESSIOND_URL). Each protocol searches its own workspace.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { SortOrder } from "../../gen/sessiond/v1/store_service_pb.js";
import type { SessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { assistant, toolResult, user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import { client, PROTOCOLS, serverUnderTest, uniqueWorkspace } from "./support/server.js";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  srv = await serverUnderTest();
});

afterAll(async () => {
  await srv?.close();
});

/** Two sessions, the newer one with two hits for "kubernetes rollout", the older one with one. */
async function seed(
  c: SessiondClient,
  workspace: string,
): Promise<{ older: string; newer: string }> {
  const older = (await c.store.createSession({ workspace, title: "older" })).session?.id ?? "";
  await c.session.append({
    workspace,
    session: older,
    entries: [
      user("Why did the Kubernetes rollout stall?", { id: "o1" }),
      user("unrelated", { id: "o2" }),
    ],
  });
  const newer = (await c.store.createSession({ workspace, title: "newer" })).session?.id ?? "";
  await c.session.append({
    workspace,
    session: newer,
    entries: [
      user("start the ROLLOUT on kubernetes", { id: "n1" }),
      assistant("", { id: "n2" }, [
        {
          id: "call1",
          name: "kubectl",
          arguments: { cmd: "rollout status", ns: "kubernetes-prod" },
        },
      ]),
      toolResult("call1", "deployment finished", { id: "n3" }),
    ],
  });
  return { older, newer };
}

describe.each(PROTOCOLS)("SearchEntries over %s", (protocol) => {
  let c: SessiondClient;
  let ws: string;
  let ids: { older: string; newer: string };

  beforeAll(async () => {
    c = client(srv.url, protocol);
    ws = uniqueWorkspace(`search-${protocol}`);
    ids = await seed(c, ws);
  });

  test("finds every entry holding all words, newest session first, with snippets", async () => {
    const res = await c.store.searchEntries({ workspace: ws, query: "kubernetes rollout" });
    expect(res.hits.map((h) => [h.sessionId, h.entryId, h.seq])).toEqual([
      [ids.newer, "n1", 2n],
      [ids.newer, "n2", 3n],
      [ids.older, "o1", 2n],
    ]);
    expect(res.hits[0]?.sessionTitle).toBe("newer");
    expect(res.hits[0]?.role).toBe(Role.USER);
    expect(res.hits[0]?.snippet).toBe("start the ROLLOUT on kubernetes");
    expect(res.hits[1]?.role).toBe(Role.ASSISTANT);
    expect(res.nextPageToken).toBe("");
    expect(res.partialSessionIds).toEqual([]);
  });

  test("pages through the hits with the token, oldest first too", async () => {
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await c.store.searchEntries({
        workspace: ws,
        query: "kubernetes",
        order: SortOrder.OLDEST_FIRST,
        pageSize: 1,
        pageToken,
      });
      seen.push(...page.hits.map((h) => h.entryId));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual(["o1", "n1", "n2"]);
  });

  test("tool results are searched", async () => {
    const res = await c.store.searchEntries({ workspace: ws, query: "DEPLOYMENT" });
    expect(res.hits.map((h) => [h.entryId, h.role])).toEqual([["n3", Role.TOOL]]);
  });

  test("an empty query is INVALID_ARGUMENT", async () => {
    await expectCode(
      c.store.searchEntries({ workspace: ws, query: "  " }),
      Code.InvalidArgument,
      "query",
    );
  });

  test("a query over 256 characters is INVALID_ARGUMENT naming its length", async () => {
    await expectCode(
      c.store.searchEntries({ workspace: ws, query: "x".repeat(300) }),
      Code.InvalidArgument,
      "300",
    );
  });

  test("a token of another query is INVALID_ARGUMENT", async () => {
    const first = await c.store.searchEntries({ workspace: ws, query: "kubernetes", pageSize: 1 });
    await expectCode(
      c.store.searchEntries({
        workspace: ws,
        query: "rollout",
        pageSize: 1,
        pageToken: first.nextPageToken,
      }),
      Code.InvalidArgument,
      "page_token",
    );
  });

  test("page_size over the server's maximum is INVALID_ARGUMENT", async () => {
    await expectCode(
      c.store.searchEntries({ workspace: ws, query: "x", pageSize: 1_000_000 }),
      Code.InvalidArgument,
      "page_size 1000000",
    );
  });
});

describe("sessiond search", () => {
  let ws: string;
  let ids: { older: string; newer: string };

  beforeAll(async () => {
    ws = uniqueWorkspace("search-cli");
    ids = await seed(client(srv.url), ws);
  });

  test("prints a table of hits: short id, seq, role, snippet", async () => {
    const r = await runCli(["search", "kubernetes", "ROLLOUT", "-w", ws, "--server", srv.url]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+SEQ\s+ROLE\s+SNIPPET$/);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(
      new RegExp(`^${ids.newer.slice(-8)}\\s+2\\s+user\\s+start the ROLLOUT on kubernetes$`),
    );
    expect(lines[3]).toContain(ids.older.slice(-8));
  });

  test("--json prints one SearchHit per line; --limit cuts and says more exist", async () => {
    const r = await runCli([
      "search",
      "kubernetes",
      "--json",
      "--limit",
      "2",
      "-w",
      ws,
      "--server",
      srv.url,
    ]);
    expect(r.code).toBe(0);
    const hits = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(hits.map((h) => [h.sessionId, h.entryId, h.seq])).toEqual([
      [ids.newer, "n1", "2"],
      [ids.newer, "n2", "3"],
    ]);
    expect(r.stderr).toContain("2 hits shown, more exist");
  });

  test("no match says so", async () => {
    const r = await runCli(["search", "zzyzx", "-w", ws, "--server", srv.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no entries match");
  });

  test("a missing query is a usage error", async () => {
    const r = await runCli(["search", "--server", srv.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing QUERY");
  });
});

/**
 * A session whose entries add up to several times the largest response
 * (issue 36, item 1): 40 entries of ~30 KB (1.2 MB) against
 * --max-message-bytes 256 KiB. Every reader that starts at the beginning
 * used to fail (GetEntries paged by count only: 100 entries, one response);
 * now GetEntries, GetState and GetTree fill each page up to a byte budget and
 * a reader moves on with the next page, over every protocol. A request's
 * max_response_bytes asks for smaller pages; `sessiond export` reads the
 * whole session and `import` stores it again, the same.
 */
import { toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { GetEntriesResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import {
  ListSessionsResponseSchema,
  SearchEntriesResponseSchema,
  SortOrder,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { type Protocol, readState, readTree } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir } from "../harness/server.js";
import { user } from "./support/entries.js";
import {
  client,
  PROTOCOLS,
  readAll,
  type SessiondProcess,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";

const MAX_MESSAGE_BYTES = 256 * 1024;
const ENTRIES = 40;
/** ~30 KB each, 1.2 MB in all: 4.7 times the largest response. */
const text = (i: number) => `${i} `.padEnd(30_000, "abcdefghij");

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond({ args: ["--max-message-bytes", String(MAX_MESSAGE_BYTES)] });
});
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

async function bigSession(protocol: Protocol): Promise<{ ws: string; id: string }> {
  const c = client(server.url, protocol);
  const ws = uniqueWorkspace(`big-${protocol}`);
  const { session } = await c.store.createSession({ workspace: ws, title: "big" });
  const id = session?.id ?? "";
  // Appends of five: each request stays under the limit too.
  for (let i = 0; i < ENTRIES; i += 5) {
    const batch = Array.from({ length: 5 }, (_, k) => user(text(i + k), { id: `e${i + k}` }));
    await c.session.append({ workspace: ws, session: id, entries: batch });
  }
  return { ws, id };
}

describe.each(PROTOCOLS)("a session of 4.7 times the largest response, over %s", (protocol) => {
  it("GetEntries from the start pages by bytes to the end; every page fits", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    const pages: number[] = [];
    let after = 0n;
    const ids: string[] = [];
    for (;;) {
      const page = await c.session.getEntries({ workspace: ws, session: id, afterSeq: after });
      if (page.entries.length === 0) break;
      pages.push(page.entries.length);
      // The page as the binary codec encodes it: within the limit.
      const size = toBinary(GetEntriesResponseSchema, page).length;
      expect(size).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
      ids.push(...page.entries.map((e) => e.id));
      after = page.entries[page.entries.length - 1]?.seq ?? after;
      if (after >= page.headSeq) break;
    }
    expect(ids.slice(1)).toEqual(Array.from({ length: ENTRIES }, (_, i) => `e${i}`));
    // Several pages, each as full as the budget allows (7 or 8 entries of 30 KB).
    expect(pages.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...pages)).toBeGreaterThanOrEqual(7);
    // The helper every test uses reads the same.
    expect((await readAll(c, ws, id)).map((e) => e.id)).toEqual(ids);
  });

  it("max_response_bytes asks for smaller pages (one entry at least)", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    const one = toBinary(
      EntrySchema,
      (await c.session.getEntries({ workspace: ws, session: id, afterSeq: 1n, limit: 1 }))
        .entries[0] as never,
    ).length;
    const small = await c.session.getEntries({
      workspace: ws,
      session: id,
      afterSeq: 1n,
      maxResponseBytes: 3 * one + 100,
    });
    expect(small.entries.map((e) => e.id)).toEqual(["e0", "e1", "e2"]);
    const tiny = await c.session.getEntries({
      workspace: ws,
      session: id,
      afterSeq: 1n,
      maxResponseBytes: 1,
    });
    expect(tiny.entries.map((e) => e.id)).toEqual(["e0"]);
    // Larger than the server's own limit: capped there, not an error.
    const capped = await c.session.getEntries({
      workspace: ws,
      session: id,
      maxResponseBytes: 100 * MAX_MESSAGE_BYTES,
    });
    expect(toBinary(GetEntriesResponseSchema, capped).length).toBeLessThanOrEqual(
      MAX_MESSAGE_BYTES,
    );
  });

  it("GetState and GetTree page by bytes too, also with a smaller max_response_bytes", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    const first = await c.session.getState({ workspace: ws, session: id });
    expect(first.nextPageToken).not.toBe("");
    const state = await readState(c, { workspace: ws, session: id });
    expect(state.state?.messages.map((m) => m.entryId)).toEqual(
      Array.from({ length: ENTRIES }, (_, i) => `e${i}`),
    );
    const smaller = await c.session.getState({
      workspace: ws,
      session: id,
      maxResponseBytes: 70_000,
    });
    expect(smaller.state?.messages.length).toBeLessThan(first.state?.messages.length ?? 0);
    expect(smaller.state?.messages.length).toBeGreaterThanOrEqual(1);
    const tree = await readTree(c, { workspace: ws, session: id, maxResponseBytes: 2_000 });
    expect(tree.nodes).toHaveLength(ENTRIES + 1);
  });
});

describe("sessiond export / import of a session larger than one response", () => {
  it("exports every entry and imports them into another workspace, the same", async () => {
    const { ws, id } = await bigSession("grpc");
    const target = `http://127.0.0.1:${server.port}`;
    const exported = await runCli(["export", id, "--server", target, "--workspace", ws], {
      timeoutMs: 60_000,
    });
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout.trim().split("\n");
    expect(lines).toHaveLength(ENTRIES + 1);
    const copy = uniqueWorkspace("big-copy");
    const imported = await runCli(
      [
        "import",
        "-",
        "--server",
        target,
        "--workspace",
        copy,
        "--max-message-bytes",
        String(MAX_MESSAGE_BYTES),
      ],
      {
        input: exported.stdout,
        timeoutMs: 60_000,
      },
    );
    expect(imported.code, imported.stderr).toBe(0);
    const c = client(server.url, "grpc");
    const again = await readAll(c, copy, id);
    const original = await readAll(c, ws, id);
    expect(again.map((e) => toBinary(EntrySchema, e))).toEqual(
      original.map((e) => toBinary(EntrySchema, e)),
    );
  });
});

describe.each(PROTOCOLS)("listings of sessions larger than one response, over %s", (protocol) => {
  /** 12 sessions whose metadata is ~40 KB each (480 KB): ListSessions' default page of 100 would not fit. */
  async function bigListing(): Promise<{ ws: string; ids: string[] }> {
    const c = client(server.url, protocol);
    const ws = uniqueWorkspace(`biglist-${protocol}`);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { session } = await c.store.createSession({
        workspace: ws,
        sessionId: `big-${String(i).padStart(2, "0")}`,
        title: `needle ${i} ${"t".repeat(20_000)}`,
        metadata: { notes: text(i).slice(0, 20_000) },
      });
      ids.push(session?.id ?? "");
      await c.session.append({
        workspace: ws,
        session: session?.id ?? "",
        entries: [user(`needle in session ${i}`), user(`another needle ${i}`)],
      });
    }
    return { ws, ids };
  }

  it("ListSessions and SearchEntries page by bytes to the end; every page fits", async () => {
    const { ws, ids } = await bigListing();
    const c = client(server.url, protocol);
    const listed: string[] = [];
    const sizes: number[] = [];
    let token = "";
    do {
      const page = await c.store.listSessions({
        workspace: ws,
        order: SortOrder.OLDEST_FIRST,
        pageToken: token,
      });
      expect(page.sessions.length).toBeGreaterThan(0);
      sizes.push(page.sessions.length);
      expect(toBinary(ListSessionsResponseSchema, page).length).toBeLessThanOrEqual(
        MAX_MESSAGE_BYTES,
      );
      listed.push(...page.sessions.map((s) => s.id));
      token = page.nextPageToken;
    } while (token !== "");
    expect(listed).toEqual(ids);
    expect(sizes.length).toBeGreaterThanOrEqual(2);
    // A smaller max_response_bytes: fewer sessions per page, one at least.
    const small = await c.store.listSessions({
      workspace: ws,
      order: SortOrder.OLDEST_FIRST,
      maxResponseBytes: 1,
    });
    expect(small.sessions.map((s) => s.id)).toEqual([ids[0]]);
    const next = await c.store.listSessions({
      workspace: ws,
      order: SortOrder.OLDEST_FIRST,
      maxResponseBytes: 1,
      pageToken: small.nextPageToken,
    });
    expect(next.sessions.map((s) => s.id)).toEqual([ids[1]]);

    const hits: string[] = [];
    token = "";
    let pages = 0;
    do {
      const page = await c.store.searchEntries({
        workspace: ws,
        query: "needle",
        order: SortOrder.OLDEST_FIRST,
        pageToken: token,
        maxResponseBytes: 100_000,
      });
      pages++;
      expect(toBinary(SearchEntriesResponseSchema, page).length).toBeLessThanOrEqual(100_000);
      hits.push(...page.hits.map((h) => `${h.sessionId}/${h.seq}`));
      token = page.nextPageToken;
    } while (token !== "");
    expect(hits).toEqual(ids.flatMap((id) => [`${id}/2`, `${id}/3`]));
    expect(pages).toBeGreaterThanOrEqual(5);
  });
});

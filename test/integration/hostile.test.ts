/**
 * T6 (small): hostile requests against a live `sessiond serve` process on
 * 127.0.0.1. Traversal and malformed ids in every field that takes one, 10 KB
 * ids, short and ambiguous prefixes, another workspace's sessions, oversize
 * messages, huge cursors, wrong types, tiny deadlines and garbage bytes on the
 * port. Every request must get its expected code (never INTERNAL / UNKNOWN)
 * with a message free of stack traces and paths; afterwards no file may exist
 * outside the data dir, the data dir holds only session files, and the server
 * is alive and still serving. On PostgreSQL (SESSIOND_TEST_STORAGE=postgres)
 * the data dir must stay empty and the tables hold only well-formed ids in
 * the workspaces we used.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import type { View } from "../../gen/sessiond/v1/session_pb.js";
import { AppendRequestSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import type { SortOrder } from "../../gen/sessiond/v1/store_service_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { ON_POSTGRES, REPO, type SessiondProcess, startSessiond } from "../harness/server.js";
import {
  envelope,
  h2frame,
  listNames,
  PREFACE,
  rawCall,
  refusableGarbage,
  SETTINGS,
  walk,
} from "../reliability/lib/hostile-wire.js";

const MAX_MESSAGE_BYTES = 65_536;
const MAX_DEADLINE_MS = 120_000;
const WS = "t6";
const OTHER_WS = "t6-other";
const VICTIM = "victim-0001";

/** Values that must never become a path, in every id-like field. */
const HOSTILE: readonly string[] = [
  "../x",
  "..%2f..%2fetc",
  "%2e%2e%2f",
  "%2e%2e",
  "/etc/passwd",
  "a/b",
  "a\\b",
  "..",
  ".",
  "nul\0byte",
  "\0",
  "x\0/../../etc/passwd",
  "x".repeat(10_240),
  "../".repeat(3_414),
  "C:\\Windows\\win.ini",
  "~root",
  "a\nb",
  " lead",
  "ünïcödé",
  "\u202etxt.exe",
  "\ud800",
];

/** Names a traversal could have produced outside the data dir. */
const SUSPICIOUS = new Set(["x", "y", "etc", "passwd", "a", "b", "sessions", "subagents"]);
for (const h of HOSTILE) {
  for (const part of h.split(/[/\\]/)) if (part !== "" && part.length < 256) SUSPICIOUS.add(part);
}
const suspicious = (name: string) =>
  SUSPICIOUS.has(name) || name.endsWith(".jsonl") || name.includes("%2") || name.includes("\0");

type CodeName = keyof typeof Code | "Ok";

interface Case {
  name: string;
  expect: readonly CodeName[];
  run: () => Promise<unknown>;
}

interface Tally {
  requests: number;
  unexpected: string[];
}

const tally: Tally = { requests: 0, unexpected: [] };

/**
 * Rows of a PostgreSQL-backed server's tables that a hostile request could
 * have produced: a session in a workspace we never used, a session id or an
 * entry id outside its allowlist pattern, an entry whose session is missing.
 */
async function unexpectedRows(url: string, used: ReadonlySet<string>): Promise<string[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const out: string[] = [];
    const sessions = await sql<{ workspace: string; session_id: string }[]>`
      SELECT workspace, session_id FROM sessiond_sessions`;
    for (const r of sessions) {
      if (!used.has(r.workspace))
        out.push(`db: session in unused workspace ${JSON.stringify(r.workspace)}`);
      if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(r.session_id)) {
        out.push(`db: malformed session id ${JSON.stringify(r.session_id.slice(0, 80))}`);
      }
    }
    const badEntries = await sql<{ session_id: string; id: string }[]>`
      SELECT session_id, id FROM sessiond_entries WHERE id !~ '^[A-Za-z0-9_-]{1,64}$' LIMIT 20`;
    for (const r of badEntries) {
      out.push(`db: malformed entry id ${JSON.stringify(r.id.slice(0, 80))} in ${r.session_id}`);
    }
    if (sessions.length === 0) out.push("db: no sessions at all (is this the server's database?)");
    return out;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** A message a client may see: no stack trace, no server path, bounded size. */
function badMessage(message: string, dataDir: string): string | undefined {
  if (/\n\s+at |\.ts:\d+|\.js:\d+|node_modules/.test(message)) return "stack trace";
  if (message.includes(dataDir) || message.includes(REPO)) return "server path";
  // On PostgreSQL: neither the connection URL nor the database's name.
  if (/postgres(ql)?:\/\/|sessiond_it_/i.test(message)) return "database URL";
  if (message.length > 2_048) return `message of ${message.length} chars`;
  return undefined;
}

/** Reads the first message of a server stream (so its error surfaces), then stops. */
async function firstOf(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) return;
}

function userText(text: string, id = ""): Entry {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

describe("T6 hostile requests", () => {
  let server: SessiondProcess;
  let parent: string;
  let dataDir: string;
  let client: SessiondClient;
  let connectClient: SessiondClient;
  let raw: http2.ClientHttp2Session;
  const before = new Map<string, Set<string>>();
  let passwdMtime = 0;
  let victimHead = 0n;
  const usedWorkspaces = new Set([WS]);

  // Roots a traversal could reach: the data dir's parent (exact), the temp dir,
  // the server's cwd, / and /etc (only names a hostile id could produce).
  const roots = () => [parent, tmpdir(), REPO, "/", "/etc"];

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "sessiond-t6-"));
    dataDir = join(parent, "data");
    mkdirSync(dataDir);
    for (const r of roots()) before.set(r, listNames(r));
    passwdMtime = statSync("/etc/passwd").mtimeMs;
    server = await startSessiond({
      dataDir,
      args: [
        "--max-message-bytes",
        String(MAX_MESSAGE_BYTES),
        "--max-deadline-ms",
        String(MAX_DEADLINE_MS),
      ],
    });
    client = createSessiondClient({ baseUrl: server.url, retry: false, timeoutMs: 10_000 });
    connectClient = createSessiondClient({
      baseUrl: server.url,
      protocol: "connect",
      retry: false,
      timeoutMs: 10_000,
    });
    raw = http2.connect(server.url);
    raw.on("error", () => {});
    await client.store.createSession({ workspace: WS, sessionId: VICTIM, title: "victim" });
    const appended = await client.session.append({
      workspace: WS,
      session: VICTIM,
      entries: [
        userText("hello", "u1"),
        { id: "l1", kind: { case: "label", value: { label: "mark" } } },
      ],
    });
    victimHead = appended.headSeq;
    for (const id of ["ambig-0001", "ambig-0002"]) {
      await client.store.createSession({ workspace: WS, sessionId: id });
    }
  });

  afterAll(async () => {
    raw?.destroy();
    await server?.stop();
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  /** Runs cases (16 at a time) and records every answer that is not one of the expected codes. */
  async function check(cases: readonly Case[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++] as Case;
        tally.requests++;
        let got: CodeName = "Canceled";
        let message = "";
        try {
          await c.run();
          got = "Ok";
        } catch (err) {
          const e = ConnectError.from(err);
          got = Code[e.code] as CodeName;
          message = e.rawMessage;
        }
        const bad = badMessage(message, dataDir);
        if (!c.expect.includes(got) || bad !== undefined) {
          tally.unexpected.push(
            `${c.name}: ${got}${bad ? ` (${bad})` : ""} ${message.slice(0, 160)}`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  }

  const label = (v: string) =>
    JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…(${v.length})` : v);

  it("rejects traversal and malformed ids in every field that takes one", async () => {
    const s = client.session;
    const st = client.store;
    const cases: Case[] = [];
    const add = (name: string, expectCodes: readonly CodeName[], run: () => Promise<unknown>) =>
      cases.push({ name, expect: expectCodes, run });
    const INVALID = ["InvalidArgument"] as const;
    const NOT_FOUND_OR_INVALID = ["NotFound", "InvalidArgument"] as const;
    for (const h of HOSTILE) {
      const v = label(h);
      // workspace, in every RPC
      add(`CreateSession workspace=${v}`, INVALID, () => st.createSession({ workspace: h }));
      add(`GetSession workspace=${v}`, INVALID, () =>
        st.getSession({ workspace: h, session: VICTIM }),
      );
      add(`ListSessions workspace=${v}`, INVALID, () => st.listSessions({ workspace: h }));
      add(`DeleteSession workspace=${v}`, INVALID, () =>
        st.deleteSession({ workspace: h, session: VICTIM }),
      );
      add(`ForkSession workspace=${v}`, INVALID, () =>
        st.forkSession({ workspace: h, session: VICTIM }),
      );
      add(`WatchSessions workspace=${v}`, INVALID, () =>
        firstOf(st.watchSessions({ workspace: h })),
      );
      add(`Append workspace=${v}`, INVALID, () =>
        s.append({ workspace: h, session: VICTIM, entries: [userText("x")] }),
      );
      add(`Rewind workspace=${v}`, INVALID, () =>
        s.rewind({ workspace: h, session: VICTIM, target: "u1" }),
      );
      add(`Reset workspace=${v}`, INVALID, () => s.reset({ workspace: h, session: VICTIM }));
      add(`GetState workspace=${v}`, INVALID, () => s.getState({ workspace: h, session: VICTIM }));
      add(`GetEntries workspace=${v}`, INVALID, () =>
        s.getEntries({ workspace: h, session: VICTIM }),
      );
      add(`GetTree workspace=${v}`, INVALID, () => s.getTree({ workspace: h, session: VICTIM }));
      add(`WatchEntries workspace=${v}`, INVALID, () =>
        firstOf(s.watchEntries({ workspace: h, session: VICTIM })),
      );
      // session (id or prefix), in every RPC that addresses one
      add(`GetSession session=${v}`, INVALID, () => st.getSession({ workspace: WS, session: h }));
      add(`DeleteSession session=${v}`, INVALID, () =>
        st.deleteSession({ workspace: WS, session: h }),
      );
      add(`ForkSession session=${v}`, INVALID, () => st.forkSession({ workspace: WS, session: h }));
      add(`Append session=${v}`, INVALID, () =>
        s.append({ workspace: WS, session: h, entries: [userText("x")] }),
      );
      add(`Rewind session=${v}`, INVALID, () =>
        s.rewind({ workspace: WS, session: h, target: "u1" }),
      );
      add(`Reset session=${v}`, INVALID, () => s.reset({ workspace: WS, session: h }));
      add(`GetState session=${v}`, INVALID, () => s.getState({ workspace: WS, session: h }));
      add(`GetEntries session=${v}`, INVALID, () => s.getEntries({ workspace: WS, session: h }));
      add(`GetTree session=${v}`, INVALID, () => s.getTree({ workspace: WS, session: h }));
      add(`WatchEntries session=${v}`, INVALID, () =>
        firstOf(s.watchEntries({ workspace: WS, session: h })),
      );
      // new session ids and parent session ids
      add(`CreateSession session_id=${v}`, INVALID, () =>
        st.createSession({ workspace: WS, sessionId: h }),
      );
      add(`CreateSession parent_session_id=${v}`, INVALID, () =>
        st.createSession({ workspace: WS, parentSessionId: h, agentType: "t" }),
      );
      add(`ListSessions parent_session_id=${v}`, INVALID, () =>
        st.listSessions({ workspace: WS, parentSessionId: h }),
      );
      add(`ForkSession session_id=${v}`, INVALID, () =>
        st.forkSession({ workspace: WS, session: VICTIM, sessionId: h }),
      );
      // entry ids, parent ids and every other id that points at an entry
      add(`Append entry.id=${v}`, INVALID, () =>
        s.append({ workspace: WS, session: VICTIM, entries: [userText("x", h)] }),
      );
      add(`Append entry.parent_id=${v}`, INVALID, () =>
        s.append({ workspace: WS, session: VICTIM, entries: [{ ...userText("x"), parentId: h }] }),
      );
      add(`Append expected_leaf_id=${v}`, ["Aborted", "InvalidArgument"], () =>
        s.append({ workspace: WS, session: VICTIM, entries: [userText("x")], expectedLeafId: h }),
      );
      add(`Append tool_call_id=${v}`, INVALID, () =>
        s.append({
          workspace: WS,
          session: VICTIM,
          entries: [
            {
              kind: {
                case: "message",
                value: {
                  role: Role.TOOL,
                  toolCallId: h,
                  content: [{ part: { case: "text", value: "result" } }],
                },
              },
            },
          ],
        }),
      );
      add(`Append compaction.replaces_entry_ids=${v}`, INVALID, () =>
        s.append({
          workspace: WS,
          session: VICTIM,
          entries: [
            { kind: { case: "compaction", value: { summary: "s", replacesEntryIds: [h] } } },
          ],
        }),
      );
      add(`Append branch_summary.from_id=${v}`, INVALID, () =>
        s.append({
          workspace: WS,
          session: VICTIM,
          entries: [{ kind: { case: "branchSummary", value: { summary: "s", fromId: h } } }],
        }),
      );
      add(`Rewind target=${v}`, NOT_FOUND_OR_INVALID, () =>
        s.rewind({ workspace: WS, session: VICTIM, target: h }),
      );
      add(`Rewind entry_id=${v}`, INVALID, () =>
        s.rewind({ workspace: WS, session: VICTIM, target: "u1", entryId: h }),
      );
      add(`Rewind expected_leaf_id=${v}`, ["Aborted", "InvalidArgument"], () =>
        s.rewind({ workspace: WS, session: VICTIM, target: "u1", expectedLeafId: h }),
      );
      add(`Reset entry_id=${v}`, INVALID, () =>
        s.reset({ workspace: WS, session: VICTIM, entryId: h }),
      );
      add(`GetState at_entry_id=${v}`, NOT_FOUND_OR_INVALID, () =>
        s.getState({ workspace: WS, session: VICTIM, atEntryId: h }),
      );
      add(`ForkSession entry=${v}`, NOT_FOUND_OR_INVALID, () =>
        st.forkSession({ workspace: WS, session: VICTIM, entry: h }),
      );
      // opaque tokens
      add(`ListSessions page_token=${v}`, INVALID, () =>
        st.listSessions({ workspace: WS, pageToken: h }),
      );
      add(`WatchSessions after_cursor=${v}`, INVALID, () =>
        firstOf(st.watchSessions({ workspace: WS, afterCursor: h })),
      );
    }
    await check(cases);
    expect(tally.unexpected).toEqual([]);
    // Nothing was written to the victim.
    const meta = await client.store.getSession({ workspace: WS, session: VICTIM });
    expect(meta.session?.headSeq).toBe(victimHead);
  });

  it("answers short and ambiguous prefixes and other workspaces' sessions correctly", async () => {
    const s = client.session;
    const st = client.store;
    const cases: Case[] = [
      {
        name: "3-char prefix",
        expect: ["InvalidArgument"],
        run: () => st.getSession({ workspace: WS, session: "vic" }),
      },
      {
        name: "3-char prefix (append)",
        expect: ["InvalidArgument"],
        run: () => s.append({ workspace: WS, session: "amb", entries: [userText("x")] }),
      },
      {
        name: "1-char prefix",
        expect: ["InvalidArgument"],
        run: () => s.getTree({ workspace: WS, session: "v" }),
      },
      {
        name: "empty session",
        expect: ["InvalidArgument"],
        run: () => s.getState({ workspace: WS, session: "" }),
      },
      {
        name: "ambiguous prefix",
        expect: ["FailedPrecondition"],
        run: () => st.getSession({ workspace: WS, session: "ambi" }),
      },
      {
        name: "ambiguous prefix (append)",
        expect: ["FailedPrecondition"],
        run: () => s.append({ workspace: WS, session: "ambig-000", entries: [userText("x")] }),
      },
      {
        name: "ambiguous prefix (delete)",
        expect: ["FailedPrecondition"],
        run: () => st.deleteSession({ workspace: WS, session: "ambig" }),
      },
      {
        name: "ambiguous prefix (watch)",
        expect: ["FailedPrecondition"],
        run: () => firstOf(s.watchEntries({ workspace: WS, session: "ambig" })),
      },
      {
        name: "no match",
        expect: ["NotFound"],
        run: () => st.getSession({ workspace: WS, session: "ambig-0003" }),
      },
      {
        name: "longer than the id",
        expect: ["NotFound"],
        run: () => st.getSession({ workspace: WS, session: `${VICTIM}0` }),
      },
      {
        name: "128-char id",
        expect: ["NotFound"],
        run: () => st.getSession({ workspace: WS, session: "v".repeat(128) }),
      },
      {
        name: "129-char id",
        expect: ["InvalidArgument"],
        run: () => st.getSession({ workspace: WS, session: "v".repeat(129) }),
      },
    ];
    for (const ref of [VICTIM, "vict", "ambig-0001"]) {
      const v = `${OTHER_WS}/${ref}`;
      cases.push(
        {
          name: `GetSession ${v}`,
          expect: ["NotFound"],
          run: () => st.getSession({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `DeleteSession ${v}`,
          expect: ["NotFound"],
          run: () => st.deleteSession({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `ForkSession ${v}`,
          expect: ["NotFound"],
          run: () => st.forkSession({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `Append ${v}`,
          expect: ["NotFound"],
          run: () => s.append({ workspace: OTHER_WS, session: ref, entries: [userText("x")] }),
        },
        {
          name: `Rewind ${v}`,
          expect: ["NotFound"],
          run: () => s.rewind({ workspace: OTHER_WS, session: ref, target: "u1" }),
        },
        {
          name: `Reset ${v}`,
          expect: ["NotFound"],
          run: () => s.reset({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `GetState ${v}`,
          expect: ["NotFound"],
          run: () => s.getState({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `GetEntries ${v}`,
          expect: ["NotFound"],
          run: () => s.getEntries({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `GetTree ${v}`,
          expect: ["NotFound"],
          run: () => s.getTree({ workspace: OTHER_WS, session: ref }),
        },
        {
          name: `WatchEntries ${v}`,
          expect: ["NotFound"],
          run: () => firstOf(s.watchEntries({ workspace: OTHER_WS, session: ref })),
        },
        {
          name: `CreateSession parent ${v}`,
          expect: ["NotFound"],
          run: () =>
            st.createSession({ workspace: OTHER_WS, parentSessionId: ref, agentType: "t" }),
        },
      );
    }
    await check(cases);
    expect(tally.unexpected).toEqual([]);
    // The ambiguity error names candidates.
    const err = await st
      .getSession({ workspace: WS, session: "ambi" })
      .catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).rawMessage).toMatch(/ambig-0001/);
    // Another workspace sees nothing, and nothing was created there.
    expect((await st.listSessions({ workspace: OTHER_WS })).sessions).toEqual([]);
  });

  it("rejects huge cursors, page sizes and expectations", async () => {
    const s = client.session;
    const st = client.store;
    const U64_MAX = 2n ** 64n - 1n;
    const cases: Case[] = [
      {
        name: "GetEntries after_seq 2^63",
        expect: ["InvalidArgument"],
        run: () => s.getEntries({ workspace: WS, session: VICTIM, afterSeq: 2n ** 63n }),
      },
      {
        name: "GetEntries after_seq 2^64-1",
        expect: ["InvalidArgument"],
        run: () => s.getEntries({ workspace: WS, session: VICTIM, afterSeq: U64_MAX }),
      },
      {
        name: "GetEntries after_seq 2^53",
        expect: ["InvalidArgument"],
        run: () => s.getEntries({ workspace: WS, session: VICTIM, afterSeq: 2n ** 53n }),
      },
      {
        name: "GetEntries limit 2^32-1",
        expect: ["InvalidArgument"],
        run: () => s.getEntries({ workspace: WS, session: VICTIM, limit: 2 ** 32 - 1 }),
      },
      {
        name: "GetEntries limit max+1",
        expect: ["InvalidArgument"],
        run: () => s.getEntries({ workspace: WS, session: VICTIM, limit: 1001 }),
      },
      {
        name: "ListSessions page_size 2^32-1",
        expect: ["InvalidArgument"],
        run: () => st.listSessions({ workspace: WS, pageSize: 2 ** 32 - 1 }),
      },
      {
        name: "ListSessions page_size max+1",
        expect: ["InvalidArgument"],
        run: () => st.listSessions({ workspace: WS, pageSize: 1001 }),
      },
      {
        name: "WatchEntries after_seq 2^63",
        expect: ["InvalidArgument"],
        run: () => firstOf(s.watchEntries({ workspace: WS, session: VICTIM, afterSeq: 2n ** 63n })),
      },
      {
        name: "WatchEntries after_seq beyond head",
        expect: ["InvalidArgument"],
        run: () =>
          firstOf(s.watchEntries({ workspace: WS, session: VICTIM, afterSeq: 1_000_000n })),
      },
      {
        name: "Append expected_seq 2^64-1",
        expect: ["InvalidArgument"],
        run: () =>
          s.append({
            workspace: WS,
            session: VICTIM,
            entries: [userText("x")],
            expectedSeq: U64_MAX,
          }),
      },
      {
        name: "Append expected_seq mismatch",
        expect: ["Aborted"],
        run: () =>
          s.append({
            workspace: WS,
            session: VICTIM,
            entries: [userText("x")],
            expectedSeq: 1_000n,
          }),
      },
      {
        name: "Rewind expected_seq 2^63",
        expect: ["InvalidArgument"],
        run: () =>
          s.rewind({ workspace: WS, session: VICTIM, target: "u1", expectedSeq: 2n ** 63n }),
      },
      {
        name: "Reset expected_seq 2^63",
        expect: ["InvalidArgument"],
        run: () => s.reset({ workspace: WS, session: VICTIM, expectedSeq: 2n ** 63n }),
      },
      {
        name: "GetState view 999",
        expect: ["Ok", "InvalidArgument"],
        run: () => s.getState({ workspace: WS, session: VICTIM, view: 999 as View }),
      },
      {
        name: "ListSessions order 999",
        expect: ["Ok", "InvalidArgument"],
        run: () => st.listSessions({ workspace: WS, order: 999 as SortOrder }),
      },
    ];
    await check(cases);
    expect(tally.unexpected).toEqual([]);
    // The largest cursor a log could reach is a clean, empty page (documented: entries with seq > after_seq).
    const page = await s.getEntries({
      workspace: WS,
      session: VICTIM,
      afterSeq: BigInt(Number.MAX_SAFE_INTEGER),
    });
    expect(page.entries).toEqual([]);
    expect(page.headSeq).toBe(victimHead);
  });

  it("refuses oversize messages (RESOURCE_EXHAUSTED) and messages of the wrong shape", async () => {
    const big = "x".repeat(100 * 1024);
    const many = Array.from({ length: 1001 }, () => userText("y"));
    const cases: Case[] = [];
    for (const [proto, c] of [
      ["grpc", client],
      ["connect", connectClient],
    ] as const) {
      cases.push(
        {
          name: `${proto} Append 100 KB`,
          expect: ["ResourceExhausted"],
          run: () => c.session.append({ workspace: WS, session: VICTIM, entries: [userText(big)] }),
        },
        {
          name: `${proto} CreateSession title 100 KB`,
          expect: ["ResourceExhausted"],
          run: () => c.store.createSession({ workspace: WS, title: big }),
        },
        {
          name: `${proto} Append 1001 entries`,
          expect: ["ResourceExhausted"],
          run: () => c.session.append({ workspace: WS, session: VICTIM, entries: many }),
        },
        {
          name: `${proto} deadline over the maximum`,
          expect: ["InvalidArgument"],
          run: () => c.store.listSessions({ workspace: WS }, { timeoutMs: MAX_DEADLINE_MS * 30 }),
        },
      );
    }
    await check(cases);

    // Wrong types and broken framing, written by hand.
    const getSession = "/sessiond.v1.StoreService/GetSession";
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]);
    const rawCases: Array<{
      name: string;
      expect: readonly string[];
      call: () => Promise<{ code: string; message: string }>;
    }> = [
      {
        name: "connect JSON: workspace is a number",
        expect: ["InvalidArgument"],
        call: () =>
          rawCall(
            raw,
            getSession,
            "application/json",
            Buffer.from('{"workspace":5,"session":"victim-0001"}'),
          ),
      },
      {
        name: "connect JSON: session is an object",
        expect: ["InvalidArgument"],
        call: () =>
          rawCall(raw, getSession, "application/json", Buffer.from('{"session":{"a":1}}')),
      },
      {
        name: "connect JSON: not JSON",
        expect: ["InvalidArgument"],
        call: () => rawCall(raw, getSession, "application/json", Buffer.from("{{{")),
      },
      {
        name: "connect JSON: unknown field",
        expect: ["InvalidArgument", "NotFound"],
        call: () =>
          rawCall(
            raw,
            getSession,
            "application/json",
            Buffer.from('{"nope":1,"workspace":"t6","session":"zzzz"}'),
          ),
      },
      {
        name: "connect JSON: 100 KB",
        expect: ["ResourceExhausted"],
        call: () =>
          rawCall(
            raw,
            getSession,
            "application/json",
            Buffer.from(JSON.stringify({ session: big })),
          ),
      },
      {
        name: "gRPC: truncated envelope",
        expect: ["InvalidArgument"],
        call: () =>
          rawCall(raw, getSession, "application/grpc", Buffer.from([0, 0, 0, 0, 50, 1, 2])),
      },
      {
        name: "gRPC: envelope of 4 GiB",
        expect: ["ResourceExhausted"],
        call: () =>
          rawCall(
            raw,
            getSession,
            "application/grpc",
            envelope(Buffer.from([1, 2]), 0, 0xffffffff),
          ),
      },
      {
        name: "gRPC: two messages to a unary method",
        expect: ["Unimplemented", "InvalidArgument"],
        call: () =>
          rawCall(
            raw,
            getSession,
            "application/grpc",
            Buffer.concat([envelope(Buffer.alloc(0)), envelope(Buffer.alloc(0))]),
          ),
      },
      {
        name: "gRPC: no message",
        expect: ["Unimplemented", "InvalidArgument"],
        call: () => rawCall(raw, getSession, "application/grpc", Buffer.alloc(0)),
      },
      {
        name: "gRPC: bad grpc-timeout",
        expect: ["InvalidArgument"],
        call: () =>
          rawCall(raw, getSession, "application/grpc", envelope(Buffer.alloc(0)), {
            "grpc-timeout": "-1m",
          }),
      },
      {
        name: "gRPC: unknown method",
        expect: ["http-404", "Unimplemented"],
        call: () =>
          rawCall(
            raw,
            "/sessiond.v1.StoreService/Nope",
            "application/grpc",
            envelope(Buffer.alloc(0)),
          ),
      },
      {
        name: "gRPC: traversal in the method path",
        expect: ["http-404", "Unimplemented"],
        call: () =>
          rawCall(raw, "/../../etc/passwd", "application/grpc", envelope(Buffer.alloc(0))),
      },
      {
        name: "wrong content type",
        expect: ["http-415", "Unimplemented"],
        call: () => rawCall(raw, getSession, "text/plain", Buffer.from("hi")),
      },
      // Unparseable protobuf is bad input on every protocol (connect-es itself would say
      // INTERNAL for Connect and gRPC-Web: src/server/wire/connect-refusals.ts).
      {
        name: "gRPC: garbage protobuf",
        expect: ["InvalidArgument"],
        call: () => rawCall(raw, getSession, "application/grpc", envelope(garbage)),
      },
      {
        name: "gRPC: wrong wire type",
        expect: ["InvalidArgument"],
        call: () =>
          rawCall(raw, getSession, "application/grpc", envelope(Buffer.from([0x08, 0x05]))),
      },
      {
        name: "connect proto: garbage protobuf",
        expect: ["InvalidArgument"],
        call: () => rawCall(raw, getSession, "application/proto", garbage),
      },
    ];
    for (const c of rawCases) {
      tally.requests++;
      const r = await c.call();
      const bad = badMessage(r.message, dataDir);
      if (!c.expect.includes(r.code) || bad !== undefined) {
        tally.unexpected.push(
          `${c.name}: ${r.code}${bad ? ` (${bad})` : ""} ${r.message.slice(0, 160)}`,
        );
      }
    }
    expect(tally.unexpected).toEqual([]);
    const meta = await client.store.getSession({ workspace: WS, session: VICTIM });
    expect(meta.session?.headSeq).toBe(victimHead);
  });

  it("handles tiny deadlines without damage (retries are idempotent)", async () => {
    const id = "deadline-0001";
    await client.store.createSession({ workspace: WS, sessionId: id });
    const ids = Array.from({ length: 20 }, (_, i) => `d${i}`);
    let exceeded = 0;
    // Client-side 1 ms deadlines (the call may or may not have reached the server).
    const cases: Case[] = ids.slice(0, 10).map((eid) => ({
      name: `Append ${eid} with a 1 ms deadline`,
      expect: ["DeadlineExceeded", "Ok"],
      run: () =>
        client.session
          .append({ workspace: WS, session: id, entries: [userText(eid, eid)] }, { timeoutMs: 1 })
          .catch((e: unknown) => {
            if (ConnectError.from(e).code === Code.DeadlineExceeded) exceeded++;
            throw e;
          }),
    }));
    cases.push(
      ...["GetState", "GetTree", "ListSessions"].map((m) => ({
        name: `${m} with a 1 ms deadline`,
        expect: ["DeadlineExceeded", "Ok"] as CodeName[],
        run: () => {
          const opts = { timeoutMs: 1 };
          const p =
            m === "GetState"
              ? client.session.getState({ workspace: WS, session: id }, opts)
              : m === "GetTree"
                ? client.session.getTree({ workspace: WS, session: id }, opts)
                : client.store.listSessions({ workspace: WS }, opts);
          return p.catch((e: unknown) => {
            if (ConnectError.from(e).code === Code.DeadlineExceeded) exceeded++;
            throw e;
          });
        },
      })),
    );
    await check(cases);
    // Server-side deadlines of 1 ns / 1 µs / 1 ms, sent by hand.
    for (const [i, eid] of ids.slice(10).entries()) {
      tally.requests++;
      const body = toBinary(
        AppendRequestSchema,
        create(AppendRequestSchema, { workspace: WS, session: id, entries: [userText(eid, eid)] }),
      );
      const r = await rawCall(
        raw,
        "/sessiond.v1.SessionService/Append",
        "application/grpc",
        envelope(body),
        {
          "grpc-timeout": ["1n", "1u", "1m"][i % 3] as string,
        },
      );
      if (r.code === "DeadlineExceeded") exceeded++;
      else if (r.code !== "Ok")
        tally.unexpected.push(`raw Append ${eid} grpc-timeout: ${r.code} ${r.message}`);
    }
    expect(tally.unexpected).toEqual([]);
    expect(exceeded).toBeGreaterThan(0);
    // Retry every append with the same id: each lands exactly once, seqs stay dense.
    for (const eid of ids) {
      await client.session.append({ workspace: WS, session: id, entries: [userText(eid, eid)] });
    }
    const page = await client.session.getEntries({ workspace: WS, session: id, limit: 1000 });
    const seqs = page.entries.map((e) => Number(e.seq));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    // Every entry after the root (seq 1, a random id) must be one of ours, exactly once.
    const stored = page.entries.slice(1).map((e) => e.id);
    expect([...stored].sort()).toEqual([...ids].sort());
    expect(page.headSeq).toBe(BigInt(ids.length + 1));
  });

  it("drops connections that send garbage and keeps serving", async () => {
    /** Writes bytes; resolves with whether the server closed the socket, and any GOAWAY error code. */
    const probe = (bytes: Buffer, waitMs = 3_000) =>
      new Promise<{ closed: boolean; goaway?: number }>((resolve) => {
        const sock = net.connect(server.port, "127.0.0.1");
        let got = Buffer.alloc(0);
        const goaway = () => {
          for (let i = 0; i + 9 <= got.length; i += 9 + got.readUIntBE(i, 3)) {
            if (got[i + 3] === 7 && i + 17 <= got.length) return got.readUInt32BE(i + 13);
          }
          return undefined;
        };
        const timer = setTimeout(() => {
          sock.destroy();
          resolve({ closed: false, goaway: goaway() });
        }, waitMs);
        sock.on("data", (d: Buffer) => {
          got = Buffer.concat([got, d]);
        });
        sock.on("error", () => {});
        sock.on("close", () => {
          clearTimeout(timer);
          resolve({ closed: true, goaway: goaway() });
        });
        sock.on("connect", () => sock.write(bytes));
      });
    // Garbage the server can refuse at once. Raw random bytes can fail to be:
    // bytes that start the client preface ("P…") or an HTTP/1.1 request line
    // ("G…") make it wait for the rest, and after the preface a random 9-byte
    // header may announce an unknown frame type (ignored by HTTP/2) longer
    // than what follows, which the server rightly waits on until its idle
    // timeout. So random bytes never start like a request (refusableGarbage),
    // and garbage after the preface is framed.
    const garbage = (n: number) => refusableGarbage(randomBytes(n));
    const dropped: Array<[string, Buffer]> = [
      ["random 64 KB", garbage(65_536)],
      ["random 16 bytes", garbage(16)],
      // (A well-formed HTTP/1.1 request is served: the plaintext port speaks
      // HTTP/1.1 too, test/integration/plaintext-port.test.ts. A malformed one is not.)
      ["HTTP/1.1 request, malformed header", Buffer.from("GET / HTTP/1.1\r\nHo\x00st: x\r\n\r\n")],
      ["HTTP/1.1 request, bad request line", Buffer.from("GET /\x01 HTTP/9\r\n\r\n")],
      ["TLS ClientHello", Buffer.from("160301020001000000", "hex")],
      ["HTTP/2 preface + garbage", Buffer.concat([PREFACE, h2frame(0, 0, 0, randomBytes(1_000))])],
      ["HTTP/2 preface + NUL bytes", Buffer.concat([PREFACE, Buffer.alloc(1_000)])],
    ];
    for (let i = 0; i < 5; i++) dropped.push([`random ${i}`, garbage(1 + ((i * 7919) % 4096))]);
    for (const [name, bytes] of dropped) {
      tally.requests++;
      const r = await probe(bytes);
      if (!r.closed) tally.unexpected.push(`TCP ${name}: connection not dropped`);
      expect((await client.store.listSessions({ workspace: WS })).sessions.length).toBeGreaterThan(
        0,
      );
    }
    // After a valid SETTINGS frame, garbage is a connection error: the server answers GOAWAY
    // with an error code. (Node 20 then leaves the socket open until the peer closes it; see
    // the report: RFC 9113 §5.4.1 says the endpoint MUST close it.)
    const afterSettings: Array<[string, Buffer]> = [
      [
        "SETTINGS + garbage",
        Buffer.concat([PREFACE, SETTINGS, h2frame(0, 0, 0, randomBytes(1_000))]),
      ],
      [
        // An HPACK index far out of the table (random bytes may decode into headers).
        "SETTINGS + bad HPACK",
        Buffer.concat([
          PREFACE,
          SETTINGS,
          h2frame(1, 5, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])),
        ]),
      ],
      [
        "SETTINGS + DATA on an idle stream",
        Buffer.concat([PREFACE, SETTINGS, h2frame(0, 1, 3, randomBytes(50))]),
      ],
    ];
    for (const [name, bytes] of afterSettings) {
      tally.requests++;
      const r = await probe(bytes, 1_000);
      if (r.goaway === undefined || r.goaway === 0) {
        tally.unexpected.push(`TCP ${name}: no GOAWAY with an error code (closed=${r.closed})`);
      }
      expect((await client.store.listSessions({ workspace: WS })).sessions.length).toBeGreaterThan(
        0,
      );
    }
    expect(tally.unexpected).toEqual([]);
  });

  it("afterwards: nothing outside the data dir, only session files inside, server alive", async () => {
    // The server still answers, and its process lives.
    const listed = await client.store.listSessions({ workspace: WS });
    expect(listed.sessions.map((s) => s.id)).toContain(VICTIM);
    expect(server.proc.exitCode).toBeNull();
    expect(server.proc.signalCode).toBeNull();
    expect(() => process.kill(server.proc.pid as number, 0)).not.toThrow();

    // Nothing new outside the data dir.
    const outside: string[] = [];
    for (const r of roots()) {
      const was = before.get(r) ?? new Set<string>();
      for (const name of listNames(r)) {
        if (was.has(name)) continue;
        if (r === parent || suspicious(name)) outside.push(join(r, name));
      }
    }
    if (statSync("/etc/passwd").mtimeMs !== passwdMtime) outside.push("/etc/passwd (modified)");

    // Inside: only workspaces we used, their sessions dirs, session files and
    // their locks, and each workspace's listing index (and a save of it in flight).
    const real = realpathSync(dataDir);
    const ID = "[A-Za-z0-9][A-Za-z0-9_-]{0,127}";
    const allowed = new RegExp(
      `^(${[...usedWorkspaces].join("|")})(/sessions(/subagents)?(/(${ID}\\.jsonl|\\.${ID}\\.jsonl\\.lock(\\.owner|\\.break)?))?|/listing-index\\.bin|/\\.listing-index-[0-9]+-[0-9a-f]+\\.tmp)?$`,
    );
    const inside: string[] = [];
    for (const rel of walk(dataDir)) {
      const p = join(dataDir, rel);
      const resolved = realpathSync(p);
      const r = relative(real, resolved);
      if (lstatSync(p).isSymbolicLink() || r.startsWith("..") || r === "") outside.push(p);
      // On PostgreSQL the server keeps nothing in its data dir.
      else if (ON_POSTGRES) inside.push(`${rel} (a file in the data dir of a PostgreSQL server)`);
      else if (!allowed.test(rel)) inside.push(rel);
    }
    if (ON_POSTGRES) {
      // The PostgreSQL equivalent of "only session files inside": only the
      // workspaces we used, well-formed session and entry ids, nothing else.
      expect(server.stdout()).toContain("storing postgres at");
      inside.push(...(await unexpectedRows(server.storage, usedWorkspaces)));
    }

    // No INTERNAL / UNKNOWN in the server's request log.
    const internal = server
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { code?: string; method?: string; error?: string })
      .filter((l) => l.code === "Internal" || l.code === "Unknown");

    console.log(
      `T6 hostile: ${tally.requests} requests, ${tally.unexpected.length} unexpected codes, ` +
        `${outside.length} files outside data dir, ${inside.length} unexpected names inside, ` +
        `${internal.length} INTERNAL in the server log`,
    );
    expect(outside).toEqual([]);
    expect(inside).toEqual([]);
    expect(internal).toEqual([]);
    expect(tally.unexpected).toEqual([]);
  });
});

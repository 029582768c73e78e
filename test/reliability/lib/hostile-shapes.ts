/**
 * T6: the shapes of hostile request (durability.md, Service rules) and the
 * codes each must be answered with. Every shape draws a fresh request from
 * the seeded RNG (which RPC, which field, which hostile value), so a run of
 * thousands of requests covers every field that takes an id many times over.
 *
 * | shape                  | expected                                  |
 * |------------------------|-------------------------------------------|
 * | traversal / malformed workspace, session, new id, parent id, entry id, tokens | INVALID_ARGUMENT |
 * | hostile rewind target, fork entry, at_entry_id (labels are free text) | NOT_FOUND or INVALID_ARGUMENT |
 * | hostile expected_leaf_id | ABORTED or INVALID_ARGUMENT             |
 * | 10 KB ids              | INVALID_ARGUMENT                          |
 * | short prefix (< 4)     | INVALID_ARGUMENT                          |
 * | ambiguous prefix       | FAILED_PRECONDITION                       |
 * | unknown id / prefix    | NOT_FOUND                                 |
 * | another workspace's session | NOT_FOUND                            |
 * | huge / negative cursors and page sizes | INVALID_ARGUMENT          |
 * | oversize message / too many entries | RESOURCE_EXHAUSTED           |
 * | wrong JSON types, broken framing | INVALID_ARGUMENT (4 GiB envelope: RESOURCE_EXHAUSTED) |
 * | garbage protobuf       | INVALID_ARGUMENT                          |
 * | unknown method, traversal in the path | HTTP 404 or UNIMPLEMENTED  |
 * | wrong content type     | HTTP 415 or UNIMPLEMENTED                 |
 * | tiny deadlines         | DEADLINE_EXCEEDED or OK                   |
 * | (shapes marked `isolate` run on their own connections: see hostile-lanes.ts) |
 * | deadline over the max  | INVALID_ARGUMENT                          |
 * | random bytes, HTTP/1.1 garbage, HTTP/2 preface + garbage on the port | connection dropped (or GOAWAY / an HTTP/1.1 error) |
 * | missing / wrong / malformed token (auth on) | UNAUTHENTICATED      |
 * | token of workspace A on B's session | NOT_FOUND; on workspace B itself: PERMISSION_DENIED |
 * | health check without a token | OK                                  |
 * | valid requests between the others | OK                             |
 */
import type http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  AppendRequestSchema,
  GetEntriesRequestSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { GetSessionRequestSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import type { SessiondClient } from "../../../src/client/index.js";
import {
  type Answer,
  envelope,
  h2frame,
  PREFACE,
  probe,
  rawCall,
  refusableGarbage,
  SETTINGS,
} from "./hostile-wire.js";
import type { Rng } from "./random.js";

export const WS = "t6";
export const OTHER_WS = "t6-other";
export const VICTIM = "victim-0001";
export const AMBIGUOUS = ["ambig-0001", "ambig-0002"];
export const DEADLINE_SESSION = "deadline-0001";
export const MAX_MESSAGE_BYTES = 65_536;
export const MAX_DEADLINE_MS = 120_000;

/** What a shape may use. */
export interface Ctx {
  readonly client: SessiondClient;
  readonly connect: SessiondClient;
  readonly raw: () => http2.ClientHttp2Session;
  readonly port: number;
  readonly health: Client<typeof Health>;
  /** Auth phase only: clients without a token, with a wrong one, with workspace A's only. */
  readonly auth?: {
    readonly none: SessiondClient;
    readonly wrong: SessiondClient;
    readonly onlyOther: SessiondClient;
    readonly allToken: string;
  };
}

export interface Shape {
  readonly name: string;
  readonly expect: readonly string[];
  /** Relative frequency. */
  readonly weight: number;
  /** Which server: without tokens, with tokens, or both. */
  readonly phase: "open" | "auth" | "both";
  /**
   * Its requests damage their connection, so they run on connections of
   * their own, renewed in time (see hostile-lanes.ts):
   * - "resets": may reset their stream (RST_STREAM from the client); Node's
   *   HTTP/2 layer closes a connection after ~1000 resets. Measured: a 1–3 ms
   *   client deadline resets every time, an oversize raw JSON upload (held
   *   back by flow control, cancelled by rawCall) about 9 times in 10.
   * - "half-open": an oversize upload through the typed client: the server
   *   answers RESOURCE_EXHAUSTED without reading the rest and the client never
   *   cancels it, so the stream stays half-open; after ~90 of them Node
   *   refuses every new stream on that connection (ENHANCE_YOUR_CALM). The
   *   half-open check of t6-hostile.ts measures that on purpose.
   * Every other shape: never (measured through a frame-counting proxy).
   */
  readonly isolate?: "resets" | "half-open";
  make(ctx: Ctx, rng: Rng): { what: string; run: () => Promise<Answer> };
}

/** A typed call's outcome as a code name. */
export async function codeOf(call: () => Promise<unknown>): Promise<Answer> {
  try {
    await call();
    return { code: "Ok", message: "" };
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: Code[e.code] ?? String(e.code), message: e.rawMessage };
  }
}

/** Reads the first message of a server stream (so its error surfaces), then stops. */
async function firstOf(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) return;
}

export function userText(text: string, id = ""): Entry {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

/** Fixed hostile values (they never match any id pattern). */
const FIXED: readonly string[] = [
  "../x",
  "..%2f..%2fetc",
  "%2e%2e%2f",
  "%2e%2e",
  "%2E%2E",
  "..%c0%af",
  "/etc/passwd",
  "/tmp/x",
  "a/b",
  "a\\b",
  "..",
  ".",
  "nul\0byte",
  "\0",
  "x\0/../../etc/passwd",
  "../".repeat(3_414),
  "C:\\Windows\\win.ini",
  "~root",
  "a\nb",
  " lead",
  "trail ",
  "ünïcödé",
  "\u202etxt.exe",
  "\ud800",
  "*",
  "a*",
  "$(touch x)",
  "`id`",
  "x;rm -rf y",
  "\\\\?\\C:\\x",
  "file:///etc/passwd",
];

const SAFE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
const BAD_CHARS = ["/", "\\", "\0", "%", " ", "\n", "/..", ":", "é", "\u2028", "😀", "'", '"', "*"];

/** A hostile value: a fixed one, a mutation with a forbidden character, or one over 128 chars. */
export function hostileValue(rng: Rng): string {
  const r = rng.next();
  if (r < 0.45) return rng.pick(FIXED);
  if (r < 0.55) return `${rng.pick(["x", "../", "a/", "%2e"]).repeat(rng.int(129, 12_000))}/y`;
  if (r < 0.6) return "x".repeat(10_240);
  let s = "";
  for (let i = rng.int(0, 12); i > 0; i--) s += SAFE[rng.int(0, SAFE.length - 1)];
  const at = rng.int(0, s.length);
  const bad = rng.pick(BAD_CHARS);
  const prefix = rng.bool(0.3) ? "../" : "";
  return `${prefix}${s.slice(0, at)}${bad}${s.slice(at)}`;
}

function label(v: string): string {
  const shown = v.length > 24 ? `${v.slice(0, 24)}…(${v.length})` : v;
  return JSON.stringify(shown);
}

const INVALID = ["InvalidArgument"] as const;

/** Every RPC, with the workspace as the hostile field. */
function workspaceCalls(c: SessiondClient, h: string): Array<[string, () => Promise<unknown>]> {
  const s = c.session;
  const st = c.store;
  return [
    ["CreateSession", () => st.createSession({ workspace: h })],
    ["GetSession", () => st.getSession({ workspace: h, session: VICTIM })],
    ["ListSessions", () => st.listSessions({ workspace: h })],
    ["DeleteSession", () => st.deleteSession({ workspace: h, session: VICTIM })],
    ["ForkSession", () => st.forkSession({ workspace: h, session: VICTIM })],
    ["WatchSessions", () => firstOf(st.watchSessions({ workspace: h }))],
    ["Append", () => s.append({ workspace: h, session: VICTIM, entries: [userText("x")] })],
    ["Rewind", () => s.rewind({ workspace: h, session: VICTIM, target: "u1" })],
    ["Reset", () => s.reset({ workspace: h, session: VICTIM })],
    ["GetState", () => s.getState({ workspace: h, session: VICTIM })],
    ["GetEntries", () => s.getEntries({ workspace: h, session: VICTIM })],
    ["GetTree", () => s.getTree({ workspace: h, session: VICTIM })],
    ["WatchEntries", () => firstOf(s.watchEntries({ workspace: h, session: VICTIM }))],
  ];
}

/** Every RPC that addresses a session, with `ref` as the session. */
function sessionCalls(
  c: SessiondClient,
  ws: string,
  ref: string,
): Array<[string, () => Promise<unknown>]> {
  const s = c.session;
  const st = c.store;
  return [
    ["GetSession", () => st.getSession({ workspace: ws, session: ref })],
    ["DeleteSession", () => st.deleteSession({ workspace: ws, session: ref })],
    ["ForkSession", () => st.forkSession({ workspace: ws, session: ref })],
    ["Append", () => s.append({ workspace: ws, session: ref, entries: [userText("x")] })],
    ["Rewind", () => s.rewind({ workspace: ws, session: ref, target: "u1" })],
    ["Reset", () => s.reset({ workspace: ws, session: ref })],
    ["GetState", () => s.getState({ workspace: ws, session: ref })],
    ["GetEntries", () => s.getEntries({ workspace: ws, session: ref })],
    ["GetTree", () => s.getTree({ workspace: ws, session: ref })],
    ["WatchEntries", () => firstOf(s.watchEntries({ workspace: ws, session: ref }))],
  ];
}

/** Fields that take a new id or point at an entry, with the hostile value there. */
function idFieldCalls(c: SessiondClient, h: string): Array<[string, () => Promise<unknown>]> {
  const s = c.session;
  const st = c.store;
  const v = { workspace: WS, session: VICTIM };
  return [
    ["CreateSession session_id", () => st.createSession({ workspace: WS, sessionId: h })],
    [
      "CreateSession parent_session_id",
      () => st.createSession({ workspace: WS, parentSessionId: h, agentType: "t" }),
    ],
    [
      "ListSessions parent_session_id",
      () => st.listSessions({ workspace: WS, parentSessionId: h }),
    ],
    ["ForkSession session_id", () => st.forkSession({ ...v, sessionId: h })],
    ["Append entry.id", () => s.append({ ...v, entries: [userText("x", h)] })],
    [
      "Append entry.parent_id",
      () => s.append({ ...v, entries: [{ ...userText("x"), parentId: h }] }),
    ],
    [
      "Append tool_call_id",
      () =>
        s.append({
          ...v,
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
    ],
    [
      "Append compaction.replaces_entry_ids",
      () =>
        s.append({
          ...v,
          entries: [
            { kind: { case: "compaction", value: { summary: "s", replacesEntryIds: [h] } } },
          ],
        }),
    ],
    [
      "Append branch_summary.from_id",
      () =>
        s.append({
          ...v,
          entries: [{ kind: { case: "branchSummary", value: { summary: "s", fromId: h } } }],
        }),
    ],
    ["Rewind entry_id", () => s.rewind({ ...v, target: "u1", entryId: h })],
    ["Reset entry_id", () => s.reset({ ...v, entryId: h })],
    ["ListSessions page_token", () => st.listSessions({ workspace: WS, pageToken: h })],
    [
      "WatchSessions after_cursor",
      () => firstOf(st.watchSessions({ workspace: WS, afterCursor: h })),
    ],
  ];
}

const GET_SESSION = "/sessiond.v1.StoreService/GetSession";
const GET_ENTRIES = "/sessiond.v1.SessionService/GetEntries";

function typed(
  name: string,
  expect: readonly string[],
  weight: number,
  pickCall: (ctx: Ctx, rng: Rng) => [string, () => Promise<unknown>],
  phase: Shape["phase"] = "both",
): Shape {
  return {
    name,
    expect,
    weight,
    phase,
    make(ctx, rng) {
      const [what, call] = pickCall(ctx, rng);
      return { what, run: () => codeOf(call) };
    },
  };
}

function rawShape(
  name: string,
  expect: readonly string[],
  weight: number,
  pickCall: (ctx: Ctx, rng: Rng) => [string, () => Promise<Answer>],
  phase: Shape["phase"] = "open",
): Shape {
  return {
    name,
    expect,
    weight,
    phase,
    make(ctx, rng) {
      const [what, run] = pickCall(ctx, rng);
      return { what, run };
    },
  };
}

function randomBytes(rng: Rng, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
  return b;
}

/** The client a shape uses: the all-workspaces token in the auth phase. */
const cl = (ctx: Ctx) => ctx.client;
const U64_MAX = 2n ** 64n - 1n;

export const SHAPES: readonly Shape[] = [
  typed("traversal workspace", INVALID, 6, (ctx, rng) => {
    const h = hostileValue(rng);
    const [rpc, call] = rng.pick(workspaceCalls(cl(ctx), h));
    return [`${rpc} workspace=${label(h)}`, call];
  }),
  typed("traversal session", INVALID, 6, (ctx, rng) => {
    const h = hostileValue(rng);
    const [rpc, call] = rng.pick(sessionCalls(cl(ctx), WS, h));
    return [`${rpc} session=${label(h)}`, call];
  }),
  typed("traversal in new / entry ids and tokens", INVALID, 6, (ctx, rng) => {
    const h = hostileValue(rng);
    const [rpc, call] = rng.pick(idFieldCalls(cl(ctx), h));
    return [`${rpc}=${label(h)}`, call];
  }),
  typed("hostile entry reference", ["NotFound", "InvalidArgument"], 3, (ctx, rng) => {
    const h = hostileValue(rng);
    const s = cl(ctx).session;
    const v = { workspace: WS, session: VICTIM };
    return rng.pick<[string, () => Promise<unknown>]>([
      [`Rewind target=${label(h)}`, () => s.rewind({ ...v, target: h })],
      [`GetState at_entry_id=${label(h)}`, () => s.getState({ ...v, atEntryId: h })],
      [`ForkSession entry=${label(h)}`, () => cl(ctx).store.forkSession({ ...v, entry: h })],
    ]);
  }),
  typed("hostile expected_leaf_id", ["Aborted", "InvalidArgument"], 1, (ctx, rng) => {
    const h = hostileValue(rng);
    const s = cl(ctx).session;
    const v = { workspace: WS, session: VICTIM };
    return rng.pick<[string, () => Promise<unknown>]>([
      [
        `Append expected_leaf_id=${label(h)}`,
        () => s.append({ ...v, entries: [userText("x")], expectedLeafId: h }),
      ],
      [
        `Rewind expected_leaf_id=${label(h)}`,
        () => s.rewind({ ...v, target: "u1", expectedLeafId: h }),
      ],
    ]);
  }),
  typed("10 KB id", INVALID, 2, (ctx, rng) => {
    const h = rng.pick(["v", "a", "0", "-"]).repeat(rng.int(10_240, 10_300));
    const calls = [
      ...workspaceCalls(cl(ctx), h),
      ...sessionCalls(cl(ctx), WS, h),
      ...idFieldCalls(cl(ctx), h).filter(([n]) => !/page_token|after_cursor/.test(n)),
    ];
    const [rpc, call] = rng.pick(calls);
    return [`${rpc} ${h.length}-char id`, call];
  }),
  typed("short prefix", INVALID, 2, (ctx, rng) => {
    const ref = rng.pick(["", "v", "vi", "vic", "a", "am", "amb", "d", "de"]);
    const [rpc, call] = rng.pick(sessionCalls(cl(ctx), WS, ref));
    return [`${rpc} session=${label(ref)}`, call];
  }),
  typed("ambiguous prefix", ["FailedPrecondition"], 2, (ctx, rng) => {
    const ref = rng.pick(["ambi", "ambig", "ambig-", "ambig-0", "ambig-00", "ambig-000"]);
    const [rpc, call] = rng.pick(sessionCalls(cl(ctx), WS, ref));
    return [`${rpc} session=${label(ref)}`, call];
  }),
  typed("unknown session", ["NotFound"], 2, (ctx, rng) => {
    const ref = rng.pick([
      "ambig-0003",
      `${VICTIM}0`,
      "zzzz",
      "v".repeat(128),
      `nope-${rng.int(0, 1e9)}`,
    ]);
    const [rpc, call] = rng.pick(sessionCalls(cl(ctx), WS, ref));
    return [`${rpc} session=${label(ref)}`, call];
  }),
  typed("another workspace's session", ["NotFound"], 3, (ctx, rng) => {
    const ref = rng.pick([VICTIM, "vict", "ambig-0001", "ambi"]);
    const calls = sessionCalls(cl(ctx), OTHER_WS, ref);
    calls.push([
      "CreateSession parent",
      () =>
        cl(ctx).store.createSession({ workspace: OTHER_WS, parentSessionId: ref, agentType: "t" }),
    ]);
    const [rpc, call] = rng.pick(calls);
    return [`${rpc} ${OTHER_WS}/${ref}`, call];
  }),
  typed("huge cursor or page size", INVALID, 3, (ctx, rng) => {
    const s = cl(ctx).session;
    const st = cl(ctx).store;
    const v = { workspace: WS, session: VICTIM };
    const big = rng.pick([2n ** 53n, 2n ** 63n, U64_MAX, 2n ** 53n + BigInt(rng.int(0, 1e9))]);
    return rng.pick<[string, () => Promise<unknown>]>([
      [`GetEntries after_seq ${big}`, () => s.getEntries({ ...v, afterSeq: big })],
      [`WatchEntries after_seq ${big}`, () => firstOf(s.watchEntries({ ...v, afterSeq: big }))],
      [
        "WatchEntries after_seq beyond head",
        () => firstOf(s.watchEntries({ ...v, afterSeq: BigInt(rng.int(1_000, 1e9)) })),
      ],
      [
        `Append expected_seq ${big}`,
        () => s.append({ ...v, entries: [userText("x")], expectedSeq: big }),
      ],
      [`Rewind expected_seq ${big}`, () => s.rewind({ ...v, target: "u1", expectedSeq: big })],
      [`Reset expected_seq ${big}`, () => s.reset({ ...v, expectedSeq: big })],
      ["GetEntries limit 2^32-1", () => s.getEntries({ ...v, limit: 2 ** 32 - 1 })],
      [
        "GetEntries limit over the max",
        () => s.getEntries({ ...v, limit: rng.int(1001, 2 ** 31 - 1) }),
      ],
      [
        "ListSessions page_size over the max",
        () => st.listSessions({ workspace: WS, pageSize: rng.int(1001, 2 ** 32 - 1) }),
      ],
    ]);
  }),
  rawShape("negative cursor (JSON)", INVALID, 2, (ctx, rng) => {
    const n = -rng.int(1, 1e9);
    const field = rng.pick(['"afterSeq"', '"limit"']);
    const body = `{"workspace":"${WS}","session":"${VICTIM}",${field}:${rng.bool() ? n : `"${n}"`}}`;
    return [
      `GetEntries ${field}=${n}`,
      () => rawCall(ctx.raw(), GET_ENTRIES, "application/json", Buffer.from(body)),
    ];
  }),
  rawShape("negative cursor (protobuf varint)", INVALID, 1, (ctx, rng) => {
    // after_seq is a uint64: a negative int64 on the wire is 2^64 - n, far beyond any log.
    const n = BigInt(rng.int(1, 1e9));
    const body = toBinary(
      GetEntriesRequestSchema,
      create(GetEntriesRequestSchema, { workspace: WS, session: VICTIM, afterSeq: 2n ** 64n - n }),
    );
    return [
      `GetEntries after_seq=-${n}`,
      () => rawCall(ctx.raw(), GET_ENTRIES, "application/grpc", envelope(body)),
    ];
  }),
  {
    ...typed("oversize message", ["ResourceExhausted"], 2, (ctx, rng) => {
      const c = rng.bool() ? ctx.client : ctx.connect;
      const big = "x".repeat(rng.int(MAX_MESSAGE_BYTES + 100, 4 * MAX_MESSAGE_BYTES));
      return rng.pick<[string, () => Promise<unknown>]>([
        [
          `Append ${big.length} bytes`,
          () => c.session.append({ workspace: WS, session: VICTIM, entries: [userText(big)] }),
        ],
        [
          `CreateSession title ${big.length} bytes`,
          () => c.store.createSession({ workspace: WS, title: big }),
        ],
      ]);
    }),
    isolate: "half-open",
  },
  typed("too many entries", ["ResourceExhausted"], 1, (ctx, rng) => {
    const n = rng.int(1001, 1500);
    const many = Array.from({ length: n }, () => userText("y"));
    return [
      `Append ${n} entries`,
      () => ctx.client.session.append({ workspace: WS, session: VICTIM, entries: many }),
    ];
  }),
  typed("deadline over the max", INVALID, 1, (ctx, rng) => {
    const ms = MAX_DEADLINE_MS * rng.int(2, 100);
    return [
      `ListSessions deadline ${ms} ms`,
      () => ctx.client.store.listSessions({ workspace: WS }, { timeoutMs: ms }),
    ];
  }),
  rawShape("wrong JSON types", INVALID, 3, (ctx, rng) => {
    const body = rng.pick([
      `{"workspace":5,"session":"${VICTIM}"}`,
      '{"session":{"a":1}}',
      '{"session":["a"]}',
      '{"workspace":null,"session":true}',
      "{{{",
      "[]",
      '"just a string"',
      '{"session":"victim-0001"',
      '{"workspace":"t6","session":"victim-0001","x":}',
      "\u0000\u0001\u0002",
    ]);
    return [
      `GetSession JSON ${label(body)}`,
      () => rawCall(ctx.raw(), GET_SESSION, "application/json", Buffer.from(body)),
    ];
  }),
  {
    ...rawShape("oversize JSON", ["ResourceExhausted"], 1, (ctx, rng) => {
      const body = JSON.stringify({
        session: "s".repeat(rng.int(MAX_MESSAGE_BYTES + 10, 200_000)),
      });
      return [
        `GetSession JSON ${body.length} bytes`,
        () => rawCall(ctx.raw(), GET_SESSION, "application/json", Buffer.from(body)),
      ];
    }),
    isolate: "resets",
  },
  rawShape("broken gRPC framing", INVALID, 2, (ctx, rng) => {
    const valid = toBinary(
      GetSessionRequestSchema,
      create(GetSessionRequestSchema, { workspace: WS, session: VICTIM }),
    );
    return rng.pick<[string, () => Promise<Answer>]>([
      [
        "truncated envelope",
        () =>
          rawCall(
            ctx.raw(),
            GET_SESSION,
            "application/grpc",
            envelope(valid, 0, valid.length + rng.int(1, 1000)).subarray(0, 5 + valid.length),
          ),
      ],
      [
        "envelope shorter than its header",
        () =>
          rawCall(
            ctx.raw(),
            GET_SESSION,
            "application/grpc",
            Buffer.from([0, 0, 0]).subarray(0, 3),
          ),
      ],
      [
        "bad grpc-timeout",
        () =>
          rawCall(ctx.raw(), GET_SESSION, "application/grpc", envelope(valid), {
            "grpc-timeout": rng.pick(["-1m", "abc", "99999999999H", "1x"]),
          }),
      ],
    ]);
  }),
  rawShape("gRPC envelope of 4 GiB", ["ResourceExhausted"], 1, (ctx) => [
    "4 GiB length",
    () =>
      rawCall(
        ctx.raw(),
        GET_SESSION,
        "application/grpc",
        envelope(Buffer.from([1, 2]), 0, 2 ** 32 - 1),
      ),
  ]),
  rawShape(
    "garbage protobuf",
    INVALID,
    3,
    (ctx, rng) => {
      const junk = randomBytes(rng, rng.int(1, 200));
      // Make it unparseable: a field number 0 (never valid) up front.
      junk[0] = 0x00;
      const proto = rng.pick([
        "application/grpc",
        "application/grpc-web+proto",
        "application/proto",
      ]);
      return [
        `${proto} ${junk.length} random bytes`,
        () =>
          rawCall(
            ctx.raw(),
            rng.pick([GET_SESSION, GET_ENTRIES]),
            proto,
            proto === "application/proto" ? junk : envelope(junk),
          ),
      ];
    },
    "open",
  ),
  rawShape("unknown method", ["http-404", "Unimplemented"], 1, (ctx, rng) => {
    const path = rng.pick([
      "/sessiond.v1.StoreService/Nope",
      "/../../etc/passwd",
      "/sessiond.v1.StoreService/../../../etc/passwd",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/sessiond.v1.Nope/GetSession",
    ]);
    return [path, () => rawCall(ctx.raw(), path, "application/grpc", envelope(Buffer.alloc(0)))];
  }),
  rawShape("wrong content type", ["http-415", "Unimplemented"], 1, (ctx, rng) => {
    const ct = rng.pick(["text/plain", "application/xml", "multipart/form-data", "image/png"]);
    return [ct, () => rawCall(ctx.raw(), GET_SESSION, ct, Buffer.from("hi"))];
  }),
  {
    ...typed("tiny client deadline", ["DeadlineExceeded", "Ok"], 2, (ctx, rng) => {
      const c = ctx.client;
      const id = `dl${rng.int(0, 1e9)}`;
      const o = { timeoutMs: rng.int(1, 3) };
      return rng.pick<[string, () => Promise<unknown>]>([
        [
          `Append ${id} ${o.timeoutMs} ms`,
          () =>
            c.session.append(
              { workspace: WS, session: DEADLINE_SESSION, entries: [userText(id, id)] },
              o,
            ),
        ],
        [
          `GetTree ${o.timeoutMs} ms`,
          () => c.session.getTree({ workspace: WS, session: VICTIM }, o),
        ],
        [`ListSessions ${o.timeoutMs} ms`, () => c.store.listSessions({ workspace: WS }, o)],
      ]);
    }),
    isolate: "resets",
  },
  rawShape("tiny server deadline", ["DeadlineExceeded", "Ok"], 1, (ctx, rng) => {
    const id = `ds${rng.int(0, 1e9)}`;
    const body = toBinary(
      AppendRequestSchema,
      create(AppendRequestSchema, {
        workspace: WS,
        session: DEADLINE_SESSION,
        entries: [userText(id, id)],
      }),
    );
    const t = rng.pick(["1n", "1u", "1m", "100n"]);
    return [
      `Append grpc-timeout ${t}`,
      () =>
        rawCall(
          ctx.raw(),
          "/sessiond.v1.SessionService/Append",
          "application/grpc",
          envelope(body),
          {
            "grpc-timeout": t,
          },
        ),
    ];
  }),
  // (Bytes that start like a TLS handshake, 0x16, get a plaintext HTTP/1.1 400: see server.ts.)
  rawShape("random bytes on the port", ["closed", "goaway", "http1-400"], 1, (ctx, rng) => {
    const n = rng.pick([1, 16, 100, 4096, 65_536]);
    const bytes = refusableGarbage(randomBytes(rng, n));
    return [`${n} random bytes`, () => probe(ctx.port, bytes, 3_000)];
  }),
  // The port speaks HTTP/1.1 too (browsers): a well-formed request for a path
  // that is no RPC is answered 404 (`GET /` a 302 to the viewer), a
  // malformed one 400 or a closed socket. (Bare blank lines are not sent: an
  // HTTP/1.1 server rightly waits for the request line after them.)
  rawShape(
    "HTTP/1.1 garbage",
    ["closed", "goaway", "http1-302", "http1-400", "http1-404", "http1-505"],
    1,
    (ctx, rng) => {
      const req = rng.pick([
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
        `POST ${GET_SESSION} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
        "OPTIONS * HTTP/1.1\r\n\r\n",
        `GET /${"a".repeat(70_000)} HTTP/1.1\r\n\r\n`,
        "\r\n\r\nXYZ\r\n\r\n",
        "GET / HTTP/9.9\r\n\r\n",
      ]);
      return [`HTTP/1.1 ${label(req)}`, () => probe(ctx.port, Buffer.from(req), 3_000)];
    },
  ),
  rawShape("HTTP/2 preface + garbage", ["closed", "goaway"], 1, (ctx, rng) => {
    const bytes = rng.pick([
      // Garbage inside a complete frame the server must refuse (DATA on
      // stream 0: PROTOCOL_ERROR). Raw random bytes are not garbage the
      // server can refuse: their first 9 bytes may read as a frame of an
      // unknown type (which HTTP/2 says to ignore) longer than what
      // follows, which the server rightly waits on until its idle timeout
      // (seen once in a full run: "92 bytes: open").
      () => Buffer.concat([PREFACE, h2frame(0, 0, 0, randomBytes(rng, rng.int(0, 2_000)))]),
      () => Buffer.concat([PREFACE, Buffer.alloc(rng.int(9, 2_000))]),
      () =>
        Buffer.concat([PREFACE, SETTINGS, h2frame(0, 0, 0, randomBytes(rng, rng.int(0, 2_000)))]),
      // A HEADERS block that cannot decode (an HPACK index far out of the
      // table): COMPRESSION_ERROR. Random HPACK bytes may decode into some
      // headers, which the server then rightly answers on the stream.
      () =>
        Buffer.concat([
          PREFACE,
          SETTINGS,
          h2frame(1, 5, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])),
        ]),
      () => Buffer.concat([PREFACE, SETTINGS, h2frame(0, 1, 3, randomBytes(rng, 50))]),
    ])();
    return [`HTTP/2 ${bytes.length} bytes`, () => probe(ctx.port, bytes, 1_500)];
  }),
  typed("valid request", ["Ok"], 3, (ctx, rng) => {
    const c = ctx.client;
    const v = { workspace: WS, session: VICTIM };
    return rng.pick<[string, () => Promise<unknown>]>([
      ["GetSession", () => c.store.getSession(v)],
      ["GetState", () => c.session.getState(v)],
      ["GetEntries", () => c.session.getEntries(v)],
      ["GetTree", () => c.session.getTree(v)],
      ["ListSessions", () => c.store.listSessions({ workspace: WS, pageSize: 10 })],
      ["GetSession by prefix", () => c.store.getSession({ workspace: WS, session: "vict" })],
    ]);
  }),
  typed("health check", ["Ok"], 1, (ctx) => [
    "Health.Check",
    () => ctx.health.check({ service: "" }),
  ]),
  // ---- auth phase only
  typed(
    "missing or wrong token",
    ["Unauthenticated"],
    5,
    (ctx, rng) => {
      const a = ctx.auth as NonNullable<Ctx["auth"]>;
      const c = rng.bool() ? a.none : a.wrong;
      const [rpc, call] = rng.pick([
        ...workspaceCalls(c, WS),
        ...sessionCalls(c, WS, VICTIM),
        ...sessionCalls(c, WS, hostileValue(rng)),
      ]);
      return [`${rpc} ${c === a.none ? "without a token" : "with a wrong token"}`, call];
    },
    "auth",
  ),
  rawShape(
    "malformed authorization header",
    ["Unauthenticated"],
    2,
    (ctx, rng) => {
      const a = ctx.auth as NonNullable<Ctx["auth"]>;
      const header = rng.pick([
        "",
        "Bearer",
        "Bearer ",
        `Basic ${Buffer.from("a:b").toString("base64")}`,
        `Bearer ${a.allToken.slice(0, -1)}`,
        `Bearer ${a.allToken}x`,
        `Bearer ${"t".repeat(rng.int(1_000, 7_000))}`,
        `Bearer ${a.allToken} ${a.allToken}`,
        `bearer\t${hostileValue(rng).replace(/[^\x21-\x7e]/g, "")}`,
      ]);
      const body = Buffer.from(JSON.stringify({ workspace: WS, session: VICTIM }));
      return [
        `authorization ${label(header)}`,
        () => rawCall(ctx.raw(), GET_SESSION, "application/json", body, { authorization: header }),
      ];
    },
    "auth",
  ),
  typed(
    "token of another workspace (session)",
    ["NotFound"],
    3,
    (ctx, rng) => {
      const a = ctx.auth as NonNullable<Ctx["auth"]>;
      const [rpc, call] = rng.pick(sessionCalls(a.onlyOther, WS, rng.pick([VICTIM, "vict"])));
      return [`${rpc} ${WS}/${VICTIM} with ${OTHER_WS}'s token`, call];
    },
    "auth",
  ),
  typed(
    "token of another workspace (workspace)",
    ["PermissionDenied"],
    2,
    (ctx, rng) => {
      const a = ctx.auth as NonNullable<Ctx["auth"]>;
      const st = a.onlyOther.store;
      return rng.pick<[string, () => Promise<unknown>]>([
        ["CreateSession", () => st.createSession({ workspace: WS })],
        ["ListSessions", () => st.listSessions({ workspace: WS })],
        ["WatchSessions", () => firstOf(st.watchSessions({ workspace: WS }))],
      ]);
    },
    "auth",
  ),
  typed(
    "health check without a token",
    ["Ok"],
    1,
    (ctx) => ["Health.Check", () => ctx.health.check({ service: "" })],
    "auth",
  ),
];

/**
 * Builders and assertions shared by the storage conformance suite
 * (conformance.ts). Entries built here are valid protobuf-es v2 messages;
 * those meant for `planAppend` carry no seq (the planner assigns it), those
 * meant for `StorageEngine.create` are given seqs and parents explicitly.
 */
import { create, fromJson, type JsonObject, toJson } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { expect } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { planAppend } from "../core/append-plan.js";
import { type ErrorCode, isSessiondError, SessiondError } from "../core/errors.js";
import { planReset, planRewind } from "../core/move-plan.js";
import type { Planner, RootPageQuery, RootRecord } from "./engine.js";

/** A timestamp with sub-millisecond precision (round trips must keep the nanos). */
export function ts(seconds: number, nanos = 123_456_789): Timestamp {
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos });
}

export interface RootOptions {
  id?: string;
  title?: string;
  cwd?: string;
  parentSessionId?: string;
  agentType?: string;
  spawnDepth?: number;
  forkedFrom?: { sessionId: string; entryId: string };
  metadata?: JsonObject;
  timestamp?: Timestamp;
}

/** The SessionInfo root of a session (seq 1, no parent). */
export function rootEntry(sessionId: string, o: RootOptions = {}): Entry {
  const timestamp = o.timestamp ?? ts(1_767_225_600);
  return create(EntrySchema, {
    id: o.id ?? `root-${sessionId}`.slice(0, 64),
    seq: 1n,
    timestamp,
    kind: {
      case: "sessionInfo",
      value: {
        sessionId,
        title: o.title ?? `title of ${sessionId}`,
        cwd: o.cwd ?? "/home/agent/project",
        createdAt: timestamp,
        formatVersion: 1,
        parentSessionId: o.parentSessionId,
        agentType: o.agentType,
        spawnDepth: o.spawnDepth ?? 0,
        forkedFrom: o.forkedFrom,
        metadata: o.metadata,
      },
    },
  });
}

export interface EntryOptions {
  parentId?: string;
  seq?: number;
  timestamp?: Timestamp;
}

function base(id: string, o: EntryOptions) {
  return {
    id,
    parentId: o.parentId,
    seq: o.seq === undefined ? 0n : BigInt(o.seq),
    timestamp: o.timestamp,
  };
}

/** A USER text message. */
export function userMsg(id: string, text = `hello from ${id}`, o: EntryOptions = {}): Entry {
  return create(EntrySchema, {
    ...base(id, o),
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

/** An ASSISTANT text message, optionally with tool calls. */
export function assistantMsg(
  id: string,
  text = `answer ${id}`,
  o: EntryOptions & { toolCalls?: string[] } = {},
): Entry {
  return create(EntrySchema, {
    ...base(id, o),
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: [
          { part: { case: "text", value: text } },
          ...(o.toolCalls ?? []).map((callId) => ({
            part: {
              case: "toolCall" as const,
              value: {
                id: callId,
                name: "read_file",
                arguments: fromJson(ValueSchema, { path: "a.ts", lines: [1, 20] }),
              },
            },
          })),
        ],
        model: "model-x",
        provider: "provider-y",
      },
    },
  });
}

/** A TOOL message answering `callId`. */
export function toolMsg(id: string, callId: string, o: EntryOptions = {}): Entry {
  return create(EntrySchema, {
    ...base(id, o),
    kind: {
      case: "message",
      value: {
        role: Role.TOOL,
        toolCallId: callId,
        toolName: "read_file",
        content: [{ part: { case: "text", value: `result of ${callId}` } }],
      },
    },
  });
}

export function labelEntry(id: string, label: string, o: EntryOptions = {}): Entry {
  return create(EntrySchema, { ...base(id, o), kind: { case: "label", value: { label } } });
}

export function modelChange(id: string, model: string, o: EntryOptions = {}): Entry {
  return create(EntrySchema, {
    ...base(id, o),
    kind: { case: "modelChange", value: { model, provider: "provider-y" } },
  });
}

export function compactionEntry(
  id: string,
  replacesEntryIds: string[],
  summary = "the story so far",
  o: EntryOptions = {},
): Entry {
  return create(EntrySchema, {
    ...base(id, o),
    kind: { case: "compaction", value: { summary, replacesEntryIds, tokensBefore: 12_345n } },
  });
}

/** An entry without kind: planAppend rejects it with INVALID_ARGUMENT. */
export function kindless(id: string, o: EntryOptions = {}): Entry {
  return create(EntrySchema, base(id, o));
}

/** A planner appending `entries` (with optional expectations). */
export function appendOf(
  entries: readonly Entry[],
  x: { expectedSeq?: number; expectedLeafId?: string } = {},
): Planner {
  return (log) => planAppend(log, { entries, ...x });
}

export function rewindTo(target: string, entryId?: string): Planner {
  return (log) => planRewind(log, { target, entryId });
}

export function resetLeaf(entryId?: string): Planner {
  return (log) => planReset(log, { entryId });
}

/** Entries as canonical proto JSON: semantic equality with readable diffs. */
export function asJson(entries: readonly Entry[]): unknown[] {
  return entries.map((e) => toJson(EntrySchema, e));
}

/** Asserts that two entry lists are the same entries, field by field. */
export function expectSameEntries(actual: readonly Entry[], expected: readonly Entry[]): void {
  expect(asJson(actual)).toEqual(asJson(expected));
}

export function seqs(entries: readonly Entry[]): number[] {
  return entries.map((e) => Number(e.seq));
}

/** Awaits `p`, asserts it rejects with a SessiondError of `code`, returns the error. */
export async function expectCode(p: Promise<unknown>, code: ErrorCode): Promise<SessiondError> {
  let result: unknown;
  try {
    result = await p;
  } catch (err) {
    if (!isSessiondError(err, code)) {
      const got = err instanceof SessiondError ? `${err.code}: ${err.message}` : String(err);
      expect.fail(`expected a ${code} SessiondError, got ${got}`);
    }
    return err;
  }
  return expect.fail(`expected a ${code} rejection, but it resolved with ${String(result)}`);
}

/** Lets timers, I/O callbacks and other deferred work run for a moment. */
export function settle(ms = 50): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A fork-like session: a root with forked_from set followed by 20 copied
 * entries (seqs 2..21) covering every kind that can be on a path, with
 * content that stresses serialisation: multi-line and non-ASCII text, a NUL
 * character, U+2028, binary image bytes, a uint64 beyond 2^53, nested
 * Struct / Value data, nanosecond timestamps.
 */
export function forkLikeEntries(sessionId: string): Entry[] {
  const t = (i: number) => ts(1_767_225_600 + i, 100_000_000 + i);
  const out: Entry[] = [
    rootEntry(sessionId, {
      title: "fork of «source» 🌳",
      forkedFrom: { sessionId: "20260101-000000-deadbeef", entryId: "m9" },
      metadata: { owner: "team-a", tags: ["x", "y"], nested: { n: 1.5, ok: true, none: null } },
      timestamp: t(0),
    }),
  ];
  let parent = out[0]?.id as string;
  const push = (e: Entry) => {
    e.parentId = parent;
    e.seq = BigInt(out.length + 1);
    e.timestamp = t(out.length);
    out.push(e);
    parent = e.id;
  };
  push(modelChange("c01", "model-a"));
  push(
    create(EntrySchema, {
      id: "c02",
      kind: { case: "thinkingLevelChange", value: { thinkingLevel: "high" } },
    }),
  );
  push(
    userMsg("c03", 'line one\nline two\r\n\ttabbed "quoted" \\ back\u2028sep\u0000nul é 中文 🎉'),
  );
  push(
    create(EntrySchema, {
      id: "c04",
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [
            { part: { case: "thinking", value: { thinking: "hmm…", signature: "sig==" } } },
            { part: { case: "text", value: "let me look" } },
            {
              part: {
                case: "toolCall",
                value: {
                  id: "call-1",
                  name: "grep",
                  arguments: {
                    kind: {
                      case: "structValue",
                      value: {
                        fields: {
                          pattern: { kind: { case: "stringValue", value: "a.*b" } },
                          max: { kind: { case: "numberValue", value: 0.25 } },
                          flags: {
                            kind: {
                              case: "listValue",
                              value: {
                                values: [
                                  { kind: { case: "boolValue", value: true } },
                                  { kind: { case: "nullValue", value: 0 } },
                                ],
                              },
                            },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          ],
          model: "model-a",
          provider: "provider-a",
          usage: {
            inputTokens: 9_007_199_254_740_993n,
            outputTokens: 42n,
            cacheReadTokens: 7n,
            cacheWriteTokens: 0n,
          },
          stopReason: "tool_use",
          metadata: { latencyMs: 812, region: "eu" },
        },
      },
    }),
  );
  push(
    create(EntrySchema, {
      id: "c05",
      kind: {
        case: "message",
        value: {
          role: Role.TOOL,
          toolCallId: "call-1",
          toolName: "grep",
          isError: true,
          content: [{ part: { case: "text", value: "no matches" } }],
        },
      },
    }),
  );
  push(
    create(EntrySchema, {
      id: "c06",
      kind: {
        case: "message",
        value: {
          role: Role.USER,
          content: [
            {
              part: {
                case: "image",
                value: {
                  mimeType: "image/png",
                  data: Uint8Array.from({ length: 256 }, (_, i) => i),
                },
              },
            },
            { part: { case: "text", value: "what is this?" } },
          ],
        },
      },
    }),
  );
  push(assistantMsg("c07", "a picture"));
  push(labelEntry("c08", "before-refactor"));
  push(userMsg("c09", "refactor it"));
  push(assistantMsg("c10", "done"));
  push(compactionEntry("c11", ["c03", "c04", "c05", "c06"], "summary: grep + image"));
  push(
    create(EntrySchema, {
      id: "c12",
      kind: {
        case: "custom",
        value: { namespace: "acme.tools", data: { counter: 3, list: [1, "two", { three: 3 }] } },
      },
    }),
  );
  push(
    create(EntrySchema, {
      id: "c13",
      kind: { case: "branchSummary", value: { summary: "tried X, abandoned", fromId: "c09" } },
    }),
  );
  push(
    create(EntrySchema, {
      id: "c14",
      kind: {
        case: "sessionInfo",
        value: { sessionId, title: "renamed fork", formatVersion: 1, spawnDepth: 0 },
      },
    }),
  );
  push(userMsg("c15", ""));
  push(assistantMsg("c16", "x".repeat(10_000)));
  push(labelEntry("c17", "after-refactor"));
  push(modelChange("c18", "model-b"));
  push(userMsg("c19", "last question"));
  push(assistantMsg("c20", "last answer"));
  return out;
}

/** Message entries among `entries`. */
export function countMessages(entries: readonly Entry[]): number {
  return entries.filter((e) => e.kind.case === "message").length;
}

/**
 * The page `StorageEngine.pageRoots` must return, computed the plain way
 * from every root (`listRoots`): filter on the parent and the keyset, sort
 * by (createdAtMs, sessionId) with JavaScript's string order, reverse for
 * "desc", cut at `limit`. The store's top-k (src/store/top-k.ts) is checked
 * against the same filter + sort + slice.
 */
export function expectedRootPage(roots: readonly RootRecord[], q: RootPageQuery): RootRecord[] {
  const sign = q.order === "desc" ? -1 : 1;
  const cmp = (aMs: number, aId: string, bMs: number, bId: string) =>
    sign * (aMs - bMs || (aId < bId ? -1 : aId > bId ? 1 : 0));
  const after = q.after;
  return roots
    .filter(
      (r) =>
        r.parentSessionId === q.parentSessionId &&
        (after === undefined || cmp(r.createdAtMs, r.sessionId, after.createdMs, after.id) > 0),
    )
    .sort((a, b) => cmp(a.createdAtMs, a.sessionId, b.createdAtMs, b.sessionId))
    .slice(0, q.limit);
}

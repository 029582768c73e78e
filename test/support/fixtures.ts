/**
 * The one fixture vocabulary of the tests: entry builders, stored-form
 * sessions, log and planner helpers, and the assertions on results and
 * refusals. Entries are real protobuf messages (`create(EntrySchema, …)`).
 *
 * - Entries as a client sends them (`user`, `assistant`, `label`, …) carry no
 *   seq: the planner assigns it. Their last argument places them: a parent
 *   id, or `{ parentId, seq, timestamp }` for the stored form that
 *   `StorageEngine.create` and `SessionLog.apply` take.
 * - Core logs grow only through planAppend / planRewind + SessionLog.apply
 *   (`buildLog`, `appendBatch`, `rewindTo`), so every test goes through the
 *   same validation path as the engines.
 * - Planners for `StorageEngine.append` are `appendOf`, `rewindOf`, `resetOf`.
 * - `expectError` checks a synchronous refusal, `expectCode` an asynchronous one.
 */
import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { expect } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { type AppendInput, type AppendPlan, planAppend } from "../../src/core/append-plan.js";
import { type ErrorCode, isSessiondError, type SessiondError } from "../../src/core/errors.js";
import { planReset, planRewind, type RewindInput } from "../../src/core/move-plan.js";
import { SessionLog } from "../../src/core/session-log.js";
import type { Planner } from "../../src/storage/engine.js";

// ---------------------------------------------------------------------------
// Entries

/** The fixed clock of every plan made here. */
export const CLOCK = new Date("2026-03-04T05:06:07.000Z");

/** Where an entry sits in its stored form: parent, seq and timestamp (each optional). */
export interface EntryPlace {
  parentId?: string | undefined;
  seq?: number | undefined;
  timestamp?: Timestamp | undefined;
}

/** The last argument of every entry builder: a parent id, or an EntryPlace. */
export type Place = string | EntryPlace;

function placed(id: string, at: Place | undefined) {
  const p: EntryPlace = typeof at === "string" ? { parentId: at } : (at ?? {});
  return {
    id,
    parentId: p.parentId,
    seq: p.seq === undefined ? undefined : BigInt(p.seq),
    timestamp: p.timestamp,
  };
}

/** The SessionInfo root every test session starts with (a store writes it on create). */
export function info(id = "root", title?: string, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "sessionInfo", value: { title } },
  });
}

/** A USER text message. */
export function user(id: string, text = `hello from ${id}`, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

/** An ASSISTANT message, making one tool call per id in `toolCalls`. */
export function assistant(
  id: string,
  text = `answer ${id}`,
  toolCalls: readonly string[] = [],
  at?: Place,
): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: [
          { part: { case: "text", value: text } },
          ...toolCalls.map((callId) => ({
            part: { case: "toolCall" as const, value: { id: callId, name: "calc" } },
          })),
        ],
      },
    },
  });
}

/** A TOOL message answering `callId`. */
export function toolResult(id: string, callId: string, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: {
      case: "message",
      value: {
        role: Role.TOOL,
        toolCallId: callId,
        toolName: "calc",
        content: [{ part: { case: "text", value: `result of ${callId}` } }],
      },
    },
  });
}

export function compaction(
  id: string,
  summary: string,
  replaces: readonly string[],
  at?: Place,
): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "compaction", value: { summary, replacesEntryIds: [...replaces] } },
  });
}

export function branchSummary(id: string, summary: string, fromId: string, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "branchSummary", value: { summary, fromId } },
  });
}

export function label(id: string, text: string, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "label", value: { label: text } },
  });
}

export function modelChange(id: string, model: string, provider?: string, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "modelChange", value: { model, provider } },
  });
}

export function thinkingLevel(id: string, level: string, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "thinkingLevelChange", value: { thinkingLevel: level } },
  });
}

export function custom(id: string, namespace: string, data: JsonObject, at?: Place): Entry {
  return create(EntrySchema, {
    ...placed(id, at),
    kind: { case: "custom", value: { namespace, data } },
  });
}

/** A Leaf entry (only Rewind / Reset may append one; used here to probe the guards). */
export function leaf(id: string, leafId: string, at?: Place): Entry {
  return create(EntrySchema, { ...placed(id, at), kind: { case: "leaf", value: { leafId } } });
}

/** An entry with no kind set: planAppend rejects it with INVALID_ARGUMENT. */
export function kindless(id: string, at?: Place): Entry {
  return create(EntrySchema, placed(id, at));
}

/** A copy of `entry` with the given seq (for feeding SessionLog.apply directly). */
export function withSeq(entry: Entry, seq: number): Entry {
  return create(EntrySchema, { ...entry, seq: BigInt(seq) });
}

// ---------------------------------------------------------------------------
// Stored sessions (what StorageEngine.create takes)

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

/** The stored SessionInfo root of a session (seq 1, no parent, a timestamp). */
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
  /** An ASSISTANT text message with a model and a provider. */
  const answer = (id: string, text: string) =>
    create(EntrySchema, {
      id,
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [{ part: { case: "text", value: text } }],
          model: "model-x",
          provider: "provider-y",
        },
      },
    });
  push(modelChange("c01", "model-a", "provider-y"));
  push(thinkingLevel("c02", "high"));
  push(user("c03", 'line one\nline two\r\n\ttabbed "quoted" \\ back\u2028sep\u0000nul é 中文 🎉'));
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
  push(answer("c07", "a picture"));
  push(label("c08", "before-refactor"));
  push(user("c09", "refactor it"));
  push(answer("c10", "done"));
  push(
    create(EntrySchema, {
      id: "c11",
      kind: {
        case: "compaction",
        value: {
          summary: "summary: grep + image",
          replacesEntryIds: ["c03", "c04", "c05", "c06"],
          tokensBefore: 12_345n,
        },
      },
    }),
  );
  push(custom("c12", "acme.tools", { counter: 3, list: [1, "two", { three: 3 }] }));
  push(branchSummary("c13", "tried X, abandoned", "c09"));
  push(
    create(EntrySchema, {
      id: "c14",
      kind: {
        case: "sessionInfo",
        value: { sessionId, title: "renamed fork", formatVersion: 1, spawnDepth: 0 },
      },
    }),
  );
  push(user("c15", ""));
  push(answer("c16", "x".repeat(10_000)));
  push(label("c17", "after-refactor"));
  push(modelChange("c18", "model-b", "provider-y"));
  push(user("c19", "last question"));
  push(answer("c20", "last answer"));
  return out;
}

/** Message entries among `entries`. */
export function countMessages(entries: readonly Entry[]): number {
  return entries.filter((e) => e.kind.case === "message").length;
}

// ---------------------------------------------------------------------------
// Core logs

/** A new log holding only its SessionInfo root (seq 1), as a store creates it. */
export function newLog(sessionId = "s1", rootId = "root", title?: string): SessionLog {
  const log = new SessionLog(sessionId);
  const root = create(EntrySchema, {
    id: rootId,
    seq: 1n,
    kind: { case: "sessionInfo", value: { sessionId, title } },
  });
  log.apply(root);
  return log;
}

/** Applies a plan's writes to the log (what an engine does after planning) and returns the plan. */
export function commit(log: SessionLog, plan: AppendPlan): AppendPlan {
  for (const e of plan.write) log.apply(e);
  return plan;
}

/** Plans and applies one Append batch. */
export function appendBatch(
  log: SessionLog,
  entries: readonly Entry[],
  x: Omit<AppendInput, "entries"> = {},
): AppendPlan {
  return commit(log, planAppend(log, { entries, ...x }, { now: () => CLOCK }));
}

/** Appends each entry as its own request, in order. */
export function appendEach(log: SessionLog, ...entries: Entry[]): SessionLog {
  for (const e of entries) appendBatch(log, [e]);
  return log;
}

/** A log with a root and then `entries`, appended one request at a time. */
export function buildLog(...entries: Entry[]): SessionLog {
  return appendEach(newLog(), ...entries);
}

/** Plans and applies a Rewind. */
export function rewindTo(log: SessionLog, x: RewindInput): AppendPlan {
  return commit(log, planRewind(log, x, { now: () => CLOCK }));
}

// ---------------------------------------------------------------------------
// Planners for StorageEngine.append (the engine's clock, not CLOCK)

/** A planner appending `entries` (with optional expectations). */
export function appendOf(
  entries: readonly Entry[],
  x: { expectedSeq?: number; expectedLeafId?: string } = {},
): Planner {
  return (log) => planAppend(log, { entries, ...x });
}

/** A planner rewinding to `target` (an entry id or a label), as the move `entryId`. */
export function rewindOf(target: string, entryId?: string): Planner {
  return (log) => planRewind(log, { target, entryId });
}

/** A planner resetting the leaf to the root, as the move `entryId`. */
export function resetOf(entryId?: string): Planner {
  return (log) => planReset(log, { entryId });
}

// ---------------------------------------------------------------------------
// Results

export function idsOf(entries: readonly Entry[]): string[] {
  return entries.map((e) => e.id);
}

export function seqs(entries: readonly Entry[]): number[] {
  return entries.map((e) => Number(e.seq));
}

/** Entries as canonical proto JSON: semantic equality with readable diffs. */
export function asJson(entries: readonly Entry[]): unknown[] {
  return entries.map((e) => toJson(EntrySchema, e));
}

/** Asserts that two entry lists are the same entries, field by field. */
export function expectSameEntries(actual: readonly Entry[], expected: readonly Entry[]): void {
  expect(asJson(actual)).toEqual(asJson(expected));
}

// ---------------------------------------------------------------------------
// Refusals

function described(err: unknown): string {
  return isSessiondError(err) ? `${err.code}: ${err.message}` : String(err);
}

/**
 * Runs `fn`, expects a SessiondError with `code`, and expects its message to
 * contain every one of `mentions` (the offending ids). Returns the error.
 * For synchronous code; `expectCode` is its asynchronous twin.
 */
export function expectError(
  fn: () => unknown,
  code: ErrorCode,
  ...mentions: string[]
): SessiondError {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  if (thrown === undefined) throw new Error(`expected ${code}, but nothing was thrown`);
  expect(isSessiondError(thrown, code), `expected ${code}, got: ${String(thrown)}`).toBe(true);
  const err = thrown as SessiondError;
  for (const m of mentions) expect(err.message).toContain(m);
  return err;
}

/**
 * Expects an asynchronous refusal: `refusal` (a promise, or a call returning
 * one, which must then reject rather than throw synchronously) rejects with
 * a SessiondError of `code` whose message contains every one of `mentions`.
 * Returns the error.
 */
export async function expectCode(
  refusal: Promise<unknown> | (() => Promise<unknown>),
  code: ErrorCode,
  ...mentions: string[]
): Promise<SessiondError> {
  let pending: Promise<unknown>;
  if (typeof refusal === "function") {
    try {
      pending = refusal();
    } catch (err) {
      return expect.fail(
        `expected a rejected promise, but the call threw synchronously: ${described(err)}`,
      );
    }
  } else {
    pending = refusal;
  }
  let result: unknown;
  try {
    result = await pending;
  } catch (err) {
    if (!isSessiondError(err, code)) {
      return expect.fail(`expected a ${code} SessiondError, got ${described(err)}`);
    }
    for (const m of mentions) expect(err.message).toContain(m);
    return err;
  }
  return expect.fail(`expected a ${code} rejection, but it resolved with ${String(result)}`);
}

// ---------------------------------------------------------------------------
// Time

/** Lets timers, I/O callbacks and other deferred work run for a moment. */
export function settle(ms = 50): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

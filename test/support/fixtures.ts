import { create, type JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { type AppendInput, type AppendPlan, planAppend } from "../../src/core/append-plan.js";
import { type ErrorCode, isSessiondError, type SessiondError } from "../../src/core/errors.js";
import { planRewind, type RewindInput } from "../../src/core/move-plan.js";
import { SessionLog } from "../../src/core/session-log.js";

/**
 * Builders and a log factory for the core's unit tests. Entries are real
 * protobuf messages (`create(EntrySchema, …)`), and logs grow only through
 * planAppend / planRewind + SessionLog.apply, so every test goes through the
 * same validation path as the engines.
 */

/** The fixed clock of every plan made here. */
export const CLOCK = new Date("2026-03-04T05:06:07.000Z");

/** The SessionInfo root every test session starts with (a store writes it on create). */
export function info(id = "root", title?: string, parentId?: string): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: { case: "sessionInfo", value: { title } },
  });
}

export function user(id: string, text: string, parentId?: string): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

/** An ASSISTANT message, making one tool call per id in `toolCalls`. */
export function assistant(
  id: string,
  text: string,
  toolCalls: readonly string[] = [],
  parentId?: string,
): Entry {
  return create(EntrySchema, {
    id,
    parentId,
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
export function toolResult(id: string, callId: string, parentId?: string): Entry {
  return create(EntrySchema, {
    id,
    parentId,
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
  parentId?: string,
): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: { case: "compaction", value: { summary, replacesEntryIds: [...replaces] } },
  });
}

export function branchSummary(
  id: string,
  summary: string,
  fromId: string,
  parentId?: string,
): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: { case: "branchSummary", value: { summary, fromId } },
  });
}

export function label(id: string, text: string, parentId?: string): Entry {
  return create(EntrySchema, { id, parentId, kind: { case: "label", value: { label: text } } });
}

export function modelChange(
  id: string,
  model: string,
  provider?: string,
  parentId?: string,
): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: { case: "modelChange", value: { model, provider } },
  });
}

export function thinkingLevel(id: string, level: string, parentId?: string): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: { case: "thinkingLevelChange", value: { thinkingLevel: level } },
  });
}

export function custom(id: string, namespace: string, data: JsonObject, parentId?: string): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: { case: "custom", value: { namespace, data } },
  });
}

/** A Leaf entry (only Rewind / Reset may append one; used here to probe the guards). */
export function leaf(id: string, leafId: string, parentId?: string): Entry {
  return create(EntrySchema, { id, parentId, kind: { case: "leaf", value: { leafId } } });
}

/** An entry with no kind set. */
export function kindless(id: string, parentId?: string): Entry {
  return create(EntrySchema, { id, parentId });
}

/** A copy of `entry` with the given seq (for feeding SessionLog.apply directly). */
export function withSeq(entry: Entry, seq: number): Entry {
  return create(EntrySchema, { ...entry, seq: BigInt(seq) });
}

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

export function idsOf(entries: readonly Entry[]): string[] {
  return entries.map((e) => e.id);
}

/**
 * Runs `fn`, expects a SessiondError with `code`, and expects its message to
 * contain every one of `mentions` (the offending ids). Returns the error.
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

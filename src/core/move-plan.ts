import { create } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { type AppendPlan, type Expectations, type PlanContext, planAppend } from "./append-plan.js";
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from "./errors.js";
import { compactionFloor } from "./fold.js";
import { quote } from "./ids.js";
import type { SessionLog } from "./session-log.js";
import { isOnPathTo } from "./tree.js";

/**
 * Pointer moves: Rewind and Reset append a Leaf entry (planned through
 * planAppend, so they share its expectations and idempotency), after the
 * checks only moves have: the target must exist and not be a Leaf, and a
 * rewind may not go before the compaction floor unless told to.
 */

/** Resolves a rewind / fork target: an entry id first, else the newest Label with that text. */
export function resolveTarget(log: SessionLog, target: string): Entry {
  // Stryker disable next-line StringLiteral: with no such label, no entry has "" or any other text that is not an entry id as its id, so the lookup finds nothing either way
  const byId = log.get(target) ?? log.get(log.labelTarget(target) ?? "");
  if (byId === undefined) {
    throw notFound(`no entry or label ${quote(target)} in session ${quote(log.sessionId)}`);
  }
  if (byId.kind.case === "leaf") {
    throw invalidArgument(`entry ${quote(byId.id)} is a Leaf entry and cannot be a target`);
  }
  return byId;
}

export interface MoveInput extends Expectations {
  /** Id for the Leaf entry, so that a retried rewind is de-duplicated. */
  entryId?: string | undefined;
}

export interface RewindInput extends MoveInput {
  /** Entry id or label. */
  target: string;
  allowBeforeCompaction?: boolean | undefined;
}

/**
 * A retry of an acknowledged move (its Leaf entry id is already stored)
 * returns the stored entry before any other check, as a retried Append does:
 * the leaf, the head, a label or the compaction floor may all have moved
 * since. `target` is the request's target (an entry id, or the label text
 * that named the stored target); the stored Leaf's parent may differ.
 */
function retriedMove(log: SessionLog, x: MoveInput, target: string): AppendPlan | undefined {
  // Stryker disable next-line ConditionalExpression: without an entry id the lookup below finds no entry and returns undefined as well
  if (x.entryId === undefined) return undefined;
  const stored = log.get(x.entryId);
  if (stored === undefined) return undefined;
  if (stored.kind.case === "leaf") {
    // The log admits a Leaf entry only when its target is stored.
    const movedTo = log.get(stored.kind.value.leafId) as Entry;
    const sameTarget =
      movedTo.id === target ||
      // Stryker disable next-line ConditionalExpression: only Label has a `label` field; for any other kind `movedTo.kind.value.label` reads undefined, never equal to a target string (the kind test is there for the type)
      (movedTo.kind.case === "label" && movedTo.kind.value.label === target);
    if (sameTarget) return { write: [], entries: [stored], deduplicated: true };
  }
  throw alreadyExists(`entry ${quote(x.entryId)} already exists with other content`);
}

function planMove(log: SessionLog, targetId: string, x: MoveInput, ctx: PlanContext): AppendPlan {
  const leafEntry = create(EntrySchema, {
    id: x.entryId ?? "",
    parentId: log.leafId,
    kind: { case: "leaf", value: { leafId: targetId } },
  });
  return planAppend(log, { entries: [leafEntry], ...expectationsOf(x) }, ctx, true);
}

function expectationsOf(x: Expectations): Expectations {
  return { expectedSeq: x.expectedSeq, expectedLeafId: x.expectedLeafId };
}

/**
 * Plans a Rewind: a Leaf entry pointing at the target. A target that is
 * neither the compaction floor of the current path nor below it fails with
 * FAILED_PRECONDITION unless allowBeforeCompaction.
 */
export function planRewind(log: SessionLog, x: RewindInput, ctx: PlanContext = {}): AppendPlan {
  if (x.target === "") {
    throw invalidArgument("target is required: the entry id or label to rewind to");
  }
  const retry = retriedMove(log, x, x.target);
  if (retry !== undefined) return retry;
  const target = resolveTarget(log, x.target);
  if (!x.allowBeforeCompaction) {
    const floor = compactionFloor(log.path());
    if (floor !== undefined && !isOnPathTo(log.lookup, floor, target.id)) {
      throw failedPrecondition(
        `cannot rewind session ${quote(log.sessionId)} to ${quote(target.id)}: it lies before the compaction floor ${quote(floor)} (set allow_before_compaction to force)`,
      );
    }
  }
  return planMove(log, target.id, x, ctx);
}

/** Plans a Reset: a Leaf entry pointing at the root (empty context, history kept). */
export function planReset(log: SessionLog, x: MoveInput, ctx: PlanContext = {}): AppendPlan {
  return retriedMove(log, x, log.root.id) ?? planMove(log, log.root.id, x, ctx);
}

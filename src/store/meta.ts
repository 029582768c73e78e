import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import type { SessionInfo } from "../../gen/sessiond/v1/entry_pb.js";
import { Health, type SessionMeta, SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { timestampMillis } from "../core/entry.js";
import type { SessionRecord } from "../storage/engine.js";

/** The public SessionMeta of a storage record. */
export function metaOf(record: SessionRecord): SessionMeta {
  let meta = metas.get(record);
  if (meta === undefined) {
    meta = freshMeta(record);
    metas.set(record, meta);
  }
  return meta;
}

/**
 * The metadata made of each record object. Engines hand out the same record
 * while a session is unchanged (storage/session-record.ts), so a warm
 * GetSession builds nothing; nothing changes a SessionMeta once made.
 */
const metas = new WeakMap<SessionRecord, SessionMeta>();

function freshMeta(record: SessionRecord): SessionMeta {
  const k = record.root?.kind;
  const info = k?.case === "sessionInfo" ? k.value : undefined;
  return create(SessionMetaSchema, {
    id: record.sessionId,
    workspace: record.workspace,
    title: record.title ?? info?.title,
    cwd: info?.cwd,
    createdAt: info?.createdAt,
    updatedAt: updatedAt(record, info),
    entryCount: BigInt(record.headSeq),
    messageCount: BigInt(record.messageCount),
    leafId: record.leafId,
    headSeq: BigInt(record.headSeq),
    parentSessionId: info?.parentSessionId,
    agentType: info?.agentType,
    spawnDepth: info?.spawnDepth ?? 0,
    forkedFrom: info?.forkedFrom,
    metadata: info?.metadata,
    health: record.health === "ok" ? Health.OK : Health.CORRUPT,
    healthDetail: record.healthDetail,
    tags: record.tags,
  });
}

/** The root's creation time in ms (0 when unknown), as listings order by it. */
function createdMsOf(record: SessionRecord): number {
  const k = record.root?.kind;
  // Stryker disable next-line ConditionalExpression,OptionalChaining: a root is always a SessionInfo (the log's first entry), so the kind test only narrows the type
  return timestampMillis(k?.case === "sessionInfo" ? k.value.createdAt : undefined);
}

/** updated_at in ms (0 when unknown), as listings order and filter by it. */
export function updatedMsOf(record: SessionRecord): number {
  return Math.max(createdMsOf(record), record.updatedAtMs);
}

/**
 * The newest entry's time, but never before the session was created: a
 * fork's copied entries keep their original (older) timestamps, and an
 * import may carry any.
 */
function updatedAt(record: SessionRecord, info: SessionInfo | undefined): Timestamp | undefined {
  const created = info?.createdAt;
  if (
    created !== undefined &&
    // Stryker disable next-line EqualityOperator: at equal times both branches give the same instant
    record.updatedAtMs <= timestampMs(created)
  ) {
    return created;
  }
  return record.updatedAtMs > 0 ? timestampFromMs(record.updatedAtMs) : created;
}

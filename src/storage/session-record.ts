/**
 * Listing records of a session (SessionRecord, RootRecord) made from its log, shared by the
 * engines. Not to be confused with jsonl/record.ts, the framing of one JSONL line.
 */
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { timestampMillis } from "../core/entry.js";
import type { SessionLog } from "../core/session-log.js";
import type { RootRecord, SessionRecord } from "./engine.js";
import { usageOfLog } from "./usage-report.js";

/**
 * The record made of each log at its current version (SessionLog.version):
 * a GetSession of an unchanged session gets the same record object, and
 * with it the same metadata and response objects, whose encoding the
 * server then reuses (server/wire/response-size.ts).
 */
const made = new WeakMap<SessionLog, { version: number; record: SessionRecord }>();

/** The listing record of a healthy, fully loaded log (shared by the engines). */
export function recordOf(workspace: string, log: SessionLog): SessionRecord {
  const known = made.get(log);
  if (
    known !== undefined &&
    known.version === log.version &&
    known.record.workspace === workspace
  ) {
    return known.record;
  }
  const record = freshRecord(workspace, log);
  made.set(log, { version: log.version, record });
  return record;
}

function freshRecord(workspace: string, log: SessionLog): SessionRecord {
  return {
    workspace,
    sessionId: log.sessionId,
    root: log.root,
    title: log.title,
    tags: log.tags,
    headSeq: log.headSeq,
    leafId: log.leafId,
    messageCount: log.messageCount,
    updatedAtMs: timestampMillis(log.last?.timestamp),
    health: "ok",
    healthDetail: "",
    // Counted when a usage report asks, not when the record is made (a
    // GetSession of a big lazily read log must not decode every entry).
    get usage() {
      return usageOfLog(log);
    },
  };
}

/** The root record of a session whose root entry is known and valid (shared by the engines). */
export function rootRecordOfEntry(sessionId: string, root: Entry): RootRecord {
  const info = root.kind.case === "sessionInfo" ? root.kind.value : undefined;
  return {
    sessionId,
    root,
    createdAtMs: timestampMillis(info?.createdAt),
    parentSessionId: info?.parentSessionId ?? "",
    health: "ok",
    healthDetail: "",
  };
}

/** The root record of a loaded log. */
export function rootRecordOf(log: SessionLog): RootRecord {
  return rootRecordOfEntry(log.sessionId, log.root);
}

import { timestampMillis } from "../core/entry.js";
import type { SessionLog } from "../core/session-log.js";
import type { SessionRecord } from "./engine.js";

/** The listing record of a healthy, fully loaded log (shared by the engines). */
export function recordOf(workspace: string, log: SessionLog): SessionRecord {
  return {
    workspace,
    sessionId: log.sessionId,
    root: log.root,
    title: log.title,
    headSeq: log.headSeq,
    leafId: log.leafId,
    messageCount: log.messageCount,
    updatedAtMs: timestampMillis(log.last?.timestamp),
    health: "ok",
    healthDetail: "",
  };
}

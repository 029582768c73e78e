import type { Interceptor } from "@connectrpc/connect";
import type { ImportSessionRequest } from "../../gen/sessiond/v1/store_service_pb.js";
import { toTimestamp } from "../core/entry.js";
import { newEntryId, newSessionId } from "../core/ids.js";

/**
 * Fills in the ids a caller left empty BEFORE the request leaves the
 * process: entry ids on Append, the Leaf entry id on Rewind / Reset, the new
 * session id on CreateSession / ForkSession, and on ImportSession the
 * session id, entry ids and timestamps the server would otherwise choose.
 * A retry (ours, or the caller's
 * after a timeout) then carries the same ids, and the server de-duplicates
 * it: "outcome unknown" becomes safe to retry by default.
 */
export function idsInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      const m = req.message as Record<string, unknown> & { $typeName?: string };
      switch (m.$typeName) {
        case "sessiond.v1.AppendRequest":
          for (const e of m.entries as Array<{ id: string }>) if (e.id === "") e.id = newEntryId();
          break;
        case "sessiond.v1.RewindRequest":
        case "sessiond.v1.ResetRequest":
          m.entryId ??= newEntryId();
          break;
        case "sessiond.v1.CreateSessionRequest":
        case "sessiond.v1.ForkSessionRequest":
          m.sessionId ??= newSessionId();
          break;
        case "sessiond.v1.ImportSessionRequest":
          fillImport(m as unknown as ImportSessionRequest);
          break;
        default:
          break;
      }
    }
    return next(req);
  };
}

/** An import repeated with what the first attempt chose is the same log: idempotent. */
function fillImport(m: ImportSessionRequest): void {
  const root = m.entries[0]?.kind;
  const recorded = root?.case === "sessionInfo" ? root.value.sessionId : "";
  m.sessionId ??= recorded || newSessionId();
  const now = toTimestamp(new Date());
  for (const e of m.entries) {
    if (e.id === "") e.id = newEntryId();
    e.timestamp ??= now;
  }
}

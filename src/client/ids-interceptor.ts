import type { Interceptor } from "@connectrpc/connect";
import { newEntryId, newSessionId } from "../core/ids.js";

/**
 * Fills in the ids a caller left empty BEFORE the request leaves the
 * process: entry ids on Append, the Leaf entry id on Rewind / Reset, the new
 * session id on CreateSession / ForkSession. A retry (ours, or the caller's
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
        default:
          break;
      }
    }
    return next(req);
  };
}

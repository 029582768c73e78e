import {
  Code,
  ConnectError,
  type Interceptor,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { ImportSessionRequest } from "../../gen/sessiond/v1/store_service_pb.js";
import { toTimestamp } from "../core/entry.js";
import { newEntryId, newSessionId } from "../core/ids.js";
import { ATTEMPTS, type Attempts } from "./attempts.js";

export interface IdsOptions {
  /** Draws a session id (tests give one that draws a taken id first). */
  newSessionId?: () => string;
}

/**
 * Draws of a session id for one call, at most. A drawn id is taken by
 * another session once in 2^32 pairs of sessions made in the same second
 * (its random part is 8 hex: the form the short ids and the PostgreSQL
 * engine's prefix index rely on); eight taken in a row is not chance.
 */
const MAX_ID_DRAWS = 8;

/**
 * Fills in the ids a caller left empty BEFORE the request leaves the
 * process: entry ids on Append, the Leaf entry id on Rewind / Reset, the new
 * session id on CreateSession / ForkSession, and on ImportSession the
 * session id, entry ids and timestamps the server would otherwise choose.
 * A retry (ours, or the caller's
 * after a timeout) then carries the same ids, and the server de-duplicates
 * it: "outcome unknown" becomes safe to retry by default.
 *
 * A session id this call drew can be another session's (two clients drew
 * the same in the same second): the server then answers ALREADY_EXISTS, or,
 * to a CreateSession / ImportSession equal to that session's, created=false
 * with it, as to a retry. Either answer, unless an attempt under that id
 * may have reached the server before (then the session is most likely our
 * own: created=false answers it, and a ForkSession of the current leaf
 * retried after the leaf moved is refused ALREADY_EXISTS by our own lost
 * fork), makes the call draw another id and send again (`sendDrawn`). An id the
 * caller gave, or that an earlier call filled into the same request, is
 * never drawn again: there ALREADY_EXISTS and created=false are answers.
 */
export function idsInterceptor(opts: IdsOptions = {}): Interceptor {
  const draw = opts.newSessionId ?? (() => newSessionId());
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
          if (m.sessionId === undefined) {
            m.sessionId = draw();
            return sendDrawn(next, req, m, draw);
          }
          break;
        case "sessiond.v1.ImportSessionRequest":
          if (fillImport(m as unknown as ImportSessionRequest, draw)) {
            return sendDrawn(next, req, m, draw);
          }
          break;
        default:
          break;
      }
    }
    return next(req);
  };
}

/**
 * Sends a call whose session id it drew, drawing again while the id is
 * another session's (see idsInterceptor); the last answer or refusal
 * after MAX_ID_DRAWS draws is the call's.
 */
async function sendDrawn(
  next: Parameters<Interceptor>[0],
  req: UnaryRequest,
  m: Record<string, unknown>,
  draw: () => string,
): Promise<UnaryResponse | StreamResponse> {
  for (let draws = 1; ; draws++) {
    const attempts: Attempts = { outcomeUnknown: false };
    req.contextValues.set(ATTEMPTS, attempts);
    try {
      const res = await next(req);
      const created = res.stream ? undefined : (res.message as { created?: boolean }).created;
      if (created !== false || attempts.outcomeUnknown || draws >= MAX_ID_DRAWS) return res;
    } catch (err) {
      const taken = ConnectError.from(err).code === Code.AlreadyExists && !attempts.outcomeUnknown;
      if (!taken || draws >= MAX_ID_DRAWS) throw err;
    }
    m.sessionId = draw();
  }
}

/**
 * An import repeated with what the first attempt chose is the same log:
 * idempotent. True when the session id was drawn here (neither given nor
 * recorded in the root).
 */
function fillImport(m: ImportSessionRequest, draw: () => string): boolean {
  const root = m.entries[0]?.kind;
  const recorded = root?.case === "sessionInfo" ? root.value.sessionId : "";
  const drawn = m.sessionId === undefined && recorded === "";
  m.sessionId ??= recorded || draw();
  const now = toTimestamp(new Date());
  for (const e of m.entries) {
    if (e.id === "") e.id = newEntryId();
    e.timestamp ??= now;
  }
  return drawn;
}

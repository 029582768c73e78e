import type { StorageEvent } from "../engine.js";
import type { PgContext } from "./context.js";
import { cacheKey, keyOfCacheKey } from "./session-cache.js";

/**
 * After each re-LISTEN (a reconnect): NOTIFYs sent while the connection
 * was down are lost, so every cached session gets an event with its head
 * seq as stored NOW (read after LISTEN, so no commit falls between the
 * two): "appended" when it exists, "deleted" when it is gone. The cached
 * head would not do: a watcher already at the cached head would read
 * nothing. Watched sessions are read on every event, so they are cached.
 * Returns the events to emit.
 */
export async function resyncEvents(ctx: PgContext): Promise<StorageEvent[]> {
  if (ctx.cache.size === 0) return [];
  const keys = ctx.cache.keys().map((k) => {
    const { workspace, sessionId } = keyOfCacheKey(k);
    return { w: workspace, s: sessionId };
  });
  const rows = await ctx.db(
    "resyncing watches",
    () =>
      ctx.sql<{ workspace: string; session_id: string; head_seq: number }[]>`
      SELECT s.workspace, s.session_id, s.head_seq
      FROM json_to_recordset(${JSON.stringify(keys)}::text::json) AS k(w text, s text)
      JOIN sessiond_sessions s ON s.workspace = k.w AND s.session_id = k.s`,
  );
  const events: StorageEvent[] = [];
  const found = new Set<string>();
  for (const r of rows) {
    const key = { workspace: r.workspace, sessionId: r.session_id };
    found.add(cacheKey(key));
    events.push({ type: "appended", ...key, headSeq: r.head_seq });
  }
  for (const { w, s } of keys) {
    const key = { workspace: w, sessionId: s };
    if (!found.has(cacheKey(key))) events.push({ type: "deleted", ...key, headSeq: 0 });
  }
  return events;
}

import { aborted, failedPrecondition } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { SessionKey } from "../engine.js";
import { SEALED_KINDS } from "../seal/sealed-payload.js";
import { dropCheckpoint } from "./checkpoint.js";
import { missing, type PgContext, type Q } from "./context.js";
import { isSealed, type KeyColumns } from "./sealing.js";
import { searchBloom } from "./search-bloom.js";
import { cacheKey } from "./session-cache.js";

/**
 * `sessiond seal` and `sessiond keys rewrap` on PostgreSQL (issue 41): the
 * JSONL engine's seal-sessions.ts and session-keys.ts `rewrap`, with rows
 * instead of files.
 *
 * Sealing a session in clear is ONE transaction: the session row locked
 * (`FOR UPDATE`, as appends, redactions and erasures lock it, so it takes
 * its turn with the writers of every replica), its key row taken (or a new
 * data key made, wrapped by the workspace's current key version, and
 * inserted), every payload of a sealed kind still in clear replaced by its
 * sealed form (one UPDATE), a new incarnation given to the session and its
 * checkpoint, if any, deleted (checkpoint.ts). A
 * crash, a kill or a failure anywhere before COMMIT leaves the session as it
 * was (in clear, no key row); after it, sealed with its key. Never a sealed
 * payload without its key row, never half a session sealed.
 *
 * The new incarnation is how other replicas follow (as after a redaction):
 * a cached log is read again at its next use, with the key row, and an
 * optimistic append planned on the old one misses its compare-and-set and
 * is planned again, then sealed. The content reads the same before and
 * after, so watchers get no event: their next read by seq gives the same
 * entries.
 *
 * Idempotent: a session with a key row and no payload of a sealed kind in
 * clear is "already" (nothing written), an erased one "erased". A session
 * with sealed payloads but no key row is refused (FAILED_PRECONDITION): a
 * new key would not open them.
 */
export type PgSealOutcome =
  | { readonly sessionId: string; readonly result: "sealed"; readonly records: number }
  | { readonly sessionId: string; readonly result: "already" | "erased" };

/** Test hooks: what runs inside the transaction just before its COMMIT. */
export interface SealHooks {
  readonly beforeCommit?: (key: SessionKey) => Promise<void> | void;
}

const KINDS = [...SEALED_KINDS];

export async function sealSession(
  ctx: PgContext,
  key: SessionKey,
  hooks: SealHooks = {},
): Promise<PgSealOutcome> {
  if (!ctx.keys.encrypts) throw failedPrecondition("sealing needs a keyring (--keyring FILE)");
  const name = `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
  const { sessionId } = key;
  const k = cacheKey(key);
  return ctx.cache.withKey(k, async () => {
    let out: PgSealOutcome | undefined;
    try {
      await ctx.db(`sealing ${name}`, () =>
        ctx.sql.begin(async (tx) => {
          out = undefined;
          const keyRow = await lockKeyRow(tx, key);
          if (keyRow?.erased != null) {
            out = { sessionId, result: "erased" };
            return;
          }
          const rows = await tx<{ seq: number; kind: string; payload: string }[]>`
            SELECT seq, kind, payload FROM sessiond_entries
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
              AND kind IN ${tx(KINDS)}
            ORDER BY seq`;
          const clear = rows.filter((r) => !isSealed(r.payload));
          const hasKey = keyRow?.wrapped != null;
          if (hasKey && clear.length === 0) {
            out = { sessionId, result: "already" };
            return;
          }
          if (!hasKey && clear.length < rows.length) {
            throw failedPrecondition(
              `${name} has sealed payloads but no key row (sessiond_session_keys): not sealed again under a new key`,
            );
          }
          let sealer = hasKey ? (await ctx.keys.keyingOf(key, keyRow)).sealer : undefined;
          if (!hasKey) {
            const made = await ctx.keys.makeFor(key);
            const w = made.wrapped;
            await tx`
              INSERT INTO sessiond_session_keys (workspace, session_id, key_id, key_version, wrapped)
              VALUES (${key.workspace}, ${key.sessionId}, ${w.keyId}, ${w.version}, ${w.wrapped})`;
            sealer = made.keying.sealer;
          }
          if (sealer === undefined)
            throw failedPrecondition(`${name}: no data key to seal it with`);
          const s = sealer;
          const changed = clear.map((r) => {
            const p = s.sealPayload(r.payload);
            return { q: r.seq, p, b: searchBloom(r.kind, r.payload, p, s) };
          });
          // In statements of insertChunk rows each (a long session's payloads are not one parameter).
          let updated = 0;
          for (let i = 0; i < changed.length; i += ctx.insertChunk) {
            const part = changed.slice(i, i + ctx.insertChunk);
            const done = await tx<{ seq: number }[]>`
              UPDATE sessiond_entries e SET payload = v.p, search_bloom = v.b
              FROM json_to_recordset(${JSON.stringify(part)}::text::json)
                AS v(q int, p text, b bytea)
              WHERE e.workspace = ${key.workspace} AND e.session_id = ${key.sessionId}
                AND e.seq = v.q
              RETURNING e.seq`;
            updated += done.length;
          }
          await tx`
            UPDATE sessiond_sessions SET incarnation = DEFAULT
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
          await dropCheckpoint(tx, key);
          if (updated !== changed.length) {
            throw aborted(`${name}: ${changed.length} payloads to seal, ${updated} updated`);
          }
          await hooks.beforeCommit?.(key);
          out = { sessionId, result: "sealed", records: changed.length };
        }),
      );
    } finally {
      // Read again from the rows, with the key row, at the next use (or after any failure).
      ctx.cache.drop(k);
    }
    return out as PgSealOutcome;
  });
}

/**
 * `keys rewrap` of one session: its key row wrapped again under the
 * current version of the workspace's key (the data key stays: no payload
 * is rewritten). One UPDATE that only applies to the row as it was read
 * (an erasure or another rewrap meanwhile wins), so it is safe while
 * servers run: a replica that unwrapped the old row keeps the same data
 * key. `undefined`: the session is in clear; "erased": its key is destroyed.
 */
export async function rewrapSession(
  ctx: PgContext,
  key: SessionKey,
): Promise<{ from: number; to: number } | "erased" | undefined> {
  const name = `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
  const [row] = await ctx.db(
    `reading the key of ${name}`,
    () => ctx.sql<KeyColumns[]>`
      SELECT k.key_id, k.key_version, k.wrapped, k.erased
      FROM sessiond_sessions s
      LEFT JOIN sessiond_session_keys k
        ON k.workspace = s.workspace AND k.session_id = s.session_id
      WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}`,
  );
  if (row === undefined) throw missing(key);
  if (row.erased != null) return "erased";
  if (row.wrapped == null || row.key_id === null || row.key_version === null) return undefined;
  const old = { keyId: row.key_id, version: row.key_version, wrapped: row.wrapped };
  const w = await ctx.keys.rewrapped(key, old);
  if (w === old) return { from: old.version, to: old.version };
  const done = await ctx.db(
    `rewrapping the key of ${name}`,
    () => ctx.sql`
      UPDATE sessiond_session_keys
      SET key_id = ${w.keyId}, key_version = ${w.version}, wrapped = ${w.wrapped}
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
        AND wrapped = ${old.wrapped}
      RETURNING 1`,
  );
  if (done.length === 0) {
    throw aborted(`the key of ${name} changed while being rewrapped (erased, or rewrapped): retry`);
  }
  return { from: old.version, to: w.version };
}

/** Locks the session row (NOT_FOUND when gone) and reads its key row. */
async function lockKeyRow(tx: Q, key: SessionKey): Promise<KeyColumns | undefined> {
  const [row] = await tx<({ found: number } & KeyColumns)[]>`
    SELECT 1 AS found, k.key_id, k.key_version, k.wrapped, k.erased
    FROM sessiond_sessions s
    LEFT JOIN sessiond_session_keys k
      ON k.workspace = s.workspace AND k.session_id = s.session_id
    WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}
    FOR UPDATE OF s`;
  if (row === undefined) throw missing(key);
  return row.wrapped === null && row.erased === null ? undefined : row;
}

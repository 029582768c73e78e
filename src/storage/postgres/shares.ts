import type { ShareRecord, ShareStorage } from "../shares.js";
import type { PgContext } from "./context.js";

/** A row of sessiond_shares (schema.ts). */
interface ShareRow {
  digest: string;
  id: string;
  workspace: string;
  session_id: string;
  root_id: string;
  entry_id: string;
  created_at_ms: string;
  expires_at_ms: string;
  by_name: string;
  omit_tool_output: boolean;
  omit_thinking: boolean;
  revoked_at_ms: string;
}

function recordOf(r: ShareRow): ShareRecord {
  return {
    digest: r.digest,
    id: r.id,
    workspace: r.workspace,
    sessionId: r.session_id,
    rootId: r.root_id,
    entryId: r.entry_id,
    createdAtMs: Number(r.created_at_ms),
    expiresAtMs: Number(r.expires_at_ms),
    by: r.by_name,
    omitToolOutput: r.omit_tool_output,
    omitThinking: r.omit_thinking,
    revokedAtMs: Number(r.revoked_at_ms),
  };
}

/**
 * Share records on PostgreSQL: the sessiond_shares table, one row per share
 * keyed by the token's SHA-256 (the token is never stored). No foreign key
 * to the session: a share outlives its session as a revoked record. A
 * revoke is one UPDATE, so replicas agree at once.
 */
export class PgShares implements ShareStorage {
  constructor(private readonly ctx: PgContext) {}

  async put(r: ShareRecord): Promise<void> {
    await this.ctx.db(
      "storing a share",
      () => this.ctx.sql`
        INSERT INTO sessiond_shares (digest, id, workspace, session_id, root_id, entry_id,
          created_at_ms, expires_at_ms, by_name, omit_tool_output, omit_thinking, revoked_at_ms)
        VALUES (${r.digest}, ${r.id}, ${r.workspace}, ${r.sessionId}, ${r.rootId}, ${r.entryId},
          ${r.createdAtMs}, ${r.expiresAtMs}, ${r.by}, ${r.omitToolOutput}, ${r.omitThinking},
          ${r.revokedAtMs})`,
    );
  }

  async byDigest(digest: string): Promise<ShareRecord | undefined> {
    const rows = await this.ctx.db(
      "reading a share",
      () => this.ctx.sql<ShareRow[]>`SELECT * FROM sessiond_shares WHERE digest = ${digest}`,
    );
    const row = rows[0];
    return row === undefined ? undefined : recordOf(row);
  }

  async list(workspace: string): Promise<ShareRecord[]> {
    const rows = await this.ctx.db(
      "listing shares",
      () => this.ctx.sql<ShareRow[]>`SELECT * FROM sessiond_shares WHERE workspace = ${workspace}`,
    );
    return rows.map(recordOf);
  }

  async revoke(workspace: string, digest: string, atMs: number): Promise<ShareRecord | undefined> {
    const rows = await this.ctx.db(
      "revoking a share",
      () => this.ctx.sql<ShareRow[]>`
        UPDATE sessiond_shares
           SET revoked_at_ms = CASE WHEN revoked_at_ms = 0 THEN ${atMs}::bigint ELSE revoked_at_ms END
         WHERE workspace = ${workspace} AND digest = ${digest}
        RETURNING *`,
    );
    const row = rows[0];
    return row === undefined ? undefined : recordOf(row);
  }

  async revokeSessions(
    workspace: string,
    sessionIds: readonly string[],
    atMs: number,
  ): Promise<number> {
    if (sessionIds.length === 0) return 0;
    const rows = await this.ctx.db(
      "revoking shares",
      () => this.ctx.sql`
        UPDATE sessiond_shares SET revoked_at_ms = ${atMs}
         WHERE workspace = ${workspace} AND session_id IN ${this.ctx.sql([...sessionIds])}
           AND revoked_at_ms = 0`,
    );
    return rows.count;
  }
}

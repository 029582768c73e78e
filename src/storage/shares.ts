/**
 * Share links' records (StoreService.ShareSession, issue 42): what an engine
 * keeps of a share. The token itself is never kept: only its SHA-256
 * (`digest`, 64 lower-case hex digits), by which ReadShare looks the share
 * up, and its first characters (`id`), by which a workspace's owner can name
 * a share in a listing or a revoke without the link. A leaked data
 * directory or database dump therefore holds no live link. The snapshot is
 * not copied either: ReadShare reads the session's path when it is asked
 * (src/store/shares.ts), so later redaction and erasure apply.
 */
export interface ShareRecord {
  /** SHA-256 of the token, hex. */
  readonly digest: string;
  /** The token's first SHARE_ID_CHARS characters (not secret: the rest is). */
  readonly id: string;
  readonly workspace: string;
  readonly sessionId: string;
  /**
   * The id of the session's root entry when it was shared: a session
   * deleted and created again under the same id is another session, and
   * its shares do not read it.
   */
  readonly rootId: string;
  /** The snapshot is the path root -> this entry. */
  readonly entryId: string;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
  readonly by: string;
  readonly omitToolOutput: boolean;
  readonly omitThinking: boolean;
  /** When it was revoked (RevokeShare, or its session deleted or erased); 0 while live. */
  readonly revokedAtMs: number;
}

/** How many of a token's characters are kept as the share's id. */
export const SHARE_ID_CHARS = 12;

/** Where an engine keeps share records. Every write is durable before it resolves. */
export interface ShareStorage {
  /** Stores a new share (its digest is new: 256 random bits). */
  put(record: ShareRecord): Promise<void>;
  /** The share of this digest, in any workspace; undefined when there is none. */
  byDigest(digest: string): Promise<ShareRecord | undefined>;
  /** Every share of a workspace (revoked and expired ones too), in no order. */
  list(workspace: string): Promise<ShareRecord[]>;
  /**
   * Marks the share of `digest` in `workspace` revoked at `atMs` unless it
   * already is; returns it as it is now, undefined when there is none.
   */
  revoke(workspace: string, digest: string, atMs: number): Promise<ShareRecord | undefined>;
  /** Revokes every live share of these sessions; returns how many it revoked. */
  revokeSessions(workspace: string, sessionIds: readonly string[], atMs: number): Promise<number>;
}

/** A record as stored text (JSONL files, tests); `parseShareRecord` reads it back. */
export function shareRecordJson(r: ShareRecord): string {
  return JSON.stringify({ v: 1, ...r });
}

/** A stored record, or undefined when the text is not one (a torn or foreign file). */
export function parseShareRecord(text: string): ShareRecord | undefined {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (o === null || typeof o !== "object" || o.v !== 1) return undefined;
  const str = (k: string) => typeof o[k] === "string";
  const num = (k: string) => typeof o[k] === "number";
  const bool = (k: string) => typeof o[k] === "boolean";
  const ok =
    ["digest", "id", "workspace", "sessionId", "rootId", "entryId", "by"].every(str) &&
    ["createdAtMs", "expiresAtMs", "revokedAtMs"].every(num) &&
    ["omitToolOutput", "omitThinking"].every(bool);
  if (!ok) return undefined;
  const { v: _v, ...rest } = o;
  return rest as unknown as ShareRecord;
}

/** Shares kept in memory (the memory engine's; tests). */
export class MemoryShares implements ShareStorage {
  private readonly byDigestMap = new Map<string, ShareRecord>();

  async put(record: ShareRecord): Promise<void> {
    this.byDigestMap.set(record.digest, { ...record });
  }

  async byDigest(digest: string): Promise<ShareRecord | undefined> {
    const r = this.byDigestMap.get(digest);
    return r === undefined ? undefined : { ...r };
  }

  async list(workspace: string): Promise<ShareRecord[]> {
    return [...this.byDigestMap.values()]
      .filter((r) => r.workspace === workspace)
      .map((r) => ({ ...r }));
  }

  async revoke(workspace: string, digest: string, atMs: number): Promise<ShareRecord | undefined> {
    const r = this.byDigestMap.get(digest);
    if (r === undefined || r.workspace !== workspace) return undefined;
    if (r.revokedAtMs !== 0) return { ...r };
    const next = { ...r, revokedAtMs: atMs };
    this.byDigestMap.set(digest, next);
    return { ...next };
  }

  async revokeSessions(
    workspace: string,
    sessionIds: readonly string[],
    atMs: number,
  ): Promise<number> {
    const ids = new Set(sessionIds);
    let n = 0;
    for (const [digest, r] of this.byDigestMap) {
      if (r.workspace !== workspace || !ids.has(r.sessionId) || r.revokedAtMs !== 0) continue;
      this.byDigestMap.set(digest, { ...r, revokedAtMs: atMs });
      n++;
    }
    return n;
  }
}

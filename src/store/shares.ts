import { createHash, randomBytes } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type ContentPart,
  type Entry,
  EntrySchema,
  WithheldReason,
} from "../../gen/sessiond/v1/entry_pb.js";
import { type Share, ShareSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { resolvedPart, withContent } from "../core/blob-parts.js";
import {
  dataLoss,
  failedPrecondition,
  invalidArgument,
  isSessiondError,
  notFound,
  unimplemented,
} from "../core/errors.js";
import { checkWorkspace, quote } from "../core/ids.js";
import type { SessionKey, StorageEngine } from "../storage/engine.js";
import { SHARE_ID_CHARS, type ShareRecord, type ShareStorage } from "../storage/shares.js";
import type { BlobStore } from "./blobs.js";
import { listPageSize, type StoreLimits } from "./limits.js";
import { badPageToken, decodeToken, encodeToken } from "./page-token.js";
import { omitFromEntry } from "./shares-snapshot.js";

/**
 * Share links (StoreService.ShareSession / RevokeShare / ListShares /
 * ReadShare, issue 42): a read-only view of one session's path root ->
 * entry, behind an unguessable token, until it expires or is revoked.
 *
 * - The token is 32 random bytes (256 bits) as base64url (43 characters).
 *   The engine keeps its SHA-256 and its first 12 characters (the share's
 *   id, which listings show and RevokeShare accepts), never the token: the
 *   link is shown once, when it is made.
 * - Nothing is copied: ReadShare reads the path from the session when it
 *   is asked, so a redaction or erasure done later shows (as its markers),
 *   and the share's omissions (tool outputs, thinking) are applied then.
 * - ReadShare answers NOT_FOUND with one message for a token that is
 *   malformed, unknown, revoked or expired, for a session deleted (or
 *   deleted and made again under the same id), erased, or an entry gone:
 *   a token tells nothing about why. It reads only the share's session and
 *   the blobs of the path's entries it returns.
 */

/** Default life of a share: 7 days. */
export const DEFAULT_SHARE_MS = 7 * 24 * 60 * 60 * 1000;
/** Longest life of a share: 365 days. */
export const MAX_SHARE_MS = 365 * 24 * 60 * 60 * 1000;
/** Longest `by`. */
export const MAX_SHARE_BY_CHARS = 256;

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const SHARE_ID = new RegExp(`^[A-Za-z0-9_-]{${SHARE_ID_CHARS}}$`);

/** The one answer of ReadShare for every share that cannot be read. */
const NO_SHARE = "share not found (the link is wrong, revoked or expired)";

export function shareDigest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * A new token: 256 random bits, URL-safe. One that would start with "-" is
 * drawn again (1 in 64): users paste the token, and its first 12 characters
 * as the share's id, after a flag (`sessiond share --revoke ID`), where a
 * leading dash reads as another flag. The redraw leaves 6 bits of the first
 * character's choice at 63 values: ~255.98 bits.
 */
export function newShareToken(): string {
  for (;;) {
    const token = randomBytes(32).toString("base64url");
    if (!token.startsWith("-")) return token;
  }
}

export interface ShareInput {
  workspace?: string | undefined;
  /** Full id or unique prefix. */
  session: string;
  /** Default: the current leaf. */
  entryId?: string | undefined;
  /** Default: 7 days from now. */
  expiresAt?: Timestamp | undefined;
  by?: string | undefined;
  omitToolOutput?: boolean | undefined;
  omitThinking?: boolean | undefined;
}

export interface ShareListInput {
  workspace?: string | undefined;
  /** Only this session's shares (full id or unique prefix). */
  session?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
}

export interface ShareReadInput {
  /** At most this many entries; 0 / unset: as many as `budgetBytes` holds. */
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  /**
   * Bytes the page's entries may take (encoded, blobs inlined); the first
   * entry always goes. Blobs of at most half of it are inlined (a share's
   * reader has no token for GetBlob); larger ones stay references.
   */
  budgetBytes?: number | undefined;
}

/** One page of a share's snapshot. */
export interface ShareSnapshot {
  /** The share, without its token. */
  readonly share: Share;
  readonly title: string;
  /** Entries of the page, root first, omissions applied, small blobs inlined. */
  readonly entries: Entry[];
  /** The page token of the page after the first `n` entries of this one ("" at the end). */
  readonly tokenAfter: (n: number) => string;
}

export interface SharesContext {
  readonly engine: StorageEngine;
  readonly limits: StoreLimits;
  readonly blobs: BlobStore;
  readonly now: () => Date;
  readonly resolve: (workspace: string | undefined, ref: string) => Promise<SessionKey>;
}

export class Shares {
  constructor(private readonly ctx: SharesContext) {}

  private storage(): ShareStorage {
    const s = this.ctx.engine.shares;
    if (s === undefined) {
      throw unimplemented(`share links are not built for the ${this.ctx.engine.kind} engine`);
    }
    return s;
  }

  /** Makes a share; the answer is the only place its token is ever shown. */
  async create(input: ShareInput): Promise<Share> {
    const storage = this.storage();
    const key = await this.ctx.resolve(input.workspace, input.session);
    const nowMs = this.ctx.now().getTime();
    const expiresAtMs =
      input.expiresAt === undefined
        ? nowMs + DEFAULT_SHARE_MS
        : timestampDate(input.expiresAt).getTime();
    if (!Number.isFinite(expiresAtMs) || expiresAtMs <= nowMs) {
      throw invalidArgument(
        `expires_at ${isoOrRaw(expiresAtMs)} is not in the future (now ${new Date(nowMs).toISOString()})`,
      );
    }
    if (expiresAtMs > nowMs + MAX_SHARE_MS) {
      throw invalidArgument(
        `expires_at ${isoOrRaw(expiresAtMs)} is more than 365 days from now (at most ${new Date(nowMs + MAX_SHARE_MS).toISOString()})`,
      );
    }
    const by = input.by ?? "";
    if ([...by].length > MAX_SHARE_BY_CHARS) {
      throw invalidArgument(`by is longer than ${MAX_SHARE_BY_CHARS} characters`);
    }
    const log = await this.ctx.engine.load(key);
    const entryId = input.entryId || log.leafId;
    const entry = log.get(entryId);
    if (entry === undefined) {
      throw notFound(
        `entry ${quote(entryId)} not found in session ${quote(key.sessionId)} of workspace ${quote(key.workspace)}`,
      );
    }
    if (entry.kind.case === "leaf") {
      throw invalidArgument(
        `entry ${quote(entryId)} is a Leaf entry (a pointer move): share the entry it points to`,
      );
    }
    const token = newShareToken();
    const record: ShareRecord = {
      digest: shareDigest(token),
      id: token.slice(0, SHARE_ID_CHARS),
      workspace: key.workspace,
      sessionId: key.sessionId,
      rootId: log.root.id,
      entryId,
      createdAtMs: nowMs,
      expiresAtMs,
      by,
      omitToolOutput: input.omitToolOutput === true,
      omitThinking: input.omitThinking === true,
      revokedAtMs: 0,
    };
    await storage.put(record);
    return shareOf(record, token);
  }

  /**
   * Revokes a share, named by its token or its id (the token's first 12
   * characters, as ListShares shows it). Idempotent; NOT_FOUND when the
   * workspace has no such share.
   */
  async revoke(workspaceIn: string | undefined, token: string): Promise<Share> {
    const storage = this.storage();
    const workspace = checkWorkspace(workspaceIn);
    const digest = await this.digestOf(storage, workspace, token);
    const r =
      digest === undefined
        ? undefined
        : await storage.revoke(workspace, digest, this.ctx.now().getTime());
    if (r === undefined) throw noSuchShare(workspace, token);
    return shareOf(r, undefined);
  }

  private async digestOf(
    storage: ShareStorage,
    workspace: string,
    token: string,
  ): Promise<string | undefined> {
    if (TOKEN.test(token)) return shareDigest(token);
    if (!SHARE_ID.test(token)) {
      throw invalidArgument(
        `token ${quote(token.slice(0, SHARE_ID_CHARS))}… is neither a share token (43 characters) nor a share id (${SHARE_ID_CHARS})`,
      );
    }
    const matches = (await storage.list(workspace)).filter((r) => r.id === token);
    if (matches.length > 1) {
      throw failedPrecondition(
        `share id ${quote(token)} names ${matches.length} shares in workspace ${quote(workspace)}: give the whole token`,
      );
    }
    return matches[0]?.digest;
  }

  /** A page of a workspace's shares (or one session's), newest first, revoked and expired ones too. */
  async list(input: ShareListInput = {}): Promise<{ shares: Share[]; nextPageToken: string }> {
    const storage = this.storage();
    const workspace = checkWorkspace(input.workspace);
    const size = listPageSize(input.pageSize, this.ctx.limits);
    const sessionId =
      input.session === undefined
        ? undefined
        : (await this.ctx.resolve(workspace, input.session)).sessionId;
    let after: ListPlace | undefined;
    if (input.pageToken) {
      const f = decodeToken(input.pageToken);
      if (
        f.length !== 4 ||
        f[0] !== "shares" ||
        f[1] !== (sessionId ?? "") ||
        typeof f[2] !== "number" ||
        typeof f[3] !== "string"
      ) {
        throw badPageToken();
      }
      after = { createdAtMs: f[2], digest: f[3] };
    }
    const all = (await storage.list(workspace))
      .filter((r) => sessionId === undefined || r.sessionId === sessionId)
      .sort((a, b) => (listsAfter(a, b) ? 1 : -1))
      .filter((r) => after === undefined || listsAfter(r, after));
    const page = all.slice(0, size);
    const last = all.length > size ? page[page.length - 1] : undefined;
    return {
      shares: page.map((r) => shareOf(r, undefined)),
      nextPageToken:
        last === undefined
          ? ""
          : encodeToken(["shares", sessionId ?? "", last.createdAtMs, last.digest]),
    };
  }

  /** Revokes the live shares of these sessions (deleted or erased); how many. */
  async revokeSessions(workspace: string, sessionIds: readonly string[]): Promise<number> {
    const storage = this.ctx.engine.shares;
    if (storage === undefined) return 0;
    // Stryker disable next-line ConditionalExpression: the guard taken out (false) is equivalent: an empty list revokes nothing and answers 0 on every engine, the guard only spares JSONL a read of the share files (true, which stops every revoke, goes with it: the delete and erase tests kill it)
    if (sessionIds.length === 0) return 0;
    return storage.revokeSessions(workspace, sessionIds, this.ctx.now().getTime());
  }

  /**
   * Whether `token` names a share that may be read now (made, not revoked,
   * not expired): the web page of a share link answers 404 when not. One
   * lookup by digest; ReadShare still checks the session itself.
   */
  async live(token: string): Promise<boolean> {
    if (!TOKEN.test(token) || this.ctx.engine.shares === undefined) return false;
    const r = await this.ctx.engine.shares.byDigest(shareDigest(token));
    return r !== undefined && r.revokedAtMs === 0 && this.ctx.now().getTime() < r.expiresAtMs;
  }

  /** One page of a share's snapshot, by its token alone (see the class comment). */
  async read(token: string, input: ShareReadInput = {}): Promise<ShareSnapshot> {
    const storage = this.storage();
    if (!TOKEN.test(token)) throw notFound(NO_SHARE);
    const r = await storage.byDigest(shareDigest(token));
    if (r === undefined || r.revokedAtMs !== 0 || this.ctx.now().getTime() >= r.expiresAtMs) {
      throw notFound(NO_SHARE);
    }
    const key = { workspace: r.workspace, sessionId: r.sessionId };
    let path: Entry[];
    let title: string;
    try {
      const log = await this.ctx.engine.load(key);
      if (log.root.id !== r.rootId || !log.has(r.entryId)) throw notFound(NO_SHARE);
      path = log.path(r.entryId);
      title = log.title ?? "";
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND")) throw notFound(NO_SHARE);
      if (isSessiondError(err, "DATA_LOSS")) throw dataLoss("the shared session is damaged");
      throw err;
    }
    // An erased session's shares were revoked; should that have been cut short, nothing shows.
    if (path.some((e) => e.withheld?.reason === WithheldReason.ERASED)) throw notFound(NO_SHARE);
    let start = 0;
    if (input.pageToken) {
      const f = decodeToken(input.pageToken);
      if (
        f.length !== 3 ||
        f[0] !== "share" ||
        f[1] !== r.id ||
        // Stryker disable next-line ConditionalExpression: the check taken out (false) is equivalent: a start that is not a number fails Number.isSafeInteger below with the same error; this check narrows its type
        typeof f[2] !== "number"
      ) {
        throw badPageToken();
      }
      start = f[2];
      if (!Number.isSafeInteger(start) || start < 0 || start > path.length) throw badPageToken();
    }
    const pageSize = input.pageSize ?? 0;
    if (!Number.isSafeInteger(pageSize) || pageSize < 0) {
      throw invalidArgument(`page_size ${pageSize} is out of range`);
    }
    const budget = input.budgetBytes ?? Number.POSITIVE_INFINITY;
    const end = pageSize === 0 ? path.length : Math.min(path.length, start + pageSize);
    const entries: Entry[] = [];
    let used = 0;
    for (let i = start; i < end; i++) {
      const e = await this.inlined(
        r.workspace,
        omitFromEntry(path[i] as Entry, r.omitToolOutput, r.omitThinking),
        budget / 2,
      );
      used += toBinary(EntrySchema, e).length + 8;
      if (entries.length > 0 && used > budget) break;
      entries.push(e);
    }
    return {
      share: shareOf(r, undefined, false),
      title,
      entries,
      tokenAfter: (n) => (start + n < path.length ? encodeToken(["share", r.id, start + n]) : ""),
    };
  }

  /** A message's blob references of at most `limit` bytes put back into their parts. */
  private async inlined(workspace: string, e: Entry, limit: number): Promise<Entry> {
    if (e.kind.case !== "message") return e;
    const parts = e.kind.value.content;
    let out: ContentPart[] | undefined;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] as ContentPart;
      if (p.part.case !== "blob" || Number(p.part.value.size) > limit) continue;
      const data = await this.ctx.blobs.content(workspace, p.part.value);
      if (data === undefined) continue;
      try {
        out ??= parts.slice();
        out[i] = resolvedPart(p.part.value, data);
      } catch {
        // Not the part it claims to be: left a reference.
      }
    }
    return out === undefined ? e : withContent(e, out);
  }
}

/** Where a share stands in a listing (a page token holds the page's last). */
type ListPlace = Pick<ShareRecord, "createdAtMs" | "digest">;

/**
 * Whether share `a` lists after `b` (newest first): made earlier, or in the
 * same millisecond with a lower digest. Two shares never have one digest,
 * so one of two lists after the other; a share does not list after itself.
 */
function listsAfter(a: ListPlace, b: ListPlace): boolean {
  return a.createdAtMs < b.createdAtMs || (a.createdAtMs === b.createdAtMs && a.digest < b.digest);
}

/** A time as ISO 8601, or its raw value when no Date can hold it. */
function isoOrRaw(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

function noSuchShare(workspace: string, token: string) {
  // Never the whole token in a message (messages reach logs): its id is enough.
  return notFound(
    `share ${quote(token.slice(0, SHARE_ID_CHARS))} not found in workspace ${quote(workspace)}`,
  );
}

/**
 * A record as the contract's Share: with its token and link only when made
 * (`token`), else its id in `token` (listings, revokes) or nothing (ReadShare).
 */
function shareOf(r: ShareRecord, token: string | undefined, withId = true): Share {
  return create(ShareSchema, {
    token: token ?? (withId ? r.id : ""),
    workspace: r.workspace,
    sessionId: r.sessionId,
    entryId: r.entryId,
    createdAt: timestampFromMs(r.createdAtMs),
    expiresAt: timestampFromMs(r.expiresAtMs),
    by: r.by,
    omitToolOutput: r.omitToolOutput,
    omitThinking: r.omitThinking,
    revoked: r.revokedAtMs !== 0,
    path: token === undefined ? "" : `/share/${token}`,
  });
}

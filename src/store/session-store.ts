import { create, equals, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import {
  type Entry,
  EntrySchema,
  type SessionInfo,
  SessionInfoSchema,
} from "../../gen/sessiond/v1/entry_pb.js";
import type { SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import type { GetUsageResponse } from "../../gen/sessiond/v1/session_service_pb.js";
import { type PlanContext, storedJson } from "../core/append-plan.js";
import { FORMAT_VERSION, toTimestamp } from "../core/entry.js";
import {
  aborted,
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  isSessiondError,
  notFound,
} from "../core/errors.js";
import { planFork } from "../core/fork-plan.js";
import {
  checkSessionId,
  checkSessionPrefix,
  checkSessionRef,
  checkWorkspace,
  matchesSessionRef,
  newEntryId,
  newSessionId,
  quote,
} from "../core/ids.js";
import { planImport } from "../core/import-plan.js";
import { resolveTarget } from "../core/move-plan.js";
import { checkTags, hasTags, type Tags } from "../core/tags.js";
import type { PriceTable } from "../core/usage-sums.js";
import type { SessionKey, StorageEngine } from "../storage/engine.js";
import { BlobStore } from "./blobs.js";
import { type EraseInput, type ErasureRecord, eraseSessions, readErasures } from "./erase.js";
import { familyOf } from "./family.js";
import { DEFAULT_LIMITS, type StoreLimits } from "./limits.js";
import { metaOf } from "./meta.js";
import { type SearchInput, type SearchResult, searchEntries } from "./search/search.js";
import { Session, type SessionContext } from "./session.js";
import { type ListInput, listSessions } from "./session-listing.js";
import { Shares } from "./shares.js";
import { sessionUsage, type UsageOptions } from "./usage.js";
import { type SessionWatchEvent, type SessionWatchOptions, StoreWatch } from "./watch/index.js";
import {
  listWorkspaces,
  type WorkspaceListInput,
  type WorkspaceListPage,
} from "./workspace-listing.js";

/**
 * Draws of a new session id before giving up (withSessionId): more than one
 * is once in 2^32 sessions made in the same second; eight only when the
 * generator is broken.
 */
const MAX_ID_DRAWS = 8;

export interface StoreOptions {
  limits?: Partial<StoreLimits>;
  /**
   * Negative-control switches for tests ONLY (see src/cli/debug-switches.ts):
   * `blobsAfterAck` writes an append's blobs after its entries instead of
   * before, so that a crash can leave a reference to a missing blob;
   * `noSubscribeFirst` makes every entry watch replay first and subscribe
   * after, never re-reading at heartbeats (the classic bug where an append
   * that lands between the replay and the subscription is not seen until
   * another one).
   */
  debug?: { blobsAfterAck?: boolean; noSubscribeFirst?: boolean };
  /** Clock (tests pin it). */
  now?: () => Date;
  /**
   * Draws the id of a session made without one (default core/ids.ts
   * newSessionId); tests make it draw a taken id.
   */
  newSessionId?: (now: Date) => string;
  /**
   * The operator's price table (`parsePriceTable`): `usage()` prices the
   * messages without a caller-set cost from it. Default: none (unpriced).
   */
  prices?: PriceTable | undefined;
}

export interface CreateSessionInput {
  workspace?: string | undefined;
  title?: string | undefined;
  cwd?: string | undefined;
  metadata?: JsonObject | undefined;
  /** Tags to find the session by (core/tags.ts). */
  tags?: Tags | undefined;
  /** Client-chosen id; generated (time-sortable) when absent. */
  sessionId?: string | undefined;
  /** Makes this a subagent session of that session (same workspace, full id). */
  parentSessionId?: string | undefined;
  agentType?: string | undefined;
}

export interface ForkInput {
  /** Entry id or label; the current leaf when absent. */
  entry?: string | undefined;
  title?: string | undefined;
  sessionId?: string | undefined;
}

/** How many candidates an ambiguous-prefix error names. */
const CANDIDATES_SHOWN = 5;

/**
 * SessionStore is the repository over one storage engine: it creates,
 * finds (full id or unique prefix), lists, deletes and forks sessions, keeps
 * workspaces apart, and hands out Session facades. It holds no session data
 * itself; the engine is the single source of truth.
 */
export class SessionStore {
  readonly limits: StoreLimits;
  /** Large parts stored once: reads, uploads, collection. */
  readonly blobs: BlobStore;
  /** Share links (shares.ts). */
  readonly shares: Shares;
  private readonly now: () => Date;
  private readonly drawSessionId: (now: Date) => string;
  private readonly prices: PriceTable | undefined;
  private readonly ctx: SessionContext;
  /** Live watching (Session.watch, watchSessions); starts with the first watcher. */
  private readonly watcher: StoreWatch;

  constructor(
    readonly engine: StorageEngine,
    options: StoreOptions = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.now = options.now ?? (() => new Date());
    this.drawSessionId = options.newSessionId ?? newSessionId;
    this.prices = options.prices;
    const plan: PlanContext = { now: this.now, maxEntryBytes: this.limits.maxEntryBytes };
    const meta = (key: SessionKey) => this.metaOfKey(key);
    this.watcher = new StoreWatch({
      engine,
      limits: this.limits,
      meta,
      noSubscribeFirst: options.debug?.noSubscribeFirst === true,
    });
    // Stryker disable next-line ConditionalExpression,BooleanLiteral: a negative-control switch (sessiond serve --debug); the reliability battery's T11 control shows it bites, no unit test turns it on
    this.blobs = new BlobStore(engine, this.limits, options.debug?.blobsAfterAck === true);
    this.ctx = {
      engine,
      limits: this.limits,
      plan,
      now: this.now,
      meta,
      watch: this.watcher,
      blobs: this.blobs,
    };
    this.shares = new Shares({
      engine,
      limits: this.limits,
      blobs: this.blobs,
      now: this.now,
      resolve: (ws, ref) => this.resolve(ws, ref),
    });
  }

  /**
   * Creates a session (or a subagent session). Creating an existing id with
   * identical parameters returns the existing session with created=false.
   */
  async create(
    input: CreateSessionInput = {},
  ): Promise<{ session: SessionMeta; created: boolean }> {
    const workspace = checkWorkspace(input.workspace);
    return this.withSessionId(input.sessionId, (id, drawn) =>
      this.createAs(workspace, input, id, drawn),
    );
  }

  /** `create` under the id `sessionId` (`drawn`: by this store, see withSessionId). */
  private async createAs(
    workspace: string,
    input: CreateSessionInput,
    sessionId: string,
    drawn: boolean,
  ): Promise<{ session: SessionMeta; created: boolean }> {
    let spawnDepth = 0;
    if (input.parentSessionId !== undefined) {
      checkSessionId(input.parentSessionId, "parent_session_id");
      if (input.parentSessionId === sessionId) {
        throw invalidArgument(`session ${quote(sessionId)} cannot be its own parent`);
      }
      const parent = await this.engine.load({ workspace, sessionId: input.parentSessionId });
      spawnDepth = parent.info.spawnDepth + 1;
    } else if (input.agentType !== undefined) {
      throw invalidArgument("agent_type is only valid with parent_session_id");
    }
    const tags = input.tags ?? {};
    checkTags(tags, "tags", false);
    const info = create(SessionInfoSchema, {
      sessionId,
      tags,
      title: input.title,
      cwd: input.cwd,
      createdAt: toTimestamp(this.now()),
      formatVersion: FORMAT_VERSION,
      parentSessionId: input.parentSessionId,
      agentType: input.agentType,
      spawnDepth,
      metadata: input.metadata,
    });
    const root = create(EntrySchema, {
      id: newEntryId(),
      seq: 1n,
      timestamp: info.createdAt,
      kind: { case: "sessionInfo", value: info },
    });
    storedJson(root, this.limits.maxEntryBytes, `the SessionInfo of session ${quote(sessionId)}`);
    const key = { workspace, sessionId };
    try {
      await this.engine.create(key, [root]);
      return { session: await this.metaOfKey(key), created: true };
    } catch (err) {
      if (drawn || !isSessiondError(err, "ALREADY_EXISTS")) throw err;
      const existing = (await this.engine.load(key)).info;
      if (!sameCreateParams(existing, info)) {
        throw alreadyExists(
          `session ${quote(sessionId)} already exists in workspace ${quote(workspace)} with other parameters`,
        );
      }
      return { session: await this.metaOfKey(key), created: false };
    }
  }

  /**
   * Runs `make` (create, fork or import) under the caller's session id
   * (checked), or under one this store draws. A drawn id that turns out
   * taken (ALREADY_EXISTS) is drawn again: a generated id is its second plus
   * 32 random bits, so two sessions made in the same second draw the same
   * one once in 2^32 pairs, and a session found under an id this call drew
   * is another caller's, never a retry of this one (only a caller's own id
   * makes a retried create, fork or import idempotent). `make` rethrows
   * ALREADY_EXISTS when `drawn`, instead of answering with what it found.
   */
  private async withSessionId<T>(
    given: string | undefined,
    make: (sessionId: string, drawn: boolean) => Promise<T>,
  ): Promise<T> {
    if (given !== undefined) return make(checkSessionId(given), false);
    for (let draw = 1; ; draw++) {
      try {
        return await make(this.drawSessionId(this.now()), true);
      } catch (err) {
        if (draw >= MAX_ID_DRAWS || !isSessiondError(err, "ALREADY_EXISTS")) throw err;
      }
    }
  }

  /**
   * Resolves a reference to a session id: the full id, or a unique prefix
   * (≥ 4 characters) of the id or of its short id (core/ids.ts `shortId`).
   * An exact id wins over any other match. No match → NOT_FOUND; several
   * → FAILED_PRECONDITION naming some candidates.
   */
  async resolve(workspaceIn: string | undefined, ref: string): Promise<SessionKey> {
    const workspace = checkWorkspace(workspaceIn);
    checkSessionRef(ref);
    const key = { workspace, sessionId: ref };
    // The hot path: a full id, checked without listing the workspace.
    if (await this.engine.exists?.(key)) return key;
    let matches: string[];
    if (this.engine.exists !== undefined && this.engine.idsByRef !== undefined) {
      checkSessionPrefix(ref);
      matches = await this.engine.idsByRef(workspace, ref, CANDIDATES_SHOWN + 1);
    } else {
      const ids = await this.engine.listIds(workspace);
      // A client-chosen id may be shorter than a prefix is allowed to be.
      if (ids.includes(ref)) return key;
      checkSessionPrefix(ref);
      matches = ids.filter((id) => matchesSessionRef(id, ref)).sort();
    }
    if (matches.length === 0) {
      throw notFound(`session ${quote(ref)} not found in workspace ${quote(workspace)}`);
    }
    if (matches.length > 1) {
      const shown = matches.slice(0, CANDIDATES_SHOWN).join(", ");
      const more = matches.length > CANDIDATES_SHOWN ? ", …" : "";
      throw failedPrecondition(
        `session ${quote(ref)} is ambiguous in workspace ${quote(workspace)}: it matches ${shown}${more} (give more characters or the full id)`,
      );
    }
    return { workspace, sessionId: matches[0] as string };
  }

  /** The facade of one session, by full id or unique prefix. */
  async open(workspace: string | undefined, ref: string): Promise<Session> {
    return (
      this.openNow(workspace, ref) ?? new Session(this.ctx, await this.resolve(workspace, ref))
    );
  }

  /**
   * The facade of a session the engine holds open, by its full id, at once
   * (no promise: the hot path of an append); undefined when it must be
   * resolved (`open`). Throws what `open` rejects with for a bad workspace
   * or reference.
   */
  openNow(workspace: string | undefined, ref: string): Session | undefined {
    const ws = checkWorkspace(workspace);
    checkSessionRef(ref);
    const key = { workspace: ws, sessionId: ref };
    return this.engine.isOpen?.(key) ? new Session(this.ctx, key) : undefined;
  }

  /** Metadata of one session. */
  async get(workspace: string | undefined, ref: string): Promise<SessionMeta> {
    return this.metaOfKey(await this.resolve(workspace, ref));
  }

  private async metaOfKey(key: SessionKey): Promise<SessionMeta> {
    const [record] = await this.engine.list(key.workspace, [key.sessionId]);
    if (record === undefined) {
      throw notFound(
        `session ${quote(key.sessionId)} not found in workspace ${quote(key.workspace)}`,
      );
    }
    return metaOf(record);
  }

  /**
   * One page of a workspace's sessions, ordered by creation time (newest
   * first by default), top-level or the subagents of one parent. Corrupt
   * sessions are listed with health CORRUPT. See session-listing.ts.
   */
  list(input: ListInput = {}): Promise<{ sessions: SessionMeta[]; nextPageToken: string }> {
    return listSessions(this.engine, this.limits, input);
  }

  /**
   * One page of the workspaces that hold sessions, by name, with their
   * counts of sessions and subagent sessions. See workspace-listing.ts.
   */
  listWorkspaces(input: WorkspaceListInput = {}): Promise<WorkspaceListPage> {
    return listWorkspaces(this.engine, this.limits, input);
  }

  /**
   * One page of a text search: the message entries whose text holds every
   * word of the query, session by session in the order of `list` by
   * creation, entries in seq order. See search.ts.
   */
  search(input: SearchInput): Promise<SearchResult> {
    return searchEntries(this.engine, this.limits, input);
  }

  /**
   * Deletes a session; with includeSubagents also its subagents,
   * recursively. Returns the deleted ids, the session first.
   *
   * An engine that can delete several sessions atomically (`deleteMany`,
   * PostgreSQL: one transaction) removes the whole family at once or
   * nothing. Otherwise they go one by one, children first, so that a crash
   * midway leaves no orphan whose parent is gone while it remains.
   *
   * With `ifHeadSeq` (compare-and-delete) the session goes first, and only
   * when its head seq is still that (ABORTED otherwise, nothing deleted);
   * its subagents follow. A crash in between leaves them as a delete
   * without subagents leaves them.
   */
  async delete(
    workspaceIn: string | undefined,
    ref: string,
    opts: { includeSubagents?: boolean; ifHeadSeq?: number | undefined } = {},
  ): Promise<string[]> {
    const key = await this.resolve(workspaceIn, ref);
    const deleted = await this.deleteKey(key, opts);
    // Their share links die with them (a session made again under the id is another one).
    await this.shares.revokeSessions(key.workspace, deleted);
    // The blobs only these sessions used go too, once past the grace
    // (BlobStore.collect); in the background: a failure waits for the sweep.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a collection after deleting nothing collects what the periodic sweep would (blobs past their grace that no session uses); the test spares it the work
    if (deleted.length > 0) this.blobs.collect(key.workspace).catch(() => undefined);
    return deleted;
  }

  private async deleteKey(
    key: SessionKey,
    opts: { includeSubagents?: boolean; ifHeadSeq?: number | undefined },
  ): Promise<string[]> {
    if (opts.ifHeadSeq !== undefined) return this.deleteIfUnchanged(key, opts.ifHeadSeq, opts);
    let order: string[] = [key.sessionId];
    if (opts.includeSubagents) {
      order = familyOf(await this.engine.listRoots(key.workspace), key.sessionId);
      if (this.engine.deleteMany !== undefined) {
        return this.engine.deleteMany(key.workspace, order);
      }
    }
    const deleted: string[] = [];
    for (const sessionId of order.reverse()) {
      if (await this.engine.delete({ workspace: key.workspace, sessionId }))
        deleted.push(sessionId);
    }
    return deleted.reverse();
  }

  private async deleteIfUnchanged(
    key: SessionKey,
    ifHeadSeq: number,
    opts: { includeSubagents?: boolean },
  ): Promise<string[]> {
    if (!Number.isSafeInteger(ifHeadSeq) || ifHeadSeq < 1) {
      throw invalidArgument(`expected_head_seq ${ifHeadSeq} is out of range`);
    }
    if (!(await this.engine.delete(key, { ifHeadSeq }))) {
      const now = await this.metaOfKey(key);
      throw aborted(
        `session ${quote(key.sessionId)}: expected head seq ${ifHeadSeq}, but it is ${now.headSeq}; not deleted`,
      );
    }
    // Listed after the delete (children keep their parent id): a refused delete lists nothing.
    // Stryker disable MethodExpression,ArrayDeclaration: the session itself left in the list, or an id that exists nowhere, is a delete that finds nothing (the session is gone by then)
    const subagents = opts.includeSubagents
      ? familyOf(await this.engine.listRoots(key.workspace), key.sessionId).slice(1)
      : [];
    // Stryker restore MethodExpression,ArrayDeclaration
    const deleted = [key.sessionId];
    for (const sessionId of subagents) {
      if (await this.engine.delete({ workspace: key.workspace, sessionId }))
        deleted.push(sessionId);
    }
    return deleted;
  }

  /**
   * Erasure (src/store/erase.ts): the sessions chosen by ids, a tag filter
   * or `all`, with their subagents, erased; one audit record written and
   * returned. UNIMPLEMENTED on an engine without erasure (PostgreSQL, for now).
   */
  async erase(input: EraseInput): Promise<ErasureRecord> {
    const record = await eraseSessions(this.engine, input, this.now());
    // Erasing a session revokes its share links.
    await this.shares.revokeSessions(record.workspace, record.sessionIds);
    return record;
  }

  /**
   * What a session cost (GetUsage, store/usage.ts): its tree, current path,
   * branches and subagents, priced with the store's price table unless
   * `opts.prices` says otherwise.
   */
  usage(
    workspace: string | undefined,
    ref: string,
    opts: UsageOptions = {},
  ): Promise<GetUsageResponse> {
    return sessionUsage(this, workspace, ref, { prices: this.prices, ...opts });
  }

  /** The erasure audit records of a workspace, oldest first. */
  erasures(workspace: string): Promise<ErasureRecord[]> {
    return readErasures(this.engine, workspace);
  }

  /**
   * Forks a session at an entry (id or label; default the current leaf): a
   * new top-level session whose SessionInfo records forked_from, followed by
   * copies of the path's entries (ids kept, re-parented onto the new root).
   * The source is untouched.
   */
  async fork(
    workspaceIn: string | undefined,
    ref: string,
    input: ForkInput = {},
  ): Promise<SessionMeta> {
    const source = await this.resolve(workspaceIn, ref);
    return this.withSessionId(input.sessionId, (id, drawn) =>
      this.forkAs(source, input, id, drawn),
    );
  }

  /** `fork` under the id `sessionId` (`drawn`: by this store, see withSessionId). */
  private async forkAs(
    source: SessionKey,
    input: ForkInput,
    sessionId: string,
    drawn: boolean,
  ): Promise<SessionMeta> {
    const log = await this.engine.load(source);
    const target = resolveTarget(log, input.entry || log.leafId);
    const [root, ...copies] = planFork(log, target.id, {
      sessionId,
      title: input.title,
      createdAt: toTimestamp(this.now()),
    });
    storedJson(
      root as Entry,
      this.limits.maxEntryBytes,
      `the SessionInfo of fork ${quote(sessionId)}`,
    );
    const key = { workspace: source.workspace, sessionId };
    try {
      await this.engine.create(key, [root as Entry, ...copies]);
    } catch (err) {
      // A retried fork (same new id, same source and fork point) is idempotent, like create.
      if (drawn || !isSessiondError(err, "ALREADY_EXISTS")) throw err;
      const existing = (await this.engine.load(key)).info;
      const f = existing.forkedFrom;
      // Stryker disable next-line ConditionalExpression,OptionalChaining: planFork always returns the fork's SessionInfo root first; the test only narrows its type
      const wanted = root?.kind.case === "sessionInfo" ? root.kind.value.title : undefined;
      if (
        f?.sessionId !== source.sessionId ||
        f.entryId !== target.id ||
        existing.title !== wanted
      ) {
        throw alreadyExists(
          `session ${quote(sessionId)} already exists in workspace ${quote(key.workspace)}`,
        );
      }
    }
    return this.metaOfKey(key);
  }

  /**
   * Stores a foreign log (an export, a transcript of another tool) as a
   * session, exactly: ids, parents, timestamps, seqs and the root's
   * created_at / forked_from kept, after checking it with the same rules as
   * live appends (see core/import-plan.ts). The id is `sessionId`, else the
   * one recorded in the root, else a new one. A subagent session's parent
   * must exist, and its spawn depth follows the parent's. Importing the same
   * log again is idempotent (created=false): a retried or repeated import
   * succeeds, while another log under the id is ALREADY_EXISTS.
   */
  async import(
    workspaceIn: string | undefined,
    entries: readonly Entry[],
    opts: { sessionId?: string | undefined } = {},
  ): Promise<{ session: SessionMeta; created: boolean }> {
    const workspace = checkWorkspace(workspaceIn);
    const first = entries[0];
    const recorded = first?.kind.case === "sessionInfo" ? first.kind.value.sessionId : "";
    return this.withSessionId(opts.sessionId ?? (recorded || undefined), (sessionId, drawn) =>
      // Large parts become blobs, durable before the log that names them.
      this.blobs.withBlobs(workspace, [...entries], (stored) =>
        this.importLog({ workspace, sessionId }, stored, drawn),
      ),
    );
  }

  /** `import`'s log under `key` (`drawn`: its id by this store, see withSessionId). */
  private async importLog(
    key: SessionKey,
    entries: readonly Entry[],
    drawn: boolean,
  ): Promise<{ session: SessionMeta; created: boolean }> {
    const { workspace, sessionId } = key;
    const planned = planImport(sessionId, entries, this.ctx.plan);
    await this.checkImportedParent(workspace, planned[0] as Entry);
    try {
      await this.engine.create(key, planned);
      return { session: await this.metaOfKey(key), created: true };
    } catch (err) {
      if (drawn || !isSessiondError(err, "ALREADY_EXISTS")) throw err;
      const stored = [...(await this.engine.load(key)).entries()];
      const differs = firstDifference(stored, planned);
      if (differs !== undefined) {
        throw alreadyExists(
          `session ${quote(sessionId)} already exists in workspace ${quote(workspace)} with another log (${differs})`,
        );
      }
      return { session: await this.metaOfKey(key), created: false };
    }
  }

  /** The parent of an imported subagent session exists; its depth is the parent's plus one. */
  private async checkImportedParent(workspace: string, root: Entry): Promise<void> {
    const info = (root.kind as { value: SessionInfo }).value;
    if (info.parentSessionId === undefined) return;
    checkSessionId(info.parentSessionId, "parent_session_id");
    const parent = await this.engine.load({ workspace, sessionId: info.parentSessionId });
    const depth = parent.info.spawnDepth + 1;
    if (info.spawnDepth !== 0 && info.spawnDepth !== depth) {
      throw invalidArgument(
        `imported entry ${quote(root.id)}: spawn_depth ${info.spawnDepth}, but the parent session ${quote(info.parentSessionId)} makes it ${depth}`,
      );
    }
    info.spawnDepth = depth;
  }

  /**
   * Watches the sessions of a workspace: "created", "updated" (entries
   * appended) and "deleted" events after `cursor`, and heartbeats carrying
   * the newest cursor. Resuming with the cursor of the last event seen
   * misses nothing and repeats nothing; a cursor this store cannot resume
   * exactly gets a snapshot ("updated" per session) first. Ends when
   * `signal` aborts or the loop is left.
   */
  watchSessions(options: SessionWatchOptions = {}): AsyncGenerator<SessionWatchEvent> {
    return this.watcher.sessions(options);
  }

  /** Stops the watchers' engine subscriptions, then closes the engine. */
  close(): Promise<void> {
    this.watcher.close();
    return this.engine.close();
  }
}

function sameTags(a: Tags, b: Tags): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && hasTags(a, b);
}

/** Where two logs first differ, in words, or undefined when they are the same. */
function firstDifference(stored: readonly Entry[], wanted: readonly Entry[]): string | undefined {
  for (const [i, e] of wanted.entries()) {
    const s = stored[i];
    if (s === undefined) return `it has ${stored.length} entries, the import ${wanted.length}`;
    if (!equals(EntrySchema, s, e)) return `entry ${quote(e.id)} at seq ${i + 1} differs`;
  }
  if (stored.length > wanted.length) {
    return `it has ${stored.length} entries, the import ${wanted.length}`;
  }
  return undefined;
}

/** Idempotent create: the same parameters (creation time and generated ids aside). */
function sameCreateParams(existing: SessionInfo, wanted: SessionInfo): boolean {
  const struct = (o: JsonObject | undefined) => fromJson(StructSchema, o ?? {});
  return (
    existing.title === wanted.title &&
    existing.cwd === wanted.cwd &&
    existing.parentSessionId === wanted.parentSessionId &&
    existing.agentType === wanted.agentType &&
    equals(StructSchema, struct(existing.metadata), struct(wanted.metadata)) &&
    sameTags(existing.tags, wanted.tags)
  );
}

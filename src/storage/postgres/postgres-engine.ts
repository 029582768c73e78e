import { randomUUID } from "node:crypto";
import postgres from "postgres";
import type { Entry, Withheld } from "../../../gen/sessiond/v1/entry_pb.js";
import { seqPages } from "../../core/erase-plan.js";
import { isSessiondError, SessiondError, unavailable } from "../../core/errors.js";
import type { SessionLog } from "../../core/session-log.js";
import type { PriceTable } from "../../core/usage-sums.js";
import type {
  AppendResult,
  Candidate,
  CandidateQuery,
  DeleteOptions,
  EntryPage,
  EraseResult,
  JobOutcome,
  Planner,
  RootPageQuery,
  RootRecord,
  RootsHint,
  SessionKey,
  SessionRecord,
  StorageEngine,
  StorageEvent,
  StorageListener,
  UsageGroups,
  UsageGroupsQuery,
  UsageSessionSums,
  UsageSumsQuery,
  WithholdPlanner,
  WithholdResult,
  WorkspacePageQuery,
  WorkspaceRecord,
} from "../engine.js";
import { Listeners } from "../listeners.js";
import { type EngineStats, inSpan, NO_OBSERVER, type StorageObserver } from "../observer.js";
import { GroupCommit } from "./append.js";
import { AppendWriter } from "./append-writer.js";
import { PgBlobs } from "./blobs.js";
import { BloomCache } from "./bloom-cache.js";
import { catchUp } from "./catch-up.js";
import type { PgContext } from "./context.js";
import { createSession } from "./create.js";
import { deleteSession, deleteSessions } from "./delete.js";
import { eraseSession, readErasures, recordErasure, vacuumErased } from "./erase.js";
import { dropJobLease, takeJobLease } from "./exclusive-job.js";
import { HeadPoll } from "./head-poll.js";
import {
  idsByRef,
  listIds,
  listRecords,
  listRoots,
  listWorkspaces,
  PageMemo,
  pageRoots,
  sessionExists,
  workspacePage,
} from "./listing.js";
import { Notifier, NotifyListener, parsePayload } from "./notify.js";
import { withholdRows } from "./redact.js";
import { resyncEvents } from "./resync.js";
import { RowRecords } from "./row-records.js";
import { migrate } from "./schema.js";
import { type PgSealOutcome, rewrapSession, type SealHooks, sealSession } from "./seal-sessions.js";
import { type PgEncryption, PgKeys } from "./sealing.js";
import { searchCandidates } from "./search.js";
import { cacheKey, SessionCache } from "./session-cache.js";
import { PgShares } from "./shares.js";
import { usageGroups, usageSums } from "./usage-report.js";

export interface PostgresEngineOptions {
  /** postgres://user:password@host:port/db */
  url: string;
  /**
   * Connections (default 10; the LISTEN connection apart): the pool and the
   * append lanes (append-writer.ts), 2 of them, 1 below a size of 3; at
   * least 2 in all.
   */
  poolSize?: number;
  /** statement_timeout of every connection in ms (default 0: none). */
  statementTimeoutMs?: number;
  /** Seconds to wait for a connection before failing with UNAVAILABLE (default 5). */
  connectTimeoutSec?: number;
  /** Sessions kept parsed in memory (LRU, default 256). Busy sessions are never evicted. */
  cacheSessions?: number;
  /** Rows per INSERT statement of a create or import (default 1000). */
  insertChunk?: number;
  /**
   * Every this many ms, a replica with subscribers reads the heads of the
   * sessions it follows and wakes them where a head moved without a
   * NOTIFY (head-poll.ts), and a replica that appends looks whether any
   * other replica LISTENs (notify.ts, Notifier: no NOTIFY when none does).
   * Default 1000; 0: never (then every append NOTIFYs).
   */
  headPollMs?: number;
  /** Told about NOTIFY lag and group commits (metrics). Default: nothing. */
  observer?: StorageObserver;
  /**
   * VACUUM the tables an erasure rewrote before its audit record is written
   * (erase.ts), so that the old content leaves the table's pages, not only
   * every query's view. Default true; false leaves the dead tuples to
   * autovacuum (a VACUUM scans every index of sessiond_entries: on a very
   * large table, schedule your own).
   */
  vacuumAfterErase?: boolean;
  /**
   * Encryption at rest (sealing.ts): the key provider, and the workspaces
   * whose new sessions are sealed. Without it nothing is sealed, and a
   * sealed session fails its reads with FAILED_PRECONDITION.
   */
  encryption?: PgEncryption;
  /**
   * A cold read of a sealed session that opened at least this many rows
   * one by one (not in its checkpoint) writes a new checkpoint after it
   * (checkpoint.ts). Default 1024; Infinity: this replica writes none.
   */
  checkpointAfter?: number;
}

/**
 * The PostgreSQL engine: several sessiond replicas over one database.
 * See README.md for the schema and the transaction protocol. In short: the
 * database is the truth; each replica caches parsed logs and catches them
 * up by seq (catch-up.ts, session-cache.ts); appends of one session are
 * queued in-process and each drain of the queue is one transaction holding
 * the session row lock (append.ts), so replicas take turns per session.
 *
 * This class owns the lifecycle (pool, schema, LISTEN connection, close)
 * and wires the parts, each a file of its own, to the StorageEngine
 * contract.
 */
export class PostgresEngine implements StorageEngine {
  readonly kind = "postgres";
  /** Blobs in two tables (blobs.ts, migration 9), through the pool like the rest. */
  readonly blobs: PgBlobs;
  readonly shares: PgShares;
  private readonly sql: postgres.Sql;
  /** The optimistic appends' connections, one statement each at a time (append-writer.ts). */
  private readonly lanes: postgres.Sql[];
  private readonly listeners = new Listeners();
  private readonly cache: SessionCache;
  private readonly ctx: PgContext;
  private readonly appends: GroupCommit;
  /** Whether optimistic appends wake other replicas (no NOTIFY while nobody else listens). */
  private readonly notifier: Notifier;
  /** The safety net for wake-ups that were never sent. */
  private readonly headPoll: HeadPoll;
  /** The records of the listing page just read, for the store's `list` of it (listing.ts). */
  private readonly pageMemo = new PageMemo();
  /** The records of listing rows, reused while a row is unchanged (row-records.ts). */
  private readonly rowRecords = new RowRecords();
  private ready: Promise<void> | undefined;
  /** Every database call running (close waits for them). */
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;
  /** The LISTEN connection, opened by the first subscribe. */
  private notifyListener: NotifyListener | undefined;
  private readonly url: string;
  private readonly connectTimeoutSec: number;
  private readonly poolSize: number;
  private readonly vacuumAfterErase: boolean;
  /** Tables this replica's erasures rewrote since its last VACUUM of them (vacuumErased). */
  private readonly erasedTables = new Set<string>();

  constructor(opts: PostgresEngineOptions) {
    this.url = opts.url;
    this.poolSize = opts.poolSize ?? 10;
    this.connectTimeoutSec = opts.connectTimeoutSec ?? 5;
    this.vacuumAfterErase = opts.vacuumAfterErase ?? true;
    this.cache = new SessionCache(opts.cacheSessions ?? 256, (k, head) =>
      this.headPoll.loaded(k, head),
    );
    const options = {
      connect_timeout: this.connectTimeoutSec,
      idle_timeout: 60,
      fetch_types: false,
      onnotice: () => {},
      connection: {
        application_name: "sessiond",
        // PostgreSQL compiles a plan whose estimated cost is high (JIT); every
        // statement here is a short run of index lookups, and a tag-filtered
        // listing, whose tag condition the planner cannot estimate, spent
        // 9 ms compiling a 3 ms query. Off for sessiond's connections only.
        jit: "off",
        ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
      },
    };
    // The pool size counts the append lanes: 2, fewer in a small pool (which keeps one at least).
    const lanes = Math.max(1, Math.min(2, this.poolSize - 1));
    this.sql = postgres(opts.url, { ...options, max: Math.max(1, this.poolSize - lanes) });
    this.lanes = Array.from({ length: lanes }, () => postgres(opts.url, { ...options, max: 1 }));
    this.ctx = {
      sql: this.sql,
      cache: this.cache,
      // This replica's id in NOTIFY payloads: its own wake-ups are already emitted after COMMIT.
      replica: randomUUID(),
      insertChunk: opts.insertChunk ?? 1000,
      db: (what, fn) => this.db(what, fn),
      observer: opts.observer ?? NO_OBSERVER,
      keys: new PgKeys(opts.encryption),
      blooms: new BloomCache(),
      checkpointAfter: opts.checkpointAfter ?? 1024,
    };
    this.blobs = new PgBlobs(
      this.ctx,
      () => this.begin(),
      (tables) => {
        for (const t of tables) this.erasedTables.add(t);
      },
    );
    this.shares = new PgShares(this.ctx);
    this.notifier = new Notifier(
      this.sql,
      this.ctx.replica,
      () => this.notifyListener?.pid,
      opts.headPollMs ?? 1000,
    );
    this.headPoll = new HeadPoll(this.ctx, (e) => this.emit(e), opts.headPollMs ?? 1000);
    this.appends = new GroupCommit(
      this.ctx,
      () => this.init(),
      (e) => this.emit(e),
      (k) => this.headPoll.suspect(k),
      new AppendWriter(this.ctx, this.lanes, (w) =>
        this.notifier.payloadFor({ type: "appended", ...w.key, headSeq: w.rec.headSeq }),
      ),
    );
  }

  /** Connects, applies the schema and returns the engine; refuses a newer schema. */
  static async open(opts: PostgresEngineOptions): Promise<PostgresEngine> {
    const engine = new PostgresEngine(opts);
    try {
      await engine.init();
    } catch (err) {
      await engine.endConnections().catch(() => {});
      throw err;
    }
    return engine;
  }

  /** Applies the schema once; a failure (database down) is retried by the next operation. */
  private init(): Promise<void> {
    if (this.ready === undefined) {
      this.ready = this.db("applying the schema", async () => {
        await migrate(this.sql);
      }).catch((err) => {
        // A newer schema stays refused; anything else is retried next time.
        if (!isSessiondError(err, "FAILED_PRECONDITION")) this.ready = undefined;
        throw err;
      });
    }
    return this.ready;
  }

  private async begin(): Promise<void> {
    if (this.closed) throw unavailable("storage is closed");
    await this.init();
  }

  /**
   * Runs `fn` in a span named after `what` (the PostgreSQL transaction or
   * statement of a trace), turning database and connection failures into
   * UNAVAILABLE.
   */
  private db<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return inSpan(`pg ${what}`, async () => {
      const running = fn();
      this.inflight.add(running);
      try {
        return await running;
      } catch (err) {
        throw translate(what, err);
      } finally {
        this.inflight.delete(running);
      }
    });
  }

  /** UsageReport's per-session sums of some hours (usage-report.ts). */
  async usageSums(
    workspace: string,
    query: UsageSumsQuery,
    prices?: PriceTable,
  ): Promise<UsageSessionSums[]> {
    await this.begin();
    return usageSums(this.ctx, this, workspace, query, prices);
  }

  /** UsageReport over whole hours, from the usage roll-up (usage-report.ts). */
  async usageGroups(
    workspace: string,
    query: UsageGroupsQuery,
    prices: PriceTable,
  ): Promise<UsageGroups | undefined> {
    await this.begin();
    return usageGroups(this.ctx, this, workspace, query, prices);
  }

  /** Answers when the database does (a `SELECT 1` through the pool). */
  async probe(): Promise<void> {
    await this.begin();
    await this.db("probing", () => this.sql`SELECT 1`);
  }

  /**
   * The pool as database calls see it: the driver shows no counts of its
   * own, so the calls in flight fill the pool first and the rest wait.
   */
  stats(): EngineStats {
    const calls = this.inflight.size;
    return {
      cachedSessions: this.cache.size,
      pool: {
        inUse: Math.min(calls, this.poolSize),
        waiting: Math.max(0, calls - this.poolSize),
        size: this.poolSize,
      },
    };
  }

  /** Tells this replica's subscribers; every event goes through here (see HeadPoll). */
  private emit(e: StorageEvent): void {
    this.headPoll.announce(e);
    this.listeners.emit(e);
  }

  async create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
    await this.begin();
    const log = await createSession(this.ctx, key, entries);
    this.emit({ type: "created", ...key, headSeq: log.headSeq });
  }

  append(key: SessionKey, planner: Planner): Promise<AppendResult> {
    if (this.closed) return Promise.reject(unavailable("storage is closed"));
    return this.appends.enqueue(key, planner);
  }

  /** Redaction: one transaction updating the rows, with a new incarnation (redact.ts). */
  async withhold(key: SessionKey, planner: WithholdPlanner): Promise<WithholdResult> {
    await this.begin();
    const r = await withholdRows(this.ctx, key, planner);
    if (r.changed.length > 0) {
      const seqs = r.changed.map((e) => Number(e.seq));
      this.emit({ type: "withheld", ...key, headSeq: r.headSeq, seqs });
    }
    return r;
  }

  /**
   * Erasure (erase.ts): a sealed session's data key destroyed, a session in
   * clear has every entry with content replaced by its ERASED form, each in
   * one transaction; the dead tuples go with the VACUUM before the call's
   * audit record.
   */
  async erase(key: SessionKey, marker: Withheld): Promise<EraseResult> {
    await this.begin();
    const { seqs: changed, table, ...r } = await eraseSession(this.ctx, key, marker);
    if (r.changed > 0) this.erasedTables.add(table);
    for (const seqs of seqPages(changed)) {
      this.emit({ type: "withheld", ...key, headSeq: r.headSeq, seqs });
    }
    return r;
  }

  /**
   * The audit record of an erasure call, after every session of it is
   * erased: first the VACUUM of what the erasures rewrote (unless
   * `vacuumAfterErase` is false), then the row. A failed VACUUM fails the
   * call before its record: retrying it erases nothing more, vacuums and
   * records.
   */
  async recordErasure(workspace: string, record: string): Promise<void> {
    await this.begin();
    if (this.vacuumAfterErase && this.erasedTables.size > 0) {
      const tables = [...this.erasedTables];
      this.erasedTables.clear();
      try {
        await vacuumErased(this.ctx, tables);
      } catch (err) {
        for (const t of tables) this.erasedTables.add(t);
        throw err;
      }
    }
    await recordErasure(this.ctx, workspace, record);
  }

  /**
   * `sessiond seal`: a session in clear sealed under a new data key, in one
   * transaction (seal-sessions.ts). Needs `encryption` (its key provider);
   * the workspace need not be one whose new sessions are sealed.
   */
  async seal(key: SessionKey, hooks?: SealHooks): Promise<PgSealOutcome> {
    await this.begin();
    return sealSession(this.ctx, key, hooks);
  }

  /**
   * `sessiond keys rewrap`: the session's data key wrapped again under the
   * current version of its workspace's key (seal-sessions.ts); undefined
   * for a session in clear, "erased" for one whose key was destroyed.
   */
  async rewrap(key: SessionKey): Promise<{ from: number; to: number } | "erased" | undefined> {
    await this.begin();
    return rewrapSession(this.ctx, key);
  }

  async erasures(workspace: string): Promise<string[]> {
    await this.begin();
    return readErasures(this.ctx, workspace);
  }

  async load(key: SessionKey): Promise<SessionLog> {
    await this.begin();
    return this.cache.withKey(cacheKey(key), () => catchUp(this.ctx, key));
  }

  async read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage> {
    await this.begin();
    return this.cache.withKey(cacheKey(key), async () => {
      const log = await catchUp(this.ctx, key);
      return { entries: log.slice(afterSeq, limit), headSeq: log.headSeq };
    });
  }

  async listIds(workspace: string): Promise<string[]> {
    await this.begin();
    return listIds(this.ctx, workspace);
  }

  /** From the cache when this replica holds the session's log, else one primary-key lookup. */
  async exists(key: SessionKey): Promise<boolean> {
    if (this.cache.get(cacheKey(key)) !== undefined) return true;
    await this.begin();
    return sessionExists(this.ctx, key);
  }

  isOpen(key: SessionKey): boolean {
    return this.cache.get(cacheKey(key)) !== undefined;
  }

  /** A prefix of an id or of its short id, by range scans on indexes (listing.ts). */
  async idsByRef(workspace: string, ref: string, limit: number): Promise<string[]> {
    await this.begin();
    return idsByRef(this.ctx, workspace, ref, limit);
  }

  async listRoots(workspace: string, hint?: RootsHint): Promise<RootRecord[]> {
    await this.begin();
    return listRoots(this.ctx, workspace, hint, this.pageMemo, this.rowRecords);
  }

  /**
   * One listing page by a keyset query on an index (listing.ts), not every
   * root of the workspace; the same statement reads the page's records,
   * which the store's `list` of the page then takes without a query.
   */
  async pageRoots(workspace: string, query: RootPageQuery): Promise<RootRecord[]> {
    await this.begin();
    return pageRoots(this.ctx, workspace, query, this.pageMemo, this.rowRecords);
  }

  async list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]> {
    await this.begin();
    return listRecords(this.ctx, workspace, sessionIds, this.pageMemo);
  }

  /** One query on the trigram index of message payloads (search.ts, migration 5). */
  async searchCandidates(workspace: string, query: CandidateQuery): Promise<Candidate[]> {
    await this.begin();
    return searchCandidates(this.ctx, workspace, query);
  }

  async workspaces(): Promise<string[]> {
    await this.begin();
    return listWorkspaces(this.ctx);
  }

  /** One aggregate over the sessions table (listing.ts). */
  async workspacePage(query: WorkspacePageQuery): Promise<WorkspaceRecord[]> {
    await this.begin();
    return workspacePage(this.ctx, query);
  }

  async delete(key: SessionKey, opts: DeleteOptions = {}): Promise<boolean> {
    await this.begin();
    const removed = await deleteSession(this.ctx, key, opts);
    if (removed) this.emit({ type: "deleted", ...key, headSeq: 0 });
    return removed;
  }

  /** Several sessions in one transaction (delete.ts): a parent with its subagents. */
  async deleteMany(workspace: string, sessionIds: readonly string[]): Promise<string[]> {
    await this.begin();
    const removed = await deleteSessions(this.ctx, workspace, sessionIds);
    for (const sessionId of removed) {
      this.emit({ type: "deleted", workspace, sessionId, headSeq: 0 });
    }
    return removed;
  }

  /** One replica at a time, by a lease row (exclusive-job.ts); a lost release just lets the lease expire. */
  async exclusive<T>(name: string, job: () => Promise<T>): Promise<JobOutcome<T>> {
    await this.begin();
    const { replica } = this.ctx;
    const got = await this.db(`leasing job ${name}`, () => takeJobLease(this.sql, name, replica));
    if (!got) return { ran: false };
    try {
      return { ran: true, value: await job() };
    } finally {
      await dropJobLease(this.sql, name, replica).catch(() => {});
    }
  }

  subscribe(listener: StorageListener): () => void {
    // An engine nobody watches needs no LISTEN connection.
    if (this.notifyListener === undefined && !this.closed) {
      this.notifyListener = new NotifyListener({
        url: this.url,
        connectTimeoutSec: this.connectTimeoutSec,
        onPayload: (payload) => this.onNotify(payload),
        onRelisten: () => this.resync(),
        onListen: () => this.headPoll.hurry(),
      });
      this.notifyListener.start();
      this.headPoll.start();
    }
    return this.listeners.subscribe(listener);
  }

  /** A commit of another replica: wake this replica's subscribers. */
  private onNotify(payload: string): void {
    if (this.closed) return;
    const n = parsePayload(payload);
    if (n === undefined || n.replica === this.ctx.replica) return;
    if (n.sentAt !== undefined) this.ctx.observer.notified((Date.now() - n.sentAt) / 1000);
    // A rewrite elsewhere (an erasure may have destroyed the session's key): no copy kept here.
    if (n.event.type === "withheld" || n.event.type === "deleted") this.ctx.keys.forget(n.event);
    this.emit(n.event);
  }

  /** After a re-LISTEN: an event per cached session, NOTIFYs may have been missed (resync.ts). */
  private async resync(): Promise<void> {
    if (this.closed) return;
    const events = await resyncEvents(this.ctx);
    if (this.closed) return;
    for (const e of events) this.emit(e);
  }

  /** Finishes queued and running operations, then closes the LISTEN connection and the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.cache.busy || this.inflight.size > 0) {
      await Promise.allSettled([...this.cache.tails(), ...this.inflight]);
    }
    this.headPoll.stop();
    this.notifier.stop();
    this.listeners.clear();
    this.cache.clear();
    await this.notifyListener?.end();
    await this.endConnections();
  }

  /**
   * Ends the pool and the append lanes at once: nothing of ours is running
   * by then. A graceful end() alone can hang after a connection was reset
   * by the server (porsager/postgres#1097, #1130): the timeout ends it anyway.
   */
  private async endConnections(): Promise<void> {
    await Promise.all([this.sql, ...this.lanes].map((s) => s.end({ timeout: 0 })));
  }
}

/** Database and connection failures become UNAVAILABLE naming the operation; ours pass. */
function translate(what: string, err: unknown): unknown {
  if (err instanceof SessiondError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return unavailable(`postgres: ${what} failed: ${message}`, err);
}

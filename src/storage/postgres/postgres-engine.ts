import { randomUUID } from "node:crypto";
import { toJsonString } from "@bufbuild/protobuf";
import postgres from "postgres";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  alreadyExists,
  dataLoss,
  invalidArgument,
  isSessiondError,
  notFound,
  SessiondError,
  unavailable,
} from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type {
  AppendResult,
  EntryPage,
  Planner,
  RootRecord,
  SessionKey,
  SessionRecord,
  StorageEngine,
  StorageEvent,
  StorageListener,
} from "../engine.js";
import { decodeEntry } from "../jsonl/fast-decode.js";
import { Listeners } from "../listeners.js";
import { recordOf, rootRecordOfEntry } from "../record.js";
import { CHANNEL, NotifyListener, notifyPayload, parsePayload } from "./notify.js";
import { migrate } from "./schema.js";

/** A query runner: the pool or a transaction. */
type Q = postgres.ISql;

export interface PostgresEngineOptions {
  /** postgres://user:password@host:port/db */
  url: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** statement_timeout of every connection in ms (default 0: none). */
  statementTimeoutMs?: number;
  /** Seconds to wait for a connection before failing with UNAVAILABLE (default 5). */
  connectTimeoutSec?: number;
  /** Sessions kept parsed in memory (LRU, default 256). Busy sessions are never evicted. */
  cacheSessions?: number;
  /** Rows per INSERT statement (default 1000). */
  insertChunk?: number;
}

/** One cached session: the log as of `incarnation` (the row's identity, new after delete + create). */
interface Cached {
  incarnation: string;
  log: SessionLog;
}

interface PendingAppend {
  planner: Planner;
  resolve: (r: AppendResult) => void;
  reject: (err: unknown) => void;
}

interface EntryRow {
  workspace: string;
  session_id: string;
  seq: number;
  id: string;
  parent_id: string | null;
  kind: string | null;
  payload: string;
}

const ENTRY_COLUMNS = [
  "workspace",
  "session_id",
  "seq",
  "id",
  "parent_id",
  "kind",
  "payload",
] as const;

function cacheKey(k: SessionKey): string {
  return `${k.workspace}\n${k.sessionId}`;
}

function missing(k: SessionKey): SessiondError {
  return notFound(`session ${quote(k.sessionId)} not found in workspace ${quote(k.workspace)}`);
}

/** Decodes a stored payload; DATA_LOSS naming the row when it is not a valid entry. */
function decodePayload(k: SessionKey, seq: number, payload: string): Entry {
  try {
    return decodeEntry(JSON.parse(payload), { ignoreUnknownFields: true });
  } catch (err) {
    throw dataLoss(
      `session ${quote(k.sessionId)} in workspace ${quote(k.workspace)} is corrupt at seq ${seq}: payload is not a valid entry (${err instanceof Error ? err.message : String(err)})`,
      err,
    );
  }
}

function jsonOf(e: Entry): string {
  try {
    return toJsonString(EntrySchema, e);
  } catch (err) {
    throw invalidArgument(
      `entry ${quote(e.id)} cannot be stored: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * The PostgreSQL engine: several sessiond replicas over one database.
 * See README.md for the schema and the transaction protocol. In short: the
 * database is the truth; each replica caches parsed logs and catches them
 * up by seq; appends of one session are queued in-process and each drain
 * of the queue is one transaction holding the session row lock
 * (`SELECT ... FOR UPDATE`), so replicas take turns per session.
 */
export class PostgresEngine implements StorageEngine {
  readonly kind = "postgres";
  private readonly sql: postgres.Sql;
  private readonly listeners = new Listeners();
  private readonly cache = new Map<string, Cached>();
  /** Per session: the tail of the chain of operations that use its cached log. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Per session: appends waiting for the next drain. */
  private readonly pending = new Map<string, PendingAppend[]>();
  private readonly cacheSessions: number;
  private readonly insertChunk: number;
  private ready: Promise<void> | undefined;
  /** Every database call running (close waits for them). */
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;
  /** This replica's id in NOTIFY payloads: its own wake-ups are already emitted after COMMIT. */
  private readonly replica = randomUUID();
  /** The LISTEN connection, opened by the first subscribe. */
  private notifyListener: NotifyListener | undefined;
  private readonly url: string;
  private readonly connectTimeoutSec: number;

  constructor(opts: PostgresEngineOptions) {
    this.url = opts.url;
    this.connectTimeoutSec = opts.connectTimeoutSec ?? 5;
    this.cacheSessions = opts.cacheSessions ?? 256;
    this.insertChunk = opts.insertChunk ?? 1000;
    this.sql = postgres(opts.url, {
      max: opts.poolSize ?? 10,
      connect_timeout: this.connectTimeoutSec,
      idle_timeout: 60,
      fetch_types: false,
      onnotice: () => {},
      connection: {
        application_name: "sessiond",
        ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
      },
    });
  }

  /** Connects, applies the schema and returns the engine; refuses a newer schema. */
  static async open(opts: PostgresEngineOptions): Promise<PostgresEngine> {
    const engine = new PostgresEngine(opts);
    try {
      await engine.init();
    } catch (err) {
      await engine.sql.end({ timeout: 1 }).catch(() => {});
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

  /** Runs `fn`, turning database and connection failures into UNAVAILABLE. */
  private async db<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const running = fn();
    this.inflight.add(running);
    try {
      return await running;
    } catch (err) {
      throw this.translate(what, err);
    } finally {
      this.inflight.delete(running);
    }
  }

  private translate(what: string, err: unknown): unknown {
    if (err instanceof SessiondError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return unavailable(`postgres: ${what} failed: ${message}`, err);
  }

  /** Serialises the operations on one session's cached log in this process. */
  private withKey<T>(k: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(k) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = prev.then(() => mine);
    this.chains.set(k, tail);
    return prev.then(async () => {
      try {
        return await fn();
      } finally {
        release();
        if (this.chains.get(k) === tail) this.chains.delete(k);
      }
    });
  }

  private remember(k: string, c: Cached): void {
    this.cache.delete(k);
    this.cache.set(k, c);
    if (this.cache.size <= this.cacheSessions) return;
    for (const victim of this.cache.keys()) {
      if (this.cache.size <= this.cacheSessions) break;
      if (victim !== k && !this.chains.has(victim)) this.cache.delete(victim);
    }
  }

  /** Applies stored rows (seq order) to `log`; DATA_LOSS when they break the log. */
  private applyRows(
    key: SessionKey,
    log: SessionLog,
    rows: readonly { seq: number; payload: string }[],
  ): void {
    for (const r of rows) log.apply(decodePayload(key, r.seq, r.payload));
  }

  /**
   * The session's log caught up with the tables, outside a transaction:
   * one statement (one snapshot) reads the session row and the rows past
   * the cached head. Call under withKey.
   */
  private async catchUp(key: SessionKey): Promise<SessionLog> {
    const k = cacheKey(key);
    let cached = this.cache.get(k);
    for (let attempt = 0; ; attempt++) {
      const after = cached?.log.headSeq ?? 0;
      const rows = await this.db(
        "reading a session",
        () => this.sql<
          { incarnation: string; head_seq: number; seq: number | null; payload: string | null }[]
        >`
        SELECT s.incarnation, s.head_seq, e.seq, e.payload
        FROM sessiond_sessions s
        LEFT JOIN sessiond_entries e
          ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq > ${after}
        WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}
        ORDER BY e.seq`,
      );
      const first = rows[0];
      if (first === undefined) {
        this.cache.delete(k);
        throw missing(key);
      }
      if (cached !== undefined && cached.incarnation !== first.incarnation) {
        // Deleted and created again (by another replica): start over.
        this.cache.delete(k);
        cached = undefined;
        if (attempt === 0) continue;
      }
      const c: Cached = cached ?? {
        incarnation: first.incarnation,
        log: new SessionLog(key.sessionId),
      };
      const fresh = rows.filter((r) => r.seq !== null) as { seq: number; payload: string }[];
      try {
        this.applyRows(key, c.log, fresh);
        if (c.log.headSeq !== first.head_seq) {
          throw dataLoss(
            `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}: head seq ${first.head_seq} but ${c.log.headSeq} entries stored`,
          );
        }
      } catch (err) {
        this.cache.delete(k);
        throw err;
      }
      this.remember(k, c);
      return c.log;
    }
  }

  async create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
    await this.begin();
    const log = SessionLog.from(key.sessionId, entries);
    const json = entries.map(jsonOf);
    const rec = recordOf(key.workspace, log);
    const info = rootRecordOfEntry(key.sessionId, log.root);
    const k = cacheKey(key);
    await this.withKey(k, async () => {
      const incarnation = await this.db("creating a session", () =>
        this.sql.begin(async (tx) => {
          const inserted = await tx<{ incarnation: string }[]>`
            INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, parent_session_id,
              head_seq, leaf_id, message_count, title, updated_at_ms)
            VALUES (${key.workspace}, ${key.sessionId}, ${info.createdAtMs}, ${info.parentSessionId},
              ${rec.headSeq}, ${rec.leafId}, ${rec.messageCount}, ${rec.title ?? null}, ${rec.updatedAtMs})
            ON CONFLICT DO NOTHING
            RETURNING incarnation`;
          const row = inserted[0];
          if (row === undefined) {
            throw alreadyExists(
              `session ${quote(key.sessionId)} already exists in workspace ${quote(key.workspace)}`,
            );
          }
          await this.insertEntries(tx, key, entries, json);
          await this.notify(tx, { type: "created", ...key, headSeq: log.headSeq });
          return row.incarnation;
        }),
      );
      this.remember(k, { incarnation, log });
    });
    this.listeners.emit({ type: "created", ...key, headSeq: log.headSeq });
  }

  private async insertEntries(
    tx: Q,
    key: SessionKey,
    entries: readonly Entry[],
    json: readonly string[],
  ): Promise<void> {
    for (let start = 0; start < entries.length; start += this.insertChunk) {
      const rows: EntryRow[] = [];
      const end = Math.min(entries.length, start + this.insertChunk);
      for (let i = start; i < end; i++) {
        const e = entries[i] as Entry;
        rows.push({
          workspace: key.workspace,
          session_id: key.sessionId,
          seq: Number(e.seq),
          id: e.id,
          parent_id: e.parentId ?? null,
          kind: e.kind.case ?? null,
          payload: json[i] as string,
        });
      }
      await tx`INSERT INTO sessiond_entries ${tx(rows, ...ENTRY_COLUMNS)}`;
    }
  }

  append(key: SessionKey, planner: Planner): Promise<AppendResult> {
    if (this.closed) return Promise.reject(unavailable("storage is closed"));
    const k = cacheKey(key);
    return new Promise<AppendResult>((resolve, reject) => {
      let queue = this.pending.get(k);
      if (queue === undefined) {
        queue = [];
        this.pending.set(k, queue);
        // The first of a batch schedules the drain; later ones join its queue.
        this.withKey(k, () => this.drain(key)).catch(() => {});
      }
      queue.push({ planner, resolve, reject });
    });
  }

  /**
   * Group commit: every append queued for the session runs in one
   * transaction under the session's row lock, each planner seeing the
   * previous ones applied. Resolves only after COMMIT.
   */
  private async drain(key: SessionKey): Promise<void> {
    const k = cacheKey(key);
    const batch = this.pending.get(k) ?? [];
    this.pending.delete(k);
    if (batch.length === 0) return;
    const results = new Map<PendingAppend, AppendResult>();
    const errors = new Map<PendingAppend, unknown>();
    let wrote = false;
    try {
      await this.init();
      await this.db("appending", () =>
        this.sql.begin(async (tx) => {
          results.clear();
          errors.clear();
          wrote = false;
          const c = await this.lockAndCatchUp(tx, key);
          const toWrite: Entry[] = [];
          const json: string[] = [];
          for (const p of batch) {
            try {
              const plan = p.planner(c.log);
              const planJson = plan.json ?? plan.write.map(jsonOf);
              c.log.applyAll(plan.write);
              toWrite.push(...plan.write);
              json.push(...planJson);
              results.set(p, { ...plan, headSeq: c.log.headSeq, leafId: c.log.leafId });
            } catch (err) {
              errors.set(p, err);
            }
          }
          if (toWrite.length === 0) return;
          await this.insertEntries(tx, key, toWrite, json);
          const rec = recordOf(key.workspace, c.log);
          await tx`
            UPDATE sessiond_sessions SET head_seq = ${rec.headSeq}, leaf_id = ${rec.leafId},
              message_count = ${rec.messageCount}, title = ${rec.title ?? null},
              updated_at_ms = ${rec.updatedAtMs}
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
          await this.notify(tx, { type: "appended", ...key, headSeq: rec.headSeq });
          wrote = true;
        }),
      );
    } catch (err) {
      // Outcome unknown (or nothing written): the tables are the truth, reload next time.
      this.cache.delete(k);
      const failure =
        err instanceof SessiondError && err.code !== "UNAVAILABLE"
          ? err
          : unavailable(
              `append to session ${quote(key.sessionId)} failed, outcome unknown (retry is safe): ${err instanceof Error ? err.message : String(err)}`,
              err,
            );
      for (const p of batch) p.reject(errors.get(p) ?? failure);
      return;
    }
    const head = this.cache.get(k)?.log.headSeq ?? 0;
    for (const p of batch) {
      const r = results.get(p);
      if (r !== undefined) p.resolve(r);
      else p.reject(errors.get(p));
    }
    if (wrote) this.listeners.emit({ type: "appended", ...key, headSeq: head });
  }

  /** Locks the session row and brings the cached log up to the stored head. */
  private async lockAndCatchUp(tx: Q, key: SessionKey): Promise<Cached> {
    const k = cacheKey(key);
    const [row] = await tx<{ incarnation: string; head_seq: number }[]>`
      SELECT incarnation, head_seq FROM sessiond_sessions
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
      FOR UPDATE`;
    if (row === undefined) {
      this.cache.delete(k);
      throw missing(key);
    }
    let c = this.cache.get(k);
    if (c === undefined || c.incarnation !== row.incarnation) {
      c = { incarnation: row.incarnation, log: new SessionLog(key.sessionId) };
    }
    // The cache is dropped on any failure of the transaction (see drain).
    this.remember(k, c);
    if (c.log.headSeq < row.head_seq) {
      const rows = await tx<{ seq: number; payload: string }[]>`
        SELECT seq, payload FROM sessiond_entries
        WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId} AND seq > ${c.log.headSeq}
        ORDER BY seq`;
      this.applyRows(key, c.log, rows);
    }
    if (c.log.headSeq !== row.head_seq) {
      throw dataLoss(
        `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}: head seq ${row.head_seq} but ${c.log.headSeq} entries stored`,
      );
    }
    return c;
  }

  async load(key: SessionKey): Promise<SessionLog> {
    await this.begin();
    return this.withKey(cacheKey(key), () => this.catchUp(key));
  }

  async read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage> {
    await this.begin();
    return this.withKey(cacheKey(key), async () => {
      const log = await this.catchUp(key);
      return { entries: log.slice(afterSeq, limit), headSeq: log.headSeq };
    });
  }

  async listIds(workspace: string): Promise<string[]> {
    await this.begin();
    const rows = await this.db(
      "listing sessions",
      () =>
        this.sql<{ session_id: string }[]>`
        SELECT session_id FROM sessiond_sessions WHERE workspace = ${workspace}`,
    );
    return rows.map((r) => r.session_id);
  }

  async listRoots(workspace: string): Promise<RootRecord[]> {
    await this.begin();
    const rows = await this.db(
      "listing sessions",
      () =>
        this.sql<{ session_id: string; payload: string }[]>`
        SELECT s.session_id, e.payload
        FROM sessiond_sessions s
        JOIN sessiond_entries e
          ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
        WHERE s.workspace = ${workspace}`,
    );
    return rows.map((r) => {
      try {
        return rootRecordOfEntry(
          r.session_id,
          decodePayload({ workspace, sessionId: r.session_id }, 1, r.payload),
        );
      } catch (err) {
        return {
          sessionId: r.session_id,
          root: undefined,
          createdAtMs: 0,
          parentSessionId: "",
          health: "corrupt",
          healthDetail: err instanceof Error ? err.message : String(err),
        };
      }
    });
  }

  async list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]> {
    await this.begin();
    if (sessionIds !== undefined && sessionIds.length === 0) return [];
    const sql = this.sql;
    const rows = await this.db(
      "listing sessions",
      () =>
        sql<
          {
            session_id: string;
            head_seq: number;
            leaf_id: string;
            message_count: number;
            title: string | null;
            updated_at_ms: string;
            payload: string;
          }[]
        >`
        SELECT s.session_id, s.head_seq, s.leaf_id, s.message_count, s.title, s.updated_at_ms,
          e.payload
        FROM sessiond_sessions s
        JOIN sessiond_entries e
          ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
        WHERE s.workspace = ${workspace}
        ${sessionIds === undefined ? sql`` : sql`AND s.session_id IN ${sql([...sessionIds])}`}`,
    );
    return rows.map((r): SessionRecord => {
      let root: Entry | undefined;
      let healthDetail = "";
      try {
        root = decodePayload({ workspace, sessionId: r.session_id }, 1, r.payload);
      } catch (err) {
        healthDetail = err instanceof Error ? err.message : String(err);
      }
      return {
        workspace,
        sessionId: r.session_id,
        root,
        title: r.title ?? undefined,
        headSeq: r.head_seq,
        leafId: r.leaf_id,
        messageCount: r.message_count,
        updatedAtMs: Number(r.updated_at_ms),
        health: root === undefined ? "corrupt" : "ok",
        healthDetail,
      };
    });
  }

  async workspaces(): Promise<string[]> {
    await this.begin();
    const rows = await this.db(
      "listing workspaces",
      () => this.sql<{ workspace: string }[]>`SELECT DISTINCT workspace FROM sessiond_sessions`,
    );
    return rows.map((r) => r.workspace);
  }

  async delete(key: SessionKey): Promise<boolean> {
    await this.begin();
    const k = cacheKey(key);
    const removed = await this.withKey(k, async () => {
      const rows = await this.db(
        "deleting a session",
        () => this.sql`
          WITH d AS (
            DELETE FROM sessiond_sessions
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
            RETURNING 1)
          SELECT pg_notify(${CHANNEL}, ${notifyPayload(this.replica, { type: "deleted", ...key, headSeq: 0 })})
          FROM d`,
      );
      this.cache.delete(k);
      return rows.length > 0;
    });
    if (removed) this.listeners.emit({ type: "deleted", ...key, headSeq: 0 });
    return removed;
  }

  /**
   * Queues the wake-up for other replicas in the transaction `tx`: NOTIFY
   * is delivered on COMMIT only, so it never precedes durable data.
   */
  private async notify(tx: Q, event: StorageEvent): Promise<void> {
    await tx`SELECT pg_notify(${CHANNEL}, ${notifyPayload(this.replica, event)})`;
  }

  subscribe(listener: StorageListener): () => void {
    // An engine nobody watches needs no LISTEN connection.
    if (this.notifyListener === undefined && !this.closed) {
      this.notifyListener = new NotifyListener({
        url: this.url,
        connectTimeoutSec: this.connectTimeoutSec,
        onPayload: (payload) => this.onNotify(payload),
        onRelisten: () => this.resync(),
      });
      this.notifyListener.start();
    }
    return this.listeners.subscribe(listener);
  }

  /** A commit of another replica: wake this replica's subscribers. */
  private onNotify(payload: string): void {
    if (this.closed) return;
    const n = parsePayload(payload);
    if (n === undefined || n.replica === this.replica) return;
    this.listeners.emit(n.event);
  }

  /**
   * After each re-LISTEN (a reconnect): NOTIFYs sent while the connection
   * was down are lost, so every cached session gets an event with its head
   * seq as stored NOW (read after LISTEN, so no commit falls between the
   * two): "appended" when it exists, "deleted" when it is gone. The cached
   * head would not do: a watcher already at the cached head would read
   * nothing. Watched sessions are read on every event, so they are cached.
   */
  private async resync(): Promise<void> {
    if (this.closed || this.cache.size === 0) return;
    const keys = [...this.cache.keys()].map((k) => {
      const [w, s] = k.split("\n");
      return { w, s };
    });
    const rows = await this.db(
      "resyncing watches",
      () =>
        this.sql<{ workspace: string; session_id: string; head_seq: number }[]>`
        SELECT s.workspace, s.session_id, s.head_seq
        FROM json_to_recordset(${JSON.stringify(keys)}::text::json) AS k(w text, s text)
        JOIN sessiond_sessions s ON s.workspace = k.w AND s.session_id = k.s`,
    );
    if (this.closed) return;
    const found = new Set<string>();
    for (const r of rows) {
      const key = { workspace: r.workspace, sessionId: r.session_id };
      found.add(cacheKey(key));
      this.listeners.emit({ type: "appended", ...key, headSeq: r.head_seq });
    }
    for (const { w, s } of keys) {
      const key = { workspace: w as string, sessionId: s as string };
      if (!found.has(cacheKey(key))) this.listeners.emit({ type: "deleted", ...key, headSeq: 0 });
    }
  }

  /** Finishes queued and running operations, then closes the LISTEN connection and the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.chains.size > 0 || this.inflight.size > 0) {
      await Promise.allSettled([...this.chains.values(), ...this.inflight]);
    }
    this.listeners.clear();
    this.cache.clear();
    await this.notifyListener?.end();
    // Nothing of ours is running now, so the connections can go at once. A
    // graceful end() alone can hang after a connection was reset by the
    // server (porsager/postgres#1097, #1130): the timeout ends it anyway.
    await this.sql.end({ timeout: 0 });
  }
}

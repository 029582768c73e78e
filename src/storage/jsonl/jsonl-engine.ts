import * as path from "node:path";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { alreadyExists, isSessiondError, notFound, unavailable } from "../../core/errors.js";
import { quote, WORKSPACE_PATTERN } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type {
  AppendResult,
  EntryPage,
  Planner,
  SessionKey,
  SessionRecord,
  StorageEngine,
  StorageListener,
} from "../engine.js";
import { Listeners } from "../listeners.js";
import { recordOf } from "../record.js";
import { createExclusive, ensureDir, removeStaleTemps } from "./create-file.js";
import { errnoCode, type FsOps, ioError, nodeFs } from "./fs-ops.js";
import { corruptRecord, RecordMemo } from "./listing.js";
import { sessionIdOf, sessionPath, sessionsDir } from "./paths.js";
import { encodeRecords } from "./record.js";
import { SessionCache } from "./session-cache.js";
import { SessionFile, type SessionFileOptions } from "./session-file.js";

export interface JsonlEngineOptions {
  /** Root of the data: `<dataDir>/<workspace>/sessions/<id>.jsonl`. */
  dataDir: string;
  /** Parsed sessions kept in memory (LRU; busy ones are never evicted). Default 256. */
  cacheSessions?: number;
  /** How long a writer keeps the cross-process lock after its last append. Default 25 ms. */
  leaseIdleMs?: number;
  /** Age after which another process may break a lock left by a dead one. Default 10 s. */
  lockStaleMs?: number;
  /** The file system (tests inject faults or count calls here). Default: node:fs. */
  fs?: FsOps;
  /**
   * Negative-control switches for tests ONLY: each one turns a durability
   * rule off so that the test proving the rule can be shown to fail without
   * it. Never set them in production.
   */
  debug?: {
    /** Skip every fsync/fdatasync (power-loss tests must then lose acked data). */
    noFsync?: boolean;
    /** Append after a torn tail without repairing it (yields mid-file corruption). */
    noTailRepair?: boolean;
    /** Take no cross-process lock (two processes then corrupt each other's appends). */
    noCrossProcessLock?: boolean;
  };
}

/**
 * The embedded storage engine: one JSONL file per session (see README.md
 * in this folder for the format, the recovery rules and the lock
 * protocol). This class owns the layout and the cache; each session's
 * reading, writing and locking lives in SessionFile.
 */
export class JsonlEngine implements StorageEngine {
  readonly kind = "jsonl";
  private readonly dataDir: string;
  private readonly ops: FsOps;
  private readonly fileOptions: Omit<SessionFileOptions, "onAppended">;
  private readonly cache: SessionCache;
  private readonly listeners = new Listeners();
  private readonly prepared = new Map<string, Promise<void>>();
  private readonly memo = new RecordMemo();
  private closed = false;

  constructor(o: JsonlEngineOptions) {
    this.dataDir = path.resolve(o.dataDir);
    this.ops = o.fs ?? nodeFs;
    this.cache = new SessionCache(Math.max(1, o.cacheSessions ?? 256));
    this.fileOptions = {
      ops: this.ops,
      staleMs: o.lockStaleMs ?? 10_000,
      leaseIdleMs: o.leaseIdleMs ?? 25,
      lockEnabled: !o.debug?.noCrossProcessLock,
      noFsync: o.debug?.noFsync === true,
      noTailRepair: o.debug?.noTailRepair === true,
    };
  }

  async create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
    this.checkOpen();
    const log = SessionLog.from(key.sessionId, entries);
    const subagent = Boolean(log.info.parentSessionId);
    const file = sessionPath(this.dataDir, key.workspace, key.sessionId, subagent);
    const sync = !this.fileOptions.noFsync;
    const content = encodeRecords(entries);
    try {
      await this.prepare(key.workspace);
      if ((await this.locate(key)) !== undefined) {
        throw alreadyExists(`session ${quote(key.sessionId)} already exists`);
      }
      await ensureDir(this.ops, path.dirname(file), sync);
      await createExclusive(this.ops, file, key.sessionId, content, sync);
      const session = this.newSession(key, file);
      session.seed(log, content, await this.ops.stat(file));
      this.cache.put(key, session);
    } catch (err) {
      throw ioError(err, `creating session ${quote(key.sessionId)}`);
    }
    this.listeners.emit({ type: "created", ...key, headSeq: log.headSeq });
  }

  async append(key: SessionKey, plan: Planner): Promise<AppendResult> {
    return this.use(key, (s) => s.append(plan));
  }

  async load(key: SessionKey): Promise<SessionLog> {
    return this.use(key, (s) => s.load());
  }

  async read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage> {
    const log = await this.load(key);
    return { entries: log.slice(afterSeq, limit), headSeq: log.headSeq };
  }

  async listIds(workspace: string): Promise<string[]> {
    this.checkOpen();
    await this.prepare(workspace);
    const ids = new Set<string>();
    for (const dir of [false, true].map((sub) => sessionsDir(this.dataDir, workspace, sub))) {
      for (const name of await this.readdirOrEmpty(dir)) {
        const id = sessionIdOf(name);
        if (id !== undefined) ids.add(id);
      }
    }
    return [...ids];
  }

  async list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]> {
    this.checkOpen();
    const ids = sessionIds ?? (await this.listIds(workspace));
    const out: SessionRecord[] = [];
    for (const sessionId of ids) {
      const record = await this.recordOf({ workspace, sessionId });
      if (record !== undefined) out.push(record);
    }
    return out;
  }

  async workspaces(): Promise<string[]> {
    this.checkOpen();
    const out: string[] = [];
    for (const name of await this.readdirOrEmpty(this.dataDir)) {
      if (WORKSPACE_PATTERN.test(name) && (await this.listIds(name)).length > 0) out.push(name);
    }
    return out;
  }

  async delete(key: SessionKey): Promise<boolean> {
    this.checkOpen();
    let removed: boolean;
    try {
      removed = await this.use(key, (s) => s.remove());
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND")) return false;
      throw err;
    }
    const session = this.cache.drop(key);
    if (session !== undefined) this.memo.delete(session.path);
    if (removed) this.listeners.emit({ type: "deleted", ...key, headSeq: 0 });
    return removed;
  }

  subscribe(listener: StorageListener): () => void {
    return this.listeners.subscribe(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.cache.closeAll();
    this.listeners.clear();
  }

  /**
   * Runs `fn` on the session's SessionFile; forgets it when the file is
   * gone. Nothing is awaited between taking the session from the cache and
   * calling `fn`, so the cache cannot evict it in between (`fn` makes it
   * busy synchronously).
   */
  private async use<T>(key: SessionKey, fn: (s: SessionFile) => Promise<T>): Promise<T> {
    this.checkOpen();
    let session = this.cache.touch(key);
    if (session === undefined) {
      const file = await this.locate(key);
      session = this.cache.touch(key);
      if (session === undefined) {
        if (file === undefined) {
          throw notFound(
            `session ${quote(key.sessionId)} not found in workspace ${quote(key.workspace)}`,
          );
        }
        session = this.newSession(key, file);
        this.cache.put(key, session);
      }
    }
    try {
      return await fn(session);
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND")) this.cache.drop(key, session);
      throw err;
    }
  }

  private newSession(key: SessionKey, file: string): SessionFile {
    return new SessionFile(key, file, {
      ...this.fileOptions,
      onAppended: (headSeq) => this.listeners.emit({ type: "appended", ...key, headSeq }),
    });
  }

  /** Path of an existing session file (top-level first, then subagents). */
  private async locate(key: SessionKey): Promise<string | undefined> {
    for (const subagent of [false, true]) {
      const file = sessionPath(this.dataDir, key.workspace, key.sessionId, subagent);
      try {
        await this.ops.stat(file);
        return file;
      } catch (err) {
        if (errnoCode(err) !== "ENOENT") throw ioError(err, "locating a session");
      }
    }
    return undefined;
  }

  /** The listing record of one session (undefined when it does not exist). */
  private async recordOf(key: SessionKey): Promise<SessionRecord | undefined> {
    const cached = this.cache.get(key);
    const file = cached?.path ?? (await this.locate(key));
    if (file === undefined) return undefined;
    const session = cached ?? this.newSession(key, file);
    let sig: string | undefined;
    try {
      if (cached === undefined) {
        const memo = await this.memo.lookup(this.ops, file);
        if (memo.record !== undefined) return memo.record;
        sig = memo.sig;
      }
      const record = recordOf(key.workspace, await session.load());
      if (sig !== undefined) this.memo.store(file, sig, record);
      return record;
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND") || errnoCode(err) === "ENOENT") return undefined;
      if (!isSessiondError(err, "DATA_LOSS")) throw ioError(err, `listing ${quote(key.sessionId)}`);
      const record = corruptRecord(key, session.prefix, err.message);
      if (sig !== undefined) this.memo.store(file, sig, record);
      return record;
    } finally {
      if (cached === undefined) await session.close();
    }
  }

  /** Removes temp files left by crashed creates, once per workspace and engine. */
  private prepare(workspace: string): Promise<void> {
    let done = this.prepared.get(workspace);
    if (done === undefined) {
      done = (async () => {
        for (const sub of [false, true]) {
          await removeStaleTemps(this.ops, sessionsDir(this.dataDir, workspace, sub));
        }
      })();
      this.prepared.set(workspace, done);
      done.catch(() => this.prepared.delete(workspace));
    }
    return done;
  }

  private async readdirOrEmpty(dir: string): Promise<string[]> {
    try {
      return await this.ops.readdir(dir);
    } catch (err) {
      if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return [];
      throw ioError(err, "listing sessions");
    }
  }

  private checkOpen(): void {
    if (this.closed) throw unavailable("storage is closed");
  }
}

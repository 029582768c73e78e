import { type Stats, statSync } from "node:fs";
import * as path from "node:path";
import type { Entry, Withheld } from "../../../gen/sessiond/v1/entry_pb.js";
import { planErase } from "../../core/erase-plan.js";
import { alreadyExists, isSessiondError, notFound, unavailable } from "../../core/errors.js";
import { quote, WORKSPACE_PATTERN } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import { tagTest } from "../../core/tags.js";
import type { PriceTable } from "../../core/usage-sums.js";
import type {
  AppendResult,
  DeleteOptions,
  EntryPage,
  EntryScan,
  EntryScanEnd,
  EraseResult,
  Planner,
  RootRecord,
  RootsHint,
  SessionKey,
  SessionRecord,
  StorageEngine,
  StorageListener,
  UsageGroups,
  UsageGroupsQuery,
  WithholdPlanner,
  WithholdResult,
  WorkspacePageQuery,
  WorkspaceRecord,
} from "../engine.js";
import { Listeners } from "../listeners.js";
import { type EngineStats, NO_OBSERVER, type StorageObserver } from "../observer.js";
import { recordOf } from "../session-record.js";
import { groupUsage } from "../usage-groups.js";
import { BlobFiles } from "./blob-files.js";
import {
  createExclusive,
  ensureDir,
  makeNameDurable,
  removeStaleTemps,
  TEMP_GRACE_MS,
} from "./create-file.js";
import { checkDataDir, type DataDirNeed } from "./data-dir.js";
import { ErasureAudit } from "./erasure-audit.js";
import { FileChanges } from "./file-changes.js";
import { type FileKey, keyOf } from "./file-identity.js";
import { ioError } from "./fs-errors.js";
import { errnoCode, type FsOps, nodeFs } from "./fs-ops.js";
import { InlineSync } from "./inline-sync.js";
import { corruptRecord, MAX_REMEMBERED, RecordMemo } from "./listing.js";
import { ListingIndex } from "./listing-index.js";
import { ListingIndexFile } from "./listing-index-file.js";
import { observedFs } from "./observed-fs.js";
import { isTempName, sessionPath, sessionsDir } from "./paths.js";
import { encodeFileContent } from "./record.js";
import { RootIndex } from "./root-index.js";
import { SearchFilters } from "./search-filter.js";
import { SessionCache } from "./session-cache.js";
import { SessionFile, type SessionFileOptions } from "./session-file.js";
import { type EncryptionOptions, keyPath, SessionKeys } from "./session-keys.js";
import { JsonlShares } from "./shares.js";
import { scanFile } from "./text-scan.js";

/** What a readiness probe writes. */
const PROBE_BYTE = Buffer.from("\n");

/** Sessions of one `list(workspace, ids)` call read at the same time. */
const LIST_CONCURRENCY = 16;
/**
 * Ids from which `list` takes the set of open sessions once (a pass over
 * the session cache) rather than asking the cache per id: a GetSession
 * lists one id, and with 64 sessions open the pass was most of its work.
 */
const OPEN_SET_MIN = 16;

export interface JsonlEngineOptions {
  /** Root of the data: `<dataDir>/<workspace>/sessions/<id>.jsonl`. */
  dataDir: string;
  /** Parsed sessions kept in memory (LRU; busy ones are never evicted). Default 256. */
  cacheSessions?: number;
  /** How long a writer keeps the cross-process lock after its last append. Default 500 ms. */
  leaseIdleMs?: number;
  /** Age after which another process may break a lock left by a dead one. Default 10 s. */
  lockStaleMs?: number;
  /** The file system (tests inject faults or count calls here). Default: node:fs. */
  fs?: FsOps;
  /**
   * What the data dir must allow, checked when the engine is made (with
   * node:fs, also under an injected `fs`); a SessiondError otherwise, see
   * data-dir.ts. "writable" (default) also creates it; "readable" is for a
   * store that is only read, e.g. a read-only snapshot being copied (its
   * listings then leave crashed creates' temp files in place).
   */
  need?: DataDirNeed;
  /** Told about syncs, lock waits, group commits and cache lookups (metrics). Default: nothing. */
  observer?: StorageObserver;
  /**
   * Listing records remembered at most, over all workspaces (listing.ts,
   * RecordMemo). A filtered listing of a workspace with more sessions than
   * this reads the files of the rest whole on every call. Default 262,144.
   */
  listingRecords?: number;
  /**
   * Which thread waits for a batch's fdatasync (inline-sync.ts); default: a
   * new policy on the real clock. Tests pass one on their own clock.
   */
  inlineSync?: InlineSync;
  /**
   * Encryption at rest (session-keys.ts): the new sessions of these
   * workspaces are sealed under data keys wrapped by `keys`. Sessions
   * sealed earlier are opened with `keys` whatever `workspaces` says.
   */
  encryption?: EncryptionOptions;
  /**
   * A sealed session gets a checkpoint (checkpoint.ts: its opened payloads
   * in a few sealed segments, for fast cold reads) when it is closed or
   * evicted with at least this many entries the checkpoint does not cover.
   * Default 1024 (a smaller session opens entry by entry in a few ms: not
   * worth the write at eviction); Infinity: never (nor with `need: "readable"`).
   */
  checkpointAfter?: number;
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
    /** Keep the lock but skip the fencing re-read under it: write where this process last wrote. */
    noFencing?: boolean;
    /** Skip directory fsyncs only (a power cut may then lose created / linked names). */
    noDirFsync?: boolean;
    /** Trust the persisted listing index without a stat of each file (stale listings). */
    noListingIndexCheck?: boolean;
    /** Redaction overwrites the file in place instead of copy, fsync, rename (a crash leaves a mix). */
    redactInPlace?: boolean;
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
  /** Directories whose stale temp files are removed (or being removed), by path. */
  private readonly cleaned = new Map<string, Promise<void>>();
  private readonly memo: RecordMemo;
  /** Change reports of the directories listed (real file system only). */
  private readonly changes: FileChanges | undefined;
  private readonly index: RootIndex;
  /** The persisted listing index (real file system only, like `changes`). */
  private readonly listingIndex: ListingIndex | undefined;
  private readonly observer: StorageObserver;
  private closed = false;
  private readonly keys: SessionKeys;
  /** The search filters of sealed sessions (search-filter.ts). */
  private readonly filters: SearchFilters;
  private readonly audit: ErasureAudit;
  readonly blobs: BlobFiles;
  readonly shares: JsonlShares;

  constructor(o: JsonlEngineOptions) {
    this.dataDir = path.resolve(o.dataDir);
    const need = o.need ?? "writable";
    checkDataDir(this.dataDir, need);
    this.observer = o.observer ?? NO_OBSERVER;
    const base = o.debug?.noDirFsync ? withoutDirFsync(o.fs ?? nodeFs) : (o.fs ?? nodeFs);
    this.ops = observedFs(base, this.observer);
    this.cache = new SessionCache(Math.max(1, o.cacheSessions ?? 256));
    // An injected file system (tests, faults) gets no watches: stats only.
    this.changes = base === nodeFs ? new FileChanges() : undefined;
    this.memo = new RecordMemo(
      this.changes,
      Date.now,
      Math.max(0, o.listingRecords ?? MAX_REMEMBERED),
    );
    this.listingIndex =
      base === nodeFs
        ? new ListingIndex({
            file: new ListingIndexFile(this.dataDir),
            memo: this.memo,
            changes: this.changes,
            known: (workspace) => this.index.known(workspace),
            writable: need === "writable",
            noCheck: o.debug?.noListingIndexCheck === true,
          })
        : undefined;
    this.index = new RootIndex(this.ops, this.dataDir, {
      syncReads: base === nodeFs,
      seeder: this.listingIndex,
      // A reader leaves crashed creates' temp files alone: its dir may be read-only.
      onDirRead: need === "writable" ? (dir, names) => this.cleanListed(dir, names) : undefined,
      // Another process deleted it: its record would only hold a place in the memo.
      onGone: (dir, id) => this.memo.delete(dir, id),
    });
    this.keys = new SessionKeys(this.ops, o.encryption, o.debug?.noFsync !== true);
    this.filters = new SearchFilters(this.ops);
    this.audit = new ErasureAudit(this.ops, this.dataDir, o.debug?.noFsync !== true);
    this.fileOptions = {
      keysOf: (key, file) => this.keys.open(key, file, { checkpoint: true }),
      // A store that is only read (need "readable") writes no checkpoint into its data dir.
      checkpointAfter: need === "writable" ? (o.checkpointAfter ?? 1024) : Number.POSITIVE_INFINITY,
      ops: this.ops,
      dataDir: this.dataDir,
      staleMs: o.lockStaleMs ?? 10_000,
      leaseIdleMs: o.leaseIdleMs ?? 500,
      lockEnabled: !o.debug?.noCrossProcessLock,
      noFsync: o.debug?.noFsync === true,
      noTailRepair: o.debug?.noTailRepair === true,
      noFencing: o.debug?.noFencing === true,
      redactInPlace: o.debug?.redactInPlace === true,
      inlineSync: o.inlineSync ?? new InlineSync(),
      observer: this.observer,
    };
    this.blobs = new BlobFiles(this.ops, this.dataDir, o.debug?.noFsync !== true, o.encryption);
    this.shares = new JsonlShares(this.ops, this.dataDir, o.debug?.noFsync !== true);
  }

  async create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
    this.checkOpen();
    const log = SessionLog.from(key.sessionId, entries);
    const subagent = Boolean(log.info.parentSessionId);
    const file = sessionPath(this.dataDir, key.workspace, key.sessionId, subagent);
    const sync = !this.fileOptions.noFsync;
    try {
      await this.prepare(key.workspace);
      const existing = await this.locate(key);
      if (existing !== undefined) {
        // The store answers a retried create as a success when the existing
        // session is the same: its name must then be durable too (the first
        // attempt may have failed at the directory fsync).
        if (sync) await makeNameDurable(this.ops, existing);
        throw alreadyExists(`session ${quote(key.sessionId)} already exists`);
      }
      await ensureDir(this.ops, path.dirname(file), sync);
      // The data key is durable before the log is: no record is sealed under a key a crash loses.
      const keying = await this.keys.create(key, file);
      const content = encodeFileContent(entries, keying.sealer);
      try {
        await createExclusive(this.ops, file, key.sessionId, content, sync);
      } catch (err) {
        if (sync && isSessiondError(err) && err.code === "ALREADY_EXISTS") {
          await makeNameDurable(this.ops, file);
        }
        throw err;
      }
      const session = this.newSession(key, file);
      const st = await this.ops.stat(file);
      session.seed(log, content, st, keying);
      this.cache.put(key, session);
      this.index.added(key.workspace, key.sessionId, file, log.root, keyOf(st));
    } catch (err) {
      throw ioError(err, `creating session ${quote(key.sessionId)}`, this.dataDir);
    }
    this.listeners.emit({ type: "created", ...key, headSeq: log.headSeq });
  }

  append(key: SessionKey, plan: Planner): Promise<AppendResult> {
    // The session open already: straight to its queue (what `use` does,
    // without its awaits; a refusal for a file gone drops it from the
    // cache as `use` does: SessionFileOptions.onGone).
    const open = this.closed ? undefined : this.cache.touch(key);
    if (open === undefined) return this.use(key, (s) => s.append(plan));
    this.observer.cacheLookup(true);
    return open.append(plan);
  }

  /** Redaction: the session file rewritten under its lock (SessionFile.withhold, redact-file.ts). */
  async withhold(key: SessionKey, plan: WithholdPlanner): Promise<WithholdResult> {
    this.checkOpen();
    let file = "";
    const result = await this.use(key, (s) => {
      file = s.path;
      return s.withhold(plan);
    });
    // The withheld content must not stay findable through the search filter.
    if (result.changed.length > 0 && this.keys.encrypts) await this.filters.forget(file);
    return result;
  }

  /**
   * Erasure (engine.ts): a sealed session's data key destroyed (its key
   * file replaced by a tombstone, session-keys.ts), a session in clear
   * rewritten like a redaction (redact-file.ts), under the session's lock.
   */
  async erase(key: SessionKey, marker: Withheld): Promise<EraseResult> {
    this.checkOpen();
    let destroyed = false;
    let file = "";
    const result = await this.use(key, (s) => {
      file = s.path;
      return s.erase(
        (log) => planErase(log, marker),
        async () => {
          destroyed = (await this.keys.destroy(key, s.path, marker)) !== "clear";
        },
      );
    });
    // Meaningless without the destroyed key, and removed all the same.
    if (this.keys.encrypts) await this.filters.forget(file);
    let keyDestroyed = destroyed;
    if (!keyDestroyed) {
      // Erased before (the tombstone there): the key is destroyed all the same.
      const file = await this.locate(key);
      keyDestroyed = file !== undefined && (await this.keys.isErased(key, file));
    }
    return {
      entries: result.entries.length,
      changed: result.changed.length,
      headSeq: result.headSeq,
      keyDestroyed,
    };
  }

  recordErasure(workspace: string, record: string): Promise<void> {
    this.checkOpen();
    return this.audit.append(workspace, record);
  }

  erasures(workspace: string): Promise<string[]> {
    this.checkOpen();
    return this.audit.read(workspace);
  }

  isOpen(key: SessionKey): boolean {
    return !this.closed && this.cache.get(key) !== undefined;
  }

  async load(key: SessionKey): Promise<SessionLog> {
    return this.use(key, (s) => s.load());
  }

  async read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage> {
    const log = await this.load(key);
    return { entries: log.slice(afterSeq, limit), headSeq: log.headSeq };
  }

  /**
   * A text search reads the file itself (text-scan.ts), not the cached
   * log: only the records whose bytes hold the needles are decoded, and
   * nothing is kept, so a search over a workspace neither decodes nor
   * caches every entry of it.
   */
  async scanEntries(key: SessionKey, scan: EntryScan): Promise<EntryScanEnd> {
    this.checkOpen();
    // Opened where it would be (top-level, then subagent) rather than
    // located first: a search opens thousands of files, one stat each saved.
    for (const subagent of [false, true]) {
      const file = sessionPath(this.dataDir, key.workspace, key.sessionId, subagent);
      try {
        if (!this.keys.encrypts) return await scanFile(this.ops, file, scan);
        // A sealed session whose filter rules every record out: not even its key is opened.
        const keyFile = keyPath(file);
        if (await this.filters.skips(file, keyFile, scan.needles, scan.afterSeq)) {
          return { damaged: false };
        }
        const keyStamp = await this.filters.keyStamp(keyFile);
        const keying = await this.keys.open(key, file);
        // Erased (its key destroyed): no content left to find; the structure is not searched.
        if (keying.erased !== undefined) {
          await this.ops.stat(file); // ENOENT: look where a subagent's would be
          return { damaged: false };
        }
        if (keying.sealer === undefined) return await scanFile(this.ops, file, scan);
        const plan = await this.filters.plan(
          file,
          keying.sealer,
          keyStamp,
          scan.needles,
          scan.afterSeq,
        );
        if (plan === "skip") return { damaged: false };
        const end = await scanFile(this.ops, file, scan, keying.sealer, plan);
        if (!end.damaged) await this.filters.extend(file, plan);
        return end;
      } catch (err) {
        const code = errnoCode(err);
        if (code === "ENOENT") continue;
        // Not the file system's (a visitor's own error): as it is.
        if (code === undefined) throw err;
        throw ioError(err, `searching session ${quote(key.sessionId)}`, this.dataDir);
      }
    }
    throw notFound(
      `session ${quote(key.sessionId)} not found in workspace ${quote(key.workspace)}`,
    );
  }

  /**
   * After a key rotation: the session's data key wrapped again under its
   * workspace key's current version (the key file replaced, no record
   * touched). Undefined for a session in clear.
   */
  async rewrap(key: SessionKey): Promise<{ from: number; to: number } | undefined> {
    this.checkOpen();
    const file = await this.locate(key);
    if (file === undefined) {
      throw notFound(
        `session ${quote(key.sessionId)} not found in workspace ${quote(key.workspace)}`,
      );
    }
    return this.keys.rewrap(key, file);
  }

  async listIds(workspace: string): Promise<string[]> {
    this.checkOpen();
    return this.index.ids(workspace);
  }

  /**
   * With a tag hint, leaves out the top-level sessions whose record the
   * memo vouches for (as `list` would hand it out now: not open, no change
   * reported since its stat) and says the tags do not hold: the store's
   * filter would drop them on that same record, and a filtered listing of
   * 10,000 sessions then builds its candidates, ids and records for the
   * few that match, not for all.
   */
  async listRoots(workspace: string, hint?: RootsHint): Promise<RootRecord[]> {
    this.checkOpen();
    const roots = await this.index.roots(workspace);
    if (hint?.tags === undefined || Object.keys(hint.tags).length === 0) return roots;
    const holds = tagTest(hint.tags);
    const dir = sessionsDir(this.dataDir, workspace, false);
    const vouched = this.memo.voucher(dir, this.memo.clock());
    const open = this.cache.idsIn(workspace);
    return roots.filter((r) => {
      const id = r.sessionId;
      const known = open.has(id) ? undefined : vouched(id);
      return known === undefined || known.health !== "ok" || holds(known.tags);
    });
  }

  /**
   * Records of many sessions (a filtered listing asks for a whole
   * workspace's): first, without a stat or a promise each, the records
   * the memo holds for top-level sessions that are not open and whose
   * files had no change reported since (RecordMemo.voucher); then the rest
   * one by one (recordOf), LIST_CONCURRENCY at a time. One open session
   * (a GetSession of a session in use: the hot case) goes straight to its
   * record, as the rest would, without the voucher and the workers.
   */
  async list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]> {
    this.checkOpen();
    if (sessionIds?.length === 1) {
      const key = { workspace, sessionId: sessionIds[0] as string };
      const open = this.cache.get(key);
      if (open !== undefined) {
        const record = await this.loadRecord(key, open, undefined);
        return record === undefined ? [] : [record];
      }
    }
    const ids = sessionIds ?? (await this.listIds(workspace));
    const out: (SessionRecord | undefined)[] = new Array(ids.length);
    const rest: number[] = [];
    const dir = sessionsDir(this.dataDir, workspace, false);
    const vouched = this.memo.voucher(dir, this.memo.clock());
    // An open session may hold appends whose change report has not come in yet: read from it.
    const open = ids.length >= OPEN_SET_MIN ? this.cache.idsIn(workspace) : undefined;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string;
      const isOpen =
        open === undefined
          ? this.cache.get({ workspace, sessionId: id }) !== undefined
          : open.has(id);
      // (An id that is not one misses here, and recordOf refuses it.)
      const known = isOpen ? undefined : vouched(id);
      if (known !== undefined) out[i] = known;
      else rest.push(i);
    }
    let next = 0;
    const worker = async () => {
      while (next < rest.length) {
        const i = rest[next++] as number;
        out[i] = await this.recordOf({ workspace, sessionId: ids[i] as string });
      }
    };
    await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, rest.length) }, worker));
    return out.filter((r): r is SessionRecord => r !== undefined);
  }

  /**
   * UsageReport of whole hours from the listing records, as a filtered
   * listing reads them (after a restart: the persisted index and one stat
   * per session file), summed from the index's usage rows in place
   * (storage/usage-report.ts groupUsage).
   */
  async usageGroups(
    workspace: string,
    query: UsageGroupsQuery,
    prices: PriceTable,
  ): Promise<UsageGroups | undefined> {
    this.checkOpen();
    const hint = Object.keys(query.tags).length > 0 ? { tags: query.tags } : undefined;
    const roots = await this.listRoots(workspace, hint);
    const records =
      roots.length === 0
        ? []
        : await this.list(
            workspace,
            roots.map((r) => r.sessionId),
          );
    return groupUsage(records, query, prices);
  }

  /**
   * A full id is resolved from the session cache or with a stat of its file
   * (top-level, then subagent), not by revalidating the workspace's
   * directory index, which costs two directory stats on every call. A cached
   * session deleted by another process answers true: the read that follows
   * finds the file gone and answers NOT_FOUND.
   */
  async exists(key: SessionKey): Promise<boolean> {
    this.checkOpen();
    if (this.cache.get(key) !== undefined) return true;
    return (await this.locate(key)) !== undefined;
  }

  async workspaces(): Promise<string[]> {
    this.checkOpen();
    const out: string[] = [];
    for (const name of await this.readdirOrEmpty(this.dataDir)) {
      if (WORKSPACE_PATTERN.test(name) && (await this.listIds(name)).length > 0) out.push(name);
    }
    return out;
  }

  /** The data dir's workspace directories by name, counted from the root index (its directory reads). */
  async workspacePage(q: WorkspacePageQuery): Promise<WorkspaceRecord[]> {
    this.checkOpen();
    const names = (await this.readdirOrEmpty(this.dataDir))
      .filter((n) => WORKSPACE_PATTERN.test(n) && n > q.after && (q.only?.has(n) ?? true))
      .sort((a, b) => (a < b ? -1 : 1));
    const out: WorkspaceRecord[] = [];
    for (const name of names) {
      if (out.length >= q.limit) break;
      const { top, sub } = await this.index.counts(name);
      if (top + sub > 0) out.push({ name, sessionCount: top, subagentCount: sub });
    }
    return out;
  }

  async delete(key: SessionKey, opts: DeleteOptions = {}): Promise<boolean> {
    this.checkOpen();
    let removed: boolean;
    let file = "";
    try {
      removed = await this.use(key, (s) => {
        file = s.path;
        return s.remove(opts.ifHeadSeq);
      });
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND")) return false;
      throw err;
    }
    // Kept because it changed (or gone already: the cache forgets it on its next use).
    if (!removed && opts.ifHeadSeq !== undefined) return false;
    this.cache.drop(key);
    if (removed) await this.keys.remove(file, key.sessionId);
    if (removed && this.keys.encrypts) await this.filters.forget(file);
    this.memo.delete(path.dirname(file), key.sessionId);
    this.index.removed(key.workspace, key.sessionId, file);
    if (removed) this.listeners.emit({ type: "deleted", ...key, headSeq: 0 });
    return removed;
  }

  subscribe(listener: StorageListener): () => void {
    return this.listeners.subscribe(listener);
  }

  /**
   * Creates, writes and removes a small file in the data dir: what every
   * create needs, so a dir that was removed, replaced, remounted read-only
   * or filled up answers here first. No fsync: it tests the path, not the disk.
   */
  async probe(): Promise<void> {
    this.checkOpen();
    const file = path.join(this.dataDir, `.tmp-ready-${process.pid}`);
    const fd = await this.ops.open(file, "w");
    try {
      await this.ops.write(fd, PROBE_BYTE, 0, 1, 0);
    } finally {
      await this.ops.close(fd);
      await this.ops.unlink(file);
    }
  }

  stats(): EngineStats {
    return { cachedSessions: this.cache.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = this.cache.sessions();
    await this.cache.closeAll();
    this.rememberOpen(open);
    await this.listingIndex?.close();
    this.changes?.close();
    this.listeners.clear();
  }

  /**
   * At close, before the listing index is saved: the records of the
   * sessions this process had open, as their files stand (one stat each,
   * nothing read), so that the next start does not read whole the sessions
   * written since they were last listed (the memo's records of them are of
   * an older state, which the index would save and the next start refuse).
   * Only for workspaces whose directories were read: the index of another
   * workspace is not rewritten.
   */
  private rememberOpen(open: readonly SessionFile[]): void {
    if (this.listingIndex === undefined) return;
    for (const session of open) {
      const { workspace, sessionId } = session.key;
      if (!this.index.has(workspace)) continue;
      let st: Stats | undefined;
      try {
        st = statSync(session.path, { throwIfNoEntry: false });
      } catch {
        continue;
      }
      const log = st === undefined ? undefined : session.logOf(st);
      if (st === undefined || log === undefined) continue;
      let record: SessionRecord;
      try {
        record = recordOf(workspace, log);
      } catch {
        // A SessionInfo that does not fold: the next start reads the file, as before.
        continue;
      }
      this.memo.store(path.dirname(session.path), sessionId, keyOf(st), record);
      this.listingIndex.learned(workspace);
    }
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
    this.observer.cacheLookup(session !== undefined);
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
    const dir = path.dirname(file);
    const session: SessionFile = new SessionFile(key, file, {
      ...this.fileOptions,
      onGone: () => {
        this.cache.drop(key, session);
      },
      onAppended: (headSeq) => {
        // The memo's record is old now, whether or not the change report has come in yet.
        this.memo.delete(dir, key.sessionId);
        this.listeners.emit({ type: "appended", ...key, headSeq });
      },
      onWithheld: (headSeq, seqs) => {
        this.memo.delete(dir, key.sessionId);
        this.listeners.emit({ type: "withheld", ...key, headSeq, seqs });
      },
    });
    return session;
  }

  /** Path of an existing session file (top-level first, then subagents). */
  private async locate(key: SessionKey): Promise<string | undefined> {
    for (const subagent of [false, true]) {
      const file = sessionPath(this.dataDir, key.workspace, key.sessionId, subagent);
      try {
        await this.ops.stat(file);
        return file;
      } catch (err) {
        if (errnoCode(err) !== "ENOENT") throw ioError(err, "locating a session", this.dataDir);
      }
    }
    return undefined;
  }

  /**
   * The listing record of one session (undefined when it does not exist):
   * from the cached session, else remembered for the file's stat signature,
   * else from a full read. One stat for a top-level session that is not
   * cached (it both locates the file and checks the remembered record).
   */
  private async recordOf(key: SessionKey): Promise<SessionRecord | undefined> {
    const cached = this.cache.get(key);
    if (cached !== undefined) return this.loadRecord(key, cached, undefined);
    for (const subagent of [false, true]) {
      const file = sessionPath(this.dataDir, key.workspace, key.sessionId, subagent);
      const dir = sessionsDir(this.dataDir, key.workspace, subagent);
      let memo: Awaited<ReturnType<RecordMemo["lookup"]>>;
      try {
        memo = await this.memo.lookup(this.ops, file, dir, key.sessionId);
      } catch (err) {
        if (errnoCode(err) === "ENOENT") {
          // Deleted by another process: its record would only hold a place in the memo.
          this.memo.delete(dir, key.sessionId);
          continue;
        }
        throw ioError(err, `listing ${quote(key.sessionId)}`, this.dataDir);
      }
      if (memo.record !== undefined) return memo.record;
      const session = this.newSession(key, file);
      try {
        return await this.loadRecord(key, session, memo);
      } finally {
        await session.close();
      }
    }
    return undefined;
  }

  /** The record of a full read of `session`; remembered under the lookup's signature when given. */
  private async loadRecord(
    key: SessionKey,
    session: SessionFile,
    lookup: { key: FileKey; stamp?: number | undefined } | undefined,
  ): Promise<SessionRecord | undefined> {
    let record: SessionRecord;
    try {
      record = recordOf(key.workspace, await session.load());
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND") || errnoCode(err) === "ENOENT") return undefined;
      if (!isSessiondError(err, "DATA_LOSS")) {
        throw ioError(err, `listing ${quote(key.sessionId)}`, this.dataDir);
      }
      record = corruptRecord(key, session.prefix, err.message);
    }
    if (lookup !== undefined) {
      this.memo.store(path.dirname(session.path), key.sessionId, lookup.key, record, lookup.stamp);
      this.listingIndex?.learned(key.workspace);
    }
    if (record.root !== undefined) {
      this.index.seen(key.workspace, key.sessionId, session.path, record.root);
    }
    return record;
  }

  /**
   * Removes temp files left by crashed creates, once per directory and
   * engine: before the first create in a workspace (reading the
   * directories), or from the names the root index read anyway when a
   * listing comes first (no second readdir of a big directory).
   */
  private prepare(workspace: string): Promise<void> {
    return Promise.all(
      [false, true].map((sub) => {
        const dir = sessionsDir(this.dataDir, workspace, sub);
        return this.cleanOnce(dir, () => removeStaleTemps(this.ops, dir));
      }),
    ).then(() => undefined);
  }

  /** The first read of `dir` by the root index: its stale temp files go. */
  private cleanListed(dir: string, names: readonly string[]): Promise<void> {
    return this.cleanOnce(dir, async () => {
      const now = Date.now();
      for (const name of names) {
        if (!isTempName(name)) continue;
        const p = path.join(dir, name);
        try {
          if (now - (await this.ops.stat(p)).mtimeMs >= TEMP_GRACE_MS) await this.ops.unlink(p);
        } catch (err) {
          if (errnoCode(err) !== "ENOENT") {
            throw ioError(err, "removing a crashed create's temp file", this.dataDir);
          }
        }
      }
    });
  }

  private cleanOnce(dir: string, clean: () => Promise<unknown>): Promise<void> {
    let done = this.cleaned.get(dir);
    if (done === undefined) {
      done = clean().then(() => undefined);
      this.cleaned.set(dir, done);
      done.catch(() => this.cleaned.delete(dir));
    }
    return done;
  }

  private async readdirOrEmpty(dir: string): Promise<string[]> {
    try {
      return await this.ops.readdir(dir);
    } catch (err) {
      if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return [];
      throw ioError(err, "listing sessions", this.dataDir);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw unavailable("storage is closed");
  }
}

/**
 * Negative control `debug.noDirFsync`: the same fs, except that an fsync of
 * a directory does nothing (file fsyncs still happen).
 */
function withoutDirFsync(ops: FsOps): FsOps {
  return {
    ...ops,
    fsync: async (fd) => {
      if ((await ops.fstat(fd)).isDirectory()) return;
      await ops.fsync(fd);
    },
  };
}

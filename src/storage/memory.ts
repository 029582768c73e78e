import { toJsonString } from "@bufbuild/protobuf";
import { type Entry, EntrySchema, type Withheld } from "../../gen/sessiond/v1/entry_pb.js";
import { planErase, seqPages } from "../core/erase-plan.js";
import { alreadyExists, notFound, unavailable } from "../core/errors.js";
import { quote } from "../core/ids.js";
import { SessionLog } from "../core/session-log.js";
import type {
  AppendResult,
  Candidate,
  CandidateQuery,
  DeleteOptions,
  EntryPage,
  EraseResult,
  Planner,
  RootRecord,
  SessionKey,
  SessionRecord,
  StorageEngine,
  StorageListener,
  WithholdPlanner,
  WithholdResult,
  WorkspacePageQuery,
  WorkspaceRecord,
} from "./engine.js";
import { Listeners } from "./listeners.js";
import { MemoryBlobs } from "./memory-blobs.js";
import { compareRootKeys } from "./root-order.js";
import { recordOf, rootRecordOf } from "./session-record.js";
import { MemoryShares } from "./shares.js";

/**
 * The in-memory engine: for tests and ephemeral use. Everything is lost when
 * the process exits. JavaScript's single thread serialises mutations: a
 * planner runs synchronously against the log and its entries are applied in
 * the same tick, so no queue is needed.
 */
export class MemoryEngine implements StorageEngine {
  readonly kind = "memory";
  readonly blobs: MemoryBlobs;
  readonly shares = new MemoryShares();
  private readonly spaces = new Map<string, Map<string, SessionLog>>();
  private readonly listeners = new Listeners();
  private closed = false;
  private readonly audit = new Map<string, string[]>();

  /** `blobs`: another engine's, to share them (a test's stand-in for a reopen). */
  constructor(options: { blobs?: MemoryBlobs } = {}) {
    this.blobs = options.blobs ?? new MemoryBlobs();
  }

  private space(workspace: string): Map<string, SessionLog> {
    let s = this.spaces.get(workspace);
    if (s === undefined) {
      s = new Map();
      this.spaces.set(workspace, s);
    }
    return s;
  }

  private get(key: SessionKey): SessionLog {
    this.checkOpen();
    const log = this.spaces.get(key.workspace)?.get(key.sessionId);
    if (log === undefined) {
      throw notFound(
        `session ${quote(key.sessionId)} not found in workspace ${quote(key.workspace)}`,
      );
    }
    return log;
  }

  private checkOpen(): void {
    if (this.closed) throw unavailable("storage is closed");
  }

  async create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
    this.checkOpen();
    const space = this.space(key.workspace);
    if (space.has(key.sessionId)) {
      throw alreadyExists(`session ${quote(key.sessionId)} already exists`);
    }
    const log = SessionLog.from(key.sessionId, entries);
    space.set(key.sessionId, log);
    this.listeners.emit({ type: "created", ...key, headSeq: log.headSeq });
  }

  async append(key: SessionKey, plan: Planner): Promise<AppendResult> {
    const log = this.get(key);
    const planned = plan(log);
    log.applyAll(planned.write);
    if (planned.write.length > 0)
      this.listeners.emit({ type: "appended", ...key, headSeq: log.headSeq });
    return { ...planned, headSeq: log.headSeq, leafId: log.leafId };
  }

  async withhold(key: SessionKey, plan: WithholdPlanner): Promise<WithholdResult> {
    const log = this.get(key);
    const planned = plan(log);
    log.replaceAll(planned.changed);
    if (planned.changed.length > 0) {
      const seqs = planned.changed.map((e) => Number(e.seq));
      this.listeners.emit({ type: "withheld", ...key, headSeq: log.headSeq, seqs });
    }
    return { ...planned, headSeq: log.headSeq };
  }

  /** Erasure: every entry with content withheld in place (no key to destroy in memory). */
  async erase(key: SessionKey, marker: Withheld): Promise<EraseResult> {
    const log = this.get(key);
    const plan = planErase(log, marker);
    log.replaceAll(plan.changed);
    for (const seqs of seqPages(plan.changed.map((e) => Number(e.seq)))) {
      this.listeners.emit({ type: "withheld", ...key, headSeq: log.headSeq, seqs });
    }
    return {
      entries: plan.entries.length,
      changed: plan.changed.length,
      headSeq: log.headSeq,
      keyDestroyed: false,
    };
  }

  async recordErasure(workspace: string, record: string): Promise<void> {
    this.checkOpen();
    const list = this.audit.get(workspace) ?? [];
    list.push(record);
    this.audit.set(workspace, list);
  }

  async erasures(workspace: string): Promise<string[]> {
    this.checkOpen();
    return [...(this.audit.get(workspace) ?? [])];
  }

  async load(key: SessionKey): Promise<SessionLog> {
    return this.get(key);
  }

  async read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage> {
    const log = this.get(key);
    return { entries: log.slice(afterSeq, limit), headSeq: log.headSeq };
  }

  async listIds(workspace: string): Promise<string[]> {
    this.checkOpen();
    return [...(this.spaces.get(workspace)?.keys() ?? [])];
  }

  async listRoots(workspace: string): Promise<RootRecord[]> {
    this.checkOpen();
    return [...(this.spaces.get(workspace)?.values() ?? [])].map(rootRecordOf);
  }

  async list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]> {
    this.checkOpen();
    const space = this.spaces.get(workspace);
    if (space === undefined) return [];
    const ids = sessionIds ?? [...space.keys()];
    const out: SessionRecord[] = [];
    for (const id of ids) {
      const log = space.get(id);
      if (log !== undefined) out.push(recordOf(workspace, log));
    }
    return out;
  }

  /**
   * The reference for the engines that index entry text: every message
   * entry's canonical JSON, lower-cased, looked through for the needles,
   * session by session in the search's order.
   */
  async searchCandidates(workspace: string, q: CandidateQuery): Promise<Candidate[]> {
    this.checkOpen();
    const sign = q.order === "desc" ? -1 : 1;
    const { after } = q;
    const sessions = [...(this.spaces.get(workspace)?.values() ?? [])]
      .map((log) => ({ log, root: rootRecordOf(log) }))
      .filter(({ root }) => root.parentSessionId === q.parentSessionId)
      .sort(
        (a, b) =>
          sign *
          compareRootKeys(
            a.root.createdAtMs,
            a.root.sessionId,
            b.root.createdAtMs,
            b.root.sessionId,
          ),
      );
    const out: Candidate[] = [];
    for (const { log, root } of sessions) {
      const place =
        after === undefined
          ? 1
          : sign * compareRootKeys(root.createdAtMs, root.sessionId, after.createdMs, after.id);
      if (place < 0) continue;
      for (const entry of log.slice(place === 0 && after !== undefined ? after.seq : 0)) {
        if (entry.kind.case !== "message") continue;
        const json = toJsonString(EntrySchema, entry).toLowerCase();
        if (!q.needles.every((n) => json.includes(n))) continue;
        out.push({ root, seq: Number(entry.seq), entry });
        if (out.length >= q.limit) return out;
      }
    }
    return out;
  }

  async workspaces(): Promise<string[]> {
    this.checkOpen();
    return [...this.spaces.entries()].filter(([, s]) => s.size > 0).map(([w]) => w);
  }

  async workspacePage(q: WorkspacePageQuery): Promise<WorkspaceRecord[]> {
    this.checkOpen();
    const names = [...this.spaces.entries()]
      .filter(([name, s]) => s.size > 0 && name > q.after && (q.only?.has(name) ?? true))
      .map(([name]) => name)
      .sort((a, b) => (a < b ? -1 : 1))
      .slice(0, q.limit);
    return names.map((name) => {
      const logs = [...(this.spaces.get(name)?.values() ?? [])];
      const subagentCount = logs.filter((log) => rootRecordOf(log).parentSessionId !== "").length;
      return { name, sessionCount: logs.length - subagentCount, subagentCount };
    });
  }

  async delete(key: SessionKey, opts: DeleteOptions = {}): Promise<boolean> {
    this.checkOpen();
    const space = this.spaces.get(key.workspace);
    if (opts.ifHeadSeq !== undefined && space?.get(key.sessionId)?.headSeq !== opts.ifHeadSeq) {
      return false;
    }
    const removed = space?.delete(key.sessionId) ?? false;
    if (removed) this.listeners.emit({ type: "deleted", ...key, headSeq: 0 });
    return removed;
  }

  /** Atomic for free: nothing else runs between two synchronous deletes. */
  async deleteMany(workspace: string, sessionIds: readonly string[]): Promise<string[]> {
    this.checkOpen();
    const space = this.spaces.get(workspace);
    const removed = [...new Set(sessionIds)].filter((id) => space?.delete(id) ?? false);
    for (const sessionId of removed) {
      this.listeners.emit({ type: "deleted", workspace, sessionId, headSeq: 0 });
    }
    return removed;
  }

  subscribe(listener: StorageListener): () => void {
    return this.listeners.subscribe(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }
}

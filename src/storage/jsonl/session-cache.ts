import type { SessionKey } from "../engine.js";
import type { SessionFile } from "./session-file.js";

/**
 * The open sessions of an engine, least recently used first. Bounded, but
 * a session with queued writes, a running read or batch, or a held lease is
 * never dropped: dropping it would lose its queue or leave its lock held
 * by nobody. The bound may therefore be exceeded while many sessions are
 * busy; it is restored as they go idle and others are opened.
 */
export class SessionCache {
  /** By workspace, then id: a lookup builds no key string (one per append, twice). */
  private readonly byWorkspace = new Map<string, Map<string, Held>>();
  private count = 0;
  /** Uses so far: a session's last use is its place in the LRU order. */
  private clock = 0;
  /** Closes in progress of dropped sessions, awaited by closeAll. */
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly max: number) {}

  /** Sessions held now (may exceed the bound while many are busy). */
  get size(): number {
    return this.count;
  }

  get(key: SessionKey): SessionFile | undefined {
    return this.byWorkspace.get(key.workspace)?.get(key.sessionId)?.session;
  }

  /** The ids of the open sessions of `workspace` (a listing asks once, not per session). */
  idsIn(workspace: string): Set<string> {
    return new Set(this.byWorkspace.get(workspace)?.keys());
  }

  /** The cached session, marked as most recently used. */
  touch(key: SessionKey): SessionFile | undefined {
    const held = this.byWorkspace.get(key.workspace)?.get(key.sessionId);
    if (held === undefined) return undefined;
    held.used = ++this.clock;
    return held.session;
  }

  /** Caches `session` as the most recent one (replacing any other for the key) and evicts. */
  put(key: SessionKey, session: SessionFile): void {
    let sessions = this.byWorkspace.get(key.workspace);
    if (sessions === undefined) {
      sessions = new Map();
      this.byWorkspace.set(key.workspace, sessions);
    }
    const previous = sessions.get(key.sessionId);
    if (previous === undefined) this.count++;
    else if (previous.session !== session) this.retire(previous.session);
    sessions.set(key.sessionId, { session, used: ++this.clock });
    // The least recently used first; busy sessions stay.
    while (this.count > this.max) {
      const oldest = this.leastRecent(session);
      if (oldest === undefined) break;
      this.remove(oldest.workspace, oldest.id);
      this.retire(oldest.held.session);
    }
  }

  /** Drops the session of `key` if it is still `session` (or any, when not given). */
  drop(key: SessionKey, session?: SessionFile): SessionFile | undefined {
    const current = this.byWorkspace.get(key.workspace)?.get(key.sessionId)?.session;
    if (current === undefined || (session !== undefined && current !== session)) return undefined;
    this.remove(key.workspace, key.sessionId);
    this.retire(current);
    return current;
  }

  /** The sessions held now. */
  sessions(): SessionFile[] {
    const out: SessionFile[] = [];
    for (const sessions of this.byWorkspace.values()) {
      for (const held of sessions.values()) out.push(held.session);
    }
    return out;
  }

  /** Closes every session (waiting for their queued work) and empties the cache. */
  async closeAll(): Promise<void> {
    for (const s of this.sessions()) this.retire(s);
    this.byWorkspace.clear();
    this.count = 0;
    while (this.closing.size > 0) await Promise.all(this.closing);
  }

  /** The evictable session used least recently, `keep` aside. */
  private leastRecent(
    keep: SessionFile,
  ): { workspace: string; id: string; held: Held } | undefined {
    let found: { workspace: string; id: string; held: Held } | undefined;
    for (const [workspace, sessions] of this.byWorkspace) {
      for (const [id, held] of sessions) {
        if (held.session === keep || !held.session.evictable) continue;
        if (found === undefined || held.used < found.held.used) found = { workspace, id, held };
      }
    }
    return found;
  }

  private remove(workspace: string, id: string): void {
    const sessions = this.byWorkspace.get(workspace);
    if (sessions === undefined || !sessions.delete(id)) return;
    this.count--;
    if (sessions.size === 0) this.byWorkspace.delete(workspace);
  }

  private retire(session: SessionFile): void {
    const done: Promise<void> = session.close().finally(() => this.closing.delete(done));
    this.closing.add(done);
  }
}

/** A cached session and when it was last used. */
interface Held {
  readonly session: SessionFile;
  used: number;
}

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
  private readonly byKey = new Map<string, SessionFile>();
  /** Closes in progress of dropped sessions, awaited by closeAll. */
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly max: number) {}

  /** Sessions held now (may exceed the bound while many are busy). */
  get size(): number {
    return this.byKey.size;
  }

  get(key: SessionKey): SessionFile | undefined {
    return this.byKey.get(cacheKey(key));
  }

  /** The ids of the open sessions of `workspace` (a listing asks once, not per session). */
  idsIn(workspace: string): Set<string> {
    const prefix = `${workspace}/`;
    const out = new Set<string>();
    for (const k of this.byKey.keys()) if (k.startsWith(prefix)) out.add(k.slice(prefix.length));
    return out;
  }

  /** The cached session, marked as most recently used. */
  touch(key: SessionKey): SessionFile | undefined {
    const k = cacheKey(key);
    const session = this.byKey.get(k);
    if (session !== undefined) {
      this.byKey.delete(k);
      this.byKey.set(k, session);
    }
    return session;
  }

  /** Caches `session` as the most recent one (replacing any other for the key) and evicts. */
  put(key: SessionKey, session: SessionFile): void {
    const k = cacheKey(key);
    const previous = this.byKey.get(k);
    if (previous !== undefined && previous !== session) this.retire(previous);
    this.byKey.delete(k);
    this.byKey.set(k, session);
    for (const [oldKey, old] of this.byKey) {
      if (this.byKey.size <= this.max) break;
      if (old === session || !old.evictable) continue;
      this.byKey.delete(oldKey);
      this.retire(old);
    }
  }

  /** Drops the session of `key` if it is still `session` (or any, when not given). */
  drop(key: SessionKey, session?: SessionFile): SessionFile | undefined {
    const k = cacheKey(key);
    const current = this.byKey.get(k);
    if (current === undefined || (session !== undefined && current !== session)) return undefined;
    this.byKey.delete(k);
    this.retire(current);
    return current;
  }

  /** The sessions held now. */
  sessions(): SessionFile[] {
    return [...this.byKey.values()];
  }

  /** Closes every session (waiting for their queued work) and empties the cache. */
  async closeAll(): Promise<void> {
    for (const s of this.byKey.values()) this.retire(s);
    this.byKey.clear();
    while (this.closing.size > 0) await Promise.all(this.closing);
  }

  private retire(session: SessionFile): void {
    const done: Promise<void> = session.close().finally(() => this.closing.delete(done));
    this.closing.add(done);
  }
}

function cacheKey(key: SessionKey): string {
  return `${key.workspace}/${key.sessionId}`;
}

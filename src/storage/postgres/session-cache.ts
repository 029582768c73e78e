import type { SessionLog } from "../../core/session-log.js";
import type { SessionKey } from "../engine.js";
import type { Keying } from "./sealing.js";

/** One cached session: the log as of `incarnation` (the row's identity, new after delete + create). */
export interface Cached {
  incarnation: string;
  log: SessionLog;
  /** How its payloads are sealed and opened (sealing.ts); undefined: no key provider. */
  keying?: Keying | undefined;
}

/** The cache key of a session ("\n" appears in neither a workspace nor a session id). */
export function cacheKey(k: SessionKey): string {
  return `${k.workspace}\n${k.sessionId}`;
}

/** The session of a cache key. */
export function keyOfCacheKey(k: string): SessionKey {
  const [workspace, sessionId] = k.split("\n");
  return { workspace: workspace as string, sessionId: sessionId as string };
}

/**
 * A replica's parsed logs (an LRU of `cacheSessions` sessions), and the
 * per-session turns that guard them. The database is the truth: an entry
 * here only saves re-reading and re-parsing rows the replica has seen, and
 * is caught up by seq before every use (see catch-up.ts).
 *
 * Operations that use or change a session's cached log take turns per
 * session in this process (`withKey`), so that a catch-up never races with
 * another catch-up or a drain of the same session and applies rows twice.
 * Busy sessions (with a turn queued or running) are never evicted.
 */
export class SessionCache {
  private readonly logs = new Map<string, Cached>();
  /** Per session: the tail of the chain of operations that use its cached log. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly capacity: number,
    /** Told when a session's log enters the cache (not when an entry is replaced), with its head. */
    private readonly onLoad: (k: string, headSeq: number) => void = () => {},
  ) {}

  get(k: string): Cached | undefined {
    return this.logs.get(k);
  }

  /** Stores `c` as the most recently used, evicting the least recently used idle sessions. */
  remember(k: string, c: Cached): void {
    if (!this.logs.delete(k)) this.onLoad(k, c.log.headSeq);
    this.logs.set(k, c);
    if (this.logs.size <= this.capacity) return;
    for (const victim of this.logs.keys()) {
      if (this.logs.size <= this.capacity) break;
      if (victim !== k && !this.chains.has(victim)) this.logs.delete(victim);
    }
  }

  /** Drops a session: the next use reads it again from the tables. */
  drop(k: string): void {
    this.logs.delete(k);
  }

  /** Cache keys of every cached session. */
  keys(): string[] {
    return [...this.logs.keys()];
  }

  get size(): number {
    return this.logs.size;
  }

  clear(): void {
    this.logs.clear();
  }

  /** Whether any session has a turn queued or running. */
  get busy(): boolean {
    return this.chains.size > 0;
  }

  /** The tails of every session's chain (close waits for them). */
  tails(): Promise<void>[] {
    return [...this.chains.values()];
  }

  /** Runs `fn` in the session's turn: after every operation on it queued before. */
  withKey<T>(k: string, fn: () => Promise<T>): Promise<T> {
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

  /**
   * Runs `fn` holding the turns of several sessions, taken one by one in
   * sorted order: two callers with overlapping sets then cannot each hold
   * a turn the other waits for.
   */
  withKeys<T>(ks: readonly string[], fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(ks)].sort();
    const take = (i: number): Promise<T> =>
      i === sorted.length ? fn() : this.withKey(sorted[i] as string, () => take(i + 1));
    return take(0);
  }
}

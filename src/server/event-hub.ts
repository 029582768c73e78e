import type { StorageEngine, StorageEvent } from "../storage/engine.js";

type Listener = (event: StorageEvent) => void;

/**
 * Fans the engine's single event stream out to watchers by session and by
 * workspace, so an append wakes only the watchers of its session (1,000
 * watchers of other sessions cost nothing).
 */
export class EventHub {
  private readonly bySession = new Map<string, Set<Listener>>();
  private readonly byWorkspace = new Map<string, Set<Listener>>();
  private readonly unsubscribe: () => void;

  constructor(engine: StorageEngine) {
    this.unsubscribe = engine.subscribe((event) => {
      this.dispatch(this.bySession.get(sessionKey(event.workspace, event.sessionId)), event);
      this.dispatch(this.byWorkspace.get(event.workspace), event);
    });
  }

  private dispatch(listeners: Set<Listener> | undefined, event: StorageEvent): void {
    if (listeners === undefined) return;
    for (const l of listeners) l(event);
  }

  private add(map: Map<string, Set<Listener>>, key: string, listener: Listener): () => void {
    let set = map.get(key);
    if (set === undefined) {
      set = new Set();
      map.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  }

  /** Events of one session. */
  onSession(workspace: string, sessionId: string, listener: Listener): () => void {
    return this.add(this.bySession, sessionKey(workspace, sessionId), listener);
  }

  /** Events of every session of a workspace. */
  onWorkspace(workspace: string, listener: Listener): () => void {
    return this.add(this.byWorkspace, workspace, listener);
  }

  close(): void {
    this.unsubscribe();
    this.bySession.clear();
    this.byWorkspace.clear();
  }
}

/** Map key of a session (workspace names cannot contain "/"). */
export function sessionKey(workspace: string, sessionId: string): string {
  return `${workspace}/${sessionId}`;
}

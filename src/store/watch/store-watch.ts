import type { SessionMeta } from "../../../gen/sessiond/v1/session_pb.js";
import { checkWorkspace } from "../../core/ids.js";
import type { SessionKey, StorageEngine } from "../../storage/engine.js";
import type { StoreLimits } from "../limits.js";
import { EntryFollower, type EntrySink } from "./entry-follower.js";
import { EventHub } from "./event-hub.js";
import { SessionFeed } from "./session-feed.js";
import {
  type EntriesLoop,
  type EntryWatchEvent,
  type EntryWatchOptions,
  watchEntries,
} from "./watch-entries.js";
import {
  type SessionWatchEvent,
  type SessionWatchOptions,
  watchSessions,
} from "./watch-sessions.js";

/** Interval of heartbeats when the caller names none, ms. */
export const DEFAULT_HEARTBEAT_MS = 5000;

/**
 * What watching needs of a store: its engine (events and reads), its page
 * size, and the metadata of a session by its full key (NOT_FOUND when gone;
 * the ids come from the engine's events, so nothing is resolved by prefix).
 * The narrow shape keeps the store free to own a StoreWatch without an
 * import cycle.
 */
export interface WatchedStore {
  readonly engine: StorageEngine;
  readonly limits: StoreLimits;
  meta(key: SessionKey): Promise<SessionMeta>;
  /**
   * Negative control for the reliability battery (T7), never set otherwise:
   * every entry watch replays before it subscribes (see EntriesLoop).
   */
  readonly noSubscribeFirst?: boolean;
}

/** A signal that never aborts, for watches left with `break` instead. */
const NEVER = new AbortController().signal;

/**
 * Live watching of one store: the entries of a session and the session
 * changes of a workspace, each an async iterable that misses nothing and
 * repeats nothing across resumes (see watchEntries and watchSessions). One
 * StoreWatch per store shares the work of all its watchers: one engine
 * subscription, one read per append for all the watchers of a session, one
 * numbered feed of session events. The hub and the feed start with the
 * first watch of their kind, so a store nobody watches pays nothing.
 */
export class StoreWatch {
  private hub: EventHub | undefined;
  private feed: SessionFeed | undefined;

  constructor(private readonly store: WatchedStore) {}

  /**
   * Watches one session: first its entries with seq > afterSeq, then each
   * new entry once durable, with heartbeats. NOT_FOUND when the session does
   * not exist or is deleted while watched. Every refusal, a malformed key
   * included, is thrown by the iterator, not by this call.
   */
  entries(key: SessionKey, options: EntryWatchOptions = {}): AsyncGenerator<EntryWatchEvent> {
    // The generator itself, not one that delegates to it: every entry sent to
    // every watcher passes through each generator in the chain.
    return watchEntries(this.loop(key, options));
  }

  /**
   * The same watch pushed to `sink` as its events come, for a server that
   * holds many streams (an idle one is a small object, not a parked
   * generator): see EntryFollower. Started; `close` it when the stream ends.
   */
  follow(
    key: SessionKey,
    options: EntryWatchOptions,
    sink: EntrySink,
  ): Pick<EntryFollower, "resume" | "close"> {
    const follower = new EntryFollower(this.loop(key, options), sink);
    follower.start();
    return follower;
  }

  private loop(key: SessionKey, options: EntryWatchOptions): EntriesLoop {
    this.hub ??= new EventHub(this.store.engine);
    return {
      engine: this.store.engine,
      hub: this.hub,
      key,
      afterSeq: options.afterSeq ?? 0,
      signal: options.signal ?? NEVER,
      heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      pageSize: options.pageSize ?? this.store.limits.defaultPageSize,
      noSubscribeFirst: this.store.noSubscribeFirst === true,
    };
  }

  /**
   * Watches the sessions of a workspace: created, updated (entries
   * appended) and deleted, after the cursor, with heartbeats that carry the
   * newest cursor. A malformed cursor is INVALID_ARGUMENT, thrown by the
   * iterator.
   */
  async *sessions(options: SessionWatchOptions = {}): AsyncGenerator<SessionWatchEvent> {
    const workspace = checkWorkspace(options.workspace);
    this.feed ??= new SessionFeed(this.store.engine);
    yield* watchSessions({
      engine: this.store.engine,
      feed: this.feed,
      meta: (ws, id) => this.store.meta({ workspace: ws, sessionId: id }),
      workspace,
      cursor: options.cursor ?? "",
      signal: options.signal ?? NEVER,
      heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    });
  }

  /** Stops listening to the engine; call it before closing the engine. */
  close(): void {
    this.hub?.close();
    this.feed?.close();
  }
}

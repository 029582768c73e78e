import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type AppendEventRequest,
  BaseSessionService,
  type CreateSessionRequest,
  createSession,
  type DeleteSessionRequest,
  type Event,
  type GetSessionRequest,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type Session,
  State,
} from "@google/adk";
import {
  type Entry,
  type EntryInit,
  type SessiondClient,
  type SessionMeta,
  SortBy,
  SortOrder,
} from "../../client/index.js";
import { timestampMillis } from "../../core/entry.js";
import { DEFAULT_WORKSPACE } from "../../core/ids.js";
import { callsOf, eventEntry, eventJsonOf } from "./event-entry.js";
import { APP_TAG, KIND_TAG, ScopedState, stateEntry, stateOf, USER_TAG } from "./scoped-state.js";

/** Where a SessiondSessionService keeps ADK sessions. */
export interface SessiondSessionServiceOptions {
  /** A client of the sessiond server (`createSessiondClient` of `sessiond/client`). */
  client: SessiondClient;
  /** The workspace (default "default"). */
  workspace?: string;
  /**
   * false drops expected_seq from appendEvent; it exists so that a test
   * can show what the check prevents (two writers' events interleaved).
   * Leave it on.
   */
  compareAndSwap?: boolean;
}

/**
 * The refusal of an event appended to a session another writer has
 * appended to since this copy of it was read: nothing was written. Reload
 * the session with getSession and run again. (ADK for Python raises its
 * StaleSessionError here; ADK for JS has none, so this adapter's is named
 * after it.)
 */
export class StaleSessionError extends Error {
  override readonly name = "StaleSessionError";
}

type Deltas = Record<"app" | "user" | "session", Record<string, unknown>>;

/** A state delta by scope; `temp:` keys are dropped (never stored). */
function splitDelta(delta: Record<string, unknown> | undefined): Deltas {
  const out: Deltas = { app: {}, user: {}, session: {} };
  for (const [k, v] of Object.entries(delta ?? {})) {
    if (k.startsWith(State.TEMP_PREFIX)) continue;
    if (k.startsWith(State.APP_PREFIX)) out.app[k.slice(State.APP_PREFIX.length)] = v;
    else if (k.startsWith(State.USER_PREFIX)) out.user[k.slice(State.USER_PREFIX.length)] = v;
    else out.session[k] = v;
  }
  return out;
}

const tagsOf = (app: string, user: string) => ({
  [KIND_TAG]: "session",
  [APP_TAG]: app,
  [USER_TAG]: user,
});

function owned(meta: SessionMeta | undefined, app: string, user: string): boolean {
  return (
    meta?.tags[KIND_TAG] === "session" && meta.tags[APP_TAG] === app && meta.tags[USER_TAG] === user
  );
}

const empty = (o: Record<string, unknown>) => Object.keys(o).length === 0;

/**
 * ADK's `BaseSessionService` (for `@google/adk`, JS) over a sessiond
 * server, with the rules of the Python adapter: an ADK session is a
 * sessiond session with the same id, tagged `adk.kind` / `adk.app` /
 * `adk.user`; events are entries (typed messages where their content maps,
 * the event's JSON riding along); state by scope as scoped-state.ts says;
 * `appendEvent` appends with `expected_seq` = the head seq the caller's
 * copy of the session was read at, so a writer holding a stale copy gets
 * StaleSessionError instead of interleaving its events with another's.
 */
export class SessiondSessionService extends BaseSessionService {
  private readonly client: SessiondClient;
  private readonly workspace: string;
  private readonly scoped: ScopedState;
  private readonly cas: boolean;
  /** The head seq each session object handed out was read (or last written) at. */
  private readonly readAt = new WeakMap<Session, bigint>();

  constructor(options: SessiondSessionServiceOptions) {
    super();
    this.client = options.client;
    this.workspace = options.workspace ?? DEFAULT_WORKSPACE;
    this.scoped = new ScopedState(this.client, this.workspace);
    this.cas = options.compareAndSwap ?? true;
  }

  async createSession({
    appName,
    userId,
    state,
    sessionId,
  }: CreateSessionRequest): Promise<Session> {
    const id = sessionId?.trim() || randomUUID();
    const deltas = splitDelta(state);
    let res: Awaited<ReturnType<SessiondClient["store"]["createSession"]>>;
    try {
      res = await this.client.store.createSession({
        workspace: this.workspace,
        sessionId: id,
        title: `${appName} / ${userId}`,
        tags: tagsOf(appName, userId),
      });
    } catch (err) {
      if (ConnectError.from(err).code === Code.AlreadyExists) {
        throw new Error(`Session with id ${id} already exists.`);
      }
      throw err;
    }
    if (!res.created) throw new Error(`Session with id ${id} already exists.`);
    let head = res.session?.headSeq ?? 1n;
    if (!empty(deltas.session)) {
      const appended = await this.client.session.append({
        workspace: this.workspace,
        session: id,
        entries: [stateEntry(deltas.session)],
        expectedSeq: head,
      });
      head = appended.headSeq;
    }
    await this.updateScopes(appName, userId, deltas);
    const session = createSession({
      id,
      appName,
      userId,
      state: deltas.session,
      events: [],
      lastUpdateTime: Date.now(),
    });
    this.readAt.set(session, head);
    return this.withScopes(session);
  }

  async getSession({
    appName,
    userId,
    sessionId,
    config,
  }: GetSessionRequest): Promise<Session | undefined> {
    let meta: SessionMeta | undefined;
    let folded: Awaited<ReturnType<SessiondClient["session"]["getState"]>>;
    try {
      [meta, folded] = await Promise.all([
        this.client.store
          .getSession({ workspace: this.workspace, session: sessionId })
          .then((r) => r.session),
        this.client.session.getState({
          workspace: this.workspace,
          session: sessionId,
          pageSize: 1,
        }),
      ]);
    } catch (err) {
      const code = ConnectError.from(err).code;
      if (code === Code.NotFound || code === Code.InvalidArgument) return undefined;
      throw err;
    }
    if (!owned(meta, appName, userId) || meta?.id !== sessionId || folded.state === undefined) {
      return undefined;
    }
    const head = folded.state.headSeq;
    let events = await this.pathEvents(sessionId, folded.state.currentLeafId, head);
    if (config?.numRecentEvents) events = events.slice(-config.numRecentEvents);
    if (config?.afterTimestamp) {
      const after = config.afterTimestamp;
      let i = events.length - 1;
      while (i >= 0 && (events[i] as Event).timestamp >= after) i--;
      if (i >= 0) events = events.slice(i + 1);
    }
    const session = createSession({
      id: sessionId,
      appName,
      userId,
      state: stateOf(folded.state.custom),
      events,
      lastUpdateTime: Math.floor(timestampMillis(meta.updatedAt)),
    });
    this.readAt.set(session, head);
    return this.withScopes(session);
  }

  /** The app's (and user's) sessions, without events or state: one ListSessions per page. */
  async listSessions(request: ListSessionsRequest): Promise<ListSessionsResponse> {
    const { appName, userId, limit, offset, page, order } = request;
    const tags: Record<string, string> = { [KIND_TAG]: "session", [APP_TAG]: appName };
    if (userId !== undefined) tags[USER_TAG] = userId;
    const all: Session[] = [];
    let pageToken = "";
    do {
      const res = await this.client.store.listSessions({
        workspace: this.workspace,
        filter: { tags },
        sortBy: SortBy.CREATED,
        order: SortOrder.OLDEST_FIRST,
        pageToken,
      });
      for (const m of res.sessions) {
        all.push(
          createSession({
            id: m.id,
            appName,
            userId: m.tags[USER_TAG] ?? "",
            state: {},
            events: [],
            lastUpdateTime: Math.floor(timestampMillis(m.updatedAt)),
          }),
        );
      }
      pageToken = res.nextPageToken;
    } while (pageToken !== "");
    if (order !== undefined) {
      const sign = order === "asc" ? 1 : -1;
      all.sort((a, b) => sign * (a.lastUpdateTime - b.lastUpdateTime) || a.id.localeCompare(b.id));
    }
    const totalItems = all.length;
    if (limit === undefined) {
      return {
        sessions: offset ? all.slice(offset) : all,
        page: 1,
        limit: totalItems,
        totalItems,
        totalPages: totalItems === 0 ? 0 : 1,
      };
    }
    const start = page !== undefined ? (page - 1) * limit : (offset ?? 0);
    return {
      sessions: all.slice(start, start + limit),
      page: page ?? (limit === 0 ? 1 : Math.floor(start / limit) + 1),
      limit,
      totalItems,
      totalPages: limit === 0 ? 0 : Math.ceil(totalItems / limit),
    };
  }

  async deleteSession({ appName, userId, sessionId }: DeleteSessionRequest): Promise<void> {
    try {
      const meta = (
        await this.client.store.getSession({ workspace: this.workspace, session: sessionId })
      ).session;
      if (!owned(meta, appName, userId) || meta?.id !== sessionId) return;
      await this.client.store.deleteSession({ workspace: this.workspace, session: sessionId });
    } catch (err) {
      const code = ConnectError.from(err).code;
      if (code !== Code.NotFound && code !== Code.InvalidArgument) throw err;
    }
  }

  /**
   * Stores the event and its state delta, unless another writer appended
   * since `session` was read: then StaleSessionError, nothing written. The
   * session's own state and the event go in one atomic Append; `app:` /
   * `user:` deltas follow, each merged into its shared scope.
   */
  override async appendEvent({ session, event }: AppendEventRequest): Promise<Event> {
    if (event.partial) return event;
    const deltas = splitDelta(event.actions?.stateDelta);
    const open = new Set<string>();
    for (const e of session.events) {
      const { made, answered } = callsOf(e);
      for (const id of made) open.add(id);
      for (const id of answered) open.delete(id);
    }
    const entries: EntryInit[] = [];
    if (!empty(deltas.session)) {
      entries.push(stateEntry({ ...splitDelta(session.state).session, ...deltas.session }));
    }
    const stateDelta = Object.fromEntries(
      Object.entries(event.actions?.stateDelta ?? {}).filter(
        ([k]) => !k.startsWith(State.TEMP_PREFIX),
      ),
    );
    entries.push(eventEntry({ ...event, actions: { ...event.actions, stateDelta } }, open));
    const expected = this.readAt.get(session);
    let head: bigint;
    try {
      const res = await this.client.session.append({
        workspace: this.workspace,
        session: session.id,
        entries,
        expectedSeq: this.cas ? expected : undefined,
      });
      head = res.headSeq;
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.code === Code.Aborted) {
        throw new StaleSessionError(
          `session ${session.id} was appended to since this copy was read (at seq ${expected}): ${e.rawMessage}. Reload it with getSession.`,
        );
      }
      if (e.code === Code.NotFound) throw new Error(`Session ${session.id} not found.`);
      throw err;
    }
    this.readAt.set(session, head);
    await this.updateScopes(session.appName, session.userId, deltas);
    await super.appendEvent({ session, event });
    session.lastUpdateTime = event.timestamp;
    return event;
  }

  /** The events on the path ending at `leaf` (seq <= `head`), oldest first. */
  private async pathEvents(session: string, leaf: string, head: bigint): Promise<Event[]> {
    const byId = new Map<string, Entry>();
    let after = 0n;
    while (after < head) {
      const page = await this.client.session.getEntries({
        workspace: this.workspace,
        session,
        afterSeq: after,
      });
      if (page.entries.length === 0) break;
      for (const e of page.entries) if (e.seq <= head) byId.set(e.id, e);
      after = page.entries[page.entries.length - 1]?.seq ?? head;
    }
    const events: Event[] = [];
    for (
      let e = byId.get(leaf);
      e !== undefined;
      e = e.parentId ? byId.get(e.parentId) : undefined
    ) {
      const json = eventJsonOf(e);
      if (json !== undefined) events.push(JSON.parse(json) as Event);
    }
    return events.reverse();
  }

  private async updateScopes(app: string, user: string, deltas: Deltas): Promise<void> {
    if (!empty(deltas.app)) await this.scoped.updateApp(app, deltas.app);
    if (!empty(deltas.user)) await this.scoped.updateUser(app, user, deltas.user);
  }

  /** Adds the app's and the user's state to a session's own, with their prefixes (as ADK's services do). */
  private async withScopes(session: Session): Promise<Session> {
    const [app, user] = await Promise.all([
      this.scoped.app(session.appName),
      this.scoped.user(session.appName, session.userId),
    ]);
    for (const [k, v] of Object.entries(app)) session.state[State.APP_PREFIX + k] = v;
    for (const [k, v] of Object.entries(user)) session.state[State.USER_PREFIX + k] = v;
    return session;
  }
}

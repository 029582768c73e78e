import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
  SessionSummaryEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { SessiondClient } from "../../client/index.js";
import { timestampMillis } from "../../core/entry.js";
import { DEFAULT_WORKSPACE } from "../../core/ids.js";
import type { SessionLog } from "../../core/session-log.js";
import { isAlreadyExists, isNotFound, plannedEntry, RemoteSession } from "../remote-session.js";
import { chunks, type LinePlan, planLines } from "./line-plan.js";
import {
  keyName,
  legacySessionIdOf,
  mainSessionId,
  PROJECT_TAG,
  SESSION_TAG,
  SUBAGENT_TYPE,
  SUBPATH_TAG,
  sessionIdOf,
  tagsOf,
} from "./session-keys.js";
import { loadSummaryFold, SessionSummaries, type SummaryFold } from "./session-summary.js";
import { summaryOfTags, summaryTagChanges } from "./summary-tags.js";
import { lineOf } from "./transcript-entry.js";

/** Where a SessiondSessionStore keeps transcripts. */
export interface SessiondSessionStoreOptions {
  /** A client of the sessiond server (`createSessiondClient` of `sessiond/client`). */
  client: SessiondClient;
  /** The workspace (default "default"); project keys are tags inside it. */
  workspace?: string;
}

/**
 * The refusal of lines whose uuid is stored with other content. A uuid is
 * the SDK's idempotency key, so the stored line stays; skipping the changed
 * one silently would hide a transcript that no longer matches its mirror.
 * The rest of the batch is written before this is thrown: the SDK's retry
 * skips it as a replay and meets the same refusal, then reports the batch
 * as a mirror error.
 */
function conflictError(uuids: readonly string[]): ConnectError {
  const shown = uuids.slice(0, 5).join(", ") + (uuids.length > 5 ? ", …" : "");
  return new ConnectError(
    `${uuids.length} line(s) re-appended with a stored uuid but other content (${shown}): the stored line is kept, a uuid is an idempotency key`,
    Code.AlreadyExists,
  );
}

/** A key's session mirrored, and whether this store made sure the session exists for the key. */
interface Mirror {
  remote: RemoteSession;
  ensured: boolean;
}

/** Sessions whose mirror a store keeps (the least recently opened is dropped first). */
const MIRRORS = 256;

/** Sessions a listing reads at once to fold the summaries they do not hold yet. */
const BACKFILLS = 4;

/** `work` over `items`, at most `limit` at a time, results in order. */
async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>) {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The Claude Agent SDK's `SessionStore` (where `query({ options: {
 * sessionStore } })` mirrors transcripts and resumes them from) over a
 * sessiond server: a session per key, a subagent session per subpath, the
 * lines as typed entries each carrying the line itself (see
 * transcript-entry.ts), so `load` returns them deep-equal and in order.
 * Appends for one key are queued in call order in this process and written
 * with `expected_seq` (re-planned when another process wrote first), so
 * concurrent appends lose nothing. A main session's summary for
 * `listSessionSummaries` is folded with the SDK's `foldSessionSummary` and
 * written in the same Append as the lines (summary-tags.ts), so two
 * writers cannot lose each other's fold.
 */
export class SessiondSessionStore implements SessionStore {
  private readonly workspace: string;
  private readonly client: SessiondClient;
  /** Per key: its session's mirror. */
  private readonly mirrors = new Map<string, Mirror>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly summaries = new SessionSummaries();

  constructor(options: SessiondSessionStoreOptions) {
    this.client = options.client;
    this.workspace = options.workspace ?? DEFAULT_WORKSPACE;
  }

  append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return this.queued(key, async () => {
      const fold = key.subpath === undefined ? await loadSummaryFold() : undefined;
      const conflicts: string[] = [];
      for (const chunk of chunks(entries)) {
        let planned: string[] = [];
        const write = (remote: RemoteSession) =>
          remote.append((log) => {
            const plan = planLines(log, chunk);
            planned = plan.conflicts;
            return key.subpath === undefined
              ? this.withSummary(log, key, plan, fold)
              : plan.entries;
          });
        try {
          await write(await this.ensure(key));
        } catch (err) {
          // Deleted by another process since this one last wrote: create it again.
          if (!isNotFound(err)) throw err;
          this.forget(key.sessionId);
          await write(await this.ensure(key));
        }
        conflicts.push(...planned);
      }
      if (conflicts.length > 0) throw conflictError(conflicts);
    });
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    let log: SessionLog;
    try {
      log = await this.mirror(key).read();
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const legacy = await this.readLegacy(key);
      if (legacy === undefined) {
        this.forget(key.sessionId);
        return null;
      }
      log = legacy;
    }
    if (log.tags[PROJECT_TAG] !== key.projectKey) return null;
    const lines = log.entries().flatMap((e) => lineOf(e) ?? []);
    return lines.length > 0 ? lines : null;
  }

  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    const sessions = await this.list({ filter: { tags: { [PROJECT_TAG]: projectKey } } });
    return sessions.map((s) => ({
      sessionId: s.tags[SESSION_TAG] ?? s.id,
      mtime: Math.floor(timestampMillis(s.updatedAt)),
    }));
  }

  /**
   * The summaries main sessions hold in their tags, read from pages of
   * ListSessions. A session that holds none (written before summaries were
   * kept, or whose summary is too large for its tags) is read and folded
   * here, and its summary written (keeping its update time), so that it is
   * read once; when that fails it is left out, and the SDK reads it itself.
   */
  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const sessions = await this.list({ filter: { tags: { [PROJECT_TAG]: projectKey } } });
    const fold = await loadSummaryFold();
    const summaries = await inPool(sessions, BACKFILLS, async (s) => {
      const key = { projectKey, sessionId: s.tags[SESSION_TAG] ?? s.id };
      const data =
        summaryOfTags(s.tags) ??
        (fold === undefined
          ? undefined
          : await this.backfill(s.id, key, fold).catch(() => undefined));
      const mtime = Math.floor(timestampMillis(s.updatedAt));
      return data === undefined ? [] : [{ sessionId: key.sessionId, mtime, data }];
    });
    return summaries.flat();
  }

  async delete(key: SessionKey): Promise<void> {
    try {
      for (const session of [sessionIdOf(key), legacySessionIdOf(key)]) {
        if (session === undefined) continue;
        const meta = await this.client.store
          .getSession({ workspace: this.workspace, session })
          .catch((err: unknown) => {
            if (isNotFound(err)) return undefined;
            throw err;
          });
        if (meta?.session?.tags[PROJECT_TAG] !== key.projectKey) continue;
        await this.client.store.deleteSession({
          workspace: this.workspace,
          session,
          includeSubagents: key.subpath === undefined,
        });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    } finally {
      this.forget(key.sessionId);
    }
  }

  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    try {
      const sessions = await this.list({
        parentSessionId: mainSessionId(key.sessionId),
        filter: { tags: { [PROJECT_TAG]: key.projectKey } },
      });
      return [...new Set(sessions.flatMap((s) => s.tags[SUBPATH_TAG] ?? []))];
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  }

  private async list(req: { parentSessionId?: string; filter: { tags: Record<string, string> } }) {
    const out = [];
    let pageToken = "";
    do {
      const page = await this.client.store.listSessions({
        ...req,
        workspace: this.workspace,
        pageToken,
      });
      out.push(...page.sessions);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  /** The key's session, created (with its main session, for a subpath) when it does not exist. */
  private async ensure(key: SessionKey): Promise<RemoteSession> {
    const known = this.mirrors.get(keyName(key));
    if (known?.ensured) return known.remote;
    if (key.subpath !== undefined) {
      await this.create({ projectKey: key.projectKey, sessionId: key.sessionId });
    }
    // A mirror that load moved to the session's old id stays there.
    const moved = known?.remote.address.sessionId;
    const legacy =
      moved !== undefined && moved !== sessionIdOf(key) ? moved : await this.legacy(key);
    if (legacy === undefined) await this.create(key);
    const remote = legacy === undefined ? this.mirror(key) : this.repoint(key, legacy);
    this.slot(key).ensured = true;
    return remote;
  }

  /**
   * The old id of a subpath's session (session-keys.ts `legacySessionIdOf`)
   * when the session exists under it for this key and not under the new
   * one; else undefined.
   */
  private async legacy(key: SessionKey): Promise<string | undefined> {
    const old = legacySessionIdOf(key);
    if (old === undefined) return undefined;
    const find = (session: string) =>
      this.client.store.getSession({ workspace: this.workspace, session }).then(
        (res) => res.session,
        (err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        },
      );
    if ((await find(sessionIdOf(key))) !== undefined) return undefined;
    const meta = await find(old);
    const mine =
      meta?.tags[PROJECT_TAG] === key.projectKey && meta.tags[SUBPATH_TAG] === key.subpath;
    return mine ? old : undefined;
  }

  /** The log of a subpath's session stored under its old id (undefined: none). */
  private async readLegacy(key: SessionKey): Promise<SessionLog | undefined> {
    const old = await this.legacy(key);
    if (old === undefined) return undefined;
    try {
      return await this.repoint(key, old).read();
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The key's mirror moved to the session `sessionId` (its session's old id). */
  private repoint(key: SessionKey, sessionId: string): RemoteSession {
    const slot = this.slot(key);
    if (slot.remote.address.sessionId !== sessionId) {
      slot.remote = new RemoteSession(this.client, { workspace: this.workspace, sessionId });
    }
    return slot.remote;
  }

  /**
   * The entries of `plan` with, after them, a SessionInfo that sets the
   * session's summary tags when the lines change them (written under the
   * same expected_seq as the lines). Without the SDK's fold the summary
   * tags are removed instead once lines are written, so none goes stale.
   * A SessionInfo written alone keeps the newest entry's time, so that
   * the session's update time (the SDK's mtime) stays what it was.
   */
  private withSummary(
    log: SessionLog,
    key: SessionKey,
    plan: LinePlan,
    fold: SummaryFold | undefined,
  ): Entry[] {
    if (fold === undefined && plan.entries.length === 0) return plan.entries;
    const data = fold === undefined ? undefined : this.summaries.after(log, key, fold, plan.lines);
    const tags = summaryTagChanges(log.tags, data);
    if (Object.keys(tags).length === 0) return plan.entries;
    const summary = plannedEntry({
      kind: { case: "sessionInfo", value: { tags } },
      timestamp: plan.entries.length === 0 ? log.last?.timestamp : undefined,
    });
    return [...plan.entries, summary];
  }

  /**
   * The summary of a main session that holds none in its tags, folded from
   * its log and written to it (read by a mirror of its own: a listing does
   * not fill the store's mirrors).
   */
  private async backfill(
    sessionId: string,
    key: SessionKey,
    fold: SummaryFold,
  ): Promise<Record<string, unknown>> {
    const remote = new RemoteSession(this.client, { workspace: this.workspace, sessionId });
    let data: Record<string, unknown> = {};
    const none: LinePlan = { entries: [], lines: [], conflicts: [] };
    await remote.append((log) => {
      data = this.summaries.after(log, key, fold, []);
      return this.withSummary(log, key, none, fold);
    });
    return data;
  }

  private async create(key: SessionKey): Promise<void> {
    const sessionId = sessionIdOf(key);
    const sub = key.subpath !== undefined;
    let tags: Record<string, string> | undefined;
    try {
      const res = await this.client.store.createSession({
        workspace: this.workspace,
        sessionId,
        tags: tagsOf(key),
        parentSessionId: sub ? mainSessionId(key.sessionId) : undefined,
        agentType: sub ? SUBAGENT_TYPE : undefined,
      });
      tags = res.session?.tags;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      tags = (await this.client.store.getSession({ workspace: this.workspace, session: sessionId }))
        .session?.tags;
    }
    if (tags?.[PROJECT_TAG] !== key.projectKey) {
      throw new ConnectError(
        `sessiond session "${sessionId}" exists and does not hold project "${key.projectKey}"`,
        Code.FailedPrecondition,
      );
    }
  }

  private mirror(key: SessionKey): RemoteSession {
    return this.slot(key).remote;
  }

  private slot(key: SessionKey): Mirror {
    const name = keyName(key);
    let slot = this.mirrors.get(name);
    if (slot === undefined) {
      const address = { workspace: this.workspace, sessionId: sessionIdOf(key) };
      slot = { remote: new RemoteSession(this.client, address), ensured: false };
      if (this.mirrors.size >= MIRRORS) {
        this.mirrors.delete(this.mirrors.keys().next().value as string);
      }
      this.mirrors.set(name, slot);
    }
    return slot;
  }

  /** Drops the mirrors of a session id and its subpaths (deleted, here or elsewhere). */
  private forget(sessionId: string): void {
    for (const [name, { remote }] of this.mirrors) {
      if ((JSON.parse(name) as unknown[])[1] === sessionId) {
        remote.forget();
        this.mirrors.delete(name);
      }
    }
  }

  /** Runs `work` after the work queued before it for the same key (call order within a process). */
  private queued<T>(key: SessionKey, work: () => Promise<T>): Promise<T> {
    const name = keyName(key);
    const run = (this.queues.get(name) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    this.queues.set(name, tail);
    void tail.then(() => {
      if (this.queues.get(name) === tail) this.queues.delete(name);
    });
    return run;
  }
}

import type {
  AgentInputItem,
  SessionHistoryRewriteArgs,
  SessionHistoryRewriteAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from "@openai/agents-core";
import type { SessiondClient } from "../../client/index.js";
import { DEFAULT_WORKSPACE } from "../../core/ids.js";
import { isAlreadyExists, isNotFound, RemoteSession } from "../remote-session.js";
import { planCompaction, planMutations } from "./history-rewrite.js";
import { itemsOnPath, planItems, planTransaction } from "./item-plan.js";

/** Where a SessiondSession keeps its items. */
export interface SessiondSessionOptions {
  /** A client of the sessiond server (`createSessiondClient` of `sessiond/client`). */
  client: SessiondClient;
  /** The workspace (default "default"). */
  workspace?: string;
  /**
   * The sessiond session to continue, created at first use when it does not
   * exist; left out, a new session is created at first use (its id is what
   * `getSessionId()` returns: keep it to resume after a restart).
   */
  sessionId?: string;
  /** Title of a session created here. */
  title?: string;
  /** Tags of a session created here (see the README, Finding and expiring sessions). */
  tags?: Record<string, string>;
}

/**
 * The OpenAI Agents SDK's `Session` (conversation memory of a `Runner`) kept
 * in a sessiond session, mapped onto its tree rather than around it: items
 * are typed entries appended at the leaf (see item-entry.ts), `popItem`
 * rewinds the leaf past the newest item (the item stays in the history and
 * the tree), a compaction is a Compaction entry, a rewrite a branch (see
 * history-rewrite.ts), `clearSession` resets the leaf to the root (history
 * kept) and `eraseSession` deletes the content. Every change is
 * planned against the session as the server has it and written with
 * `expected_seq`, re-planned when another runner wrote first, so runners
 * sharing a session never lose each other's items.
 */
export class SessiondSession
  implements SessionHistoryTransactionAwareSession, SessionHistoryRewriteAwareSession
{
  private remote: Promise<RemoteSession> | undefined;

  constructor(private readonly options: SessiondSessionOptions) {}

  async getSessionId(): Promise<string> {
    return (await this.session()).address.sessionId;
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = itemsOnPath(await (await this.session()).read()).flatMap((e) => e.items);
    if (limit === undefined) return items;
    return limit <= 0 ? [] : items.slice(-limit);
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    await (await this.session()).append((log) => planItems(log, items));
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    let popped: AgentInputItem | undefined;
    await (await this.session()).rewind((log) => {
      const last = itemsOnPath(log).at(-1);
      popped = last?.items.at(-1);
      return last?.entry.parentId;
    });
    return popped;
  }

  /**
   * The SDK's atomic, idempotent history change (used, e.g., to keep a turn
   * whose output a guardrail blocked): one Append holding a record of the
   * operation and the items, so a retry is recognised (see item-plan.ts).
   * Unlike MemorySession, an operation stays recorded after clearSession.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    await (await this.session()).append((log) => planTransaction(log, args));
  }

  /**
   * The SDK's compaction (a model response holding a `compaction` item): the
   * session's items become `items`, in one Append of a Compaction entry
   * replacing the current items, then `items`. The replaced items leave
   * getItems and GetState's CONTEXT view, and stay in its HISTORY view and
   * the tree. Without this method the SDK would clear the session and add
   * the items, two writes with a restore if the second fails.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    await (await this.session()).append((log) => planCompaction(log, items));
  }

  /**
   * The SDK's history mutations (a function call replaced by another with
   * its call id), applied as MemorySession applies them, in one Append: the
   * items from the first changed one on are written again under the entry
   * before it, so the old ones stay in the tree as a branch. Session
   * wrappers (e.g. a compaction session of `@openai/agents-openai`) call it
   * when the session has it; without it they clear the session and add
   * every item again.
   */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    if (args.mutations.length === 0) return;
    await (await this.session()).append((log) => planMutations(log, args.mutations));
  }

  /**
   * The SDK's clear, as a rewind: the leaf goes back to the root, so the
   * model sees no items, while the history stays readable (GetState's
   * HISTORY view, the tree, search). For a clear that leaves nothing
   * readable, use eraseSession.
   */
  async clearSession(): Promise<void> {
    await (await this.session()).reset();
  }

  /**
   * A clear that erases: the session is deleted (DeleteSession: its
   * entries are gone from every read) and created again, empty, under the
   * same id with this session's title and tags, so `getSessionId()` and a
   * resume by id keep working. A runner that writes meanwhile may land
   * before the delete (erased with it) or after the new creation (kept).
   */
  async eraseSession(): Promise<void> {
    const remote = await this.session();
    const { workspace, sessionId } = remote.address;
    const { client, title, tags } = this.options;
    try {
      await client.store.deleteSession({ workspace, session: sessionId });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    remote.forget();
    try {
      await client.store.createSession({ workspace, sessionId, title, tags });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  /** The session, created at first use (once, however many calls race for it). */
  private session(): Promise<RemoteSession> {
    if (this.remote === undefined) {
      this.remote = this.open();
      this.remote.catch(() => {
        this.remote = undefined;
      });
    }
    return this.remote;
  }

  private async open(): Promise<RemoteSession> {
    const { client, title, tags, sessionId } = this.options;
    const workspace = this.options.workspace ?? DEFAULT_WORKSPACE;
    try {
      const res = await client.store.createSession({ workspace, title, tags, sessionId });
      return new RemoteSession(client, { workspace, sessionId: res.session?.id ?? "" });
    } catch (err) {
      if (sessionId === undefined || !isAlreadyExists(err)) throw err;
      return new RemoteSession(client, { workspace, sessionId });
    }
  }
}

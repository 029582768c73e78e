import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { EntryInit, SessiondClient } from "../../client/index.js";

/**
 * Where ADK's state lives in sessiond, as the Python adapter keeps it:
 * - session state (keys without a prefix): a Custom entry (`adk.state`)
 *   holding the session's whole state as JSON text, appended in the same
 *   Append as the event that changed it, just before it; the fold gives
 *   the last one on the path, so state follows rewind and fork;
 * - `app:` and `user:` state: one session per app (`adk-app-<hash>`) and
 *   one per (app, user) (`adk-user-<hash>`), whose `adk.state` entries
 *   hold the scope's whole state, merged with compare-and-swap on the head
 *   seq (a lost race reads again and retries: no update is lost);
 * - `temp:` keys are never written.
 */
export const STATE_NAMESPACE = "adk.state";
export const KIND_TAG = "adk.kind";
export const APP_TAG = "adk.app";
export const USER_TAG = "adk.user";

const CAS_ATTEMPTS = 50;

/** A Custom entry holding `state` whole (JSON text: a Struct would turn integers into floats). */
export function stateEntry(state: Record<string, unknown>): EntryInit {
  return {
    kind: {
      case: "custom",
      value: { namespace: STATE_NAMESPACE, data: { state: JSON.stringify(state) } },
    },
  };
}

/** The state a folded `custom` map holds (empty when none was written). */
export function stateOf(custom: Record<string, unknown> | undefined): Record<string, unknown> {
  const data = custom?.[STATE_NAMESPACE] as { state?: unknown } | undefined;
  return typeof data?.state === "string" ? JSON.parse(data.state) : {};
}

function hashed(prefix: string, ...parts: string[]): string {
  return `${prefix}${createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 40)}`;
}

/** The session holding `app:` state of an app. */
export const appStateSession = (app: string) => hashed("adk-app-", app);
/** The session holding `user:` state of a user of an app. */
export const userStateSession = (app: string, user: string) => hashed("adk-user-", app, user);

/** Reads and updates the `app:` / `user:` state sessions of a workspace. */
export class ScopedState {
  constructor(
    private readonly client: SessiondClient,
    private readonly workspace: string,
  ) {}

  async app(app: string): Promise<Record<string, unknown>> {
    return (await this.read(appStateSession(app))).state;
  }

  async user(app: string, user: string): Promise<Record<string, unknown>> {
    return (await this.read(userStateSession(app, user))).state;
  }

  updateApp(app: string, delta: Record<string, unknown>): Promise<void> {
    return this.update(appStateSession(app), { [KIND_TAG]: "app-state", [APP_TAG]: app }, delta);
  }

  updateUser(app: string, user: string, delta: Record<string, unknown>): Promise<void> {
    const tags = { [KIND_TAG]: "user-state", [APP_TAG]: app, [USER_TAG]: user };
    return this.update(userStateSession(app, user), tags, delta);
  }

  private async read(session: string): Promise<{ state: Record<string, unknown>; head?: bigint }> {
    try {
      const res = await this.client.session.getState({
        workspace: this.workspace,
        session,
        pageSize: 1,
      });
      return { state: stateOf(res.state?.custom), head: res.state?.headSeq };
    } catch (err) {
      if (ConnectError.from(err).code === Code.NotFound) return { state: {} };
      throw err;
    }
  }

  /** Merges `delta` into the scope: compare-and-swap on the head seq, read again on a lost race. */
  private async update(
    session: string,
    tags: Record<string, string>,
    delta: Record<string, unknown>,
  ): Promise<void> {
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const { state, head } = await this.read(session);
      if (head === undefined) {
        await this.client.store.createSession({
          workspace: this.workspace,
          sessionId: session,
          title: session,
          tags,
        });
        continue;
      }
      try {
        await this.client.session.append({
          workspace: this.workspace,
          session,
          entries: [stateEntry({ ...state, ...delta })],
          expectedSeq: head,
        });
        return;
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Aborted) throw err;
      }
    }
    throw new ConnectError(
      `state session ${session}: still contended after ${CAS_ATTEMPTS} attempts`,
      Code.Aborted,
    );
  }
}

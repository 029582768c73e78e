/**
 * Writers for the kill tests (T1, T4 (a)): each appends batches of 1–5
 * entries over the wire with entry ids it chose itself, records an
 * acknowledgement only when the server answered OK, and keeps an operation
 * whose outcome is unknown (the server died, the connection broke, a
 * deadline passed) as `pending`, to be sent again, identical, to the next
 * server: the retry must then be answered OK (written or de-duplicated).
 *
 * The ledger (what was acknowledged, at which seq; what was attempted) is
 * shared by all writers of a test and checked against the files by
 * jsonl-check.ts.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { createSessiondClient, type SessiondClient } from "../../../src/client/index.js";
import type { Rng } from "./random.js";

export const WORKSPACE = "default";

/** session id → entry id → acknowledged seq; sessions whose create was acknowledged. */
export class Ledger {
  readonly acked = new Map<string, Map<string, number>>();
  /** Every entry id sent at least once (outcome possibly unknown), per session. */
  readonly attempted = new Map<string, Set<string>>();
  /** Sessions whose CreateSession was answered OK. */
  readonly sessions = new Set<string>();
  ackedEntries = 0;

  ack(sessionId: string, id: string, seq: number): void {
    let m = this.acked.get(sessionId);
    if (m === undefined) {
      m = new Map();
      this.acked.set(sessionId, m);
    }
    if (!m.has(id)) this.ackedEntries++;
    m.set(id, seq);
  }

  attempt(sessionId: string, id: string): void {
    let s = this.attempted.get(sessionId);
    if (s === undefined) {
      s = new Set();
      this.attempted.set(sessionId, s);
    }
    s.add(id);
  }
}

export type Op =
  | { readonly kind: "create"; readonly sessionId: string }
  | {
      readonly kind: "append";
      readonly sessionId: string;
      readonly ids: readonly string[];
      readonly texts: readonly string[];
    };

/** A text of `n` characters, cheap to make. */
function text(rng: Rng, n: number): string {
  const word = `w${rng.int(0, 1e9).toString(36)} `;
  return word.repeat(Math.ceil(n / word.length)).slice(0, n);
}

/** Outcome-unknown failures: the same op is sent again. Anything else is a refusal. */
export function outcomeUnknown(err: unknown): boolean {
  const ce = ConnectError.from(err);
  return (
    ce.code === Code.Unavailable ||
    ce.code === Code.Aborted ||
    ce.code === Code.Canceled ||
    ce.code === Code.DeadlineExceeded ||
    ce.code === Code.Unknown ||
    ce.code === Code.Internal
  );
}

export interface WriterFigures {
  ops: number;
  retries: number;
  /** Ops answered with a non-retryable error (a violation unless explained). */
  refused: number;
  /** Retried ops that turned out already stored (de-duplicated). */
  deduplicated: number;
}

export interface RoundControl {
  /** Set when the server is about to be killed / the round ends: stop sending new ops. */
  stopped: boolean;
  /** Called on every acknowledgement (for the stale-lock measurement). */
  onAck?: (sessionId: string) => void;
  /** Called with every outcome-unknown error (for the log). */
  onUnknown?: (err: unknown) => void;
}

export class Writer {
  pending: Op | undefined;
  /** Creates to send before any new append. */
  private readonly creates: string[] = [];
  private client: SessiondClient | undefined;
  private next = 0;
  readonly figures: WriterFigures = { ops: 0, retries: 0, refused: 0, deduplicated: 0 };
  readonly details: string[] = [];

  constructor(
    readonly name: string,
    private readonly rng: Rng,
    private readonly ledger: Ledger,
    /** Picks the session of the next append among those whose create was acknowledged. */
    private readonly pickSession: (rng: Rng) => string | undefined,
    private readonly bigEntryChance = 0.08,
  ) {}

  /** Points the writer at a (restarted) server. */
  connect(url: string): void {
    this.client = createSessiondClient({ baseUrl: url, retry: false, timeoutMs: 40_000 });
  }

  /** Queues a create of `sessionId` (sent before any new append). */
  create(sessionId: string): void {
    this.creates.push(sessionId);
  }

  /** Re-sends the pending op (only) until it is answered or `deadline`. */
  async flush(deadline: number): Promise<void> {
    const ctl: RoundControl = { stopped: false };
    for (let i = 0; i < 10_000 && this.pending !== undefined && Date.now() < deadline; i++) {
      await this.run(ctl, deadline, 1);
    }
  }

  private newAppend(): Op | undefined {
    const sessionId = this.pickSession(this.rng);
    if (sessionId === undefined) return undefined;
    const n = this.rng.int(1, 5);
    const ids: string[] = [];
    const texts: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(`${this.name}-${this.next++}`);
      // Mostly small entries, now and then a big one: a write spanning many
      // pages is the one a SIGKILL can cut short (a torn tail).
      const size = this.rng.bool(this.bigEntryChance)
        ? this.rng.int(4_000, 60_000)
        : this.rng.int(10, 300);
      texts.push(text(this.rng, size));
    }
    return { kind: "append", sessionId, ids, texts };
  }

  /** Sends ops until `ctl.stopped`, `deadline`, or `maxOps`; keeps an unfinished op pending. */
  async run(ctl: RoundControl, deadline: number, maxOps = 100_000): Promise<void> {
    for (let i = 0; i < maxOps && !ctl.stopped && Date.now() < deadline; i++) {
      // Read each time: connect() swaps the client when the server was restarted.
      const client = this.client;
      if (client === undefined) throw new Error("writer not connected");
      const create = this.pending === undefined ? this.creates.shift() : undefined;
      const op: Op | undefined =
        this.pending ??
        (create !== undefined ? { kind: "create", sessionId: create } : this.newAppend());
      if (op === undefined) {
        await sleep(5);
        continue;
      }
      const retry = this.pending !== undefined;
      this.pending = op;
      if (retry) this.figures.retries++;
      else this.figures.ops++;
      try {
        if (op.kind === "create") {
          await client.store.createSession({
            workspace: WORKSPACE,
            sessionId: op.sessionId,
            title: `reliability ${op.sessionId}`,
          });
          this.ledger.sessions.add(op.sessionId);
        } else {
          for (const id of op.ids) this.ledger.attempt(op.sessionId, id);
          const res = await client.session.append({
            workspace: WORKSPACE,
            session: op.sessionId,
            entries: op.ids.map((id, k) => ({
              id,
              kind: {
                case: "message",
                value: {
                  role: Role.USER,
                  content: [{ part: { case: "text", value: op.texts[k] } }],
                },
              },
            })),
          });
          if (res.deduplicated) this.figures.deduplicated++;
          res.entries.forEach((e, k) => {
            const id = op.ids[k] as string;
            if (e.id !== id) this.detail(`append answered entry ${e.id} for ${id}`);
            this.ledger.ack(op.sessionId, id, Number(e.seq));
          });
          if (res.entries.length !== op.ids.length) {
            this.detail(`append of ${op.ids.length} answered ${res.entries.length} entries`);
          }
        }
        this.pending = undefined;
        ctl.onAck?.(op.sessionId);
      } catch (err) {
        if (outcomeUnknown(err)) {
          if (ctl.stopped) return;
          ctl.onUnknown?.(err);
          await sleep(this.rng.int(5, 40));
          continue;
        }
        // A refusal of an op that was sent identically before (or never): a violation.
        this.figures.refused++;
        this.detail(
          `${op.kind} on ${op.sessionId}${retry ? " (retry)" : ""} refused: ${ConnectError.from(err).message}`,
        );
        this.pending = undefined;
      }
    }
  }

  private detail(d: string): void {
    if (this.details.length < 20) this.details.push(`${this.name}: ${d}`);
  }
}

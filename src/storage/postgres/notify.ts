import postgres from "postgres";
import type { StorageEvent, StorageEventType } from "../engine.js";
import type { Q } from "./context.js";

/** The channel every replica NOTIFYs on and LISTENs to. */
export const CHANNEL = "sessiond_events";

/** The application_name of every replica's LISTEN connection. */
export const LISTEN_APPLICATION = "sessiond-listen";

/** The NOTIFY payload: a wake-up, never data (a few hundred bytes at most: ids are <= 64 chars). */
interface Wire {
  /** event type */
  t: StorageEventType;
  w: string;
  s: string;
  /** head seq */
  h: number;
  /** the replica that committed it */
  r: string;
  /** when it was queued, ms since the epoch (the receiver's NOTIFY lag metric); absent from older replicas */
  c?: number;
  /** "withheld": the seqs of the rewritten entries */
  q?: number[];
}

export function notifyPayload(replica: string, e: StorageEvent): string {
  const wire: Wire = {
    t: e.type,
    w: e.workspace,
    s: e.sessionId,
    h: e.headSeq,
    r: replica,
    c: Date.now(),
  };
  if (e.seqs !== undefined) wire.q = [...e.seqs];
  return JSON.stringify(wire);
}

/**
 * Queues the wake-up for other replicas in the transaction `tx`: NOTIFY is
 * delivered on COMMIT only, so it never precedes durable data (and a
 * rolled-back transaction wakes nobody).
 */
export async function notifyIn(tx: Q, replica: string, event: StorageEvent): Promise<void> {
  await tx`SELECT pg_notify(${CHANNEL}, ${notifyPayload(replica, event)})`;
}

/** One optimistic write's wake-up: sent only if the row is at (or past) the head it wrote. */
export interface Wake {
  workspace: string;
  sessionId: string;
  incarnation: string;
  headSeq: number;
  payload: string;
}

/**
 * Wakes other replicas after optimistic appends (append-writer.ts): ONE
 * autocommit statement of its own, sent on the append's own connection
 * right behind the append's statement, without waiting for its answer
 * (pipelined). PostgreSQL runs it once the append has committed (each
 * statement ends in a Sync: its own implicit transaction), so a wake-up
 * still never precedes durable data, and the writer pays no round trip
 * for it: the listeners hear of the commit as soon as it is flushed.
 *
 * Why not in the append's transaction: a transaction that NOTIFYs takes a
 * cluster-wide lock at commit (PostgreSQL's PreCommit_Notify, async.c) and
 * holds it until its commit record is flushed, so commits that NOTIFY
 * cannot share WAL flushes (group commit): measured here, 64 bare INSERT
 * transactions in flight lose about half their throughput once each also
 * NOTIFYs. A transaction that only NOTIFYs writes no WAL, so PostgreSQL
 * commits it without waiting for a flush: it holds that lock for
 * microseconds.
 *
 * Sent before the append's outcome is known, so each NOTIFY is guarded by
 * the row it announces: it goes only when the session row has the write's
 * incarnation and a head at least the write's (the append committed, or a
 * later one did; never for a write that missed its compare-and-set or was
 * rolled back). A NOTIFY that fails (connection lost) is not retried: the
 * listening replicas' poll (head-poll.ts) finds the head that moved
 * without a wake-up, as it does for a replica killed between its commit
 * and its NOTIFY.
 */
export async function wakeAfter(lane: Q, wakes: readonly Wake[]): Promise<void> {
  const input = wakes.map((x) => ({
    w: x.workspace,
    s: x.sessionId,
    n: x.incarnation,
    h: x.headSeq,
    p: x.payload,
  }));
  await lane`
    SELECT pg_notify(${CHANNEL}, v.p)
    FROM json_to_recordset(${JSON.stringify(input)}::text::json)
      AS v(w text, s text, n bigint, h integer, p text)
    JOIN sessiond_sessions s ON s.workspace = v.w AND s.session_id = v.s
      AND s.incarnation = v.n AND s.head_seq >= v.h`;
}

/**
 * Whether appends wake other replicas at all: only while another replica
 * LISTENs (pg_stat_activity, application_name sessiond-listen, not our
 * own), looked at every `peerCheckMs`. A replica alone, or whose peers
 * have no subscribers, sends no NOTIFY. A replica that starts listening is
 * seen within `peerCheckMs`; commits before that reach its watchers
 * through its head poll (head-poll.ts). Until the first look, or when a
 * look fails, it counts as "there are peers": wake rather than not.
 */
export class Notifier {
  private peers = true;
  private peerTimer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly replica: string,
    /** The backend pid of this replica's own LISTEN connection, if it has one. */
    private readonly ownListener: () => number | undefined,
    private readonly peerCheckMs: number,
  ) {}

  /** The NOTIFY payload announcing `e` (committed), or undefined when no other replica listens. */
  payloadFor(e: StorageEvent): string | undefined {
    if (this.peerTimer === undefined && this.peerCheckMs > 0) {
      this.peerTimer = setInterval(() => void this.checkPeers(), this.peerCheckMs);
      this.peerTimer.unref();
      void this.checkPeers();
    }
    return this.peers ? notifyPayload(this.replica, e) : undefined;
  }

  /** Looks whether any other replica has a LISTEN connection on this database. */
  async checkPeers(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const [row] = await this.sql<{ peers: boolean }[]>`
        SELECT EXISTS (
          SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = ${LISTEN_APPLICATION}
            AND pid <> ${this.ownListener() ?? -1}) AS peers`;
      this.peers = row?.peers !== false;
    } catch {
      this.peers = true;
    } finally {
      this.checking = false;
    }
  }

  /** Stops the peer checks. */
  stop(): void {
    clearInterval(this.peerTimer);
    this.peerTimer = undefined;
  }
}

/** The event, its replica and when it was sent, or undefined for a payload that is not ours. */
export function parsePayload(
  payload: string,
): { replica: string; event: StorageEvent; sentAt: number | undefined } | undefined {
  let v: Partial<Wire>;
  try {
    v = JSON.parse(payload) as Partial<Wire>;
  } catch {
    return undefined;
  }
  if (
    (v.t !== "created" && v.t !== "appended" && v.t !== "deleted" && v.t !== "withheld") ||
    typeof v.w !== "string" ||
    typeof v.s !== "string" ||
    typeof v.h !== "number" ||
    typeof v.r !== "string"
  ) {
    return undefined;
  }
  const seqs =
    v.t === "withheld" && Array.isArray(v.q) && v.q.every((n) => Number.isSafeInteger(n))
      ? v.q
      : undefined;
  return {
    replica: v.r,
    event: {
      type: v.t,
      workspace: v.w,
      sessionId: v.s,
      headSeq: v.h,
      ...(seqs === undefined ? {} : { seqs }),
    },
    sentAt: typeof v.c === "number" ? v.c : undefined,
  };
}

export interface ListenerOptions {
  url: string;
  connectTimeoutSec: number;
  /** Called with each NOTIFY payload of the channel. */
  onPayload: (payload: string) => void;
  /**
   * Called after every successful LISTEN but the very first one (that is,
   * after each reconnect, or after a first attempt that failed): NOTIFYs
   * sent while not listening are lost, so the caller resyncs. A rejection
   * is retried (LISTEN and all) after a delay.
   */
  onRelisten: () => Promise<void>;
  /**
   * Called after every successful LISTEN, the first one too, before
   * `onRelisten`: writers on other replicas see this LISTEN only at their
   * next peer check (Notifier), so the caller polls harder until then.
   */
  onListen?: () => void;
}

const MIN_DELAY_MS = 100;
const MAX_DELAY_MS = 5_000;

/**
 * One LISTEN connection of its own (a postgres.js instance with max 1),
 * not `sql.listen` of the pool: the driver's re-LISTEN after a reconnect is
 * tried once and, when it fails (database still down past the connect
 * timeout), drops the listener silently. Here every close of the
 * connection starts a loop that LISTENs again (backoff 0.1 s .. 5 s) until
 * it succeeds or `end()` is called, then runs `onRelisten`.
 */
export class NotifyListener {
  private readonly sql: postgres.Sql;
  private looping = false;
  /** Set when the connection closed while the loop ran: LISTEN again. */
  private again = false;
  private ended = false;
  /** Once anything was listened to or failed, a successful LISTEN may have missed NOTIFYs. */
  private missed = false;
  private wakeSleep: (() => void) | undefined;
  /** The backend pid of the LISTEN connection, once it listens. */
  pid: number | undefined;

  constructor(private readonly opts: ListenerOptions) {
    // `onnotify` is the driver option its own `sql.listen` uses; its typings lack it.
    const options: postgres.Options<Record<string, never>> & {
      onnotify: (channel: string, payload: string) => void;
    } = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      connect_timeout: opts.connectTimeoutSec,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: LISTEN_APPLICATION },
      onnotify: (channel, payload) => {
        if (channel === CHANNEL) opts.onPayload(payload);
      },
      // Called for every close of the connection (terminated, reset, failed connect).
      onclose: () => this.start(),
    };
    this.sql = postgres(opts.url, options);
  }

  /** LISTENs (again); no-op while a (re)LISTEN is already under way. */
  start(): void {
    if (this.ended) return;
    if (this.looping) {
      this.again = true;
      return;
    }
    this.looping = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    let delay = MIN_DELAY_MS;
    try {
      while (!this.ended) {
        this.again = false;
        try {
          // One query, so that the pid is the LISTENing connection's (and
          // pg_stat_activity still shows it as a LISTEN).
          const results = (await this.sql.unsafe(
            `LISTEN ${CHANNEL}; SELECT pg_backend_pid() AS pid`,
          )) as unknown as [unknown[], { pid: number }[]];
          this.pid = results[1]?.[0]?.pid;
          this.opts.onListen?.();
          if (this.missed) await this.opts.onRelisten();
          this.missed = true;
          if (!this.again) return;
          delay = MIN_DELAY_MS;
        } catch {
          this.missed = true;
          // Connection refused / lost, or the resync failed: try again.
          await this.sleep(delay);
          delay = Math.min(delay * 2, MAX_DELAY_MS);
        }
      }
    } finally {
      this.looping = false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakeSleep = done;
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    }).then(() => {
      this.wakeSleep = undefined;
    });
  }

  /** Closes the connection at once (never waits for the server: porsager/postgres#1097). */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.wakeSleep?.();
    await this.sql.end({ timeout: 0 });
  }
}

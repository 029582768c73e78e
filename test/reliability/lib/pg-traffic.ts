/**
 * Traffic and bookkeeping for T9 (two replicas on PostgreSQL): writers that
 * append batches with fixed entry ids and retry them identically after an
 * unknown outcome (the idempotent append), optionally with expected_seq;
 * watchers that record every entry they receive (a strict one with its own
 * resume loop and no de-duplication, or the client's watchEntriesResumable);
 * and the checks of a session's log and of what each watcher saw. Nothing
 * here throws on a violation: everything is counted.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  createSessiondClient,
  type Protocol,
  type SessiondClient,
  watchEntriesResumable,
} from "../../../src/client/index.js";
import type { Rng } from "./random.js";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Failed attempts of unary calls, conflicts aside, seen below the client's retry (each retried or passed on). */
export const attemptFailures = { count: 0 };

const countFailures: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    if (!req.stream && !isConflict(ConnectError.from(err))) attemptFailures.count++;
    throw err;
  }
};

/**
 * A client that rides out restarts of its replica: the client retries
 * UNAVAILABLE and resets, `attempts` in all, with the same request (so the
 * same entry ids); what still fails reaches the caller.
 */
export function replicaClient(
  url: string,
  protocol: Protocol = "grpc",
  attempts = 8,
): SessiondClient {
  return createSessiondClient({
    baseUrl: url,
    protocol,
    timeoutMs: 15_000,
    retry: { maxAttempts: attempts, baseDelayMs: 25, maxDelayMs: 500 },
    interceptors: [countFailures],
  });
}

/**
 * A client for watchers: no default deadline. The client's `timeoutMs`
 * applies to server streams too, which would end every watch after that
 * long; the reconnect's replay would then hide a lost NOTIFY.
 */
export function watchClient(url: string, protocol: Protocol = "grpc"): SessiondClient {
  return createSessiondClient({
    baseUrl: url,
    protocol,
    retry: { maxAttempts: 8, baseDelayMs: 25, maxDelayMs: 500 },
  });
}

export function userEntry(id: string) {
  return {
    id,
    kind: {
      case: "message" as const,
      value: { role: Role.USER, content: [{ part: { case: "text" as const, value: `t9 ${id}` } }] },
    },
  };
}

/** A server-sent concurrency conflict (a transport reset is ABORTED too, but without this text). */
export function isConflict(ce: ConnectError): boolean {
  return ce.code === Code.Aborted && /expected (head seq|leaf)/.test(ce.rawMessage);
}

/** Outcome unknown: the call may or may not have been committed; retry with the same ids. */
const UNKNOWN_OUTCOME = new Set([
  Code.Unavailable,
  Code.Internal,
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Canceled,
  Code.Aborted, // a reset connection (a conflict is told apart by isConflict first)
]);

export interface Batch {
  writer: number;
  ids: string[];
  acked: boolean;
  attempts: number;
}

export interface WriterStats {
  acked: number;
  conflicts: number;
  /** Errors after which the writer retried the same batch (outcome unknown). */
  unknown: number;
  /** Answers that are a contract violation (a non-CAS conflict, INVALID_ARGUMENT, DATA_LOSS, ...). */
  wrong: string[];
  /** Batches given up at the hard deadline (never acked). */
  abandoned: number;
  /** Retries answered "already stored" (an earlier attempt of unknown outcome had committed). */
  deduplicated: number;
}

export interface WriterOptions {
  index: number;
  client: SessiondClient;
  workspace: string;
  session: string;
  rng: Rng;
  /** Use expected_seq (the head it last saw). */
  cas: boolean;
  maxBatch: number;
  pauseMs: [number, number];
  /** Keep writing while this returns true (a started batch is always finished). */
  keepGoing: () => boolean;
  /** Give up retrying a batch after this time (Date.now() ms). */
  hardDeadline: number;
  prefix: string;
  batches: Batch[];
  stats: WriterStats;
}

export function newWriterStats(): WriterStats {
  return { acked: 0, conflicts: 0, unknown: 0, wrong: [], abandoned: 0, deduplicated: 0 };
}

/** One writer: batch after batch, each retried with the same ids until acked. */
export async function runWriter(o: WriterOptions): Promise<void> {
  let head: bigint | undefined;
  for (let i = 0; o.keepGoing(); i++) {
    const size = o.rng.int(1, o.maxBatch);
    const batch: Batch = {
      writer: o.index,
      ids: Array.from({ length: size }, (_, k) => `${o.prefix}w${o.index}-${i}-${k}`),
      acked: false,
      attempts: 0,
    };
    o.batches.push(batch);
    const entries = batch.ids.map(userEntry);
    while (!batch.acked) {
      if (Date.now() > o.hardDeadline) {
        o.stats.abandoned++;
        return;
      }
      batch.attempts++;
      try {
        if (o.cas && head === undefined) {
          head = (await o.client.store.getSession({ workspace: o.workspace, session: o.session }))
            .session?.headSeq;
        }
        const res = await o.client.session.append({
          workspace: o.workspace,
          session: o.session,
          entries,
          ...(o.cas && head !== undefined ? { expectedSeq: head } : {}),
        });
        batch.acked = true;
        o.stats.acked += size;
        if (res.deduplicated) o.stats.deduplicated++;
        head = res.headSeq;
        const got = res.entries.map((e) => e.id);
        if (got.join(",") !== batch.ids.join(",")) {
          o.stats.wrong.push(`${batch.ids[0]}: acked with ids ${got.join(",")}`);
        }
      } catch (err) {
        const ce = ConnectError.from(err);
        head = undefined; // read it again
        if (isConflict(ce)) {
          if (o.cas) o.stats.conflicts++;
          else
            o.stats.wrong.push(
              `${batch.ids[0]}: ABORTED conflict without expected_seq: ${ce.rawMessage}`,
            );
        } else if (UNKNOWN_OUTCOME.has(ce.code)) {
          o.stats.unknown++;
          await sleep(o.rng.int(20, 120));
        } else {
          o.stats.wrong.push(`${batch.ids[0]}: ${Code[ce.code]} ${ce.rawMessage.slice(0, 200)}`);
          await sleep(100);
        }
      }
    }
    const [lo, hi] = o.pauseMs;
    if (hi > 0) await sleep(o.rng.int(lo, hi));
  }
}

/** What one watcher received. */
export class WatchRecord {
  readonly seqs: number[] = [];
  readonly ids: string[] = [];
  reconnects = 0;
  cancels = 0;
  /** Errors that end a watch (NOT_FOUND, ...): violations here. */
  readonly fatal: string[] = [];
  /** When the last entry arrived (ms since the epoch), for a watcher that ends behind. */
  lastAt = Date.now();
  /** The last error a reconnect followed, and when (what a stalled watcher was doing). */
  lastError = "";
  lastErrorAt = 0;

  /** What a fresh stream from `top` got, for a watcher that ended behind (see probeWatch). */
  probe = "";

  constructor(
    readonly name: string,
    readonly strict: boolean,
    /** Where it watches: a probe of a stalled watcher opens a stream there. */
    readonly where?: { url: string; protocol: Protocol },
  ) {}

  /** The highest seq received. */
  top = 0;

  add(seq: number, id: string): void {
    this.seqs.push(seq);
    this.ids.push(id);
    if (seq > this.top) this.top = seq;
    this.lastAt = Date.now();
  }

  /** A reconnect after `err`. */
  reconnected(err: unknown): void {
    this.reconnects++;
    this.lastError = String(err).slice(0, 200);
    this.lastErrorAt = Date.now();
  }

  /** For a watcher that ended behind: how long it had been quiet, and its last reconnect. */
  story(now = Date.now()): string {
    const ago = (t: number) => `${((now - t) / 1000).toFixed(1)} s ago`;
    const err = this.lastErrorAt === 0 ? "none" : `${ago(this.lastErrorAt)}: ${this.lastError}`;
    const probe = this.probe === "" ? "" : `; ${this.probe}`;
    return `last entry ${ago(this.lastAt)}, ${this.reconnects} reconnects, last reconnect ${err}${probe}`;
  }
}

export interface WatcherOptions {
  client: SessiondClient;
  workspace: string;
  session: string;
  signal: AbortSignal;
  rng: Rng;
  /** Strict: own resume loop from the last seq, no de-duplication; else watchEntriesResumable. */
  strict: boolean;
  /** Strict only: cancel and resume after a random number of entries in [lo, hi] (0 = never). */
  cancelEvery?: [number, number];
  record: WatchRecord;
}

/** Runs a watcher until `signal` aborts. */
export async function runWatcher(o: WatcherOptions): Promise<void> {
  const r = o.record;
  if (!o.strict) {
    try {
      for await (const m of watchEntriesResumable(o.client, {
        workspace: o.workspace,
        session: o.session,
        signal: o.signal,
        retryDelayMs: 50,
        // Well inside T9's 30 s catch-up wait: a stream cut as a replica drained can leave its
        // call pending for good (connect-es#1678); the watcher must reopen it in time.
        stallTimeoutMs: 10_000,
        onReconnect: (err) => r.reconnected(err),
      })) {
        if (m.event.case !== "entry") continue;
        r.add(Number(m.event.value.seq), m.event.value.id);
      }
    } catch (err) {
      if (!o.signal.aborted) r.fatal.push(`${r.name}: ${String(err)}`);
    }
    return;
  }
  let last = 0;
  while (!o.signal.aborted) {
    const inner = new AbortController();
    const onAbort = () => inner.abort();
    o.signal.addEventListener("abort", onAbort, { once: true });
    const [lo, hi] = o.cancelEvery ?? [0, 0];
    const cutAfter = hi > 0 ? o.rng.int(lo, hi) : Number.POSITIVE_INFINITY;
    let got = 0;
    try {
      for await (const m of o.client.session.watchEntries(
        { workspace: o.workspace, session: o.session, afterSeq: BigInt(last) },
        { signal: inner.signal, timeoutMs: 0 },
      )) {
        if (m.event.case !== "entry") continue;
        const seq = Number(m.event.value.seq);
        r.add(seq, m.event.value.id);
        last = Math.max(last, seq);
        if (++got >= cutAfter) {
          r.cancels++;
          inner.abort();
        }
      }
    } catch (err) {
      const ce = ConnectError.from(err);
      if (o.signal.aborted) break;
      if (ce.code === Code.NotFound || ce.code === Code.InvalidArgument) {
        r.fatal.push(`${r.name}: ${Code[ce.code]} ${ce.rawMessage}`);
        return;
      }
      if (!inner.signal.aborted) r.reconnected(err);
    } finally {
      o.signal.removeEventListener("abort", onAbort);
    }
    if (!o.signal.aborted) await sleep(o.rng.int(20, 80));
  }
}

/**
 * For a watcher that ended short of the head: a FRESH stream of the same
 * protocol on the same replica, from the watcher's last seq, for `ms`. If
 * it gets the missing entries, the replica had them and only the old
 * stream (or its follower) was stuck; if not, the replica itself does not
 * deliver them. Recorded in the watcher's story.
 */
export async function probeWatch(
  r: WatchRecord,
  workspace: string,
  session: string,
  head: number,
  ms = 3000,
): Promise<void> {
  if (r.where === undefined || r.top >= head) return;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  let got = 0;
  let outcome = "";
  const t0 = Date.now();
  try {
    const c = watchClient(r.where.url, r.where.protocol);
    for await (const m of c.session.watchEntries(
      { workspace, session, afterSeq: BigInt(r.top) },
      { signal: ac.signal, timeoutMs: 0 },
    )) {
      if (m.event.case === "entry" && ++got >= head - r.top) break;
    }
    outcome = got >= head - r.top ? `all in ${Date.now() - t0} ms` : "stream ended";
  } catch (err) {
    outcome = ac.signal.aborted ? `not all in ${ms} ms` : String(err).slice(0, 120);
  } finally {
    clearTimeout(timer);
  }
  r.probe = `a fresh ${r.where.protocol} stream from seq ${r.top} on the same replica got ${got} of ${head - r.top} (${outcome})`;
}

/** The whole log of a session (paged), retrying unknown outcomes a few times. */
export async function readLog(
  c: SessiondClient,
  workspace: string,
  session: string,
): Promise<Entry[]> {
  const all: Entry[] = [];
  let after = 0n;
  for (;;) {
    const page = await c.session.getEntries({ workspace, session, afterSeq: after, limit: 1000 });
    all.push(...page.entries);
    const lastSeq = page.entries[page.entries.length - 1]?.seq;
    if (lastSeq === undefined || lastSeq >= page.headSeq) return all;
    after = lastSeq;
  }
}

export interface WatchCheck {
  gaps: number;
  duplicates: number;
  outOfOrder: number;
  mismatched: number;
  /** How far short of the head the watcher ended (0 when it got there). */
  behind: number;
  details: string[];
}

/** Compares what a watcher got with the log: every seq 1..n once, in order, with the log's ids. */
export function checkWatch(r: WatchRecord, log: readonly Entry[]): WatchCheck {
  const n = log.length;
  const c: WatchCheck = {
    gaps: 0,
    duplicates: 0,
    outOfOrder: 0,
    mismatched: 0,
    behind: 0,
    details: [],
  };
  const seen = new Map<number, number>();
  let prev = 0;
  r.seqs.forEach((seq, i) => {
    seen.set(seq, (seen.get(seq) ?? 0) + 1);
    if (seq <= prev && (seen.get(seq) ?? 0) === 1) c.outOfOrder++;
    prev = Math.max(prev, seq);
    const want = log[seq - 1]?.id;
    if (want !== r.ids[i]) {
      c.mismatched++;
      if (c.details.length < 3)
        c.details.push(`${r.name}: seq ${seq} had id ${r.ids[i]}, log has ${want}`);
    }
  });
  for (const [seq, k] of seen) {
    if (k > 1) {
      c.duplicates += k - 1;
      if (c.details.length < 3) c.details.push(`${r.name}: seq ${seq} received ${k} times`);
    }
  }
  const top = r.top;
  c.behind = Math.max(0, n - top);
  for (let s = 1; s <= Math.min(n, top); s++) {
    if (!seen.has(s)) {
      c.gaps++;
      if (c.details.length < 3) c.details.push(`${r.name}: seq ${s} never received`);
    }
  }
  if (c.behind > 0) c.details.push(`${r.name}: ended at seq ${top} of ${n} (${r.story()})`);
  return c;
}

export interface LogCheck {
  /** Entries in the log. */
  n: number;
  lost: number;
  duplicated: number;
  /** Log entries nobody attempted (never sent by a writer). */
  surprises: number;
  /** Entries of batches never acked that are in the log (allowed: outcome was unknown). */
  unackedPresent: number;
  /** Batches only partly in the log, or not contiguous. */
  tornBatches: number;
  /** A writer's batches out of its own order. */
  reordered: number;
  /** seq != position. */
  notDense: number;
  details: string[];
}

/**
 * Checks a log against the writers' batches: seq 1..n dense, every acked
 * entry exactly once, nothing nobody sent, each batch whole and contiguous,
 * each writer's batches in its order. `known` are ids written outside the
 * batches (the root, set-up entries).
 */
export function checkLog(
  log: readonly Entry[],
  batches: readonly Batch[],
  known: ReadonlySet<string>,
): LogCheck {
  const c: LogCheck = {
    n: log.length,
    lost: 0,
    duplicated: 0,
    surprises: 0,
    unackedPresent: 0,
    tornBatches: 0,
    reordered: 0,
    notDense: 0,
    details: [],
  };
  const note = (s: string) => {
    if (c.details.length < 8) c.details.push(s);
  };
  const seqOf = new Map<string, number>();
  log.forEach((e, i) => {
    if (Number(e.seq) !== i + 1) {
      c.notDense++;
      note(`log position ${i + 1} has seq ${e.seq}`);
    }
    if (seqOf.has(e.id)) {
      c.duplicated++;
      note(`entry ${e.id} stored twice (seqs ${seqOf.get(e.id)} and ${e.seq})`);
    } else seqOf.set(e.id, Number(e.seq));
  });
  const sent = new Set<string>(known);
  const lastSeqOfWriter = new Map<number, number>();
  for (const b of batches) {
    for (const id of b.ids) sent.add(id);
    const seqs = b.ids.map((id) => seqOf.get(id));
    const present = seqs.filter((s) => s !== undefined).length;
    if (b.acked && present < b.ids.length) {
      c.lost += b.ids.length - present;
      note(`acked batch ${b.ids[0]} (${b.ids.length} entries): ${b.ids.length - present} missing`);
    }
    if (!b.acked && present > 0) c.unackedPresent += present;
    if (present > 0 && present < b.ids.length && !b.acked) {
      c.tornBatches++;
      note(`unacked batch ${b.ids[0]} only partly stored (${present}/${b.ids.length})`);
    }
    if (present === b.ids.length) {
      const s = seqs as number[];
      if (s.some((x, k) => k > 0 && x !== (s[k - 1] as number) + 1)) {
        c.tornBatches++;
        note(`batch ${b.ids[0]} not contiguous: seqs ${s.join(",")}`);
      }
      const prev = lastSeqOfWriter.get(b.writer) ?? 0;
      if ((s[0] as number) < prev) {
        c.reordered++;
        note(
          `writer ${b.writer}: batch ${b.ids[0]} at seq ${s[0]} before its previous batch (seq ${prev})`,
        );
      }
      lastSeqOfWriter.set(b.writer, s[s.length - 1] as number);
    }
  }
  for (const e of log) {
    if (!sent.has(e.id)) {
      c.surprises++;
      note(`entry ${e.id} (seq ${e.seq}) was never sent`);
    }
  }
  return c;
}

/**
 * Helpers of the watch tests of the reliability battery (T7, T8): clients,
 * an idempotent writer, a strict watcher that counts gaps and duplicates
 * instead of hiding them, and the server's memory from /proc.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  createSessiondClient,
  type SessiondClient,
  watchEntriesResumable,
} from "../../../src/client/index.js";
import type { Rng } from "./random.js";

export type EntryInit = MessageInitShape<typeof EntrySchema>;

export const MB = 2 ** 20;
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A user message entry with an explicit id (so that a retry is de-duplicated). */
export function userEntry(id: string, text: string): EntryInit {
  return {
    id,
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  };
}

/** A client on its own HTTP/2 connection; unary calls retry UNAVAILABLE patiently (restarts). */
export function watchClient(url: string, timeoutMs = 30_000): SessiondClient {
  return createSessiondClient({
    baseUrl: url,
    timeoutMs,
    retry: { maxAttempts: 400, baseDelayMs: 20, maxDelayMs: 250 },
  });
}

/** VmRSS and VmHWM of a process, bytes (Linux). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) =>
    Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Resets VmHWM (Linux: write 5 to clear_refs); false when not supported. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; keeps the maximum. */
export function rssSampler(pid: number, everyMs = 100): { max(): number; stop(): number } {
  let max = 0;
  const sample = () => {
    try {
      max = Math.max(max, memoryOf(pid).rss);
    } catch {
      // the process is gone
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    max: () => max,
    stop: () => {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}

const TERMINAL = new Set([
  Code.NotFound,
  Code.InvalidArgument,
  Code.PermissionDenied,
  Code.Unauthenticated,
  Code.FailedPrecondition,
  Code.DataLoss,
]);

/**
 * Appends `entries` (explicit ids) until OK: the client retries UNAVAILABLE
 * itself; any other error is "outcome unknown" and is retried with the same
 * ids, which the server de-duplicates. Returns false if it never succeeded
 * before `giveUpAt` or hit a terminal error (listed in `errors`).
 */
export async function appendUntilOk(
  c: SessiondClient,
  workspace: string,
  session: string,
  entries: EntryInit[],
  giveUpAt: number,
  errors: string[],
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await c.session.append({ workspace, session, entries });
      return true;
    } catch (err) {
      const ce = ConnectError.from(err);
      if (TERMINAL.has(ce.code) || Date.now() > giveUpAt) {
        errors.push(`append ${entries[0]?.id}: ${Code[ce.code]} ${ce.rawMessage}`);
        return false;
      }
      await sleep(Math.min(20 * 2 ** Math.min(attempt, 4), 300));
    }
  }
}

/** The ids of a session's log in seq order (paged GetEntries); checks the seqs are dense. */
export async function readLogIds(
  c: SessiondClient,
  workspace: string,
  session: string,
  problems: string[],
): Promise<string[]> {
  const ids: string[] = [];
  let after = 0n;
  for (;;) {
    const page = await c.session.getEntries({ workspace, session, afterSeq: after, limit: 1000 });
    for (const e of page.entries) {
      if (e.seq !== BigInt(ids.length + 1)) {
        problems.push(`log of ${session}: seq ${e.seq} at position ${ids.length + 1}`);
      }
      ids.push(e.id);
      after = e.seq;
    }
    if (page.entries.length === 0 || after >= page.headSeq) return ids;
  }
}

export interface WatcherStats {
  /** Ids received, in the order received (duplicates included). */
  readonly ids: string[];
  /** Seqs received, in the order received. */
  readonly seqs: number[];
  last: number;
  gaps: number;
  duplicates: number;
  /** Streams ended by this watcher on purpose (random cancel) and resumed. */
  resumes: number;
  /** Streams ended by the server or the connection (restarts) and resumed. */
  reconnects: number;
  /** Why streams ended without a cancel, by code (restarts: UNAVAILABLE, CANCELED, ...). */
  readonly endings: Map<string, number>;
  /** Terminal errors (NOT_FOUND, INVALID_ARGUMENT, ...): violations. */
  readonly errors: string[];
  /** The time `last` last changed (Date.now()). */
  lastAt: number;
}

export function newStats(): WatcherStats {
  return {
    ids: [],
    seqs: [],
    last: 0,
    gaps: 0,
    duplicates: 0,
    resumes: 0,
    reconnects: 0,
    endings: new Map(),
    errors: [],
    lastAt: Date.now(),
  };
}

/** Records one received entry: in order, a duplicate, or after a gap. */
export function receive(s: WatcherStats, seq: number, id: string, details: string[], who: string) {
  s.ids.push(id);
  s.seqs.push(seq);
  if (seq === s.last + 1) {
    s.last = seq;
    s.lastAt = Date.now();
  } else if (seq <= s.last) {
    s.duplicates++;
    if (details.length < 50) details.push(`${who}: duplicate seq ${seq} after ${s.last}`);
  } else {
    s.gaps++;
    if (details.length < 50) details.push(`${who}: gap: seq ${seq} after ${s.last}`);
    s.last = seq;
    s.lastAt = Date.now();
  }
}

export interface WatchLoopOptions {
  readonly c: SessiondClient;
  readonly workspace: string;
  readonly session: string;
  readonly stats: WatcherStats;
  /** Stops the watcher for good. */
  readonly signal: AbortSignal;
  /** For the random cancel moments; undefined = never cancel on purpose. */
  readonly rng?: Rng;
  /** Cancel after a random number of entries in [1, maxCut] (or a random time). */
  readonly maxCut?: number;
  /** Use the library's watchEntriesResumable (hides duplicates, shows gaps) instead of raw streams. */
  readonly resumable?: boolean;
  readonly details: string[];
  readonly who: string;
}

/**
 * A watcher that cancels its stream at random moments and resumes from the
 * last seq it saw, and reconnects after errors (restarts), recording every
 * entry received. Raw streams: no client-side de-duplication, so any
 * duplicate or gap the server sends is counted.
 */
export async function watchLoop(o: WatchLoopOptions): Promise<void> {
  const { c, stats: s, signal, rng } = o;
  // Consecutive failed connects (a server restarting): back off up to 1 s.
  let fails = 0;
  while (!signal.aborted) {
    const ac = new AbortController();
    const stop = () => ac.abort();
    signal.addEventListener("abort", stop, { once: true });
    const cutAfter = rng === undefined ? Number.POSITIVE_INFINITY : rng.int(1, o.maxCut ?? 200);
    // Also cancel at a random time, so that idle streams are cancelled too.
    const timer = rng === undefined ? undefined : setTimeout(() => ac.abort(), rng.int(50, 3000));
    let got = 0;
    let cancelled = false;
    try {
      const stream = o.resumable
        ? watchEntriesResumable(c, {
            workspace: o.workspace,
            session: o.session,
            afterSeq: s.last,
            signal: ac.signal,
            retryDelayMs: 50,
            onReconnect: (err) => {
              s.reconnects++;
              const k = `resumable ${Code[err.code]}`;
              s.endings.set(k, (s.endings.get(k) ?? 0) + 1);
            },
          })
        : c.session.watchEntries(
            { workspace: o.workspace, session: o.session, afterSeq: BigInt(s.last) },
            { signal: ac.signal },
          );
      for await (const msg of stream) {
        fails = 0;
        if (msg.event.case !== "entry") continue;
        receive(s, Number(msg.event.value.seq), msg.event.value.id, o.details, o.who);
        if (++got >= cutAfter) {
          cancelled = true;
          ac.abort();
          break;
        }
      }
      if (ac.signal.aborted && !signal.aborted) cancelled = true;
      else if (!signal.aborted) {
        s.reconnects++; // a clean end: resume
        s.endings.set("clean end", (s.endings.get("clean end") ?? 0) + 1);
      }
    } catch (err) {
      if (signal.aborted) break;
      if (ac.signal.aborted) {
        cancelled = true;
      } else {
        const ce = ConnectError.from(err);
        if (TERMINAL.has(ce.code) || ce.code === Code.ResourceExhausted) {
          s.errors.push(`${o.who}: ${Code[ce.code]} ${ce.rawMessage}`);
          await sleep(200);
        } else {
          s.reconnects++;
          s.endings.set(Code[ce.code], (s.endings.get(Code[ce.code]) ?? 0) + 1);
          const backoff = Math.min(1000, 20 * 2 ** Math.min(fails++, 6));
          await sleep(backoff / 2 + (rng === undefined ? 0.5 : rng.next()) * (backoff / 2));
        }
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
    }
    if (cancelled && !signal.aborted) s.resumes++;
  }
}

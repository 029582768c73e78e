/**
 * SessionTail on its own, over a scripted engine: which reads a refresh
 * makes, what it keeps, which slices it can serve, and when it forgets.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { user, withSeq } from "../../../test/support/fixtures.js";
import type { EntryPage, StorageEngine, StorageEvent } from "../../storage/engine.js";
import { SessionTail } from "./session-tail.js";

const KEY = { workspace: "ws", sessionId: "s" };

/** A log of `n` entries; reads are recorded as [afterSeq, limit]. */
class ScriptedLog {
  entries: Entry[] = [];
  reads: [number, number][] = [];
  failure: Error | undefined;
  /** When set, a read after exactly this seq fails (one entry of a redaction's reads). */
  failAfter: number | undefined;
  /** When set, every read answers an empty page with this head (a log that went away). */
  emptyWithHead: number | undefined;

  grow(n: number): void {
    for (let i = 0; i < n; i++) {
      const seq = this.entries.length + 1;
      this.entries.push(withSeq(user(`e${seq}`), seq));
    }
  }

  get head(): number {
    return this.entries.length;
  }

  readonly engine = {
    read: async (_key: unknown, afterSeq: number, limit: number): Promise<EntryPage> => {
      this.reads.push([afterSeq, limit]);
      if (this.failure !== undefined) throw this.failure;
      if (this.failAfter === afterSeq) throw new Error(`read after ${afterSeq} failed`);
      if (this.emptyWithHead !== undefined) return { entries: [], headSeq: this.emptyWithHead };
      const entries = this.entries.filter((e) => Number(e.seq) > afterSeq).slice(0, limit);
      return { entries, headSeq: this.head };
    },
  } as unknown as StorageEngine;
}

const appended = (headSeq: number): StorageEvent => ({ type: "appended", ...KEY, headSeq });

/** Plays one event and resolves once the tail woke its watchers for it. */
function play(tail: SessionTail, event: StorageEvent): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      tail.watchers.delete(wake);
      resolve();
    };
    tail.watchers.add(wake);
    tail.onEvent(event);
  });
}

const seqsOf = (page: { entries: Entry[] } | undefined) => page?.entries.map((e) => Number(e.seq));

/** The text of a user message entry. */
const textOf = (e: Entry): string => {
  const part = e.kind.case === "message" ? e.kind.value.content[0]?.part : undefined;
  return part?.case === "text" ? part.value : "";
};

describe("SessionTail", () => {
  it("serves nothing before its first event", () => {
    const log = new ScriptedLog();
    const tail = new SessionTail(log.engine, KEY, 4);
    expect(tail.slice(0, 10)).toBeUndefined();
  });

  it("refreshes a fresh tail from head - capacity in one read, and keeps at most capacity entries", async () => {
    const log = new ScriptedLog();
    log.grow(10);
    const tail = new SessionTail(log.engine, KEY, 3);
    await play(tail, appended(10));
    expect(log.reads).toEqual([[7, 3]]);
    expect(seqsOf(tail.slice(7, 100))).toEqual([8, 9, 10]);
    expect(tail.slice(6, 100)).toBeUndefined();
  });

  it("refreshes a fresh tail of a short log from the start", async () => {
    const log = new ScriptedLog();
    log.grow(2);
    const tail = new SessionTail(log.engine, KEY, 3);
    await play(tail, appended(2));
    expect(log.reads).toEqual([[0, 3]]);
    expect(seqsOf(tail.slice(0, 100))).toEqual([1, 2]);
    expect(tail.slice(0, 100)?.headSeq).toBe(2);
  });

  it("reads only what follows its newest entry, page by page, and trims to capacity", async () => {
    const log = new ScriptedLog();
    log.grow(2);
    const tail = new SessionTail(log.engine, KEY, 3);
    await play(tail, appended(2));
    log.reads = [];
    log.grow(1); // 3 entries: all kept
    await play(tail, appended(3));
    expect(log.reads).toEqual([[2, 3]]);
    expect(seqsOf(tail.slice(0, 100))).toEqual([1, 2, 3]);
    log.reads = [];
    log.grow(1); // 4 entries: the oldest goes
    await play(tail, appended(4));
    expect(log.reads).toEqual([[3, 3]]);
    expect(tail.slice(0, 100)).toBeUndefined();
    expect(seqsOf(tail.slice(1, 100))).toEqual([2, 3, 4]);
    log.reads = [];
    log.grow(7); // 11 entries: three pages after 4
    await play(tail, appended(11));
    expect(log.reads).toEqual([
      [4, 3],
      [7, 3],
      [10, 3],
    ]);
    expect(seqsOf(tail.slice(8, 100))).toEqual([9, 10, 11]);
    expect(tail.slice(7, 100)).toBeUndefined();
  });

  it("slices after a seq, at most `limit` entries, with its newest seq as head", async () => {
    const log = new ScriptedLog();
    log.grow(8);
    const tail = new SessionTail(log.engine, KEY, 5); // keeps 4..8
    await play(tail, appended(8));
    expect(tail.slice(2, 10)).toBeUndefined(); // 3 is missing
    expect(seqsOf(tail.slice(3, 10))).toEqual([4, 5, 6, 7, 8]); // just reaches
    expect(seqsOf(tail.slice(3, 2))).toEqual([4, 5]);
    expect(seqsOf(tail.slice(5, 2))).toEqual([6, 7]);
    expect(seqsOf(tail.slice(7, 10))).toEqual([8]);
    expect(tail.slice(8, 10)).toEqual({ entries: [], headSeq: 8 });
    expect(tail.slice(4, 2)?.headSeq).toBe(8);
  });

  it("stops refreshing at an empty page even when the event names a higher head", async () => {
    const log = new ScriptedLog();
    log.grow(2);
    const tail = new SessionTail(log.engine, KEY, 3);
    await play(tail, appended(2));
    log.emptyWithHead = 2;
    await play(tail, appended(9)); // e.g. re-created meanwhile with a shorter log
    expect(seqsOf(tail.slice(0, 100))).toEqual([1, 2]);
  });

  it("forgets everything on a failed read, a delete and a create, and still wakes its watchers", async () => {
    const log = new ScriptedLog();
    log.grow(2);
    const tail = new SessionTail(log.engine, KEY, 3);
    await play(tail, appended(2));
    log.failure = new Error("gone");
    log.grow(1);
    await play(tail, appended(3));
    expect(tail.slice(0, 100)).toBeUndefined();

    log.failure = undefined;
    await play(tail, appended(3));
    expect(seqsOf(tail.slice(0, 100))).toEqual([1, 2, 3]);
    await play(tail, { type: "deleted", ...KEY, headSeq: 0 });
    expect(tail.slice(0, 100)).toBeUndefined();

    await play(tail, appended(3));
    expect(seqsOf(tail.slice(0, 100))).toEqual([1, 2, 3]);
    await play(tail, { type: "created", ...KEY, headSeq: 3 });
    expect(tail.slice(0, 100)).toBeUndefined();
  });

  it("takes a redaction's entries again, puts those it holds in place, and tells the listeners", async () => {
    const log = new ScriptedLog();
    log.grow(4);
    const tail = new SessionTail(log.engine, KEY, 3);
    await play(tail, appended(4)); // holds 2..4
    const told: { seqs: number[]; texts: string[]; headSeq: number }[] = [];
    tail.withheldWatchers.add((n) =>
      told.push({
        seqs: n.entries.map((e) => Number(e.seq)),
        texts: n.entries.map(textOf),
        headSeq: n.headSeq,
      }),
    );
    const redacted = (seq: number) => withSeq(user(`e${seq}`, `redacted ${seq}`), seq);
    log.grow(1); // seq 5: in the log, not in the tail yet (its event comes later)
    for (const seq of [1, 2, 3, 5]) log.entries[seq - 1] = redacted(seq);
    const reads = log.reads.length;
    tail.onEvent({ type: "withheld", ...KEY, headSeq: 5, seqs: [1, 2, 3, 5] });
    await play(tail, appended(4)); // runs after the redaction, reads nothing new
    expect(log.reads.slice(reads, reads + 4)).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [4, 1],
    ]);
    expect(told).toEqual([
      {
        seqs: [1, 2, 3, 5],
        texts: ["redacted 1", "redacted 2", "redacted 3", "redacted 5"],
        headSeq: 5,
      },
    ]);
    // A seq its read does not find (beyond the log) is skipped; the others are told.
    tail.onEvent({ type: "withheld", ...KEY, headSeq: 5, seqs: [4, 9] });
    await play(tail, appended(4));
    expect(told[1]).toEqual({ seqs: [4], texts: ["hello from e4"], headSeq: 5 });
    // In place: 2 and 3 (the tail's first and middle); 1 is before it, 5 after it.
    expect(tail.slice(1, 100)?.entries.map(textOf)).toEqual([
      "redacted 2",
      "redacted 3",
      "hello from e4",
    ]);
  });

  it("tells nobody of a redaction it cannot read whole, of one naming no entry it finds, or of none", async () => {
    const log = new ScriptedLog();
    log.grow(3);
    const tail = new SessionTail(log.engine, KEY, 10);
    await play(tail, appended(3));
    let told = 0;
    tail.withheldWatchers.add(() => told++);
    log.failAfter = 1; // the read of seq 2 fails, after seq 1's succeeded
    tail.onEvent({ type: "withheld", ...KEY, headSeq: 3, seqs: [1, 2] });
    await play(tail, appended(3));
    log.failAfter = undefined;
    tail.onEvent({ type: "withheld", ...KEY, headSeq: 3, seqs: [9] }); // beyond the log
    await play(tail, appended(3));
    tail.onEvent({ type: "withheld", ...KEY, headSeq: 3, seqs: [0] }); // its read finds seq 1
    await play(tail, appended(3));
    const reads = log.reads.length;
    tail.onEvent({ type: "withheld", ...KEY, headSeq: 3 }); // no seqs: nothing to read
    await play(tail, appended(3));
    expect(log.reads.length).toBe(reads); // and the tail, at the head already, reads nothing
    expect(told).toBe(0);
    expect(seqsOf(tail.slice(0, 100))).toEqual([1, 2, 3]);
  });

  it("handles events one at a time, in order, waking the watchers after each refresh", async () => {
    const log = new ScriptedLog();
    const tail = new SessionTail(log.engine, KEY, 10);
    const seen: (number[] | undefined)[] = [];
    let fourth: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      fourth = resolve;
    });
    tail.watchers.add(() => {
      seen.push(seqsOf(tail.slice(0, 100)));
      if (seen.length === 4) fourth();
    });
    log.grow(1);
    tail.onEvent(appended(1)); // queued: runs after the next line, and reads both
    log.grow(1);
    tail.onEvent(appended(2));
    tail.onEvent({ type: "deleted", ...KEY, headSeq: 0 });
    tail.onEvent(appended(2));
    await done;
    expect(seen).toEqual([[1, 2], [1, 2], undefined, [1, 2]]);
  });
});

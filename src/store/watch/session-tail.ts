import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { SessionKey, StorageEngine, StorageEvent } from "../../storage/engine.js";

/** A redaction, as watchers are told of it: the entries as they now read, and the head seq then. */
export interface WithheldNotice {
  readonly entries: readonly Entry[];
  readonly headSeq: number;
}

/**
 * The newest entries of one watched session, consecutive by seq, shared by
 * all of its watchers: refreshed from the engine once per append event,
 * then every watcher is woken. Events carry no data, so the tail reads the
 * log itself, and only durable entries are ever handed out.
 */
export class SessionTail {
  /** The wake-ups of the session's watchers, run after each refresh. */
  readonly watchers = new Set<() => void>();
  /** Told of each redaction (after the tail holds the new form), with the entries as they now read. */
  readonly withheldWatchers = new Set<(notice: WithheldNotice) => void>();
  private entries: Entry[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: StorageEngine,
    private readonly key: SessionKey,
    private readonly capacity: number,
  ) {}

  private get lastSeq(): number {
    const last = this.entries[this.entries.length - 1];
    return last === undefined ? 0 : Number(last.seq);
  }

  /**
   * Refreshes the tail for one event of the session, then wakes the
   * watchers. Events are handled one at a time, in order, so a wake-up
   * never runs before the entries of its event are in the tail.
   */
  onEvent(event: StorageEvent): void {
    this.chain = this.chain.then(async () => {
      if (event.type === "withheld") {
        await this.withheld(event);
        return;
      }
      if (event.type === "appended") {
        try {
          await this.load(event.headSeq);
        } catch {
          this.entries = []; // e.g. deleted meanwhile: watchers read the engine and see why
        }
      } else {
        this.entries = [];
      }
      for (const wake of this.watchers) wake();
    });
  }

  /**
   * A redaction: the entries of `event.seqs` read again (their new form),
   * put in place in the tail, and handed to the watchers that listen for it.
   */
  private async withheld(event: StorageEvent): Promise<void> {
    const entries: Entry[] = [];
    try {
      for (const seq of event.seqs ?? []) {
        const page = await this.engine.read(this.key, seq - 1, 1);
        const e = page.entries[0];
        if (e !== undefined && Number(e.seq) === seq) entries.push(e);
      }
    } catch {
      return; // e.g. deleted meanwhile: the watchers' next read says why
    }
    const first = this.entries[0];
    if (first !== undefined) {
      for (const e of entries) {
        const i = Number(e.seq) - Number(first.seq);
        // Stryker disable next-line ConditionalExpression: without the lower bound an entry before the tail goes to a property "-1" of the array, which no slice reads
        if (i >= 0 && i < this.entries.length) this.entries[i] = e;
      }
    }
    if (entries.length === 0) return;
    const notice = { entries, headSeq: event.headSeq };
    for (const tell of this.withheldWatchers) tell(notice);
  }

  private async load(headSeq: number): Promise<void> {
    // A tail that holds entries continues after its newest (seqs start at 1,
    // so lastSeq is 0 only when it is empty); an empty one starts `capacity`
    // entries before the head.
    let after = this.lastSeq || Math.max(0, headSeq - this.capacity);
    while (after < headSeq) {
      const page = await this.engine.read(this.key, after, this.capacity);
      if (page.entries.length === 0) break;
      this.entries.push(...page.entries);
      after = this.lastSeq;
    }
    this.entries = this.entries.slice(-this.capacity); // the newest `capacity` (a shorter tail is copied whole)
  }

  /**
   * Entries with seq > afterSeq (at most `limit`), or undefined when the
   * tail does not reach back that far (the caller reads the engine).
   */
  slice(afterSeq: number, limit: number): { entries: Entry[]; headSeq: number } | undefined {
    const first = this.entries[0];
    if (first === undefined || afterSeq < Number(first.seq) - 1) return undefined;
    const start = afterSeq - (Number(first.seq) - 1);
    return { entries: this.entries.slice(start, start + limit), headSeq: this.lastSeq };
  }
}

import type { Entry, SessionInfo } from "../../gen/sessiond/v1/entry_pb.js";
import { dataLoss } from "./errors.js";
import { quote } from "./ids.js";
import { type Lookup, pathTo } from "./tree.js";

/**
 * SessionLog is one session's log held in memory: entries by seq and by id,
 * the current leaf, the newest label per text and a few counters. It is
 * pure (no I/O) and grows only through `apply`, which enforces the log
 * invariants that every engine relies on: seq dense from 1, ids unique, the
 * first entry a SessionInfo root, every other parent already present and
 * never a Leaf entry. Because a parent always precedes its child, a log built
 * this way cannot contain a cycle.
 *
 * Validation of client input is not done here (see append-plan.ts): `apply`
 * trusts its caller for semantics and only guards structure, so that
 * replaying a stored log is cheap.
 */
export class SessionLog {
  private readonly list: Entry[] = [];
  private readonly byId = new Map<string, Entry>();
  private readonly labelIndex = new Map<string, string>();
  private leaf = "";
  private messages = 0;
  private titleValue: string | undefined;

  /** Bound lookup for the tree algorithms. */
  readonly lookup: Lookup = (id) => this.byId.get(id);

  constructor(readonly sessionId: string) {}

  /** Builds a log from stored entries (seq order). */
  static from(sessionId: string, entries: Iterable<Entry>): SessionLog {
    const log = new SessionLog(sessionId);
    for (const e of entries) log.apply(e);
    return log;
  }

  get headSeq(): number {
    return this.list.length;
  }

  /** The current leaf (empty only for an empty log). */
  get leafId(): string {
    return this.leaf;
  }

  get messageCount(): number {
    return this.messages;
  }

  /** The newest SessionInfo title in the log. */
  get title(): string | undefined {
    return this.titleValue;
  }

  /** The first entry (a SessionInfo root). */
  get root(): Entry {
    const first = this.list[0];
    if (first === undefined) throw dataLoss(`session ${quote(this.sessionId)} has no entries`);
    return first;
  }

  /** The SessionInfo of the root entry. */
  get info(): SessionInfo {
    const k = this.root.kind;
    if (k.case !== "sessionInfo") {
      throw dataLoss(`session ${quote(this.sessionId)}: first entry is not a SessionInfo`);
    }
    return k.value;
  }

  get last(): Entry | undefined {
    return this.list[this.list.length - 1];
  }

  get(id: string): Entry | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Entry with the given 1-based seq. */
  at(seq: number): Entry | undefined {
    return this.list[seq - 1];
  }

  /** Entries with seq > afterSeq, at most `limit` of them. */
  slice(afterSeq: number, limit = Number.POSITIVE_INFINITY): Entry[] {
    const start = Math.max(0, afterSeq);
    const end = Math.min(this.list.length, start + limit);
    return start >= end ? [] : this.list.slice(start, end);
  }

  /** Every entry in seq order (read-only view). */
  entries(): readonly Entry[] {
    return this.list;
  }

  /** The id of the newest Label entry with this text. */
  labelTarget(label: string): string | undefined {
    return this.labelIndex.get(label);
  }

  /** Path root → id (the current leaf by default). */
  path(id: string = this.leaf): Entry[] {
    return pathTo(this.lookup, id);
  }

  /**
   * Adds a batch all-or-nothing: when any entry breaks an invariant, the
   * entries of the batch applied so far are rolled back and the error is
   * rethrown, so a bad plan never leaves half a batch in memory.
   */
  applyAll(entries: readonly Entry[]): void {
    const length = this.list.length;
    const leaf = this.leaf;
    const messages = this.messages;
    const title = this.titleValue;
    const labelUndo: Array<[string, string | undefined]> = [];
    try {
      for (const e of entries) {
        if (e.kind.case === "label") {
          labelUndo.push([e.kind.value.label, this.labelIndex.get(e.kind.value.label)]);
        }
        this.apply(e);
      }
    } catch (err) {
      while (this.list.length > length) this.byId.delete((this.list.pop() as Entry).id);
      for (const [label, before] of labelUndo.reverse()) {
        if (before === undefined) this.labelIndex.delete(label);
        else this.labelIndex.set(label, before);
      }
      this.leaf = leaf;
      this.messages = messages;
      this.titleValue = title;
      throw err;
    }
  }

  /**
   * Adds the next entry. Throws DATA_LOSS when the entry would break a log
   * invariant: a stored log that does so is corrupt, and a planner that
   * produces one has a bug that must not reach the disk.
   */
  apply(entry: Entry): void {
    const expected = this.list.length + 1;
    const where = `session ${quote(this.sessionId)} seq ${expected}`;
    if (Number(entry.seq) !== expected) {
      throw dataLoss(`${where}: entry ${quote(entry.id)} has seq ${entry.seq}`);
    }
    if (this.byId.has(entry.id)) throw dataLoss(`${where}: duplicate entry id ${quote(entry.id)}`);
    if (expected === 1) {
      if (entry.kind.case !== "sessionInfo" || entry.parentId !== undefined) {
        throw dataLoss(`${where}: the first entry must be a SessionInfo root`);
      }
    } else {
      const parent = entry.parentId === undefined ? undefined : this.byId.get(entry.parentId);
      if (parent === undefined) {
        throw dataLoss(`${where}: entry ${quote(entry.id)} has no parent in the log`);
      }
      if (parent.kind.case === "leaf") {
        throw dataLoss(`${where}: entry ${quote(entry.id)} has a Leaf entry as parent`);
      }
    }
    this.list.push(entry);
    this.byId.set(entry.id, entry);
    const k = entry.kind;
    switch (k.case) {
      case "leaf": {
        const target = this.byId.get(k.value.leafId);
        if (target === undefined || target.kind.case === "leaf") {
          this.list.pop();
          this.byId.delete(entry.id);
          throw dataLoss(`${where}: Leaf entry ${quote(entry.id)} points at no valid entry`);
        }
        this.leaf = k.value.leafId;
        return;
      }
      case "message":
        this.messages++;
        break;
      case "label":
        this.labelIndex.set(k.value.label, entry.id);
        break;
      case "sessionInfo":
        if (k.value.title !== undefined) this.titleValue = k.value.title;
        break;
      default:
        break;
    }
    this.leaf = entry.id;
  }
}

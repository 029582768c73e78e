import type { Entry, SessionInfo } from "../../gen/sessiond/v1/entry_pb.js";
import { dataLoss, invalidArgument } from "./errors.js";
import { quote } from "./ids.js";
import { applyTagChanges, type Tags } from "./tags.js";
import type { Lookup } from "./tree.js";

/** The kind of an entry (`Entry["kind"]["case"]`; undefined for an entry without kind). */
export type EntryKind = Entry["kind"]["case"];

/**
 * What the log indexes of an entry: everything its invariants, counters and
 * lookups need, and nothing else. A reader extracts it without decoding the
 * whole entry (see `applyLazy`).
 */
export interface EntryMeta {
  id: string;
  parentId: string | undefined;
  seq: number;
  kind: EntryKind;
  /** Leaf entries: the entry the leaf moves to. */
  leafId?: string | undefined;
  /** Label entries: the label text. */
  label?: string | undefined;
  /** SessionInfo entries: the title, when set. */
  title?: string | undefined;
}

/**
 * Where the full entries of lazily applied records come from (a storage
 * engine's raw bytes). `start` / `end` are opaque to the log: they are the
 * values given to `applyLazy`.
 */
export interface EntrySource {
  /** The full entry; throws DATA_LOSS naming where it is stored when it does not decode. */
  decode(seq: number, start: number, end: number): Entry;
  /** Throws DATA_LOSS naming where entry `seq` is stored, with `reason`. */
  corrupt(seq: number, start: number, end: number, reason: string): never;
}

/**
 * One entry of the log: the indexed fields, and the full Entry once it has
 * been materialised (always, for entries given to `apply`). A class so that
 * every slot has the same shape (one hidden class, compact in memory).
 */
class Slot {
  constructor(
    readonly id: string,
    readonly seq: number,
    readonly parent: Slot | undefined,
    readonly kind: EntryKind,
    /** Leaf target, label text or SessionInfo title: checked against the full entry. */
    readonly aux: string | undefined,
    public entry: Entry | undefined,
    public source: EntrySource | undefined,
    public start: number,
    public end: number,
  ) {}
}

function auxOf(kind: Entry["kind"]): string | undefined {
  switch (kind.case) {
    case "leaf":
      return kind.value.leafId;
    case "label":
      return kind.value.label;
    case "sessionInfo":
      return kind.value.title;
    // Stryker disable next-line ConditionalExpression: emptied, this last clause falls out of the switch and the function returns undefined all the same
    default:
      return undefined;
  }
}

/**
 * SessionLog is one session's log held in memory: entries by seq and by id,
 * the current leaf, the newest label per text and a few counters. It is
 * pure (no I/O) and grows only through `apply` / `applyLazy`, which enforce
 * the log invariants that every engine relies on: seq dense from 1, ids
 * unique, the first entry a SessionInfo root, every other parent already
 * present and never a Leaf entry. Because a parent always precedes its
 * child, a log built this way cannot contain a cycle.
 *
 * Validation of client input is not done here (see append-plan.ts): `apply`
 * trusts its caller for semantics and only guards structure, so that
 * replaying a stored log is cheap.
 *
 * Entries are held as compact slots (id, parent, kind, seq). A reader that
 * loads a big session gives only those (`applyLazy`) plus a source of the
 * full entry, which is decoded the first time it is asked for (`get`, `at`,
 * `path`, ...) and then kept: a warm read never decodes twice. An entry
 * whose stored form turns out not to decode, or not to match what was
 * indexed, throws DATA_LOSS (from the source, naming where it is stored).
 */
export class SessionLog {
  private readonly list: Slot[] = [];
  /** Keyed `string | undefined` so that an absent parent or Leaf target is simply not found. */
  private readonly byId = new Map<string | undefined, Slot>();
  private readonly labelIndex = new Map<string, string>();
  private leaf = "";
  private messages = 0;
  private titleValue: string | undefined;
  private changes = 0;
  /** The SessionInfo entries, root first: their tags fold into the session's. */
  private readonly infoSlots: Slot[] = [];
  /** The tags folded over the first `count` SessionInfo entries (reset by truncate). */
  private tagsMemo: { count: number; tags: Tags } | undefined;

  /** Bound lookup for the tree algorithms. */
  readonly lookup: Lookup = (id) => this.get(id);

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

  /**
   * Changes with every entry added or dropped: two reads of a log that give
   * the same version see the same entries, so what is derived from a log
   * (its listing record) can be remembered per log and version.
   */
  get version(): number {
    return this.changes;
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

  /**
   * The session's tags: the root's, with every later SessionInfo's changes
   * applied in seq order (core/tags.ts). Folded on demand and remembered:
   * SessionInfo entries are few, and most reads never ask.
   */
  get tags(): Tags {
    let { count, tags } = this.tagsMemo ?? { count: 0, tags: {} };
    for (; count < this.infoSlots.length; count++) {
      const info = this.entryOf(this.infoSlots[count] as Slot).kind.value as SessionInfo;
      tags = applyTagChanges(tags, info.tags);
    }
    this.tagsMemo = { count, tags };
    return tags;
  }

  /** The first entry (a SessionInfo root). */
  get root(): Entry {
    const first = this.list[0];
    if (first === undefined) throw dataLoss(`session ${quote(this.sessionId)} has no entries`);
    return this.entryOf(first);
  }

  /**
   * The SessionInfo of the root entry: `admit` takes only a SessionInfo as
   * first entry, and `entryOf` refuses a decoded entry of another kind.
   */
  get info(): SessionInfo {
    return this.root.kind.value as SessionInfo;
  }

  get last(): Entry | undefined {
    const slot = this.list[this.list.length - 1];
    return slot === undefined ? undefined : this.entryOf(slot);
  }

  get(id: string): Entry | undefined {
    const slot = this.byId.get(id);
    return slot === undefined ? undefined : this.entryOf(slot);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /**
   * The kind of entry `id` (what the log indexes: the entry is not
   * decoded), or null when the log has no such entry.
   */
  kindOf(id: string): EntryKind | null {
    const slot = this.byId.get(id);
    return slot === undefined ? null : slot.kind;
  }

  /**
   * Lets go of the full entry of seq `seq` (one given to `apply`): it is
   * decoded from `source` again (`source.decode(seq, start, end)`) the next
   * time it is asked for, and checked against what is indexed, like a
   * lazily loaded record. An engine calls it once the entry is stored in a
   * form it can decode: the log then keeps that form, not the entry's
   * objects.
   */
  stored(seq: number, source: EntrySource, start: number, end: number): void {
    const slot = this.list[seq - 1];
    if (slot === undefined) return;
    slot.entry = undefined;
    slot.source = source;
    slot.start = start;
    slot.end = end;
  }

  /**
   * Puts each of `entries` in the place of the entry of its seq: a
   * rewritten form of it (a withheld one, core/withheld.ts) that keeps its
   * id, parent, seq, kind and indexed text (Leaf target, label, title), so
   * that the tree, counters and indexes stay as they are. All or none:
   * every one is checked before the first is replaced, and DATA_LOSS is
   * thrown when one does not keep them (a bug that must not reach the
   * disk). Changes the version.
   */
  replaceAll(entries: readonly Entry[]): void {
    const slots = entries.map((entry) => {
      const seq = Number(entry.seq);
      const slot = this.list[seq - 1];
      if (slot === undefined) throw this.refuse(seq, `no entry to replace by ${quote(entry.id)}`);
      const mismatch = this.mismatch(slot, entry);
      if (mismatch !== undefined) {
        throw this.refuse(seq, `the replacement of ${quote(slot.id)} changes its ${mismatch}`);
      }
      return slot;
    });
    slots.forEach((slot, i) => {
      slot.entry = entries[i];
      slot.source = undefined;
    });
    if (slots.length > 0) this.changes++;
  }

  /** Entry with the given 1-based seq. */
  at(seq: number): Entry | undefined {
    const slot = this.list[seq - 1];
    return slot === undefined ? undefined : this.entryOf(slot);
  }

  /** Entries with seq > afterSeq, at most `limit` of them. */
  slice(afterSeq: number, limit = Number.POSITIVE_INFINITY): Entry[] {
    const start = Math.max(0, afterSeq);
    const end = Math.min(this.list.length, start + limit);
    const out: Entry[] = [];
    for (let i = start; i < end; i++) out.push(this.entryOf(this.list[i] as Slot));
    return out;
  }

  /** Every entry in seq order (decodes every entry not yet decoded). */
  entries(): readonly Entry[] {
    return this.slice(0);
  }

  /** The id of the newest Label entry with this text. */
  labelTarget(label: string): string | undefined {
    return this.labelIndex.get(label);
  }

  /** Path root → id (the current leaf by default). */
  path(id: string = this.leaf): Entry[] {
    let slot = this.byId.get(id);
    if (slot === undefined) throw invalidArgument(`entry ${quote(id)} not found`);
    // Parents always precede their children, so the walk ends at the root.
    const path: Entry[] = [];
    for (; slot !== undefined; slot = slot.parent) path.push(this.entryOf(slot));
    path.reverse();
    return path;
  }

  /**
   * Adds a batch all-or-nothing: when any entry breaks an invariant, the
   * entries of the batch applied so far are rolled back and the error is
   * rethrown, so a bad plan never leaves half a batch in memory.
   */
  applyAll(entries: readonly Entry[]): void {
    const length = this.list.length;
    try {
      for (const e of entries) this.apply(e);
    } catch (err) {
      this.truncate(length);
      throw err;
    }
  }

  /**
   * Drops the entries after seq `headSeq`, as if they had never been
   * applied (leaf, counters, title and labels included). A reader uses it
   * for the records of a write whose last record is missing (a torn tail:
   * the write is all or nothing), and `applyAll` to roll a batch back.
   * Costs the dropped entries, a walk back to the newest titled
   * SessionInfo, and one to the newest Label of each dropped label text.
   */
  truncate(headSeq: number): void {
    const keep = Math.max(0, headSeq);
    const labels = new Set<string>();
    this.changes++;
    while (this.list.length > keep) {
      const slot = this.list.pop() as Slot;
      this.byId.delete(slot.id);
      if (slot.kind === "message") this.messages--;
      if (slot.kind === "sessionInfo") this.infoSlots.pop();
      // Stryker disable next-line ConditionalExpression: a text no dropped Label had is recomputed to the newest remaining Label with it, which is what the index already holds (or nothing, for a title, a Leaf target or undefined): the test only saves the walks
      if (slot.kind === "label") labels.add(slot.aux as string);
    }
    const last = this.list[this.list.length - 1];
    this.leaf = last === undefined ? "" : last.kind === "leaf" ? (last.aux as string) : last.id;
    for (const label of labels) {
      const newest = this.newest((s) => s.kind === "label" && s.aux === label);
      if (newest === undefined) this.labelIndex.delete(label);
      else this.labelIndex.set(label, newest.id);
    }
    this.titleValue = this.newest((s) => s.kind === "sessionInfo" && s.aux !== undefined)?.aux;
    this.tagsMemo = undefined;
  }

  /** The newest slot that passes `test`. */
  private newest(test: (slot: Slot) => boolean): Slot | undefined {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const slot = this.list[i] as Slot;
      if (test(slot)) return slot;
    }
    return undefined;
  }

  /**
   * Adds the next entry. Throws DATA_LOSS when the entry would break a log
   * invariant: a stored log that does so is corrupt, and a planner that
   * produces one has a bug that must not reach the disk.
   */
  apply(entry: Entry): void {
    this.admit(
      entry.id,
      entry.parentId,
      entry.seq,
      entry.kind.case,
      auxOf(entry.kind),
      entry,
      undefined,
      0,
      0,
    );
  }

  /**
   * Adds the next entry from its indexed fields only; the full entry is
   * `source.decode(meta.seq, start, end)`, called the first time the entry
   * is asked for. Same invariants and errors as `apply`. When the decoded
   * entry disagrees with `meta` (id, parent, seq, kind, leaf target, label
   * or title) it is reported through `source.corrupt`.
   */
  applyLazy(meta: EntryMeta, source: EntrySource, start: number, end: number): void {
    const aux =
      meta.kind === "leaf"
        ? meta.leafId
        : meta.kind === "label"
          ? (meta.label ?? "")
          : meta.kind === "sessionInfo"
            ? meta.title
            : undefined;
    this.admit(meta.id, meta.parentId, meta.seq, meta.kind, aux, undefined, source, start, end);
  }

  private admit(
    id: string,
    parentId: string | undefined,
    seq: number | bigint,
    kind: EntryKind,
    aux: string | undefined,
    entry: Entry | undefined,
    source: EntrySource | undefined,
    start: number,
    end: number,
  ): void {
    const expected = this.list.length + 1;
    if (Number(seq) !== expected) throw this.refuse(expected, `entry ${quote(id)} has seq ${seq}`);
    if (this.byId.has(id)) throw this.refuse(expected, `duplicate entry id ${quote(id)}`);
    let parent: Slot | undefined;
    if (expected === 1) {
      if (kind !== "sessionInfo" || parentId !== undefined) {
        throw this.refuse(expected, "the first entry must be a SessionInfo root");
      }
    } else {
      parent = this.byId.get(parentId);
      if (parent === undefined)
        throw this.refuse(expected, `entry ${quote(id)} has no parent in the log`);
      if (parent.kind === "leaf")
        throw this.refuse(expected, `entry ${quote(id)} has a Leaf entry as parent`);
    }
    if (kind === "leaf") {
      const target = this.byId.get(aux);
      if (target === undefined || target.kind === "leaf") {
        throw this.refuse(expected, `Leaf entry ${quote(id)} points at no valid entry`);
      }
    }
    const slot = new Slot(id, expected, parent, kind, aux, entry, source, start, end);
    this.changes++;
    this.list.push(slot);
    this.byId.set(id, slot);
    switch (kind) {
      case "leaf":
        this.leaf = aux as string;
        return;
      case "message":
        this.messages++;
        break;
      case "label":
        this.labelIndex.set(aux as string, id);
        break;
      case "sessionInfo":
        if (aux !== undefined) this.titleValue = aux;
        this.infoSlots.push(slot);
        break;
    }
    this.leaf = id;
  }

  /** The error for a refused entry (built only on failure: admit runs for every entry loaded). */
  private refuse(seq: number, what: string) {
    return dataLoss(`session ${quote(this.sessionId)} seq ${seq}: ${what}`);
  }

  /** The full entry of a slot, decoded (and checked against the slot) on first use. */
  private entryOf(slot: Slot): Entry {
    if (slot.entry !== undefined) return slot.entry;
    const source = slot.source as EntrySource;
    const entry = source.decode(slot.seq, slot.start, slot.end);
    const mismatch = this.mismatch(slot, entry);
    if (mismatch !== undefined) {
      source.corrupt(
        slot.seq,
        slot.start,
        slot.end,
        `the entry does not match its indexed ${mismatch} (${quote(slot.id)})`,
      );
    }
    slot.entry = entry;
    slot.source = undefined;
    return entry;
  }

  /** Which indexed field the full entry contradicts, if any. */
  private mismatch(slot: Slot, entry: Entry): string | undefined {
    if (entry.id !== slot.id) return "id";
    if (entry.parentId !== slot.parent?.id) return "parent";
    if (Number(entry.seq) !== slot.seq) return "seq";
    if (entry.kind.case !== slot.kind) return "kind";
    if (auxOf(entry.kind) !== slot.aux) {
      return slot.kind === "leaf" ? "leaf target" : slot.kind === "label" ? "label" : "title";
    }
    return undefined;
  }
}

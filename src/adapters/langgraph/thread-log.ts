import type { Entry } from "../../client/index.js";
import { materialize, type StoredValue } from "./stored-value.js";
import {
  type CheckpointRecord,
  type ThreadEntry,
  threadEntryOf,
  type WriteRecord,
} from "./thread-entries.js";

/** Special writes (errors, interrupts, ...) have negative indexes and replace what they find. */
function replaces(idx: number): boolean {
  return idx < 0;
}

const key = (...parts: string[]) => parts.join("\u0000");

/**
 * One thread's session mirrored here: its checkpoints by namespace and id,
 * the stored channel values by (namespace, channel, version), the pending
 * writes of each checkpoint folded as the savers of LangGraph fold them
 * (the first write of a task's index wins, a special write replaces), and
 * the head seq the mirror is at. Pure: entries go in through `apply`.
 */
export class ThreadLog {
  /** The session's head seq as far as this mirror knows (0: no session). */
  headSeq = 0;
  /** The session's root entry id (undefined: no session). */
  rootId: string | undefined;
  private readonly checkpoints = new Map<string, Map<string, CheckpointRecord>>();
  private readonly values = new Map<string, StoredValue>();
  /** Latest stored version per (namespace, channel): the base a next version extends. */
  private readonly latest = new Map<string, { version: string; text?: string }>();
  private readonly carriers = new Map<string, string>();
  private readonly writes = new Map<string, Map<string, WriteRecord>>();
  private readonly ids = new Set<string>();

  /** Applies the session's entries with seq > headSeq, in seq order. */
  applyAll(entries: readonly Entry[]): void {
    for (const e of entries) {
      if (Number(e.seq) <= this.headSeq) continue;
      this.apply(e, threadEntryOf(e));
      this.headSeq = Number(e.seq);
    }
  }

  /** Applies one entry whose meaning is already known (an entry this process wrote). */
  apply(e: Entry, meaning: ThreadEntry): void {
    this.ids.add(e.id);
    if (e.parentId === undefined && e.kind.case === "sessionInfo") this.rootId = e.id;
    if (meaning?.kind === "checkpoint") {
      const r = meaning.record;
      const inNs = this.checkpoints.get(r.ns) ?? new Map<string, CheckpointRecord>();
      this.checkpoints.set(r.ns, inNs);
      inNs.set(r.id, r);
      for (const [ch, { version, value }] of Object.entries(r.values)) {
        this.values.set(key(r.ns, ch, version), value);
        this.latest.set(key(r.ns, ch), { version });
      }
    } else if (meaning?.kind === "writes") {
      const r = meaning.record;
      const k = key(r.ns, r.checkpoint);
      const folded = this.writes.get(k) ?? new Map<string, WriteRecord>();
      this.writes.set(k, folded);
      for (const w of r.writes) {
        const wk = key(w.task, String(w.idx));
        if (!folded.has(wk) || replaces(w.idx)) folded.set(wk, w);
      }
    } else if (meaning?.kind === "carrier") {
      this.carriers.set(e.id, meaning.text);
    }
  }

  has(entryId: string): boolean {
    return this.ids.has(entryId);
  }

  namespaces(): string[] {
    return [...this.checkpoints.keys()];
  }

  checkpoint(ns: string, id: string): CheckpointRecord | undefined {
    return this.checkpoints.get(ns)?.get(id);
  }

  /** The checkpoints of a namespace, any order. */
  checkpointsOf(ns: string): CheckpointRecord[] {
    return [...(this.checkpoints.get(ns)?.values() ?? [])];
  }

  /** The newest checkpoint of a namespace (the greatest id: ids are uuid6, time ordered). */
  latestCheckpoint(ns: string): CheckpointRecord | undefined {
    let best: CheckpointRecord | undefined;
    for (const r of this.checkpoints.get(ns)?.values() ?? []) {
      if (best === undefined || r.id > best.id) best = r;
    }
    return best;
  }

  /** The stored value of a channel's version, or undefined when that version was never stored. */
  value(ns: string, channel: string, version: string): StoredValue | undefined {
    return this.values.get(key(ns, channel, version));
  }

  /** The text a stored value of (ns, channel) stands for. */
  text(ns: string, channel: string, value: StoredValue): string {
    return materialize(value, {
      version: (v) => this.values.get(key(ns, channel, v)),
      carried: (id) => this.carriers.get(id),
    });
  }

  /** The text of a value with no base (its own, or its carrier entry's). */
  ownText(value: StoredValue): string {
    if (value.ref === undefined) return value.d ?? "";
    const text = this.carriers.get(value.ref);
    if (text === undefined) throw new Error(`langgraph value: entry ${value.ref} is not stored`);
    return text;
  }

  /** The version a new value of (ns, channel) may extend, with its text. */
  baseOf(ns: string, channel: string): { version: string; text: string } | undefined {
    const latest = this.latest.get(key(ns, channel));
    if (latest === undefined) return undefined;
    if (latest.text === undefined) {
      const stored = this.values.get(key(ns, channel, latest.version));
      if (stored === undefined || stored.b64) return undefined;
      latest.text = this.text(ns, channel, stored);
    }
    return { version: latest.version, text: latest.text };
  }

  /** Remembers the text of a version this process just wrote (so the next one need not rebuild it). */
  rememberText(ns: string, channel: string, version: string, text: string): void {
    const latest = this.latest.get(key(ns, channel));
    if (latest?.version === version) latest.text = text;
  }

  /** The folded writes of a checkpoint (unordered). */
  writesOf(ns: string, checkpoint: string): WriteRecord[] {
    return [...(this.writes.get(key(ns, checkpoint))?.values() ?? [])];
  }

  /** Whether (task, idx) of a checkpoint holds a write a new one would not replace. */
  holdsWrite(ns: string, checkpoint: string, task: string, idx: number): boolean {
    return (
      !replaces(idx) && (this.writes.get(key(ns, checkpoint))?.has(key(task, String(idx))) ?? false)
    );
  }
}

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
  /** Per (namespace, channel): the checkpoint that stored its latest value (the base of the next). */
  private readonly latest = new Map<string, { checkpoint: string; text?: string }>();
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
      for (const ch of Object.keys(r.values)) this.latest.set(key(r.ns, ch), { checkpoint: r.id });
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

  /**
   * The values of `versions` (channel -> version) as of checkpoint
   * `record`: each from the nearest checkpoint on its path (itself, its
   * parent, ...) that stored that version of the channel. A path, not the
   * thread: a fork counts versions on from its fork point, so two branches
   * hold different values under one version.
   */
  valuesAt(
    record: CheckpointRecord,
    versions: Record<string, string>,
  ): Map<string, { value: StoredValue; at: string }> {
    const found = new Map<string, { value: StoredValue; at: string }>();
    const wanted = new Set(Object.keys(versions));
    const seen = new Set<string>();
    for (let r: CheckpointRecord | undefined = record; r !== undefined && wanted.size > 0; ) {
      if (seen.has(r.id)) break;
      seen.add(r.id);
      for (const ch of wanted) {
        const stored = r.values[ch];
        if (stored !== undefined && stored.version === versions[ch]) {
          found.set(ch, { value: stored.value, at: r.id });
          wanted.delete(ch);
        }
      }
      r = r.parent === undefined ? undefined : this.checkpoint(r.ns, r.parent);
    }
    return found;
  }

  /** The text of the value of `channel` that checkpoint `at` of `ns` stored. */
  text(ns: string, channel: string, value: StoredValue): string {
    return materialize(value, {
      version: (at) => this.checkpoint(ns, at)?.values[channel]?.value,
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

  /** The checkpoint whose value of (ns, channel) a new value may extend, with its text. */
  baseOf(ns: string, channel: string): { checkpoint: string; text: string } | undefined {
    const latest = this.latest.get(key(ns, channel));
    if (latest === undefined) return undefined;
    if (latest.text === undefined) {
      const stored = this.checkpoint(ns, latest.checkpoint)?.values[channel]?.value;
      if (stored === undefined || stored.b64) return undefined;
      latest.text = this.text(ns, channel, stored);
    }
    return { checkpoint: latest.checkpoint, text: latest.text };
  }

  /** Remembers the text of a value this process just wrote (so the next one need not rebuild it). */
  rememberText(ns: string, channel: string, checkpoint: string, text: string): void {
    const latest = this.latest.get(key(ns, channel));
    if (latest?.checkpoint === checkpoint) latest.text = text;
  }

  /** The folded writes of a checkpoint (unordered). */
  writesOf(ns: string, checkpoint: string): WriteRecord[] {
    return [...(this.writes.get(key(ns, checkpoint))?.values() ?? [])];
  }

  /** Whether (task, idx) of a checkpoint holds a write a new one would not replace. */
  holdsWrite(ns: string, checkpoint: string, task: string, idx: number): boolean {
    if (replaces(idx)) return false;
    return this.writes.get(key(ns, checkpoint))?.has(key(task, String(idx))) ?? false;
  }
}

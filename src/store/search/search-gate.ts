import type { RootRecord, SessionRecord, StorageEngine } from "../../storage/engine.js";
import { type CheckedFilter, matches, rootMatches } from "../session-filter.js";

/** Records read at once when a filter needs them (title, tags, update time). */
const FILTER_BATCH = 64;

/**
 * Which sessions a filtered search looks into. The root decides some
 * conditions; the others need the session's listing record, read for a
 * batch of the sessions the search meets next (one read, not one per
 * session), and kept for the rest of the search: a session whose entries
 * come up several times is judged once.
 */
export class SearchGate {
  /** null: gone since its root was read. */
  private readonly records = new Map<string, SessionRecord | null>();

  constructor(
    private readonly engine: StorageEngine,
    private readonly workspace: string,
    private readonly filter: CheckedFilter | undefined,
  ) {}

  /**
   * Whether the search looks into `root`'s session. `order` is the roots
   * the search meets, in order; those from index `next` on are read along
   * with this one's (an index, not a slice: the search calls this once per
   * session, and a copy of the rest each time would cost the square of a
   * workspace's size).
   */
  async admits(root: RootRecord, order: readonly RootRecord[], next: number): Promise<boolean> {
    const f = this.filter;
    if (f === undefined) return true;
    if (!rootMatches(f, root)) return false;
    if (!this.records.has(root.sessionId)) {
      const batch = [root.sessionId];
      for (let k = next; k < order.length && batch.length < FILTER_BATCH; k++) {
        const r = order[k] as RootRecord;
        // Stryker disable next-line ConditionalExpression: reading the records of sessions the root already rules out, or twice, costs reads, not results
        if (!this.records.has(r.sessionId) && !batch.includes(r.sessionId) && rootMatches(f, r)) {
          batch.push(r.sessionId);
        }
      }
      for (const id of batch) this.records.set(id, null);
      for (const r of await this.engine.list(this.workspace, batch)) {
        this.records.set(r.sessionId, r);
      }
    }
    const record = this.records.get(root.sessionId);
    // Stryker disable next-line ConditionalExpression: every id of a batch read is set (null when gone), so it is never undefined here
    return record !== null && record !== undefined && matches(f, record);
  }
}

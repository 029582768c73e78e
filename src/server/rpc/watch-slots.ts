import { resourceExhausted } from "../../core/errors.js";
import { quote } from "../../core/ids.js";

/**
 * Counts open watch streams, per session and in total, so that a flood of
 * idle streams is refused with RESOURCE_EXHAUSTED instead of exhausting
 * memory. `acquire` returns the release function; release is idempotent.
 */
export class WatchSlots {
  private total = 0;
  private unkeyedOpen = 0;
  private readonly perKey = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerKey: number,
  ) {}

  get open(): number {
    return this.total;
  }

  /** Open streams without a session (WatchSessions). */
  get unkeyed(): number {
    return this.unkeyedOpen;
  }

  /**
   * The `n` largest numbers of watchers on one session, largest first,
   * without the sessions' names: what metrics may show of a per-session
   * count without a label per session.
   */
  top(n: number): number[] {
    const top: number[] = [];
    for (const count of this.perKey.values()) {
      if (top.length === n && count <= (top[n - 1] as number)) continue;
      let i = Math.min(top.length, n - 1);
      while (i > 0 && (top[i - 1] as number) < count) i--;
      top.splice(i, 0, count);
      if (top.length > n) top.pop();
    }
    return top;
  }

  acquire(key: string | undefined): () => void {
    if (this.total >= this.maxTotal) {
      throw resourceExhausted(`too many watch streams (limit ${this.maxTotal})`);
    }
    const n = key === undefined ? 0 : (this.perKey.get(key) ?? 0);
    if (key !== undefined && n >= this.maxPerKey) {
      throw resourceExhausted(
        `too many watchers of session ${quote(key)} (limit ${this.maxPerKey})`,
      );
    }
    this.total++;
    if (key !== undefined) this.perKey.set(key, n + 1);
    else this.unkeyedOpen++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      if (key === undefined) {
        this.unkeyedOpen--;
        return;
      }
      const left = (this.perKey.get(key) ?? 1) - 1;
      if (left === 0) this.perKey.delete(key);
      else this.perKey.set(key, left);
    };
  }
}

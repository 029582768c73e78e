import { resourceExhausted } from "../core/errors.js";
import { quote } from "../core/ids.js";

/**
 * Counts open watch streams, per session and in total, so that a flood of
 * idle streams is refused with RESOURCE_EXHAUSTED instead of exhausting
 * memory. `acquire` returns the release function; release is idempotent.
 */
export class WatchSlots {
  private total = 0;
  private readonly perKey = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerKey: number,
  ) {}

  get open(): number {
    return this.total;
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
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      if (key === undefined) return;
      const left = (this.perKey.get(key) ?? 1) - 1;
      if (left === 0) this.perKey.delete(key);
      else this.perKey.set(key, left);
    };
  }
}

/**
 * Work that takes turns per key: a run starts once the previous run of its
 * key has settled (whatever its outcome), runs of other keys do not wait,
 * and a key is forgotten once its last run settles. The blob store's
 * collections (per workspace) and upload chunks (per blob) go this way.
 */
export class KeyedTurns {
  private readonly last = new Map<string, Promise<unknown>>();

  /** `fn` in `key`'s turn; its own outcome. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.last.get(key) ?? Promise.resolve()).catch(() => undefined).then(fn);
    this.last.set(key, run);
    const forget = () => {
      if (this.last.get(key) === run) this.last.delete(key);
    };
    run.then(forget, forget);
    return run;
  }

  /** Keys with a run queued or running. */
  get size(): number {
    return this.last.size;
  }
}

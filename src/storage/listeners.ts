import type { StorageEvent, StorageListener } from "./engine.js";

/**
 * The subscribers of one engine. A listener's bug must neither fail the
 * change that is already durable nor starve the other listeners, so each
 * call is isolated and a throw becomes a process warning.
 */
export class Listeners {
  private readonly set = new Set<StorageListener>();

  subscribe(listener: StorageListener): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  emit(event: StorageEvent): void {
    for (const l of this.set) {
      try {
        l(event);
      } catch (err) {
        process.emitWarning(`storage listener failed: ${String(err)}`);
      }
    }
  }

  clear(): void {
    this.set.clear();
  }
}

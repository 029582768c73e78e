import type { SessionStore } from "../store/session-store.js";

/** The name under which replicas take turns at collecting blobs (StorageEngine.exclusive). */
const BLOB_JOB = "blobs";

export interface BlobSweeper {
  /** One collection of every workspace now (tests; the timer calls it too). */
  sweep(): Promise<void>;
  /** Stops the timer and waits for a collection in progress. */
  stop(): Promise<void>;
}

/**
 * Collects every workspace's unreferenced blobs and stale uploads
 * (BlobStore.collect: those untouched for --blob-grace-ms) every
 * `intervalMs`, the first time a minute after start (a restart loop does
 * not rescan the data each time), one workspace at a time; logs one JSON
 * line per workspace that lost blobs. Deletes also start a collection of
 * their workspace (SessionStore.delete); this sweep catches uploads that
 * were never referenced and collections a crash cut short. A failure is
 * logged and retried at the next interval; it never stops the server.
 */
export function startBlobSweep(
  store: SessionStore,
  intervalMs: number,
  log: (line: string) => void,
  firstAfterMs = 60_000,
): BlobSweeper {
  let running: Promise<void> | undefined;
  let stopped = false;
  const sweepAll = async () => {
    for (const workspace of await store.engine.workspaces()) {
      if (stopped) return;
      const c = await store.blobs.collect(workspace);
      if (c.removed > 0 || c.skipped !== undefined) {
        log(JSON.stringify({ msg: "blobs collected", workspace, ...c }));
      }
    }
  };
  const sweep = () => {
    running ??= (async () => {
      try {
        const exclusive = store.engine.exclusive?.bind(store.engine);
        if (exclusive) await exclusive(BLOB_JOB, sweepAll);
        else await sweepAll();
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        log(JSON.stringify({ msg: "blob collection failed", error }));
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  const first = setTimeout(() => void sweep(), firstAfterMs);
  first.unref();
  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}

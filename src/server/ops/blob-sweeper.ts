import type { SessionStore } from "../../store/index.js";
import { errorText, startPeriodicJob } from "./periodic-job.js";

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
  const sweepAll = async () => {
    for (const workspace of await store.engine.workspaces()) {
      if (job.stopped) return;
      const c = await store.blobs.collect(workspace);
      if (c.removed > 0 || c.skipped !== undefined) {
        log(JSON.stringify({ msg: "blobs collected", workspace, ...c }));
      }
    }
  };
  const job = startPeriodicJob({
    store,
    name: BLOB_JOB,
    intervalMs,
    firstAfterMs,
    job: sweepAll,
    onError: (err) => log(JSON.stringify({ msg: "blob collection failed", error: errorText(err) })),
  });
  return { sweep: job.run, stop: job.stop };
}

import type { StorageObserver } from "../observer.js";
import { inSpan, tracingEnabled } from "../observer.js";
import { type FsOps, syncFsOps, withSyncFsOps } from "./fs-ops.js";

/**
 * The engine's file system with every fdatasync and fsync timed for the
 * observer and traced as a span: the disk's flush is where an append's
 * latency goes, so operators watch it apart from everything else. Wrapping
 * FsOps (instead of timing at each call site) also covers the syncs of
 * creates, directory entries and tail repairs.
 */
export function observedFs(ops: FsOps, observer: StorageObserver): FsOps {
  const timed =
    (name: string, sync: (fd: number, inline?: boolean) => Promise<void>) =>
    (fd: number, inline?: boolean): Promise<void> => {
      const run = () => {
        const start = performance.now();
        const done = () => observer.synced((performance.now() - start) / 1000);
        return sync(fd, inline).then(done, (err: unknown) => {
          done();
          throw err;
        });
      };
      return tracingEnabled() ? inSpan(name, run) : run();
    };
  return withSyncFsOps(
    {
      ...ops,
      fdatasync: timed("jsonl.fdatasync", (fd, inline) => ops.fdatasync(fd, inline)),
      fsync: timed("jsonl.fsync", (fd) => ops.fsync(fd)),
    },
    syncFsOps(ops),
  );
}

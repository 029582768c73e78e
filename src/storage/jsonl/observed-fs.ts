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
  const fdatasync = timed("jsonl.fdatasync", (fd, inline) => ops.fdatasync(fd, inline));
  const sync = syncFsOps(ops);
  return withSyncFsOps(
    {
      ...ops,
      fdatasync,
      fsync: timed("jsonl.fsync", (fd) => ops.fsync(fd)),
    },
    sync === undefined
      ? undefined
      : {
          ...sync,
          // Timed alike; traced as a span through the promise form.
          fdatasync: (fd, inline, done) => {
            if (tracingEnabled()) {
              fdatasync(fd, inline).then(
                () => done(null),
                (err: NodeJS.ErrnoException) => done(err),
              );
              return;
            }
            const start = performance.now();
            sync.fdatasync(fd, inline, (err) => {
              observer.synced((performance.now() - start) / 1000);
              done(err);
            });
          },
        },
  );
}

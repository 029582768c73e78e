/**
 * The least a durable store must do per request, for the durable Append
 * echo (bench/grpc-echo-server.ts `--durable <dir>`): write the request's
 * bytes as one line to a file and fdatasync it before answering.
 *
 * It flushes the way sessiond's JSONL engine does (inline-sync.ts), so the
 * two differ only in what sessiond does besides: a call that arrives when
 * none has overlapped another for QUIET_MS writes and flushes on the main
 * thread (what a sequential client meets); otherwise it goes through
 * libuv's pool (default size, as sessiond's). Each call writes to the next
 * of `files` files in turn (as 64 clients on 64 sessions reach 64 files).
 * (sessiond also sends flushes to the pool when the disk turns slow; the
 * durable echo does not, which can only make it faster.)
 *
 * Why a baseline of its own: the fdatasync floor times write + fdatasync
 * back to back in a loop, but between a server's flushes the request and
 * the answer cross the network and both processes sleep, and a flush after
 * such a pause costs more on the VMs measured here. The durable Append
 * echo's p50 minus the echo's is what the flush (and Append's larger
 * messages) cost inside a request; the rest of sessiond's is its own work.
 */
import { close, fdatasync, fdatasyncSync, openSync, write, writeSync } from "node:fs";
import { join } from "node:path";
import { QUIET_MS } from "../../src/storage/jsonl/inline-sync.js";

export class DurableLines {
  private readonly fds: number[];
  private next = 0;
  /** Calls not answered yet. */
  private inFlight = 0;
  /** When a call last arrived while another was unanswered (sessiond's QUIET_MS rule). */
  private busyAt = Number.NEGATIVE_INFINITY;

  constructor(dir: string, files: number) {
    this.fds = Array.from({ length: files }, (_, i) =>
      openSync(join(dir, `durable-echo-${process.pid}-${i}.log`), "a"),
    );
  }

  /**
   * Appends `bytes` and a newline to the next file and fdatasyncs it. The
   * choice of thread waits for the loop's check phase (setImmediate): by
   * then every request that came in the same read has been counted, which
   * is how sessiond sees a burst (its appends await before they flush).
   * The hop costs a sequential call ~0.01 ms, which the durable echo's
   * figures carry (2026-12-04, 4 alternating rounds of 3,000 against a
   * variant flushing a quiet call at once: p50 0.557-0.600 vs 0.540-0.586
   * ms); that variant flushes every call of a burst from idle on the main
   * thread, since each is answered before the next is read.
   */
  write(bytes: Uint8Array): Promise<void> {
    const fd = this.fds[this.next] as number;
    this.next = (this.next + 1) % this.fds.length;
    const line = Buffer.concat([bytes, NEWLINE]);
    this.inFlight++;
    if (this.inFlight > 1) this.busyAt = performance.now();
    return new Promise<void>((done, fail) => {
      const settle = (err: unknown) => {
        this.inFlight--;
        if (err) fail(err);
        else done();
      };
      setImmediate(() => {
        if (performance.now() - this.busyAt < QUIET_MS) {
          write(fd, line, (err) => (err ? settle(err) : fdatasync(fd, settle)));
          return;
        }
        try {
          writeSync(fd, line);
          fdatasyncSync(fd);
          settle(null);
        } catch (err) {
          settle(err);
        }
      });
    });
  }

  close(): void {
    for (const fd of this.fds) close(fd, () => {});
  }
}

const NEWLINE = Buffer.from("\n");

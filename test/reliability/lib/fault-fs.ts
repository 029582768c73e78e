/**
 * An FsOps wrapper that fails the k-th call (T3 I/O errors): EIO or ENOSPC,
 * or a short write (fewer bytes written than asked), once or persistently
 * (every later call too), counting calls from `arm()`. It also watches the
 * fsync rule: an fsync / fdatasync on a handle whose sync already failed
 * (a retry that could report success for data the kernel dropped) is
 * counted in `syncRetries`.
 *
 * A failed sync is reported to `onSyncFailed` (PowerFs.poison: the dirty
 * pages are dropped as clean, as Linux does after a writeback error).
 */
import type { FsOps } from "../../../src/storage/jsonl/fs-ops.js";

export type FaultKind = "EIO" | "ENOSPC" | "short" | "short+ENOSPC";

export interface Fault {
  readonly kind: FaultKind;
  /** Every call from `at` on fails (a short write: every write is short), not just the `at`-th. */
  readonly persistent: boolean;
  /** 1-based call number, counted from `arm()`. */
  readonly at: number;
}

export function faultName(f: Omit<Fault, "at">): string {
  return `${f.kind}/${f.persistent ? "persistent" : "once"}`;
}

function errno(code: string): Error {
  return Object.assign(new Error(`${code}: injected by T3`), { code });
}

export class FaultFs {
  readonly ops: FsOps;
  /** Calls since `arm()`. */
  steps = 0;
  /** Names of the calls since `arm()` while `trace` is on. */
  readonly trace: string[] = [];
  tracing = false;
  fault: Fault | undefined;
  /** Calls that got the fault. */
  fired = 0;
  /** Syncs on a handle whose sync had failed (the fsync rule broken). */
  syncRetries = 0;
  readonly retryNotes: string[] = [];
  private readonly failedSync = new Set<number>();
  private shortDone = false;

  constructor(
    inner: FsOps,
    private readonly onSyncFailed: (fd: number) => void = () => undefined,
  ) {
    const ops = {} as Record<keyof FsOps, unknown>;
    for (const name of Object.keys(inner) as (keyof FsOps)[]) {
      const real = (inner[name] as (...a: unknown[]) => Promise<unknown>).bind(inner);
      ops[name] = (...args: unknown[]) => this.call(name, real, args);
    }
    this.ops = ops as unknown as FsOps;
  }

  /** Starts counting calls from 0 with `fault` (undefined: none). */
  arm(fault: Fault | undefined): void {
    this.steps = 0;
    this.fault = fault;
    this.fired = 0;
    this.shortDone = false;
    this.trace.length = 0;
  }

  private async call(
    name: keyof FsOps,
    real: (...a: unknown[]) => Promise<unknown>,
    args: unknown[],
  ): Promise<unknown> {
    this.steps++;
    if (this.tracing) this.trace.push(name);
    const isSync = name === "fsync" || name === "fdatasync";
    if (isSync && this.failedSync.has(args[0] as number)) {
      this.syncRetries++;
      this.retryNotes.push(
        `${name} at call ${this.steps} on fd ${args[0]} whose sync failed before`,
      );
    }
    if (name === "close") this.failedSync.delete(args[0] as number);
    const f = this.fault;
    const hit = f !== undefined && (f.persistent ? this.steps >= f.at : this.steps === f.at);
    if (f === undefined || !hit) {
      // After a short write, the disk is full: the next writes fail.
      if (f?.kind === "short+ENOSPC" && this.shortDone && name === "write") {
        this.fired++;
        throw errno("ENOSPC");
      }
      return real(...args);
    }
    if (f.kind === "short" || f.kind === "short+ENOSPC") {
      if (name !== "write") return real(...args);
      const [fd, buf, offset, length, position] = args as [number, Buffer, number, number, number];
      this.fired++;
      if (f.kind === "short+ENOSPC" && this.shortDone) throw errno("ENOSPC");
      this.shortDone = true;
      return real(fd, buf, offset, Math.max(1, Math.floor(length / 2)), position);
    }
    this.fired++;
    if (isSync) {
      this.failedSync.add(args[0] as number);
      this.onSyncFailed(args[0] as number);
    }
    throw errno(f.kind);
  }
}

/**
 * The fdatasync floor: what one durable append costs the disk alone. Opens
 * a file in `dir` (on the same disk as the data dirs) with flag "a", then
 * `n` times writes one record-sized line and fdatasyncs it, timing each
 * write + fdatasync pair. Synchronous calls: no event loop or thread pool
 * in the way, so this is the floor, not a model of sessiond's I/O path.
 *
 * `gapMs` idles the thread that long before each pair (untimed), as a
 * sequential client's appends reach the disk one round trip apart. On the
 * VMs measured here a pair after even 0.5 ms of idling costs ~1.5-1.8x a
 * back-to-back one (the virtual disk and the vCPU wake up again; busy-waiting
 * the gap instead recovers part of it), so the back-to-back figure is the
 * best case and the paced one what a durable append at that cadence meets.
 */
import { spawn } from "node:child_process";
import { closeSync, fdatasyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { nowMs, type Summary, summarize } from "./stats.js";

export interface FsyncFloorOptions {
  /** Timed write + fdatasync pairs. */
  n: number;
  /** Untimed pairs first (default 50). */
  warmup?: number;
  /** Bytes per line, newline included (default 600: one ~500 B entry as JSONL). */
  lineBytes?: number;
  /** Idle time before each pair, ms (default 0: back to back). */
  gapMs?: number;
}

export function fsyncFloor(dir: string, o: FsyncFloorOptions): Summary {
  const file = join(dir, `fsync-floor-${process.pid}-${Date.now()}.jsonl`);
  const lineBytes = o.lineBytes ?? 600;
  const line = Buffer.from(`${JSON.stringify({ pad: "x".repeat(lineBytes - 11) })}\n`);
  const fd = openSync(file, "a");
  const idle = idler(o.gapMs ?? 0);
  try {
    for (let i = 0; i < (o.warmup ?? 50); i++) {
      writeSync(fd, line);
      fdatasyncSync(fd);
    }
    const samples: number[] = [];
    for (let i = 0; i < o.n; i++) {
      idle();
      const t = nowMs();
      writeSync(fd, line);
      fdatasyncSync(fd);
      samples.push(nowMs() - t);
    }
    return summarize(samples);
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}

/** Sleeps the thread `ms` (Atomics.wait: a real idle, not a busy loop); a no-op for 0. */
function idler(ms: number): () => void {
  if (ms <= 0) return () => {};
  const cell = new Int32Array(new SharedArrayBuffer(4));
  return () => {
    Atomics.wait(cell, 0, 0, ms);
  };
}

/**
 * Counts the fdatasync calls that process `pid` (all its threads: libuv's
 * pool does the file I/O) makes while `during` runs, with
 * `strace -f -c -e trace=fdatasync -p <pid>`. undefined when strace is not
 * installed or cannot attach. ptrace slows the traced process down: use it
 * around a short check, never around a measurement.
 */
export async function countFdatasyncs<T>(
  pid: number,
  dir: string,
  during: () => Promise<T>,
): Promise<{ calls: number; result: T } | undefined> {
  const out = join(dir, `strace-${pid}-${Date.now()}.txt`);
  const strace = spawn(
    "strace",
    ["-f", "-c", "-e", "trace=fdatasync", "-o", out, "-p", String(pid)],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  const attached = await new Promise<boolean>((done) => {
    const timer = setTimeout(() => done(false), 10_000);
    strace.once("error", () => {
      clearTimeout(timer);
      done(false);
    });
    strace.once("exit", () => {
      clearTimeout(timer);
      done(false);
    });
    strace.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      if (/attached/.test(err)) {
        clearTimeout(timer);
        done(true);
      }
    });
  });
  if (!attached) {
    strace.kill("SIGKILL");
    return undefined;
  }
  const exited = new Promise<void>((done) => strace.once("exit", () => done()));
  let result: T;
  try {
    result = await during();
  } finally {
    strace.kill("SIGINT");
    await exited;
  }
  const summary = readFileSync(out, "utf8");
  rmSync(out, { force: true });
  const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?fdatasync\s*$/m.exec(summary);
  return { calls: m ? Number(m[1]) : 0, result };
}

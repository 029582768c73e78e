/**
 * The disk's parallel floor: `files` files in this directory, one loop per
 * file, each looping write of one record-sized line + fdatasync, all loops
 * at once (`files` in flight) for `durationMs` after a warm-up. Run with
 * UV_THREADPOOL_SIZE >= files (the runner sets it) so that every loop
 * really has its fdatasync in flight: libuv's pool does the file I/O, and
 * its default of 4 threads would cap the floor at 4 in flight. Answers
 * ops/s (write + fdatasync pairs per second over all files) and the
 * latency of one pair.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { summarize } from "../lib/stats.js";
import { answer, args, log, now } from "./rpc-common.js";

interface Args {
  dir: string;
  files: number;
  durationMs: number;
  /** Untimed pairs per file first. */
  warmup: number;
  lineBytes?: number;
}

const a = args<Args>();
const dir = mkdtempSync(join(a.dir, "fsync-parallel-"));
const line = Buffer.from(`${JSON.stringify({ pad: "x".repeat((a.lineBytes ?? 600) - 11) })}\n`);
try {
  const handles = await Promise.all(
    Array.from({ length: a.files }, (_, i) => open(join(dir, `f${i}.jsonl`), "a")),
  );
  const pair = async (i: number) => {
    const fh = handles[i];
    if (fh === undefined) throw new Error(`no file ${i}`);
    await fh.write(line);
    await fh.datasync();
  };
  await Promise.all(
    handles.map(async (_, i) => {
      for (let k = 0; k < a.warmup; k++) await pair(i);
    }),
  );
  const latencies: number[] = [];
  const start = now();
  const deadline = start + a.durationMs;
  await Promise.all(
    handles.map(async (_, i) => {
      while (now() < deadline) {
        const t = now();
        await pair(i);
        latencies.push(now() - t);
      }
    }),
  );
  const seconds = (now() - start) / 1000;
  await Promise.all(handles.map((h) => h.close()));
  const s = summarize(latencies);
  const threads = process.env.UV_THREADPOOL_SIZE ?? "4 (default)";
  log(
    `fdatasync x${a.files} files (pool ${threads}): ${(latencies.length / seconds).toFixed(0)} ops/s, p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`,
  );
  rmSync(dir, { recursive: true, force: true });
  answer({
    ops: latencies.length,
    seconds,
    opsPerSec: latencies.length / seconds,
    p50: s.p50,
    p99: s.p99,
    files: a.files,
    threadpool: threads,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

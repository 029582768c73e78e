/**
 * Physical floors of the read paths (run by bench/clients/data-floor.ts in a
 * fresh process, like a freshly started server):
 *
 * - parse floor: read + split + JSON.parse of the very same session file,
 *   the least any reader of a JSONL file has to do to know its entries;
 * - first-line floor: readdir + open + read up to the first newline +
 *   JSON.parse of that line + close, for each of the N session files: the
 *   least a listing must do to know each session's creation time and root;
 * - indexOf floor: readdir + read every byte of each of the N session files
 *   + Buffer.indexOf of a word: the least a search by scanning must do.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { type ServerProcess, startSessiond } from "./procs.js";
import { median } from "./stats.js";

export interface FloorResult {
  ms: number;
  /** Lines parsed (parse floor) or files read (first-line floor). */
  count: number;
  bytes: number;
}

/** read + split + JSON.parse of one file. */
export function parseFloor(file: string): FloorResult {
  const t0 = performance.now();
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  let count = 0;
  let sink = 0;
  for (const line of lines) {
    if (line.length === 0) continue;
    const v = JSON.parse(line) as { seq?: number };
    sink += v.seq ?? 0;
    count++;
  }
  const ms = performance.now() - t0;
  if (sink < 0) throw new Error("unreachable");
  return { ms, count, bytes: Buffer.byteLength(text) };
}

/** Every byte of each `.jsonl` file of a directory, searched for `word`; count: files that hold it. */
export function indexOfFloor(dir: string, word: string): FloorResult {
  const t0 = performance.now();
  const needle = Buffer.from(word);
  let count = 0;
  let bytes = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const buf = readFileSync(join(dir, name));
    bytes += buf.length;
    if (buf.indexOf(needle) >= 0) count++;
  }
  return { ms: performance.now() - t0, count, bytes };
}

/** The first line of each `.jsonl` file of a directory, parsed. */
export function firstLineFloor(dir: string): FloorResult {
  const t0 = performance.now();
  const names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  let buf = Buffer.allocUnsafe(4096);
  let count = 0;
  let bytes = 0;
  for (const name of names) {
    const fd = openSync(join(dir, name), "r");
    try {
      let len = 0;
      let nl = -1;
      while (nl < 0) {
        if (len === buf.length) {
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, len);
          buf = bigger;
        }
        const n = readSync(fd, buf, len, buf.length - len, len);
        if (n === 0) break;
        nl = buf.indexOf(10, len);
        len += n;
      }
      const end = nl < 0 ? len : nl;
      JSON.parse(buf.toString("utf8", 0, end));
      bytes += end;
      count++;
    } finally {
      closeSync(fd);
    }
  }
  return { ms: performance.now() - t0, count, bytes };
}

/** CPU time (user + system) a process has used so far, ms (Linux /proc, 100 Hz ticks). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time a process has used so far, ms, from /proc/<pid>/schedstat (time
 * on CPU in ns; utime + stime in /proc/<pid>/stat come in 10 ms ticks).
 */
function cpuNsMsOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
}

/**
 * A sessiond server on `dataDir`, with the wall time from spawn to
 * "listening" and the CPU time it had used by then. Scenarios that time
 * "the first call after a restart" also start one on an empty data dir:
 * the difference in CPU time is work the server does at start-up for its
 * data (an index, a preload), which belongs to the restart, while Node and
 * module start-up do not. (CPU time, because wall time to "listening"
 * varies by ±200 ms on a busy machine; CPU time by a few tens of ms.)
 */
async function timedStart(
  dataDir: string,
): Promise<{ server: ServerProcess; ms: number; cpuMs: number }> {
  const t0 = performance.now();
  const server = await startSessiond(["--data-dir", dataDir]);
  return { server, ms: performance.now() - t0, cpuMs: cpuNsMsOf(server.pid) };
}

/**
 * Restarts of sessiond for "first call after a restart" rows: each `restart`
 * starts a server on an empty dir (stopped at once) and one on the data dir,
 * records the start-up CPU and wall time of both, runs `use` on the data
 * server and stops it; `calibrate` adds such pairs without a call
 * (CALIBRATION_PAIRS in all, in a full run).
 * `excessMs` is the median start-up CPU on the data minus the same on the
 * empty dir (clamped at 0): work done at start-up for the data belongs to
 * the first call.
 *
 * Why calibrate: a start-up costs 0.3–1 s of CPU and one start differs from
 * the next by ±50–100 ms on these shared machines, so with five pairs the
 * difference of the medians swung by tens of ms between runs, and the clamp
 * at 0 turned that noise into a positive excess (a server that does nothing
 * at start-up for its data was charged 0–80 ms). More pairs narrow it.
 */
export const CALIBRATION_PAIRS = 11;

export class RestartMeter {
  private readonly cpuData: number[] = [];
  private readonly cpuEmpty: number[] = [];
  private readonly wallData: number[] = [];
  private readonly wallEmpty: number[] = [];

  constructor(
    private readonly dataDir: string,
    private readonly emptyDir: string,
  ) {}

  async restart<T>(use: (server: ServerProcess) => Promise<T>): Promise<T> {
    const server = await this.startPair();
    try {
      return await use(server);
    } finally {
      await server.stop();
    }
  }

  /** More starts on the empty and on the data dir, for `excessMs` only, up to `pairs` in all. */
  async calibrate(pairs: number): Promise<void> {
    while (this.cpuData.length < pairs) await (await this.startPair()).stop();
  }

  get excessMs(): number {
    return Math.max(0, median(this.cpuData) - median(this.cpuEmpty));
  }

  /** Starts (and stops) a server on the empty dir, then one on the data dir, which it returns. */
  private async startPair(): Promise<ServerProcess> {
    const empty = await timedStart(this.emptyDir);
    this.wallEmpty.push(empty.ms);
    this.cpuEmpty.push(empty.cpuMs);
    await empty.server.stop();
    const { server, ms, cpuMs } = await timedStart(this.dataDir);
    this.wallData.push(ms);
    this.cpuData.push(cpuMs);
    return server;
  }

  details(): Record<string, unknown> {
    return {
      startupExcessMs: this.excessMs,
      startupCpuMs: this.cpuData.map(Math.round),
      startupEmptyCpuMs: this.cpuEmpty.map(Math.round),
      startupWallMs: this.wallData,
      startupEmptyWallMs: this.wallEmpty,
    };
  }
}

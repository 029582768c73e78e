/**
 * Scenario b: a session of 100 MB as coding agents make them (issue 36):
 * 200 turns, each with a ~350 KB tool output, and every ninth turn a 1 MiB
 * screenshot out of five, repeated (~30 % of the transcript's bytes are
 * images, in base64). Written over the wire (Connect) into a JSONL server.
 *
 * b/disk: bytes of the data dir (session file + blobs) vs the raw
 *   transcript (the entries as proto JSON lines, images in base64, as an
 *   export writes them). Target <= 0.75 ×: large parts are stored once.
 * b/cold: the first whole read after a server restart, as an adapter
 *   resuming the session does (GetState pages + GetBlob of every blob,
 *   resolved by the TS client, in a fresh process) vs the parse floor of
 *   the raw transcript (read + split + JSON.parse in a fresh process).
 *   Target <= 1.5 ×.
 * b/rss: peak server memory growth during that read vs the largest
 *   response the server sends (--max-message-bytes, 4 MiB). Target <= 1.5 ×.
 *   Its details also give the growth of a second read on the same server
 *   (warm: code compiled, heap grown), which is what the data itself costs.
 * b/append: p50 of appending one entry with a unique 1 MiB image (one
 *   Append carrying it; the server stores it as a blob, then the entry) vs
 *   write + fdatasync of 1 MiB. Target <= 1.5 ×. Its details also give the
 *   transport floor: the connect-node echo baseline carrying the same bytes.
 */
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import type { FloorResult } from "../lib/floors.js";
import { fsyncFloor } from "../lib/fsync-floor.js";
import { memoryOf, resetPeak, runClient, startEcho, startSessiond } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { median, summarize } from "../lib/stats.js";

const MB = 1024 * 1024;

function bytesUnder(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    n += st.isDirectory() ? bytesUnder(p) : st.size;
  }
  return n;
}

export const bigParts: Scenario = {
  id: "b",
  title: "a 100 MB session of tool outputs and repeated screenshots (blobs)",
  async run(ctx: BenchContext): Promise<Row[]> {
    const dataDir = join(ctx.tmpDir, "sb-data");
    mkdirSync(dataDir, { recursive: true });
    const transcript = join(ctx.tmpDir, "sb-transcript.jsonl");
    const turns = ctx.quick ? 20 : 200;
    const reps = ctx.quick ? 1 : 3;

    let server = await startSessiond(["--data-dir", dataDir]);
    const written = await runClient<{
      sessionId: string;
      rawBytes: number;
      imageBytes: number;
      entries: number;
    }>("clients/big-parts.ts", { mode: "write", url: server.url, turns, transcript });
    ctx.log(
      `wrote ${written.entries} entries, raw transcript ${(written.rawBytes / MB).toFixed(1)} MB (${(written.imageBytes / MB).toFixed(0)} MB of images)`,
    );
    const appends = await runClient<{ samples: number[] }>("clients/big-parts.ts", {
      mode: "append1mb",
      url: server.url,
      n: ctx.quick ? 5 : 30,
    });
    await server.stop();
    const echoServer = await startEcho();
    let transport: { samples: number[] };
    try {
      transport = await runClient<{ samples: number[] }>("clients/big-parts.ts", {
        mode: "echo1mb",
        url: echoServer.url,
        n: ctx.quick ? 5 : 30,
      });
    } finally {
      await echoServer.stop();
    }
    // The 1 MiB appends went to another session of the same data dir: measure disk first.
    const floor = fsyncFloor(ctx.tmpDir, { n: ctx.quick ? 5 : 30, warmup: 3, lineBytes: MB });

    const readMs: number[] = [];
    const growth: number[] = [];
    const warmGrowth: number[] = [];
    const floors: number[] = [];
    for (let r = 0; r < reps; r++) {
      server = await startSessiond(["--data-dir", dataDir]);
      try {
        resetPeak(server.pid);
        const before = memoryOf(server.pid);
        const read = await runClient<{ ms: number; messages: number; bytes: number }>(
          "clients/big-parts.ts",
          { mode: "read", url: server.url, sessionId: written.sessionId },
        );
        const after = memoryOf(server.pid);
        if (read.messages !== written.entries) {
          throw new Error(`read ${read.messages} messages, wrote ${written.entries}`);
        }
        readMs.push(read.ms);
        growth.push(after.peak - before.rss);
        resetPeak(server.pid);
        const warm = memoryOf(server.pid);
        await runClient("clients/big-parts.ts", {
          mode: "read",
          url: server.url,
          sessionId: written.sessionId,
        });
        warmGrowth.push(memoryOf(server.pid).peak - warm.rss);
      } finally {
        await server.stop();
      }
      const f = await runClient<FloorResult>("clients/data-floor.ts", {
        kind: "parse",
        file: transcript,
      });
      floors.push(f.ms);
    }
    // Disk without the 1 MiB-append session's blobs: those are 1 MiB each, unique.
    const disk = bytesUnder(dataDir) - appends.samples.length * MB - 3 * MB;
    const a = summarize(appends.samples);
    const t = summarize(transport.samples);
    ctx.log(
      `1 MiB: Append p50 ${a.p50.toFixed(2)} ms, echo of the same bytes (transport floor) ${t.p50.toFixed(2)} ms, write + fdatasync ${floor.p50.toFixed(2)} ms`,
    );
    return [
      atMost(
        {
          id: "b/disk",
          scenario: `bytes on disk, ${turns} turns (${(written.rawBytes / 1e6).toFixed(0)} MB transcript, 30 % images repeated)`,
          unit: "MB",
          sessiond: disk / MB,
          baseline: written.rawBytes / MB,
          baselineName: "raw transcript (proto JSON lines)",
          details: {
            dataDirBytes: disk,
            rawBytes: written.rawBytes,
            imageBytes: written.imageBytes,
          },
        },
        0.75,
      ),
      atMost(
        {
          id: "b/cold",
          scenario: "first whole read after a restart (state + every blob, resolved)",
          unit: "ms",
          sessiond: median(readMs),
          baseline: median(floors),
          baselineName: "parse floor of the raw transcript (fresh process)",
          details: { readMs, floorMs: floors },
        },
        1.5,
      ),
      atMost(
        {
          id: "b/rss",
          scenario: "peak server memory growth during that read",
          unit: "MB",
          sessiond: median(growth) / MB,
          baseline: 4,
          baselineName: "largest response (--max-message-bytes 4 MiB)",
          details: {
            growthMB: growth.map((g) => g / MB),
            warmGrowthMB: warmGrowth.map((g) => g / MB),
          },
        },
        1.5,
      ),
      atMost(
        {
          id: "b/append",
          scenario: "Append of one unique 1 MiB image, p50",
          unit: "p50 ms",
          sessiond: a.p50,
          baseline: floor.p50,
          baselineName: "write + fdatasync of 1 MiB",
          details: { append: a, floor, transportEcho: t },
        },
        1.5,
      ),
    ];
  },
};

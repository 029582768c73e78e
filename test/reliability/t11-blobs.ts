/**
 * T11 blobs under kill -9 (issue 36): large parts are stored once, before
 * the entry that names them is acknowledged, and collection leaves nothing
 * behind that nothing references.
 *
 * A real `sessiond serve` (JSONL) takes appends from three writers, one per
 * protocol (gRPC, Connect, gRPC-Web), each on its own session. Every entry
 * holds one or two parts (text or image) of random sizes: mostly 64-256 KiB
 * (sent inline: the server makes them blobs), some up to 3 MiB and a few up
 * to 32 MiB (8 MiB quick), which the client uploads first with PutBlob in
 * chunks; a third of the parts repeat an earlier one (dedup). An ack is
 * recorded only on OK; an op of unknown outcome is sent again, identical,
 * to the next server, and must then be answered OK (some are given up, as
 * by a client that died too: their blobs may be orphans). At random moments the
 * server gets SIGKILL (in the middle of uploads and blob writes: the big
 * parts take long). With the server dead the data dir is audited in
 * process: every acknowledged entry is there with references to the
 * contents sent (by SHA-256), and every reference of every entry names a
 * blob that is there, whole. At the end, after a last restart and a clean
 * stop, a collection with no grace runs and must leave 0 blobs and 0
 * uploads that no entry references, and every blob's content must hash to
 * its name.
 *
 * Negative control `blobsAfterAck`: the server writes an append's blobs
 * after its entry (not awaited); a kill soon after an ack must then leave
 * references to missing blobs.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConnectError } from "@connectrpc/connect";
import { type Entry, Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  createSessiondClient,
  type Protocol,
  type SessiondClient,
} from "../../src/client/index.js";
import { blobRefsOf } from "../../src/core/blob-parts.js";
import { JsonlEngine } from "../../src/storage/jsonl/jsonl-engine.js";
import { SessionStore } from "../../src/store/session-store.js";
import type { SessiondProcess } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { startWithRetry } from "./lib/kill-server.js";
import { outcomeUnknown } from "./lib/kill-writers.js";
import { Rng } from "./lib/random.js";
import { ageLocks, lockDirs } from "./lib/stale-locks.js";

const WS = "t11";
const KB = 1024;
const MB = 1024 * KB;
const PROTOCOLS: readonly Protocol[] = ["grpc", "connect", "grpc-web"];

interface Content {
  readonly kind: "text" | "image";
  readonly text?: string;
  readonly data?: Uint8Array;
  readonly sha: string;
  readonly size: number;
}

interface Op {
  readonly sessionId: string;
  readonly id: string;
  readonly parts: readonly Content[];
  /** Sent by the client that keeps parts inline (the server makes the blobs). */
  readonly inline: boolean;
}

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

/** Content of `size` bytes, cheap to make: a random block repeated with a counter. */
function makeContent(rng: Rng, size: number): Content {
  if (rng.bool(0.5)) {
    const word = `w${rng.int(0, 1e9).toString(36)}-`;
    let text = "";
    for (let i = 0; text.length < size; i++) text += `${word}${i} `;
    text = text.slice(0, size);
    return { kind: "text", text, sha: sha256(text), size };
  }
  const block = new Uint8Array(4 * KB);
  for (let i = 0; i < block.length; i++) block[i] = rng.int(0, 255);
  const data = new Uint8Array(size);
  for (let at = 0, n = 0; at < size; at += block.length, n++) {
    block[0] = n & 0xff;
    block[1] = (n >> 8) & 0xff;
    data.set(block.subarray(0, Math.min(block.length, size - at)), at);
  }
  return { kind: "image", data, sha: sha256(data), size };
}

function entryOf(op: Op) {
  return {
    id: op.id,
    kind: {
      case: "message" as const,
      value: {
        role: Role.USER,
        content: op.parts.map((p) =>
          p.kind === "text"
            ? { part: { case: "text" as const, value: p.text as string } }
            : {
                part: {
                  case: "image" as const,
                  value: { mimeType: "image/png", data: p.data as Uint8Array },
                },
              },
        ),
      },
    },
  };
}

class BlobWriter {
  pending: Op | undefined;
  ops = 0;
  retries = 0;
  refused = 0;
  private n = 0;
  private up: SessiondClient | undefined;
  private inline: SessiondClient | undefined;

  constructor(
    readonly sessionId: string,
    private readonly protocol: Protocol,
    private readonly rng: Rng,
    private readonly pool: Content[],
    private readonly maxBig: number,
    private readonly acked: Map<string, Op>,
    private readonly problem: (d: string) => void,
  ) {}

  connect(url: string): void {
    const o = { baseUrl: url, protocol: this.protocol, retry: false as const, timeoutMs: 60_000 };
    this.up = createSessiondClient(o);
    this.inline = createSessiondClient({ ...o, uploadPartsOverBytes: 0 });
  }

  private content(): Content {
    if (this.pool.length > 0 && this.rng.bool(0.33)) return this.rng.pick(this.pool);
    const r = this.rng.int(0, 99);
    const size =
      r < 60
        ? this.rng.int(65 * KB, 256 * KB)
        : r < 90
          ? this.rng.int(256 * KB, 3 * MB)
          : this.rng.int(3 * MB, this.maxBig);
    const c = makeContent(this.rng, size);
    if (this.pool.length < 40) this.pool.push(c);
    else this.pool[this.rng.int(0, this.pool.length - 1)] = c;
    return c;
  }

  private nextOp(): Op {
    const parts = Array.from({ length: this.rng.bool(0.3) ? 2 : 1 }, () => this.content());
    const total = parts.reduce((s, p) => s + p.size, 0);
    return {
      sessionId: this.sessionId,
      id: `${this.sessionId}-e${this.n++}`,
      parts,
      inline: total < 3 * MB && this.rng.bool(0.6),
    };
  }

  async create(): Promise<void> {
    await this.up?.store.createSession({ workspace: WS, sessionId: this.sessionId });
  }

  /** Sends ops until `stopped`; one of unknown outcome stays pending. */
  async run(ctl: { stopped: boolean }): Promise<void> {
    while (!ctl.stopped) {
      if (!(await this.send(this.pending ?? this.nextOp())) && !ctl.stopped) await sleep(50);
    }
  }

  /** Sends the pending op until it is answered OK, or until `deadline`. */
  async flush(deadline: number): Promise<void> {
    while (this.pending !== undefined && Date.now() < deadline) {
      if (!(await this.send(this.pending))) await sleep(100);
    }
  }

  /** One attempt; false when its outcome is unknown (it stays pending). */
  private async send(op: Op): Promise<boolean> {
    if (op === this.pending) this.retries++;
    const client = op.inline ? this.inline : this.up;
    try {
      await client?.session.append({
        workspace: WS,
        session: op.sessionId,
        entries: [entryOf(op)],
      });
      this.acked.set(op.id, op);
      this.ops++;
      this.pending = undefined;
      return true;
    } catch (err) {
      if (outcomeUnknown(err)) {
        this.pending = op;
        return false;
      }
      this.refused++;
      this.pending = undefined;
      this.problem(`${op.id}: refused: ${ConnectError.from(err).message}`);
      return true;
    }
  }
}

async function run(o: RunOptions) {
  const rng = new Rng(o.seed);
  const kills = o.quick ? 6 : 20;
  const maxBig = o.quick ? 8 * MB : 32 * MB;
  const env = o.control === undefined ? undefined : { SESSIOND_DEBUG: o.control };
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-t11-"));
  const acked = new Map<string, Op>();
  const details: string[] = [];
  const problem = (d: string) => {
    if (details.length < 40) details.push(d);
  };
  let lost = 0;
  let wrongContent = 0;
  let missingBlobs = 0;
  let badBlobs = 0;
  let crashes = 0;
  let pendingAtKill = 0;
  let orphansBeforeGc = 0;
  let abandoned = 0;
  const starts = { failedStarts: 0 };
  const pool: Content[] = [];
  const writers = PROTOCOLS.map(
    (p) => new BlobWriter(`t11-${p}`, p, rng.fork(), pool, maxBig, acked, problem),
  );
  let server: SessiondProcess | undefined;
  const start = () =>
    startWithRetry(
      { dataDir, env, timeoutMs: 60_000, args: ["--storage", "jsonl"] },
      starts,
      o.log,
    );

  /** The data dir checked with the server down: acked entries, and the blobs every entry names. */
  const audit = async (checkContent: boolean): Promise<Set<string>> => {
    const engine = new JsonlEngine({ dataDir, need: "readable" });
    const referenced = new Set<string>();
    try {
      for (const w of writers) {
        let entries: Entry[] = [];
        try {
          entries = (await engine.read({ workspace: WS, sessionId: w.sessionId }, 0, 1_000_000))
            .entries;
        } catch (err) {
          problem(`${w.sessionId}: unreadable: ${(err as Error).message}`);
          lost++;
          continue;
        }
        const byId = new Map(entries.map((e) => [e.id, e]));
        for (const op of acked.values()) {
          if (op.sessionId !== w.sessionId) continue;
          const e = byId.get(op.id);
          if (e === undefined) {
            lost++;
            problem(`${op.id}: acknowledged, not in its session`);
            continue;
          }
          const shas = blobRefsOf(e).map((r) => r.sha256);
          if (shas.join() !== op.parts.map((p) => p.sha).join()) {
            wrongContent++;
            problem(
              `${op.id}: references ${shas.join()} instead of ${op.parts.map((p) => p.sha).join()}`,
            );
          }
        }
        for (const e of entries) {
          for (const r of blobRefsOf(e)) {
            if (referenced.has(r.sha256)) continue;
            referenced.add(r.sha256);
            const size = await engine.blobs.stat(WS, r.sha256, false);
            if (size === undefined) {
              missingBlobs++;
              problem(`${e.id}: references blob ${r.sha256}, which is missing`);
            } else if (BigInt(size) !== r.size) {
              badBlobs++;
              problem(`blob ${r.sha256}: ${size} bytes, the reference says ${r.size}`);
            } else if (checkContent) {
              const data = await engine.blobs.read(WS, r.sha256, 0, size);
              if (sha256(data) !== r.sha256) {
                badBlobs++;
                problem(`blob ${r.sha256}: its content hashes to ${sha256(data)}`);
              }
            }
          }
        }
      }
    } finally {
      await engine.close();
    }
    return referenced;
  };

  try {
    server = await start();
    for (const w of writers) {
      w.connect(server.url);
      await w.create();
    }
    for (let k = 0; k < kills && Date.now() < o.deadline - (o.quick ? 15_000 : 30_000); k++) {
      if (server === undefined) {
        server = await start();
        for (const w of writers) w.connect(server.url);
      }
      const ctl = { stopped: false };
      const runs = writers.map((w) => w.run(ctl));
      await sleep(rng.int(300, o.quick ? 2000 : 4000));
      await server.kill9();
      ctl.stopped = true;
      await Promise.all(runs);
      server = undefined;
      crashes++;
      pendingAtKill += writers.filter((w) => w.pending !== undefined).length;
      // Some ops of unknown outcome are given up, as a client that crashed with
      // the server would: their uploads and blobs may be left for gc.
      for (const w of writers) {
        if (w.pending !== undefined && rng.bool(0.4)) {
          w.pending = undefined;
          abandoned++;
        }
      }
      await audit(false);
      await ageLocks(await lockDirs(dataDir, WS));
      o.log(
        `kill ${crashes}: ${acked.size} acked, ${lost} lost, ${missingBlobs} missing blobs, ${pendingAtKill} ops in flight at kills`,
      );
    }

    // Final: every pending op must go through; then a clean stop, an audit with content
    // checks, and a collection that must leave nothing unreferenced.
    server = await start();
    for (const w of writers) w.connect(server.url);
    await Promise.all(writers.map((w) => w.flush(Date.now() + 60_000)));
    for (const w of writers) {
      if (w.pending !== undefined) problem(`${w.sessionId}: a pending op never went through`);
    }
    const unflushed = writers.filter((w) => w.pending !== undefined).length;
    await server.stop();
    server = undefined;
    const referenced = await audit(true);
    const engine = new JsonlEngine({ dataDir });
    let orphansAfterGc = 0;
    let collected = 0;
    try {
      orphansBeforeGc = (await engine.blobs.list(WS)).filter(
        (b) => b.upload || !referenced.has(b.sha256),
      ).length;
      const store = new SessionStore(engine, { limits: { blobGraceMs: 0 } });
      await sleep(5);
      collected = (await store.blobs.collect(WS, 0)).removed;
      for (const b of await engine.blobs.list(WS)) {
        if (b.upload || !referenced.has(b.sha256)) {
          orphansAfterGc++;
          problem(
            `${b.upload ? "upload" : "blob"} ${b.sha256} left after gc, referenced by nothing`,
          );
        }
      }
      for (const sha of referenced) {
        if ((await engine.blobs.stat(WS, sha, false)) === undefined) {
          missingBlobs++;
          problem(`blob ${sha}, which an entry references, is missing after gc`);
        }
      }
    } finally {
      await engine.close();
    }
    const refused = writers.reduce((s, w) => s + w.refused, 0);
    const violations =
      lost + wrongContent + missingBlobs + badBlobs + orphansAfterGc + refused + unflushed;
    return {
      figures: [
        `${crashes} kills`,
        `${acked.size} acked (${writers.reduce((s, w) => s + w.retries, 0)} retries)`,
        `${referenced.size} distinct blobs`,
        `${lost} lost`,
        `${wrongContent} wrong contents`,
        `${missingBlobs} references to missing blobs`,
        `${badBlobs} bad blobs`,
        `${orphansBeforeGc} orphans before gc, ${collected} collected, ${orphansAfterGc} after`,
        `${refused} refused`,
        `${pendingAtKill} ops in flight at the kills (${abandoned} given up)`,
        `${starts.failedStarts} failed starts retried`,
      ].join(", "),
      violations,
      details,
    };
  } finally {
    if (server !== undefined) await server.kill9();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const test: ReliabilityTest = {
  id: "T11",
  name: "blobs",
  controls: ["blobsAfterAck"],
  budgetMs: { full: 240_000, quick: 60_000 },
  run,
};
export default test;

if (isMain(import.meta)) await main(test);

/**
 * Row 9's floor: what an embedded append costs at the least when it writes
 * sessiond's record format with the guarantees no design of it can drop,
 * and nothing else. Like the durable Append echo for scenario g, it is not a
 * competitor: it tells how much of 9/append's ratio to pi is the format and
 * the fencing, and how much sessiond's own work per append.
 *
 * Per append, in this fresh process (the same data, warm-up and timing as
 * data-embedded.ts and data-pi.ts): a new entry id, the parent (the last
 * entry), a timestamp and the next seq on a shallow copy of the caller's
 * entry; its canonical JSON by sessiond's own writer (entry-to-json.ts);
 * the CRC'd record (record.ts); the fencing stat of the file before the
 * write (is it still as this process left it?); one positioned write, no
 * fsync (as 9/append runs the engine); the JSON kept in memory. Left out,
 * as what sessiond does on top: the deep copy of the caller's entry,
 * validation and the tree rules, idempotency and expectations, the
 * session's log and indexes, the lock lease, watch, metrics and tracing.
 *
 * {"op":"append", dir, count, warmup, textBytes} prints
 * {ms: number[], totalMs, importMs, messages}.
 */
import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { appendConversation, messageEntryOf } from "./append-workload.js";
import { answer, args } from "./data-common.js";

const a = args<{
  op: "append";
  dir: string;
  count?: number;
  warmup?: number;
  textBytes?: number;
}>();

const t0 = performance.now();
// The built package's modules, as data-embedded.ts loads the store (dist/, not tsx).
const { EntrySchema } = (await import(
  "../../dist/src/index.js" as string
)) as typeof import("../../src/index.js");
const { entryJson } = (await import(
  "../../dist/src/core/codec/entry-to-json.js" as string
)) as typeof import("../../src/core/codec/entry-to-json.js");
const { encodeRecord } = (await import(
  "../../dist/src/storage/jsonl/record.js" as string
)) as typeof import("../../src/storage/jsonl/record.js");
const { newEntryId } = (await import(
  "../../dist/src/core/ids.js" as string
)) as typeof import("../../src/core/ids.js");
const importMs = performance.now() - t0;

/** One session file written the floor's way. */
class FloorLog {
  private readonly fd: number;
  private end = 0;
  private seq = 0;
  private leaf: string | undefined;
  readonly texts: string[] = [];

  constructor(private readonly path: string) {
    this.fd = openSync(path, "a");
  }

  async append(input: Entry): Promise<number> {
    const e: Entry = {
      ...input,
      id: newEntryId(),
      parentId: this.leaf,
      timestamp: timestampFromDate(new Date()),
      seq: BigInt(++this.seq),
    };
    const json = entryJson(e);
    const record = Buffer.from(encodeRecord(e, json));
    if (statSync(this.path).size !== this.end) throw new Error(`${this.path} changed behind us`);
    writeSync(this.fd, record, 0, record.length, this.end);
    this.end += record.length;
    this.texts.push(json);
    this.leaf = e.id;
    return this.seq;
  }

  close(): void {
    closeSync(this.fd);
  }
}

if (a.op === "append") {
  const count = a.count ?? 1000;
  const warmup = a.warmup ?? 200;
  const c = appendConversation(count, a.textBytes);
  const entryOf = messageEntryOf(EntrySchema, c);
  const inputs = c.entries.map((_, i) => entryOf(i));
  const w = new FloorLog(join(a.dir, "warmup.jsonl"));
  for (let i = 0; i < warmup; i++) await w.append(entryOf(i));
  w.close();
  const s = new FloorLog(join(a.dir, "floor.jsonl"));
  const ms: number[] = [];
  const start = performance.now();
  for (const input of inputs) {
    const t = performance.now();
    await s.append(input);
    ms.push(performance.now() - t);
  }
  const totalMs = performance.now() - start;
  s.close();
  answer({ ms, totalMs, importMs, messages: s.texts.length });
}
throw new Error(`unknown op ${a.op}`);

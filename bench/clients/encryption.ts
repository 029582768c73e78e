/**
 * Row e (issue 41): encryption at rest on vs off, the JSONL engine embedded
 * (the package as built, dist/), in one process and one data dir: the
 * workspace "enc" is sealed, "clear" is not, on the same engine, so the
 * only difference is sealing. Each measure alternates the two workspaces.
 * With `url`, the same on the PostgreSQL engine in that (empty) database.
 *
 * {dataDir, keyring, appends, inflightSessions, inflightPerSession,
 *  coldEntries, searchSessions, searchEntries, reps, warmup, url?}
 *
 * Prints {on, off, aead} (aead: "native" or "node:crypto", which sealed) with, each: appendMs (per sequential durable append,
 * after the warm-up), appendFirstMs (the same, a fresh process's first),
 * inflightOps (appends/s with 64 in flight), coldMs (first open + state of
 * a session by a fresh engine), searchMs (a rare word over a workspace);
 * and, on JSONL, coldFloor (what a sealed cold read must do beyond a clear
 * one: `coldFloor` below).
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { conversation, messageOf } from "../lib/generate.js";
import { answer, args } from "./data-common.js";

const a = args<{
  dataDir: string;
  keyring: string;
  appends: number;
  inflightSessions: number;
  inflightPerSession: number;
  coldEntries: number;
  searchSessions: number;
  searchEntries: number;
  reps: number;
  warmup: number;
  url?: string;
}>();

const { EntrySchema, JsonlEngine, LocalKeyring, SessionStore } = (await import(
  "../../dist/src/index.js" as string
)) as typeof import("../../src/index.js");
const { PostgresEngine } = (await import(
  "../../dist/src/storage/postgres/postgres-engine.js" as string
)) as typeof import("../../src/storage/postgres/postgres-engine.js");

// Which AES-GCM seals: the native addon when it is built (the default), else
// node:crypto (SESSIOND_NATIVE_AEAD=0 asks for it); measured after it settles.
const { nativeAeadReady } = (await import(
  "../../dist/src/storage/seal/native-aead.js" as string
)) as typeof import("../../src/storage/seal/native-aead.js");
const aead = await nativeAeadReady;

const keys = await LocalKeyring.open(a.keyring, { create: true });
const encryption = { keys, workspaces: ["enc"] };
/** The engine under test: JSONL in `dataDir`, or PostgreSQL at `url` when given. */
const engine = async () =>
  a.url === undefined
    ? new JsonlEngine({ dataDir: a.dataDir, encryption })
    : await PostgresEngine.open({ url: a.url, encryption });
const MODES = [
  ["on", "enc"],
  ["off", "clear"],
] as const;

const c = conversation({
  sessionId: "unused",
  createdMs: Date.now(),
  entries: Math.max(a.coldEntries, a.searchEntries, a.appends) + 1,
  pathLength: Math.max(a.coldEntries, a.searchEntries, a.appends) + 1,
  textBytes: 700,
});
const message = (i: number, extra = "") => {
  const e = c.entries[i % c.entries.length] as (typeof c.entries)[number];
  const m = messageOf(e, i + 2);
  if (extra !== "") m.content = [{ part: { case: "text", value: `${e.text} ${extra}` } }];
  return create(EntrySchema, { kind: { case: "message", value: m } });
};

/** e/cold's floor pieces, per repetition (ms), JSONL only: see coldFloor. */
export type ColdFloor = {
  extraMs: number[];
  logExtraMs: number[];
  checkpointReadMs: number[];
  openMs: number[];
  checkpointBytes: number;
};
type Figures = {
  appendMs: number[];
  appendFirstMs: number[];
  inflightOps: number[];
  coldMs: number[];
  searchMs: number[];
};
const out: Record<"on" | "off", Figures> = {
  on: { appendMs: [], appendFirstMs: [], inflightOps: [], coldMs: [], searchMs: [] },
  off: { appendMs: [], appendFirstMs: [], inflightOps: [], coldMs: [], searchMs: [] },
};

const store = new SessionStore(await engine());
let n = 0;

/** The modes in alternating order by repetition: neither always runs first. */
const ordered = (r: number) => (r % 2 === 0 ? MODES : [...MODES].reverse());

// Warm-up, as rows 1 and g1 have one: a server seals millions of payloads,
// and the first few thousand of a fresh process run through V8's lower tiers
// (Node's cipher objects included) at 2-3 x their steady cost. Each mode gets
// the same: `appends` sequential appends to each, the modes taking turns
// append by append (so that neither warms the code both run for the other),
// timed and kept apart (appendFirstMs: what a fresh process's first appends
// cost), then `warmup` appends with 64 in flight, untimed.
const first: Record<string, Awaited<ReturnType<typeof store.open>>> = {};
for (const [mode, ws] of MODES) {
  const id = `first-${n++}`;
  await store.create({ workspace: ws, sessionId: id });
  first[mode] = await store.open(ws, id);
}
for (let i = 0; i < a.appends; i++) {
  for (const [mode] of ordered(i)) {
    const s = first[mode] as Awaited<ReturnType<typeof store.open>>;
    const t = performance.now();
    await s.append(message(i));
    out[mode].appendFirstMs.push(performance.now() - t);
  }
}
for (const [, ws] of MODES) {
  const sessions = [];
  for (let k = 0; k < a.inflightSessions; k++) {
    const wid = `warm-${k}-${n++}`;
    await store.create({ workspace: ws, sessionId: wid });
    sessions.push(await store.open(ws, wid));
  }
  const each = Math.ceil(a.warmup / a.inflightSessions);
  await Promise.all(
    sessions.map(async (w) => {
      for (let i = 0; i < each; i++) await w.append(message(i));
    }),
  );
}

// Sequential durable appends to one session (both sessions made before either is timed:
// a sealed create's extra fsyncs must not land in the other mode's window).
for (let r = 0; r < a.reps; r++) {
  const open: Record<string, Awaited<ReturnType<typeof store.open>>> = {};
  for (const [mode, ws] of MODES) {
    const id = `seq-${r}-${n++}`;
    await store.create({ workspace: ws, sessionId: id });
    open[mode] = await store.open(ws, id);
  }
  for (const [mode] of ordered(r)) {
    const s = open[mode] as Awaited<ReturnType<typeof store.open>>;
    for (let i = 0; i < a.appends; i++) {
      const t = performance.now();
      await s.append(message(i));
      out[mode].appendMs.push(performance.now() - t);
    }
  }
}

// 64 appends in flight: one appender per session, each awaiting its own.
// (Not more rounds: each adds 64 sessions to the workspaces e/search scans.)
for (let r = 0; r < a.reps; r++) {
  const open: Record<string, Awaited<ReturnType<typeof store.open>>[]> = {};
  for (const [mode, ws] of MODES) {
    open[mode] = [];
    for (let k = 0; k < a.inflightSessions; k++) {
      const id = `par-${r}-${k}-${n++}`;
      await store.create({ workspace: ws, sessionId: id });
      open[mode].push(await store.open(ws, id));
    }
  }
  for (const [mode] of ordered(r)) {
    const sessions = open[mode] ?? [];
    const t = performance.now();
    await Promise.all(
      sessions.map(async (s) => {
        for (let i = 0; i < a.inflightPerSession; i++) await s.append(message(i));
      }),
    );
    const secs = (performance.now() - t) / 1000;
    out[mode].inflightOps.push((a.inflightSessions * a.inflightPerSession) / secs);
  }
}

// A big session per workspace, written by import; the search workspaces' sessions.
const imported = (count: number, word?: (i: number) => string) => {
  const entries = [create(EntrySchema, { id: "root", kind: { case: "sessionInfo", value: {} } })];
  let parent = "root";
  for (let i = 0; i < count; i++) {
    const e = message(i, word?.(i) ?? "");
    e.id = `e${i}`;
    e.parentId = parent;
    parent = e.id;
    entries.push(e);
  }
  return entries;
};
for (const [, ws] of MODES) {
  await store.import(ws, imported(a.coldEntries), { sessionId: "cold" });
  for (let k = 0; k < a.searchSessions; k++) {
    const rare = (i: number) =>
      i === Math.floor(a.searchEntries / 2) && k % 5 === 0 ? "zyxwvut" : "";
    await store.import(ws, imported(a.searchEntries, rare), { sessionId: `search-${k}` });
  }
}
await store.close();
if (a.url !== undefined) {
  // What autovacuum does within a minute of a bulk load: without statistics
  // the planner takes the tables for near empty and sorts a search batch's
  // remaining rows whole (to disk), which no server past its first minutes sees.
  const { default: postgres } = await import("postgres");
  const sql = postgres(a.url, { max: 1, onnotice: () => {} });
  await sql`ANALYZE`;
  await sql.end();
}

// One untimed cold read per mode first: the first reads of a process run
// the checkpoint's and the reader's code through V8's lower tiers. Four
// times the other measures' rounds: a median of 4 reads moved more between
// runs (PostgreSQL: 1.19-1.47) than the changes it was to show.
const coldReps = a.reps * 4;
for (let r = -1; r < coldReps; r++) {
  for (const [mode, ws] of ordered(r + 2)) {
    const fresh = new SessionStore(await engine());
    const t = performance.now();
    const state = await (await fresh.open(ws, "cold")).state();
    if (r >= 0) out[mode].coldMs.push(performance.now() - t);
    if (state.messages.length < a.coldEntries) throw new Error("cold state is short");
    await fresh.close();
  }
}

/**
 * e/cold's floor (JSONL): what a sealed cold read must do beyond a clear
 * one in this format, whatever its code: read and CRC the sealed log's
 * extra bytes (base64 ciphertext, nonces, tags), read the checkpoint and
 * open all of it with AES-256-GCM (the same implementation, in the
 * checkpoint's 256 KiB segments; a throwaway key, since the data key stays
 * in the engine). Timed on the very files the cold reads read, in this
 * process, as many times; the scenario adds it to the clear read. Left out
 * as the reader's own choices: matching each record with its checkpoint
 * entry, and anything else. Undefined when the session has no checkpoint.
 */
async function coldFloor(reps: number): Promise<ColdFloor | undefined> {
  const { newKey, open, sealBytes } = (await import(
    "../../dist/src/storage/seal/aead.js" as string
  )) as typeof import("../../src/storage/seal/aead.js");
  const { SEGMENT_BYTES } = (await import(
    "../../dist/src/storage/seal/checkpoint-segments.js" as string
  )) as typeof import("../../src/storage/seal/checkpoint-segments.js");
  const logOf = (ws: string) => join(a.dataDir, ws, "sessions", "cold.jsonl");
  const checkpoint = logOf("enc").replace(/\.jsonl$/, ".ckpt");
  // Quick sizes (500 entries) leave no checkpoint: the read opens record by record.
  const checkpointBytes = statSync(checkpoint, { throwIfNoEntry: false })?.size;
  if (checkpointBytes === undefined) return undefined;
  const key = newKey();
  const ad = Buffer.from("e/cold floor");
  const plain = Buffer.alloc(SEGMENT_BYTES, 0x61);
  const segments: Buffer[] = [];
  for (let at = 0; at < checkpointBytes; at += SEGMENT_BYTES) {
    segments.push(
      sealBytes(key, plain.subarray(0, Math.min(SEGMENT_BYTES, checkpointBytes - at)), ad),
    );
  }
  const readAndCrc = async (file: string) => crc32(await readFile(file));
  const f: ColdFloor = {
    extraMs: [],
    logExtraMs: [],
    checkpointReadMs: [],
    openMs: [],
    checkpointBytes,
  };
  for (let r = -1; r < reps; r++) {
    const t0 = performance.now();
    await readAndCrc(logOf("clear"));
    const t1 = performance.now();
    await readAndCrc(logOf("enc"));
    const t2 = performance.now();
    await readFile(checkpoint);
    const t3 = performance.now();
    for (const s of segments) if (open(key, s, ad) === undefined) throw new Error("floor: no open");
    const t4 = performance.now();
    if (r < 0) continue;
    f.logExtraMs.push(t2 - t1 - (t1 - t0));
    f.checkpointReadMs.push(t3 - t2);
    f.openMs.push(t4 - t3);
    f.extraMs.push(t4 - t1 - (t1 - t0));
  }
  return f;
}
const floor = a.url === undefined ? await coldFloor(coldReps) : undefined;

// Untimed searches first, the modes taking turns, as the appends' warm-up:
// a server answers many searches, and the first ones of a fresh process run
// the search's code through V8's lower tiers (and read the sealed sessions'
// filters, search-bloom.ts, once).
const searcher = new SessionStore(await engine());
const warmSearches = a.reps > 1 ? 10 : 1;
// A search takes ~10 ms: five times the other measures' repetitions cost
// well under a second and steady its median (4 gave 1.21-1.65 in three runs).
const searchReps = a.reps * 5;
for (let r = -warmSearches; r < searchReps; r++) {
  for (const [mode, ws] of ordered(r + warmSearches)) {
    const t = performance.now();
    const res = await searcher.search({ workspace: ws, query: "zyxwvut", pageSize: 1000 });
    if (r >= 0) out[mode].searchMs.push(performance.now() - t);
    if (res.hits.length !== Math.ceil(a.searchSessions / 5)) {
      throw new Error(`search found ${res.hits.length}`);
    }
  }
}
await searcher.close();

answer({ ...out, aead, coldFloor: floor });

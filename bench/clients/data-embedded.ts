/**
 * Row 9, sessiond embedded (no RPC, no server): the store in this process.
 *
 * {"op":"append", dataDir, count, warmup, textBytes}: appends `count`
 *   messages one by one (awaiting each) to a new session, after `warmup`
 *   appends to another session; durability OFF (the engine's debug noFsync
 *   switch, for this comparison with pi's appendFileSync only).
 * {"op":"open", dataDir, sessionId, warm}: cold open + CONTEXT state of an
 *   existing session in this fresh process, then `warm` more open + state
 *   calls on the same store (its cache holds the parsed log).
 *
 * Prints {ms: number[] (per append / per warm open), coldMs?, importMs, messages?}.
 */
import { appendConversation, messageEntryOf } from "./append-workload.js";
import { answer, args } from "./data-common.js";

const a = args<{
  op: "append" | "open";
  dataDir: string;
  count?: number;
  warmup?: number;
  textBytes?: number;
  sessionId?: string;
  warm?: number;
}>();

const t0 = performance.now();
// The package as it ships: the build `npm run bench` makes first (dist/),
// like the servers the other rows start, not the sources through tsx (whose
// transform adds a helper call to every function made, on every append).
const { EntrySchema, JsonlEngine, SessionStore, openStore, View } = (await import(
  "../../dist/src/index.js" as string
)) as typeof import("../../src/index.js");
const importMs = performance.now() - t0;

if (a.op === "append") {
  const count = a.count ?? 1000;
  const warmup = a.warmup ?? 200;
  const c = appendConversation(count, a.textBytes);
  const entryOf = messageEntryOf(EntrySchema, c);
  const inputs = c.entries.map((_, i) => entryOf(i));
  const store = new SessionStore(new JsonlEngine({ dataDir: a.dataDir, debug: { noFsync: true } }));
  const w = await store.open(undefined, (await store.create({ cwd: c.cwd })).session.id);
  for (let i = 0; i < warmup; i++) {
    await w.append(entryOf(i));
  }
  const s = await store.open(undefined, (await store.create({ cwd: c.cwd })).session.id);
  const ms: number[] = [];
  const start = performance.now();
  for (const input of inputs) {
    const t = performance.now();
    await s.append(input);
    ms.push(performance.now() - t);
  }
  const totalMs = performance.now() - start;
  const state = await s.state();
  await store.close();
  answer({ ms, totalMs, importMs, messages: state.messages.length });
}

if (a.op === "open") {
  const id = a.sessionId as string;
  const c0 = performance.now();
  const store = openStore({ dataDir: a.dataDir });
  const session = await store.open(undefined, id);
  const state = await session.state({ view: View.CONTEXT });
  const coldMs = performance.now() - c0;
  const ms: number[] = [];
  for (let i = 0; i < (a.warm ?? 0); i++) {
    const t = performance.now();
    const s = await store.open(undefined, id);
    await s.state({ view: View.CONTEXT });
    ms.push(performance.now() - t);
  }
  await store.close();
  answer({ coldMs, ms, importMs, messages: state.messages.length });
}
throw new Error(`unknown op ${a.op}`);

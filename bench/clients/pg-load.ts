/**
 * Loads scenario 10's listing data into a PostgreSQL database through the
 * engine itself (`PostgresEngine.create`, the same rows a server would
 * write): the small linear sessions of row 6 (bench/lib/generate.ts), in
 * workspace "default", `concurrency` creates in flight.
 * Args: {url, count, minEntries, maxEntries, textBytes, startMs, concurrency}.
 * Prints {sessions, entries, ms, newest}.
 */
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { PostgresEngine } from "../../src/storage/postgres/index.js";
import { findableConversations, rootEntry, smallConversations, toEntry } from "../lib/generate.js";
import { answer, args, log, now } from "./rpc-common.js";

const a = args<{
  url: string;
  count: number;
  minEntries: number;
  maxEntries: number;
  textBytes: number;
  startMs: number;
  concurrency?: number;
  /** Scenario 11's tags and rare word (findableConversations). */
  findable?: { users: number; rareWord: string };
}>();

const t0 = now();
const cs = a.findable ? findableConversations({ ...a, ...a.findable }).cs : smallConversations(a);
const engine = await PostgresEngine.open({ url: a.url, poolSize: 10 });
let next = 0;
let entries = 0;
await Promise.all(
  Array.from({ length: a.concurrency ?? 16 }, async () => {
    for (;;) {
      const c = cs[next++];
      if (c === undefined) return;
      const all: Entry[] = [rootEntry(c), ...c.entries.map((e, i) => toEntry(c, e, i + 2))];
      entries += all.length;
      await engine.create({ workspace: "default", sessionId: c.sessionId }, all);
    }
  }),
);
await engine.close();
const ms = now() - t0;
log(`loaded ${cs.length} sessions, ${entries} entries in ${ms.toFixed(0)} ms`);
answer({ sessions: cs.length, entries, ms, newest: cs[cs.length - 1]?.sessionId });

/**
 * Loads scenario u's sessions (bench/lib/usage-data.ts) into a PostgreSQL
 * database through the engine (`PostgresEngine.create`), in workspace
 * "default", 16 creates in flight. Args: {url, count}. Prints {sessions, entries, ms}.
 */
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { PostgresEngine } from "../../src/storage/postgres/index.js";
import { rootEntry, toEntry } from "../lib/generate.js";
import { dayConversations } from "../lib/usage-data.js";
import { answer, args, log, now } from "./rpc-common.js";

const a = args<{ url: string; count: number }>();
const t0 = now();
const cs = dayConversations(a.count);
const engine = await PostgresEngine.open({ url: a.url, poolSize: 10 });
let next = 0;
let entries = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
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
answer({ sessions: cs.length, entries, ms });

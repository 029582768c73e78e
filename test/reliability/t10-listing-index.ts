/**
 * T10 the persisted listing index under kill -9 and changes behind its back.
 *
 * A real `sessiond serve` (JSONL) holds a workspace of tagged sessions.
 * Each round: traffic over the wire (appends, tag changes, creates,
 * deletes, filtered listings, which make the server learn records and save
 * its listing index 3 s later), then SIGKILL at a random moment (before,
 * during or after a save), or now and then SIGTERM (which saves it). With the server dead, the test changes the
 * files as another process would (an in-process engine without the index:
 * appends, tag changes, deletes, sessions created again under deleted
 * ids, new sessions, now and then a damaged file) and does something to
 * the index file itself: deletes it, damages it (a flipped byte, a cut), or
 * leaves it stale. Then the server restarts, and every listing (each
 * filter, both orders, by creation and update time, page by page) over the
 * wire must equal the same listing by an engine without the index on the
 * same files: the files are the truth. Each listing that differs is a
 * violation.
 *
 * Negative control `noListingIndexCheck`: the server uses the index's
 * entries without a stat of each file; the changes made while it was down
 * must then show as stale listings.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { create, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { type SessionMeta, SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { SessionFilterSchema, SortBy, SortOrder } from "../../gen/sessiond/v1/store_service_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { nodeFs } from "../../src/storage/jsonl/fs-ops.js";
import { JsonlEngine } from "../../src/storage/jsonl/jsonl-engine.js";
import { decodeIndex } from "../../src/storage/jsonl/listing-index-codec.js";
import { LISTING_INDEX_NAME } from "../../src/storage/jsonl/listing-index-file.js";
import { SessionStore } from "../../src/store/session-store.js";
import type { SessiondProcess } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { startWithRetry } from "./lib/kill-server.js";
import { Rng as Random, type Rng } from "./lib/random.js";
import { ageLocks, lockDirs } from "./lib/stale-locks.js";

const WS = "t10";
const USERS = 4;
type Filter = MessageInitShape<typeof SessionFilterSchema> | undefined;
const FILTERS: Filter[] = [
  undefined,
  { tags: { user: "u1" } },
  { tags: { user: "u2", team: "t0" } },
  { titleContains: "ALPHA" },
];

const message = (text: string): MessageInitShape<typeof EntrySchema> => ({
  kind: {
    case: "message",
    value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
  },
});
const retag = (r: Rng): MessageInitShape<typeof EntrySchema> => ({
  kind: {
    case: "sessionInfo",
    value: {
      tags: { user: `u${r.int(0, USERS - 1)}`, team: `t${r.int(0, 2)}` },
      title: r.bool(0.3) ? `alpha ${r.int(0, 999)}` : `beta ${r.int(0, 999)}`,
    },
  },
});

/** The pages of one listing as JSON, whoever answers it. */
type Lister = (
  filter: Filter,
  sortBy: "created" | "updated",
  order: "newest" | "oldest",
  pageToken: string,
) => Promise<{ sessions: SessionMeta[]; nextPageToken: string }>;

async function pages(
  list: Lister,
  filter: Filter,
  sortBy: "created" | "updated",
  order: "newest" | "oldest",
) {
  const out: unknown[] = [];
  let token = "";
  do {
    const page = await list(filter, sortBy, order, token);
    out.push(page.sessions.map((m) => toJson(SessionMetaSchema, m)));
    token = page.nextPageToken;
  } while (token !== "");
  return JSON.stringify(out);
}

const overWire =
  (c: SessiondClient): Lister =>
  (filter, sortBy, order, pageToken) =>
    c.store.listSessions({
      workspace: WS,
      pageSize: 9,
      pageToken,
      filter,
      sortBy: sortBy === "updated" ? SortBy.UPDATED : SortBy.CREATED,
      order: order === "oldest" ? SortOrder.OLDEST_FIRST : SortOrder.NEWEST_FIRST,
    });

const inProcess =
  (store: SessionStore): Lister =>
  (filter, sortBy, order, pageToken) =>
    store.list({
      workspace: WS,
      pageSize: 9,
      pageToken,
      sortBy,
      order,
      filter: filter === undefined ? undefined : create(SessionFilterSchema, filter),
    });

/** An engine without the listing index (an injected file system gets none): the files' truth. */
const filesOnly = (dataDir: string) => new JsonlEngine({ dataDir, fs: { ...nodeFs } });

/** The session ids in the files, sorted. */
async function idsOnDisk(dataDir: string): Promise<string[]> {
  const engine = filesOnly(dataDir);
  try {
    return (await engine.listIds(WS)).sort();
  } finally {
    await engine.close();
  }
}

async function run(o: RunOptions) {
  const rng = new Random(o.seed);
  const rounds = o.quick ? 5 : 16;
  const initial = o.quick ? 40 : 150;
  const env = o.control === undefined ? undefined : { SESSIOND_DEBUG: o.control };
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-t10-"));
  const indexFile = join(dataDir, WS, LISTING_INDEX_NAME);
  const starts = { failedStarts: 0 };
  const details: string[] = [];
  const live = new Set<string>();
  let nextId = 0;
  const newId = () => `t10-${String(nextId++).padStart(5, "0")}`;
  let kills = 0;
  let stops = 0;
  let restartsWithIndex = 0;
  let indexedRecords = 0;
  let compared = 0;
  let stale = 0;
  const indexFate = { deleted: 0, damaged: 0, kept: 0 };

  const start = () => startWithRetry({ dataDir, env, storage: "jsonl" }, starts, o.log);
  let server: SessiondProcess | undefined = await start();
  try {
    let client = createSessiondClient({ baseUrl: server.url, retry: false, timeoutMs: 30_000 });
    for (let i = 0; i < initial; i++) {
      const id = newId();
      await client.store.createSession({
        workspace: WS,
        sessionId: id,
        title: i % 3 === 0 ? `alpha ${i}` : `beta ${i}`,
        tags: { user: `u${i % USERS}`, team: `t${i % 3}` },
      });
      live.add(id);
    }
    for (let round = 1; round <= rounds && Date.now() < o.deadline - 20_000; round++) {
      // Traffic until the kill: ops of unknown outcome are fine, the files decide.
      const killAt = Date.now() + rng.int(300, 7_000);
      const c = client;
      const traffic = (async () => {
        while (Date.now() < killAt) {
          const ids = [...live];
          const id = rng.pick(ids);
          const dice = rng.int(0, 9);
          try {
            if (dice < 2) {
              await c.session.append({
                workspace: WS,
                session: id,
                entries: [message(`m ${round}`)],
              });
            } else if (dice < 3) {
              await c.session.append({ workspace: WS, session: id, entries: [retag(rng)] });
            } else if (dice < 4) {
              const fresh = newId();
              live.add(fresh);
              await c.store.createSession({
                workspace: WS,
                sessionId: fresh,
                tags: { user: "u1" },
              });
            } else if (dice < 5 && ids.length > initial / 2) {
              live.delete(id);
              await c.store.deleteSession({ workspace: WS, session: id });
            } else {
              await overWire(c)(
                rng.pick(FILTERS),
                rng.bool() ? "updated" : "created",
                "newest",
                "",
              );
            }
          } catch {
            // The server died under the call (or a delete raced an append): the files decide.
          }
          // A pace at which saves see records (an append drops its session's until the next listing).
          await sleep(rng.int(5, 40));
        }
      })();
      await sleep(Math.max(0, killAt - Date.now()));
      // Mostly kill -9; now and then a graceful stop, which saves the index on the way out.
      if (rng.bool(0.75)) {
        await server.kill9();
        kills++;
      } else {
        await server.stop();
        stops++;
      }
      server = undefined;
      await traffic;
      await ageLocks(await lockDirs(dataDir, WS));

      // Behind the index's back, as another process would.
      const engine = filesOnly(dataDir);
      const store = new SessionStore(engine);
      try {
        const ids = (await engine.listIds(WS)).sort();
        for (const id of ids) {
          const dice = rng.int(0, 19);
          if (dice < 3) await (await store.open(WS, id)).append(create(EntrySchema, message("x")));
          else if (dice < 5)
            await (await store.open(WS, id)).append(create(EntrySchema, retag(rng)));
          else if (dice < 6 && ids.length > initial / 2) {
            await store.delete(WS, id, { includeSubagents: true });
            // Created again under the same id now and then: another file, another root.
            if (rng.bool(0.5)) {
              await store.create({
                workspace: WS,
                sessionId: id,
                title: "alpha again",
                tags: { user: "u2", team: "t0" },
              });
            }
          }
        }
        for (let i = rng.int(0, 3); i > 0; i--) {
          await store.create({ workspace: WS, sessionId: newId(), tags: { user: "u1" } });
        }
      } finally {
        await engine.close();
      }
      if (rng.bool(0.15)) {
        const victim = rng.pick(await idsOnDisk(dataDir));
        await writeFile(join(dataDir, WS, "sessions", `${victim}.jsonl`), "damage\n", {
          flag: "a",
        }).catch(() => undefined);
      }
      const fate = rng.int(0, 9);
      const bytes = await readFile(indexFile).catch(() => undefined);
      if (bytes !== undefined && fate < 2) {
        rmSync(indexFile);
        indexFate.deleted++;
      } else if (bytes !== undefined && fate < 4) {
        const cut = rng.bool()
          ? bytes.subarray(0, rng.int(0, bytes.length - 1))
          : Buffer.from(bytes);
        if (cut.length === bytes.length) cut[rng.int(0, cut.length - 1)] ^= 0x10;
        await writeFile(indexFile, cut);
        indexFate.damaged++;
      } else {
        indexFate.kept++;
      }
      // What the restart has to work with (shows that the index is exercised at all).
      const saved = decodeIndex(
        (await readFile(indexFile).catch(() => undefined)) ?? Buffer.alloc(0),
        WS,
      );
      if (saved !== undefined) {
        restartsWithIndex++;
        indexedRecords += saved.filter((f) => f.record !== undefined).length;
      }
      live.clear();
      for (const id of await idsOnDisk(dataDir)) live.add(id);

      // Restart, and compare every listing with the files' truth.
      server = await start();
      client = createSessiondClient({ baseUrl: server.url, retry: false, timeoutMs: 30_000 });
      const truth = filesOnly(dataDir);
      const truthStore = new SessionStore(truth);
      try {
        for (const f of FILTERS) {
          for (const sortBy of ["created", "updated"] as const) {
            for (const order of ["newest", "oldest"] as const) {
              const got = await pages(overWire(client), f, sortBy, order);
              const want = await pages(inProcess(truthStore), f, sortBy, order);
              compared++;
              if (got !== want) {
                stale++;
                if (details.length < 10) {
                  details.push(
                    `round ${round}: listing ${JSON.stringify(f ?? {})} by ${sortBy}, ${order}: the server's differs from the files'`,
                  );
                }
              }
            }
          }
        }
      } finally {
        await truth.close();
      }
      o.log(`round ${round}: ${live.size} sessions, ${compared} listings compared, ${stale} stale`);
    }
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    figures: [
      `${kills} kills`,
      `${stops} graceful stops`,
      `${compared} listings compared`,
      `${stale} stale`,
      `index ${indexFate.deleted} deleted / ${indexFate.damaged} damaged / ${indexFate.kept} kept`,
      `${restartsWithIndex} restarts on a whole index (${indexedRecords} records in all)`,
      `${starts.failedStarts} failed starts`,
    ].join(", "),
    violations: stale,
    details,
  };
}

const test: ReliabilityTest = {
  id: "T10",
  name: "listing index",
  controls: ["noListingIndexCheck"],
  budgetMs: { full: 300_000, quick: 120_000 },
  run,
};
export default test;

if (isMain(import.meta)) await main(test);

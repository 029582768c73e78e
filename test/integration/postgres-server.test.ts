import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { createSessiondClient } from "../../src/client/index.js";
import { createDatabase, type PgServer, pgSkipReason, startPostgres } from "../harness/postgres.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond serve --storage postgres://...`: the real server on a throwaway
 * PostgreSQL cluster, through the TypeScript client; data survives a server
 * restart and a second server process on the same database sees it.
 */
const skip = process.env.CI === "true" ? undefined : pgSkipReason();
const text = (t: string) => [{ part: { case: "text" as const, value: t } }];

if (skip !== undefined) {
  console.warn(`\n*** sessiond-on-PostgreSQL tests SKIPPED: ${skip} ***\n`);
  it.skip(`sessiond serve --storage postgres (skipped: ${skip})`, () => {});
} else {
  describe("sessiond serve --storage postgres://", () => {
    let pg: PgServer | undefined;
    let db: { url: string; drop(): Promise<void> };
    const servers: SessiondProcess[] = [];

    const start = async () => {
      const s = await startSessiond({ args: ["--storage", db.url] });
      servers.push(s);
      return s;
    };

    beforeAll(async () => {
      pg = await startPostgres();
      if (pg === undefined) throw new Error("PostgreSQL is not available");
      db = await createDatabase(pg.url);
    });

    afterAll(async () => {
      for (const s of servers) {
        await s.stop();
        removeDataDir(s.dataDir);
      }
      await db?.drop();
      await pg?.stop();
    });

    it("serves appends, state and watches, and keeps them across a restart and a second replica", async () => {
      const first = await start();
      const c = createSessiondClient({ baseUrl: first.url, retry: false });
      const { session } = await c.store.createSession({ title: "on postgres" });
      const id = session?.id as string;
      await c.session.append({
        session: id,
        entries: [
          {
            id: "u1",
            kind: { case: "message", value: { role: Role.USER, content: text("37*19=?") } },
          },
          {
            id: "a1",
            kind: { case: "message", value: { role: Role.ASSISTANT, content: text("703") } },
          },
        ],
      });
      const again = await c.session.append({
        session: id,
        entries: [
          {
            id: "u1",
            kind: { case: "message", value: { role: Role.USER, content: text("37*19=?") } },
          },
        ],
      });
      expect(again.deduplicated).toBe(true);
      expect((await first.stop()) ?? 0).toBe(0);

      const second = await start();
      const c2 = createSessiondClient({ baseUrl: second.url, retry: false });
      const { state } = await c2.session.getState({ session: id, view: View.CONTEXT });
      expect(state?.messages.map((m) => m.entryId)).toEqual(["u1", "a1"]);
      expect(state?.headSeq).toBe(3n);

      const third = await start(); // a second replica on the same database
      const c3 = createSessiondClient({ baseUrl: third.url, retry: false });
      await c3.session.append({
        session: id,
        entries: [
          {
            id: "u2",
            kind: { case: "message", value: { role: Role.USER, content: text("thanks") } },
          },
        ],
      });
      const seen: bigint[] = [];
      const abort = new AbortController();
      try {
        const stream = c2.session.watchEntries(
          { session: id, afterSeq: 0n },
          { signal: abort.signal },
        );
        for await (const ev of stream) {
          if (ev.event.case === "entry") seen.push(ev.event.value.seq);
          if (seen.length === 4) abort.abort();
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err; // our own cancel ends the stream
      }
      expect(seen).toEqual([1n, 2n, 3n, 4n]);
      const list = await c3.store.listSessions({});
      expect(list.sessions.map((s) => s.id)).toEqual([id]);
      expect(list.sessions[0]?.headSeq).toBe(4n);
    });
  });
}

import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  type PgServer,
  pgSkipReason,
  startPostgres,
} from "../../../test/harness/postgres.js";
import { PostgresEngine } from "./postgres-engine.js";

const skip = process.env.CI === "true" ? undefined : pgSkipReason();

/** A promise with its resolve, to hold a job open. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

if (skip !== undefined) {
  console.warn(`\n*** PostgreSQL exclusive-job tests SKIPPED: ${skip} ***\n`);
  it.skip(`PostgreSQL exclusive-job tests (skipped: ${skip})`, () => {});
} else {
  let server: PgServer | undefined;
  let db: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let admin: postgres.Sql | undefined;
  const engines: PostgresEngine[] = [];

  beforeAll(async () => {
    server = await startPostgres();
    if (server === undefined) throw new Error("PostgreSQL is not available");
    db = await createDatabase(server.url);
    admin = postgres(db.url, { max: 1, onnotice: () => {} });
  });

  afterAll(async () => {
    for (const e of engines) await e.close();
    await admin?.end({ timeout: 1 });
    await db?.drop();
    await server?.stop();
  });

  async function replica(): Promise<PostgresEngine> {
    if (db === undefined) throw new Error("no database");
    const engine = await PostgresEngine.open({ url: db.url, poolSize: 3 });
    engines.push(engine);
    return engine;
  }

  describe("exclusive jobs across replicas", () => {
    it("a job another replica is running is not run, and runs once that one is done", async () => {
      const [a, b] = [await replica(), await replica()];
      const held = gate();
      const running = a.exclusive("sweep-1", async () => {
        await held.opened;
        return "a";
      });
      // Until a has the lock, b may still get it: wait for a's lock to show.
      await expect.poll(() => b.exclusive("sweep-1", async () => "b")).toEqual({ ran: false });
      // Another job's name is another lock.
      expect(await b.exclusive("other", async () => "b")).toEqual({ ran: true, value: "b" });
      held.open();
      expect(await running).toEqual({ ran: true, value: "a" });
      expect(await b.exclusive("sweep-1", async () => "b")).toEqual({ ran: true, value: "b" });
    });

    it("a job that fails releases the lock and its error reaches the caller as it was", async () => {
      const [a, b] = [await replica(), await replica()];
      await expect(
        a.exclusive("sweep-2", async () => {
          throw new Error("sweep broke");
        }),
      ).rejects.toThrow(/^sweep broke$/);
      expect(await b.exclusive("sweep-2", async () => 2)).toEqual({ ran: true, value: 2 });
    });

    it("the lock of a replica whose connection dies mid-job goes with it", async () => {
      const [a, b] = [await replica(), await replica()];
      const held = gate();
      let pid = 0;
      const running = a.exclusive("sweep-3", async () => {
        await held.opened;
      });
      await expect.poll(() => b.exclusive("sweep-3", async () => 0)).toEqual({ ran: false });
      const rows = await (admin as postgres.Sql)<{ pid: number }[]>`
        SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2`;
      pid = rows[0]?.pid ?? 0;
      expect(rows).toHaveLength(1);
      await (admin as postgres.Sql)`SELECT pg_terminate_backend(${pid})`;
      await expect
        .poll(() => b.exclusive("sweep-3", async () => "taken over"))
        .toEqual({ ran: true, value: "taken over" });
      held.open();
      expect(await running).toEqual({ ran: true, value: undefined });
    });
  });
}

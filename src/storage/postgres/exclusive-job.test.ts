import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  type PgServer,
  pgSkipReason,
  startPostgres,
} from "../../../test/harness/postgres.js";
import { JOB_LEASE_MS } from "./exclusive-job.js";
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
      const started = gate();
      const running = a.exclusive("sweep-1", async () => {
        started.open();
        await held.opened;
        return "a";
      });
      await started.opened;
      expect(await b.exclusive("sweep-1", async () => "b")).toEqual({ ran: false });
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

    it("a lease whose holder never gave it back is taken over once it expires", async () => {
      const [a, b] = [await replica(), await replica()];
      const held = gate();
      const started = gate();
      const running = a.exclusive("sweep-3", async () => {
        started.open();
        await held.opened;
      });
      await started.opened;
      expect(await b.exclusive("sweep-3", async () => 0)).toEqual({ ran: false });
      // As if a had died mid-job JOB_LEASE_MS ago.
      await (admin as postgres.Sql)`
        UPDATE sessiond_job_leases SET expires_at = now() - interval '1 second'
        WHERE name = 'sweep-3'`;
      expect(await b.exclusive("sweep-3", async () => "taken over")).toEqual({
        ran: true,
        value: "taken over",
      });
      held.open();
      expect(await running).toEqual({ ran: true, value: undefined });
    });

    it("a replica's lease lasts JOB_LEASE_MS and is gone when the job is done", async () => {
      const a = await replica();
      const during = await a.exclusive("sweep-4", async () => {
        const [row] = await (admin as postgres.Sql)<{ ms: number }[]>`
          SELECT extract(epoch FROM expires_at - now()) * 1000 AS ms
          FROM sessiond_job_leases WHERE name = 'sweep-4'`;
        return Number(row?.ms);
      });
      expect(during.ran && during.value).toBeGreaterThan(JOB_LEASE_MS - 60_000);
      expect(during.ran && during.value).toBeLessThanOrEqual(JOB_LEASE_MS);
      const left = await (admin as postgres.Sql)`
        SELECT 1 FROM sessiond_job_leases WHERE name = 'sweep-4'`;
      expect(left).toHaveLength(0);
    });
  });
}

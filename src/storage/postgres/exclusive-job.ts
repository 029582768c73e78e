import type { Sql } from "postgres";

/**
 * How long a replica's lease on a job lasts: past it another replica may
 * take the job over (the holder died, or the job is slow; a job is safe to
 * run twice, so the worst case is double work).
 */
export const JOB_LEASE_MS = 5 * 60_000;

/**
 * Takes the lease of a named job (the retention sweep) if no other replica
 * holds it unexpired: one upsert on sessiond_job_leases (migration 6);
 * false when another holds it. A lease row and short queries, not an
 * advisory lock held on a connection for the job's duration: postgres.js
 * does not survive a reserved connection or a transaction being terminated
 * under it (an uncaught exception in its writer), and a sweep must never
 * take the server down with it.
 */
export async function takeJobLease(
  sql: Sql,
  name: string,
  holder: string,
  leaseMs = JOB_LEASE_MS,
): Promise<boolean> {
  const rows = await sql`
    INSERT INTO sessiond_job_leases (name, holder, expires_at)
    VALUES (${name}, ${holder}, now() + ${leaseMs} * interval '1 millisecond')
    ON CONFLICT (name) DO UPDATE
      SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
      WHERE sessiond_job_leases.expires_at < now()
        OR sessiond_job_leases.holder = EXCLUDED.holder
    RETURNING holder`;
  return rows.length === 1;
}

/** Gives a job's lease back, if this replica still holds it. */
export async function dropJobLease(sql: Sql, name: string, holder: string): Promise<void> {
  await sql`DELETE FROM sessiond_job_leases WHERE name = ${name} AND holder = ${holder}`;
}

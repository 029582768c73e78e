import type { Sql } from "postgres";

/**
 * The first key of the two-key advisory locks of named jobs. The second is
 * the hash of the job's name. Two-key locks live apart from the one-key
 * lock of the migrations (schema.ts), so the two can never collide.
 */
const JOB_LOCK_SPACE = 0x5e55;

/**
 * Takes the lock of a named job (the retention sweep) if no other replica
 * of the database holds it, without waiting: a session-level advisory lock
 * on a connection reserved until the returned release is called; undefined
 * when another replica holds it. A replica that dies mid-job loses its
 * connection and with it the lock, so the next one can run the job: the
 * lock keeps replicas from doing the same work at once, and the job itself
 * must stay safe to run twice (retention deletes compare-and-delete).
 */
export async function tryJobLock(
  sql: Sql,
  name: string,
): Promise<(() => Promise<void>) | undefined> {
  const conn = await sql.reserve();
  try {
    const [row] = await conn<{ got: boolean }[]>`
      SELECT pg_try_advisory_lock(${JOB_LOCK_SPACE}, hashtext(${name})) AS got`;
    if (row?.got !== true) {
      conn.release();
      return undefined;
    }
  } catch (err) {
    conn.release();
    throw err;
  }
  return async () => {
    // A broken connection has released the lock with its session already.
    await conn`SELECT pg_advisory_unlock(${JOB_LOCK_SPACE}, hashtext(${name}))`.catch(() => {});
    conn.release();
  };
}

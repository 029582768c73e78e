/**
 * The lock directories a killed server leaves in a data dir (T1, T10). A
 * restarted server takes them over only once they are `lockStaleMs` old
 * (10 s); a test that does not measure that wait ages them instead (mtime
 * back by a minute), which is what the wait would do, so proper-lockfile's
 * real stale takeover still runs, just without the wait.
 */
import { readdir, utimes } from "node:fs/promises";
import { join } from "node:path";

/** Lock directories (`.<id>.jsonl.lock`) left in the sessions directories of `workspace`. */
export async function lockDirs(dataDir: string, workspace: string): Promise<string[]> {
  const out: string[] = [];
  const dirs = [
    join(dataDir, workspace, "sessions"),
    join(dataDir, workspace, "sessions", "subagents"),
  ];
  for (const d of dirs) {
    let names: string[];
    try {
      names = await readdir(d);
    } catch {
      continue;
    }
    for (const n of names) if (n.endsWith(".jsonl.lock")) out.push(join(d, n));
  }
  return out;
}

/** The session id of a lock directory `.<id>.jsonl.lock`. */
export function sessionOfLock(lock: string): string {
  const base = lock.slice(lock.lastIndexOf("/") + 1);
  return base.slice(1, -".jsonl.lock".length);
}

/** Makes `locks` look a minute old: stale for any lockStaleMs up to that. */
export async function ageLocks(locks: readonly string[]): Promise<void> {
  const past = new Date(Date.now() - 60_000);
  for (const l of locks) await utimes(l, past, past).catch(() => undefined);
}

import { randomBytes } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";

/**
 * Who holds a session's lock, so that a process restarted after kill -9 on
 * the same machine can take over its predecessor's locks at once instead
 * of waiting for them to go stale (proper-lockfile's only criterion: an
 * mtime older than `lockStaleMs`, 10 s by default).
 *
 * The holder writes `.<name>.lock.owner` next to the lock dir right after
 * taking the lock and removes it before releasing. Its identity is the
 * machine's boot id, the PID namespace, the pid and the process start time
 * (from /proc), plus a random nonce. A waiter that finds the lock taken
 * reads it and calls the holder dead only when boot id and PID namespace
 * are its own (the pid means something here: not another container or
 * machine sharing the directory) and /proc has no process with that pid
 * and start time (pid reuse is caught by the start time). Anything else —
 * no owner file, another machine, no /proc — falls back to the mtime.
 */

/** `.<name>.lock.owner`, next to the lock dir. */
export function ownerPathOf(lockPath: string): string {
  return `${lockPath}.owner`;
}

function readOrUndefined(p: string): string | undefined {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat: start time in clock ticks since boot. */
function startTime(pid: number): string | undefined {
  const stat = readOrUndefined(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19];
}

function nsOf(): string | undefined {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
}

let self: string | null | undefined;

/** This process's identity ("boot ns pid start"), or undefined where /proc is missing. */
export function selfIdentity(): string | undefined {
  if (self === undefined) {
    const boot = readOrUndefined("/proc/sys/kernel/random/boot_id")?.trim();
    const ns = nsOf();
    const start = startTime(process.pid);
    self = boot && ns && start ? `${boot} ${ns} ${process.pid} ${start}` : null;
  }
  return self ?? undefined;
}

/** The owner file's content for a lock this process has just taken. */
export function ownerRecord(): string | undefined {
  const id = selfIdentity();
  return id === undefined ? undefined : `${id} ${randomBytes(6).toString("hex")}\n`;
}

/** True only when `record` names a process of this machine and PID namespace that no longer runs. */
export function ownerIsDead(record: string): boolean {
  const mine = selfIdentity();
  if (mine === undefined) return false;
  const [boot, ns, pid, start] = record.trim().split(" ");
  const [myBoot, myNs] = mine.split(" ");
  if (boot !== myBoot || ns !== myNs || pid === undefined || start === undefined) return false;
  const n = Number(pid);
  if (!Number.isSafeInteger(n) || n <= 0) return false;
  if (n === process.pid) return false;
  return startTime(n) !== start;
}

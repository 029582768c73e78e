import { policyIsSet, type RetentionPolicy } from "../../core/retention.js";
import { expireSessions, type SessionStore } from "../../store/index.js";
import { errorText, startPeriodicJob } from "./periodic-job.js";

/**
 * Retention policies of a server: one for every workspace, and overrides
 * per workspace. A workspace whose policy sets nothing is never swept.
 */
export interface RetentionConfig {
  readonly all: RetentionPolicy;
  readonly workspaces: Readonly<Record<string, RetentionPolicy>>;
  /** Time between sweeps, ms. */
  readonly intervalMs: number;
}

export interface RetentionSweeper {
  /** One sweep of every workspace now (tests; the timer calls it too). */
  sweep(): Promise<void>;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/** The name under which replicas take turns at sweeping (StorageEngine.exclusive). */
const RETENTION_JOB = "retention";

/** The policy of a workspace: its override, else the one for all. */
export function policyOf(config: RetentionConfig, workspace: string): RetentionPolicy {
  return config.workspaces[workspace] ?? config.all;
}

/**
 * Sweeps every workspace with a policy, every `intervalMs` (the first one
 * right after start), one workspace at a time, and logs one JSON line per
 * workspace that lost sessions (and the policies once, at start). Removals
 * reach WatchSessions subscribers as DELETED events, as any deletion does.
 * A failed sweep is logged and retried at the next interval; it never stops
 * the server.
 */
export function startRetention(
  store: SessionStore,
  config: RetentionConfig,
  log: (line: string) => void,
  now: () => number = Date.now,
): RetentionSweeper {
  log(
    JSON.stringify({
      msg: "retention policy",
      all: config.all,
      workspaces: config.workspaces,
      intervalMs: config.intervalMs,
    }),
  );
  /** Every workspace with a policy, one at a time. */
  const sweepAll = async () => {
    const names = new Set(await store.engine.workspaces());
    for (const ws of Object.keys(config.workspaces)) names.add(ws);
    for (const workspace of names) {
      if (job.stopped) return;
      const policy = policyOf(config, workspace);
      if (!policyIsSet(policy)) continue;
      const report = await expireSessions(store, workspace, policy, { nowMs: now() });
      if (report.expired.length > 0 || report.changed.length > 0) {
        log(
          JSON.stringify({
            msg: "retention",
            workspace,
            removed: report.expired.map((e) => ({
              session: e.id,
              reason: e.reason,
              with: e.removed.slice(1),
            })),
            keptChanged: report.changed,
          }),
        );
      }
    }
  };
  const job = startPeriodicJob({
    store,
    name: RETENTION_JOB,
    intervalMs: config.intervalMs,
    firstAfterMs: 0,
    job: sweepAll,
    onSkipped: () =>
      log(JSON.stringify({ msg: "retention skipped", reason: "another replica is sweeping" })),
    onError: (err) => log(JSON.stringify({ msg: "retention failed", error: errorText(err) })),
  });
  return { sweep: job.run, stop: job.stop };
}

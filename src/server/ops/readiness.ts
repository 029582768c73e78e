import type { SessionStore } from "../../store/index.js";

/** How long a readiness check waits for the storage before calling it unusable. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Whether this replica should get traffic (Kubernetes readiness, `/readyz`):
 * not draining, and its storage usable now (the engine's `probe`: the JSONL
 * data dir takes a new file, PostgreSQL answers). Liveness is separate and
 * never looks at storage: a full disk must take a replica out of the load
 * balancer, not restart it.
 */
export class Readiness {
  private draining = false;

  constructor(private readonly store: SessionStore) {}

  /** Called first thing on shutdown: from now on the replica reports not ready, for good. */
  drain(): void {
    this.draining = true;
  }

  /** Undefined when ready, else why not (no paths or errors' text: the probe is unauthenticated). */
  async check(): Promise<string | undefined> {
    if (this.draining) return "draining";
    const probe = this.store.engine.probe?.();
    if (probe === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("storage did not answer in time"), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([
        probe.then(
          () => undefined,
          (err: unknown) => `storage unusable (${codeOf(err)})`,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^[A-Z_]{2,32}$/.test(code) ? code : "error";
}

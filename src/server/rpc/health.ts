/**
 * grpc.health.v1.Health for sessiond.
 *
 * Load balancers, Kubernetes probes and `grpc_health_probe` speak this
 * protocol, and no ready implementation exists for Connect-ES, so it is
 * written here over the generated descriptors (proto-vendor/grpc/health/v1).
 * Semantics follow https://github.com/grpc/grpc/blob/master/doc/health-checking.md.
 */
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  type HealthListResponse,
  HealthListResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../../gen/grpc/health/v1/health_pb.js";
import { notFound } from "../../core/errors.js";

export { ServingStatus };

/** The services sessiond reports on; "" is the server as a whole. */
export const SESSIOND_HEALTH_SERVICES: readonly string[] = [
  "",
  "sessiond.v1.StoreService",
  "sessiond.v1.SessionService",
];

type Listener = () => void;

/**
 * The serving status of each service, observable by Watch streams.
 *
 * It is a separate object (not hidden inside the handler) so that the server's
 * lifecycle code can flip it: NOT_SERVING while starting or draining, before
 * the port closes, lets load balancers move traffic away first.
 */
export class HealthStatus {
  readonly #status = new Map<string, ServingStatus>();
  readonly #listeners = new Map<string, Set<Listener>>();
  #shutDown = false;

  constructor(
    services: readonly string[] = SESSIOND_HEALTH_SERVICES,
    initial: ServingStatus = ServingStatus.SERVING,
  ) {
    for (const service of services) this.#status.set(service, initial);
  }

  /** The status of a service, or undefined when the service is unknown. */
  get(service: string): ServingStatus | undefined {
    return this.#status.get(service);
  }

  /** A snapshot of every known service. */
  list(): ReadonlyMap<string, ServingStatus> {
    return new Map(this.#status);
  }

  /**
   * Sets (or adds) a service's status and notifies its watchers.
   *
   * Ignored after shutdown(): a component that reports SERVING late must not
   * advertise a draining server as healthy again.
   */
  set(service: string, status: ServingStatus): void {
    if (this.#shutDown) return;
    this.#update(service, status);
  }

  /**
   * Marks every service NOT_SERVING for good; call it first thing on SIGTERM so
   * that watchers hear it before their streams are cut.
   */
  shutdown(): void {
    this.#shutDown = true;
    for (const service of [...this.#status.keys()]) {
      this.#update(service, ServingStatus.NOT_SERVING);
    }
  }

  /**
   * Calls `listener` after every change of `service` (also a service that is
   * unknown now and may become known). Returns the unsubscribe function.
   */
  subscribe(service: string, listener: Listener): () => void {
    let set = this.#listeners.get(service);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(service, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(service) === set) this.#listeners.delete(service);
    };
  }

  #update(service: string, status: ServingStatus): void {
    if (this.#status.get(service) === status) return;
    this.#status.set(service, status);
    for (const listener of [...(this.#listeners.get(service) ?? [])]) listener();
  }
}

/** Serves grpc.health.v1.Health (Check, Watch, List) from `status`. */
export function registerHealth(router: ConnectRouter, status: HealthStatus): void {
  router.service(Health, {
    check(req: HealthCheckRequest): HealthCheckResponse {
      const current = status.get(req.service);
      if (current === undefined) {
        throw notFound(`unknown service "${req.service}"`);
      }
      return create(HealthCheckResponseSchema, { status: current });
    },
    watch: (req: HealthCheckRequest, ctx: HandlerContext) => watchStatus(status, req.service, ctx),
    list(): HealthListResponse {
      const statuses: Record<string, HealthCheckResponse> = {};
      for (const [service, current] of status.list()) {
        statuses[service] = create(HealthCheckResponseSchema, { status: current });
      }
      return create(HealthListResponseSchema, { statuses });
    },
  });
}

/**
 * The current status at once, then each change. An unknown service reads as
 * SERVICE_UNKNOWN and the stream stays open (the spec: it may become known).
 *
 * Changes that arrive faster than the client reads collapse into the newest
 * status, so a slow watcher costs one slot, not a growing queue; that is all
 * a health watcher needs (it acts on the latest state).
 */
async function* watchStatus(
  status: HealthStatus,
  service: string,
  ctx: HandlerContext,
): AsyncGenerator<HealthCheckResponse> {
  let changed = true;
  let wake: (() => void) | undefined;
  const poke = () => {
    changed = true;
    wake?.();
  };
  const unsubscribe = status.subscribe(service, poke);
  ctx.signal.addEventListener("abort", poke);
  try {
    let sent: ServingStatus | undefined;
    for (;;) {
      // Rethrowing the reason (not returning) makes a shutdown reach the client
      // as an error (UNAVAILABLE / CANCELED), so it reconnects instead of
      // taking a clean end of stream for "nothing more will change".
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (changed) {
        changed = false;
        const current = status.get(service) ?? ServingStatus.SERVICE_UNKNOWN;
        if (current !== sent) {
          sent = current;
          yield create(HealthCheckResponseSchema, { status: current });
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    ctx.signal.removeEventListener("abort", poke);
  }
}

import type postgres from "postgres";
import { notFound, type SessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { SessionKey } from "../engine.js";
import type { StorageObserver } from "../observer.js";
import type { BloomCache } from "./bloom-cache.js";
import type { PgKeys } from "./sealing.js";
import type { SessionCache } from "./session-cache.js";

/** A query runner: the pool or a transaction. */
export type Q = postgres.ISql;

/**
 * What the engine's parts share, handed to each of them by PostgresEngine.
 * The parts are plain functions over this context rather than methods, so
 * that each file holds one concept (catch-up, append, listing, ...) and the
 * engine class only wires them to the StorageEngine contract.
 */
export interface PgContext {
  /** The pool. */
  readonly sql: postgres.Sql;
  /** Parsed logs of this replica, and the per-session turns that guard them. */
  readonly cache: SessionCache;
  /** This replica's id in NOTIFY payloads (see notify.ts). */
  readonly replica: string;
  /** Rows per INSERT statement. */
  readonly insertChunk: number;
  /**
   * Runs `fn`, turning database and connection failures into UNAVAILABLE
   * naming `what`; `close()` waits for every call running through here.
   */
  db<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** Told about group commits and NOTIFY lag (metrics). */
  readonly observer: StorageObserver;
  /** Encryption at rest: which workspaces are sealed, and the key provider (sealing.ts). */
  readonly keys: PgKeys;
  /** The search filters of sealed sessions as this replica last read them (search.ts). */
  readonly blooms: BloomCache;
  /** Sealed rows a cold read opens one by one before it writes a checkpoint (checkpoint.ts). */
  readonly checkpointAfter: number;
}

/** NOT_FOUND for a session, worded like the other engines. */
export function missing(k: SessionKey): SessiondError {
  return notFound(`session ${quote(k.sessionId)} not found in workspace ${quote(k.workspace)}`);
}

import { randomBytes } from "node:crypto";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { StoreService } from "../../../gen/sessiond/v1/store_service_pb.js";
import {
  createSessiondClient,
  type Protocol,
  type SessiondClient,
  type SessiondClientOptions,
} from "../../../src/client/index.js";
import {
  type SessiondProcess,
  type StartOptions,
  serverUnderTest,
  startSessiond,
} from "../../harness/server.js";

export { type SessiondProcess, type StartOptions, serverUnderTest, startSessiond };

/** Every protocol of the Connect client. */
export const PROTOCOLS: readonly Protocol[] = ["grpc", "connect", "grpc-web"];

/** A generated session id: YYYYMMDD-HHMMSS-<8 hex>. */
export const SESSION_ID_RE = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-[0-9a-f]{8}$/;

/** The UTC time encoded in a generated session id. */
export function timeOfSessionId(id: string): number {
  const m = SESSION_ID_RE.exec(id);
  if (m === null) throw new Error(`not a generated session id: ${id}`);
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
}

/** A workspace name unique to this run (the suite may run against a shared external server). */
export function uniqueWorkspace(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
}

/** A client on 127.0.0.1 with a per-call deadline, so that no test hangs on a call. */
export function client(
  baseUrl: string,
  protocol: Protocol = "grpc",
  extra: Partial<SessiondClientOptions> = {},
): SessiondClient {
  return createSessiondClient({ baseUrl, protocol, timeoutMs: 15_000, ...extra });
}

/**
 * A bare Connect client of StoreService with no interceptors (the sessiond
 * client assigns session ids itself; this one lets the server do it).
 */
export function rawStoreClient(baseUrl: string, protocol: Protocol): Client<typeof StoreService> {
  const opts = { baseUrl, httpVersion: "2" as const, defaultTimeoutMs: 15_000 };
  const transport: Transport =
    protocol === "grpc"
      ? createGrpcTransport(opts)
      : protocol === "connect"
        ? createConnectTransport(opts)
        : createGrpcWebTransport(opts);
  return createClient(StoreService, transport);
}

/** Says loudly that a test cannot run against an external server. */
export function skipExternal(what: string): void {
  console.warn(
    `\n*** SKIPPED: ${what}: SESSIOND_URL points at an external server, and this test must start its own (restart / kill / special flags). Run without SESSIOND_URL to cover it. ***\n`,
  );
}

/** True when the suite runs against an external server (SESSIOND_URL). */
export const EXTERNAL = Boolean(process.env.SESSIOND_URL);

/** The whole log of a session, paged through GetEntries. */
export async function readAll(
  c: SessiondClient,
  workspace: string,
  session: string,
  pageSize = 500,
): Promise<Entry[]> {
  const all: Entry[] = [];
  let after = 0n;
  for (;;) {
    const page = await c.session.getEntries({
      workspace,
      session,
      afterSeq: after,
      limit: pageSize,
    });
    all.push(...page.entries);
    if (page.entries.length === 0 || after + BigInt(page.entries.length) >= page.headSeq)
      return all;
    after = page.entries[page.entries.length - 1]?.seq ?? after;
  }
}

/** Checks that `seqs` is exactly 1..n in order; returns a description of the first problem. */
export function denseProblem(
  seqs: readonly bigint[] | readonly number[],
  n: number,
): string | undefined {
  if (seqs.length !== n) {
    const seen = new Set<string>();
    const dup = seqs.find((s) => {
      const k = String(s);
      if (seen.has(k)) return true;
      seen.add(k);
      return false;
    });
    return `expected ${n} seqs, got ${seqs.length}${dup !== undefined ? ` (duplicate ${dup})` : ""}`;
  }
  for (let i = 0; i < n; i++) {
    if (Number(seqs[i]) !== i + 1) return `position ${i}: expected seq ${i + 1}, got ${seqs[i]}`;
  }
  return undefined;
}

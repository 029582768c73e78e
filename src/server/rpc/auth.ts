import { createHash, timingSafeEqual } from "node:crypto";
import { createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { notFound, SessiondError } from "../../core/errors.js";
import { checkWorkspace, quote } from "../../core/ids.js";
import type { TokenGrant } from "../config.js";

/**
 * Bearer-token authentication. Tokens are compared in constant time (over
 * SHA-256 digests, so lengths do not leak either); a request that passes
 * carries its grant in the handler context, and handlers ask `authorize` for
 * each workspace they touch.
 */

/** What the caller may do: every workspace, or a set of them. */
export type Grant =
  | { readonly all: true }
  | { readonly all: false; readonly workspaces: ReadonlySet<string> };

const ALL: Grant = { all: true };

/** The grant of the current request (all workspaces when auth is off). */
export const grantKey = createContextKey<Grant>(ALL, { description: "sessiond grant" });

/** Services that answer without a token (load balancers and generic tools need them). */
const OPEN_SERVICES = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/**
 * Methods that answer without a token: ReadShare, whose share token is its
 * secret (src/store/shares.ts reads that share's path and nothing else).
 */
const OPEN_METHODS = new Set(["sessiond.v1.StoreService/ReadShare"]);

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Parses a tokens file: `{"tokens": [{"token": "...", "workspaces": ["a", "*"]}]}`. */
export function parseTokensFile(text: string): TokenGrant[] {
  const doc = JSON.parse(text) as unknown;
  const list = (doc as { tokens?: unknown })?.tokens;
  if (!Array.isArray(list)) throw new Error('tokens file: expected {"tokens": [...]}');
  return list.map((t: unknown, i: number) => {
    const { token, workspaces } = (t ?? {}) as { token?: unknown; workspaces?: unknown };
    if (typeof token !== "string" || token.length < 16) {
      throw new Error(`tokens file: entry ${i}: token must be a string of at least 16 characters`);
    }
    if (!Array.isArray(workspaces) || workspaces.some((w) => typeof w !== "string")) {
      throw new Error(`tokens file: entry ${i}: workspaces must be a list of names or "*"`);
    }
    for (const w of workspaces as string[]) if (w !== "*") checkWorkspace(w);
    return { token, workspaces: workspaces as string[] };
  });
}

/**
 * The configured tokens, as digests: which grant a request's
 * `authorization` header carries.
 */
export class Tokens {
  private readonly table: readonly { digest: Buffer; grant: Grant }[];

  constructor(grants: readonly TokenGrant[]) {
    this.table = grants.map((g) => ({
      digest: digest(g.token),
      grant: g.workspaces.includes("*")
        ? ALL
        : ({ all: false, workspaces: new Set(g.workspaces) } as Grant),
    }));
  }

  /** No tokens configured: every request may use every workspace. */
  get open(): boolean {
    return this.table.length === 0;
  }

  /** The grant of an `authorization` header; UNAUTHENTICATED without a valid bearer token. */
  grantOf(header: string | null | undefined): Grant {
    if (this.open) return ALL;
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
    if (match === null) throw new SessiondError("UNAUTHENTICATED", "missing bearer token");
    const presented = digest(match[1] as string);
    let found: Grant | undefined;
    for (const row of this.table) {
      // Compare against every row so timing does not reveal which one matched.
      if (timingSafeEqual(row.digest, presented) && found === undefined) found = row.grant;
    }
    if (found === undefined) throw new SessiondError("UNAUTHENTICATED", "invalid bearer token");
    return found;
  }
}

/** An interceptor that rejects requests without a valid token (UNAUTHENTICATED). */
export function authInterceptor(grants: readonly TokenGrant[]): Interceptor {
  const tokens = new Tokens(grants);
  return (next) => async (req) => {
    if (tokens.open || OPEN_SERVICES.has(req.service.typeName)) return next(req);
    if (OPEN_METHODS.has(`${req.service.typeName}/${req.method.name}`)) return next(req);
    req.contextValues.set(grantKey, tokens.grantOf(req.header.get("authorization")));
    return next(req);
  };
}

function allowed(grant: Grant, workspace: string): boolean {
  return grant.all || grant.workspaces.has(workspace);
}

/**
 * Checks a workspace for a session-addressed call. Another tenant's session
 * is NOT_FOUND (never PERMISSION_DENIED: do not confirm that it exists).
 */
export function authorizeSession(ctx: HandlerContext, workspace: string, session: string): string {
  return authorizeSessionFor(ctx.values.get(grantKey), workspace, session);
}

/** authorizeSession for a grant already known (a call served without a handler context). */
export function authorizeSessionFor(grant: Grant, workspace: string, session: string): string {
  const ws = checkWorkspace(workspace);
  if (!allowed(grant, ws)) {
    throw notFound(`session ${quote(session)} not found in workspace ${quote(ws)}`);
  }
  return ws;
}

/** Checks a workspace for workspace-level calls (create, list, watch): PERMISSION_DENIED. */
export function authorizeWorkspace(ctx: HandlerContext, workspace: string): string {
  const ws = checkWorkspace(workspace);
  if (!allowed(ctx.values.get(grantKey), ws)) {
    throw new SessiondError("PERMISSION_DENIED", `this token may not use workspace ${quote(ws)}`);
  }
  return ws;
}

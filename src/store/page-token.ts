import { invalidArgument } from "../core/errors.js";

/**
 * Page tokens are opaque to clients: base64url of a JSON array of the
 * fields that say where the next page starts and which listing or snapshot
 * it continues. Each reader decodes the array and checks its shape, so a
 * forged or mangled token is INVALID_ARGUMENT, never a wrong page.
 */
export type TokenField = string | number;

/** The error of a token this server did not issue (or that was mangled). */
export const badPageToken = () =>
  invalidArgument("invalid page_token: pass next_page_token unchanged");

export function encodeToken(fields: readonly TokenField[]): string {
  return Buffer.from(JSON.stringify(fields)).toString("base64url");
}

/** The fields of a token; the caller checks their number and types. */
export function decodeToken(token: string): unknown[] {
  if (token.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(token)) throw badPageToken();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    // Not JSON: parsed stays undefined and is refused below.
  }
  if (!Array.isArray(parsed)) throw badPageToken();
  return parsed;
}

/**
 * Keyset page tokens for ListSessions: the sort key of the last session of
 * the page, plus the listing it belongs to, so that a token is never applied
 * to a different listing.
 */
export interface PageKey {
  /** The sort time (ms) of the last session on the page: created_at, or updated_at with sortBy "updated". */
  readonly createdMs: number;
  /** Its id (tie-breaker). */
  readonly id: string;
  /** "desc" or "asc". */
  readonly order: "desc" | "asc";
  /** The parent filter of the listing ("" = top level). */
  readonly parent: string;
  /** What the listing orders by ("created" when absent). */
  readonly sortBy?: "created" | "updated" | undefined;
  /** The listing's filter (session-filter.ts `key`; "" when absent). */
  readonly filter?: string | undefined;
}

/** Tokens of unfiltered listings by creation keep the first form: tokens issued before filters existed stay valid. */
export function encodePageToken(key: PageKey): string {
  const sortBy = key.sortBy ?? "created";
  const filter = key.filter ?? "";
  if (sortBy === "created" && filter === "") {
    return encodeToken([key.createdMs, key.id, key.order, key.parent]);
  }
  return encodeToken([key.createdMs, key.id, key.order, key.parent, sortBy, filter]);
}

export function decodePageToken(token: string): PageKey {
  const parsed = decodeToken(token);
  if (
    (parsed.length !== 4 && parsed.length !== 6) ||
    typeof parsed[0] !== "number" ||
    typeof parsed[1] !== "string" ||
    (parsed[2] !== "desc" && parsed[2] !== "asc") ||
    typeof parsed[3] !== "string" ||
    (parsed.length === 6 &&
      ((parsed[4] !== "created" && parsed[4] !== "updated") || typeof parsed[5] !== "string"))
  ) {
    throw badPageToken();
  }
  return {
    createdMs: parsed[0],
    id: parsed[1],
    order: parsed[2],
    parent: parsed[3],
    sortBy: parsed.length === 6 ? (parsed[4] as "created" | "updated") : "created",
    filter: parsed.length === 6 ? (parsed[5] as string) : "",
  };
}

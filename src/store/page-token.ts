import { invalidArgument } from "../core/errors.js";

/**
 * Keyset page tokens for ListSessions: the sort key of the last session of
 * the page, plus the listing it belongs to, so that a token is never applied
 * to a different listing. Opaque to clients (base64url JSON).
 */
export interface PageKey {
  /** createdAt (ms) of the last session on the page. */
  readonly createdMs: number;
  /** Its id (tie-breaker). */
  readonly id: string;
  /** "desc" or "asc". */
  readonly order: "desc" | "asc";
  /** The parent filter of the listing ("" = top level). */
  readonly parent: string;
}

export function encodePageToken(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.createdMs, key.id, key.order, key.parent])).toString(
    "base64url",
  );
}

export function decodePageToken(token: string): PageKey {
  const bad = () => invalidArgument("invalid page_token: pass next_page_token unchanged");
  if (token.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(token)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 4 ||
    typeof parsed[0] !== "number" ||
    typeof parsed[1] !== "string" ||
    (parsed[2] !== "desc" && parsed[2] !== "asc") ||
    typeof parsed[3] !== "string"
  ) {
    throw bad();
  }
  return { createdMs: parsed[0], id: parsed[1], order: parsed[2], parent: parsed[3] };
}

import { createHash } from "node:crypto";
import { invalidArgument } from "../../core/errors.js";
import { SESSION_ID_PATTERN } from "../../core/ids.js";
import { badPageToken, decodeToken, encodeToken } from "../page-token.js";

/**
 * Page tokens of SearchEntries: where the next page starts (the sort key
 * of the session of the last hit, and that hit's seq: a keyset, so the
 * pages stay right while sessions are created, appended to and deleted)
 * and a digest of the search it continues, so that a token is never
 * applied to another query, filter, order or parent.
 */
export interface SearchPosition {
  /** createdAt (ms) of the session of the last hit. */
  readonly createdMs: number;
  /** Its id (tie-breaker of equal creation times). */
  readonly id: string;
  /** The last hit's seq: the next page resumes in that session after it. */
  readonly seq: number;
}

const KIND = "search";

/**
 * A short digest of everything that defines a search besides its position:
 * 64 bits, enough to tell two searches of one client apart, and keeps the
 * token short whatever the query and filter.
 */
export function searchDigest(definition: unknown): string {
  const sortedKeys = (_key: string, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? // Stryker disable next-line EqualityOperator: the keys of an object are distinct, and any fixed order of them is canonical
        Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value;
  const text = JSON.stringify(definition, sortedKeys);
  // Stryker disable next-line MethodExpression: the cut only keeps tokens short; a whole digest tells searches apart as well
  return createHash("sha256").update(text).digest("base64url").slice(0, 11);
}

export function encodeSearchToken(digest: string, at: SearchPosition): string {
  return encodeToken([KIND, digest, at.createdMs, at.id, at.seq]);
}

/**
 * The position of a token issued for the search of `digest`.
 * INVALID_ARGUMENT for a mangled or forged token and for one of another search.
 */
export function decodeSearchToken(token: string, digest: string): SearchPosition {
  const f = decodeToken(token);
  const [kind, of, createdMs, id, seq] = f;
  if (
    f.length !== 5 ||
    kind !== KIND ||
    typeof of !== "string" ||
    !Number.isSafeInteger(createdMs) ||
    typeof id !== "string" ||
    !SESSION_ID_PATTERN.test(id) ||
    !Number.isSafeInteger(seq) ||
    (seq as number) < 0
  ) {
    throw badPageToken();
  }
  if (of !== digest) {
    throw invalidArgument(
      "invalid page_token: it belongs to a different search (query, filter, order or parent)",
    );
  }
  return { createdMs: createdMs as number, id, seq: seq as number };
}

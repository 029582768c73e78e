import { invalidArgument } from "./errors.js";

/**
 * Identifier rules. Every id is checked against an allowlist pattern before
 * it gets near a file name or a query, so traversal ("../x"), NUL bytes and
 * absolute paths are rejected at the edge with INVALID_ARGUMENT.
 */
export const ENTRY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
export const WORKSPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const DEFAULT_WORKSPACE = "default";
/** A session may be addressed by a unique prefix of at least this many characters. */
export const MIN_PREFIX_LENGTH = 4;

/** Shortens untrusted input for error messages (a 10 KB id must not come back whole). */
export function quote(value: string, max = 80): string {
  const shown = value.length > max ? `${value.slice(0, max)}…(${value.length} chars)` : value;
  return JSON.stringify(shown);
}

export function checkEntryId(id: string, what = "entry id"): string {
  if (!ENTRY_ID_PATTERN.test(id)) {
    throw invalidArgument(`invalid ${what} ${quote(id)}: must match [A-Za-z0-9_-]{1,64}`);
  }
  return id;
}

export function checkSessionId(id: string, what = "session id"): string {
  if (!SESSION_ID_PATTERN.test(id)) {
    throw invalidArgument(
      `invalid ${what} ${quote(id)}: must match [A-Za-z0-9][A-Za-z0-9_-]{0,127}`,
    );
  }
  return id;
}

/** Empty means the default workspace. */
export function checkWorkspace(workspace: string | undefined): string {
  if (workspace !== undefined && typeof workspace !== "string") {
    throw invalidArgument(
      `workspace must be a string, got ${workspace === null ? "null" : typeof workspace}`,
    );
  }
  const ws = workspace === undefined || workspace === "" ? DEFAULT_WORKSPACE : workspace;
  if (!WORKSPACE_PATTERN.test(ws)) {
    throw invalidArgument(
      `invalid workspace ${quote(ws)}: must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}`,
    );
  }
  return ws;
}

/**
 * A session reference: a full id, a prefix of one, or a prefix of a short
 * id (see `shortId`); all obey the session id pattern. Empty is refused as
 * missing rather than as malformed: a client that forgot the field should
 * learn that.
 */
export function checkSessionRef(ref: string): string {
  // The library's JavaScript callers are not held to the types: undefined
  // or a number would pass the pattern as text and fail later as a TypeError.
  if (typeof ref !== "string") {
    throw invalidArgument(`session must be a string (a full id or a prefix), got ${typeof ref}`);
  }
  if (ref === "") {
    throw invalidArgument(
      "session is required: give its full id, its short id or a unique prefix of either",
    );
  }
  return checkSessionId(ref, "session");
}

/** A reference that is not a full id must be long enough to mean something. */
export function checkSessionPrefix(ref: string): string {
  if (ref.length < MIN_PREFIX_LENGTH) {
    throw invalidArgument(
      `session ${quote(ref)} is too short: give the full id or a prefix of at least ${MIN_PREFIX_LENGTH} characters`,
    );
  }
  return ref;
}

/** A session id as `newSessionId` makes them: YYYYMMDD-HHMMSS-<8 hex>. */
export const GENERATED_SESSION_ID_PATTERN = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$/;

/** Length of the random part of a generated id. */
const RANDOM_PART_LENGTH = 8;

/**
 * The short form of a session id, for people: the random part of a
 * generated id (the 8 hex after the last dash), as git shows short hashes,
 * because sessions of one day share their first 16 characters; any other
 * (client-chosen) id is its own short form.
 */
export function shortId(id: string): string {
  return GENERATED_SESSION_ID_PATTERN.test(id) ? id.slice(-RANDOM_PART_LENGTH) : id;
}

/**
 * Whether a reference (already checked, at least MIN_PREFIX_LENGTH long)
 * addresses a session id: it prefixes the id or the id's short form. What
 * "several sessions match" means; the PostgreSQL engine says the same in
 * SQL (storage/postgres/listing.ts).
 */
export function matchesSessionRef(id: string, ref: string): boolean {
  return id.startsWith(ref) || shortId(id).startsWith(ref);
}

/** Time-sortable session id: YYYYMMDD-HHMMSS-<8 hex>, UTC. */
export function newSessionId(now: Date = new Date()): string {
  const iso = now.toISOString(); // 2026-11-29T20:25:48.123Z
  const date = iso.slice(0, 10).replaceAll("-", "");
  const time = iso.slice(11, 19).replaceAll(":", "");
  return `${date}-${time}-${randomHex(4)}`;
}

/**
 * Random bytes drawn in blocks: one call per id was ~5% of an append's CPU
 * (each call crosses into OpenSSL); a 4 KiB pool serves 512 ids. Web
 * Crypto's getRandomValues (global in Node 20 and every browser) rather than
 * node:crypto, so the client half of the package (ids before send) also runs
 * in a browser (sessiond/web).
 */
const pool = { bytes: new Uint8Array(0), offset: 0 };

/** "00" … "ff", so that hex is one table lookup per byte. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

function randomHex(n: number): string {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: refilling the pool early only discards unused random bytes; every id is still n fresh random bytes as hex
  if (pool.offset + n > pool.bytes.length) {
    pool.bytes = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    pool.offset = 0;
  }
  let hex = "";
  for (let i = pool.offset; i < pool.offset + n; i++) hex += HEX[pool.bytes[i] as number];
  pool.offset += n;
  return hex;
}

/** Random entry id (16 hex chars): used when a caller leaves the id empty. */
export function newEntryId(): string {
  return randomHex(8);
}

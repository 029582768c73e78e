import { invalidArgument } from "../core/errors.js";

/**
 * Size limits of the store. Every one is configurable (the server exposes
 * them as flags); the defaults are safe for a shared service.
 */
export interface StoreLimits {
  /** Entries in one Append. */
  maxEntriesPerAppend: number;
  /** Size of one entry as stored (its canonical JSON, UTF-8 bytes). */
  maxEntryBytes: number;
  /** Page size used when a request gives 0. */
  defaultPageSize: number;
  /** Largest page a request may ask for. */
  maxPageSize: number;
  /** A text, thinking or image part over this many bytes is stored as a blob (0: never). */
  blobThresholdBytes: number;
  /** Largest blob, uploaded or taken out of an append. */
  maxBlobBytes: number;
  /** Blob collection leaves blobs and uploads used within this long (ms). */
  blobGraceMs: number;
}

export const DEFAULT_LIMITS: StoreLimits = {
  maxEntriesPerAppend: 1000,
  maxEntryBytes: 4 * 1024 * 1024,
  defaultPageSize: 100,
  maxPageSize: 1000,
  blobThresholdBytes: 64 * 1024,
  maxBlobBytes: 256 * 1024 * 1024,
  blobGraceMs: 60 * 60 * 1000,
};

/**
 * The page size a listing asks for (ListSessions, ListWorkspaces,
 * SearchEntries): 0 or unset is the default, more than the max is refused
 * with INVALID_ARGUMENT naming the range rather than cut silently.
 */
export function listPageSize(requested: number | undefined, limits: StoreLimits): number {
  const size = requested ?? 0;
  if (!Number.isSafeInteger(size) || size < 0 || size > limits.maxPageSize) {
    throw invalidArgument(
      `page_size ${size} is out of range 0..${limits.maxPageSize} (0: the default, ${limits.defaultPageSize})`,
    );
  }
  return size === 0 ? limits.defaultPageSize : size;
}

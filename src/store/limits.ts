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
}

export const DEFAULT_LIMITS: StoreLimits = {
  maxEntriesPerAppend: 1000,
  maxEntryBytes: 4 * 1024 * 1024,
  defaultPageSize: 100,
  maxPageSize: 1000,
};

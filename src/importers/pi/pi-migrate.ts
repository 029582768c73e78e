import type { JsonRecord } from "../jsonl-records.js";

/**
 * Brings the records of an older pi session file to version 3, as pi's
 * own loader does (session-manager.ts, migrateToCurrentVersion): version 1
 * is a linear list without ids, so each entry gets an id and the previous
 * entry as parent, and a compaction's firstKeptEntryIndex becomes
 * firstKeptEntryId; version 2 calls the custom message role "hookMessage".
 * pi draws version 1 ids at random; here an id is its line ("v1-L12"), so
 * that importing the same file twice gives the same log. Mutates the
 * records; returns the version the file had.
 */
export function migratePiRecords(records: JsonRecord[]): number {
  const header = records.find((r) => r.value.type === "session")?.value;
  const version = typeof header?.version === "number" ? header.version : 1;
  if (version < 2) {
    let previous: string | null = null;
    for (const r of records) {
      const e = r.value;
      if (e.type === "session") continue;
      e.id = `v1-L${r.line}`;
      e.parentId = previous;
      previous = e.id;
    }
    for (const r of records) {
      const e = r.value;
      if (e.type !== "compaction" || typeof e.firstKeptEntryIndex !== "number") continue;
      const kept = records[e.firstKeptEntryIndex]?.value;
      if (kept !== undefined && kept.type !== "session") e.firstKeptEntryId = kept.id ?? null;
      delete e.firstKeptEntryIndex;
    }
  }
  if (version < 3) {
    for (const r of records) {
      const m = r.value.message;
      if (r.value.type === "message" && typeof m === "object" && m !== null && !Array.isArray(m)) {
        if (m.role === "hookMessage") m.role = "custom";
      }
    }
  }
  return version;
}

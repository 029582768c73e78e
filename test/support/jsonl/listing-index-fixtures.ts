import type { SessionRecord } from "../../../src/storage/engine.js";
import type { LoadedFile, SavedFile } from "../../../src/storage/jsonl/listing-index-entries.js";

/** Entries of a listing index for the format and file tests: every kind of field. */
export const SAVED_FILES: SavedFile[] = [
  {
    sub: false,
    id: "a",
    key: { ino: 12, birth: 1700000000000.25, size: 300, mtime: 1700000000100.5 },
    rootId: "r1",
    createdAtMs: 1700000000000,
    parent: "",
    payload: '{"id":"r1","seq":"1","sessionInfo":{"sessionId":"a","title":"ünïcode ✓"}}',
    record: {
      size: 420,
      mtime: 1700000000200.75,
      title: "a title",
      tags: { user: "u1", "team.name": "" },
      headSeq: 4,
      leafId: "m4",
      messageCount: 3,
      updatedAtMs: 1700000000300,
      health: "ok",
      healthDetail: "",
      rootless: false,
    },
  },
  {
    sub: true,
    id: "b",
    key: { ino: 13, birth: 0, size: 10, mtime: 5 },
    rootId: "r2",
    createdAtMs: 0,
    parent: "a",
    payload: '{"id":"r2"}',
    record: {
      size: 11,
      mtime: 6,
      title: undefined,
      tags: {},
      headSeq: 1,
      leafId: "r2",
      messageCount: 0,
      updatedAtMs: 0,
      health: "corrupt",
      healthDetail: "line 2: bad",
      rootless: true,
    },
  },
  {
    sub: false,
    id: "c",
    key: { ino: 14, birth: 1, size: 2, mtime: 3 },
    rootId: "r3",
    createdAtMs: 7,
    parent: "",
    payload: "{}",
    record: undefined,
  },
];

/** Files as plain data, saved or loaded (the roots' JSON as text). */
export const plain = (fs: readonly (SavedFile | LoadedFile)[] | undefined) =>
  fs?.map((f) => {
    const r = f.record;
    return {
      sub: f.sub,
      id: f.id,
      key: "key" in f ? f.key : { ino: f.ino, birth: f.birth, size: f.size, mtime: f.mtime },
      rootId: f.rootId,
      createdAtMs: f.createdAtMs,
      parent: f.parent,
      payload:
        "payload" in f && typeof f.payload === "string" ? f.payload : (f as LoadedFile).text(),
      record: r && { size: r.size, mtime: r.mtime, ...listingFields(r), rootless: r.rootless },
    };
  });

/** A listing record's own fields as plain data (a loaded record reads them through getters). */
export const listingFields = (r: Omit<SessionRecord, "workspace" | "sessionId" | "root">) => ({
  title: r.title,
  tags: r.tags,
  headSeq: r.headSeq,
  leafId: r.leafId,
  messageCount: r.messageCount,
  updatedAtMs: r.updatedAtMs,
  health: r.health,
  healthDetail: r.healthDetail,
});

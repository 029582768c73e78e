import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { Health } from "../../gen/sessiond/v1/session_pb.js";
import type { SessionRecord } from "../storage/engine.js";
import { corruptRecord } from "../storage/jsonl/listing.js";
import { metaOf } from "./meta.js";

const CREATED_MS = Date.UTC(2026, 2, 4, 5, 6, 7);

/** A healthy record whose root was created at CREATED_MS and whose newest entry is at `updatedAtMs`. */
function record(updatedAtMs: number): SessionRecord {
  const root = create(EntrySchema, {
    id: "root",
    seq: 1n,
    kind: {
      case: "sessionInfo",
      value: { sessionId: "s1", createdAt: timestampFromMs(CREATED_MS) },
    },
  });
  return {
    workspace: "default",
    sessionId: "s1",
    root,
    title: undefined,
    tags: {},
    headSeq: 2,
    leafId: "m1",
    messageCount: 1,
    updatedAtMs,
    health: "ok",
    healthDetail: "",
  };
}

const updatedMs = (r: SessionRecord) => {
  const at = metaOf(r).updatedAt;
  return at === undefined ? undefined : timestampMs(at);
};

describe("metaOf: updated_at", () => {
  it("is the newest entry's time when that is after the creation", () => {
    expect(updatedMs(record(CREATED_MS + 5000))).toBe(CREATED_MS + 5000);
  });

  it("is the creation time when every entry is older (a fork's copies, an import)", () => {
    expect(updatedMs(record(CREATED_MS - 5000))).toBe(CREATED_MS);
  });

  it("is the creation time when no entry has a time", () => {
    expect(updatedMs(record(0))).toBe(CREATED_MS);
  });

  it("is unset for a corrupt session whose root is unreadable and that has no entry time", () => {
    const meta = metaOf(corruptRecord({ workspace: "w", sessionId: "s" }, undefined, "line 1"));
    expect(meta.updatedAt).toBeUndefined();
    expect(meta.createdAt).toBeUndefined();
    expect(meta.health).toBe(Health.CORRUPT);
  });

  it("is the newest entry's time for a session whose root is unreadable", () => {
    const r = { ...record(CREATED_MS + 7000), root: undefined, health: "corrupt" as const };
    expect(updatedMs(r)).toBe(CREATED_MS + 7000);
  });
});

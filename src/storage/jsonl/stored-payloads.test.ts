import { equals } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * Once durable, the log keeps an appended entry as its payload (the JSON
 * its record carries), not as the planned entry's objects: the entry read
 * back is decoded from that payload, equal to what was planned and to what
 * a fresh engine reads from the file.
 */
describe("entries kept as their payloads", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("the log reads back an equal entry, not the planned object; a new engine reads the same", async () => {
    const engine = new JsonlEngine({ dataDir });
    const k = keyOf("kept");
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      const result = await engine.append(
        k,
        appendOf([user("m1", "hello"), user("m2", "again", { parentId: "m1" })]),
      );
      const log = await engine.load(k);
      expect(log.kindOf("m2")).toBe("message");
      expect(log.kindOf("nope")).toBeNull();
      for (const planned of result.entries) {
        const kept = log.get(planned.id);
        expect(kept).not.toBe(planned);
        expect(equals(EntrySchema, kept as never, planned)).toBe(true);
      }
      const fresh = new JsonlEngine({ dataDir });
      try {
        const reread = await fresh.load(k);
        for (const planned of result.entries) {
          expect(
            equals(EntrySchema, reread.get(planned.id) as never, log.get(planned.id) as never),
          ).toBe(true);
        }
      } finally {
        await fresh.close();
      }
      // The next append finds its parent without decoding it, and plans as before.
      const next = await engine.append(k, appendOf([user("m3", "third")]));
      expect(next.entries[0]?.parentId).toBe("m2");
    } finally {
      await engine.close();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, user } from "../../../test/support/fixtures.js";
import { keyOf, removeDir, seedSession, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * A session this engine holds open, deleted by another process: the next
 * append is refused as NOT_FOUND and the engine forgets the session, so a
 * session created again under the id is appended to from its new file.
 */
describe("an open session whose file another process deleted", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  it("refuses the next append as NOT_FOUND, forgets the session, and appends to a new one of the id", async () => {
    const k = keyOf("gone1");
    const a = new JsonlEngine({ dataDir: dir, leaseIdleMs: 0 });
    const b = new JsonlEngine({ dataDir: dir, leaseIdleMs: 0 });
    try {
      await seedSession(a, k, 3);
      expect(a.isOpen(k)).toBe(true);
      expect(await b.delete(k)).toBe(true);
      const refused = await a.append(k, appendOf([user("m4", "after the delete")])).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isSessiondError(refused, "NOT_FOUND")).toBe(true);
      expect(a.isOpen(k)).toBe(false);
      await seedSession(b, k, 2);
      const r = await a.append(k, appendOf([user("m3", "to the new file")]));
      expect(r.headSeq).toBe(3);
      expect((await b.load(k)).headSeq).toBe(3);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

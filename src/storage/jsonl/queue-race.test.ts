import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * Found by T2 (test/reliability/t2-power-loss.ts): an append queued in the
 * few microtasks between the end of a session's drain loop (queue seen
 * empty) and the settling of its promise found `draining` still set, so no
 * new drain started and the append never settled (a request hanging
 * forever). The drain that ends now checks the queue again.
 */
describe("write queue", () => {
  let dataDir: string;
  const k = keyOf("queued");
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("an append queued while the previous drain is finishing is not left waiting forever", async () => {
    const engine = new JsonlEngine({ dataDir, leaseIdleMs: 0, debug: { noFsync: true } });
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      // Queue the second append after every possible number of microtask hops.
      for (let hops = 0; hops < 40; hops++) {
        const first = engine.append(k, appendOf([user(`a${hops}`)]));
        for (let i = 0; i < hops; i++) await Promise.resolve();
        const second = engine.append(k, appendOf([user(`b${hops}`)]));
        const outcome = await Promise.race([
          Promise.all([first, second]).then(() => "settled"),
          sleep(2_000).then(() => `hung after ${hops} hops`),
        ]);
        expect(outcome).toBe("settled");
      }
    } finally {
      await engine.close();
    }
  }, 30_000);
});

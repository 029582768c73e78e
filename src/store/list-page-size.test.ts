import { describe, expect, it } from "vitest";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";

describe("SessionStore.list page_size", () => {
  it("a page_size over the maximum is refused naming the accepted range and what 0 means", async () => {
    const store = new SessionStore(new MemoryEngine(), {
      limits: { defaultPageSize: 20, maxPageSize: 50 },
    });
    await expect(store.list({ pageSize: 5000 })).rejects.toThrow(
      "page_size 5000 is out of range 0..50 (0: the default, 20)",
    );
  });
});

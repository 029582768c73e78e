/**
 * Storage conformance, change notifications: `subscribe` announces
 * created, appended and deleted once the data is readable, in head order;
 * an unsubscribed listener hears nothing more, and a throwing listener
 * neither fails the change nor starves the other listeners.
 */
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { StorageEvent } from "../../../src/storage/engine.js";
import { appendOf, assistant, settle, user } from "../../support/fixtures.js";
import { type ConformanceSuite, key, WS } from "./harness.js";

/** The "notifications" tests. */
export function describeEvents(suite: ConformanceSuite): void {
  describe("notifications", () => {
    it("announces created, appended and deleted after the data is readable", async () => {
      const k = key("watched");
      const events: StorageEvent[] = [];
      const checks: Promise<{ event: StorageEvent; headSeq: number; count: number }>[] = [];
      const current = suite.engine;
      current.subscribe((event) => {
        events.push(event);
        if (event.type !== "deleted" && event.sessionId === k.sessionId) {
          checks.push(
            current
              .read(k, 0, 1_000_000)
              .then((p) => ({ event, headSeq: p.headSeq, count: p.entries.length })),
          );
        }
      });
      await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1"), assistant("a1")]));
      await suite.engine.append(k, appendOf([user("u2")]));
      await vi.waitFor(() => {
        expect(events.filter((e) => e.type === "appended").map((e) => e.headSeq)).toContain(4);
      });
      const mine = events.filter((e) => e.sessionId === k.sessionId);
      expect(mine[0]).toEqual({
        type: "created",
        workspace: WS,
        sessionId: k.sessionId,
        headSeq: 1,
      });
      const appended = mine.filter((e) => e.type === "appended");
      for (const e of appended) {
        expect(e).toMatchObject({ workspace: WS, sessionId: k.sessionId });
        expect(e.headSeq).toBeGreaterThanOrEqual(3);
        expect(e.headSeq).toBeLessThanOrEqual(4);
      }
      const heads = appended.map((e) => e.headSeq);
      expect(heads).toEqual([...heads].sort((x, y) => x - y));
      for (const c of await Promise.all(checks)) {
        expect(c.headSeq, `read() on a ${c.event.type} event`).toBeGreaterThanOrEqual(
          c.event.headSeq,
        );
        expect(c.count).toBeGreaterThanOrEqual(c.event.headSeq);
      }
      expect(checks.length).toBeGreaterThanOrEqual(2);
      await suite.engine.delete(k);
      await vi.waitFor(() => {
        expect(events.at(-1)).toEqual({
          type: "deleted",
          workspace: WS,
          sessionId: k.sessionId,
          headSeq: 0,
        });
      });
    });

    it("stops announcing to an unsubscribed listener", async () => {
      const k = key("unsubscribed");
      const gone: StorageEvent[] = [];
      const kept: StorageEvent[] = [];
      const unsubscribe = suite.engine.subscribe((e) => gone.push(e));
      suite.engine.subscribe((e) => kept.push(e));
      await suite.createSession(k.sessionId);
      await vi.waitFor(() => expect(gone.map((e) => e.type)).toContain("created"));
      unsubscribe();
      const before = gone.length;
      await suite.engine.append(k, appendOf([user("u1")]));
      await suite.engine.delete(k);
      await vi.waitFor(() => expect(kept.map((e) => e.type)).toContain("deleted"));
      await settle();
      expect(gone.length).toBe(before);
    });

    it("does not let a throwing listener fail a change or starve other listeners", async () => {
      const k = key("noisy");
      const seen: StorageEvent[] = [];
      // The engine reports the bug as a process warning; capture it instead of printing it.
      const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
      onTestFinished(() => warn.mockRestore());
      suite.engine.subscribe(() => {
        throw new Error("listener bug");
      });
      suite.engine.subscribe((e) => seen.push(e));
      await suite.createSession(k.sessionId);
      const r = await suite.engine.append(k, appendOf([user("u1")]));
      expect(r.headSeq).toBe(2);
      expect(await suite.engine.delete(k)).toBe(true);
      await vi.waitFor(() =>
        expect(seen.map((e) => e.type)).toEqual(["created", "appended", "deleted"]),
      );
      expect(warn).toHaveBeenCalledWith(expect.stringContaining("storage listener failed"));
    });
  });
}

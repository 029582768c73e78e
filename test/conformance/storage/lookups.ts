/**
 * Storage capabilities, lookups: the optional `exists` (true for a
 * session, false for a missing or deleted one) and `idsByRef` (the first
 * ids in bytewise order that matchesSessionRef picks from listIds).
 */
import { expect, it } from "vitest";
import { matchesSessionRef } from "../../../src/core/ids.js";
import { rootEntry } from "../../support/fixtures.js";
import { type ConformanceSuite, key, WS } from "./harness.js";

/** The `exists` and `idsByRef` capability tests. */
export function lookupTests(suite: ConformanceSuite): void {
  it("exists (when the engine has it): true for a session, false for a missing or deleted one", async () => {
    if (suite.engine.exists === undefined) return;
    await suite.engine.create(key("here"), [rootEntry("here")]);
    expect(await suite.engine.exists(key("here"))).toBe(true);
    expect(await suite.engine.exists(key("her"))).toBe(false);
    expect(await suite.engine.exists({ workspace: "other-ws", sessionId: "here" })).toBe(false);
    expect(await suite.engine.delete(key("here"))).toBe(true);
    expect(await suite.engine.exists(key("here"))).toBe(false);
  });

  it("idsByRef (when the engine has it): the first ids in bytewise order that matchesSessionRef picks from listIds", async () => {
    if (suite.engine.idsByRef === undefined) return;
    // Prefixes shared across ids and random parts, with characters whose
    // bytewise order differs from a locale's: case, '-', '_', digits.
    const ids = [
      "20260304-050607-0a1b2c3d",
      "20260304-050607-0a1bffff",
      "20260305-000000-2026abcd",
      "20260306-111111-abcdef01",
      "20260306-111111-ABCDEF01",
      "0a1b-client",
      "0a1b_client",
      "0a1bZ",
      "0a1B",
      "team-0a1b2c3d",
      "abcd",
      "abcd-e",
    ];
    for (const id of ids) await suite.engine.create(key(id), [rootEntry(id)]);
    await suite.engine.create(key("0a1b9999", "other-ws"), [rootEntry("0a1b9999")]);
    const refs = ["0a1b", "0a1b2", "0a1bf", "2026", "20260306", "abcd", "abcdef01", "ABCD"];
    refs.push("0a1b_", "0a1b-", "0a1B", "team", "0506", "ffff", "20260304-050607-0a1b2c3d");
    const all = await suite.engine.listIds(WS);
    for (const ref of refs) {
      const wanted = all.filter((id) => matchesSessionRef(id, ref)).sort();
      for (const limit of [1, 2, 6]) {
        expect(await suite.engine.idsByRef(WS, ref, limit), `${ref} limit ${limit}`).toEqual(
          wanted.slice(0, limit),
        );
      }
    }
  });
}

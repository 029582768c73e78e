import { describe, expect, it } from "vitest";
import { expired, policyIsSet } from "./retention.js";

const DAY = 86_400_000;
const NOW = 100 * DAY;
const s = (id: string, daysAgo: number, corrupt = false) => ({
  id,
  updatedMs: NOW - daysAgo * DAY,
  corrupt,
});

describe("expired", () => {
  it("max age: sessions whose newest entry is older than it (not at it)", () => {
    const got = expired(
      [s("a", 1), s("b", 31), s("c", 30), s("d", 45)],
      { maxAgeMs: 30 * DAY },
      NOW,
    );
    expect(got).toEqual([
      { id: "b", reason: "max-age" },
      { id: "d", reason: "max-age" },
    ]);
  });

  it("ties in update time are ranked by id, descending, whatever the input order", () => {
    const ties = [s("m", 3), s("k", 3), s("z", 3), s("a", 3)];
    for (const input of [ties, [...ties].reverse(), [ties[2], ties[0], ties[3], ties[1]]]) {
      expect(expired(input as typeof ties, { keepNewest: 1 }, NOW).map((e) => e.id)).toEqual([
        "m",
        "k",
        "a",
      ]);
    }
  });

  it("keep newest: all but the N most recently updated, ties broken by id as the listing does", () => {
    const got = expired([s("a", 5), s("b", 1), s("c", 3), s("d", 3)], { keepNewest: 2 }, NOW);
    // Ranked: b (1 day), then d and c (3 days: id descending), then a.
    expect(got).toEqual([
      { id: "c", reason: "keep-newest" },
      { id: "a", reason: "keep-newest" },
    ]);
  });

  it("both rules: max age first, keep-newest for the rest; corrupt sessions are kept and not counted", () => {
    const got = expired(
      [s("a", 1), s("x", 0, true), s("b", 2), s("c", 50), s("d", 3)],
      { maxAgeMs: 30 * DAY, keepNewest: 2 },
      NOW,
    );
    expect(got).toEqual([
      { id: "d", reason: "keep-newest" },
      { id: "c", reason: "max-age" },
    ]);
  });

  it("no rule removes nothing; policyIsSet says whether there is one", () => {
    expect(expired([s("a", 500)], {}, NOW)).toEqual([]);
    expect(policyIsSet({})).toBe(false);
    expect(policyIsSet({ maxAgeMs: 1 })).toBe(true);
    expect(policyIsSet({ keepNewest: 0 })).toBe(true);
  });
});

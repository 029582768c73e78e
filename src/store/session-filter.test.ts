import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { SessionFilterSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { SessiondError } from "../core/errors.js";
import type { RootRecord, SessionRecord } from "../storage/engine.js";
import { type CheckedFilter, checkFilter, matches, rootMatches } from "./session-filter.js";

const T = Date.parse("2026-06-01T00:00:00Z");
type Init = Parameters<typeof create<typeof SessionFilterSchema>>[1];
const filterOf = (init: Init) => checkFilter(create(SessionFilterSchema, init)) as CheckedFilter;

function rootOf(agentType: string | undefined, createdMs = T, health: "ok" | "corrupt" = "ok") {
  const root = create(EntrySchema, {
    id: "r",
    seq: 1n,
    kind: { case: "sessionInfo", value: { agentType, createdAt: timestampFromMs(createdMs) } },
  });
  return {
    sessionId: "s",
    root: health === "ok" ? root : undefined,
    createdAtMs: createdMs,
    parentSessionId: "p",
    health,
    healthDetail: "",
  } satisfies RootRecord;
}

function recordOf(o: Partial<SessionRecord> = {}): SessionRecord {
  return {
    workspace: "w",
    sessionId: "s",
    root: rootOf(undefined).root,
    title: "Fix the Parser",
    tags: { user: "ana", repo: "x" },
    headSeq: 2,
    leafId: "l",
    messageCount: 1,
    updatedAtMs: T + 5000,
    health: "ok",
    healthDetail: "",
    ...o,
  };
}

function refusal(f: () => unknown): SessiondError {
  try {
    f();
  } catch (err) {
    if (err instanceof SessiondError) return err;
    throw err;
  }
  throw new Error("not refused");
}

describe("checkFilter", () => {
  it("no filter, or one that sets nothing, is no filter", () => {
    expect(checkFilter(undefined)).toBeUndefined();
    expect(checkFilter(create(SessionFilterSchema, {}))).toBeUndefined();
  });

  it.each([
    ["titleContains", { titleContains: "x" }],
    ["tags", { tags: { a: "b" } }],
    ["createdAfter", { createdAfter: timestampFromMs(T) }],
    ["createdBefore", { createdBefore: timestampFromMs(T) }],
    ["updatedAfter", { updatedAfter: timestampFromMs(T) }],
    ["updatedBefore", { updatedBefore: timestampFromMs(T) }],
    ["agentType", { agentType: "" }],
  ] as const)("any one condition (%s) makes a filter", (_, init) => {
    expect(checkFilter(create(SessionFilterSchema, init as Init))).toBeDefined();
  });

  it("title_contains up to 256 characters, lower-cased", () => {
    expect(filterOf({ titleContains: "x".repeat(256) }).titleContains).toHaveLength(256);
    expect(filterOf({ titleContains: "PaRsEr" }).titleContains).toBe("parser");
    // Case folding as search does it: final sigma and long s fold like their plain forms.
    expect(matches(filterOf({ titleContains: "ΟΔΟΣ" }), recordOf({ title: "η οδος" }))).toBe(true);
    expect(matches(filterOf({ titleContains: "ſ" }), recordOf({ title: "S" }))).toBe(true);
    expect(refusal(() => filterOf({ titleContains: "x".repeat(257) })).message).toBe(
      "filter.title_contains has 257 characters, at most 256 are allowed",
    );
  });

  it.each(["createdAfter", "createdBefore", "updatedAfter", "updatedBefore"] as const)(
    "%s: nanos 0..999999999 and a representable time, else INVALID_ARGUMENT naming it",
    (field) => {
      const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      const ok = {
        $typeName: "google.protobuf.Timestamp",
        seconds: 1n,
        nanos: 999_999_999,
      } as const;
      expect(filterOf({ [field]: ok } as Init)[`${field}Ms` as keyof CheckedFilter]).toBe(2000);
      const neg = refusal(() => filterOf({ [field]: { ...ok, nanos: -1 } } as Init));
      expect(neg.code).toBe("INVALID_ARGUMENT");
      expect(neg.message).toBe(`filter.${snake}: nanos -1 is out of range 0..999999999`);
      expect(refusal(() => filterOf({ [field]: { ...ok, nanos: 1e9 } } as Init)).message).toBe(
        `filter.${snake}: nanos 1000000000 is out of range 0..999999999`,
      );
      const huge = refusal(() => filterOf({ [field]: { ...ok, seconds: 10n ** 17n } } as Init));
      expect(huge.message).toBe(`filter.${snake}: seconds ${10n ** 17n} is out of range`);
    },
  );

  it("the key is the same for the same conditions (tags in any order) and differs for any other", () => {
    const a = filterOf({ tags: { x: "1", y: "2" } });
    const b = filterOf({ tags: { y: "2", x: "1" } });
    expect(a.key).toBe(b.key);
    const keys = [
      a.key,
      filterOf({ tags: { x: "1" } }).key,
      filterOf({ titleContains: "t" }).key,
      filterOf({ createdAfter: timestampFromMs(T) }).key,
      filterOf({ createdAfter: timestampFromMs(T + 1) }).key,
      filterOf({ createdBefore: timestampFromMs(T) }).key,
      filterOf({ createdBefore: timestampFromMs(T + 1) }).key,
      filterOf({ updatedAfter: timestampFromMs(T) }).key,
      filterOf({ updatedAfter: timestampFromMs(T + 1) }).key,
      filterOf({ updatedBefore: timestampFromMs(T) }).key,
      filterOf({ updatedBefore: timestampFromMs(T + 1) }).key,
      filterOf({ agentType: "a" }).key,
      filterOf({ agentType: "b" }).key,
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("rootMatches: creation time and agent type", () => {
  it("creation range [after, before)", () => {
    const f = filterOf({
      createdAfter: timestampFromMs(T),
      createdBefore: timestampFromMs(T + 10),
    });
    expect(rootMatches(f, rootOf(undefined, T))).toBe(true);
    expect(rootMatches(f, rootOf(undefined, T + 9))).toBe(true);
    expect(rootMatches(f, rootOf(undefined, T - 1))).toBe(false);
    expect(rootMatches(f, rootOf(undefined, T + 10))).toBe(false);
  });

  it("agent type: equal on a readable root; a corrupt or a root without it never matches", () => {
    const f = filterOf({ agentType: "explore" });
    expect(rootMatches(f, rootOf("explore"))).toBe(true);
    expect(rootMatches(f, rootOf("plan"))).toBe(false);
    expect(rootMatches(f, rootOf(undefined))).toBe(false);
    expect(rootMatches(f, rootOf("explore", T, "corrupt"))).toBe(false);
    const corruptButReadable = { ...rootOf("explore"), health: "corrupt" as const };
    expect(rootMatches(f, corruptButReadable)).toBe(false);
    // A time-only filter keeps a corrupt root by what is known of it.
    expect(
      rootMatches(filterOf({ createdAfter: timestampFromMs(T) }), rootOf("x", T, "corrupt")),
    ).toBe(true);
  });
});

describe("matches: title, tags and update time on the record", () => {
  it("title contains, case-insensitive; no title never matches", () => {
    expect(matches(filterOf({ titleContains: "PARSER" }), recordOf())).toBe(true);
    expect(matches(filterOf({ titleContains: "lexer" }), recordOf())).toBe(false);
    expect(matches(filterOf({ titleContains: "x" }), recordOf({ title: undefined }))).toBe(false);
  });

  it("tags: every pair", () => {
    expect(matches(filterOf({ tags: { user: "ana" } }), recordOf())).toBe(true);
    expect(matches(filterOf({ tags: { user: "ana", repo: "x" } }), recordOf())).toBe(true);
    expect(matches(filterOf({ tags: { user: "bob" } }), recordOf())).toBe(false);
  });

  it("update range [after, before) on updated_at (never before creation)", () => {
    const f = filterOf({
      updatedAfter: timestampFromMs(T + 5000),
      updatedBefore: timestampFromMs(T + 5001),
    });
    expect(matches(f, recordOf())).toBe(true);
    expect(matches(f, recordOf({ updatedAtMs: T + 4999 }))).toBe(false);
    expect(matches(f, recordOf({ updatedAtMs: T + 5001 }))).toBe(false);
    // An entry older than the session's creation (a fork's copies) counts as its creation time.
    const g = filterOf({ updatedAfter: timestampFromMs(T) });
    expect(matches(g, recordOf({ updatedAtMs: T - 100 }))).toBe(true);
  });

  it("a corrupt record meets no title or tag condition, but time conditions by what is known", () => {
    const rootless = recordOf({ health: "corrupt", root: undefined, updatedAtMs: 0 });
    expect(matches(filterOf({ updatedBefore: timestampFromMs(T) }), rootless)).toBe(true);
    const corrupt = recordOf({ health: "corrupt" });
    expect(matches(filterOf({ titleContains: "parser" }), corrupt)).toBe(false);
    expect(matches(filterOf({ tags: { user: "ana" } }), corrupt)).toBe(false);
    expect(matches(filterOf({ updatedAfter: timestampFromMs(T) }), corrupt)).toBe(true);
  });
});

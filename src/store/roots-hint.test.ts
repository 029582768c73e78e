/**
 * What a filtered listing tells the engine it will keep (rootsHint): the
 * tags, and the page itself only when the tags are the whole filter and the
 * order is by creation, for then the first `pageSize + 1` sessions that hold
 * them in that order are all the page needs. That the engines' answers stay
 * the model's with the hint is session-filter-rules.test.ts's (on
 * PostgreSQL, which honours the page).
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { SessionFilterSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import type { PageKey } from "./page-token.js";
import { type CheckedFilter, checkFilter } from "./session-filter.js";
import { type FilteredListing, rootsHint } from "./session-listing.js";

type Init = Parameters<typeof create<typeof SessionFilterSchema>>[1];
const filterOf = (init: Init) => checkFilter(create(SessionFilterSchema, init)) as CheckedFilter;

const listing = (o: Partial<FilteredListing>): FilteredListing => ({
  workspace: "w",
  parent: "",
  order: "desc",
  sortBy: "created",
  filter: filterOf({ tags: { user: "ana" } }),
  after: undefined,
  pageSize: 50,
  ...o,
});

describe("rootsHint", () => {
  it("no filter, or one without tags: no hint", () => {
    expect(rootsHint(listing({ filter: undefined }))).toBeUndefined();
    expect(rootsHint(listing({ filter: filterOf({ titleContains: "x" }) }))).toBeUndefined();
  });

  it("tags only, by creation: the tags and the page (one more than it shows), first page", () => {
    expect(rootsHint(listing({}))).toEqual({
      tags: { user: "ana" },
      page: { parentSessionId: "", order: "desc", after: undefined, limit: 51 },
    });
  });

  it("a later page: its parent, order and the previous page's last key", () => {
    const after: PageKey = { createdMs: 7, id: "s1", order: "asc", parent: "p", sortBy: "created" };
    expect(rootsHint(listing({ parent: "p", order: "asc", pageSize: 3, after }))).toEqual({
      tags: { user: "ana" },
      page: { parentSessionId: "p", order: "asc", after: { createdMs: 7, id: "s1" }, limit: 4 },
    });
  });

  const T = Date.parse("2026-06-01T00:00:00Z");
  const others: [string, Init][] = [
    ["title_contains", { titleContains: "fix" }],
    ["created_after", { createdAfter: timestampFromMs(T) }],
    ["created_before", { createdBefore: timestampFromMs(T) }],
    ["updated_after", { updatedAfter: timestampFromMs(T) }],
    ["updated_before", { updatedBefore: timestampFromMs(T) }],
    ["agent_type", { agentType: "explore" }],
  ];
  it.each(others)("tags and %s: the tags only (the roots or records rule more out)", (_, init) => {
    const filter = filterOf({ tags: { user: "ana" }, ...init });
    expect(rootsHint(listing({ filter }))).toEqual({ tags: { user: "ana" } });
  });

  it("tags only, by update time: the tags only", () => {
    expect(rootsHint(listing({ sortBy: "updated" }))).toEqual({ tags: { user: "ana" } });
  });
});

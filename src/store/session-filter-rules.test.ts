/**
 * ListSessions filters and orders on every engine, against a model kept by
 * the test (what it created, titled, tagged and appended, and when): every
 * filter and order gives, page by page, exactly the model's answer; pages
 * stay correct while sessions are created, appended to and deleted between
 * them; malformed filters and foreign page tokens are refused.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { type SessionFilter, SessionFilterSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { expectCode, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import type { ListInput } from "./session-listing.js";
import { SessionStore } from "./session-store.js";

const T0 = Date.parse("2026-05-01T00:00:00.000Z");

interface ModelSession {
  id: string;
  title: string | undefined;
  tags: Record<string, string>;
  createdMs: number;
  updatedMs: number;
}

type Filter = Partial<{
  titleContains: string;
  tags: Record<string, string>;
  createdAfter: number;
  createdBefore: number;
  updatedAfter: number;
  updatedBefore: number;
}>;

function protoFilter(f: Filter): SessionFilter {
  return create(SessionFilterSchema, {
    titleContains: f.titleContains ?? "",
    tags: f.tags ?? {},
    createdAfter: f.createdAfter === undefined ? undefined : timestampFromMs(f.createdAfter),
    createdBefore: f.createdBefore === undefined ? undefined : timestampFromMs(f.createdBefore),
    updatedAfter: f.updatedAfter === undefined ? undefined : timestampFromMs(f.updatedAfter),
    updatedBefore: f.updatedBefore === undefined ? undefined : timestampFromMs(f.updatedBefore),
  });
}

/** The model's answer: the sessions that meet `f`, in the listing's order. */
function expected(
  model: Iterable<ModelSession>,
  f: Filter,
  sortBy: "created" | "updated",
  order: "newest" | "oldest",
): string[] {
  const within = (ms: number, a?: number, b?: number) =>
    (a === undefined || ms >= a) && (b === undefined || ms < b);
  const out = [...model].filter(
    (s) =>
      (f.titleContains === undefined ||
        (s.title ?? "").toLowerCase().includes(f.titleContains.toLowerCase())) &&
      Object.entries(f.tags ?? {}).every(([k, v]) => s.tags[k] === v) &&
      within(s.createdMs, f.createdAfter, f.createdBefore) &&
      within(s.updatedMs, f.updatedAfter, f.updatedBefore),
  );
  const key = (s: ModelSession) => (sortBy === "created" ? s.createdMs : s.updatedMs);
  const sign = order === "newest" ? -1 : 1;
  out.sort((a, b) => sign * (key(a) - key(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  return out.map((s) => s.id);
}

async function listAll(store: SessionStore, input: ListInput): Promise<string[]> {
  const ids: string[] = [];
  let pageToken = input.pageToken ?? "";
  for (let i = 0; i < 1000; i++) {
    const page = await store.list({ ...input, pageToken });
    ids.push(...page.sessions.map((s) => s.id));
    if (page.nextPageToken === "") return ids;
    expect(page.sessions).toHaveLength(input.pageSize ?? 0);
    pageToken = page.nextPageToken;
  }
  throw new Error("the listing did not end");
}

const TITLES = ["Fix the Parser", "parser bug", "Release notes", "ÉTÉ plans", undefined];
const USERS = ["ana", "bob"];
const REPOS = ["x", "y"];

describe.each(STORE_ENGINE_FACTORIES)("ListSessions filters and orders ($name)", (factory) => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });
  let clock = T0;
  const open = async () => {
    fixture = await factory.open();
    clock = T0;
    return new SessionStore(fixture.engine, { now: () => new Date(clock) });
  };

  /** 24 sessions with titles, tags, creation times (some equal) and later appends and changes. */
  async function populate(store: SessionStore): Promise<Map<string, ModelSession>> {
    const model = new Map<string, ModelSession>();
    const rand = fc.sample(fc.integer({ min: 0, max: 1_000_000 }), { numRuns: 200, seed: 7 });
    let r = 0;
    const pick = <T>(xs: readonly T[]) => xs[(rand[r++ % rand.length] as number) % xs.length] as T;
    for (let i = 0; i < 24; i++) {
      // Two sessions share each creation instant: the id breaks the tie.
      clock = T0 + Math.floor(i / 2) * 1000;
      const title = pick(TITLES);
      const tags: Record<string, string> = { user: pick(USERS) };
      if (i % 3 !== 0) tags.repo = pick(REPOS);
      const { session } = await store.create({
        sessionId: `s${String(i).padStart(2, "0")}`,
        title,
        tags,
      });
      model.set(session.id, { id: session.id, title, tags, createdMs: clock, updatedMs: clock });
    }
    for (let k = 0; k < 30; k++) {
      clock = T0 + 100_000 + k * 500;
      const s = pick([...model.values()]);
      const session = await store.open(undefined, s.id);
      if (k % 5 === 0) {
        const title = pick(TITLES);
        const change = { repo: pick([...REPOS, ""]) };
        await session.append(
          create(EntrySchema, {
            id: `i${k}`,
            kind: { case: "sessionInfo", value: { title, tags: change } },
          }),
        );
        if (title !== undefined) s.title = title;
        if (change.repo === "") delete s.tags.repo;
        else s.tags.repo = change.repo;
      } else {
        await session.append(user(`u${k}`));
      }
      s.updatedMs = clock;
    }
    return model;
  }

  const FILTERS: Filter[] = [
    {},
    { titleContains: "PARSER" },
    { titleContains: "été" },
    { titleContains: "nothing like it" },
    { tags: { user: "ana" } },
    { tags: { user: "bob", repo: "x" } },
    { tags: { repo: "y" }, titleContains: "e" },
    { createdAfter: T0 + 3000, createdBefore: T0 + 8000 },
    { createdAfter: T0 + 3500 },
    { updatedAfter: T0 + 100_000 },
    { updatedBefore: T0 + 100_000 },
    { updatedAfter: T0 + 105_000, updatedBefore: T0 + 110_000, tags: { user: "ana" } },
  ];

  it("every filter, order and page size gives the model's answer, page by page", async () => {
    const store = await open();
    const model = await populate(store);
    for (const f of FILTERS) {
      for (const sortBy of ["created", "updated"] as const) {
        for (const order of ["newest", "oldest"] as const) {
          const want = expected(model.values(), f, sortBy, order);
          for (const pageSize of [1, 5, 100]) {
            const got = await listAll(store, { filter: protoFilter(f), sortBy, order, pageSize });
            expect(got, `${JSON.stringify(f)} ${sortBy} ${order} ${pageSize}`).toEqual(want);
          }
        }
      }
    }
  });

  it("pages stay correct while sessions are created, appended to and deleted between them", async () => {
    const store = await open();
    const model = await populate(store);
    const f: Filter = { tags: { user: "ana" } };
    for (const order of ["newest", "oldest"] as const) {
      const want = expected(model.values(), f, "created", order);
      const seen: string[] = [];
      let pageToken = "";
      const removed = new Set<string>();
      for (let round = 0; ; round++) {
        const page = await store.list({ filter: protoFilter(f), order, pageSize: 2, pageToken });
        seen.push(...page.sessions.map((s) => s.id));
        if (page.nextPageToken === "") break;
        pageToken = page.nextPageToken;
        // Between pages: a new session that matches (newest of all), an append, a deletion.
        clock = T0 + 200_000 + round * 1000;
        await store.create({ sessionId: `n-${order}-${round}`, tags: { user: "ana" } });
        const later = want.filter((id) => !seen.includes(id) && !removed.has(id));
        if (later.length > 1) {
          const gone = later[later.length - 1] as string;
          await store.delete(undefined, gone);
          removed.add(gone);
          model.delete(gone);
          await (await store.open(undefined, later[0] as string)).append(
            user(`x-${order}-${round}`),
          );
        }
      }
      // Every session there throughout is listed exactly once, in order; none that was deleted first.
      const throughout = want.filter((id) => !removed.has(id));
      expect(seen.filter((id) => throughout.includes(id))).toEqual(throughout);
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of removed) expect(seen).not.toContain(id);
      // Created after the listing began: newest first never shows them; oldest first shows those
      // created before it reached the end.
      if (order === "newest") expect(seen.filter((id) => id.startsWith("n-"))).toEqual([]);
    }
  });

  it("ordering by update time: a session updated between pages is not listed twice, newest first", async () => {
    const store = await open();
    const model = await populate(store);
    const want = expected(model.values(), {}, "updated", "newest");
    const first = await store.list({ sortBy: "updated", pageSize: 5 });
    expect(first.sessions.map((s) => s.id)).toEqual(want.slice(0, 5));
    clock = T0 + 300_000;
    await (await store.open(undefined, want[0] as string)).append(user("bump"));
    await (await store.open(undefined, want[10] as string)).append(user("bump2"));
    const rest = await listAll(store, {
      sortBy: "updated",
      pageSize: 5,
      pageToken: first.nextPageToken,
    });
    const all = [...first.sessions.map((s) => s.id), ...rest];
    expect(new Set(all).size).toBe(all.length);
    // The one bumped past the cursor is not shown again; every other session is shown once.
    expect(all.filter((id) => id !== want[10]).sort()).toEqual(
      want.filter((id) => id !== want[10]).sort(),
    );
  });

  it("a page that ends exactly at the last matching session says no more follow", async () => {
    const store = await open();
    const model = await populate(store);
    const f: Filter = { tags: { user: "ana" } };
    const want = expected(model.values(), f, "updated", "newest");
    const page = await store.list({
      filter: protoFilter(f),
      sortBy: "updated",
      pageSize: want.length,
    });
    expect(page.sessions.map((s) => s.id)).toEqual(want);
    expect(page.nextPageToken).toBe("");
  });

  it("refuses a token of another listing: another filter, order by, order or parent", async () => {
    const store = await open();
    await populate(store);
    const filter = protoFilter({ tags: { user: "ana" } });
    const { nextPageToken } = await store.list({ filter, pageSize: 1 });
    expect(nextPageToken).not.toBe("");
    const other: ListInput[] = [
      { filter: protoFilter({ tags: { user: "bob" } }) },
      { filter, sortBy: "updated" },
      { filter, order: "oldest" },
      { filter, parentSessionId: "s01" },
      {},
    ];
    for (const input of other) {
      await expectCode(
        store.list({ ...input, pageSize: 1, pageToken: nextPageToken }),
        "INVALID_ARGUMENT",
        "belongs to a different listing",
      );
    }
    // The same filter with its tags in another order is the same listing.
    const same = protoFilter({ tags: { user: "ana" } });
    expect(
      (await store.list({ filter: same, pageSize: 1, pageToken: nextPageToken })).sessions,
    ).toHaveLength(1);
  });

  it("refuses malformed filters, naming the field", async () => {
    const store = await open();
    await expectCode(
      store.list({ filter: protoFilter({ titleContains: "x".repeat(257) }) }),
      "INVALID_ARGUMENT",
      "filter.title_contains has 257 characters",
    );
    await expectCode(
      store.list({ filter: protoFilter({ tags: { "bad key": "v" } }) }),
      "INVALID_ARGUMENT",
      'filter.tags: invalid tag key "bad key"',
    );
    await expectCode(
      store.list({ filter: protoFilter({ tags: { user: "" } }) }),
      "INVALID_ARGUMENT",
      'filter.tags: tag "user" has an empty value',
    );
    const bad = protoFilter({});
    bad.createdAfter = { $typeName: "google.protobuf.Timestamp", seconds: 1n, nanos: -1 };
    await expectCode(
      store.list({ filter: bad }),
      "INVALID_ARGUMENT",
      "filter.created_after: nanos -1",
    );
  });

  it("filters subagents by agent type under their parent", async () => {
    const store = await open();
    await store.create({ sessionId: "parent" });
    await store.create({ sessionId: "c1", parentSessionId: "parent", agentType: "explore" });
    await store.create({ sessionId: "c2", parentSessionId: "parent", agentType: "plan" });
    await store.create({ sessionId: "c3", parentSessionId: "parent", agentType: "explore" });
    const filter = create(SessionFilterSchema, { agentType: "explore" });
    const got = await listAll(store, {
      parentSessionId: "parent",
      filter,
      pageSize: 1,
      order: "oldest",
    });
    expect(got).toEqual(["c1", "c3"]);
    expect(await listAll(store, { filter, pageSize: 10 })).toEqual([]);
  });
});

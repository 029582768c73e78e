/**
 * Listing a workspace's sessions page by page (ListSessions): the page
 * size and token rules, and where the page is picked (by the engine's
 * index, or here from every root with a bounded top-k).
 */

import type { SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import type { SessionFilter } from "../../gen/sessiond/v1/store_service_pb.js";
import { invalidArgument } from "../core/errors.js";
import { checkSessionId, checkWorkspace, SESSION_ID_PATTERN } from "../core/ids.js";
import type { RootRecord, RootsHint, SessionRecord, StorageEngine } from "../storage/engine.js";
import { listPageSize, type StoreLimits } from "./limits.js";
import { metaOf, updatedMsOf } from "./meta.js";
import { decodePageToken, encodePageToken, type PageKey } from "./page-token.js";
import { type CheckedFilter, checkFilter, matches, rootMatches } from "./session-filter.js";
import { smallest } from "./top-k.js";

export interface ListInput {
  workspace?: string | undefined;
  /** Unset: top-level sessions; set: the subagents of that session. */
  parentSessionId?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  order?: "newest" | "oldest" | undefined;
  /** Only sessions that meet it (session-filter.ts). */
  filter?: SessionFilter | undefined;
  /** The time to order by (default: creation). */
  sortBy?: "created" | "updated" | undefined;
}

/**
 * One page of a workspace's sessions, ordered by creation time (newest
 * first by default), top-level or the subagents of one parent. Corrupt
 * sessions are listed with health CORRUPT.
 *
 * Filtering, ordering and paging run on the engine's roots (first records
 * only); full records are read for the sessions of the page only. An
 * engine with an index picks the page itself (`pageRoots`: a keyset query
 * in PostgreSQL); otherwise the store picks it from every root of the
 * workspace with a bounded top-k. Both give the same page.
 */
export async function listSessions(
  engine: StorageEngine,
  limits: StoreLimits,
  input: ListInput,
): Promise<{ sessions: SessionMeta[]; nextPageToken: string }> {
  const workspace = checkWorkspace(input.workspace);
  const parent = input.parentSessionId ?? "";
  if (parent !== "") checkSessionId(parent, "parent_session_id");
  const order = input.order === "oldest" ? "asc" : "desc";
  const pageSize = listPageSize(input.pageSize, limits);
  const filter = checkFilter(input.filter);
  const sortBy = input.sortBy ?? "created";
  const filterKey = filter?.key ?? "";
  const after = input.pageToken ? decodePageToken(input.pageToken) : undefined;
  if (
    after !== undefined &&
    (after.order !== order ||
      after.parent !== parent ||
      after.sortBy !== sortBy ||
      after.filter !== filterKey)
  ) {
    throw invalidArgument("invalid page_token: it belongs to a different listing");
  }
  // A key this store never issues (a forged token): creation times are
  // whole ms and ids obey the id pattern. An engine may not be able to
  // compare with anything else (a fraction against a bigint column, a NUL
  // in a text parameter).
  if (
    after !== undefined &&
    (!Number.isInteger(after.createdMs) || !SESSION_ID_PATTERN.test(after.id))
  ) {
    throw invalidArgument("invalid page_token: pass next_page_token unchanged");
  }
  if (filter !== undefined || sortBy !== "created") {
    return filteredPage(engine, { workspace, parent, order, sortBy, filter, after, pageSize });
  }
  // One more than the page: whether there is a next page.
  const first =
    engine.pageRoots !== undefined
      ? await engine.pageRoots(workspace, {
          parentSessionId: parent,
          order,
          after: after && { createdMs: after.createdMs, id: after.id },
          limit: pageSize + 1,
        })
      : await pickPage(engine, workspace, parent, order, after, pageSize + 1);
  const page = first.slice(0, pageSize);
  const records = new Map(
    (
      await engine.list(
        workspace,
        page.map((r) => r.sessionId),
      )
    ).map((r) => [r.sessionId, r]),
  );
  const sessions: SessionMeta[] = [];
  for (const r of page) {
    const record = records.get(r.sessionId);
    // Deleted since the roots were read: left out.
    if (record !== undefined) sessions.push(metaOf(record));
  }
  // More roots than the page holds: the page is full and its last root is where the next starts.
  const last = page[pageSize - 1] as RootRecord;
  const nextPageToken =
    first.length > pageSize
      ? encodePageToken({ createdMs: last.createdAtMs, id: last.sessionId, order, parent })
      : "";
  return { sessions, nextPageToken };
}

/**
 * The first `limit` roots of a listing, chosen here from every root of
 * the workspace (`listRoots`) with a bounded top-k: what `pageRoots` of
 * an engine must match (see StorageEngine.pageRoots).
 */
async function pickPage(
  engine: StorageEngine,
  workspace: string,
  parent: string,
  order: "asc" | "desc",
  after: { createdMs: number; id: string } | undefined,
  limit: number,
): Promise<RootRecord[]> {
  const sign = order === "desc" ? -1 : 1;
  // A workspace's roots have distinct ids, so compare never sees two equal keys: only
  // the sign of the result counts, and the id comparison never yields 0.
  const compare = (a: RootRecord, b: RootRecord) =>
    // Stryker disable next-line ArithmeticOperator: sign / d has the sign of sign * d, and d is never 0 (distinct ids)
    sign *
    (a.createdAtMs - b.createdAtMs ||
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the two ids always differ, so < / <= and > / >= / true agree
      (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  const afterKey = (r: RootRecord) =>
    after === undefined ||
    sign *
      (r.createdAtMs - after.createdMs ||
        (r.sessionId < after.id ? -1 : r.sessionId > after.id ? 1 : 0)) >
      0;
  const roots = await engine.listRoots(workspace);
  return smallest(roots, limit, (r) => r.parentSessionId === parent && afterKey(r), compare);
}

export interface FilteredListing {
  readonly workspace: string;
  readonly parent: string;
  readonly order: "asc" | "desc";
  readonly sortBy: "created" | "updated";
  readonly filter: CheckedFilter | undefined;
  readonly after: PageKey | undefined;
  readonly pageSize: number;
}

/**
 * What a filtered listing will keep, for an engine with an index (RootsHint):
 * the sessions whose tags hold the filter's; and when the tags are the
 * whole filter and the order is by creation, of those only the first of the
 * page (one more, to know whether a next page exists), so that the engine
 * may read no more of them. The page is passed only then: with any other
 * condition the roots or records rule some of those first ones out, and
 * the page would come up short. Otherwise cost only: an engine keeps every
 * session it does not rule out, and the records decide.
 */
export function rootsHint(l: FilteredListing): RootsHint | undefined {
  const f = l.filter;
  if (f === undefined || Object.keys(f.tags).length === 0) return undefined;
  const tagsOnly =
    f.titleContains === "" &&
    f.createdAfterMs === undefined &&
    f.createdBeforeMs === undefined &&
    f.updatedAfterMs === undefined &&
    f.updatedBeforeMs === undefined &&
    f.agentType === undefined;
  if (!tagsOnly || l.sortBy !== "created") return { tags: f.tags };
  return {
    tags: f.tags,
    page: {
      parentSessionId: l.parent,
      order: l.order,
      after: l.after === undefined ? undefined : { createdMs: l.after.createdMs, id: l.after.id },
      limit: l.pageSize + 1,
    },
  };
}

/**
 * One page of a filtered listing, or one ordered by update time: the roots
 * decide what they can (parent, creation time, agent type), then the
 * records of the sessions left decide the rest and give the update times.
 * Costs a record of every candidate session (engines remember them: JSONL
 * per file signature), so a filter that the roots narrow is cheap.
 */
async function filteredPage(
  engine: StorageEngine,
  l: FilteredListing,
): Promise<{ sessions: SessionMeta[]; nextPageToken: string }> {
  const { filter, after, pageSize } = l;
  const roots = new Map<string, RootRecord>();
  for (const r of await engine.listRoots(l.workspace, rootsHint(l))) {
    if (r.parentSessionId === l.parent && (filter === undefined || rootMatches(filter, r))) {
      roots.set(r.sessionId, r);
    }
  }
  const sign = l.order === "desc" ? -1 : 1;
  const rows: { record: SessionRecord; ms: number }[] = [];
  for (const record of await engine.list(l.workspace, [...roots.keys()])) {
    if (filter !== undefined && !matches(filter, record)) continue;
    const root = roots.get(record.sessionId) as RootRecord;
    rows.push({ record, ms: l.sortBy === "created" ? root.createdAtMs : updatedMsOf(record) });
  }
  const compare = (aMs: number, aId: string, bMs: number, bId: string) =>
    sign * (aMs - bMs || (aId < bId ? -1 : aId > bId ? 1 : 0));
  const page = smallest(
    rows,
    pageSize + 1,
    (r) => after === undefined || compare(r.ms, r.record.sessionId, after.createdMs, after.id) > 0,
    (a, b) => compare(a.ms, a.record.sessionId, b.ms, b.record.sessionId),
  );
  const shown = page.slice(0, pageSize);
  // More rows than the page holds: the page is full and its last row is where the next starts.
  const last = shown[pageSize - 1] as (typeof rows)[number];
  const nextPageToken =
    page.length > pageSize
      ? encodePageToken({
          createdMs: last.ms,
          id: last.record.sessionId,
          order: l.order,
          parent: l.parent,
          sortBy: l.sortBy,
          filter: filter?.key ?? "",
        })
      : "";
  return { sessions: shown.map((r) => metaOf(r.record)), nextPageToken };
}

/**
 * SearchEntries: the message entries of a workspace whose text holds every
 * word of a query, session by session in the order of ListSessions by
 * creation, entries in seq order (all branches), paged by a keyset
 * (session sort key + seq) so that pages stay right while sessions are
 * created, appended to and deleted between calls.
 */
import { create } from "@bufbuild/protobuf";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  type SearchHit,
  SearchHitSchema,
  type SessionFilter,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import { isSessiondError } from "../../core/errors.js";
import { checkSessionId, checkWorkspace } from "../../core/ids.js";
import type { Candidate, RootRecord, StorageEngine } from "../../storage/engine.js";
import { compareRootKeys } from "../../storage/root-order.js";
import { listPageSize, type StoreLimits } from "../limits.js";
import { checkFilter } from "../session-filter.js";
import { scanSession } from "./entry-scan.js";
import { SearchGate } from "./search-gate.js";
import { needlesOf } from "./search-needles.js";
import { containsAll, entryText, fold, queryWords } from "./search-text.js";
import {
  decodeSearchToken,
  encodeSearchToken,
  type SearchPosition,
  searchDigest,
} from "./search-token.js";
import { snippet } from "./snippet.js";

export interface SearchInput {
  workspace?: string | undefined;
  /** Words separated by white space; 1..256 characters. */
  query: string;
  /** Only sessions that meet it. */
  filter?: SessionFilter | undefined;
  /** Unset: top-level sessions; set: the subagents of that session. */
  parentSessionId?: string | undefined;
  /** Hits per page; 0 or unset: the store's default page size. */
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  /** Session order by creation time (default newest first). */
  order?: "newest" | "oldest" | undefined;
  /** Stops the search between sessions (the caller went away). */
  signal?: AbortSignal | undefined;
}

export interface SearchResult {
  hits: SearchHit[];
  /** "" when this is the last page. */
  nextPageToken: string;
  /** Sessions whose scan on this page stopped at damage (corrupt logs). */
  partialSessionIds: string[];
}

/**
 * How long a search runs before it lets other work of the process run: an
 * engine may answer a scan without waiting on anything (the memory engine,
 * small files read synchronously), and a search over a big workspace must
 * not hold the event loop for its whole duration.
 */
const SLICE_MS = 10;

/** Candidates asked of an indexing engine at once (at least a page and one). */
const CANDIDATE_BATCH = 256;

/** A hit found by the scan, before the page is cut and titled. */
interface Found {
  root: RootRecord;
  entry: Entry;
  role: number;
  text: string;
}

/**
 * One page of hits: from the engine's index of entry text when it has one
 * and the query gives needles (indexedSearch), else by scanning the
 * sessions in order (scannedSearch). Either way the page ends one hit
 * past what it shows, which says where the next page starts.
 */
export async function searchEntries(
  engine: StorageEngine,
  limits: StoreLimits,
  input: SearchInput,
): Promise<SearchResult> {
  const workspace = checkWorkspace(input.workspace);
  const words = queryWords(input.query);
  const parent = input.parentSessionId ?? "";
  if (parent !== "") checkSessionId(parent, "parent_session_id");
  const newestFirst = input.order !== "oldest";
  const pageSize = listPageSize(input.pageSize, limits);
  const filter = checkFilter(input.filter);
  // Word order and repeats, and the order of the filter's tags, do not change the search.
  const definition = [[...words].sort(), filter?.key ?? null, newestFirst, parent];
  const digest = searchDigest(definition);
  const from = input.pageToken ? decodeSearchToken(input.pageToken, digest) : undefined;
  const needles = needlesOf(words);

  const gate = new SearchGate(engine, workspace, filter);
  const want = { workspace, words, needles, parent, newestFirst, from, pageSize, gate };
  const candidates = engine.searchCandidates?.bind(engine);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: without needles an index rules nothing out and gives every message, which the words then sift: the same hits as a scan
  const indexed = candidates !== undefined && needles.length > 0;
  const { found, partial } = indexed
    ? await indexedSearch(candidates, want, input.signal)
    : await scannedSearch(engine, want, input.signal);

  const page = found.slice(0, pageSize);
  const extra = found[pageSize];
  // The next page starts just before the first hit it will show, so the
  // sessions this page scanned to the end are not read (or reported) again.
  const nextPageToken =
    extra === undefined
      ? ""
      : encodeSearchToken(digest, {
          createdMs: extra.root.createdAtMs,
          id: extra.root.sessionId,
          seq: Number(extra.entry.seq) - 1,
        });
  return {
    hits: await titled(engine, workspace, page, words),
    nextPageToken,
    partialSessionIds: partial,
  };
}

/** What a page's search looks for, and from where. */
interface Want {
  workspace: string;
  words: readonly string[];
  needles: readonly string[];
  parent: string;
  newestFirst: boolean;
  from: SearchPosition | undefined;
  pageSize: number;
  gate: SearchGate;
}

/** Hits found for a page (one more than it shows when there is a next page). */
interface Hits {
  found: Found[];
  /** Sessions whose scan stopped at damage. */
  partial: string[];
}

/** A hit when the message entry holds every word. */
function hitOf(root: RootRecord, entry: Entry, words: readonly string[]): Found | undefined {
  // Stryker disable next-line ConditionalExpression: any other kind has no text, and an empty text holds no word
  if (entry.kind.case !== "message") return undefined;
  const text = entryText(entry);
  return containsAll(fold(text), words)
    ? { root, entry, role: entry.kind.value.role, text }
    : undefined;
}

/**
 * Session by session: sessions are read one at a time and each scan stops
 * as soon as the page holds one hit more than it shows (which says there
 * is a next page, and where it starts), so a page costs the sessions up to
 * its last hit, not the workspace.
 */
async function scannedSearch(
  engine: StorageEngine,
  want: Want,
  signal: AbortSignal | undefined,
): Promise<Hits> {
  const { workspace, words, needles, from, pageSize, gate } = want;
  const roots = sessionsFrom(
    await engine.listRoots(workspace),
    want.parent,
    want.newestFirst,
    from,
  );
  const found: Found[] = [];
  const partial: string[] = [];
  let sliceStart = performance.now();
  for (let i = 0; i < roots.length && found.length <= pageSize; i++) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: when to yield changes timing only, never a result (a long-search test checks that it yields)
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    signal?.throwIfAborted();
    const root = roots[i] as RootRecord;
    // Stryker disable next-line ArithmeticOperator: which sessions' records are read along with this one's changes the reads, not what they say
    if (!(await gate.admits(root, roots, i + 1))) continue;
    const afterSeq = from !== undefined && root.sessionId === from.id ? from.seq : 0;
    const visit = (entry: Entry) => {
      const hit = hitOf(root, entry, words);
      if (hit !== undefined) found.push(hit);
      return found.length <= pageSize;
    };
    try {
      const end = await scanSession(
        engine,
        { workspace, sessionId: root.sessionId },
        { afterSeq, needles, visit },
      );
      if (end.damaged) partial.push(root.sessionId);
    } catch (err) {
      // Deleted since the roots were read.
      if (!isSessiondError(err, "NOT_FOUND")) throw err;
    }
  }
  return { found, partial };
}

/**
 * From the engine's index (StorageEngine.searchCandidates): candidates in
 * the search's order, a batch at a time, until the page holds one hit
 * more than it shows or the candidates run out. The engine's needles rule
 * entries out; the words and the filter are checked here, as for a scan.
 */
async function indexedSearch(
  search: NonNullable<StorageEngine["searchCandidates"]>,
  want: Want,
  signal: AbortSignal | undefined,
): Promise<Hits> {
  const { workspace, words, needles, pageSize, gate } = want;
  const found: Found[] = [];
  const partial: string[] = [];
  // Stryker disable next-line ArithmeticOperator: a batch of another size finds the same hits, in more or fewer queries
  const limit = Math.max(pageSize + 1, CANDIDATE_BATCH);
  let after = want.from;
  for (;;) {
    signal?.throwIfAborted();
    const batch = await search(workspace, {
      needles,
      parentSessionId: want.parent,
      // Stryker disable next-line StringLiteral: engines take anything but "desc" for ascending
      order: want.newestFirst ? "desc" : "asc",
      after,
      limit,
    });
    const roots = batch.map((c) => c.root);
    for (let i = 0; i < batch.length && found.length <= pageSize; i++) {
      const c = batch[i] as Candidate;
      after = { createdMs: c.root.createdAtMs, id: c.root.sessionId, seq: c.seq };
      // Stryker disable next-line ArithmeticOperator: which sessions' records are read along with this one's changes the reads, not what they say
      if (!(await gate.admits(c.root, roots, i + 1))) continue;
      if (c.entry === undefined) {
        if (!partial.includes(c.root.sessionId)) partial.push(c.root.sessionId);
        continue;
      }
      const hit = hitOf(c.root, c.entry, words);
      if (hit !== undefined) found.push(hit);
    }
    if (found.length > pageSize || batch.length < limit) break;
  }
  return { found, partial };
}

/**
 * The sessions of the search in order (creation time, then id; both
 * descending for newest first), from the one the token names on.
 */
function sessionsFrom(
  all: readonly RootRecord[],
  parent: string,
  newestFirst: boolean,
  from: SearchPosition | undefined,
): RootRecord[] {
  const sign = newestFirst ? -1 : 1;
  const compareKeys = (ms: number, id: string, otherMs: number, otherId: string) =>
    sign * compareRootKeys(ms, id, otherMs, otherId);
  const roots = all.filter(
    (r) =>
      r.parentSessionId === parent &&
      (from === undefined || compareKeys(r.createdAtMs, r.sessionId, from.createdMs, from.id) >= 0),
  );
  return roots.sort((a, b) => compareKeys(a.createdAtMs, a.sessionId, b.createdAtMs, b.sessionId));
}

/** The hits of a page as SearchHits, each with its session's current title. */
async function titled(
  engine: StorageEngine,
  workspace: string,
  page: readonly Found[],
  words: readonly string[],
): Promise<SearchHit[]> {
  const ids = [...new Set(page.map((f) => f.root.sessionId))];
  const titles = new Map<string, string | undefined>();
  for (const r of await engine.list(workspace, ids)) titles.set(r.sessionId, r.title);
  return page.map((f) =>
    create(SearchHitSchema, {
      sessionId: f.root.sessionId,
      sessionTitle: titles.has(f.root.sessionId)
        ? titles.get(f.root.sessionId)
        : titleOfRoot(f.root),
      entryId: f.entry.id,
      seq: f.entry.seq,
      role: f.role,
      timestamp: f.entry.timestamp,
      snippet: snippet(f.text, words),
    }),
  );
}

function titleOfRoot(root: RootRecord): string | undefined {
  // Stryker disable next-line OptionalChaining: a session with hits has a valid SessionInfo root (its scan fails at line 1 otherwise)
  const k = root.root?.kind;
  // Stryker disable next-line OptionalChaining,ConditionalExpression: as above, the root is there and is a SessionInfo
  return k?.case === "sessionInfo" ? k.value.title : undefined;
}

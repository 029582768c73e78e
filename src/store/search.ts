/**
 * SearchEntries: the message entries of a workspace whose text holds every
 * word of a query, session by session in the order of ListSessions by
 * creation, entries in seq order (all branches), paged by a keyset
 * (session sort key + seq) so that pages stay right while sessions are
 * created, appended to and deleted between calls.
 */
import { create } from "@bufbuild/protobuf";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type SearchHit,
  SearchHitSchema,
  type SessionFilter,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { invalidArgument, isSessiondError } from "../core/errors.js";
import { checkSessionId, checkWorkspace } from "../core/ids.js";
import type { RootRecord, SessionRecord, StorageEngine } from "../storage/engine.js";
import { scanSession } from "./entry-scan.js";
import type { StoreLimits } from "./limits.js";
import { needlesOf } from "./search-needles.js";
import { containsAll, entryText, fold, queryWords } from "./search-text.js";
import {
  decodeSearchToken,
  encodeSearchToken,
  type SearchPosition,
  searchDigest,
} from "./search-token.js";
import { checkFilter, matches, rootMatches } from "./session-filter.js";
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

/** Records read at once when a filter needs them (title, tags, update time). */
const FILTER_BATCH = 64;

/** A hit found by the scan, before the page is cut and titled. */
interface Found {
  root: RootRecord;
  entry: Entry;
  role: number;
  text: string;
}

/**
 * One page of hits. Sessions are read one at a time and each scan stops
 * as soon as the page holds one hit more than it shows (which says there
 * is a next page, and where it starts), so a page costs the sessions up to
 * its last hit, not the workspace.
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
  const size = input.pageSize ?? 0;
  if (!Number.isSafeInteger(size) || size < 0 || size > limits.maxPageSize) {
    throw invalidArgument(
      `page_size ${size} is out of range 0..${limits.maxPageSize} (0: the default, ${limits.defaultPageSize})`,
    );
  }
  const pageSize = size === 0 ? limits.defaultPageSize : size;
  const filter = checkFilter(input.filter);
  // Word order and repeats, and the order of the filter's tags, do not change the search.
  const definition = [[...words].sort(), filter?.key ?? null, newestFirst, parent];
  const digest = searchDigest(definition);
  const from = input.pageToken ? decodeSearchToken(input.pageToken, digest) : undefined;
  const needles = needlesOf(words);

  const roots = sessionsFrom(await engine.listRoots(workspace), parent, newestFirst, from);
  const found: Found[] = [];
  const partial: string[] = [];
  const records = new Map<string, SessionRecord>();
  let sliceStart = performance.now();
  for (let i = 0; i < roots.length && found.length <= pageSize; i++) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: when to yield changes timing only, never a result (a long-search test checks that it yields)
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    input.signal?.throwIfAborted();
    const root = roots[i] as RootRecord;
    if (filter !== undefined) {
      // The root decides some conditions; the others need the session's record.
      // Stryker disable next-line ConditionalExpression: a root that fails is left out of the batch below, so the session is skipped there too; this spares a read of records per such root
      if (!rootMatches(filter, root)) continue;
      // Stryker disable next-line ConditionalExpression: reading a batch again gives the same records, at a cost
      if (!records.has(root.sessionId)) {
        // Stryker disable next-line MethodExpression: records of more sessions than the batch are the same records, at a cost
        const batch = roots
          .slice(i, i + FILTER_BATCH)
          // Stryker disable next-line MethodExpression,ArrowFunction,ConditionalExpression: reading the records of sessions the root already ruled out costs reads, not results
          .filter((r) => rootMatches(filter, r))
          .map((r) => r.sessionId);
        for (const r of await engine.list(workspace, batch)) records.set(r.sessionId, r);
      }
      const record = records.get(root.sessionId);
      // Deleted since the roots were read, or not a match.
      if (record === undefined || !matches(filter, record)) continue;
    }
    const afterSeq = from !== undefined && root.sessionId === from.id ? from.seq : 0;
    const visit = (entry: Entry) => {
      // Stryker disable next-line ConditionalExpression: any other kind has no text, and an empty text holds no word
      if (entry.kind.case !== "message") return true;
      const text = entryText(entry);
      if (containsAll(fold(text), words)) {
        found.push({ root, entry, role: entry.kind.value.role, text });
      }
      return found.length <= pageSize;
    };
    try {
      const end = await scanSession(
        engine,
        { workspace, sessionId: root.sessionId },
        {
          afterSeq,
          needles,
          visit,
        },
      );
      if (end.damaged) partial.push(root.sessionId);
    } catch (err) {
      // Deleted since the roots were read.
      if (!isSessiondError(err, "NOT_FOUND")) throw err;
    }
  }

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
    sign * (ms - otherMs || (id < otherId ? -1 : id > otherId ? 1 : 0));
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

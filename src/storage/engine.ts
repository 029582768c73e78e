import type { Entry, Withheld } from "../../gen/sessiond/v1/entry_pb.js";
import type { AppendPlan } from "../core/append-plan.js";
import type { SessionLog } from "../core/session-log.js";
import type { Tags } from "../core/tags.js";
import type { PriceTable, Totals } from "../core/usage-sums.js";
import type { WithholdPlan } from "../core/withheld.js";
import type { BlobStorage } from "./blobs.js";
import type { EngineStats } from "./observer.js";
import type { ShareStorage } from "./shares.js";
import type { HourUsage, SessionUsage } from "./usage-report.js";

/**
 * The storage contract every engine (memory, jsonl, postgres) implements and
 * the conformance suite (test/conformance/storage/) checks. Engines know nothing of the
 * semantics of entries: the store hands them a `Planner` (pure, from
 * src/core) that validates a request against the up-to-date log and says
 * what to write. The engine's job is ordering and durability:
 *
 * - mutations of one session are serialised (in-process queue, and across
 *   processes where the engine allows several writers);
 * - the planner always sees the log as it is on durable storage, including
 *   appends made by other processes;
 * - an append resolves only after its entries are durable, and a batch is
 *   all-or-nothing, also across a crash;
 * - subscribers are told about changes only after they are durable.
 */

/** Identifies one session. Both parts are validated ids (see core/ids.ts). */
export interface SessionKey {
  readonly workspace: string;
  readonly sessionId: string;
}

/** Decides what to write given the current log; throws a SessiondError to refuse. */
export type Planner = (log: SessionLog) => AppendPlan;

/** Decides which stored entries a rewrite replaces, given the current log (core/withheld.ts). */
export type WithholdPlanner = (log: SessionLog) => WithholdPlan;

/** Outcome of a durable rewrite: the plan, and the head seq it was made at. */
export interface WithholdResult extends WithholdPlan {
  readonly headSeq: number;
}

/** Outcome of an erasure of one session (StorageEngine.erase). */
export interface EraseResult {
  /** Entries whose content is withheld now (every entry but SessionInfo and Leaf ones). */
  readonly entries: number;
  /** Entries this call withheld (0 when the session was erased already). */
  readonly changed: number;
  readonly headSeq: number;
  /** True when the session's data key was destroyed (a sealed session), false when rewritten. */
  readonly keyDestroyed: boolean;
}

/** Outcome of a durable append. */
export interface AppendResult extends AppendPlan {
  /** Head seq after the append. */
  headSeq: number;
  /** Current leaf after the append. */
  leafId: string;
}

/** A page of the raw log. */
export interface EntryPage {
  entries: Entry[];
  headSeq: number;
}

/**
 * What listing needs to know of a session without folding it. For a corrupt
 * session the counters cover the readable prefix and `health` says why.
 */
export interface SessionRecord {
  readonly workspace: string;
  readonly sessionId: string;
  /** The root SessionInfo entry; undefined when even the first record is unreadable. */
  readonly root: Entry | undefined;
  /** Newest SessionInfo title in the log. */
  readonly title: string | undefined;
  /** Tags: the root's with every later SessionInfo's changes (core/tags.ts). */
  readonly tags: Tags;
  readonly headSeq: number;
  readonly leafId: string;
  readonly messageCount: number;
  /** Timestamp (ms) of the newest entry. */
  readonly updatedAtMs: number;
  readonly health: "ok" | "corrupt";
  /** For corrupt sessions: what is wrong and where (line number). */
  readonly healthDetail: string;
  /**
   * The session's raw usage sums per (UTC hour, model) (usage-report.ts),
   * for UsageReport: read when asked (a record of a loaded log counts its
   * entries then, once per log and only the new ones after an append);
   * undefined when not known (a corrupt session).
   */
  readonly usage?: SessionUsage | undefined;
}

/** Options of StorageEngine.delete. */
export interface DeleteOptions {
  /** Delete only when the head seq is still this (else false, nothing removed). */
  readonly ifHeadSeq?: number | undefined;
}

/** What `StorageEngine.exclusive` did: ran the job (and what it returned), or left it to another process. */
export type JobOutcome<T> = { readonly ran: true; readonly value: T } | { readonly ran: false };

/**
 * What listing needs to order and filter sessions: the root only, read
 * from the first record (never from the whole log). Cheap for every engine,
 * so that a listing can look at every session of a workspace.
 */
export interface RootRecord {
  readonly sessionId: string;
  /** The root SessionInfo entry; undefined when the first record is unreadable. */
  readonly root: Entry | undefined;
  /**
   * The root's SessionInfo created_at in ms (0 when unset). For an
   * unreadable root: 0, or the value an engine that keeps it apart from the
   * root recorded when the session was created (postgres: a column), so
   * that a session whose root was damaged later keeps its place.
   */
  readonly createdAtMs: number;
  /**
   * The root's parent_session_id: "" for a top-level session. For an
   * unreadable root: "", or the recorded value, like `createdAtMs`.
   */
  readonly parentSessionId: string;
  /**
   * Health of the FIRST record only: "corrupt" when it is missing or
   * invalid. Damage further into the log shows in `list()` records only.
   */
  readonly health: "ok" | "corrupt";
  /** For a corrupt first record: what is wrong. */
  readonly healthDetail: string;
}

/**
 * One page of roots (see `StorageEngine.pageRoots`): the roots whose
 * `parentSessionId` equals `parentSessionId`, ordered by `createdAtMs`,
 * then by `sessionId` in JavaScript string order (UTF-16 code units; ids
 * are ASCII, so bytewise), both ascending for "asc" and both descending
 * for "desc"; only those strictly after `after` in that order; the first
 * `limit` of them.
 */
export interface RootPageQuery {
  /** "" for top-level sessions, else the parent whose subagents are listed. */
  readonly parentSessionId: string;
  readonly order: "asc" | "desc";
  /** Keyset: the sort key of the last root of the previous page. */
  readonly after?: { readonly createdMs: number; readonly id: string } | undefined;
  /** At most this many roots (>= 1). */
  readonly limit: number;
}

/** What a caller of `StorageEngine.listRoots` will keep, for an engine that can tell from an index. */
export interface RootsHint {
  /** The caller keeps only sessions whose folded tags hold these (see `listRoots`). */
  readonly tags?: Tags;
  /**
   * Only with `tags`, and only when the caller keeps exactly the sessions
   * whose tags hold them AND that this page query selects, and of those
   * the first `limit`: an engine may then also leave out, of the sessions
   * it knows (from its index) to hold the tags, all but the first `limit`
   * in the query's order after its key, with its parent. It must keep
   * every session whose tags it does not know, wherever it would sort.
   */
  readonly page?: RootPageQuery;
}

/**
 * A text search in one query (`StorageEngine.searchCandidates`), for an
 * engine that indexes the stored form of entries: the message entries of a
 * workspace's sessions whose stored form holds every needle, in the
 * search's order, from a position on.
 */
export interface CandidateQuery {
  /** As EntryScan.needles; at least one. */
  readonly needles: readonly string[];
  /** "" for top-level sessions, else the parent whose subagents are searched. */
  readonly parentSessionId: string;
  /** Sessions by (creation ms, id) in this order; a session's entries always by seq, ascending. */
  readonly order: "asc" | "desc";
  /** Sessions after (createdMs, id) in the order, and this one's entries after seq. */
  readonly after?:
    | { readonly createdMs: number; readonly id: string; readonly seq: number }
    | undefined;
  /** At most this many candidates (>= 1). */
  readonly limit: number;
}

/** A candidate of a text search: an entry, or its seq when it does not decode (damage). */
export interface Candidate {
  readonly root: RootRecord;
  readonly seq: number;
  readonly entry: Entry | undefined;
}

/**
 * One pass of a text search over a session's entries (`StorageEngine.scanEntries`).
 * The engine hands over entries; the store decides which ones match.
 */
export interface EntryScan {
  /** Only entries with a greater seq. */
  readonly afterSeq: number;
  /**
   * Lower-case ASCII strings that every entry of interest contains in its
   * canonical proto JSON (`toJsonString`), ASCII case ignored: an entry
   * whose stored form lacks one of them cannot match, so an engine that
   * keeps that form may skip it without decoding it. Empty: no pre-filter.
   */
  readonly needles: readonly string[];
  /**
   * Takes each entry not skipped by the needles, in seq order; false stops
   * the scan (the page is full).
   */
  readonly visit: (entry: Entry) => boolean;
}

/** How a scan ended. */
export interface EntryScanEnd {
  /**
   * The log is corrupt and the scan stopped at the damage: every entry
   * before it was offered (or skipped by the needles).
   */
  readonly damaged: boolean;
}

/** A workspace that holds sessions, as `StorageEngine.workspacePage` reports it. */
export interface WorkspaceRecord {
  readonly name: string;
  /** Its top-level sessions (a root without parent_session_id), corrupt ones included. */
  readonly sessionCount: number;
  /** Its subagent sessions. */
  readonly subagentCount: number;
}

/**
 * One page of workspaces (`StorageEngine.workspacePage`): those holding at
 * least one session, by name in JavaScript string order (bytewise: names
 * are ASCII), only those after `after`, and of `only` when given.
 */
export interface WorkspacePageQuery {
  /** Keyset: the name of the last workspace of the previous page ("" for the first page). */
  readonly after: string;
  /** At most this many workspaces (>= 1). */
  readonly limit: number;
  /** Only workspaces of these names (a token's grant); undefined: every workspace. */
  readonly only?: ReadonlySet<string> | undefined;
}

/** What `StorageEngine.usageSums` is asked for. */
export interface UsageSumsQuery {
  /** Hours [fromHour, toHour): ms of whole UTC hours. */
  readonly fromHour: number;
  readonly toHour: number;
  /** Only sessions whose folded tags hold these (the store checks again). */
  readonly tags: Tags;
}

/** What `usageGroups` is asked: whole hours, grouped as the report asks. */
export interface UsageGroupsQuery {
  /** Hours [fromHour, toHour): ms of whole UTC hours. */
  readonly fromHour: number;
  readonly toHour: number;
  /** "hour", "day" (UTC), or "none": one bucket (its start is 0 here). */
  readonly bucket: "hour" | "day" | "none";
  readonly byModel: boolean;
  readonly groupByTags: readonly string[];
  /** Only sessions whose folded tags hold these. */
  readonly tags: Tags;
}

/** One group of a report: priced totals and how many sessions it holds. */
export interface UsageGroup {
  readonly bucketMs: number;
  readonly model: string;
  readonly values: readonly string[];
  readonly totals: Totals;
  readonly sessions: number;
}

/** A report's groups (unordered), its total and its distinct sessions. */
export interface UsageGroups {
  readonly groups: UsageGroup[];
  readonly total: Totals;
  readonly sessions: number;
}

/** A session's usage sums of some hours, with its folded tags. */
export interface UsageSessionSums {
  readonly sessionId: string;
  readonly tags: Tags;
  /** Its (hour, model) groups in the hours asked (storage/usage-report.ts). */
  readonly groups: readonly HourUsage[];
}

export type StorageEventType = "created" | "appended" | "deleted" | "withheld";

/** A wake-up for watchers: the data is always read back from the engine. */
export interface StorageEvent {
  readonly type: StorageEventType;
  readonly workspace: string;
  readonly sessionId: string;
  /** Head seq after the event (0 for deleted). */
  readonly headSeq: number;
  /** "withheld": the seqs of the entries whose stored form was replaced. */
  readonly seqs?: readonly number[];
}

export type StorageListener = (event: StorageEvent) => void;

export interface StorageEngine {
  /** "memory", "jsonl" or "postgres". */
  readonly kind: string;

  /** The workspace's blobs: large parts stored once (see blobs.ts). */
  readonly blobs: BlobStorage;

  /** OPTIONAL: share links' records (shares.ts); without it the share calls are UNIMPLEMENTED. */
  readonly shares?: ShareStorage;

  /**
   * Creates a session durably from its first entries (a SessionInfo root
   * first, seqs 1..n), all or nothing. Fails with ALREADY_EXISTS when the id
   * is taken in the workspace. Subagent sessions are recognised by the
   * root's parent_session_id.
   */
  create(key: SessionKey, entries: readonly Entry[]): Promise<void>;

  /**
   * Runs `plan` against the up-to-date log under the session's write
   * serialisation and makes `plan.write` durable before resolving. Planner
   * errors reject this call only; nothing is written for it.
   * NOT_FOUND when the session does not exist; DATA_LOSS when it is corrupt.
   */
  append(key: SessionKey, plan: Planner): Promise<AppendResult>;

  /**
   * Redaction: runs `plan` against the up-to-date log under the session's
   * write serialisation, and replaces the stored form of the entries of
   * `plan.changed` (same id, parent, seq, kind: SessionLog.replace) durably,
   * all or none, also across a crash, before resolving; then emits a
   * "withheld" event with their seqs. Nothing is written when `changed` is
   * empty. The old content is gone from storage (JSONL: a copy of the log
   * renamed over it; PostgreSQL: the rows updated). Planner errors reject
   * this call only. NOT_FOUND / DATA_LOSS as `append`.
   */
  withhold(key: SessionKey, plan: WithholdPlanner): Promise<WithholdResult>;

  /**
   * OPTIONAL: erasure (issue 41, part 2). Every entry with content (all but
   * SessionInfo and Leaf) reads from then on as `withhold(entry, marker)`
   * (core/erase-plan.ts), durably: a sealed session's data key is
   * destroyed (JSONL: its key file replaced by a tombstone), a session in
   * clear is rewritten like a redaction. Under the session's write
   * serialisation; cached logs follow; "withheld" events carry the changed
   * seqs in pages of at most ERASE_EVENT_SEQS. Idempotent. NOT_FOUND as
   * `append`. Engines without it answer UNIMPLEMENTED through the store.
   */
  erase?(key: SessionKey, marker: Withheld): Promise<EraseResult>;

  /**
   * OPTIONAL, with `erase`: appends one erasure audit record (a JSON
   * object's text, no newline; src/store/erase.ts makes it) to the
   * workspace's audit log durably (JSONL: `<dataDir>/<workspace>/erasures.jsonl`,
   * append-only, fsynced; memory: kept in memory).
   */
  recordErasure?(workspace: string, record: string): Promise<void>;

  /** OPTIONAL, with `recordErasure`: the workspace's audit records, oldest first. */
  erasures?(workspace: string): Promise<string[]>;

  /**
   * The session's log, caught up with durable storage. The returned object
   * may be shared and grow with later appends: read it synchronously.
   * NOT_FOUND / DATA_LOSS.
   */
  load(key: SessionKey): Promise<SessionLog>;

  /** Entries with seq > afterSeq, at most `limit`, in seq order. NOT_FOUND / DATA_LOSS. */
  read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage>;

  /** Ids of every session of a workspace (top-level and subagents), unordered. */
  listIds(workspace: string): Promise<string[]>;

  /**
   * The roots of every session of a workspace (top-level and subagents),
   * unordered, corrupt ones included. Never reads whole logs: it is what a
   * listing filters, orders and pages on. Listing pages are built from
   * roots, and only the sessions of the page get full records through
   * `list(workspace, pageIds)`. Sees sessions created and deleted by other
   * processes, like `listIds`.
   *
   * `hint.tags`: the caller keeps only sessions whose folded tags hold
   * these (it checks their records itself), so an engine that can tell
   * from an index may leave out sessions whose tags do NOT hold them. It
   * must keep every other session (one whose tags it does not know
   * included); an engine may ignore the hint.
   */
  listRoots(workspace: string, hint?: RootsHint): Promise<RootRecord[]>;

  /**
   * OPTIONAL: one listing page chosen by the engine (an index in SQL)
   * rather than by the store over every root of `listRoots`. Must return
   * exactly the roots, in order, that `listRoots` filtered, sorted and cut
   * as `RootPageQuery` says would give on the same data: the store uses it
   * when present, else that selection in JavaScript (src/store/top-k.ts),
   * and tests compare the two. Engines without an index have no use for it.
   */
  pageRoots?(workspace: string, query: RootPageQuery): Promise<RootRecord[]>;

  /**
   * OPTIONAL: whether a session exists, without listing the workspace. The
   * store resolves a full session id with it before falling back to prefix
   * matching over `listIds`, which costs a query of every id per call on a
   * database. May answer true from a cache: a stale true is harmless, as
   * the operation that follows fails with NOT_FOUND on a deleted session.
   */
  exists?(key: SessionKey): Promise<boolean>;

  /**
   * OPTIONAL: true when this engine holds the session open (cached) now, so
   * that `exists` would answer true at once: the store then opens it
   * without a promise or a turn (the hot path of every append). A stale
   * true is as harmless as `exists`'s.
   */
  isOpen?(key: SessionKey): boolean;

  /**
   * OPTIONAL, only with `exists`: the ids of a workspace that a session
   * reference addresses (`matchesSessionRef` of core/ids.ts: a prefix of
   * the id or of its short id), the first `limit` in id order (bytewise),
   * without listing every id. The store asks it only after `exists` said
   * the reference is not a full id. Engines without an index leave it out,
   * and the store matches over `listIds`.
   */
  idsByRef?(workspace: string, ref: string, limit: number): Promise<string[]>;

  /**
   * Records of the given sessions (or of all of the workspace), corrupt ones
   * included. Costs a full read of each session not already loaded: pass the
   * ids of one page (see `listRoots`), not a whole workspace.
   */
  list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]>;

  /**
   * OPTIONAL: a text search's pass over one session's entries without
   * decoding the ones the needles rule out, stopping once `visit` says so
   * (see EntryScan). A corrupt log is scanned up to its damage and reported
   * as `damaged`, not as DATA_LOSS; a torn tail is no damage (readers ignore
   * it). NOT_FOUND when the session does not exist. Without it the store
   * reads the log page by page through `read`.
   */
  scanEntries?(key: SessionKey, scan: EntryScan): Promise<EntryScanEnd>;

  /**
   * OPTIONAL: the candidates of a text search from an index of the stored
   * entries (see CandidateQuery), instead of a scan of every session. Each
   * candidate holds the needles; the store still checks the words.
   */
  searchCandidates?(workspace: string, query: CandidateQuery): Promise<Candidate[]>;

  /**
   * OPTIONAL: UsageReport's sums from the engine's own index (PostgreSQL:
   * a table of per (session, hour, model) sums, caught up with the entries
   * when asked): every session of the workspace (subagents included) whose
   * tags hold `query.tags` and that has messages in the hours asked, with
   * those hours' groups. Without it the store reads the sums from the
   * listing records (`SessionRecord.usage`) of `list(workspace)`.
   */
  usageSums?(
    workspace: string,
    query: UsageSumsQuery,
    prices?: PriceTable,
  ): Promise<UsageSessionSums[]>;

  /**
   * OPTIONAL: a whole UsageReport of whole hours grouped and priced by the
   * engine itself (PostgreSQL, in SQL); undefined when it cannot answer this
   * one, and the store makes the report from usageSums / the listing.
   */
  usageGroups?(
    workspace: string,
    query: UsageGroupsQuery,
    prices: PriceTable,
  ): Promise<UsageGroups | undefined>;

  /** Workspaces that hold at least one session. */
  workspaces(): Promise<string[]>;

  /**
   * One page of the workspaces that hold sessions, with how many of each
   * kind (see WorkspacePageQuery), counted without reading a log: from the
   * directories (JSONL) or the sessions table (PostgreSQL). Sees sessions
   * created and deleted by other processes, like `listIds`.
   */
  workspacePage(query: WorkspacePageQuery): Promise<WorkspaceRecord[]>;

  /**
   * Deletes a session durably; false when it did not exist. With
   * `ifHeadSeq`, only when the session's head seq is still that, checked
   * under the session's write lock (after any append in flight): retention
   * never removes a session that was written to since it was judged.
   */
  delete(key: SessionKey, opts?: DeleteOptions): Promise<boolean>;

  /**
   * OPTIONAL: deletes several sessions of a workspace atomically, all or
   * nothing (a parent with its subagents: DeleteSession with subagents).
   * Returns the ids that existed and are now gone, in the order given; ids
   * that did not exist are skipped, like `delete` returning false. Each
   * removed session gets its own "deleted" event, after the deletion is
   * durable. Engines that cannot delete several sessions atomically leave
   * it out, and the store deletes one by one, children first.
   */
  deleteMany?(workspace: string, sessionIds: readonly string[]): Promise<string[]>;

  /**
   * OPTIONAL: runs a background job (the retention sweep) only if no other
   * process on the same storage runs the job of that name now, so that of
   * several replicas one at a time does it; `{ ran: false }` without running
   * it otherwise. Engines whose storage one process serves leave it out, and
   * the job just runs. A job must stay safe to run twice at once: the
   * exclusion is lost with a replica's connection.
   */
  exclusive?<T>(name: string, job: () => Promise<T>): Promise<JobOutcome<T>>;

  /** Registers a listener for durable changes; returns the unsubscribe function. */
  subscribe(listener: StorageListener): () => void;

  /**
   * OPTIONAL: resolves when the engine can take writes now (JSONL: a file
   * can be created in the data dir; PostgreSQL: the database answers),
   * rejects with the reason otherwise. Readiness probes call it; engines
   * that are always usable (memory) leave it out.
   */
  probe?(): Promise<void>;

  /** OPTIONAL: gauges read when metrics are scraped (cache size, pool use). */
  stats?(): EngineStats;

  /** Finishes queued writes, releases locks and handles. */
  close(): Promise<void>;
}

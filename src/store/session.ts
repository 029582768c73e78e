import { create, isMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { Span } from "@opentelemetry/api";
import { type Entry, EntrySchema, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type SessionMeta,
  type SessionState,
  type StateMessage,
  type TreeNode,
  TreeNodeSchema,
  View,
} from "../../gen/sessiond/v1/session_pb.js";
import {
  type AppendInput,
  type Expectations,
  type PlanContext,
  planAppend,
} from "../core/append-plan.js";
import { entryKind, entryPreview, roleOf, toTimestamp } from "../core/entry.js";
import { aborted, invalidArgument, notFound, resourceExhausted } from "../core/errors.js";
import { foldPath } from "../core/fold.js";
import { checkEntryId, quote } from "../core/ids.js";
import { type MoveInput, planReset, planRewind, type RewindInput } from "../core/move-plan.js";
import type { SessionLog } from "../core/session-log.js";
import { pathIdsAfter } from "../core/tree.js";
import { planWithhold, withheldMarker } from "../core/withheld.js";
import type { AppendResult, EntryPage, SessionKey, StorageEngine } from "../storage/engine.js";
import { inSpan, NON_RECORDING_SPAN, tracingEnabled } from "../storage/observer.js";
import type { BlobStore } from "./blobs.js";
import type { StoreLimits } from "./limits.js";
import { fillPage, itemsBefore, itemsFrom, type PageRequest } from "./page-fill.js";
import { badPageToken } from "./page-token.js";
import {
  decodeStateToken,
  decodeTreeToken,
  encodeStateToken,
  encodeTreeToken,
  type Snapshot,
  type StateCursor,
  type TreeCursor,
} from "./snapshot-token.js";
import { memoizedState } from "./state-memo.js";
import type { EntrySink, EntryWatchEvent, EntryWatchOptions, StoreWatch } from "./watch/index.js";

/** An entry as callers may give it: a full Entry or its init shape. */
export type EntryInput = Entry | MessageInitShape<typeof EntrySchema>;

export interface AppendOptions extends Expectations {
  /**
   * The entries are handed over to the store and become parts of the stored
   * (cached, shared) entries: the caller must never change them afterwards.
   * Saves a deep copy per entry; the server sets it for its decoded
   * requests. Default false: the store keeps its own copy.
   */
  handOver?: boolean | undefined;
}

export interface StateOptions {
  /** Fold up to this entry instead of the current leaf (time travel). */
  atEntryId?: string | undefined;
  /** CONTEXT (default) or HISTORY. */
  view?: View | undefined;
}

/** The tree of a session: every entry's shape plus the current leaf. */
export interface SessionTree {
  nodes: TreeNode[];
  leafId: string;
  headSeq: number;
}

/** A page of the tree; leafId and headSeq are the snapshot's, on every page. */
export interface TreePage extends SessionTree {
  /** Empty on the last page. */
  nextPageToken: string;
}

export interface StatePageRequest extends StateOptions, PageRequest<StateMessage> {
  /**
   * Pages run from the end of the state backwards: the first holds its last
   * messages, each next one the run before (in path order within a page).
   */
  fromEnd?: boolean | undefined;
  /** Bytes the response needs besides the messages (taken from maxBytes). */
  sizeOfRest?: ((state: SessionState) => number) | undefined;
  /**
   * The whole state's size when the caller knows it without measuring (an
   * encoding it kept): a state that fits is then answered whole, unsized.
   */
  knownSize?: ((state: SessionState) => number | undefined) | undefined;
}

/** A page of a state: the fold, with this page's messages. Shared: read-only. */
export interface StatePage {
  state: SessionState;
  /** Empty on the last page. */
  nextPageToken: string;
  /** Messages of the whole state, every page together. */
  messageCount: number;
}

/** Who redacts and why (kept in each entry's Withheld marker). */
export interface RedactOptions {
  /** Who asks (at most 256 characters). */
  by?: string | undefined;
  /** Why (at most 1024 characters). */
  why?: string | undefined;
}

/** The entries a redaction was asked for, as they now read, and the head seq. */
export interface RedactResult {
  entries: Entry[];
  headSeq: number;
}

const MAX_REDACT_BY = 256;
const MAX_REDACT_WHY = 1024;

/** What Session needs from its store (kept narrow so the facade stays a thin layer). */
export interface SessionContext {
  readonly engine: StorageEngine;
  readonly limits: StoreLimits;
  readonly plan: PlanContext;
  /** The store's clock (the planners' too). */
  readonly now: () => Date;
  meta(key: SessionKey): Promise<SessionMeta>;
  readonly watch: StoreWatch;
  readonly blobs: BlobStore;
}

/**
 * Session is the facade for one session: append, rewind, reset, fold, page
 * and draw. It holds no state of its own (the engine caches logs), so any
 * number of facades for one session may exist at once.
 */
export class Session {
  constructor(
    private readonly ctx: SessionContext,
    readonly key: SessionKey,
  ) {}

  get id(): string {
    return this.key.sessionId;
  }

  get workspace(): string {
    return this.key.workspace;
  }

  /** Metadata of the session. */
  meta(): Promise<SessionMeta> {
    return this.ctx.meta(this.key);
  }

  /**
   * Appends one entry or an atomic batch. Resolves once durable; a retry
   * with the same ids and content is de-duplicated. Async so that every
   * refusal, limits included, arrives as a rejection.
   */
  append(
    entries: EntryInput | readonly EntryInput[],
    opts: AppendOptions = {},
  ): Promise<AppendResult> {
    try {
      return this.appendNow(messagesOf(entries), opts);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `append` of messages, its refusals thrown (no async frame of its own: `append` is the hot path). */
  private appendNow(list: Entry[], opts: AppendOptions): Promise<AppendResult> {
    const { maxEntriesPerAppend } = this.ctx.limits;
    if (list.length > maxEntriesPerAppend) {
      throw resourceExhausted(
        `append of ${list.length} entries exceeds the limit of ${maxEntriesPerAppend}`,
      );
    }
    const run = (span: Span) => {
      span.setAttribute("sessiond.entries", list.length);
      // Large parts become blobs, durable before the entries that name them.
      return this.ctx.blobs.withBlobs(this.key.workspace, list, (entries) => {
        const input: AppendInput = {
          entries,
          expectedSeq: opts.expectedSeq,
          expectedLeafId: opts.expectedLeafId,
          handOver: opts.handOver,
        };
        const plan = this.ctx.plan;
        return this.ctx.engine.append(this.key, (log) => planAppend(log, input, plan));
      });
    };
    return tracingEnabled() ? inSpan("store.append", run) : run(NON_RECORDING_SPAN);
  }

  /**
   * Redaction: withholds the content of entries `entryIds` (core/withheld.ts
   * says what each kind keeps) under a marker of who, when and why, durably
   * (the engine replaces their stored form: JSONL rewrites the file,
   * PostgreSQL updates the rows), and tells watchers. All or nothing: an
   * unknown id (NOT_FOUND) or a SessionInfo / Leaf entry (INVALID_ARGUMENT)
   * refuses the whole request, naming it. Entries already withheld are
   * answered as stored and not written again, so a retry is idempotent.
   * Resolves with every entry asked for as it now reads, in seq order.
   */
  async redact(entryIds: readonly string[], opts: RedactOptions = {}): Promise<RedactResult> {
    const by = opts.by ?? "";
    const why = opts.why ?? "";
    if (by.length > MAX_REDACT_BY) {
      throw invalidArgument(`by is ${by.length} characters long (at most ${MAX_REDACT_BY})`);
    }
    if (why.length > MAX_REDACT_WHY) {
      throw invalidArgument(`why is ${why.length} characters long (at most ${MAX_REDACT_WHY})`);
    }
    for (const id of entryIds) checkEntryId(id);
    const marker = withheldMarker(WithheldReason.REDACTED, by, toTimestamp(this.ctx.now()), why);
    const result = await this.ctx.engine.withhold(this.key, (log) =>
      planWithhold((id) => log.get(id), this.key.sessionId, entryIds, marker),
    );
    return { entries: [...result.entries], headSeq: result.headSeq };
  }

  /** Moves the current leaf to an entry id or label (appends a Leaf entry). */
  rewind(target: string, opts: Omit<RewindInput, "target"> = {}): Promise<AppendResult> {
    const input = { ...opts, target };
    return this.ctx.engine.append(this.key, (log) => planRewind(log, input, this.ctx.plan));
  }

  /** Moves the current leaf to the root: empty context, history kept. */
  reset(opts: MoveInput = {}): Promise<AppendResult> {
    return this.ctx.engine.append(this.key, (log) => planReset(log, opts, this.ctx.plan));
  }

  /**
   * Folds the path to the current leaf (or to `atEntryId`) into a
   * SessionState. Unchanged sessions answer from a memo (state-memo.ts): the
   * returned state is shared and must be treated as read-only.
   */
  async state(opts: StateOptions = {}): Promise<SessionState> {
    return (await this.statePage(opts)).state;
  }

  /**
   * One page of a state: the fold with a run of its messages. The first page
   * pins a snapshot (head seq, current leaf, the entry folded to) in its
   * token; every later page is cut from the same fold, whatever was appended
   * in between. Without a count or budget the one page is the whole state.
   */
  async statePage(req: StatePageRequest = {}): Promise<StatePage> {
    const log = await this.ctx.engine.load(this.key);
    const view = req.view === View.HISTORY ? View.HISTORY : View.CONTEXT;
    const fromEnd = req.fromEnd === true;
    let cursor: StateCursor | undefined;
    if (req.pageToken) {
      cursor = decodeStateToken(this.key, req.pageToken);
      if (
        cursor.view !== view ||
        (cursor.fromEnd === true) !== fromEnd ||
        (req.atEntryId !== undefined && req.atEntryId !== cursor.at)
      ) {
        throw invalidArgument(
          "invalid page_token: it was issued for another view, at_entry_id or direction (from_end)",
        );
      }
      this.checkSnapshot(log, cursor, [cursor.leafId, cursor.at]);
    }
    const at = cursor?.at ?? req.atEntryId ?? log.leafId;
    const snapshot = cursor ?? {
      headSeq: log.headSeq,
      leafId: log.leafId,
      at,
      view,
      ...(fromEnd ? { fromEnd: true as const } : {}),
    };
    const state = this.fold(log, { ...snapshot, offset: 0 });
    const messages = state.messages;
    const messageCount = messages.length;
    // A token's place is inside the state: after its first message, before its end.
    if (cursor !== undefined && cursor.offset >= messageCount) throw badPageToken();
    const budget = req.maxBytes ?? Number.POSITIVE_INFINITY;
    // A first page without a count whose known size fits the budget is the
    // whole state, answered unsized (NaN, no known size, never fits).
    const known = cursor === undefined && !req.pageSize ? req.knownSize?.(state) : undefined;
    if ((known ?? Number.NaN) <= budget) return { state, nextPageToken: "", messageCount };
    const fill = { ...req, maxBytes: budget - (req.sizeOfRest?.(state) ?? 0) };
    let start: number;
    let end: number;
    let page: StateMessage[];
    if (fromEnd) {
      end = cursor?.offset ?? messageCount;
      page = fillPage(itemsBefore(messages, end), fill).reverse();
      start = end - page.length;
    } else {
      start = cursor?.offset ?? 0;
      page = fillPage(itemsFrom(messages, start), fill);
      end = start + page.length;
    }
    const next = fromEnd ? start : end;
    const more = fromEnd ? start > 0 : end < messageCount;
    return {
      state: start === 0 && end === messageCount ? state : { ...state, messages: page },
      nextPageToken: more ? encodeStateToken(this.key, { ...snapshot, offset: next }) : "",
      messageCount,
    };
  }

  /** The fold of a cursor's snapshot, memoized (shared, read-only). */
  private fold(log: SessionLog, c: StateCursor): SessionState {
    const target = log.get(c.at);
    if (target === undefined) {
      throw notFound(`entry ${quote(c.at)} not found in session ${quote(this.id)}`);
    }
    if (target.kind.case === "leaf") {
      throw invalidArgument(`entry ${quote(c.at)} is a Leaf entry and has no state`);
    }
    const key = { at: c.at, view: c.view, headSeq: c.headSeq, currentLeafId: c.leafId };
    return memoizedState(log, key, () => {
      const state = foldPath(log.path(c.at), c.view);
      state.headSeq = BigInt(c.headSeq);
      state.currentLeafId = c.leafId;
      return state;
    });
  }

  /**
   * A token's snapshot must still be in the log: `ids` present at or below
   * its head seq. Otherwise the session was deleted and re-created since
   * the first page (a log never loses acknowledged entries).
   */
  private checkSnapshot(log: SessionLog, snapshot: Snapshot, ids: readonly string[]): void {
    const gone =
      snapshot.headSeq > log.headSeq ||
      ids.some((id) => {
        const e = log.get(id);
        return e === undefined || e.seq > snapshot.headSeq;
      });
    if (gone) {
      throw aborted(
        `session ${quote(this.id)} is not the one the page_token was issued for (deleted and re-created?): read again from the first page`,
      );
    }
  }

  /** A page of the raw log: entries with seq > afterSeq. */
  async entries(afterSeq = 0, limit = 0): Promise<EntryPage> {
    const { defaultPageSize, maxPageSize } = this.ctx.limits;
    if (afterSeq < 0 || !Number.isSafeInteger(afterSeq)) {
      throw invalidArgument(`after_seq ${afterSeq} is out of range`);
    }
    if (limit < 0 || !Number.isSafeInteger(limit) || limit > maxPageSize) {
      throw invalidArgument(`limit ${limit} is out of range (max page size ${maxPageSize})`);
    }
    return this.ctx.engine.read(this.key, afterSeq, limit === 0 ? defaultPageSize : limit);
  }

  /**
   * The entries of the given ids, in seq order, each once: a reader that
   * knows an entry's id but not its seq (a link to it) reads it without
   * the tree. NOT_FOUND names the first id not in the session.
   */
  async entriesById(ids: readonly string[]): Promise<EntryPage> {
    const { maxPageSize } = this.ctx.limits;
    if (ids.length > maxPageSize) {
      throw invalidArgument(
        `entry_ids: ${ids.length} ids are more than the max page size ${maxPageSize}`,
      );
    }
    if (ids.includes("")) throw invalidArgument("entry_ids: an id is empty");
    const log = await this.ctx.engine.load(this.key);
    const found = new Map<string, Entry>();
    for (const id of ids) {
      const entry = log.get(id);
      if (entry === undefined) {
        throw notFound(`entry ${quote(id)} not found in session ${quote(this.id)}`);
      }
      found.set(id, entry);
    }
    const entries = [...found.values()].sort((a, b) => Number(a.seq - b.seq));
    return { entries, headSeq: log.headSeq };
  }

  /**
   * Watches this session live: first its entries with seq > `afterSeq`
   * (default 0, the whole log), then each new entry once durable, in seq
   * order, with a heartbeat after `heartbeatMs` without one. Resuming with
   * the seq of the last entry seen misses nothing and repeats nothing. Ends
   * when `signal` aborts or the loop is left (`break`); NOT_FOUND when the
   * session is deleted while watched.
   */
  watch(options: EntryWatchOptions = {}): AsyncGenerator<EntryWatchEvent> {
    return this.ctx.watch.entries(this.key, options);
  }

  /**
   * The same watch, pushed to `sink` as its events come instead of pulled
   * (a server's many idle streams cost a small object each, not a parked
   * generator). Returns how to resume after the sink said stop, and how to
   * close it; the sink's `end` tells of any other ending.
   */
  follow(options: EntryWatchOptions, sink: EntrySink): { resume(): void; close(): void } {
    return this.ctx.watch.follow(this.key, options, sink);
  }

  /** Every entry's shape, with the current path marked: enough to draw the tree. */
  tree(): Promise<SessionTree> {
    return this.treePage();
  }

  /**
   * One page of the tree, in seq order. The first page pins a snapshot
   * (head seq, current leaf) in its token; later pages leave out entries
   * appended since and mark the path to the snapshot's leaf. Without a
   * count or budget the one page is the whole tree.
   */
  async treePage(req: PageRequest<TreeNode> = {}): Promise<TreePage> {
    const log = await this.ctx.engine.load(this.key);
    let cursor: TreeCursor;
    if (req.pageToken) {
      cursor = decodeTreeToken(this.key, req.pageToken);
      this.checkSnapshot(log, cursor, [cursor.leafId]);
    } else {
      cursor = { headSeq: log.headSeq, leafId: log.leafId, afterSeq: 0 };
    }
    const onPath = pathIdsAfter(log.lookup, cursor.leafId, cursor.afterSeq);
    const nodes = fillPage(treeNodes(log, cursor, onPath), req);
    const end = cursor.afterSeq + nodes.length;
    return {
      nodes,
      leafId: cursor.leafId,
      headSeq: cursor.headSeq,
      nextPageToken:
        end < cursor.headSeq ? encodeTreeToken(this.key, { ...cursor, afterSeq: end }) : "",
    };
  }
}

/**
 * Entries as messages: the given array itself when every one already is an
 * Entry (a decoded request), else a new one with the init shapes made.
 */
function messagesOf(entries: EntryInput | readonly EntryInput[]): Entry[] {
  const list = (Array.isArray(entries) ? entries : [entries]) as readonly EntryInput[];
  for (const e of list) {
    // Stryker disable next-line ConditionalExpression: create() returns a message it is given as it is, so mapping every entry through it makes an equal array of the same objects (the test spares the copy)
    if (!isMessage(e, EntrySchema)) {
      return list.map((x) => create(EntrySchema, x as MessageInitShape<typeof EntrySchema>));
    }
  }
  return list as Entry[];
}

/** The tree nodes of a cursor's snapshot from its start on, built as they are taken. */
function* treeNodes(log: SessionLog, c: TreeCursor, onPath: Set<string>): Generator<TreeNode> {
  for (let seq = c.afterSeq + 1; seq <= c.headSeq; seq++) {
    const e = log.at(seq) as Entry;
    yield create(TreeNodeSchema, {
      id: e.id,
      parentId: e.parentId,
      kind: entryKind(e),
      seq: e.seq,
      // Stryker disable next-line ConditionalExpression: only a Label has a `label` field, so any other kind reads undefined as well (and no kindless entry reaches a log: the planners refuse it)
      label: e.kind.case === "label" ? e.kind.value.label : undefined,
      onCurrentPath: onPath.has(e.id),
      role: roleOf(e),
      preview: entryPreview(e),
      timestamp: e.timestamp,
      // Stryker disable next-line ConditionalExpression: only a Leaf has a `leafId` field, so any other kind reads undefined as well (and no kindless entry reaches a log: the planners refuse it)
      leafId: e.kind.case === "leaf" ? e.kind.value.leafId : undefined,
    });
  }
}

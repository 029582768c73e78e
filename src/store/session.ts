import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type SessionMeta,
  type SessionState,
  type TreeNode,
  TreeNodeSchema,
  View,
} from "../../gen/sessiond/v1/session_pb.js";
import { type Expectations, type PlanContext, planAppend } from "../core/append-plan.js";
import { entryKind, entryPreview, roleOf } from "../core/entry.js";
import { invalidArgument, notFound, resourceExhausted } from "../core/errors.js";
import { foldPath } from "../core/fold.js";
import { quote } from "../core/ids.js";
import { type MoveInput, planReset, planRewind, type RewindInput } from "../core/move-plan.js";
import type { AppendResult, EntryPage, SessionKey, StorageEngine } from "../storage/engine.js";
import type { StoreLimits } from "./limits.js";
import { memoizedState } from "./state-memo.js";

/** An entry as callers may give it: a full Entry or its init shape. */
export type EntryInput = Entry | MessageInitShape<typeof EntrySchema>;

export interface AppendOptions extends Expectations {}

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

/** What Session needs from its store (kept narrow so the facade stays a thin layer). */
export interface SessionContext {
  readonly engine: StorageEngine;
  readonly limits: StoreLimits;
  readonly plan: PlanContext;
  meta(key: SessionKey): Promise<SessionMeta>;
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
  async append(
    entries: EntryInput | readonly EntryInput[],
    opts: AppendOptions = {},
  ): Promise<AppendResult> {
    const list = (Array.isArray(entries) ? entries : [entries]).map((e) =>
      create(EntrySchema, e as MessageInitShape<typeof EntrySchema>),
    );
    const { maxEntriesPerAppend } = this.ctx.limits;
    if (list.length > maxEntriesPerAppend) {
      throw resourceExhausted(
        `append of ${list.length} entries exceeds the limit of ${maxEntriesPerAppend}`,
      );
    }
    const input = { entries: list, ...opts };
    return this.ctx.engine.append(this.key, (log) => planAppend(log, input, this.ctx.plan));
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
    const log = await this.ctx.engine.load(this.key);
    const at = opts.atEntryId ?? log.leafId;
    const target = log.get(at);
    if (target === undefined) {
      throw notFound(`entry ${quote(at)} not found in session ${quote(this.id)}`);
    }
    if (target.kind.case === "leaf") {
      throw invalidArgument(`entry ${quote(at)} is a Leaf entry and has no state`);
    }
    const view = opts.view === View.HISTORY ? View.HISTORY : View.CONTEXT;
    return memoizedState(log, at, view, () => {
      const state = foldPath(log.path(at), view);
      state.headSeq = BigInt(log.headSeq);
      state.currentLeafId = log.leafId;
      return state;
    });
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

  /** Every entry's shape, with the current path marked: enough to draw the tree. */
  async tree(): Promise<SessionTree> {
    const log = await this.ctx.engine.load(this.key);
    const onPath = new Set(log.path().map((e) => e.id));
    const nodes = log.entries().map((e) =>
      create(TreeNodeSchema, {
        id: e.id,
        parentId: e.parentId,
        kind: entryKind(e),
        seq: e.seq,
        label: e.kind.case === "label" ? e.kind.value.label : undefined,
        onCurrentPath: onPath.has(e.id),
        role: roleOf(e),
        preview: entryPreview(e),
        timestamp: e.timestamp,
        leafId: e.kind.case === "leaf" ? e.kind.value.leafId : undefined,
      }),
    );
    return { nodes, leafId: log.leafId, headSeq: log.headSeq };
  }
}

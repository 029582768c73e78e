import { toJsonString } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import type { StateMessage } from "../../../gen/sessiond/v1/session_pb.js";
import type {
  AppendRequest,
  GetEntriesRequest,
  SessionService,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { appendResponseOf } from "../../core/codec/append-response-binary.js";
import { invalidArgument } from "../../core/errors.js";
import { anyBilled } from "../../core/usage-rollup.js";
import { type AppendResult, type Session, sessionUsage } from "../../store/index.js";
import { authorizeSession, authorizeSessionFor, Tokens } from "./auth.js";
import type { ServiceDeps } from "./deps.js";
import { ENTRIES_RESERVE_BYTES, entriesResponse } from "./entries-response.js";
import { inlineEntries, inlineExtra, inlineLimit, inlineState } from "./inline-blobs.js";
import { isJsonCodec, requestedBudget, treeNodeSize } from "./page-budget.js";
import { lengthPrefixed } from "./page-fit.js";
import { seqArg } from "./seq-arg.js";
import { stateResponse, stateSizes } from "./state-response.js";
import { watchEntriesResponses } from "./watch-entries.js";

function optionalSeqArg(value: bigint | undefined): number | undefined {
  return value === undefined ? undefined : seqArg(value, "expected_seq");
}

/** The answer of Rewind and Reset: where the leaf is now, and the Leaf entry written. */
function moveResponse(r: AppendResult) {
  return { leafId: r.leafId, headSeq: BigInt(r.headSeq), leafEntryId: r.entries[0]?.id ?? "" };
}

/** GetEntries by entry_ids: a seq range beside them would say two things at once. */
function entriesById(session: Session, req: GetEntriesRequest) {
  if (req.afterSeq !== 0n || req.limit !== 0) {
    throw invalidArgument("GetEntries: entry_ids reads entries by id; leave after_seq and limit 0");
  }
  return session.entriesById(req.entryIds);
}

/**
 * An Append of `req` to `session`: its expectations checked, its entries
 * handed over, and once acknowledged the usage of what it wrote counted
 * (an append without usage takes no extra step).
 */
function appendTo(
  session: Session,
  req: AppendRequest,
  countUsage: ServiceDeps["countUsage"],
): Promise<AppendResult> {
  const appended = session.append(req.entries, {
    expectedLeafId: req.expectedLeafId,
    expectedSeq: optionalSeqArg(req.expectedSeq),
    // The decoded request is this call's alone and dropped once answered.
    handOver: true,
  });
  if (countUsage === undefined || !anyBilled(req.entries)) return appended;
  return appended.then((r) => {
    countUsage(session.workspace, r.write);
    return r;
  });
}

/**
 * An Append served without a handler context (the native gRPC front's own
 * Append, grpc/direct-append.ts): the same checks in the same order as the
 * interceptors and `sessionService(deps).append` (the token, the workspace,
 * the grant, the session, then the append's own rules), given the request's
 * `authorization` header.
 */
export type AppendCall = (
  authorization: string | undefined,
  req: AppendRequest,
) => Promise<AppendResult>;

export function appendCall(deps: ServiceDeps): AppendCall {
  const tokens = new Tokens(deps.config.tokens);
  return (authorization, req) => {
    try {
      const ws = authorizeSessionFor(tokens.grantOf(authorization), req.workspace, req.session);
      // A session the engine holds open needs no turn to be found.
      const open = deps.store.openNow(ws, req.session);
      if (open !== undefined) return appendTo(open, req, deps.countUsage);
      return deps.store
        .open(ws, req.session)
        .then((session) => appendTo(session, req, deps.countUsage));
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/** SessionService over the Session facade. */
export function sessionService(deps: ServiceDeps): ServiceImpl<typeof SessionService> {
  const { store } = deps;
  // Pages of GetEntries, GetTree and GetState fit the largest response
  // connect-node will send, or the smaller one a request asks for.
  const { maxMessageBytes } = deps.config.limits;
  const open = (
    ctx: HandlerContext,
    req: { workspace: string; session: string },
  ): Promise<Session> => store.open(authorizeSession(ctx, req.workspace, req.session), req.session);

  return {
    async append(req, ctx) {
      return appendResponseOf(await appendTo(await open(ctx, req), req, deps.countUsage));
    },

    async rewind(req, ctx) {
      const session = await open(ctx, req);
      const r = await session.rewind(req.target, {
        allowBeforeCompaction: req.allowBeforeCompaction,
        expectedLeafId: req.expectedLeafId,
        expectedSeq: optionalSeqArg(req.expectedSeq),
        entryId: req.entryId,
      });
      return moveResponse(r);
    },

    async reset(req, ctx) {
      const session = await open(ctx, req);
      const r = await session.reset({
        expectedLeafId: req.expectedLeafId,
        expectedSeq: optionalSeqArg(req.expectedSeq),
        entryId: req.entryId,
      });
      return moveResponse(r);
    },

    async getState(req, ctx) {
      const session = await open(ctx, req);
      const json = isJsonCodec(ctx.requestHeader.get("content-type"));
      const maxBytes = requestedBudget(req.maxResponseBytes, maxMessageBytes);
      const sizes = stateSizes(json);
      const limit = inlineLimit(maxBytes);
      const page = await session.statePage({
        atEntryId: req.atEntryId,
        view: req.view,
        fromEnd: req.fromEnd,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        maxBytes,
        ...sizes,
        // Inlined blobs count in the page's size: it is cut so that it fits with them.
        ...(req.inlineBlobs
          ? {
              sizeOf: (m: StateMessage) =>
                sizes.sizeOf(m) + inlineExtra(m.message?.content ?? [], limit, json),
              knownSize: () => undefined,
            }
          : {}),
      });
      const state = req.inlineBlobs
        ? await inlineState(store.blobs, session.workspace, page.state, limit)
        : page.state;
      const response = stateResponse(state, page.nextPageToken, json);
      response.messageCount = BigInt(page.messageCount);
      return response;
    },

    async getEntries(req, ctx) {
      const session = await open(ctx, req);
      const page =
        req.entryIds.length > 0
          ? await entriesById(session, req)
          : await session.entries(seqArg(req.afterSeq, "after_seq"), req.limit);
      const budget = requestedBudget(req.maxResponseBytes, maxMessageBytes, ENTRIES_RESERVE_BYTES);
      const json = isJsonCodec(ctx.requestHeader.get("content-type"));
      const entries = req.inlineBlobs
        ? await inlineEntries(store.blobs, session.workspace, page.entries, budget, json, (e) =>
            json
              ? Buffer.byteLength(toJsonString(EntrySchema, e)) + 1
              : lengthPrefixed(EntrySchema, e).length + 1,
          )
        : page.entries;
      return entriesResponse(entries, page.headSeq, budget, json);
    },

    async getTree(req, ctx) {
      const session = await open(ctx, req);
      const page = await session.treePage({
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        maxBytes: requestedBudget(req.maxResponseBytes, maxMessageBytes),
        sizeOf: treeNodeSize(isJsonCodec(ctx.requestHeader.get("content-type"))),
      });
      return {
        nodes: page.nodes,
        leafId: page.leafId,
        headSeq: BigInt(page.headSeq),
        nextPageToken: page.nextPageToken,
      };
    },

    async redactEntries(req, ctx) {
      const session = await open(ctx, req);
      const r = await session.redact(req.entryIds, { by: req.by, why: req.why });
      return { entries: r.entries, headSeq: BigInt(r.headSeq) };
    },

    getUsage(req, ctx) {
      const workspace = authorizeSession(ctx, req.workspace, req.session);
      return sessionUsage(store, workspace, req.session, {
        prices: deps.config.prices,
        skipSubagents: req.skipSubagents,
      });
    },

    watchEntries(req, ctx) {
      // The responses' generator itself (it opens the session first): every
      // entry sent to every watcher passes through each generator in the chain.
      return watchEntriesResponses(
        deps,
        async () => ({
          session: await open(ctx, req),
          afterSeq: seqArg(req.afterSeq, "after_seq"),
        }),
        ctx.signal,
      );
    },
  };
}

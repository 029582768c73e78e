import { create, type JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { type SessionMeta, SessionMetaSchema } from "../../../gen/sessiond/v1/session_pb.js";
import {
  GetBlobResponseSchema,
  type GetSessionResponse,
  GetSessionResponseSchema,
  ListSessionsResponseSchema,
  ReadShareResponseSchema,
  SearchEntriesResponseSchema,
  SearchHitSchema,
  SortBy,
  SortOrder,
  type StoreService,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import { checkUsageQuery, usageReport } from "../../store/index.js";
import { authorizeSession, authorizeWorkspace, grantKey } from "./auth.js";
import type { ServiceDeps } from "./deps.js";
import { isJsonCodec, requestedBudget } from "./page-budget.js";
import { type Fitted, fitItems, lengthPrefixed } from "./page-fit.js";
import { seqArg } from "./seq-arg.js";
import { watchSessionsResponses } from "./watch-sessions.js";

/**
 * One response per SessionMeta object: the store hands out the same one
 * while the session is unchanged, and the edge encodes a response object
 * once (response-size.ts), so a warm GetSession is answered without
 * building or encoding anything.
 */
const getSessionResponses = new WeakMap<SessionMeta, GetSessionResponse>();

function getSessionResponse(session: SessionMeta): GetSessionResponse {
  let res = getSessionResponses.get(session);
  if (res === undefined) {
    res = create(GetSessionResponseSchema, { session });
    getSessionResponses.set(session, res);
  }
  return res;
}

/**
 * A SessionMeta's encoding, once per object: the store hands out the same
 * one while the session is unchanged, so a warm listing sizes and encodes
 * nothing again.
 */
const metaBytes = new WeakMap<SessionMeta, Uint8Array>();

function encodedMeta(meta: SessionMeta): Uint8Array {
  let bytes = metaBytes.get(meta);
  if (bytes === undefined) {
    bytes = lengthPrefixed(SessionMetaSchema, meta);
    metaBytes.set(meta, bytes);
  }
  return bytes;
}

/**
 * ListSessions and SearchEntries pages are picked by the store, by count,
 * with keyset page tokens only it can make, so a page too big for the
 * response (sessions with very large metadata or titles, page-fit.ts) is
 * read again with the page size that fits: its token then names where the
 * smaller page ends. Should the second read not fit either (the listing
 * changed in between), it goes whole, never cut short of its token.
 */
async function fittedPage<P, T>(
  read: (pageSize: number) => Promise<P>,
  pageSize: number,
  itemsOf: (page: P) => readonly T[],
  fitOf: (items: readonly T[], budget: number) => Fitted,
  budget: number,
): Promise<{ page: P; fit: Fitted }> {
  const first = await read(pageSize);
  const firstFit = fitOf(itemsOf(first), budget);
  if (firstFit.count === itemsOf(first).length) return { page: first, fit: firstFit };
  const page = await read(firstFit.count);
  const pageFit = fitOf(itemsOf(page), budget);
  return {
    page,
    fit:
      pageFit.count === itemsOf(page).length
        ? pageFit
        : fitOf(itemsOf(page), Number.POSITIVE_INFINITY),
  };
}

/** StoreService over the SessionStore: translation of requests, nothing more. */
export function storeService(deps: ServiceDeps): ServiceImpl<typeof StoreService> {
  const { store } = deps;
  const { maxMessageBytes } = deps.config.limits;
  return {
    async createSession(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      const { session, created } = await store.create({
        workspace,
        title: req.title,
        cwd: req.cwd,
        metadata: req.metadata as JsonObject | undefined,
        sessionId: req.sessionId,
        parentSessionId: req.parentSessionId,
        agentType: req.agentType,
        tags: req.tags,
      });
      return { session, created };
    },

    async getSession(req, ctx) {
      const workspace = authorizeSession(ctx, req.workspace, req.session);
      return getSessionResponse(await store.get(workspace, req.session));
    },

    async listSessions(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      const json = isJsonCodec(ctx.requestHeader.get("content-type"));
      const { page, fit } = await fittedPage(
        (pageSize) =>
          store.list({
            workspace,
            parentSessionId: req.parentSessionId,
            pageSize,
            pageToken: req.pageToken,
            order: req.order === SortOrder.OLDEST_FIRST ? "oldest" : "newest",
            filter: req.filter,
            sortBy: req.sortBy === SortBy.UPDATED ? "updated" : "created",
          }),
        req.pageSize,
        (p) => p.sessions,
        (items, budget) => fitItems(SessionMetaSchema, 1, items, budget, json, encodedMeta),
        requestedBudget(req.maxResponseBytes, maxMessageBytes),
      );
      if (json) return page;
      const response = create(ListSessionsResponseSchema, { nextPageToken: page.nextPageToken });
      response.$unknown = fit.fields;
      return response;
    },

    async listWorkspaces(req, ctx) {
      // A token scoped to some workspaces lists those only (the others are not confirmed to exist).
      const grant = ctx.values.get(grantKey);
      const page = await store.listWorkspaces({
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        only: grant.all ? undefined : grant.workspaces,
      });
      return {
        workspaces: page.workspaces.map((w) => ({
          name: w.name,
          sessionCount: BigInt(w.sessionCount),
          subagentSessionCount: BigInt(w.subagentCount),
        })),
        nextPageToken: page.nextPageToken,
      };
    },

    async searchEntries(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      const json = isJsonCodec(ctx.requestHeader.get("content-type"));
      const { page, fit } = await fittedPage(
        (pageSize) =>
          store.search({
            workspace,
            query: req.query,
            filter: req.filter,
            parentSessionId: req.parentSessionId,
            pageSize,
            pageToken: req.pageToken,
            order: req.order === SortOrder.OLDEST_FIRST ? "oldest" : "newest",
            signal: ctx.signal,
          }),
        req.pageSize,
        (p) => p.hits,
        (items, budget) => fitItems(SearchHitSchema, 1, items, budget, json),
        requestedBudget(req.maxResponseBytes, maxMessageBytes),
      );
      if (json) return page;
      const response = create(SearchEntriesResponseSchema, {
        nextPageToken: page.nextPageToken,
        partialSessionIds: page.partialSessionIds,
      });
      response.$unknown = fit.fields;
      return response;
    },

    async deleteSession(req, ctx) {
      const workspace = authorizeSession(ctx, req.workspace, req.session);
      const deletedSessionIds = await store.delete(workspace, req.session, {
        includeSubagents: req.includeSubagents,
        ifHeadSeq:
          req.expectedHeadSeq === undefined
            ? undefined
            : seqArg(req.expectedHeadSeq, "expected_head_seq"),
      });
      return { deletedSessionIds };
    },

    async forkSession(req, ctx) {
      const workspace = authorizeSession(ctx, req.workspace, req.session);
      const session = await store.fork(workspace, req.session, {
        entry: req.entry || undefined,
        title: req.title,
        sessionId: req.sessionId,
      });
      return { session };
    },

    async eraseSessions(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      const rec = await store.erase({
        workspace,
        sessionIds: req.sessionIds,
        tags: Object.keys(req.tags).length > 0 ? req.tags : undefined,
        all: req.all,
        by: req.by,
        why: req.why,
      });
      return {
        sessionIds: [...rec.sessionIds],
        entries: BigInt(rec.entries),
        newlyErased: BigInt(rec.newlyErased),
        auditRecord: JSON.stringify(rec),
      };
    },

    async usageReport(req, ctx) {
      const query = checkUsageQuery(req, authorizeWorkspace(ctx, req.workspace));
      return usageReport(store.engine, query, deps.config.prices);
    },

    async shareSession(req, ctx) {
      const workspace = authorizeSession(ctx, req.workspace, req.session);
      const share = await store.shares.create({
        workspace,
        session: req.session,
        entryId: req.entryId,
        expiresAt: req.expiresAt,
        by: req.by,
        omitToolOutput: req.omitToolOutput,
        omitThinking: req.omitThinking,
      });
      return { share };
    },

    async revokeShare(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      return { share: await store.shares.revoke(workspace, req.token) };
    },

    async listShares(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      return store.shares.list({
        workspace,
        session: req.session,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
    },

    // No auth token (auth.ts lets this one method through): the share token
    // is the secret, and the store reads nothing but that share's path.
    async readShare(req, ctx) {
      const json = isJsonCodec(ctx.requestHeader.get("content-type"));
      const budget = requestedBudget(0, maxMessageBytes);
      const snap = await store.shares.read(req.token, {
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        budgetBytes: json ? Math.floor(budget / 2) : budget,
      });
      const fit = fitItems(EntrySchema, 3, snap.entries, budget, json);
      const response = create(ReadShareResponseSchema, {
        share: snap.share,
        title: snap.title,
        nextPageToken: snap.tokenAfter(fit.count),
      });
      if (json) response.entries = snap.entries.slice(0, fit.count);
      else response.$unknown = fit.fields;
      return response;
    },

    async importSession(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      return store.import(workspace, req.entries, { sessionId: req.sessionId });
    },

    async *watchSessions(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      yield* watchSessionsResponses(deps, workspace, req.afterCursor, ctx.signal);
    },

    async *getBlob(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      const chunks = store.blobs.read(
        workspace,
        req.sha256,
        seqArg(req.offset, "offset"),
        seqArg(req.length, "length"),
      );
      for await (const c of chunks) {
        // A full message: the grpc-js edge encodes stream answers as they are.
        yield create(GetBlobResponseSchema, {
          data: c.data,
          offset: BigInt(c.offset),
          size: BigInt(c.size),
        });
      }
    },

    async putBlob(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      const { received, stored } = await store.blobs.put(
        workspace,
        req.sha256,
        seqArg(req.size, "size"),
        seqArg(req.offset, "offset"),
        req.data,
      );
      return { received: BigInt(received), stored };
    },
  };
}

import { create, type JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import {
  type GetSessionResponse,
  GetSessionResponseSchema,
  SortBy,
  SortOrder,
  type StoreService,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { authorizeSession, authorizeWorkspace } from "./auth.js";
import type { ServiceDeps } from "./deps.js";
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

/** StoreService over the SessionStore: translation of requests, nothing more. */
export function storeService(deps: ServiceDeps): ServiceImpl<typeof StoreService> {
  const { store } = deps;
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
      return store.list({
        workspace,
        parentSessionId: req.parentSessionId,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        order: req.order === SortOrder.OLDEST_FIRST ? "oldest" : "newest",
        filter: req.filter,
        sortBy: req.sortBy === SortBy.UPDATED ? "updated" : "created",
      });
    },

    async searchEntries(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      return store.search({
        workspace,
        query: req.query,
        filter: req.filter,
        parentSessionId: req.parentSessionId,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        order: req.order === SortOrder.OLDEST_FIRST ? "oldest" : "newest",
        signal: ctx.signal,
      });
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

    async importSession(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      return store.import(workspace, req.entries, { sessionId: req.sessionId });
    },

    async *watchSessions(req, ctx) {
      const workspace = authorizeWorkspace(ctx, req.workspace);
      yield* watchSessionsResponses(deps, workspace, req.afterCursor, ctx.signal);
    },
  };
}

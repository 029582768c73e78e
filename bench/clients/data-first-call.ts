/**
 * Rows 5, 6 and 11: the first call to a freshly started server. The HTTP/2
 * connection is opened with a health check first (it touches no session),
 * then the call under test is timed; then optionally `warm` more calls.
 * Args: {url, call: "getState"|"list"|"search", sessionId?, pageSize?, warm?,
 * tags? (list: a filter on tags), query? (search)}.
 * Prints {firstMs, warm: ms[], responseBytes, count, firstId (list: newest
 * session; search: the session of the first hit)}.
 */
import { toBinary } from "@bufbuild/protobuf";
import { GetStateResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import {
  ListSessionsResponseSchema,
  SearchEntriesResponseSchema,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { answer, args, sessiond, timed } from "./data-common.js";

const a = args<{
  url: string;
  call: "getState" | "list" | "search";
  sessionId?: string;
  pageSize?: number;
  warm?: number;
  tags?: Record<string, string>;
  query?: string;
}>();
const c = sessiond(a.url);
await c.health.check({ service: "" });
await c.health.check({ service: "" });

/** The RPC under test, and only it: what its answer weighs is worked out after the timing. */
async function call(): Promise<() => { bytes: number; count: number; firstId?: string }> {
  if (a.call === "getState") {
    const res = await c.session.getState({ session: a.sessionId as string });
    return () => ({
      bytes: toBinary(GetStateResponseSchema, res).length,
      count: res.state?.messages.length ?? 0,
    });
  }
  if (a.call === "search") {
    const res = await c.store.searchEntries({ query: a.query ?? "", pageSize: a.pageSize ?? 0 });
    return () => ({
      bytes: toBinary(SearchEntriesResponseSchema, res).length,
      count: res.hits.length,
      firstId: res.hits[0]?.sessionId,
    });
  }
  const res = await c.store.listSessions({
    pageSize: a.pageSize ?? 100,
    ...(a.tags ? { filter: { tags: a.tags } } : {}),
  });
  return () => ({
    bytes: toBinary(ListSessionsResponseSchema, res).length,
    count: res.sessions.length,
    firstId: res.sessions[0]?.id,
  });
}

const first = await timed(call);
const seen = first.value();
const warm: number[] = [];
for (let i = 0; i < (a.warm ?? 0); i++) warm.push((await timed(call)).ms);
answer({
  firstMs: first.ms,
  warm,
  responseBytes: seen.bytes,
  count: seen.count,
  firstId: seen.firstId,
});

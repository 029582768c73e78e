import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import type {
  SessionFilterSchema,
  SortBy,
  SortOrder,
} from "../../gen/sessiond/v1/store_service_pb.js";
import type { SessiondClient } from "../client/index.js";
import { CliError, intFlag } from "./command.js";

/**
 * The sessions `ls` prints, read in as many ListSessions pages as it takes,
 * so that `--limit` is not bounded by the server's page size. Pages ask for
 * at most the server's default `--max-page-size`; a server configured with
 * a smaller maximum refuses that (INVALID_ARGUMENT), and is then asked for
 * its default page size instead, which it always accepts.
 */

const LARGEST_PAGE = 1000;

export interface SessionList {
  readonly sessions: SessionMeta[];
  /** Sessions beyond these exist (a page token was left, or a page was cut at the limit). */
  readonly more: boolean;
}

/**
 * Up to `limit` sessions (Infinity: all); with `limit` undefined, one page
 * of the server's default size.
 */
export async function listSessionPages(
  client: SessiondClient,
  req: {
    workspace: string;
    parentSessionId: string | undefined;
    order: SortOrder;
    sortBy?: SortBy;
    filter?: MessageInitShape<typeof SessionFilterSchema>;
  },
  limit: number | undefined,
): Promise<SessionList> {
  const sessions: SessionMeta[] = [];
  let largest = LARGEST_PAGE;
  let pageToken = "";
  for (;;) {
    const pageSize = limit === undefined ? 0 : Math.min(limit - sessions.length, largest);
    let page: Awaited<ReturnType<typeof client.store.listSessions>>;
    try {
      page = await client.store.listSessions({ ...req, pageSize, pageToken });
    } catch (err) {
      if (pageSize === 0 || ConnectError.from(err).code !== Code.InvalidArgument) throw err;
      largest = 0;
      continue;
    }
    for (const s of page.sessions) sessions.push(s);
    pageToken = page.nextPageToken;
    const done = limit === undefined || page.sessions.length === 0 || sessions.length >= limit;
    if (pageToken === "" || done) {
      const cut = limit !== undefined && sessions.length > limit;
      return { sessions: cut ? sessions.slice(0, limit) : sessions, more: cut || pageToken !== "" };
    }
  }
}

/** The `limit` for ls's --limit and --all: --limit wins, --all is every session. */
export function pageLimit(limitFlag: string | undefined, all: boolean): number | undefined {
  if (limitFlag !== undefined) {
    const n = intFlag("limit", limitFlag, 0);
    if (n < 1) throw new CliError("--limit must be at least 1 (--all lists every session)", 2);
    return n;
  }
  return all ? Number.POSITIVE_INFINITY : undefined;
}

import {
  createSessiondClient,
  type Entry,
  type Protocol,
  type SessiondClient,
  type SessionMeta,
  type TreeNode,
} from "../client/index.js";
import { type ClientFlagValues, type Connection, connect } from "./client-flags.js";
import { type CliContext, CliError } from "./command.js";
import type { Progress } from "./progress.js";

/**
 * What the HTML and Markdown exports read of a session, through the public
 * API: its metadata (GetSession), its tree (GetTree, whose first page fixes
 * the snapshot: leaf and head seq) and every entry up to that head
 * (GetEntries), with blob parts left as references (BlobRef: hash, size,
 * preview) so that each format decides what to do with the bytes (GetBlob).
 */
export interface SessionSnapshot {
  readonly meta: SessionMeta;
  readonly leafId: string;
  readonly headSeq: bigint;
  readonly nodes: TreeNode[];
  readonly entries: Entry[];
}

/**
 * The CLI's connection, and a client over the same flags that keeps blob
 * references in answers (the shared one puts the parts back).
 */
export function refsConnection(
  values: ClientFlagValues,
  ctx: CliContext,
): Connection & { refs: SessiondClient } {
  const conn = connect(values, ctx);
  const token = values.token ?? ctx.env.token;
  const refs = createSessiondClient({
    baseUrl: conn.server.replace(/\/+$/, ""),
    protocol: (values.protocol ?? "grpc") as Protocol,
    ...(token ? { token } : {}),
    maxMessageBytes: conn.maxMessageBytes,
    blobs: "refs",
  });
  return { ...conn, refs };
}

/** Reads the session's snapshot (see SessionSnapshot). */
export async function readSnapshot(
  client: SessiondClient,
  workspace: string,
  session: string,
  progress?: Progress,
): Promise<SessionSnapshot> {
  const { session: meta } = await client.store.getSession({ workspace, session });
  if (meta === undefined) throw new CliError(`session "${session}": no metadata in the answer`);
  const id = meta.id;
  const first = await client.session.getTree({ workspace, session: id });
  const { leafId, headSeq } = first;
  progress?.setTotal(Number(headSeq) * 2);
  const nodes = [...first.nodes];
  progress?.advance(first.nodes.length);
  for (let token = first.nextPageToken; token !== ""; ) {
    const page = await client.session.getTree({ workspace, session: id, pageToken: token });
    nodes.push(...page.nodes);
    progress?.advance(page.nodes.length);
    token = page.nextPageToken;
  }
  const entries: Entry[] = [];
  let last = 0n;
  while (last < headSeq) {
    const page = await client.session.getEntries({ workspace, session: id, afterSeq: last });
    let count = 0;
    for (const e of page.entries) {
      if (e.seq > headSeq) break;
      entries.push(e);
      last = e.seq;
      count++;
    }
    progress?.advance(count);
    if (count === 0) break;
  }
  return { meta, leafId, headSeq, nodes: nodes.filter((n) => n.seq <= headSeq), entries };
}

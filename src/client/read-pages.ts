import type { MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, Code, ConnectError } from "@connectrpc/connect";
import type { StateMessage } from "../../gen/sessiond/v1/session_pb.js";
import type {
  GetStateRequestSchema,
  GetStateResponse,
  GetTreeRequestSchema,
  GetTreeResponse,
} from "../../gen/sessiond/v1/session_service_pb.js";
import type { SessiondClient } from "./sessiond-client.js";

/**
 * GetTree and GetState answer in pages once a tree or state outgrows one
 * response. These read every page and return one response, as an unpaged
 * call would: all pages come from the snapshot of the first (see the
 * proto), so the result is consistent even while entries are appended.
 * A page_token in `req` is ignored: reading starts at the first page.
 */

/** A page that brings nothing yet promises more would make the loop endless. */
function stuck(method: string): ConnectError {
  return new ConnectError(
    `${method}: the server sent an empty page with a next page token`,
    Code.Internal,
  );
}

function append<T>(to: T[], more: readonly T[]): void {
  for (const item of more) to.push(item);
}

/** Every node of a session's tree: GetTree, page after page, merged. */
export async function readTree(
  client: SessiondClient,
  req: MessageInitShape<typeof GetTreeRequestSchema>,
  opts?: CallOptions,
): Promise<GetTreeResponse> {
  const tree = await client.session.getTree({ ...req, pageToken: "" }, opts);
  while (tree.nextPageToken !== "") {
    const page = await client.session.getTree({ ...req, pageToken: tree.nextPageToken }, opts);
    if (page.nodes.length === 0 && page.nextPageToken !== "") throw stuck("GetTree");
    append(tree.nodes, page.nodes);
    tree.nextPageToken = page.nextPageToken;
  }
  return tree;
}

/**
 * A session's whole state: GetState, page after page, messages merged (in
 * path order also with `fromEnd`, whose pages run backwards).
 */
export async function readState(
  client: SessiondClient,
  req: MessageInitShape<typeof GetStateRequestSchema>,
  opts?: CallOptions,
): Promise<GetStateResponse> {
  const res = await client.session.getState({ ...req, pageToken: "" }, opts);
  /** With fromEnd, the pages before the first, nearest first. */
  const earlier: StateMessage[][] = [];
  while (res.nextPageToken !== "") {
    const page = await client.session.getState({ ...req, pageToken: res.nextPageToken }, opts);
    const more = page.state?.messages ?? [];
    if (more.length === 0 && page.nextPageToken !== "") throw stuck("GetState");
    if (req.fromEnd === true) earlier.push(more);
    else if (res.state !== undefined) append(res.state.messages, more);
    res.nextPageToken = page.nextPageToken;
  }
  if (earlier.length > 0 && res.state !== undefined) {
    const all: StateMessage[] = [];
    for (const run of earlier.reverse()) append(all, run);
    append(all, res.state.messages);
    res.state.messages = all;
  }
  return res;
}

import { EntryKind } from "../../gen/sessiond/v1/session_pb.js";
import { readTree } from "../client/index.js";
import type { Connection } from "./client-flags.js";
import { CliError } from "./command.js";

/**
 * Lets people type the short ids `show` prints. The server takes a full
 * entry id or a label; here a target that is neither, but is the start of
 * exactly one entry id, is expanded to that id. Anything else is passed on
 * unchanged so that the server reports it (NOT_FOUND names the target).
 */
export async function resolveEntryRef(
  conn: Connection,
  session: string,
  ref: string,
): Promise<string> {
  const tree = await readTree(conn.client, { workspace: conn.workspace, session });
  const nodes = tree.nodes.filter((n) => n.kind !== EntryKind.LEAF);
  if (nodes.some((n) => n.id === ref || n.label === ref)) return ref;
  const matches = nodes.filter((n) => n.id.startsWith(ref));
  if (matches.length === 1) return (matches[0] as { id: string }).id;
  if (matches.length > 1) {
    const shown = matches.slice(0, 5).map((n) => n.id);
    throw new CliError(
      `entry prefix "${ref}" is ambiguous: ${matches.length} entries match (${shown.join(", ")}${matches.length > 5 ? ", …" : ""})`,
    );
  }
  return ref;
}

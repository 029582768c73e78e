import { View } from "../../gen/sessiond/v1/session_pb.js";
import {
  GetStateResponseSchema,
  GetTreeResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import { readState, readTree } from "../client/index.js";
import { messageText } from "../core/entry.js";
import { roleName } from "../core/message-text.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, type Connection, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { resolveEntryRef } from "./entry-ref.js";
import { jsonLine, printHelp, println, style } from "./output.js";
import { terminalLine, terminalLines } from "./terminal-text.js";
import { renderTree } from "./tree-render.js";

const HELP = `Usage: sessiond show ID [flags]

Draws the tree of a session: every entry with its short id, kind or role and
a preview; branches drawn with ├─ └─; entries on the current path marked with
* (bold on a terminal); labels in [brackets]; the current leaf marked
"← leaf". Leaf entries (pointer moves written by rewind) are hidden unless
--leaf-moves is given. ID is a full session id or a unique prefix.

Flags:
  --state                 print the CONTEXT view instead (what the LLM gets: role: text)
  --history               print the HISTORY view instead (every message of the path)
  --at ENTRY              with --state / --history: fold up to this entry (id, prefix or label)
  --leaf-moves            also draw Leaf entries
  --full-ids              print whole entry ids
${CLIENT_FLAGS_HELP}

Large sessions are read page by page (one snapshot: entries appended while
reading are left out) and printed whole.

With --json: the GetTree response (or with --state / --history the GetState
response) as proto JSON, one line: every page merged into one response, as
if it had come unpaged (next_page_token empty).`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  state: { type: "boolean" },
  history: { type: "boolean" },
  at: { type: "string" },
  "leaf-moves": { type: "boolean" },
  "full-ids": { type: "boolean" },
} as const;

/** Prints a folded state as "role: text", continuation lines indented. */
async function showState(
  conn: Connection,
  session: string,
  view: View,
  at: string | undefined,
  json: boolean,
  color: boolean,
): Promise<void> {
  const atEntryId = at === undefined ? undefined : await resolveEntryRef(conn, session, at);
  const res = await readState(conn.client, {
    workspace: conn.workspace,
    session,
    view,
    atEntryId,
  });
  if (json) {
    await println(jsonLine(GetStateResponseSchema, res));
    return;
  }
  for (const m of res.state?.messages ?? []) {
    const msg = m.message;
    if (msg === undefined) continue;
    const role = roleName(msg.role);
    const who = msg.toolName ? `${role}(${terminalLine(msg.toolName)})` : role;
    const [first = "", ...more] = terminalLines(messageText(msg));
    await println(`${style.bold(`${who}:`, color)} ${first}`);
    for (const line of more) await println(`  ${line}`);
  }
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("show", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("show", args, ["ID"]) as [string];
  if (v.state && v.history) throw new CliError("show: --state and --history exclude each other", 2);
  if (v.at !== undefined && !v.state && !v.history) {
    throw new CliError("show: --at needs --state or --history", 2);
  }
  const conn = connect(v, ctx);
  const json = v.json ?? false;
  if (v.state || v.history) {
    const view = v.history ? View.HISTORY : View.CONTEXT;
    await showState(conn, session, view, v.at, json, ctx.color);
    return 0;
  }
  const tree = await readTree(conn.client, { workspace: conn.workspace, session });
  if (json) {
    await println(jsonLine(GetTreeResponseSchema, tree));
    return 0;
  }
  const lines = renderTree(tree.nodes, {
    leafId: tree.leafId,
    color: ctx.color,
    showLeafMoves: v["leaf-moves"] ?? false,
    fullIds: v["full-ids"] ?? false,
  });
  for (const line of lines) await println(line);
  return 0;
}

export const show: Command = {
  name: "show",
  help: HELP,
  run,
};

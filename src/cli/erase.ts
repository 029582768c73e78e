import { EraseSessionsResponseSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse } from "./command.js";
import { tagFlags } from "./filter-flags.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond erase (ID... | --tag KEY=VALUE... | --all) --by NAME --why TEXT [flags]

Erases sessions for good: the sessions given by full id, every session
whose tags hold all the --tag pairs, or (--all) every session of the
workspace, each with its subagent sessions. An erased session keeps its
tree (ids, parents, seqs, kinds, times) and its title and tags; every
other entry reads as "[erased]" and its content is gone: an encrypted
session's data key is destroyed, a session in clear has its file
rewritten. Erasing again changes nothing. One audit record (who, when,
what, how many; no content) is written per call.

Flags:
  --tag KEY=VALUE  erase the sessions with this tag (repeat: all of them)
  --all            erase every session of the workspace
  --by NAME        who erases (required; kept in the audit record)
  --why TEXT       why (required; kept in the audit record)
${CLIENT_FLAGS_HELP}

With --json: the EraseSessions response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  tag: { type: "string", multiple: true },
  all: { type: "boolean" },
  by: { type: "string" },
  why: { type: "string" },
} as const;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: ids } = parse("erase", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const tags = tagFlags(v.tag);
  const chosen =
    Number(ids.length > 0) + Number(Object.keys(tags).length > 0) + Number(v.all === true);
  if (chosen !== 1) {
    throw new CliError("erase: give exactly one of: session IDs, --tag KEY=VALUE, or --all", 2);
  }
  if (v.by === undefined || v.by.trim() === "") {
    throw new CliError("erase: --by NAME is required (it goes in the audit record)", 2);
  }
  if (v.why === undefined || v.why.trim() === "") {
    throw new CliError("erase: --why TEXT is required (it goes in the audit record)", 2);
  }
  const conn = connect(v, ctx);
  const res = await conn.client.store.eraseSessions({
    workspace: conn.workspace,
    sessionIds: ids,
    tags,
    all: v.all === true,
    by: v.by,
    why: v.why,
  });
  if (v.json) await println(jsonLine(EraseSessionsResponseSchema, res));
  else {
    for (const id of res.sessionIds) await println(`erased ${id}`);
    await println(
      `${res.sessionIds.length} session(s), ${res.entries} entries erased (${res.newlyErased} now)`,
    );
  }
  return 0;
}

export const erase: Command = {
  name: "erase",
  help: HELP,
  run,
};

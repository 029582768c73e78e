import { SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, type Command, parse, positionals } from "./command.js";
import { resolveEntryRef } from "./entry-ref.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond fork ID [ENTRY] [flags]

Creates a new session from the path root → ENTRY of session ID (ENTRY: an
entry id, a unique prefix of one, or a label; default the current leaf).
Entry ids are kept; the source session is untouched. Prints the new id
alone on stdout (F=$(sessiond fork ID) works); on a terminal, the number of
entries copied and the new leaf go to stderr.

Flags:
  --title T               title of the new session (default: the source's)
  --id NEW_ID             choose the new session's id
${CLIENT_FLAGS_HELP}

With --json: the new session's SessionMeta as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  title: { type: "string" },
  id: { type: "string" },
} as const;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("fork", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session, ref] = positionals("fork", args, ["ID"], ["ENTRY"]) as [string, string?];
  const conn = connect(v, ctx);
  const entry = ref === undefined ? "" : await resolveEntryRef(conn, session, ref);
  const res = await conn.client.store.forkSession({
    workspace: conn.workspace,
    session,
    entry,
    title: v.title,
    sessionId: v.id,
  });
  const meta = res.session;
  if (v.json) {
    if (meta !== undefined) await println(jsonLine(SessionMetaSchema, meta));
    return 0;
  }
  await println(meta?.id ?? "");
  if (ctx.stderrTty) {
    process.stderr.write(`forked ${meta?.entryCount} entries, leaf ${meta?.leafId}\n`);
  }
  return 0;
}

export const fork: Command = {
  name: "fork",
  help: HELP,
  run,
};

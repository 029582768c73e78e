import { DeleteSessionResponseSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, type Command, parse, positionals } from "./command.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond rm ID [flags]

Deletes a session (full id or unique prefix). Its subagent sessions stay,
keeping their parent id, unless --subagents is given. Prints every deleted id.

Flags:
  --subagents             delete its subagent sessions too (recursively)
${CLIENT_FLAGS_HELP}

With --json: the DeleteSession response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  subagents: { type: "boolean" },
} as const;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("rm", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("rm", args, ["ID"]) as [string];
  const conn = connect(v, ctx);
  const res = await conn.client.store.deleteSession({
    workspace: conn.workspace,
    session,
    includeSubagents: v.subagents ?? false,
  });
  if (v.json) await println(jsonLine(DeleteSessionResponseSchema, res));
  else for (const id of res.deletedSessionIds) await println(`deleted ${id}`);
  // The client answers a retried delete that found the session already gone
  // with success and no ids (which ones the lost attempt removed is unknown).
  if (!v.json && res.deletedSessionIds.length === 0) {
    process.stderr.write(`sessiond: ${session} was already deleted (by an earlier attempt)\n`);
  }
  return 0;
}

export const rm: Command = {
  name: "rm",
  help: HELP,
  run,
};

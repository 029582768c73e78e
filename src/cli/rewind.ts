import { RewindResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, type Command, intFlag, parse, positionals } from "./command.js";
import { resolveEntryRef } from "./entry-ref.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond rewind ID TARGET [flags]

Moves the session's current leaf to TARGET (an entry id, a unique prefix of
one as printed by show, or a label). Nothing is deleted: the next append
grows a new branch from TARGET. A target before the compaction floor (the
parent of the newest compaction on the current path) is refused
(failed_precondition) unless --allow-before-compaction is given.

Flags:
  --allow-before-compaction   allow a target before the compaction floor
  --expect-leaf ENTRY         fail (aborted) unless the current leaf is this entry
  --expect-seq N              fail (aborted) unless the head seq is N
${CLIENT_FLAGS_HELP}

With --json: the Rewind response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  "allow-before-compaction": { type: "boolean" },
  "expect-leaf": { type: "string" },
  "expect-seq": { type: "string" },
} as const;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("rewind", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session, ref] = positionals("rewind", args, ["ID", "TARGET"]) as [string, string];
  const expectedSeq =
    v["expect-seq"] === undefined ? undefined : BigInt(intFlag("expect-seq", v["expect-seq"], 0));
  const conn = connect(v, ctx);
  const target = await resolveEntryRef(conn, session, ref);
  const res = await conn.client.session.rewind({
    workspace: conn.workspace,
    session,
    target,
    allowBeforeCompaction: v["allow-before-compaction"] ?? false,
    expectedLeafId: v["expect-leaf"],
    expectedSeq,
  });
  if (v.json) await println(jsonLine(RewindResponseSchema, res));
  else await println(`leaf is now ${res.leafId} (head seq ${res.headSeq})`);
  return 0;
}

export const rewind: Command = {
  name: "rewind",
  help: HELP,
  run,
};

import { SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { tagFlags } from "./filter-flags.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond tag ID [KEY=VALUE...] [--remove KEY...] [flags]

Changes a session's tags (what ls --tag and ListSessions filter on): sets
each KEY=VALUE, removes each --remove KEY, in one SessionInfo entry appended
to the session, so the history keeps every change. Then prints the session's
tags, one KEY=VALUE a line (nothing to change: just prints them).

Flags:
  --remove KEY            remove this tag (repeat for more)
${CLIENT_FLAGS_HELP}

With --json: the SessionMeta as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  remove: { type: "string", multiple: true },
} as const;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("tag", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  // ID, then any number of KEY=VALUE: only the ID is checked as a positional.
  positionals("tag", args.slice(0, 1), ["ID"]);
  const [session, ...pairs] = args as [string, ...string[]];
  const changes = tagFlags(pairs, "a tag");
  for (const key of v.remove ?? []) {
    if (key in changes) throw new CliError(`tag ${JSON.stringify(key)} is both set and removed`, 2);
    // An empty value in a SessionInfo's tags removes the key.
    changes[key] = "";
  }
  const conn = connect(v, ctx);
  if (Object.keys(changes).length > 0) {
    await conn.client.session.append({
      workspace: conn.workspace,
      session,
      entries: [{ kind: { case: "sessionInfo", value: { tags: changes } } }],
    });
  }
  const meta = (await conn.client.store.getSession({ workspace: conn.workspace, session })).session;
  if (v.json) {
    if (meta !== undefined) await println(jsonLine(SessionMetaSchema, meta));
    return 0;
  }
  const tags = meta?.tags ?? {};
  for (const key of Object.keys(tags).sort()) await println(`${key}=${tags[key]}`);
  return 0;
}

export const tag: Command = {
  name: "tag",
  help: HELP,
  run,
};

import type { JsonObject } from "@bufbuild/protobuf";
import { SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { tagFlags } from "./filter-flags.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond new [flags]

Creates a session and prints its id (YYYYMMDD-HHMMSS-<8 hex> unless --id is
given). Creating an existing id with the same parameters returns it again.

Flags:
  --title T               title
  --cwd DIR               working directory to record
  --id ID                 choose the session id
  --parent ID             make it a subagent session of this session (full id)
  --agent-type T          with --parent: the subagent's agent type
  --metadata JSON         free-form metadata (a JSON object)
  --tag KEY=VALUE         a tag to find the session by (repeat for more)
${CLIENT_FLAGS_HELP}

With --json: the SessionMeta as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  title: { type: "string" },
  cwd: { type: "string" },
  id: { type: "string" },
  parent: { type: "string" },
  "agent-type": { type: "string" },
  metadata: { type: "string" },
  tag: { type: "string", multiple: true },
} as const;

function parseMetadata(text: string | undefined): JsonObject | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--metadata must be a JSON object: ${(err as Error).message}`, 2);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError("--metadata must be a JSON object", 2);
  }
  return value as JsonObject;
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("new", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  positionals("new", args, []);
  const metadata = parseMetadata(v.metadata);
  const conn = connect(v, ctx);
  const res = await conn.client.store.createSession({
    workspace: conn.workspace,
    title: v.title,
    cwd: v.cwd,
    sessionId: v.id,
    parentSessionId: v.parent,
    agentType: v["agent-type"],
    metadata,
    tags: tagFlags(v.tag),
  });
  const meta = res.session;
  if (v.json) {
    if (meta !== undefined) await println(jsonLine(SessionMetaSchema, meta));
  } else {
    await println(meta?.id ?? "");
  }
  return 0;
}

export const newCommand: Command = {
  name: "new",
  help: HELP,
  run,
};

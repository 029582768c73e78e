import { create } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { AppendResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, intFlag, parse, positionals } from "./command.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond append ID [TEXT] [flags]

Appends one text message to a session (to the current leaf unless --parent
is given) and prints the stored entry's id and seq. An entry id is chosen
before sending, so the automatic retry after a dropped connection cannot
store the message twice.

Flags:
  --role R                user (default), assistant or tool
  --stdin                 read the text from stdin instead of TEXT
  --id ID                 the entry id (default: a random one)
  --parent ENTRY          attach to this entry instead of the current leaf
  --expect-leaf ENTRY     fail (aborted) unless the current leaf is this entry
  --expect-seq N          fail (aborted) unless the head seq is N
  --tool-call-id ID       for --role tool: the tool call this result answers (required)
  --tool-name NAME        for --role tool: the tool's name
${CLIENT_FLAGS_HELP}

With --json: the Append response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  role: { type: "string" },
  stdin: { type: "boolean" },
  id: { type: "string" },
  parent: { type: "string" },
  "expect-leaf": { type: "string" },
  "expect-seq": { type: "string" },
  "tool-call-id": { type: "string" },
  "tool-name": { type: "string" },
} as const;

const ROLES: Record<string, Role> = {
  user: Role.USER,
  assistant: Role.ASSISTANT,
  tool: Role.TOOL,
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is how shells end input, not part of the message.
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("append", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session, given] = positionals("append", args, ["ID"], ["TEXT"]) as [string, string?];
  const role = ROLES[v.role ?? "user"];
  if (role === undefined) {
    throw new CliError(`append: --role must be user, assistant or tool, got "${v.role}"`, 2);
  }
  if (role === Role.TOOL && v["tool-call-id"] === undefined) {
    throw new CliError("append: --role tool needs --tool-call-id", 2);
  }
  if (role !== Role.TOOL && (v["tool-call-id"] !== undefined || v["tool-name"] !== undefined)) {
    throw new CliError("append: --tool-call-id and --tool-name go with --role tool", 2);
  }
  if (v.stdin && given !== undefined)
    throw new CliError("append: give TEXT or --stdin, not both", 2);
  if (!v.stdin && given === undefined) throw new CliError("append: missing TEXT (or --stdin)", 2);
  const expectedSeq =
    v["expect-seq"] === undefined ? undefined : BigInt(intFlag("expect-seq", v["expect-seq"], 0));
  const conn = connect(v, ctx);
  const text = v.stdin ? await readStdin() : (given as string);
  const entry = create(EntrySchema, {
    id: v.id ?? "",
    parentId: v.parent,
    kind: {
      case: "message",
      value: {
        role,
        content: [{ part: { case: "text", value: text } }],
        toolCallId: v["tool-call-id"],
        toolName: v["tool-name"],
      },
    },
  });
  const res = await conn.client.session.append({
    workspace: conn.workspace,
    session,
    entries: [entry],
    expectedLeafId: v["expect-leaf"],
    expectedSeq,
  });
  if (v.json) {
    await println(jsonLine(AppendResponseSchema, res));
    return 0;
  }
  const stored = res.entries[0];
  const note = res.deduplicated ? " (already stored: nothing written)" : "";
  await println(`appended ${stored?.id} at seq ${stored?.seq}${note}`);
  return 0;
}

export const append: Command = {
  name: "append",
  help: HELP,
  run,
};

import { EntryKind } from "../../gen/sessiond/v1/session_pb.js";
import { RedactEntriesResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { readTree } from "../client/index.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, type Connection, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond redact ID ENTRY... --why TEXT [flags]

Purges the content of the given entries of session ID (a pasted secret)
while keeping the tree: each entry keeps its id, parent, seq, time and
kind, its content is emptied, and it carries who, when and why. Readers,
watchers, search and the context an LLM gets see "[redacted]" instead.
On a data directory the session's file is rewritten crash-safely; on
PostgreSQL the rows are updated. Redacting an entry again changes nothing.
ENTRY is an entry id or a unique prefix of one, as printed by show.
SessionInfo entries (title, tags) and Leaf entries cannot be redacted.

Flags:
  --why TEXT     why (required; kept with each entry, at most 1024 characters)
  --by NAME      who asks (kept with each entry)
${CLIENT_FLAGS_HELP}

With --json: the RedactEntries response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  why: { type: "string" },
  by: { type: "string" },
} as const;

/** Entry ids as typed: a full id, or the unique start of one (else passed on for the server to name). */
async function resolveIds(conn: Connection, session: string, refs: string[]): Promise<string[]> {
  const tree = await readTree(conn.client, { workspace: conn.workspace, session });
  const ids = tree.nodes.filter((n) => n.kind !== EntryKind.LEAF).map((n) => n.id);
  const known = new Set(tree.nodes.map((n) => n.id));
  return refs.map((ref) => {
    if (known.has(ref)) return ref;
    const matches = ids.filter((id) => id.startsWith(ref));
    if (matches.length > 1) {
      throw new CliError(
        `entry prefix "${ref}" is ambiguous: ${matches.length} entries match (${matches.slice(0, 5).join(", ")}${matches.length > 5 ? ", …" : ""})`,
      );
    }
    return matches[0] ?? ref;
  });
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("redact", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("redact", args.slice(0, 2), ["ID", "ENTRY"]) as [string];
  const refs = args.slice(1);
  if (v.why === undefined || v.why.trim() === "") {
    throw new CliError("redact: --why TEXT is required (it is kept with each redacted entry)", 2);
  }
  const conn = connect(v, ctx);
  const entryIds = await resolveIds(conn, session, refs);
  const res = await conn.client.session.redactEntries({
    workspace: conn.workspace,
    session,
    entryIds,
    why: v.why,
    by: v.by ?? "",
  });
  if (v.json) await println(jsonLine(RedactEntriesResponseSchema, res));
  else {
    for (const e of res.entries) {
      await println(`redacted ${e.id} (seq ${e.seq}, ${e.kind.case ?? "no kind"})`);
    }
  }
  return 0;
}

export const redact: Command = {
  name: "redact",
  help: HELP,
  run,
};

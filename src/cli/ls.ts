import { Code, ConnectError } from "@connectrpc/connect";
import { Health, type SessionMeta, SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { SortBy, SortOrder } from "../../gen/sessiond/v1/store_service_pb.js";
import { timestampMillis } from "../core/entry.js";
import { shortId } from "../core/ids.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, type Connection, connect } from "./client-flags.js";
import { CliError, type Command, parse, positionals } from "./command.js";
import { FILTER_FLAGS_HELP, FILTER_OPTIONS, filterOf } from "./filter-flags.js";
import {
  formatTable,
  formatTime,
  jsonLine,
  printHelp,
  println,
  style,
  truncate,
} from "./output.js";
import { listSessionPages, pageLimit } from "./session-pages.js";
import { terminalLine } from "./terminal-text.js";

const HELP = `Usage: sessiond ls [flags]

Lists the sessions of a workspace, newest first: the top-level ones, or with
--parent the subagent sessions of one session, narrowed by the filter flags
(all must hold). Corrupt sessions are listed with health CORRUPT.

Flags:
  --parent ID             list the subagents of this session (full id, short id or
                          prefix; a deleted session by its full id only)
  --all                   every session (default: one page of the server's page size)
  --limit N               the first N sessions, read in as many pages as needed
  --oldest-first          oldest session first
  --sort created|updated  order by creation (default) or by the newest entry
${FILTER_FLAGS_HELP}
${CLIENT_FLAGS_HELP}

Output: a table (short id, title, entries, messages, updated, health); with
--json one SessionMeta (proto JSON, full ids) per line. The short id of a
generated id (YYYYMMDD-HHMMSS-<8 hex>) is its random part; every command
takes it, or a unique prefix of it, like the full id.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  parent: { type: "string" },
  all: { type: "boolean" },
  limit: { type: "string" },
  "oldest-first": { type: "boolean" },
  sort: { type: "string" },
  ...FILTER_OPTIONS,
} as const;

function row(s: SessionMeta): string[] {
  const health =
    s.health === Health.CORRUPT
      ? `CORRUPT${s.healthDetail ? `: ${truncate(terminalLine(s.healthDetail), 60)}` : ""}`
      : "ok";
  return [
    shortId(s.id),
    truncate(terminalLine(s.title ?? ""), 40),
    String(s.entryCount),
    String(s.messageCount),
    formatTime(timestampMillis(s.updatedAt)),
    health,
  ];
}

/**
 * The full id of the --parent session: the server lists by full id, and
 * resolving first lets people pass a short id or a prefix. The subagents of
 * a deleted session stay, but its id no longer resolves: a reference not
 * found is listed as a full id when it has subagents. A prefix of a deleted
 * session cannot be resolved: the error says to give the full id.
 */
async function parentId({ client, workspace }: Connection, ref: string): Promise<string> {
  try {
    return (await client.store.getSession({ workspace, session: ref })).session?.id ?? ref;
  } catch (err) {
    const ce = ConnectError.from(err);
    if (ce.code !== Code.NotFound) throw err;
    const probe = await client.store.listSessions({ workspace, parentSessionId: ref, pageSize: 1 });
    if (probe.sessions.length > 0) return ref;
    throw new ConnectError(
      `${ce.rawMessage} (the subagents of a deleted session are listed by its full id)`,
      Code.NotFound,
    );
  }
}

/** Whether any filter flag was given (the empty listing then says "match"). */
function filtered(v: Record<string, unknown>): boolean {
  return Object.keys(FILTER_OPTIONS).some((k) => v[k] !== undefined);
}

export const ls: Command = {
  name: "ls",
  help: HELP,
  async run(argv, ctx) {
    const { values: v, positionals: args } = parse("ls", argv, OPTIONS);
    if (v.help) return printHelp(HELP);
    positionals("ls", args, []);
    const limit = pageLimit(v.limit, v.all ?? false);
    const conn = connect(v, ctx);
    const { workspace, client } = conn;
    const parentSessionId = v.parent === undefined ? undefined : await parentId(conn, v.parent);
    const order = v["oldest-first"] ? SortOrder.OLDEST_FIRST : SortOrder.NEWEST_FIRST;
    if (v.sort !== undefined && v.sort !== "created" && v.sort !== "updated") {
      throw new CliError(`--sort wants created or updated, got ${JSON.stringify(v.sort)}`, 2);
    }
    const sortBy = v.sort === "updated" ? SortBy.UPDATED : SortBy.CREATED;
    const filter = filterOf(v, Date.now());
    const request = { workspace, parentSessionId, order, sortBy, filter };
    const { sessions, more } = await listSessionPages(client, request, limit);
    // On stderr even when piped: a script must not take one page for the whole list.
    if (more) {
      process.stderr.write(
        `sessiond: ${sessions.length} sessions shown, more exist (--limit N or --all for more)\n`,
      );
    }
    if (v.json) {
      for (const s of sessions) await println(jsonLine(SessionMetaSchema, s));
      return 0;
    }
    if (sessions.length === 0) {
      await println(`no sessions in workspace "${workspace}"${filtered(v) ? " match" : ""}`);
      return 0;
    }
    const lines = formatTable(
      ["ID", "TITLE", "ENTRIES", "MESSAGES", "UPDATED", "HEALTH"],
      sessions.map(row),
      ["left", "left", "right", "right", "left", "left"],
    );
    const [header, ...rest] = lines;
    await println(style.bold(header as string, ctx.color));
    for (const line of rest) await println(line);
    return 0;
  },
};

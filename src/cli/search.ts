import { Code, ConnectError } from "@connectrpc/connect";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type SearchHit,
  SearchHitSchema,
  SortOrder,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { shortId } from "../core/ids.js";
import { roleName } from "../core/message-text.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, type Connection, connect } from "./client-flags.js";
import { CliError, type Command, intFlag, parse } from "./command.js";
import { formatTable, jsonLine, printHelp, println, style, truncate } from "./output.js";
import { terminalLine } from "./terminal-text.js";

const HELP = `Usage: sessiond search QUERY... [flags]

Finds the message entries of a workspace whose text contains every word of
the query, case-insensitive (text, thinking, tool results and tool-call
arguments), newest session first, entries in log order (all branches).
Several arguments are one query: sessiond search deploy failed.

Flags:
  --limit N               the first N hits, read in as many pages as needed
                          (default: one page of the server's page size)
  --oldest-first          oldest session first
${CLIENT_FLAGS_HELP}

Output: a table (short session id, seq, role, snippet); with --json one
SearchHit (proto JSON, full ids) per line. stderr says when more hits exist
than shown, and names sessions that are corrupt (searched up to the damage).`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  limit: { type: "string" },
  "oldest-first": { type: "boolean" },
} as const;

/** Largest page asked for; a server with a smaller maximum is asked for its default instead. */
const LARGEST_PAGE = 1000;

interface Hits {
  hits: SearchHit[];
  more: boolean;
  partial: string[];
}

/** Up to `limit` hits (undefined: one page of the server's default size). */
async function searchPages(
  { client, workspace }: Connection,
  query: string,
  order: SortOrder,
  limit: number | undefined,
): Promise<Hits> {
  const hits: SearchHit[] = [];
  const partial = new Set<string>();
  let largest = LARGEST_PAGE;
  let pageToken = "";
  for (;;) {
    const pageSize = limit === undefined ? 0 : Math.min(limit - hits.length, largest);
    let page: Awaited<ReturnType<typeof client.store.searchEntries>>;
    try {
      page = await client.store.searchEntries({ workspace, query, order, pageSize, pageToken });
    } catch (err) {
      if (pageSize === 0 || ConnectError.from(err).code !== Code.InvalidArgument || largest === 0) {
        throw err;
      }
      largest = 0;
      continue;
    }
    hits.push(...page.hits);
    for (const id of page.partialSessionIds) partial.add(id);
    pageToken = page.nextPageToken;
    if (pageToken === "" || limit === undefined || hits.length >= limit) {
      return { hits: hits.slice(0, limit), more: pageToken !== "", partial: [...partial] };
    }
  }
}

function row(h: SearchHit): string[] {
  return [
    shortId(h.sessionId),
    String(h.seq),
    h.role === Role.UNSPECIFIED ? "" : roleName(h.role),
    truncate(terminalLine(h.snippet), 120),
  ];
}

export const search: Command = {
  name: "search",
  help: HELP,
  async run(argv, ctx) {
    const { values: v, positionals: words } = parse("search", argv, OPTIONS);
    if (v.help) return printHelp(HELP);
    const query = words.join(" ");
    if (query.trim() === "") {
      throw new CliError("search: missing QUERY (see sessiond search --help)", 2);
    }
    let limit: number | undefined;
    if (v.limit !== undefined) {
      limit = intFlag("limit", v.limit, 0);
      if (limit < 1) throw new CliError("--limit must be at least 1", 2);
    }
    const conn = connect(v, ctx);
    const order = v["oldest-first"] ? SortOrder.OLDEST_FIRST : SortOrder.NEWEST_FIRST;
    const { hits, more, partial } = await searchPages(conn, query, order, limit);
    // On stderr even when piped: a script must not take one page for every hit.
    for (const id of partial) {
      process.stderr.write(
        `sessiond: session ${terminalLine(id)} is corrupt: searched up to the damage\n`,
      );
    }
    if (more) {
      process.stderr.write(
        `sessiond: ${hits.length} hits shown, more exist (--limit N for more)\n`,
      );
    }
    if (v.json) {
      for (const h of hits) await println(jsonLine(SearchHitSchema, h));
      return 0;
    }
    if (hits.length === 0) {
      await println(`no entries match in workspace "${conn.workspace}"`);
      return 0;
    }
    const lines = formatTable(["ID", "SEQ", "ROLE", "SNIPPET"], hits.map(row), [
      "left",
      "right",
      "left",
      "left",
    ]);
    const [header, ...rest] = lines;
    await println(style.bold(header as string, ctx.color));
    for (const line of rest) await println(line);
    return 0;
  },
};

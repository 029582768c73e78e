import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  ListSharesResponseSchema,
  RevokeShareResponseSchema,
  type Share,
  ShareSessionResponseSchema,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse } from "./command.js";
import { formatTable, formatTime, jsonLine, printHelp, println } from "./output.js";

const HELP = `Usage: sessiond share SESSION [--entry ID] [--expires 7d] [--omit-tool-output] [--omit-thinking] [flags]
       sessiond share --list [SESSION] [flags]
       sessiond share --revoke TOKEN [flags]

Makes a read-only link to a session's path, from its root to an entry (the
current leaf by default), and prints it: the server's URL + /share/<token>.
Whoever has the link can read that path, and nothing else, in the web
viewer without a token, until it expires or is revoked. The path is read
when the link is opened: a later redaction or erasure shows there.
Deleting or erasing the session revokes its links. The server keeps only a
digest of the token: the link is shown once, here.

Flags:
  --entry ID           share the path up to this entry (default: the current leaf)
  --expires DURATION   how long the link lives: 30m, 12h, 7d (default 7d, at most 365d)
  --omit-tool-output   leave the tool results' content out
  --omit-thinking      leave the thinking parts out
  --by NAME            who shares (kept with the share)
  --list               list the workspace's shares (of SESSION only, if given),
                       newest first, revoked and expired ones too; the ID column
                       is the token's first 12 characters
  --revoke TOKEN       revoke a share, by its token or its ID (from --list)
${CLIENT_FLAGS_HELP}

With --json: the response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  entry: { type: "string" },
  expires: { type: "string" },
  "omit-tool-output": { type: "boolean" },
  "omit-thinking": { type: "boolean" },
  by: { type: "string" },
  list: { type: "boolean" },
  revoke: { type: "string" },
} as const;

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "7d", "12h", "30m" as milliseconds; a usage error otherwise. */
export function durationMs(text: string): number {
  const m = /^(\d{1,6})([mhd])$/.exec(text.trim());
  if (m === null) {
    throw new CliError(`--expires must be a duration like 30m, 12h or 7d, got "${text}"`, 2);
  }
  const ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  if (ms <= 0) throw new CliError(`--expires must be more than 0, got "${text}"`, 2);
  return ms;
}

function stateOf(s: Share, nowMs: number): string {
  if (s.revoked) return "revoked";
  return Number(s.expiresAt?.seconds ?? 0n) * 1000 <= nowMs ? "expired" : "live";
}

const ms = (t: Share["createdAt"]) => (t === undefined ? 0 : Number(t.seconds) * 1000);

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals } = parse("share", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const modes = Number(v.list === true) + Number(v.revoke !== undefined);
  if (modes > 1) throw new CliError("share: give --list or --revoke, not both", 2);
  if (positionals.length > 1) throw new CliError("share: give one session", 2);
  const session = positionals[0];
  const conn = connect(v, ctx);
  const c = conn.client.store;

  if (v.revoke !== undefined) {
    if (session !== undefined) throw new CliError("share --revoke takes a token, not a session", 2);
    const res = await c.revokeShare({ workspace: conn.workspace, token: v.revoke });
    if (v.json) await println(jsonLine(RevokeShareResponseSchema, res));
    else await println(`revoked ${res.share?.token ?? ""} (session ${res.share?.sessionId ?? ""})`);
    return 0;
  }

  if (v.list) {
    const rows: Share[] = [];
    let pageToken = "";
    do {
      const page = await c.listShares({ workspace: conn.workspace, session, pageToken });
      if (v.json) await println(jsonLine(ListSharesResponseSchema, page));
      rows.push(...page.shares);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    if (v.json) return 0;
    if (rows.length === 0) {
      await println("no shares");
      return 0;
    }
    const now = Date.now();
    for (const line of formatTable(
      ["ID", "SESSION", "ENTRY", "CREATED", "EXPIRES", "STATE", "OMITS", "BY"],
      rows.map((s) => [
        s.token,
        s.sessionId,
        s.entryId,
        formatTime(ms(s.createdAt)),
        formatTime(ms(s.expiresAt)),
        stateOf(s, now),
        [s.omitToolOutput ? "tool-output" : "", s.omitThinking ? "thinking" : ""]
          .filter(Boolean)
          .join(",") || "-",
        s.by || "-",
      ]),
    )) {
      await println(line);
    }
    return 0;
  }

  if (session === undefined) throw new CliError("share: give a SESSION (or --list, --revoke)", 2);
  const res = await c.shareSession({
    workspace: conn.workspace,
    session,
    entryId: v.entry,
    expiresAt:
      v.expires === undefined ? undefined : timestampFromMs(Date.now() + durationMs(v.expires)),
    by: v.by ?? "",
    omitToolOutput: v["omit-tool-output"] === true,
    omitThinking: v["omit-thinking"] === true,
  });
  if (v.json) await println(jsonLine(ShareSessionResponseSchema, res));
  else await println(`${conn.server.replace(/\/+$/, "")}${res.share?.path ?? ""}`);
  return 0;
}

export const share: Command = {
  name: "share",
  help: HELP,
  run,
};

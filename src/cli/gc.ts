import { Code, ConnectError } from "@connectrpc/connect";
import { Health, type SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import { SortBy, SortOrder } from "../../gen/sessiond/v1/store_service_pb.js";
import { timestampMillis } from "../core/entry.js";
import { expired, type RetentionPolicy } from "../core/retention.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, intFlag, parse, positionals } from "./command.js";
import { ageFlag } from "./filter-flags.js";
import { printHelp, println } from "./output.js";
import { listSessionPages } from "./session-pages.js";

const HELP = `Usage: sessiond gc (--max-age AGE | --keep N) [flags]

Applies a retention policy to one workspace, over the API, as the server's
background sweep does (serve --retention-*): removes the top-level sessions
not updated for AGE, or ranked past the N most recently updated, each with
its subagent sessions. A session written to after it was judged is kept
(the delete is compare-and-delete on its head seq). Corrupt sessions are
never removed.

Flags:
  --max-age AGE           not updated for this long: 90m, 12h, 30d, 2w
  --keep N                keep only the N most recently updated sessions
  --dry-run               print what would be removed; remove nothing
${CLIENT_FLAGS_HELP}

Output: one line per session: "removed ID (reason)" with its subagents, or
"would remove ID (reason)", or "kept ID: written to since it was judged".
With --json one object per line: {"session","reason","removed":[...]}.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  "max-age": { type: "string" },
  keep: { type: "string" },
  "dry-run": { type: "boolean" },
} as const;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("gc", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  positionals("gc", args, []);
  const policy: RetentionPolicy = {
    maxAgeMs: v["max-age"] === undefined ? undefined : ageFlag(v["max-age"], "--max-age"),
    keepNewest: v.keep === undefined ? undefined : intFlag("keep", v.keep, 0),
  };
  if (policy.keepNewest === 0)
    throw new CliError("--keep wants at least 1 (rm deletes sessions one by one)", 2);
  if (policy.maxAgeMs === undefined && policy.keepNewest === undefined) {
    throw new CliError("gc needs --max-age AGE or --keep N (see sessiond gc --help)", 2);
  }
  const conn = connect(v, ctx);
  const { client, workspace } = conn;
  const { sessions } = await listSessionPages(
    client,
    {
      workspace,
      parentSessionId: undefined,
      order: SortOrder.NEWEST_FIRST,
      sortBy: SortBy.UPDATED,
    },
    Number.POSITIVE_INFINITY,
  );
  const byId = new Map<string, SessionMeta>(sessions.map((s) => [s.id, s]));
  const verdicts = expired(
    sessions.map((s) => ({
      id: s.id,
      updatedMs: timestampMillis(s.updatedAt),
      corrupt: s.health === Health.CORRUPT,
    })),
    policy,
    Date.now(),
  );
  for (const verdict of verdicts) {
    const out = { session: verdict.id, reason: verdict.reason, removed: [] as string[] };
    if (!v["dry-run"]) {
      try {
        const res = await client.store.deleteSession({
          workspace,
          session: verdict.id,
          includeSubagents: true,
          expectedHeadSeq: byId.get(verdict.id)?.headSeq,
        });
        out.removed = res.deletedSessionIds;
      } catch (err) {
        const ce = ConnectError.from(err);
        if (ce.code === Code.Aborted) {
          await println(
            v.json
              ? JSON.stringify({ ...out, kept: "changed" })
              : `kept ${verdict.id}: written to since it was judged`,
          );
          continue;
        }
        // Removed by someone else meanwhile.
        if (ce.code === Code.NotFound) continue;
        throw err;
      }
    }
    if (v.json) await println(JSON.stringify(out));
    else if (v["dry-run"]) await println(`would remove ${verdict.id} (${verdict.reason})`);
    else {
      const subagents = out.removed.slice(1);
      await println(
        `removed ${verdict.id} (${verdict.reason})${subagents.length > 0 ? ` with ${subagents.length} subagent session(s)` : ""}`,
      );
    }
  }
  if (!v.json && verdicts.length === 0)
    await println(`nothing to remove in workspace "${workspace}"`);
  return 0;
}

export const gc: Command = {
  name: "gc",
  help: HELP,
  run,
};

import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { UsageBucket, UsageReportResponseSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { tagFlags, timeFlag } from "./filter-flags.js";
import { jsonLine, printHelp, println } from "./output.js";
import { alignedTable, TOKEN_COLUMNS, totalsCells } from "./usage-table.js";

const HELP = `Usage: sessiond usage-report --since TIME [--until TIME] [flags]

What a workspace's agents used and cost over a window, in one call: every
assistant message with usage whose timestamp is in [--since, --until) (a
window may cut through a session), of every session and subagent holding
the --tag filters, summed per time bucket, and per model and tag values when
asked. A message with a cost set by its caller counts that cost; one without
is priced from the server's price table (serve --prices) or counted as
unpriced. TIME: RFC 3339 (2026-11-30T08:00:00Z), a date (its midnight UTC)
or an age before now (90m, 12h, 7d, 2w).

Flags:
  --since TIME            window start (inclusive; required)
  --until TIME            window end (exclusive); default now
  --bucket hour|day       one row per UTC hour or day (default: the whole window)
  --by-model              one row per model
  --group-by-tag KEY      one row per value of this tag (repeat: up to 8 keys;
                          a session without the tag is in the group "")
  --tag KEY=VALUE         only sessions with this tag (repeat: all of them)
${CLIENT_FLAGS_HELP}

With --json: the UsageReport response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  since: { type: "string" },
  until: { type: "string" },
  bucket: { type: "string" },
  "by-model": { type: "boolean" },
  "group-by-tag": { type: "string", multiple: true },
  tag: { type: "string", multiple: true },
} as const;

const BUCKETS: Record<string, UsageBucket> = {
  hour: UsageBucket.HOUR,
  day: UsageBucket.DAY,
};

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("usage-report", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  positionals("usage-report", args, []);
  const now = Date.now();
  if (v.since === undefined) throw new CliError("usage-report needs --since TIME", 2);
  const since = timeFlag(v.since, "--since", now);
  const until = v.until === undefined ? now : timeFlag(v.until, "--until", now);
  let bucket = UsageBucket.UNSPECIFIED;
  if (v.bucket !== undefined) {
    const b = BUCKETS[v.bucket];
    if (b === undefined) {
      throw new CliError(`--bucket wants hour or day, got ${JSON.stringify(v.bucket)}`, 2);
    }
    bucket = b;
  }
  const keys = v["group-by-tag"] ?? [];
  const conn = connect(v, ctx);
  const r = await conn.client.store.usageReport({
    workspace: conn.workspace,
    start: timestampFromMs(since),
    end: timestampFromMs(until),
    bucket,
    byModel: v["by-model"] === true,
    groupByTags: keys,
    tags: tagFlags(v.tag),
  });
  if (v.json) {
    await println(jsonLine(UsageReportResponseSchema, r));
    return 0;
  }
  const byModel = v["by-model"] === true;
  const head = [
    "from",
    ...(byModel ? ["model"] : []),
    ...keys,
    "sessions",
    ...TOKEN_COLUMNS,
    "cost",
  ];
  const rows = [head];
  for (const row of r.rows) {
    rows.push([
      new Date(timestampMs(row.bucketStart ?? timestampFromMs(since))).toISOString(),
      ...(byModel ? [row.model || "-"] : []),
      ...keys.map((k) => row.tags[k] || "-"),
      String(row.sessions),
      ...totalsCells(row.usage),
    ]);
  }
  rows.push([
    "total",
    ...(byModel ? [""] : []),
    ...keys.map(() => ""),
    String(r.sessions),
    ...totalsCells(r.total),
  ]);
  await println(
    `${conn.workspace}: ${new Date(since).toISOString()} to ${new Date(until).toISOString()}`,
  );
  for (const line of alignedTable(rows, 1 + (byModel ? 1 : 0) + keys.length)) await println(line);
  return 0;
}

export const usageReport: Command = {
  name: "usage-report",
  help: HELP,
  run,
};

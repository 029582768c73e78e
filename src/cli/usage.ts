import type { UsageTotals } from "../../gen/sessiond/v1/session_pb.js";
import { GetUsageResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, type Command, parse, positionals } from "./command.js";
import { jsonLine, printHelp, println } from "./output.js";
import { alignedTable, TOKEN_COLUMNS, totalsCells } from "./usage-table.js";

const HELP = `Usage: sessiond usage ID [flags]

What session ID cost: tokens and cost of its whole tree (abandoned branches
included), of the current path, of each branch (where it leaves the current
path and what it cost beyond it), of its subagent sessions (recursively),
and the total; then the estimated size of the current context. A message
with a cost set by its caller counts that cost; one without is priced from
the server's price table (serve --prices) or counted as unpriced. A
session made by ForkSession counts only what was added to it: the messages
it copied from its source are billed there (shown apart, as "forked").

Flags:
  --skip-subagents  leave the subagent sessions out (a read per subagent)
${CLIENT_FLAGS_HELP}

With --json: the GetUsage response as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  "skip-subagents": { type: "boolean" },
} as const;

/** One row of the table: a label, then the totals' cells. */
function row(label: string, t: UsageTotals | undefined): string[] {
  return [label, ...totalsCells(t)];
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("usage", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("usage", args, ["ID"]) as [string];
  const conn = connect(v, ctx);
  const u = await conn.client.session.getUsage({
    workspace: conn.workspace,
    session,
    skipSubagents: v["skip-subagents"] === true,
  });
  if (v.json) {
    await println(jsonLine(GetUsageResponseSchema, u));
    return 0;
  }
  const rows = [
    ["", ...TOKEN_COLUMNS, "cost"],
    row("tree", u.tree),
    row("current path", u.currentPath),
  ];
  for (const b of u.branches) {
    const label = b.current
      ? `branch ${b.leafEntryId} (current)`
      : `branch ${b.leafEntryId} from ${b.forkEntryId || "-"}`;
    rows.push(row(label, b.usage));
  }
  for (const s of u.subagents) {
    rows.push(row(`subagent ${s.sessionId}${s.agentType ? ` (${s.agentType})` : ""}`, s.usage));
  }
  if (u.subagentsTotal !== undefined) rows.push(row("subagents", u.subagentsTotal));
  rows.push(row("total", u.total));
  if (u.forked !== undefined && u.forked.messages > 0n) {
    rows.push(row("forked (billed in the source)", u.forked));
  }
  await println(`session ${u.sessionId} at seq ${u.headSeq}`);
  for (const line of alignedTable(rows, 1)) await println(line);
  await println(`context: about ${u.contextTokens} tokens`);
  return 0;
}

export const usage: Command = {
  name: "usage",
  help: HELP,
  run,
};

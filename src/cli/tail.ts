import type { ConnectError } from "@connectrpc/connect";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { watchEntriesResumable } from "../client/index.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, type Connection, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, intFlag, parse, positionals } from "./command.js";
import { entryLine } from "./entry-format.js";
import { jsonLine, printHelp, println } from "./output.js";
import { ReconnectNotes } from "./reconnect-notes.js";

const HELP = `Usage: sessiond tail ID [flags]

Prints the raw log of a session, one entry per line: seq, entry id, kind or
role, preview. With -f it keeps following new entries as they are appended
(like tail -f), reconnecting by itself when the server restarts or the
connection drops, without missing or repeating an entry. stderr says when
the connection is lost, every 10 s while reconnecting fails (with the attempt
count and the last error), and when it is back. Stop it with Ctrl-C.

Flags:
  -f, --follow            keep printing new entries
  --after SEQ             start after this seq (default 0: the whole log)
  -n, --lines N           start with the last N entries (instead of --after)
${CLIENT_FLAGS_HELP}

With --json: one Entry (proto JSON) per line.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  follow: { type: "boolean", short: "f" },
  after: { type: "string" },
  lines: { type: "string", short: "n" },
} as const;

/** Where to start: --after, or --lines counted back from the head. */
async function startSeq(conn: Connection, session: string, after?: string, lines?: string) {
  if (after !== undefined && lines !== undefined) {
    throw new CliError("tail: --after and --lines exclude each other", 2);
  }
  if (lines === undefined) return BigInt(intFlag("after", after, 0));
  const n = BigInt(intFlag("lines", lines, 0));
  const meta = await conn.client.store.getSession({ workspace: conn.workspace, session });
  const head = meta.session?.headSeq ?? 0n;
  return head > n ? head - n : 0n;
}

/** Pages GetEntries from `after` to the head at the time of each page. */
async function printLog(conn: Connection, session: string, after: bigint, json: boolean) {
  let last = after;
  for (;;) {
    const page = await conn.client.session.getEntries({
      workspace: conn.workspace,
      session,
      afterSeq: last,
    });
    for (const e of page.entries) {
      await println(json ? jsonLine(EntrySchema, e) : entryLine(e));
      last = e.seq;
    }
    if (page.entries.length === 0 || last >= page.headSeq) return;
  }
}

/** Follows the session until SIGINT / SIGTERM; survives disconnects. */
async function follow(conn: Connection, session: string, after: bigint, json: boolean) {
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const notes = new ReconnectNotes(conn.server);
  const note = (line: string | undefined) => {
    if (line !== undefined) process.stderr.write(`sessiond: ${line}\n`);
  };
  try {
    const stream = watchEntriesResumable(conn.client, {
      workspace: conn.workspace,
      session,
      afterSeq: after,
      signal: abort.signal,
      onReconnect: (err: ConnectError, seq: bigint) => note(notes.failed(err, seq)),
    });
    for await (const msg of stream) {
      note(notes.delivered());
      if (msg.event.case !== "entry") continue;
      const e = msg.event.value;
      await println(json ? jsonLine(EntrySchema, e) : entryLine(e));
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("tail", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("tail", args, ["ID"]) as [string];
  const conn = connect(v, ctx);
  const after = await startSeq(conn, session, v.after, v.lines);
  const json = v.json ?? false;
  if (v.follow) await follow(conn, session, after, json);
  else await printLog(conn, session, after, json);
  return 0;
}

export const tail: Command = {
  name: "tail",
  help: HELP,
  run,
};

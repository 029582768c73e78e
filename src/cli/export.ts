import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, type Command, parse, positionals } from "./command.js";
import { jsonLine, printHelp, write } from "./output.js";
import { Progress } from "./progress.js";

const HELP = `Usage: sessiond export ID [flags] > FILE

Writes the raw log of a session to stdout as JSONL: one Entry (proto JSON)
per line, in seq order, every branch and pointer move included, as it was at
the moment the export started. 'sessiond import' reads this format back.
On a terminal, progress goes to stderr.

Flags:
${CLIENT_FLAGS_HELP}`;

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("export", argv, CLIENT_OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("export", args, ["ID"]) as [string];
  const conn = connect(v, ctx);
  // Progress only when it cannot mix with the data: stderr a terminal, stdout not.
  const showProgress = ctx.stderrTty && !ctx.stdoutTty && !v.json;
  const progress = new Progress(showProgress ? process.stderr : undefined, "export", "entries");
  let last = 0n;
  let head: bigint | undefined;
  try {
    for (;;) {
      const page = await conn.client.session.getEntries({
        workspace: conn.workspace,
        session,
        afterSeq: last,
      });
      // The head of the first page is the snapshot: a busy session still ends.
      if (head === undefined) {
        head = page.headSeq;
        progress.setTotal(Number(head));
      }
      let text = "";
      let count = 0;
      for (const e of page.entries) {
        if (e.seq > head) break;
        text += `${jsonLine(EntrySchema, e)}\n`;
        last = e.seq;
        count++;
      }
      await write(text);
      progress.advance(count);
      if (page.entries.length === 0 || last >= head) break;
    }
  } finally {
    progress.clear();
  }
  return 0;
}

export const exportCommand: Command = {
  name: "export",
  help: HELP,
  run,
};

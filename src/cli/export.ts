import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, intFlag, parse, positionals } from "./command.js";
import { DEFAULT_MAX_INLINE_BYTES, exportHtml } from "./export-html.js";
import { exportMarkdown } from "./export-markdown.js";
import { readSnapshot, refsConnection } from "./export-read.js";
import { viewerDir } from "./export-viewer.js";
import { jsonLine, printHelp, write } from "./output.js";
import { Progress } from "./progress.js";

const HELP = `Usage: sessiond export ID [--format jsonl|html|markdown] [flags] > FILE

Writes a session to stdout in one of three formats:

  jsonl     (default) the raw log: one Entry (proto JSON) per line, in seq
            order, every branch and pointer move included, as it was at the
            moment the export started. 'sessiond import' reads this format back.
  html      one self-contained page: the web viewer's rendering of the
            session (tree, branches, an entry's details, the context at an
            entry), the entries and blobs inline, no network at all.
  markdown  a readable transcript of one path: root to the current leaf, or
            to --leaf ENTRY.

On a terminal, progress goes to stderr.

Flags:
  --format F              jsonl (default), html or markdown
  --leaf ENTRY            markdown: end the path at this entry (default: the current leaf)
  --thinking              markdown: include thinking
  --max-inline-bytes N    html: blobs up to N bytes each are put in the page, larger
                          ones show their preview and a note (default ${DEFAULT_MAX_INLINE_BYTES})
  --ui-dir DIR            html: the built web viewer to embed (default: this package's
                          dist/ui, written by \`npm run build\`; run from the sources of a
                          checkout, the viewer is built from them first)

${CLIENT_FLAGS_HELP}`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  format: { type: "string" },
  leaf: { type: "string" },
  thinking: { type: "boolean" },
  "max-inline-bytes": { type: "string" },
  "ui-dir": { type: "string" },
} as const;

const FORMATS = ["jsonl", "html", "markdown"] as const;
type Format = (typeof FORMATS)[number];

/** Flags that belong to one format: given with another, a usage error. */
const FORMAT_FLAGS: Record<string, Format> = {
  leaf: "markdown",
  thinking: "markdown",
  "max-inline-bytes": "html",
  "ui-dir": "html",
};

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("export", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [session] = positionals("export", args, ["ID"]) as [string];
  const format = (v.format ?? "jsonl") as Format;
  if (!FORMATS.includes(format)) {
    throw new CliError(`--format must be jsonl, html or markdown, got "${v.format}"`, 2);
  }
  for (const [flag, only] of Object.entries(FORMAT_FLAGS)) {
    if (v[flag as keyof typeof v] !== undefined && format !== only) {
      throw new CliError(`--${flag} goes with --format ${only}`, 2);
    }
  }
  // Progress only when it cannot mix with the data: stderr a terminal, stdout not.
  const showProgress = ctx.stderrTty && !ctx.stdoutTty && !v.json;
  const progress = new Progress(showProgress ? process.stderr : undefined, "export", "entries");
  if (format !== "jsonl") {
    const maxInlineBytes = intFlag(
      "max-inline-bytes",
      v["max-inline-bytes"],
      DEFAULT_MAX_INLINE_BYTES,
    );
    const conn = refsConnection(v, ctx);
    try {
      const snap = await readSnapshot(conn.refs, conn.workspace, session, progress);
      if (format === "markdown") {
        await write(exportMarkdown(snap, { leaf: v.leaf, thinking: v.thinking === true }));
      } else {
        const viewer = await viewerDir(v["ui-dir"]);
        try {
          const uiDir = viewer.dir;
          await write(await exportHtml(conn.refs, conn.workspace, snap, { maxInlineBytes, uiDir }));
        } finally {
          viewer.done();
        }
      }
    } finally {
      progress.clear();
    }
    return 0;
  }
  const conn = connect(v, ctx);
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

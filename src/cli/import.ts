import { readFile } from "node:fs/promises";
import { SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { isSessiondError } from "../core/errors.js";
import { planImport } from "../core/import-plan.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { parseEntryLines } from "./entry-lines.js";
import { importFiles, SOURCES, type Source, sourceFiles } from "./import-from.js";
import { OUTCOME_WORDS, sendLog } from "./import-send.js";
import { jsonLine, printHelp, println } from "./output.js";
import { Progress } from "./progress.js";

const HELP = `Usage: sessiond import FILE [flags]
       sessiond import --from pi|claude-code PATH [flags]

Stores an exported log (JSONL, one Entry per line, as written by
'sessiond export'; FILE "-" reads stdin) as a session, exactly: entry ids,
parents, seqs, timestamps, the root with its created_at and forked_from,
and the leaf are kept. The file is checked with the server's rules first;
nothing is created when it is invalid.
The session id is --id, else the one recorded in the file. A large log
goes in parts of about 1 MiB: ImportSession with everything up to its
last pointer move (Leaf entry), Append of the rest. Importing the same log
again changes nothing ("unchanged"); when the server holds the start of it
(an import cut short, or an older export) the rest is added ("extended");
another log under the id is refused (pass --id to import next to it).

--from reads the sessions of another tool, keeping their entry ids, tree
and timestamps:
  pi            a pi session file, or a directory of them (all *.jsonl below
                it), versions 1 to 3
  claude-code   a Claude Code project directory (~/.claude/projects/<dir>):
                its transcripts, their subagent transcripts as subagent
                sessions; or one transcript file
Each session is imported on its own, in parts of about 1 MiB (ImportSession,
then Append), so a transcript larger than a message still goes. Importing
the same files again leaves the sessions unchanged; a session the server
holds the start of (an import cut short, a file that grew since) gets the
rest ("extended"); one whose stored log is not a start of the file's is
refused. Whatever could not be mapped as it was (a damaged
line, an unknown record, an entry the rules refuse, kept as a Custom entry)
is reported on stderr as FILE:LINE. On a terminal, progress goes to stderr.
Exit code 1 when a file or a session was refused.

Flags:
  --id NEW_ID             the new session's id (FILE only)
  --from SOURCE           pi or claude-code
${CLIENT_FLAGS_HELP}

With --json (FILE only): the session's SessionMeta as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  id: { type: "string" },
  from: { type: "string" },
} as const;

async function readInput(file: string): Promise<string> {
  if (file !== "-") {
    try {
      return await readFile(file, "utf8");
    } catch (err) {
      throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("import", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  if (v.from !== undefined) return runFrom(v, args, ctx);
  const [file] = positionals("import", args, ["FILE"]) as [string];
  const conn = connect(v, ctx);
  const source = file === "-" ? "stdin" : file;
  const entries = parseEntryLines(await readInput(file), source);
  if (entries.length === 0) throw new CliError(`${source}: no entries`);
  const first = entries[0]?.kind;
  const sessionId = v.id ?? (first?.case === "sessionInfo" ? first.value.sessionId : "");
  if (!sessionId) throw new CliError(`${source}: the root records no session id; pass --id`);
  try {
    // The whole file, before anything is sent: a large log goes in parts, and
    // a refusal of a later part would leave the start behind.
    planImport(sessionId, entries);
  } catch (err) {
    if (isSessiondError(err)) throw new CliError(`${source}: ${err.message}`);
    throw err;
  }
  const outcome = await sendLog(conn, sessionId, entries);
  if (v.json) {
    const { session } = await conn.client.store.getSession({
      workspace: conn.workspace,
      session: sessionId,
    });
    if (session !== undefined) await println(jsonLine(SessionMetaSchema, session));
    return 0;
  }
  await println(`${OUTCOME_WORDS[outcome]} ${sessionId} (${entries.length} entries)`);
  return 0;
}

async function runFrom(
  v: ReturnType<typeof parse<typeof OPTIONS>>["values"],
  args: string[],
  ctx: CliContext,
): Promise<number> {
  if (!(SOURCES as readonly string[]).includes(v.from as string)) {
    throw new CliError(`--from must be one of ${SOURCES.join(", ")}, got "${v.from}"`, 2);
  }
  if (v.id !== undefined || v.json) {
    throw new CliError("--id and --json apply to a sessiond export, not to --from", 2);
  }
  const [path] = positionals("import", args, ["PATH"]) as [string];
  const conn = connect(v, ctx);
  const files = await sourceFiles(v.from as Source, path);
  const progress = new Progress(
    ctx.stderrTty ? process.stderr : undefined,
    "import",
    "files",
    files.length,
  );
  const t = await importFiles(conn, files, progress);
  await println(
    `${t.imported} imported, ${t.extended} extended, ${t.unchanged} unchanged, ${t.failed} failed, ${t.notes} notes (${files.length} file${files.length === 1 ? "" : "s"})`,
  );
  return t.failed > 0 ? 1 : 0;
}

export const importCommand: Command = {
  name: "import",
  help: HELP,
  run,
};

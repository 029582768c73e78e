import { readFile } from "node:fs/promises";
import { ConnectError } from "@connectrpc/connect";
import { SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import { CLIENT_FLAGS_HELP, CLIENT_OPTIONS, type Connection, connect } from "./client-flags.js";
import { type CliContext, CliError, type Command, intFlag, parse, positionals } from "./command.js";
import { parseEntryLines } from "./entry-lines.js";
import { codeName } from "./error-line.js";
import { batches, planReplay, type ReplayPlan, reRoot } from "./import-replay.js";
import { jsonLine, printHelp, println } from "./output.js";
import { Progress } from "./progress.js";

const HELP = `Usage: sessiond import FILE [flags]

Stores an exported log (JSONL, one Entry per line, as written by
'sessiond export'; FILE "-" reads stdin) as a new session and prints its id.
The file is checked first with the server's rules; nothing is created when
it is invalid. The session id is --id, else the one recorded in the file
(importing next to the original needs --id). On a terminal, progress goes
to stderr.

The server has no import call, so the log is replayed: CreateSession with the
root's title, cwd, metadata, parent session and agent type, then Append of
the other entries in batches (ids, parent ids, timestamps and content kept),
then one Rewind when the log ended on another leaf than its last entry.
Limitations of the replay:
  - the root entry gets a new id; entries below it are re-parented onto it;
  - Leaf entries (pointer moves of rewind / reset) cannot be appended: they
    are skipped and only the final leaf is restored, so seqs are renumbered;
  - created_at and forked_from of the root are not carried over.
If the replay fails half-way, the partial session is deleted again.

Flags:
  --id NEW_ID             the new session's id
  --batch N               entries per Append (default 100)
${CLIENT_FLAGS_HELP}

With --json: the new session's SessionMeta as proto JSON.`;

const OPTIONS = {
  ...CLIENT_OPTIONS,
  id: { type: "string" },
  batch: { type: "string" },
} as const;

/** Bytes per Append, well below the server's default 4 MiB message limit. */
const MAX_BATCH_BYTES = 1024 * 1024;

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

/** Appends the plan's entries below `newRoot` and restores the final leaf. */
async function replay(
  conn: Connection,
  sessionId: string,
  newRoot: string,
  plan: ReplayPlan,
  batchSize: number,
  progress: Progress,
): Promise<void> {
  const { workspace, client } = conn;
  const entries = reRoot(plan.entries, plan.rootId, newRoot);
  let head = 1n;
  let leaf = newRoot;
  for (const batch of batches(entries, batchSize, MAX_BATCH_BYTES)) {
    // expected_seq: nobody else may write into a session being imported.
    const res = await client.session.append({
      workspace,
      session: sessionId,
      entries: batch,
      expectedSeq: head,
    });
    head = res.headSeq;
    leaf = res.leafId;
    progress.advance(batch.length);
  }
  const finalLeaf = plan.finalLeaf === plan.rootId ? newRoot : plan.finalLeaf;
  if (finalLeaf !== leaf) {
    await client.session.rewind({
      workspace,
      session: sessionId,
      target: finalLeaf,
      allowBeforeCompaction: true,
      expectedSeq: head,
    });
  }
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("import", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [file] = positionals("import", args, ["FILE"]) as [string];
  const batchSize = intFlag("batch", v.batch, 100);
  if (batchSize < 1) throw new CliError("--batch must be at least 1", 2);
  const conn = connect(v, ctx);
  const source = file === "-" ? "stdin" : file;
  const plan = planReplay(parseEntryLines(await readInput(file), source), source);
  const sessionId = v.id ?? plan.recordedId;
  if (sessionId === "") throw new CliError(`${source}: the root records no session id; pass --id`);
  const { workspace, client } = conn;
  const info = plan.info;
  const created = await client.store.createSession({
    workspace,
    sessionId,
    title: info.title,
    cwd: info.cwd,
    metadata: info.metadata,
    parentSessionId: info.parentSessionId,
    agentType: info.agentType,
  });
  if (!created.created || created.session === undefined) {
    throw new CliError(
      `session "${sessionId}" already exists in workspace "${workspace}" (pass --id to import under another id)`,
    );
  }
  const newRoot = created.session.leafId;
  const progress = new Progress(
    ctx.stderrTty && !v.json ? process.stderr : undefined,
    "import",
    "entries",
    plan.entries.length,
  );
  try {
    await replay(conn, sessionId, newRoot, plan, batchSize, progress);
  } catch (err) {
    progress.clear();
    // Leave nothing half-imported behind: the file is the source of truth.
    await client.store.deleteSession({ workspace, session: sessionId }).catch(() => undefined);
    const why = err instanceof ConnectError ? `${err.rawMessage} (${codeName(err.code)})` : err;
    throw new CliError(`import into "${sessionId}" failed, partial session removed: ${why}`);
  }
  progress.clear();
  const meta = (await client.store.getSession({ workspace, session: sessionId })).session;
  if (v.json) {
    if (meta !== undefined) await println(jsonLine(SessionMetaSchema, meta));
    return 0;
  }
  const skipped =
    plan.leafMoves > 0 ? ` (${plan.leafMoves} pointer moves skipped, final leaf kept)` : "";
  await println(`imported ${plan.entries.length + 1} entries into ${sessionId}${skipped}`);
  return 0;
}

export const importCommand: Command = {
  name: "import",
  summary: "store an exported JSONL log as a new session",
  help: HELP,
  run,
};

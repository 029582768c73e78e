import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { isSessiondError } from "../core/errors.js";
import { mapClaudeFile, transcriptFileOf } from "../importers/claude-code/claude-project.js";
import type { MappedSession } from "../importers/mapped-session.js";
import { mapPiSession } from "../importers/pi/pi-session.js";
import type { Connection } from "./client-flags.js";
import { CliError } from "./command.js";
import { codeName } from "./error-line.js";
import { OUTCOME_WORDS, sendLog } from "./import-send.js";
import { println } from "./output.js";
import type { Progress } from "./progress.js";
import { terminalLine } from "./terminal-text.js";

/** The tools `import --from` reads. */
export const SOURCES = ["pi", "claude-code"] as const;
export type Source = (typeof SOURCES)[number];

/** The server's refusals of one session (its log), as opposed to failures of the whole run. */
const PER_SESSION = new Set([
  Code.InvalidArgument,
  Code.AlreadyExists,
  Code.NotFound,
  Code.ResourceExhausted,
  Code.FailedPrecondition,
]);

/** Notes printed per file before the rest is only counted. */
const NOTES_SHOWN = 20;

/** One file to import and how to map it (the mapping is src/importers/). */
interface SourceFile {
  path: string;
  map(text: string): MappedSession[];
}

async function jsonlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith(".jsonl")) out.push(join(e.parentPath, e.name));
  }
  return out.sort();
}

/**
 * The files of PATH in import order. pi: the file, or every *.jsonl below
 * the directory. Claude Code: a project directory's transcripts, sessions
 * before subagent transcripts (a subagent's parent must exist first), or
 * one transcript file.
 */
export async function sourceFiles(source: Source, path: string): Promise<SourceFile[]> {
  let isDir: boolean;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  if (source === "pi") {
    const files = isDir ? await jsonlFiles(path) : [path];
    return files.map((p) => ({ path: p, map: (text) => [mapPiSession(text)] }));
  }
  const root = isDir ? path : dirname(path);
  const files = isDir ? await jsonlFiles(path) : [path];
  const classified = files.flatMap((p) => {
    const file = transcriptFileOf(relative(root, p));
    return file === undefined ? [] : [{ path: p, file }];
  });
  if (!isDir && classified.length === 0) {
    throw new CliError(`${basename(path)} is not a Claude Code transcript name (<session>.jsonl)`);
  }
  classified.sort(
    (a, b) => Number(a.file.kind === "subagent") - Number(b.file.kind === "subagent"),
  );
  // Sessions come first and name the types of the subagents they started.
  const agentTypes = new Map<string, string>();
  return classified.map(({ path: p, file }) => ({
    path: p,
    map: (text) => {
      const mapped = mapClaudeFile(file, text, agentTypes);
      for (const [id, type] of mapped.agentTypes) agentTypes.set(id, type);
      return mapped.sessions;
    },
  }));
}

/** Counts of a run, for the last line and the exit code. */
export interface ImportTally {
  imported: number;
  /** Sessions whose start the server held (an import cut short, a file that grew): the rest appended. */
  extended: number;
  unchanged: number;
  failed: number;
  notes: number;
}

/**
 * Maps and imports each file, session by session (import-send.ts): a file the
 * mapping refuses, or a session the server refuses, is reported and the
 * run goes on with the next. Every note of the mapping (a line that could
 * not be mapped as it was) is printed to stderr with its file and line.
 */
export async function importFiles(
  conn: Connection,
  files: readonly SourceFile[],
  progress: Progress,
): Promise<ImportTally> {
  const tally: ImportTally = { imported: 0, extended: 0, unchanged: 0, failed: 0, notes: 0 };
  const say = (line: string) => {
    progress.clear();
    process.stderr.write(`sessiond: ${terminalLine(line)}\n`);
  };
  for (const file of files) {
    let sessions: MappedSession[];
    try {
      sessions = file.map(await readFile(file.path, "utf8"));
    } catch (err) {
      if (!isSessiondError(err) && (err as NodeJS.ErrnoException).code === undefined) throw err;
      say(`${file.path}: ${(err as Error).message}; not imported`);
      tally.failed++;
      progress.advance();
      continue;
    }
    for (const s of sessions) {
      for (const n of s.notes.slice(0, NOTES_SHOWN)) {
        say(
          `${file.path}:${n.line}: ${n.entryId === undefined ? "" : `entry ${n.entryId}: `}${n.reason}`,
        );
      }
      if (s.notes.length > NOTES_SHOWN)
        say(`${file.path}: ${s.notes.length - NOTES_SHOWN} more notes`);
      tally.notes += s.notes.length;
      try {
        const outcome = await sendLog(conn, s.sessionId, s.entries);
        progress.clear();
        tally[outcome]++;
        await println(
          `${OUTCOME_WORDS[outcome]} ${s.sessionId} (${s.entries.length} entries) from ${file.path}`,
        );
      } catch (err) {
        // A refused session is reported and the run goes on; anything else (the server gone, a bad token) ends it.
        if (!(err instanceof ConnectError) || !PER_SESSION.has(err.code)) throw err;
        say(`${file.path}: session ${s.sessionId}: ${err.rawMessage} (${codeName(err.code)})`);
        tally.failed++;
      }
    }
    progress.advance();
  }
  progress.clear();
  return tally;
}

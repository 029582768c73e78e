import { resolve } from "node:path";
import { DEFAULT_DATA_DIR } from "../server/index.js";
import {
  type BlobProblem,
  type BlobUse,
  checkBlobs,
  checkDataDir,
  checkFile,
  type FileReport,
  type FileStatus,
  findSessionFiles,
} from "../storage/jsonl/index.js";
import { type CliContext, CliError, type Command, parse, positionals } from "./command.js";
import { printHelp, println, style } from "./output.js";
import { Progress } from "./progress.js";

const HELP = `Usage: sessiond fsck [flags]

Checks every session file of a JSONL data directory (all workspaces,
subagent sessions too) with the engine's own reader, without a server, and
prints one line per file:

  OK          the log reads cleanly
  TORN TAIL   a crash cut the last append short; the bytes after the last
              good record are ignored and the next writer cuts them off.
              Nothing acknowledged is lost: this is not an error.
  CORRUPT     mid-file corruption at line N: the server answers DATA_LOSS
              for this session (other sessions are unaffected)

then the blobs the sessions reference (large parts, stored once per
workspace): each must be there, of its size, its content hashing to its
name; a line for each that is not:

  MISSING BLOB  a blob an entry references is not in the workspace
  BAD BLOB      it is there but its size or content is wrong

then a summary. Read-only: no file is modified and no lock is taken, so a
session being appended to right now may show a torn tail.
Exit code: 0 when nothing is corrupt, 1 when a file is corrupt or
unreadable or a referenced blob missing or bad.
On a terminal, progress goes to stderr.

Flags:
  --data-dir DIR          the data directory (default ${DEFAULT_DATA_DIR})
  --json                  one JSON object per file, no summary
  -h, --help              show this help`;

const OPTIONS = {
  "data-dir": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const LABELS: Record<FileStatus, string> = {
  ok: "OK",
  torn_tail: "TORN TAIL",
  corrupt: "CORRUPT",
  unreadable: "UNREADABLE",
};

/** One human line for a file's verdict. */
export function reportLine(r: FileReport, color: boolean): string {
  const label = LABELS[r.status].padEnd(10);
  const entries = `${r.entries} ${r.entries === 1 ? "entry" : "entries"}`;
  switch (r.status) {
    case "ok":
      return `${style.green(label, color)}  ${r.name}  (${entries})`;
    case "torn_tail":
      return `${style.yellow(label, color)}  ${r.name}  (${entries}; ${r.tornBytes} bytes after the last good record, line ${r.line}: ${r.reason})`;
    case "corrupt":
      return `${style.red(label, color)}  ${r.name}  line ${r.line}: ${r.reason}`;
    case "unreadable":
      return `${style.red(label, color)}  ${r.name}  ${r.reason}`;
  }
}

/** "4 session files: 2 ok, 1 torn tail, 1 corrupt". */
export function summaryLine(reports: readonly FileReport[]): string {
  const count = (s: FileStatus) => reports.filter((r) => r.status === s).length;
  const parts = [
    `${count("ok")} ok`,
    `${count("torn_tail")} torn tail`,
    `${count("corrupt")} corrupt`,
  ];
  if (count("unreadable") > 0) parts.push(`${count("unreadable")} unreadable`);
  const n = reports.length;
  return `${n} session ${n === 1 ? "file" : "files"}: ${parts.join(", ")}`;
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("fsck", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  positionals("fsck", args, []);
  const dataDir = resolve(v["data-dir"] ?? DEFAULT_DATA_DIR);
  try {
    checkDataDir(dataDir, "readable");
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const files = await findSessionFiles(dataDir);
  const progress = new Progress(
    ctx.stderrTty && !v.json ? process.stderr : undefined,
    "fsck",
    "files",
    files.length,
  );
  const reports: FileReport[] = [];
  const blobs = new Map<string, Map<string, BlobUse>>();
  for (const file of files) {
    let uses = blobs.get(file.workspace);
    if (uses === undefined) {
      uses = new Map();
      blobs.set(file.workspace, uses);
    }
    const r = await checkFile(file, uses);
    reports.push(r);
    progress.clear();
    if (v.json) await println(JSON.stringify(r));
    else await println(reportLine(r, ctx.color));
    progress.advance();
  }
  progress.clear();
  let referenced = 0;
  const problems: BlobProblem[] = [];
  for (const [workspace, uses] of blobs) {
    referenced += uses.size;
    problems.push(...(await checkBlobs(dataDir, workspace, uses)));
  }
  for (const p of problems) {
    if (v.json) await println(JSON.stringify({ blob: p.sha256, ...p }));
    else {
      const label = p.problem === "missing" ? "MISSING BLOB" : "BAD BLOB";
      await println(
        `${style.red(label, ctx.color)}  ${p.workspace}/${p.sha256}  (${p.reason}; referenced by session ${p.sessionId})`,
      );
    }
  }
  if (!v.json) {
    await println(summaryLine(reports));
    if (referenced > 0 || problems.length > 0) {
      const missing = problems.filter((p) => p.problem === "missing").length;
      await println(
        `${referenced} referenced blobs: ${referenced - problems.length} ok, ${missing} missing, ${problems.length - missing} bad`,
      );
    }
  }
  const bad = reports.some((r) => r.status === "corrupt" || r.status === "unreadable");
  return bad || problems.length > 0 ? 1 : 0;
}

export const fsck: Command = {
  name: "fsck",
  help: HELP,
  run,
};

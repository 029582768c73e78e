import type { StorageEngine } from "../storage/engine.js";
import { type CliContext, CliError, type Command, intFlag, parse, positionals } from "./command.js";
import {
  type CopyStatus,
  type CopySummary,
  clean,
  copySessions,
  PROBLEMS,
  type SessionOutcome,
} from "./copy-sessions.js";
import { copyShares } from "./copy-shares.js";
import { describeSpec, openStorage, parseStorageSpec, sameStorage } from "./copy-storage.js";
import { ENCRYPTION_OPTIONS, encryptionOf } from "./encryption-flags.js";
import { printHelp, println, style } from "./output.js";
import { Progress } from "./progress.js";

const HELP = `Usage: sessiond copy --from STORAGE --to STORAGE [flags]

Copies every workspace and every session (top-level and subagent sessions)
from one storage to another, engine to engine, without a server: each
session's entries are written with the same ids, parents, seqs and
timestamps, byte for byte, then read back from the target and compared.

STORAGE is one of:
  DIR, jsonl:DIR          a JSONL data directory (what serve --data-dir uses)
  postgres://user[:password]@host[:port]/db
                          a PostgreSQL database (what serve --storage uses);
                          the schema is created when missing

Sessions already in the target are never overwritten:
  identical to the source        skipped
  a prefix of the source         caught up: the missing entries are appended
                                 (so running copy again after the source grew
                                 copies only what is new)
  anything else                  CONFLICT, left as it is
Share links of the copied workspaces are copied too (the records, never a
token: links made on the source open on the target); a link revoked in the
source since an earlier copy is revoked in the target.
A corrupt source session (DATA_LOSS) is reported as CORRUPT and not copied;
the other sessions are copied anyway. Each session is created all or nothing.

Prints one line per session that needs attention (every session with
--verbose) and a summary. Exit code: 0 when every session is in the target
and verified identical, 1 when any is CONFLICT, CORRUPT, FAILED or MISMATCH
(read back differently), 2 for usage errors. On a terminal, progress goes to
stderr. Safe to run while a server uses the source; stop writers to the
source, then run copy once more, before switching servers over.

Flags:
  --from STORAGE          where to read
  --to STORAGE            where to write
  --workspace W           only this workspace (repeatable; default all)
  --concurrency N         sessions copied at the same time (default 4)
  --keyring FILE          encryption at rest (JSONL or PostgreSQL): opens the source's
                          sealed sessions; with --encrypt-workspaces A,B or --encrypt-all,
                          the sessions copied into those workspaces of the target are
                          sealed under new data keys (as serve does)
  -v, --verbose           a line for every session, not only problems
  --json                  one JSON object per session, then {"summary": ...}
  -h, --help              show this help`;

const OPTIONS = {
  from: { type: "string" },
  to: { type: "string" },
  workspace: { type: "string", multiple: true },
  concurrency: { type: "string" },
  ...ENCRYPTION_OPTIONS,
  verbose: { type: "boolean", short: "v" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const LABELS: Record<CopyStatus, string> = {
  copied: "COPIED",
  identical: "IDENTICAL",
  caught_up: "CAUGHT UP",
  conflict: "CONFLICT",
  corrupt: "CORRUPT",
  failed: "FAILED",
  mismatch: "MISMATCH",
};

/** One human line for a session's outcome. */
export function outcomeLine(o: SessionOutcome, color: boolean): string {
  const label = LABELS[o.status].padEnd(9);
  const name = `${o.workspace}/${o.sessionId}`;
  const n = (k: number) => `${k} ${k === 1 ? "entry" : "entries"}`;
  switch (o.status) {
    case "copied":
      return `${style.green(label, color)}  ${name}  (${n(o.entries)})`;
    case "identical":
      return `${style.green(label, color)}  ${name}  (${n(o.entries)}, already in the target)`;
    case "caught_up":
      return `${style.green(label, color)}  ${name}  (${n(o.entries)}, ${o.written} appended)`;
    default:
      return `${style.red(label, color)}  ${name}  ${o.detail ?? ""}`;
  }
}

/** The summary lines printed at the end. */
export function summaryLines(s: CopySummary, from: string, to: string): string[] {
  const plural = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  return [
    `read ${plural(s.workspaces, "workspace", "workspaces")}, ${plural(s.sessions, "session", "sessions")}, ${plural(s.entries, "entry", "entries")} from ${from}`,
    `${s.copied} copied, ${s.identical} skipped (identical), ${s.caughtUp} caught up, ${s.conflicts} conflicts, ${s.corrupt} corrupt, ${s.failed} failed; ${plural(s.written, "entry", "entries")} written to ${to}`,
    `verified ${plural(s.verifiedSessions, "session", "sessions")} (${plural(s.verifiedEntries, "entry", "entries")}) read back from the target: ${s.mismatches} ${s.mismatches === 1 ? "mismatch" : "mismatches"}`,
  ];
}

async function closeAll(engines: readonly (StorageEngine | undefined)[]): Promise<void> {
  await Promise.allSettled(engines.map((e) => e?.close()));
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { values: v, positionals: args } = parse("copy", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  positionals("copy", args, []);
  if (v.from === undefined || v.to === undefined) {
    throw new CliError("copy: --from and --to are required (see sessiond copy --help)", 2);
  }
  const from = parseStorageSpec("from", v.from);
  const to = parseStorageSpec("to", v.to);
  if (sameStorage(from, to)) {
    throw new CliError(`copy: --from and --to are the same storage (${describeSpec(from)})`, 2);
  }
  const concurrency = intFlag("concurrency", v.concurrency, 4);
  if (concurrency < 1 || concurrency > 64) {
    throw new CliError(`--concurrency must be between 1 and 64, got ${concurrency}`, 2);
  }
  let source: StorageEngine | undefined;
  let target: StorageEngine | undefined;
  let verifier: StorageEngine | undefined;
  try {
    // Both engines seal (JSONL files, PostgreSQL rows): the source is opened, the target seals.
    const sealing = await encryptionOf(v, true);
    const opening = sealing === undefined ? undefined : { keys: sealing.keys, workspaces: [] };
    const keysOf = (_s: typeof from, seal: boolean) => (seal ? sealing : opening);
    source = await openStorage("from", from, {
      readOnly: true,
      concurrency,
      encryption: keysOf(from, false),
    });
    target = await openStorage("to", to, {
      readOnly: false,
      concurrency,
      encryption: keysOf(to, true),
    });
    // A second instance reads the copies back from durable storage, not from the writer's cache.
    verifier = await openStorage("to", to, {
      readOnly: false,
      concurrency,
      encryption: keysOf(to, false),
    });
    const progress = new Progress(
      ctx.stderrTty && !v.json ? process.stderr : undefined,
      "copy",
      "sessions",
    );
    let copiedWorkspaces: readonly string[] = [];
    const summary = await copySessions({
      source,
      target,
      verifier,
      workspaces: v.workspace,
      concurrency,
      onStart: (total, workspaces) => {
        copiedWorkspaces = workspaces;
        progress.setTotal(total);
      },
      onSession: async (o) => {
        if (v.json) {
          progress.clear();
          await println(JSON.stringify(o));
        } else if (v.verbose || PROBLEMS.has(o.status)) {
          progress.clear();
          await println(outcomeLine(o, ctx.color));
        }
        progress.advance();
      },
    });
    progress.clear();
    const shares = await copyShares(source, target, copiedWorkspaces);
    if (v.json) await println(JSON.stringify({ summary: { ...summary, shares } }));
    else {
      for (const line of summaryLines(summary, describeSpec(from), describeSpec(to))) {
        await println(line);
      }
      const revoked = shares.revoked > 0 ? ` (${shares.revoked} revoked there since)` : "";
      await println(
        `share links: ${shares.copied} copied, ${shares.existing} already in the target${revoked}`,
      );
    }
    return clean(summary) ? 0 : 1;
  } finally {
    await closeAll([source, target, verifier]);
  }
}

export const copy: Command = {
  name: "copy",
  help: HELP,
  run,
};

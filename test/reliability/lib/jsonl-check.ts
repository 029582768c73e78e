/**
 * File-level audit of a JSONL data directory for the reliability battery
 * (T1, T4): every session file is judged twice, by the engine's own reader
 * (`checkFile`, what `sessiond fsck` prints) and by an independent pass
 * over its lines (frame + CRC of every line, seq = line number, unique ids,
 * parents earlier in the file), and the acknowledged entries of the test's
 * writers are looked up in what was read. Read-only: nothing is locked,
 * repaired or written, so run it while no writer is active (after a kill
 * -9, or between rounds) or expect torn tails from appends in flight.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { checkFile, type FileStatus, findSessionFiles } from "../../../src/storage/jsonl/index.js";
import { checkFrame, decodePayload } from "../../../src/storage/jsonl/record.js";
import { BIN, REPO } from "../../harness/server.js";

/** What one session file holds, read line by line. */
export interface FileAudit {
  readonly sessionId: string;
  readonly path: string;
  /** The engine reader's verdict (fsck). */
  readonly status: FileStatus;
  readonly statusDetail: string;
  /** Valid records of the prefix the engine would load. */
  readonly entries: number;
  /** Every intact record's entry id → how many times it occurs (after damage too). */
  readonly ids: Map<string, number>;
  /** Entry id → seq, of the valid prefix. */
  readonly seqOf: Map<string, number>;
  /** Independent pass: newline-terminated lines whose frame / CRC / payload is bad. */
  readonly badLines: number;
  /** Intact records whose seq is not their line number. */
  readonly misplacedSeqs: number;
  /** Intact non-root records whose parent is not an earlier record. */
  readonly orphans: number;
  /** Ids occurring more than once among intact records. */
  readonly duplicateIds: number;
  /** Bytes after the last newline (a torn last line), 0 when the file ends with one. */
  readonly unterminatedBytes: number;
  /** The independent pass's own verdict: mid-file damage (a bad line followed by an intact one). */
  readonly midFileDamage: boolean;
}

/** Reads `file` line by line, independently of the engine's reader. */
export async function auditLines(
  path: string,
  sessionId: string,
): Promise<Omit<FileAudit, "status" | "statusDetail" | "entries">> {
  const buf = await readFile(path);
  const ids = new Map<string, number>();
  const seqOf = new Map<string, number>();
  let line = 0;
  let badLines = 0;
  let misplacedSeqs = 0;
  let orphans = 0;
  let unterminatedBytes = 0;
  let firstBad = false;
  let midFileDamage = false;
  // Ids of the current write (records with the `more` marker, then the one
  // without): a write whose last record is missing is not stored, exactly
  // as the engine's reader says (a batch is all or nothing).
  let openWrite: { id: string; seq: number }[] = [];
  for (let pos = 0; pos < buf.length; ) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) {
      unterminatedBytes = buf.length - pos;
      break;
    }
    line++;
    const frame = checkFrame(buf, pos, nl);
    const entry = typeof frame === "string" ? frame : decodePayload(buf, frame);
    pos = nl + 1;
    if (typeof entry === "string") {
      badLines++;
      firstBad = true;
      continue;
    }
    if (firstBad) midFileDamage = true;
    const seq = Number(entry.seq);
    if (seq !== line) misplacedSeqs++;
    if (seq === 1) {
      if (entry.parentId !== undefined || entry.kind.case !== "sessionInfo") orphans++;
    } else if (entry.parentId === undefined || !ids.has(entry.parentId)) {
      orphans++;
    }
    ids.set(entry.id, (ids.get(entry.id) ?? 0) + 1);
    if (firstBad) continue;
    openWrite.push({ id: entry.id, seq });
    if (typeof frame !== "string" && frame.more) continue;
    for (const r of openWrite) if (!seqOf.has(r.id)) seqOf.set(r.id, r.seq);
    openWrite = [];
  }
  return {
    sessionId,
    path,
    ids,
    seqOf,
    badLines,
    misplacedSeqs,
    orphans,
    duplicateIds: [...ids.values()].filter((n) => n > 1).length,
    unterminatedBytes,
    midFileDamage,
  };
}

export interface DirAudit {
  /** By session id (ids are unique per workspace; the battery uses one workspace). */
  readonly files: Map<string, FileAudit>;
  /** Files the engine reader calls corrupt or unreadable, or with mid-file damage, misplaced seqs, orphans or duplicates. */
  readonly corruptFiles: number;
  /** Files ending in a torn tail (harmless: the next writer cuts it off). */
  readonly tornTails: number;
  /** `<file>.broken-*` copies left by torn-tail repairs. */
  readonly brokenFiles: number;
  /** One line per problem found, for the report. */
  readonly problems: string[];
}

/**
 * Audits every session file of `dataDir` (all workspaces, subagents too),
 * or only the sessions named in `only`.
 */
export async function auditDataDir(dataDir: string, only?: ReadonlySet<string>): Promise<DirAudit> {
  const files = new Map<string, FileAudit>();
  const problems: string[] = [];
  let corruptFiles = 0;
  let tornTails = 0;
  const dirs = new Set<string>();
  for (const f of await findSessionFiles(dataDir)) {
    dirs.add(dirname(f.path));
    if (only !== undefined && !only.has(f.sessionId)) continue;
    const report = await checkFile(f);
    const lines = await auditLines(f.path, f.sessionId);
    const audit: FileAudit = {
      ...lines,
      status: report.status,
      statusDetail:
        report.status === "ok" ? "" : `line ${report.line ?? "?"}: ${report.reason ?? "?"}`,
      entries: report.entries,
    };
    files.set(f.sessionId, audit);
    const bad =
      report.status === "corrupt" ||
      report.status === "unreadable" ||
      lines.midFileDamage ||
      lines.misplacedSeqs > 0 ||
      lines.orphans > 0 ||
      lines.duplicateIds > 0;
    if (bad) {
      corruptFiles++;
      problems.push(
        `${f.name}: ${report.status} ${audit.statusDetail}; bad lines ${lines.badLines}, mid-file damage ${lines.midFileDamage}, misplaced seqs ${lines.misplacedSeqs}, orphans ${lines.orphans}, duplicate ids ${lines.duplicateIds}`,
      );
    } else if (report.status === "torn_tail") {
      tornTails++;
    }
  }
  let brokenFiles = 0;
  for (const dir of dirs) {
    brokenFiles += (await readdir(dir)).filter((n) => n.includes(".jsonl.broken-")).length;
  }
  return { files, corruptFiles, tornTails, brokenFiles, problems };
}

export interface LedgerCheck {
  /** Acknowledged entries checked. */
  readonly acked: number;
  /** Acknowledged entries not in their session's valid prefix. */
  readonly lost: number;
  /** Acknowledged or unacknowledged entries stored more than once. */
  readonly duplicated: number;
  /** Acknowledged entries stored at another seq than the one acknowledged. */
  readonly wrongSeq: number;
  readonly problems: string[];
}

/**
 * Checks a ledger of acknowledged entries (session id → entry id → the seq
 * the server acknowledged, or 0 when unknown) and of attempted ones
 * (outcome unknown: present at most once) against an audit.
 */
export function checkLedger(
  audit: DirAudit,
  acked: ReadonlyMap<string, ReadonlyMap<string, number>>,
  attempted: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): LedgerCheck {
  let n = 0;
  let lost = 0;
  let duplicated = 0;
  let wrongSeq = 0;
  const problems: string[] = [];
  for (const [sessionId, entries] of acked) {
    const file = audit.files.get(sessionId);
    for (const [id, seq] of entries) {
      n++;
      const at = file?.seqOf.get(id);
      if (at === undefined) {
        lost++;
        if (problems.length < 20) problems.push(`acked entry ${id} of ${sessionId} is missing`);
        continue;
      }
      if (seq !== 0 && at !== seq) {
        wrongSeq++;
        if (problems.length < 20) {
          problems.push(`acked entry ${id} of ${sessionId} acked at seq ${seq}, stored at ${at}`);
        }
      }
    }
  }
  const seen = new Set<string>();
  const countDup = (sessionId: string, id: string) => {
    const key = `${sessionId}/${id}`;
    if (seen.has(key)) return;
    seen.add(key);
    const times = audit.files.get(sessionId)?.ids.get(id) ?? 0;
    if (times > 1) {
      duplicated++;
      if (problems.length < 20) problems.push(`entry ${id} of ${sessionId} stored ${times} times`);
    }
  };
  for (const [s, entries] of acked) for (const id of entries.keys()) countDup(s, id);
  for (const [s, ids] of attempted) for (const id of ids) countDup(s, id);
  return { acked: n, lost, duplicated, wrongSeq, problems };
}

/** Sum of a figure over the files of an audit. */
export function sumOf(audit: DirAudit, f: (a: FileAudit) => number): number {
  let n = 0;
  for (const a of audit.files.values()) n += f(a);
  return n;
}

/** Runs `sessiond fsck --data-dir DIR`; resolves to its exit code and output. */
export function fsck(dataDir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "fsck", "--data-dir", dataDir], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

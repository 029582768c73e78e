/**
 * Checks shared by T2 (power loss) and T3 (I/O errors): what the workload
 * saw acknowledged, and whether a data directory (a crash image, or the
 * real one after faults) still holds all of it, with no corrupt file.
 *
 * The file-level verdict (`fileVerdict`) is computed here independently of
 * the engine's reader, so that a DATA_LOSS can be told apart: real damage
 * in the file (an invalid line followed by an intact one: "corrupt") or a
 * file that is fine but refused ("false DATA_LOSS").
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { crc32 } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { planAppend } from "../../../src/core/append-plan.js";
import { isSessiondError } from "../../../src/core/errors.js";
import type { SessionLog } from "../../../src/core/session-log.js";
import type { SessionKey } from "../../../src/storage/engine.js";
import { JsonlEngine, type JsonlEngineOptions } from "../../../src/storage/jsonl/jsonl-engine.js";
import { sessionPath, sessionsDir } from "../../../src/storage/jsonl/paths.js";

export const WS = "default";

export interface AckedSession {
  /** The session had at least this many entries when acknowledged (a fork's copies). */
  minHead: number;
  /** Acknowledged entries: id → seq. */
  readonly entries: Map<string, number>;
}

/** Everything acknowledged to the workload. */
export class Acks {
  readonly sessions = new Map<string, AckedSession>();

  session(id: string, minHead = 1): void {
    const s = this.sessions.get(id);
    if (s === undefined) this.sessions.set(id, { minHead, entries: new Map() });
    else s.minHead = Math.max(s.minHead, minHead);
  }

  entry(sessionId: string, entryId: string, seq: number): void {
    this.session(sessionId);
    (this.sessions.get(sessionId) as AckedSession).entries.set(entryId, seq);
  }

  /** Acknowledged sessions plus entries. */
  get count(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += 1 + s.entries.size;
    return n;
  }
}

/** A USER text message with a chosen id. */
export function message(id: string, text = `message ${id}`) {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

const FRAME = /^\{"seq":([1-9][0-9]{0,15}),"crc":"([0-9a-f]{8})","entry":(.*)\}$/s;

/** Seq of an intact line (frame and CRC right), or undefined. */
function intactSeq(line: string): number | undefined {
  const m = FRAME.exec(line);
  if (m === null) return undefined;
  const seq = m[1] as string;
  const payload = Buffer.from(m[3] as string, "latin1");
  const crc = crc32(payload, crc32(seq)).toString(16).padStart(8, "0");
  return crc === m[2] ? Number(seq) : undefined;
}

/**
 * The file's state by the format's rules, computed without the engine:
 * "ok", "torn" (damage running to the end with no intact line after it) or
 * "corrupt" (an intact line after the damage, an intact line in the wrong
 * place, or no valid first record).
 */
export function fileVerdict(buf: Buffer): "ok" | "torn" | "corrupt" {
  const text = buf.toString("latin1");
  const lines = text.split("\n");
  const partial = lines.pop() as string;
  let bad = -1;
  for (let i = 0; i < lines.length; i++) {
    if (intactSeq(lines[i] as string) !== i + 1) {
      bad = i;
      break;
    }
  }
  if (bad < 0) {
    if (lines.length === 0) return "corrupt";
    return partial === "" ? "ok" : "torn";
  }
  if (bad === 0) return "corrupt";
  if (intactSeq(lines[bad] as string) !== undefined) return "corrupt";
  for (let i = bad + 1; i < lines.length; i++) {
    if (intactSeq(lines[i] as string) !== undefined) return "corrupt";
  }
  return "torn";
}

export interface CheckResult {
  sessions: number;
  /** Acknowledged entries (and sessions) not recovered, or not at their seq. */
  lost: number;
  lostSessions: number;
  /** DATA_LOSS on a file that really is corrupt. */
  corrupt: number;
  /** DATA_LOSS on a file that is fine by the format's rules. */
  falseDataLoss: number;
  /** Other failures (a raw error, an append after recovery that failed). */
  errors: number;
  /** Torn tails cut by the appends after recovery (.broken files made). */
  repaired: number;
  /** After the appends and a reload: acknowledged entries missing, sessions failing with DATA_LOSS. */
  lostAfter: number;
  corruptAfter: number;
  details: string[];
}

export function emptyCheck(): CheckResult {
  return {
    sessions: 0,
    lost: 0,
    lostSessions: 0,
    corrupt: 0,
    falseDataLoss: 0,
    errors: 0,
    repaired: 0,
    lostAfter: 0,
    corruptAfter: 0,
    details: [],
  };
}

export function addCheck(into: CheckResult, r: CheckResult): void {
  for (const k of Object.keys(into) as (keyof CheckResult)[]) {
    if (k === "details") {
      if (into.details.length < 50)
        into.details.push(...r.details.slice(0, 50 - into.details.length));
    } else into[k] += r[k];
  }
}

export function checkViolations(r: CheckResult): number {
  return r.lost + r.corrupt + r.falseDataLoss + r.errors + r.lostAfter + r.corruptAfter;
}

function fileOf(dataDir: string, id: string): string | undefined {
  for (const sub of [false, true]) {
    const p = sessionPath(dataDir, WS, id, sub);
    if (fs.existsSync(p)) return p;
  }
  return undefined;
}

function brokenCount(dataDir: string): number {
  let n = 0;
  for (const sub of [false, true]) {
    try {
      n += fs
        .readdirSync(sessionsDir(dataDir, WS, sub))
        .filter((f) => f.includes(".broken-")).length;
    } catch {
      // no such directory
    }
  }
  return n;
}

/** Missing acknowledged entries of `acked` in `log` (wrong seq counts as missing). */
function missing(log: SessionLog, acked: AckedSession): string[] {
  const out: string[] = [];
  for (const [id, seq] of acked.entries) {
    const e = log.get(id);
    if (e === undefined || Number(e.seq) !== seq) out.push(`${id}@${seq}`);
  }
  if (log.headSeq < acked.minHead) out.push(`head ${log.headSeq} < ${acked.minHead}`);
  return out;
}

/**
 * Opens `dataDir` with the real file system and checks: every acknowledged
 * session and entry is there at its seq, no session fails with DATA_LOSS.
 * With `appendAfter`, then appends twice to every readable session (a torn
 * tail must be repaired first), reloads with a fresh engine and checks again.
 */
export async function checkDataDir(
  dataDir: string,
  acks: Acks,
  o: { tag: string; appendAfter: boolean; debug?: JsonlEngineOptions["debug"] },
): Promise<CheckResult> {
  const r = emptyCheck();
  const note = (d: string) => {
    if (r.details.length < 10) r.details.push(`${o.tag}: ${d}`);
  };
  const key = (sessionId: string): SessionKey => ({ workspace: WS, sessionId });
  const engine = new JsonlEngine({ dataDir, debug: o.debug, leaseIdleMs: 0 });
  const logs = new Map<string, SessionLog>();
  /** Sessions that had every acknowledged entry at the first load. */
  const whole = new Set<string>();
  try {
    const ids = new Set(await engine.listIds(WS));
    for (const id of acks.sessions.keys()) ids.add(id);
    r.sessions = ids.size;
    for (const id of ids) {
      const acked = acks.sessions.get(id);
      try {
        const log = await engine.load(key(id));
        logs.set(id, log);
        if (acked === undefined) continue;
        const gone = missing(log, acked);
        if (gone.length === 0) whole.add(id);
        r.lost += gone.length;
        if (gone.length > 0)
          note(`session ${id}: acked entries not recovered: ${gone.slice(0, 5).join(", ")}`);
      } catch (err) {
        if (acked !== undefined) r.lost += 1 + acked.entries.size;
        if (isSessiondError(err, "NOT_FOUND")) {
          if (acked !== undefined) {
            r.lostSessions++;
            note(`acked session ${id} (${acked.entries.size} acked entries) not found`);
          }
        } else if (isSessiondError(err, "DATA_LOSS")) {
          const file = fileOf(dataDir, id);
          const verdict = file === undefined ? "missing" : fileVerdict(fs.readFileSync(file));
          if (verdict === "corrupt") r.corrupt++;
          else r.falseDataLoss++;
          note(`session ${id}: ${err.message} (file verdict: ${verdict})`);
        } else {
          r.errors++;
          note(`session ${id}: unexpected ${(err as Error).message}`);
        }
      }
    }
    if (!o.appendAfter) return r;
    const before = brokenCount(dataDir);
    const after = new Acks();
    for (const id of logs.keys()) {
      for (const n of [1, 2]) {
        const entryId = `after${n}-${id}`;
        try {
          const res = await engine.append(key(id), (log) =>
            planAppend(log, { entries: [message(entryId)] }),
          );
          for (const e of res.entries) after.entry(id, e.id, Number(e.seq));
        } catch (err) {
          r.errors++;
          note(`append after recovery to ${id} failed: ${(err as Error).message}`);
        }
      }
    }
    r.repaired = brokenCount(dataDir) - before;
    await engine.close();
    const again = new JsonlEngine({ dataDir, leaseIdleMs: 0 });
    try {
      for (const id of logs.keys()) {
        try {
          const log = await again.load(key(id));
          const gone = [
            ...(whole.has(id) ? missing(log, acks.sessions.get(id) as AckedSession) : []),
            ...missing(log, after.sessions.get(id) ?? { minHead: 0, entries: new Map() }),
          ];
          r.lostAfter += gone.length;
          if (gone.length > 0)
            note(`after the appends, session ${id} lacks ${gone.slice(0, 5).join(", ")}`);
        } catch (err) {
          if (isSessiondError(err, "DATA_LOSS")) r.corruptAfter++;
          else r.errors++;
          note(`after the appends, session ${id}: ${(err as Error).message}`);
        }
      }
    } finally {
      await again.close();
    }
  } catch (err) {
    r.errors++;
    note(`check failed: ${(err as Error).stack ?? String(err)}`);
  } finally {
    await engine.close().catch(() => undefined);
  }
  return r;
}

/** A fresh directory for one run under `base`; removed by `removeDir`. */
export function freshDir(base: string, name: string): string {
  const dir = path.join(base, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A tmpfs when there is one (no real fsync is made: the model decides what is durable). */
export function scratchBase(prefix: string): string {
  const root = fs.existsSync("/dev/shm") ? "/dev/shm" : (process.env.TMPDIR ?? "/tmp");
  return fs.mkdtempSync(path.join(root, prefix));
}

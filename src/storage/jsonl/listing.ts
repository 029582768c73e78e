import type { SessionLog } from "../../core/session-log.js";
import type { SessionKey, SessionRecord } from "../engine.js";
import { recordOf } from "../session-record.js";
import { copyUsage, type SessionUsage } from "../usage-report.js";
import type { FileChanges } from "./file-changes.js";
import { type FileKey, keyOf, sameState } from "./file-identity.js";
import type { FsOps } from "./fs-ops.js";

/**
 * Listing support. A listing needs counters that only a full parse gives,
 * so the records of sessions that are not in the cache are remembered per
 * file and reused while the file's state (inode, size, mtime:
 * file-identity.ts) is unchanged: listing a workspace twice parses each file once, and listing
 * never pushes the hot sessions out of the cache.
 */

/** The record of a corrupt session: counters of the readable prefix, health "corrupt". */
export function corruptRecord(
  key: SessionKey,
  prefix: SessionLog | undefined,
  detail: string,
): SessionRecord {
  if (prefix !== undefined && prefix.headSeq > 0) {
    try {
      // Field by field: not the record's usage, which would decode the
      // whole prefix (a corrupt session's usage is not known).
      const r = recordOf(key.workspace, prefix);
      return {
        workspace: r.workspace,
        sessionId: r.sessionId,
        root: r.root,
        title: r.title,
        tags: r.tags,
        headSeq: r.headSeq,
        leafId: r.leafId,
        messageCount: r.messageCount,
        updatedAtMs: r.updatedAtMs,
        health: "corrupt",
        healthDetail: detail,
      };
    } catch {
      // A SessionInfo of the prefix does not decode (its tags are folded on
      // demand): the prefix's counters without what needs it.
    }
  }
  return {
    workspace: key.workspace,
    sessionId: key.sessionId,
    root: undefined,
    title: undefined,
    tags: {},
    headSeq: 0,
    leafId: "",
    messageCount: 0,
    updatedAtMs: 0,
    health: "corrupt",
    healthDetail: detail,
  };
}

/**
 * Records remembered at most (all workspaces), the default of
 * `listingRecords`: ~100 MB at ~350 bytes a record. A filtered listing
 * needs the record of every session of its workspace, so a memo smaller
 * than the workspace costs full reads of the rest on every such listing.
 */
export const MAX_REMEMBERED = 262_144;

/**
 * How long a record known by its stamp alone is trusted before a stat
 * checks it again: the bound on how stale a lost change report (an
 * overflowing kernel queue drops them) can leave a listing.
 */
const TRUST_MS = 10_000;

interface Remembered {
  /** The file's key (file-identity.ts) at the stat the record is true of. */
  key: FileKey;
  record: SessionRecord;
  /** The FileChanges stamp taken before the stat that gave `key`, if any. */
  stamp: number | undefined;
  /** When that stat was made. */
  at: number;
}

/** No change to the file was reported since `hit`'s stat, which is recent enough to trust. */
function vouched(hit: Remembered, stamp: number | undefined, at: number): boolean {
  return stamp !== undefined && hit.stamp === stamp && at - hit.at < TRUST_MS;
}

/**
 * A record to remember: one whose usage is counted from its log when asked
 * (session-record.ts) is made into one that holds its usage sums, counted
 * now and copied, so that the memo keeps no log alive and what it keeps
 * is true of the file state it is remembered for (and goes into the
 * persisted index with it). A log whose entries do not all decode: usage
 * not known.
 */
function withOwnUsage(record: SessionRecord): SessionRecord {
  const d = Object.getOwnPropertyDescriptor(record, "usage");
  if (d?.get === undefined) return record;
  let usage: SessionUsage | undefined;
  try {
    usage = copyUsage(d.get.call(record) as SessionUsage);
  } catch {
    usage = undefined;
  }
  return {
    workspace: record.workspace,
    sessionId: record.sessionId,
    root: record.root,
    title: record.title,
    tags: record.tags,
    headSeq: record.headSeq,
    leafId: record.leafId,
    messageCount: record.messageCount,
    updatedAtMs: record.updatedAtMs,
    health: record.health,
    healthDetail: record.healthDetail,
    usage,
  };
}

/** A voucher of a directory with nothing to vouch for. */
const none = (): undefined => undefined;

/**
 * Listing records by session file (directory and id), valid while the
 * file's state holds; with FileChanges, valid without a stat while no
 * change to the file was reported since (and for TRUST_MS at most).
 * Keyed by directory, then id, so that a listing of a whole workspace
 * builds no path and hashes no new string per session (FileChanges.stamp).
 */
export class RecordMemo {
  private readonly byDir = new Map<string, Map<string, Remembered>>();
  private count = 0;

  /**
   * `capacity`: records remembered at most. When full, a record of a file
   * not remembered yet is not taken (the ones held are replaced as their
   * files change, and dropped when their files go): listings go over the
   * same sessions again and again, and a memo that evicted its oldest
   * record for each new one would, for a workspace larger than it, evict
   * every record just before the next listing asks for it (it held 16,384
   * that way: a filtered listing of 16,385 sessions read every file whole
   * on every call).
   */
  constructor(
    private readonly changes?: FileChanges,
    private readonly now: () => number = Date.now,
    private readonly capacity = MAX_REMEMBERED,
  ) {}

  /**
   * The remembered record of session `id`'s file `file` in `dir` if still
   * valid, and the key and stamp to store a new one under. Stats the file
   * unless its stamp vouches for the record.
   */
  async lookup(
    ops: FsOps,
    file: string,
    dir: string,
    id: string,
  ): Promise<{ key: FileKey; stamp?: number | undefined; record?: SessionRecord }> {
    const stamp = this.changes?.stamp(dir, id);
    const hit = this.byDir.get(dir)?.get(id);
    const at = this.now();
    if (hit !== undefined && vouched(hit, stamp, at)) {
      return { key: hit.key, stamp, record: hit.record };
    }
    const st = await ops.stat(file);
    if (hit === undefined || !sameState(hit.key, st)) return { key: keyOf(st), stamp };
    hit.stamp = stamp;
    hit.at = at;
    return { key: hit.key, stamp, record: hit.record };
  }

  /**
   * The remembered records of directory `dir`'s sessions that their change
   * stamps vouch for, by id, without a stat or a promise: what a listing of
   * many sessions tries first. `at`: now (one clock read per listing). For
   * one synchronous pass: the directory's records and change reports are
   * looked up once, not per session (a filtered listing of 10,000 sessions
   * asks for each), and no report comes in during the pass.
   */
  voucher(dir: string, at: number): (id: string) => SessionRecord | undefined {
    const files = this.byDir.get(dir);
    const stampOf = files === undefined ? undefined : this.changes?.stamper(dir);
    if (files === undefined || stampOf === undefined) return none;
    return (id) => {
      const hit = files.get(id);
      return hit !== undefined && vouched(hit, stampOf(id), at) ? hit.record : undefined;
    };
  }

  /** The memo's clock (voucher's `at`). */
  clock(): number {
    return this.now();
  }

  /**
   * Remembers `record` for session `id` in `dir` as of the lookup that gave
   * `key` and `stamp`, made at `at` (the memo's clock; a time before the
   * stat only trusts the record for less long).
   */
  store(
    dir: string,
    id: string,
    key: FileKey,
    record: SessionRecord,
    stamp?: number,
    at = this.now(),
  ): void {
    record = withOwnUsage(record);
    let files = this.byDir.get(dir);
    const held = files?.get(id);
    if (held !== undefined) {
      held.key = key;
      held.record = record;
      held.stamp = stamp;
      held.at = at;
      return;
    }
    if (this.count >= this.capacity) return;
    if (files === undefined) {
      files = new Map();
      this.byDir.set(dir, files);
    }
    files.set(id, { key, record, stamp, at });
    this.count++;
  }

  /** The record remembered for session `id` in `dir` and the state it is true of, unchecked. */
  peek(dir: string, id: string): { key: FileKey; record: SessionRecord } | undefined {
    return this.byDir.get(dir)?.get(id);
  }

  delete(dir: string, id: string): void {
    const files = this.byDir.get(dir);
    if (files === undefined || !files.delete(id)) return;
    this.count--;
    if (files.size === 0) this.byDir.delete(dir);
  }
}

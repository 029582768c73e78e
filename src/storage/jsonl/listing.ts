import type { Stats } from "node:fs";
import type { SessionLog } from "../../core/session-log.js";
import type { SessionKey, SessionRecord } from "../engine.js";
import { recordOf } from "../session-record.js";
import type { FileChanges } from "./file-changes.js";
import type { FsOps } from "./fs-ops.js";

/**
 * Listing support. A listing needs counters that only a full parse gives,
 * so the records of sessions that are not in the cache are remembered per
 * file and reused while the file's stat signature (inode, size, mtime) is
 * unchanged: listing a workspace twice parses each file once, and listing
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
      return { ...recordOf(key.workspace, prefix), health: "corrupt", healthDetail: detail };
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

function signature(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

const MAX_REMEMBERED = 16_384;

/**
 * How long a record known by its stamp alone is trusted before a stat
 * checks it again: the bound on how stale a lost change report (an
 * overflowing kernel queue drops them) can leave a listing.
 */
const TRUST_MS = 10_000;

interface Remembered {
  sig: string;
  record: SessionRecord;
  /** The FileChanges stamp taken before the stat that gave `sig`, if any. */
  stamp: number | undefined;
  /** When that stat was made. */
  at: number;
}

/**
 * Listing records by file, valid while the file's stat signature holds;
 * with FileChanges, valid without a stat while no change to the file was
 * reported since (and for TRUST_MS at most).
 */
export class RecordMemo {
  private readonly byFile = new Map<string, Remembered>();

  constructor(
    private readonly changes?: FileChanges,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The remembered record of `file` (`name` in `dir`) if still valid, and the signature and
   * stamp to store a new one under. Stats the file unless its stamp vouches
   * for the record.
   */
  async lookup(
    ops: FsOps,
    file: string,
    dir: string,
    name: string,
  ): Promise<{ sig: string; stamp?: number | undefined; record?: SessionRecord }> {
    const stamp = this.changes?.stamp(dir, name);
    const hit = this.byFile.get(file);
    const at = this.now();
    if (hit !== undefined && stamp !== undefined && hit.stamp === stamp && at - hit.at < TRUST_MS) {
      return { sig: hit.sig, stamp, record: hit.record };
    }
    const sig = signature(await ops.stat(file));
    if (hit === undefined || hit.sig !== sig) return { sig, stamp };
    hit.stamp = stamp;
    hit.at = at;
    return { sig, stamp, record: hit.record };
  }

  /** Remembers `record` for `file` as of the lookup that gave `sig` and `stamp`. */
  store(file: string, sig: string, record: SessionRecord, stamp?: number): void {
    this.byFile.delete(file);
    this.byFile.set(file, { sig, record, stamp, at: this.now() });
    if (this.byFile.size > MAX_REMEMBERED) {
      const oldest = this.byFile.keys().next().value;
      if (oldest !== undefined) this.byFile.delete(oldest);
    }
  }

  delete(file: string): void {
    this.byFile.delete(file);
  }
}

import type { Stats } from "node:fs";
import type { SessionLog } from "../../core/session-log.js";
import type { SessionKey, SessionRecord } from "../engine.js";
import { recordOf } from "../session-record.js";
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

/** Listing records by file, valid while the file's stat signature holds. */
export class RecordMemo {
  private readonly byFile = new Map<string, { sig: string; record: SessionRecord }>();

  /** Stats `file`: the remembered record if still valid, and the signature to store under. */
  async lookup(ops: FsOps, file: string): Promise<{ sig: string; record?: SessionRecord }> {
    const sig = signature(await ops.stat(file));
    const hit = this.byFile.get(file);
    return hit !== undefined && hit.sig === sig ? { sig, record: hit.record } : { sig };
  }

  store(file: string, sig: string, record: SessionRecord): void {
    this.byFile.delete(file);
    this.byFile.set(file, { sig, record });
    if (this.byFile.size > MAX_REMEMBERED) {
      const oldest = this.byFile.keys().next().value;
      if (oldest !== undefined) this.byFile.delete(oldest);
    }
  }

  delete(file: string): void {
    this.byFile.delete(file);
  }
}

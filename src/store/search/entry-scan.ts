import { isSessiondError } from "../../core/errors.js";
import type { EntryScan, EntryScanEnd, SessionKey, StorageEngine } from "../../storage/engine.js";

/** Entries per `read` of the generic scan: a few round trips on a database, little memory. */
const READ_PAGE = 256;

/**
 * One text-search pass over a session (see EntryScan): the engine's own
 * scan when it has one (JSONL skips the entries the needles rule out
 * without decoding them), else the log read page by page. A corrupt log
 * is scanned up to the damage: a page that fails with DATA_LOSS is read
 * again entry by entry until the failing one.
 */
export function scanSession(
  engine: StorageEngine,
  key: SessionKey,
  scan: EntryScan,
): Promise<EntryScanEnd> {
  if (engine.scanEntries !== undefined) return engine.scanEntries(key, scan);
  return readScan(engine, key, scan);
}

async function readScan(
  engine: StorageEngine,
  key: SessionKey,
  scan: EntryScan,
): Promise<EntryScanEnd> {
  let after = scan.afterSeq;
  let limit = READ_PAGE;
  for (;;) {
    let page: Awaited<ReturnType<StorageEngine["read"]>>;
    try {
      page = await engine.read(key, after, limit);
    } catch (err) {
      if (!isSessiondError(err, "DATA_LOSS")) throw err;
      if (limit === 1) return { damaged: true };
      limit = 1;
      continue;
    }
    for (const entry of page.entries) {
      after = Number(entry.seq);
      // Stryker disable next-line ObjectLiteral: an unset damaged reads as false
      if (!scan.visit(entry)) return { damaged: false };
    }
    // Stryker disable next-line ObjectLiteral: an unset damaged reads as false
    if (page.entries.length < limit) return { damaged: false };
  }
}

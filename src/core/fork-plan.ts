import { clone, create } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { FORMAT_VERSION } from "./entry.js";
import { forkCopiesThrough } from "./fork-copies.js";
import { newEntryId } from "./ids.js";
import type { SessionLog } from "./session-log.js";

export interface ForkOptions {
  /** Id of the new session. */
  sessionId: string;
  /** Title of the new session; default: the title current on the forked path. */
  title?: string | undefined;
  /** Creation time of the new session. */
  createdAt: Timestamp;
  /** Id generator for the new root; default: random. */
  newId?: () => string;
}

/**
 * The entries of a fork of `log` at `targetId`: a new SessionInfo root that
 * records forked_from (cwd, metadata and root tags of the source), then copies of the
 * path root → target (ids kept, seqs renumbered, the first copy re-parented
 * onto the new root). Pure; the source is not touched.
 */
export function planFork(log: SessionLog, targetId: string, o: ForkOptions): Entry[] {
  const path = log.path(targetId);
  const from = log.info;
  let pathTitle: string | undefined;
  for (const e of path) {
    // Stryker disable next-line ConditionalExpression: only SessionInfo has a title field; for any other kind `e.kind.value.title` reads undefined, which the title test skips just the same (the kind test is there for the type)
    if (e.kind.case === "sessionInfo" && e.kind.value.title !== undefined) {
      pathTitle = e.kind.value.title;
    }
  }
  const newId = o.newId ?? newEntryId;
  let rootId = newId();
  while (path.some((e) => e.id === rootId)) rootId = newId();
  const root = create(EntrySchema, {
    id: rootId,
    seq: 1n,
    timestamp: o.createdAt,
    kind: {
      case: "sessionInfo",
      value: {
        sessionId: o.sessionId,
        title: o.title ?? pathTitle,
        cwd: from.cwd,
        createdAt: o.createdAt,
        formatVersion: FORMAT_VERSION,
        forkedFrom: { sessionId: log.sessionId, entryId: targetId },
        metadata: from.metadata,
        // The copied SessionInfo entries of the path apply their tag changes after it.
        tags: from.tags,
      },
    },
  });
  const copies = path.slice(1).map((e, i) => {
    const copy = clone(EntrySchema, e);
    copy.seq = BigInt(i + 2);
    if (i === 0) copy.parentId = rootId;
    if (copy.kind.case === "sessionInfo") copy.kind.value.sessionId = o.sessionId;
    return copy;
  });
  return [root, ...copies];
}

/** forkCopiesThrough of a log. */
export function logForkCopiesThrough(log: SessionLog): number {
  return log.headSeq === 0 ? 0 : forkCopiesThrough(log.info, (id) => log.get(id)?.seq);
}

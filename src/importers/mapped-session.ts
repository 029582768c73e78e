import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { planAppend } from "../core/append-plan.js";
import { isSessiondError } from "../core/errors.js";
import { quote } from "../core/ids.js";
import { SessionLog } from "../core/session-log.js";

/** Something of a source file that could not be mapped as it was; `line` is 1-based. */
export interface ImportNote {
  line: number;
  entryId?: string | undefined;
  reason: string;
}

/** A session as an importer made it: the log for ImportSession and what it could not keep. */
export interface MappedSession {
  sessionId: string;
  /** The log, root first, parents before children, ready for ImportSession. */
  entries: Entry[];
  notes: ImportNote[];
}

/**
 * Builds a foreign tree into a sessiond log entry by entry, checking each
 * with the rules of a live Append (core/append-plan.ts), so that what it
 * returns imports without refusal and every entry the rules refuse is known
 * here, by line, instead of failing the whole session on the server. A
 * refused entry is replaced by its fallback (a Custom entry keeping the
 * source record, so its children still attach), and the reason is noted; an
 * entry whose parent is missing hangs under the root, as the source tool's
 * own walk from the leaf stops there too.
 */
export class LogBuilder {
  readonly notes: ImportNote[] = [];
  private readonly log: SessionLog;

  constructor(sessionId: string, root: Entry) {
    this.log = SessionLog.from(sessionId, [create(EntrySchema, { ...root, seq: 1n })]);
  }

  get rootId(): string {
    return this.log.root.id;
  }

  has(id: string): boolean {
    return this.log.has(id);
  }

  /** The kind an added entry got (its own, or Custom when its fallback was used). */
  kindOf(id: string): Entry["kind"]["case"] {
    return this.log.get(id)?.kind.case;
  }

  /** Root → `id`, as the fold walks it. */
  path(id: string): Entry[] {
    return this.log.path(id);
  }

  note(line: number, entryId: string | undefined, reason: string): void {
    this.notes.push({ line, entryId, reason });
  }

  /** Adds `entry` (id, parent and timestamp set), or its fallback; false when neither fits. */
  add(entry: Entry, line: number, fallback?: () => Entry): boolean {
    if (this.log.has(entry.id)) {
      this.note(line, entry.id, `entry id ${quote(entry.id)} is used twice: this line is skipped`);
      return false;
    }
    if (entry.parentId === undefined || !this.log.has(entry.parentId)) {
      this.note(
        line,
        entry.id,
        `parent ${quote(entry.parentId ?? "")} not found (a damaged or missing line?): attached to the root`,
      );
      entry.parentId = this.rootId;
    }
    if (entry.timestamp === undefined) {
      // The server would stamp it with its clock, and a repeated import would differ.
      this.note(line, entry.id, "no valid timestamp: the parent's is used");
      entry.timestamp = this.log.get(entry.parentId)?.timestamp;
    }
    const refused = this.tryAppend(entry);
    if (refused === undefined) return true;
    if (fallback !== undefined) {
      const substitute = fallback();
      substitute.parentId = entry.parentId;
      substitute.timestamp = entry.timestamp;
      if (this.tryAppend(substitute) === undefined) {
        this.note(line, entry.id, `${refused}: kept as a Custom entry, outside the context`);
        return true;
      }
    }
    this.note(line, entry.id, `${refused}: skipped`);
    return false;
  }

  private tryAppend(entry: Entry): string | undefined {
    try {
      const plan = planAppend(this.log, { entries: [entry] }, {}, true);
      for (const e of plan.write) this.log.apply(e);
      return undefined;
    } catch (err) {
      if (isSessiondError(err)) return err.message;
      throw err;
    }
  }

  finish(): MappedSession {
    return { sessionId: this.log.sessionId, entries: [...this.log.entries()], notes: this.notes };
  }
}

/** A Custom entry that keeps a source record sessiond has no kind for. */
export function customEntry(
  id: string,
  timestamp: Timestamp | undefined,
  namespace: string,
  data: JsonObject,
): Entry {
  return create(EntrySchema, {
    id,
    timestamp,
    kind: { case: "custom", value: { namespace, data } },
  });
}

import { create, type JsonObject } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { FORMAT_VERSION } from "../../core/entry.js";
import type { EntryInit } from "../../core/entry-builders.js";
import { invalidArgument } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import {
  type JsonRecord,
  obj,
  parentsFirst,
  readJsonl,
  str,
  textOf,
  timestampOf,
  without,
} from "../jsonl-records.js";
import { customEntry, LogBuilder, type MappedSession } from "../mapped-session.js";

type KindInit = NonNullable<EntryInit["kind"]>;

import { piMessage } from "./pi-message.js";
import { migratePiRecords } from "./pi-migrate.js";

/**
 * pi's session file (docs/session-format.md of @mariozechner/pi-coding-agent)
 * as a sessiond log. The header becomes the SessionInfo root (its id the
 * session id and the root's id); every entry keeps its id, parentId
 * (null: under the root) and timestamp, in file order, so the last entry is
 * the leaf, as pi resumes it. Kinds: message → Message (pi-message.ts),
 * model_change → ModelChange, thinking_level_change → ThinkingLevelChange,
 * compaction → Compaction, branch_summary → BranchSummary, session_info →
 * SessionInfo (the name as title), label → Label (under the entry it
 * names), custom → Custom under its customType, custom_message → USER
 * Message. Anything else, and whatever
 * the Append rules refuse, is kept as a Custom entry under "pi.<type>" and
 * noted.
 */
export function mapPiSession(text: string): MappedSession {
  const { records, notes } = readJsonl(text);
  const header = records[0]?.value;
  if (header?.type !== "session" || typeof header.id !== "string") {
    throw invalidArgument("not a pi session file: the first line is not a session header");
  }
  migratePiRecords(records);
  const timestamp = timestampOf(header.timestamp);
  const root = create(EntrySchema, {
    id: header.id,
    timestamp,
    kind: {
      case: "sessionInfo",
      value: {
        sessionId: header.id,
        cwd: str(header, "cwd"),
        createdAt: timestamp,
        formatVersion: FORMAT_VERSION,
        metadata: { pi: without(header, "type", "id", "timestamp", "cwd") },
      },
    },
  });
  const log = new LogBuilder(header.id, root);
  log.notes.push(...notes);
  const ordered = parentsFirst(
    records.slice(1),
    (r) => str(r.value, "id"),
    (r) => str(r.value, "parentId"),
  );
  for (const record of ordered) addRecord(log, record);
  return log.finish();
}

function addRecord(log: LogBuilder, { line, value: r }: JsonRecord): void {
  const type = textOf(r.type);
  const id = str(r, "id") ?? "";
  const entry = create(EntrySchema, {
    id,
    parentId: str(r, "parentId") ?? log.rootId,
    timestamp: timestampOf(r.timestamp),
  });
  const kind = kindOf(log, line, r, entry);
  const keep = () => {
    const custom = customEntry(id, entry.timestamp, `pi.${type}`, r);
    custom.parentId = entry.parentId;
    return custom;
  };
  if (kind === undefined) {
    log.add(keep(), line);
    return;
  }
  entry.kind = kind;
  log.add(entry, line, keep);
}

/** The sessiond kind of one pi entry; undefined keeps it as Custom (noted when pi would use it). */
function kindOf(
  log: LogBuilder,
  line: number,
  r: JsonObject,
  entry: Entry,
): Entry["kind"] | undefined {
  const note = (reason: string) => log.note(line, entry.id, reason);
  const init = (kind: KindInit) => create(EntrySchema, { kind }).kind;
  switch (r.type) {
    case "message": {
      const { entry: mapped, problems } = piMessage(obj(r, "message") ?? {});
      for (const p of problems) note(p);
      return mapped === undefined ? undefined : create(EntrySchema, mapped).kind;
    }
    case "model_change":
      return init({
        case: "modelChange",
        value: { model: str(r, "modelId") ?? "", provider: str(r, "provider") },
      });
    case "thinking_level_change":
      return init({
        case: "thinkingLevelChange",
        value: { thinkingLevel: str(r, "thinkingLevel") ?? "" },
      });
    case "compaction": {
      noteUnkept(r, "compaction", note);
      const firstKept = str(r, "firstKeptEntryId");
      const { replaces, hidden } = replacedBefore(log, entry.parentId as string, firstKept);
      if (hidden.length > 0) {
        note(
          `keeps ${hidden.map((id) => quote(id)).join(", ")} from ${quote(firstKept ?? "")} on, which an earlier compaction replaced: pi's context shows them again, sessiond's leaves them out`,
        );
      }
      return init({
        case: "compaction",
        value: {
          summary: str(r, "summary") ?? "",
          replacesEntryIds: replaces,
          tokensBefore:
            typeof r.tokensBefore === "number"
              ? BigInt(Math.max(0, Math.trunc(r.tokensBefore)))
              : undefined,
        },
      });
    }
    case "branch_summary": {
      // pi leaves an empty summary out of the context: so does a Custom entry.
      if (!str(r, "summary")) return undefined;
      noteUnkept(r, "branch summary", note);
      let fromId = str(r, "fromId") ?? "";
      if (!log.has(fromId)) {
        note(
          `branch summary from ${quote(fromId)}, which is not in the file: from the root instead`,
        );
        fromId = log.rootId;
      }
      return init({ case: "branchSummary", value: { summary: str(r, "summary"), fromId } });
    }
    case "session_info":
      return init({ case: "sessionInfo", value: { title: str(r, "name") } });
    case "label": {
      const label = str(r, "label");
      if (!label) return undefined; // a cleared label: pi keeps no label either
      if (r.targetId !== entry.parentId) {
        labelElsewhere(log, line, r, entry, label);
        return undefined;
      }
      return init({ case: "label", value: { label } });
    }
    case "custom": {
      const data = r.data;
      const isObject = typeof data === "object" && data !== null && !Array.isArray(data);
      return init({
        case: "custom",
        value: {
          namespace: str(r, "customType") || "pi.custom",
          data: isObject ? data : { value: data ?? null },
        },
      });
    }
    case "custom_message": {
      const m = { role: "custom", ...without(r, "type", "id", "parentId", "timestamp") };
      return create(EntrySchema, piMessage(m).entry ?? {}).kind;
    }
    default:
      note(`entry type ${JSON.stringify(r.type)} is not one pi defines: kept as a Custom entry`);
      return undefined;
  }
}

/**
 * A pi label naming another entry than its parent (pi labels any entry
 * from wherever the conversation is). A sessiond Label names its parent, so
 * a Label `<id>-label` goes under the named entry, added before the line's
 * own entry (a Custom entry in its place, which its children hang from), so
 * the leaf stays the file's last entry and `rewind <label>` finds the entry
 * pi labelled.
 */
function labelElsewhere(
  log: LogBuilder,
  line: number,
  r: JsonObject,
  entry: Entry,
  label: string,
): void {
  const target = str(r, "targetId") ?? "";
  if (!log.has(target)) {
    log.note(
      line,
      entry.id,
      `label ${quote(label)} names ${quote(target)}, which is not in the file: kept as a Custom entry`,
    );
    return;
  }
  const id = `${entry.id}-label`;
  const kind = { case: "label" as const, value: { label } };
  // When the Label is refused (its id too long, say), add() notes why.
  if (
    !log.add(create(EntrySchema, { id, parentId: target, timestamp: entry.timestamp, kind }), line)
  )
    return;
  log.note(
    line,
    entry.id,
    `label ${quote(label)} names ${quote(target)}, not its parent: a Label ${quote(id)} under it carries the label, the line is kept as a Custom entry in its place`,
  );
}

/**
 * The fields of a compaction or branch summary that sessiond's kinds have
 * no place for: `details` (an extension's data) and `fromHook` (whether an
 * extension wrote the summary), named in one note.
 */
function noteUnkept(r: JsonObject, what: string, note: (reason: string) => void): void {
  const unkept = ["details", "fromHook"].filter((field) => r[field] !== undefined);
  if (unkept.length === 0) return;
  const kind = what === "compaction" ? "Compaction" : "BranchSummary";
  note(`${what} ${unkept.join(" and ")} not kept (${kind} has no field for them)`);
}

/**
 * What a pi compaction replaces: the entries of its path that the CONTEXT
 * shows (messages, summaries) before firstKeptEntryId, all of them when
 * that entry is not on the path, as pi's buildSessionContext keeps only the
 * summary and the entries from firstKeptEntryId on; and every earlier
 * compaction of the path, whose summary pi drops. `hidden` are kept
 * entries that an earlier compaction of the path already replaced: pi
 * shows them again, sessiond's fold cannot.
 */
function replacedBefore(
  log: LogBuilder,
  parentId: string,
  firstKept: string | undefined,
): { replaces: string[]; hidden: string[] } {
  const replaces: string[] = [];
  const hidden: string[] = [];
  if (!log.has(parentId)) return { replaces, hidden };
  const path = log.path(parentId);
  const earlier = new Set(
    path.flatMap((e) => (e.kind.case === "compaction" ? e.kind.value.replacesEntryIds : [])),
  );
  let kept = false;
  for (const e of path) {
    kept ||= e.id === firstKept;
    const k = e.kind.case;
    if (k !== "message" && k !== "compaction" && k !== "branchSummary") continue;
    // pi shows the newest compaction's summary only: an earlier one goes wherever it is.
    if (!kept || k === "compaction") replaces.push(e.id);
    else if (earlier.has(e.id)) hidden.push(e.id);
  }
  return { replaces, hidden };
}

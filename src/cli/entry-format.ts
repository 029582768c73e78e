import type { Entry, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { EntryKind } from "../../gen/sessiond/v1/session_pb.js";
import { entryKind, entryPreview, roleOf } from "../core/entry.js";
import { roleName } from "../core/message-text.js";
import { terminalLine } from "./terminal-text.js";

/**
 * How an entry is named on one line, shared by `show` (tree nodes) and
 * `tail` (raw entries) so both speak of "user" and "compaction" the same way.
 */

const SHORT_ID = 8;

const KIND_NAMES: Record<EntryKind, string> = {
  [EntryKind.UNSPECIFIED]: "?",
  [EntryKind.SESSION_INFO]: "session",
  [EntryKind.MESSAGE]: "message",
  [EntryKind.MODEL_CHANGE]: "model",
  [EntryKind.THINKING_LEVEL_CHANGE]: "thinking",
  [EntryKind.COMPACTION]: "compaction",
  [EntryKind.BRANCH_SUMMARY]: "branch-summary",
  [EntryKind.LABEL]: "label",
  [EntryKind.LEAF]: "leaf",
  [EntryKind.CUSTOM]: "custom",
};

/** A message's role, else the entry's kind: what a person scans a log for. */
export function kindLabel(kind: EntryKind, role: Role): string {
  if (kind === EntryKind.MESSAGE) return roleName(role);
  return KIND_NAMES[kind] ?? "?";
}

/** The first characters of an entry id: enough to tell entries apart on screen. */
export function shortId(id: string): string {
  return id.slice(0, SHORT_ID);
}

/** One entry of the raw log as "seq  id  kind  preview" (for `tail`), safe for a terminal. */
export function entryLine(entry: Entry): string {
  const kind = kindLabel(entryKind(entry), roleOf(entry));
  const preview = entryPreview(entry);
  const line = `${String(entry.seq).padStart(5)}  ${entry.id}  ${kind.padEnd(10)}${preview ? ` ${preview}` : ""}`;
  return terminalLine(line.trimEnd());
}

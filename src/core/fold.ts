import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { type Message, MessageSchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type SessionState,
  SessionStateSchema,
  type StateMessage,
  StateMessageSchema,
  View,
} from "../../gen/sessiond/v1/session_pb.js";
import { invalidArgument } from "./errors.js";
import { quote } from "./ids.js";
import { withheldStateMessage, withheldText } from "./withheld.js";

export const COMPACTION_PREFIX = "Previous conversation summary:\n";
export const BRANCH_SUMMARY_PREFIX = "Summary of an abandoned branch:\n";

/**
 * A StateMessage built as a literal: protobuf-es v2 messages are plain
 * objects, and `create()` initialises by reflection, which was over half the
 * time of folding a 10,000-message path. Both fields are set, so the object
 * is complete.
 */
function stateMessage(entryId: string, message: Message): StateMessage {
  return { $typeName: "sessiond.v1.StateMessage", entryId, message };
}

function userText(entryId: string, text: string): StateMessage {
  return create(StateMessageSchema, {
    entryId,
    message: create(MessageSchema, {
      role: Role.USER,
      content: [{ part: { case: "text", value: text } }],
    }),
  });
}

/**
 * Folds a path (root → leaf, as given by SessionLog.path / pathTo) into a
 * SessionState. Pure: the same path and view always give the same state.
 *
 * CONTEXT: compactions are applied in order; a compaction's summary takes
 * the place of the first message it replaces (at its own position when it
 * replaces no message still present), and a later compaction may replace an
 * earlier summary by naming the earlier compaction's id. Branch summaries
 * render as USER messages.
 * HISTORY: every Message on the path; compactions and branch summaries are
 * skipped.
 */
export function foldPath(path: readonly Entry[], view: View = View.CONTEXT): SessionState {
  const context = view !== View.HISTORY;
  let items: StateMessage[] = [];
  const state = create(SessionStateSchema, {
    view: context ? View.CONTEXT : View.HISTORY,
  });
  let floor: string | undefined;
  for (const entry of path) {
    const k = entry.kind;
    switch (k.case) {
      case "message":
        // A withheld message reads as its marker ("[redacted]"), in both views.
        items.push(
          stateMessage(
            entry.id,
            entry.withheld === undefined ? k.value : withheldStateMessage(k.value, entry.withheld),
          ),
        );
        break;
      case "compaction": {
        floor = entry.parentId;
        if (!context) break;
        const replaced = new Set(k.value.replacesEntryIds);
        const text = entry.withheld === undefined ? k.value.summary : withheldText(entry.withheld);
        const summary = userText(entry.id, COMPACTION_PREFIX + text);
        const next: StateMessage[] = [];
        let inserted = false;
        for (const item of items) {
          if (!replaced.has(item.entryId)) next.push(item);
          else if (!inserted) {
            next.push(summary);
            inserted = true;
          }
        }
        if (!inserted) next.push(summary);
        items = next;
        break;
      }
      case "branchSummary":
        if (context) {
          const text =
            entry.withheld === undefined ? k.value.summary : withheldText(entry.withheld);
          items.push(userText(entry.id, BRANCH_SUMMARY_PREFIX + text));
        }
        break;
      case "modelChange":
        state.model = k.value.model;
        state.provider = k.value.provider;
        break;
      case "thinkingLevelChange":
        state.thinkingLevel = k.value.thinkingLevel;
        break;
      case "label":
        state.label = k.value.label;
        break;
      case "sessionInfo":
        if (k.value.title !== undefined) state.title = k.value.title;
        break;
      case "custom":
        // A withheld Custom keeps its namespace; its data reads as empty.
        state.custom[k.value.namespace] = (k.value.data ?? {}) as JsonObject;
        break;
      case "leaf":
        throw invalidArgument(`Leaf entry ${quote(entry.id)} cannot be on a path`);
    }
  }
  state.messages = items;
  state.leafId = path.length > 0 ? (path[path.length - 1] as Entry).id : "";
  state.compactionFloorId = floor;
  return state;
}

/**
 * The compaction floor of a path: the parent of its newest Compaction.
 * Rewinding to an entry that is neither the floor nor below it would bring
 * back context the compaction already summarised.
 */
export function compactionFloor(path: readonly Entry[]): string | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i] as Entry;
    if (e.kind.case === "compaction") return e.parentId;
  }
  return undefined;
}

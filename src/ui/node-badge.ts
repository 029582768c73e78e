import { EntryKind, roleName } from "../web/index.js";
import { h } from "./dom.js";
import type { Node } from "./tree-node.js";

/** The badge of the kinds that are not messages (messages show their role). */
const MARK: Partial<Record<EntryKind, string>> = {
  [EntryKind.SESSION_INFO]: "session",
  [EntryKind.COMPACTION]: "compaction",
  [EntryKind.BRANCH_SUMMARY]: "branch summary",
  [EntryKind.LABEL]: "label",
  [EntryKind.MODEL_CHANGE]: "model",
  [EntryKind.THINKING_LEVEL_CHANGE]: "thinking",
  [EntryKind.CUSTOM]: "custom",
};

/**
 * What an entry is, as one badge: its role for a message, else its kind (a
 * label shows the label itself). The tree and the diff draw the same badge,
 * so an entry reads the same in both.
 */
export function nodeBadge(n: Node): HTMLElement {
  const mark = MARK[n.kind];
  if (mark === undefined)
    return h("span", { class: `badge role-${roleName(n.role)}` }, roleName(n.role));
  const text = n.kind === EntryKind.LABEL ? (n.label ?? mark) : mark;
  return h("span", { class: `badge mark-${mark.replace(" ", "-")}` }, text);
}

import { h } from "./dom.js";
import type { RowLabel } from "./langgraph.js";
import { nodeBadge } from "./node-badge.js";
import type { Row } from "./tree-model.js";

/** How a row is drawn beyond its own node, and what its clicks do. */
export interface RowOptions {
  selected: boolean;
  /** The entry is the current leaf. */
  leaf: boolean;
  /** Labels put on the entry. */
  labels: readonly string[];
  /** A LangGraph checkpoint or writes entry: its own badge and line instead of the namespace. */
  langGraph?: RowLabel | undefined;
  onToggle: () => void;
}

const INDENT_PX = 14;
/** Deeper rows stop moving right and show their depth as a number: the preview keeps its room. */
const MAX_INDENT = 8;

/**
 * One line of the tree: indentation per branch point, a fold toggle at a
 * branch, the kind or role, the preview (as text), labels and the leaf mark;
 * on the active path highlighted. Everything from the server goes in as text.
 */
export function treeRow(row: Row, o: RowOptions): HTMLElement {
  const n = row.node;
  const classes = [
    "row",
    row.onPath ? "on-path" : "",
    o.selected ? "selected" : "",
    `kind-${n.kind}`,
  ];
  const el = h("div", {
    class: classes.join(" "),
    role: "listitem",
    "data-id": n.id,
    "data-seq": n.seq,
  });
  const indent = h("span", { class: "indent" });
  indent.style.width = `${Math.min(row.depth, MAX_INDENT) * INDENT_PX}px`;
  el.append(indent);
  if (row.depth > MAX_INDENT)
    el.append(h("span", { class: "depth", title: "forks off the active path" }, `${row.depth}`));
  if (row.branch || row.folded) {
    const toggle = h(
      "button",
      { class: "fold", "aria-expanded": String(!row.folded), title: "fold / unfold" },
      row.folded ? `▸ +${row.hidden}` : "▾",
    );
    toggle.addEventListener("click", (ev) => {
      ev.stopPropagation();
      o.onToggle();
    });
    el.append(toggle);
  }
  const lg = o.langGraph;
  if (lg === undefined) {
    el.append(nodeBadge(n));
    el.append(h("span", { class: "preview" }, n.preview || n.id));
  } else {
    el.dataset.langgraph = lg.badge;
    el.title = lg.title;
    el.append(h("span", { class: `badge lg-${lg.badge}` }, lg.badge));
    el.append(h("span", { class: "preview" }, lg.text));
  }
  for (const label of o.labels) el.append(h("span", { class: "badge label" }, label));
  if (o.leaf) el.append(h("span", { class: "badge leaf" }, "leaf"));
  return el;
}

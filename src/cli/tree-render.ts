import { EntryKind, type TreeNode } from "../../gen/sessiond/v1/session_pb.js";
import { kindLabel, shortId } from "./entry-format.js";
import { style } from "./output.js";
import { terminalLine } from "./terminal-text.js";

/**
 * Draws a session tree (the nodes of GetTree) as text lines. A pure
 * function, so the layout is unit-tested without a server.
 *
 * Layout: a chain of single children stays in one column, and only a
 * branch point indents, with ├─ / └─ for its children and │ carrying the
 * outer branches down. A long conversation with a few rewinds is therefore
 * a few columns wide instead of one column per entry. Entries on the
 * current path are marked with `*` (and bold when styled); the current leaf
 * says so; labels are shown in brackets. Leaf entries (pointer moves written
 * by rewind / reset) are not content and are hidden unless asked for.
 */

export interface RenderOptions {
  /** The session's current leaf (GetTreeResponse.leaf_id). */
  leafId: string;
  /** ANSI styling (bold current path). */
  color?: boolean;
  /** Show Leaf entries (pointer moves) too. */
  showLeafMoves?: boolean;
  /** Print whole entry ids instead of their first characters. */
  fullIds?: boolean;
}

interface Frame {
  node: TreeNode;
  /** Drawn before this node's own line. */
  first: string;
  /** Drawn before the lines of its descendants. */
  rest: string;
}

function describe(node: TreeNode, o: RenderOptions): string {
  const marker = node.onCurrentPath ? "* " : "  ";
  const id = o.fullIds ? node.id : shortId(node.id);
  const kind = kindLabel(node.kind, node.role);
  let text: string;
  if (node.kind === EntryKind.LABEL) text = `[${node.label ?? node.preview}]`;
  else if (node.kind === EntryKind.LEAF)
    text = `→ ${o.fullIds ? node.leafId : shortId(node.leafId ?? "")}`;
  else text = node.preview;
  let line = `${marker}${id} ${kind}${text ? `  ${text}` : ""}`;
  if (node.id === o.leafId) line += "  ← leaf";
  line = terminalLine(line);
  const color = o.color ?? false;
  return node.onCurrentPath ? style.bold(line, color) : line;
}

/** The lines of the tree, roots first, children in seq order. Never loops, even on a broken tree. */
export function renderTree(nodes: readonly TreeNode[], o: RenderOptions): string[] {
  const shown = nodes.filter((n) => o.showLeafMoves || n.kind !== EntryKind.LEAF);
  const ids = new Set(shown.map((n) => n.id));
  const children = new Map<string, TreeNode[]>();
  const roots: TreeNode[] = [];
  for (const n of shown) {
    if (n.parentId === undefined || !ids.has(n.parentId) || n.parentId === n.id) {
      roots.push(n);
      continue;
    }
    const list = children.get(n.parentId);
    if (list === undefined) children.set(n.parentId, [n]);
    else list.push(n);
  }
  const lines: string[] = [];
  const seen = new Set<string>();
  // An explicit stack instead of recursion: a long chain is as deep as the log.
  const stack: Frame[] = [];
  const pushChildren = (kids: readonly TreeNode[], rest: string) => {
    if (kids.length === 1) {
      stack.push({ node: kids[0] as TreeNode, first: rest, rest });
      return;
    }
    for (let i = kids.length - 1; i >= 0; i--) {
      const last = i === kids.length - 1;
      stack.push({
        node: kids[i] as TreeNode,
        first: rest + (last ? "└─ " : "├─ "),
        rest: rest + (last ? "   " : "│  "),
      });
    }
  };
  const drain = () => {
    while (stack.length > 0) {
      const { node, first, rest } = stack.pop() as Frame;
      if (seen.has(node.id)) continue;
      seen.add(node.id);
      lines.push(first + describe(node, o));
      pushChildren(children.get(node.id) ?? [], rest);
    }
  };
  pushChildren(roots, "");
  drain();
  // Nodes only reachable through a cycle have no root above them: draw them anyway.
  for (const n of shown) {
    if (seen.has(n.id)) continue;
    stack.push({ node: n, first: "", rest: "" });
    drain();
  }
  return lines;
}

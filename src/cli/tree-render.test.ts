import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { EntryKind, type TreeNode, TreeNodeSchema } from "../../gen/sessiond/v1/session_pb.js";
import { renderTree } from "./tree-render.js";

let seq = 0;
function node(
  id: string,
  parentId: string | undefined,
  kind: EntryKind,
  extra: Partial<{ role: Role; preview: string; label: string; leafId: string; on: boolean }> = {},
): TreeNode {
  return create(TreeNodeSchema, {
    id,
    parentId,
    kind,
    seq: BigInt(++seq),
    role: extra.role ?? Role.UNSPECIFIED,
    preview: extra.preview ?? "",
    label: extra.label,
    leafId: extra.leafId,
    onCurrentPath: extra.on ?? false,
  });
}
const msg = (id: string, parent: string, role: Role, text: string, on = false) =>
  node(id, parent, EntryKind.MESSAGE, { role, preview: text, on });

//  root ─ q1 ─ a1 ─ q2              (abandoned)
//               └ [before-joke] ─ leaf-move ─ ...
//         q1 ─ j1 ─ j2             (current)
const TREE: TreeNode[] = [
  node("root0000aaaa", undefined, EntryKind.SESSION_INFO, { preview: "demo", on: true }),
  msg("q1000000aaaa", "root0000aaaa", Role.USER, "hello", true),
  msg("a1000000aaaa", "q1000000aaaa", Role.ASSISTANT, "hi, how can I help"),
  node("lab00000aaaa", "a1000000aaaa", EntryKind.LABEL, {
    label: "before-poem",
    preview: "before-poem",
  }),
  msg("q2000000aaaa", "lab00000aaaa", Role.USER, "write a poem"),
  node("mv000000aaaa", "q2000000aaaa", EntryKind.LEAF, { leafId: "q1000000aaaa" }),
  msg("j1000000aaaa", "q1000000aaaa", Role.USER, "tell a joke", true),
  msg("j2000000aaaa", "j1000000aaaa", Role.ASSISTANT, "why did the chicken", true),
];

describe("renderTree", () => {
  it("draws a branched tree with the current path marked, labels shown and the leaf marked", () => {
    expect(renderTree(TREE, { leafId: "j2000000aaaa" })).toEqual([
      "* root0000 session  demo",
      "* q1000000 user  hello",
      "├─   a1000000 assistant  hi, how can I help",
      "│    lab00000 label  [before-poem]",
      "│    q2000000 user  write a poem",
      "└─ * j1000000 user  tell a joke",
      "   * j2000000 assistant  why did the chicken  ← leaf",
    ]);
  });

  it("hides Leaf entries unless asked, and then shows their target", () => {
    const lines = renderTree(TREE, { leafId: "j2000000aaaa", showLeafMoves: true });
    expect(lines).toContain("│    mv000000 leaf  → q1000000");
    expect(renderTree(TREE, { leafId: "j2000000aaaa" }).join("\n")).not.toContain("mv000000");
  });

  it("prints whole ids with fullIds", () => {
    const lines = renderTree(TREE, { leafId: "j2000000aaaa", fullIds: true });
    expect(lines[0]).toBe("* root0000aaaa session  demo");
  });

  it("makes the current path bold only when styled", () => {
    const styled = renderTree(TREE, { leafId: "j2000000aaaa", color: true });
    expect(styled[1]).toBe("\x1b[1m* q1000000 user  hello\x1b[22m");
    expect(styled[2]).toBe("├─   a1000000 assistant  hi, how can I help");
  });

  it("indents nested branches with │ for the outer branch still open", () => {
    const nodes = [
      node("r", undefined, EntryKind.SESSION_INFO, { on: true }),
      msg("a", "r", Role.USER, "A", true),
      msg("b", "a", Role.USER, "B"),
      msg("c", "a", Role.USER, "C", true),
      msg("b1", "b", Role.USER, "B1"),
      msg("b2", "b", Role.USER, "B2"),
    ];
    expect(renderTree(nodes, { leafId: "c" })).toEqual([
      "* r session",
      "* a user  A",
      "├─   b user  B",
      "│  ├─   b1 user  B1",
      "│  └─   b2 user  B2",
      "└─ * c user  C  ← leaf",
    ]);
  });

  it("terminates on a broken tree (cycle, missing parent) and still draws every node", () => {
    const nodes = [
      node("r", undefined, EntryKind.SESSION_INFO),
      msg("x", "y", Role.USER, "X"),
      msg("y", "x", Role.USER, "Y"),
      msg("o", "missing", Role.USER, "orphan"),
    ];
    const lines = renderTree(nodes, { leafId: "r" });
    expect(lines).toHaveLength(4);
    expect(lines.join("\n")).toContain("orphan");
  });

  it("draws a 100k-entry chain without recursion limits", () => {
    const nodes = [node("r", undefined, EntryKind.SESSION_INFO)];
    for (let i = 1; i <= 100_000; i++)
      nodes.push(msg(`e${i}`, i === 1 ? "r" : `e${i - 1}`, Role.USER, "x"));
    expect(renderTree(nodes, { leafId: "e100000" })).toHaveLength(100_001);
  });
});

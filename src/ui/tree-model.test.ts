import { describe, expect, it } from "vitest";
import { EntryKind, Role } from "../web/index.js";
import { parseRoute, sessionHash } from "./route.js";
import { TreeModel } from "./tree-model.js";
import type { Node } from "./tree-node.js";

let seq = 0;
function node(id: string, parentId: string | undefined, extra: Partial<Node> = {}): Node {
  seq++;
  return {
    id,
    parentId,
    kind: EntryKind.MESSAGE,
    seq,
    role: Role.USER,
    preview: id,
    time: undefined,
    label: undefined,
    leafId: undefined,
    ...extra,
  };
}

/** root → a → b → c, rewound to a, then a → d → e: two branches under a. */
function branched(): TreeModel {
  const m = new TreeModel();
  m.add(node("root", undefined, { kind: EntryKind.SESSION_INFO }));
  m.add(node("a", "root"));
  m.add(node("b", "a"));
  m.add(node("l", "b", { kind: EntryKind.LABEL, label: "mark" }));
  m.add(node("c", "l"));
  m.add(node("leaf1", "c", { kind: EntryKind.LEAF, leafId: "a" }));
  m.add(node("d", "a"));
  m.add(node("e", "d"));
  return m;
}

const ids = (m: TreeModel) => m.rows().map((r) => r.node.id);

describe("TreeModel", () => {
  it("follows the leaf: the newest entry, or where a Leaf entry moved it", () => {
    const m = branched();
    expect(m.leafId).toBe("e");
    expect([...m.onPath()]).toEqual(["root", "a", "d", "e"]);
  });

  it("draws the branch off the path first and folded, the path's branch last and open", () => {
    const m = branched();
    const rows = m.rows();
    expect(rows.map((r) => r.node.id)).toEqual(["root", "a", "b", "d", "e"]);
    const b = rows.find((r) => r.node.id === "b");
    expect(b).toMatchObject({ folded: true, hidden: 2, onPath: false, depth: 1 });
    expect(rows.find((r) => r.node.id === "a")).toMatchObject({
      branch: true,
      onPath: true,
      depth: 0,
    });
    expect(rows.find((r) => r.node.id === "e")).toMatchObject({ onPath: true, depth: 0 });
  });

  it("keeps the active path at depth 0 past every branch point, each branch one step in", () => {
    const m = new TreeModel();
    m.add(node("root", undefined));
    let parent = "root";
    for (let i = 0; i < 20; i++) {
      m.add(node(`side${i}`, parent));
      m.add(node(`side${i}-next`, `side${i}`));
      m.add(node(`main${i}`, parent));
      parent = `main${i}`;
    }
    for (let i = 0; i < 20; i++) m.toggle(`side${i}`);
    const depth = new Map(m.rows().map((r) => [r.node.id, r.depth]));
    expect(depth.get("main19")).toBe(0);
    expect(depth.get("side19")).toBe(1);
    expect(depth.get("side19-next")).toBe(1);
  });

  it("unfolds and folds a branch on request, and reveals an entry hidden in one", () => {
    const m = branched();
    m.toggle("b");
    expect(ids(m)).toEqual(["root", "a", "b", "l", "c", "d", "e"]);
    m.toggle("b");
    expect(ids(m)).not.toContain("c");
    m.reveal("c");
    expect(ids(m)).toContain("c");
  });

  it("never draws Leaf entries, and puts a label on the entry it names", () => {
    const m = branched();
    m.toggle("b");
    expect(ids(m)).not.toContain("leaf1");
    expect(m.labelsOf("b")).toEqual(["mark"]);
  });

  it("diffs two branches from the entry where they part", () => {
    const d = branched().diff("c", "e");
    expect(d.fork?.id).toBe("a");
    expect(d.onlyA.map((n) => n.id)).toEqual(["b", "l", "c"]);
    expect(d.onlyB.map((n) => n.id)).toEqual(["d", "e"]);
  });

  it("lists the tips of the branches", () => {
    expect(
      branched()
        .tips()
        .map((n) => n.id),
    ).toEqual(["c", "e"]);
  });

  it("grows by one row per entry appended to the leaf, as a full pass would draw it", () => {
    const m = branched();
    m.rows();
    m.add(node("f", "e"));
    m.add(node("l2", "f", { kind: EntryKind.LABEL, label: "done" }));
    m.add(node("g", "b"));
    const fresh = new TreeModel();
    for (const n of m.nodes) fresh.add(n);
    expect(m.rows()).toEqual(fresh.rows());
    // g moved the leaf onto the other branch: that one is open now, the first folded.
    expect(ids(m)).toEqual(["root", "a", "d", "b", "l", "g"]);
  });

  it("keeps a linear 100,000-entry session flat, in seq order", () => {
    const m = new TreeModel();
    m.add(node("n0", undefined));
    for (let i = 1; i < 100_000; i++) m.add(node(`n${i}`, `n${i - 1}`));
    const rows = m.rows();
    expect(rows).toHaveLength(100_000);
    expect(rows.every((r, i) => r.depth === 0 && r.node.id === `n${i}` && r.onPath)).toBe(true);
  });
});

describe("deep links", () => {
  it("name a session, an entry and a panel, and read back the same", () => {
    const hash = sessionHash("team", "s/1 x", "e?1", "context");
    expect(parseRoute(hash)).toMatchObject({
      view: "session",
      workspace: "team",
      session: "s/1 x",
      entry: "e?1",
      tab: "context",
    });
    expect(parseRoute("#/w/team/s/abc/diff/x/y")).toMatchObject({ diff: { a: "x", b: "y" } });
    expect(parseRoute("")).toEqual({ view: "workspaces" });
    expect(parseRoute("#/nowhere")).toMatchObject({ view: "list", workspace: "default" });
    expect(parseRoute("#/w/team?title=fix").view).toBe("list");
  });
});

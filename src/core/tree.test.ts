import { describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { buildLog, expectError, idsOf, info, user } from "../../test/support/fixtures.js";
import {
  checkTree,
  childrenIndex,
  entriesById,
  isOnPathTo,
  type Lookup,
  lowestCommonAncestor,
  pathIdsAfter,
  pathTo,
} from "./tree.js";

//   root ─ a ─ b ─ c
//           └─ x ─ y
const TREE: Entry[] = [
  info("root"),
  user("a", "q1", "root"),
  user("b", "a1", "a"),
  user("c", "q2", "b"),
  user("x", "other answer", "a"),
  user("y", "q3", "x"),
];

function lookupOf(entries: readonly Entry[]): Lookup {
  const byId = new Map(entries.map((e) => [e.id, e]));
  return (id) => byId.get(id);
}

function chain(n: number): Entry[] {
  const entries: Entry[] = [info("e0")];
  for (let i = 1; i < n; i++) entries.push(user(`e${i}`, "", `e${i - 1}`));
  return entries;
}

describe("entriesById", () => {
  it("indexes every entry by its id", () => {
    const byId = entriesById(TREE);
    expect([...byId.keys()]).toEqual(["root", "a", "b", "c", "x", "y"]);
    expect(byId.get("x")?.parentId).toBe("a");
  });

  it("rejects a duplicate id and names it", () => {
    expectError(() => entriesById([...TREE, user("b", "again", "a")]), "INVALID_ARGUMENT", '"b"');
  });
});

describe("pathTo", () => {
  const lookup = lookupOf(TREE);

  it("walks from the root to the entry", () => {
    expect(idsOf(pathTo(lookup, "c"))).toEqual(["root", "a", "b", "c"]);
    expect(idsOf(pathTo(lookup, "y"))).toEqual(["root", "a", "x", "y"]);
  });

  it("gives the root alone for the root", () => {
    expect(idsOf(pathTo(lookup, "root"))).toEqual(["root"]);
  });

  it("reports an unknown start id as not found, naming it", () => {
    const err = expectError(() => pathTo(lookup, "nope"), "INVALID_ARGUMENT", '"nope"');
    expect(err.message).toContain("not found");
  });

  it("reports a missing parent, naming the missing id and the start", () => {
    const broken = lookupOf([info("root"), user("a", "", "root"), user("c", "", "gone")]);
    const err = expectError(() => pathTo(broken, "c"), "INVALID_ARGUMENT", '"gone"', '"c"');
    expect(err.message).toContain("missing parent");
  });

  it("reports a two-entry cycle instead of looping", () => {
    const cyclic = lookupOf([user("p", "", "q"), user("q", "", "p"), user("leaf", "", "p")]);
    const err = expectError(() => pathTo(cyclic, "leaf"), "INVALID_ARGUMENT");
    expect(err.message).toMatch(/cycle.*"(p|q)"/);
  });

  it("reports an entry that is its own parent instead of looping", () => {
    const selfLoop = lookupOf([user("s", "", "s")]);
    expectError(() => pathTo(selfLoop, "s"), "INVALID_ARGUMENT", "cycle", '"s"');
  });
});

describe("isOnPathTo", () => {
  const lookup = lookupOf(TREE);

  it("is true for the entry itself and each of its ancestors", () => {
    for (const ancestor of ["c", "b", "a", "root"]) {
      expect(isOnPathTo(lookup, ancestor, "c")).toBe(true);
    }
  });

  it("is false for descendants, siblings and other branches", () => {
    expect(isOnPathTo(lookup, "c", "b")).toBe(false);
    expect(isOnPathTo(lookup, "x", "c")).toBe(false);
    expect(isOnPathTo(lookup, "y", "c")).toBe(false);
  });

  it("is false, not an error, when the walk meets an unknown entry or a missing parent", () => {
    expect(isOnPathTo(lookup, "root", "nowhere")).toBe(false);
    expect(isOnPathTo(lookupOf([user("orphan", "", "gone")]), "root", "orphan")).toBe(false);
  });

  it("is false (and terminates) on a cycle that does not contain the ancestor", () => {
    const cyclic = lookupOf([user("p", "", "q"), user("q", "", "p")]);
    expect(isOnPathTo(cyclic, "root", "p")).toBe(false);
  });
});

describe("lowestCommonAncestor", () => {
  const lookup = lookupOf(TREE);

  it("is the fork point of two branches", () => {
    expect(lowestCommonAncestor(lookup, "c", "y")?.id).toBe("a");
  });

  it("is the ancestor when one entry lies on the other's path", () => {
    expect(lowestCommonAncestor(lookup, "b", "c")?.id).toBe("b");
    expect(lowestCommonAncestor(lookup, "c", "root")?.id).toBe("root");
  });

  it("is the entry itself for the same entry twice", () => {
    expect(lowestCommonAncestor(lookup, "y", "y")?.id).toBe("y");
  });

  it("is undefined for entries with different roots", () => {
    const forest = lookupOf([info("r1"), user("a", "", "r1"), info("r2"), user("b", "", "r2")]);
    expect(lowestCommonAncestor(forest, "a", "b")).toBeUndefined();
  });

  it("reports an unknown entry instead of guessing", () => {
    expectError(() => lowestCommonAncestor(lookup, "c", "nope"), "INVALID_ARGUMENT", '"nope"');
  });
});

describe("childrenIndex", () => {
  it("lists each entry's children in input order; roots are nobody's child", () => {
    const children = childrenIndex(TREE);
    expect(idsOf(children.get("a") ?? [])).toEqual(["b", "x"]);
    expect(idsOf(children.get("root") ?? [])).toEqual(["a"]);
    expect(children.has("c")).toBe(false);
    expect([...children.values()].flat().some((e) => e.id === "root")).toBe(false);
  });
});

describe("checkTree", () => {
  it("accepts one tree and returns it indexed by id", () => {
    const byId = checkTree(TREE);
    expect(byId.size).toBe(TREE.length);
  });

  it("accepts the entries in any order", () => {
    expect(checkTree([...TREE].reverse()).size).toBe(TREE.length);
  });

  it("rejects a duplicate id, naming it", () => {
    expectError(() => checkTree([...TREE, user("y", "", "x")]), "INVALID_ARGUMENT", '"y"');
  });

  it("rejects two roots", () => {
    const err = expectError(() => checkTree([...TREE, info("root2")]), "INVALID_ARGUMENT");
    expect(err.message).toContain("found 2");
  });

  it("rejects a set without a root", () => {
    const err = expectError(
      () => checkTree([user("p", "", "q"), user("q", "", "p")]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toContain("found 0");
  });

  it("rejects a cycle beside a valid root, naming an entry of the cycle", () => {
    const err = expectError(
      () => checkTree([...TREE, user("p", "", "q"), user("q", "", "p")]),
      "INVALID_ARGUMENT",
      "cycle",
    );
    expect(err.message).toMatch(/"(p|q)"/);
  });

  it("rejects a self-loop beside a valid root", () => {
    expectError(() => checkTree([...TREE, user("s", "", "s")]), "INVALID_ARGUMENT", "cycle", '"s"');
  });

  it("rejects a missing parent, naming the child and the missing parent", () => {
    expectError(
      () => checkTree([...TREE, user("orphan", "", "gone")]),
      "INVALID_ARGUMENT",
      '"orphan"',
      '"gone"',
    );
  });

  it("checks a 100k-entry chain in either order without quadratic work", () => {
    const entries = chain(100_000);
    expect(checkTree(entries).size).toBe(100_000);
    expect(checkTree([...entries].reverse()).size).toBe(100_000);
    const path = pathTo(lookupOf(entries), "e99999");
    expect(path.length).toBe(100_000);
    expect(path[0]?.id).toBe("e0");
  });

  it("finds a cycle at the end of a 100k-entry chain", () => {
    const entries = chain(100_000);
    entries.push(user("c1", "", "c2"), user("c2", "", "c1"));
    expectError(() => checkTree(entries), "INVALID_ARGUMENT", "cycle");
  });
});

describe("pathIdsAfter", () => {
  //   root(1) ─ a(2) ─ b(3) ─ c(4)
  //               └─ x(5) ─ y(6)
  const log = buildLog(
    user("a", "q1"),
    user("b", "a1"),
    user("c", "q2"),
    user("x", "other", "a"),
    user("y", "q3"),
  );
  const withSeq = (seq: number, id: string, parentId?: string): Entry => ({
    ...user(id, "", parentId),
    seq: BigInt(seq),
  });

  it("gives the whole path for afterSeq 0", () => {
    expect([...pathIdsAfter(log.lookup, "y", 0)].sort()).toEqual(
      [log.root.id, "a", "x", "y"].sort(),
    );
  });

  it("leaves out the path entries at or below afterSeq", () => {
    expect([...pathIdsAfter(log.lookup, "y", 2)].sort()).toEqual(["x", "y"]);
    expect([...pathIdsAfter(log.lookup, "c", 3)]).toEqual(["c"]);
    expect(pathIdsAfter(log.lookup, "c", 4).size).toBe(0);
  });

  it("reports an unknown leaf as not found", () => {
    expectError(() => pathIdsAfter(log.lookup, "nope", 0), "INVALID_ARGUMENT", '"nope"');
  });

  it("reports a missing parent, naming it and its child", () => {
    const entries = [withSeq(1, "r"), withSeq(3, "c", "gone")];
    expectError(
      () => pathIdsAfter(lookupOf(entries), "c", 0),
      "INVALID_ARGUMENT",
      'missing parent entry "gone" of "c"',
    );
  });

  it("reports a parent with the same seq as its child: a parent precedes its child", () => {
    const entries = [withSeq(1, "r"), withSeq(2, "p", "r"), withSeq(2, "q", "p")];
    expectError(
      () => pathIdsAfter(lookupOf(entries), "q", 0),
      "INVALID_ARGUMENT",
      'entry "q" does not follow its parent "p" in seq order',
    );
  });

  it("reports a parent that does not precede its child instead of looping on a cycle", () => {
    const entries = [withSeq(1, "p", "q"), withSeq(2, "q", "p")];
    expectError(() => pathIdsAfter(lookupOf(entries), "q", 0), "INVALID_ARGUMENT", '"q"', '"p"');
  });
});

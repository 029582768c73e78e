import { toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  appendEach,
  assistant,
  branchSummary,
  buildLog,
  compaction,
  custom,
  expectError,
  idsOf,
  info,
  kindless,
  label,
  leaf,
  modelChange,
  newLog,
  rewindTo,
  thinkingLevel,
  user,
  withSeq,
} from "../../test/support/fixtures.js";
import { dataLoss } from "./errors.js";
import { type EntryMeta, type EntrySource, SessionLog } from "./session-log.js";

/** A log with root (1) → u1 (2) → a2 (3), built with raw applies. */
function rawLog(): SessionLog {
  return SessionLog.from("s1", [
    withSeq(info("root"), 1),
    withSeq(user("u1", "hi", "root"), 2),
    withSeq(assistant("a2", "hello", [], "u1"), 3),
  ]);
}

/** Expects `apply(entry)` to fail with DATA_LOSS naming `mentions`, and the log to be unchanged. */
function expectCorrupt(log: SessionLog, entry: Entry, ...mentions: string[]) {
  const before = {
    head: log.headSeq,
    leaf: log.leafId,
    messages: log.messageCount,
    ids: idsOf(log.entries()),
  };
  expectError(() => log.apply(entry), "DATA_LOSS", ...mentions);
  expect({
    head: log.headSeq,
    leaf: log.leafId,
    messages: log.messageCount,
    ids: idsOf(log.entries()),
  }).toEqual(before);
  expect(log.has(entry.id) && log.get(entry.id) === entry).toBe(false);
}

describe("SessionLog.apply guards the log invariants", () => {
  it("accepts entries with dense seqs, each becoming the leaf", () => {
    const log = rawLog();
    expect(log.headSeq).toBe(3);
    expect(log.leafId).toBe("a2");
    expect(idsOf(log.path())).toEqual(["root", "u1", "a2"]);
  });

  it("rejects a seq gap", () => {
    expectCorrupt(rawLog(), withSeq(user("u4", "x", "a2"), 5), '"u4"', "seq 4");
  });

  it("rejects a repeated seq", () => {
    expectCorrupt(rawLog(), withSeq(user("u4", "x", "a2"), 3), '"u4"');
  });

  it("rejects a duplicate id", () => {
    expectCorrupt(rawLog(), withSeq(user("u1", "again", "a2"), 4), '"u1"');
  });

  it("rejects a first entry that is not a SessionInfo", () => {
    expectCorrupt(new SessionLog("s1"), withSeq(user("u1", "hi"), 1), "SessionInfo");
  });

  it("rejects a first SessionInfo that has a parent", () => {
    expectCorrupt(
      new SessionLog("s1"),
      withSeq(info("root", undefined, "elsewhere"), 1),
      "SessionInfo",
    );
  });

  it("rejects an unknown parent", () => {
    expectCorrupt(rawLog(), withSeq(user("u4", "x", "ghost"), 4), '"u4"');
  });

  it("rejects a second root", () => {
    expectCorrupt(rawLog(), withSeq(info("root2"), 4), '"root2"');
  });

  it("rejects a Leaf entry as parent", () => {
    const log = rawLog();
    log.apply(withSeq(leaf("mv1", "u1", "a2"), 4));
    expectCorrupt(log, withSeq(user("u5", "x", "mv1"), 5), '"u5"', "Leaf");
  });

  it("rejects a Leaf entry pointing at nothing, and leaves no trace of it", () => {
    const log = rawLog();
    expectCorrupt(log, withSeq(leaf("mv1", "ghost", "a2"), 4), '"mv1"');
    expect(log.has("mv1")).toBe(false);
    log.apply(withSeq(user("u4", "next", "a2"), 4));
    expect(log.leafId).toBe("u4");
  });

  it("rejects a Leaf entry pointing at a Leaf entry", () => {
    const log = rawLog();
    log.apply(withSeq(leaf("mv1", "u1", "a2"), 4));
    expectCorrupt(log, withSeq(leaf("mv2", "mv1", "a2"), 5), '"mv2"');
  });

  it("keeps working after a rejection", () => {
    const log = rawLog();
    expectCorrupt(log, withSeq(user("u4", "x", "ghost"), 4));
    log.apply(withSeq(user("u4", "x", "a2"), 4));
    expect(log.headSeq).toBe(4);
    expect(log.leafId).toBe("u4");
  });
});

describe("SessionLog accessors", () => {
  it("a Leaf entry moves the leaf to its target, not to itself", () => {
    const log = rawLog();
    log.apply(withSeq(leaf("mv1", "u1", "a2"), 4));
    expect(log.leafId).toBe("u1");
    expect(log.last?.id).toBe("mv1");
    expect(log.headSeq).toBe(4);
  });

  it("root, info, at and last reflect the stored entries", () => {
    const log = newLog("s9", "r0", "Title");
    expect(log.root.id).toBe("r0");
    expect(log.info.sessionId).toBe("s9");
    expect(log.at(1)?.id).toBe("r0");
    expect(log.at(2)).toBeUndefined();
    expect(log.last?.id).toBe("r0");
  });

  it("an empty log has no root (DATA_LOSS) and no leaf", () => {
    const log = new SessionLog("s1");
    expect(log.leafId).toBe("");
    expect(log.headSeq).toBe(0);
    expectError(() => log.root, "DATA_LOSS", '"s1"');
  });

  it("labelTarget finds the newest Label entry with the text, on any branch", () => {
    const log = buildLog(
      label("l1", "cp"),
      user("u1", "hi"),
      label("l2", "cp"),
      label("l3", "other"),
      label("l4", "cp", "root"),
    );
    expect(log.labelTarget("cp")).toBe("l4");
    expect(log.labelTarget("other")).toBe("l3");
    expect(log.labelTarget("missing")).toBeUndefined();
  });

  it("title is the newest SessionInfo title in the log", () => {
    const untitled = newLog();
    expect(untitled.title).toBeUndefined();
    const log = newLog("s1", "root", "first");
    expect(log.title).toBe("first");
    appendEach(log, user("u1", "hi"), info("i2", "second"), info("i3"));
    expect(log.title).toBe("second");
  });

  it("messageCount counts Message entries only, on every branch", () => {
    const log = buildLog(
      user("u1", "hi"),
      assistant("a2", "x"),
      label("l3", "cp"),
      compaction("c4", "s", ["u1", "a2"]),
      user("b5", "branch", "u1"),
    );
    rewindTo(log, { target: "a2" });
    expect(log.messageCount).toBe(3);
  });

  it("slice pages through the log by seq without gaps or overlaps", () => {
    const log = buildLog(...Array.from({ length: 9 }, (_, i) => user(`u${i + 2}`, "x")));
    expect(log.headSeq).toBe(10);
    const pages: string[][] = [];
    let after = 0;
    for (;;) {
      const page = log.slice(after, 3);
      if (page.length === 0) break;
      pages.push(idsOf(page));
      after = Number(page[page.length - 1]?.seq);
    }
    expect(pages).toEqual([["root", "u2", "u3"], ["u4", "u5", "u6"], ["u7", "u8", "u9"], ["u10"]]);
  });

  it("slice without a limit returns the rest; past the head or with limit 0, nothing", () => {
    const log = buildLog(user("u2", "x"), user("u3", "y"));
    expect(idsOf(log.slice(1))).toEqual(["u2", "u3"]);
    expect(idsOf(log.slice(-5, 1))).toEqual(["root"]);
    expect(log.slice(3)).toEqual([]);
    expect(log.slice(99)).toEqual([]);
    expect(log.slice(0, 0)).toEqual([]);
  });

  it("from() replays a stored log to the same leaf, counts and labels", () => {
    const log = buildLog(user("u1", "hi"), label("l2", "cp"), assistant("a3", "x"));
    rewindTo(log, { target: "cp" });
    const replayed = SessionLog.from("s1", log.entries());
    expect(replayed.leafId).toBe("l2");
    expect(replayed.headSeq).toBe(log.headSeq);
    expect(replayed.messageCount).toBe(2);
    expect(replayed.labelTarget("cp")).toBe("l2");
  });
});

/** The indexed fields of an entry, as a reader extracts them. */
function metaOf(e: Entry): EntryMeta {
  const k = e.kind;
  return {
    id: e.id,
    parentId: e.parentId,
    seq: Number(e.seq),
    kind: k.case,
    leafId: k.case === "leaf" ? k.value.leafId : undefined,
    label: k.case === "label" ? k.value.label : undefined,
    title: k.case === "sessionInfo" ? k.value.title : undefined,
  };
}

/** A source holding stored entries by seq, counting decodes; `stored` may differ from the meta. */
class CountingSource implements EntrySource {
  readonly decoded: number[] = [];
  constructor(private readonly stored: Map<number, Entry>) {}
  decode(seq: number, start: number, end: number): Entry {
    expect([start, end]).toEqual([seq * 10, seq * 10 + 5]);
    this.decoded.push(seq);
    const e = this.stored.get(seq);
    if (e === undefined) this.corrupt(seq, start, end, "undecodable");
    return e;
  }
  corrupt(seq: number, _start: number, _end: number, reason: string): never {
    throw dataLoss(`stored at line ${seq}: ${reason}`);
  }
}

/** Applies every entry lazily; the source decodes `stored` (the entries themselves by default). */
function lazyLog(
  entries: readonly Entry[],
  stored = new Map(entries.map((e) => [Number(e.seq), e])),
) {
  const source = new CountingSource(stored);
  const log = new SessionLog("s1");
  for (const e of entries)
    log.applyLazy(metaOf(e), source, Number(e.seq) * 10, Number(e.seq) * 10 + 5);
  return { log, source };
}

/** Every kind, a branch, a label moved, a rewind and a renamed session. */
function everyKind(): Entry[] {
  return [
    info("root", "first"),
    user("u2", "hi", "root"),
    assistant("a3", "hello", ["call-1"], "u2"),
    modelChange("m4", "model-b", "p", "a3"),
    thinkingLevel("t5", "high", "m4"),
    compaction("c6", "summary", ["u2"], "t5"),
    branchSummary("b7", "gone", "u2", "c6"),
    label("l8", "cp", "b7"),
    custom("x9", "ns", { a: 1 }, "l8"),
    user("u10", "side", "u2"),
    leaf("v11", "x9", "u10"),
    info("i12", "renamed", "x9"),
    label("l13", "cp", "u2"),
    kindless("k14", "i12"),
  ].map((e, i) => withSeq(e, i + 1));
}

describe("SessionLog lazy entries (applyLazy)", () => {
  it("indexes like apply: same head, leaf, counters, labels, title and paths", () => {
    const entries = everyKind();
    const eager = SessionLog.from("s1", entries);
    const { log } = lazyLog(entries);
    for (const l of [eager, log]) expect(l.headSeq).toBe(14);
    expect(log.leafId).toBe(eager.leafId);
    expect(log.messageCount).toBe(eager.messageCount);
    expect(log.title).toBe("renamed");
    expect(log.labelTarget("cp")).toBe("l13");
    expect(idsOf(log.path())).toEqual(idsOf(eager.path()));
    expect(idsOf(log.path("u10"))).toEqual(["root", "u2", "u10"]);
    expectError(() => log.path("ghost"), "INVALID_ARGUMENT", '"ghost"');
  });

  it("materialises every kind equal to the stored entry, once", () => {
    const entries = everyKind();
    const { log, source } = lazyLog(entries);
    expect(source.decoded).toEqual([]);
    for (const e of entries) {
      const got = log.at(Number(e.seq)) as Entry;
      expect(toBinary(EntrySchema, got)).toEqual(toBinary(EntrySchema, e));
      expect(log.get(e.id)).toBe(got);
    }
    expect(source.decoded).toEqual(entries.map((e) => Number(e.seq)));
    log.entries();
    log.slice(0);
    log.path();
    expect(source.decoded).toHaveLength(entries.length);
  });

  it("decodes only what is asked for: a path decodes its own entries, the second time nothing", () => {
    const { log, source } = lazyLog(everyKind());
    const path = log.path("u10");
    expect(source.decoded).toEqual([10, 2, 1]);
    expect(log.path("u10")).toEqual(path);
    expect(log.path("u10")[1]).toBe(path[1]);
    expect(source.decoded).toHaveLength(3);
    expect(log.has("x9") && log.labelTarget("cp") === "l13").toBe(true);
    expect(source.decoded).toHaveLength(3);
  });

  it("refuses the same broken invariants with the same DATA_LOSS", () => {
    const head = [info("root"), user("u2", "x", "root"), leaf("v3", "u2", "u2")].map((e, i) =>
      withSeq(e, i + 1),
    );
    const cases: [Entry[], Entry, string[]][] = [
      [[], withSeq(user("u1", "x"), 1), ["SessionInfo"]],
      [[], withSeq(info("r", undefined, "p"), 1), ["SessionInfo"]],
      [head, withSeq(user("u9", "x", "u2"), 9), ['"u9"', "seq 4"]],
      [head, withSeq(user("u2", "x", "root"), 4), ['"u2"', "duplicate"]],
      [head, withSeq(user("u4", "x", "ghost"), 4), ['"u4"', "no parent"]],
      [head, withSeq(user("u4", "x", "v3"), 4), ['"u4"', "Leaf"]],
      [head, withSeq(leaf("v4", "ghost", "u2"), 4), ['"v4"', "no valid entry"]],
      [head, withSeq(leaf("v4", "v3", "u2"), 4), ['"v4"', "no valid entry"]],
    ];
    for (const [before, bad, mentions] of cases) {
      const eager = SessionLog.from("s1", before);
      const { log, source } = lazyLog(before);
      const a = expectError(() => eager.apply(bad), "DATA_LOSS", ...mentions);
      const b = expectError(() => log.applyLazy(metaOf(bad), source, 0, 5), "DATA_LOSS");
      expect(b.message).toBe(a.message);
      expect(log.headSeq).toBe(before.length);
      expect(log.has(bad.id) && log.get(bad.id)?.seq === bad.seq).toBe(false);
    }
  });

  it("applyAll on a lazily loaded log still rolls a refused batch back", () => {
    const { log } = lazyLog(everyKind());
    const before = {
      head: log.headSeq,
      leaf: log.leafId,
      n: log.messageCount,
      cp: log.labelTarget("cp"),
    };
    const batch = [
      withSeq(label("l15", "cp", "k14"), 15),
      withSeq(user("u16", "x", "l15"), 16),
      withSeq(user("u17", "x", "ghost"), 17),
    ];
    expectError(() => log.applyAll(batch), "DATA_LOSS", '"u17"');
    expect({
      head: log.headSeq,
      leaf: log.leafId,
      n: log.messageCount,
      cp: log.labelTarget("cp"),
    }).toEqual(before);
    expect(log.has("l15") || log.has("u16")).toBe(false);
    log.applyAll(batch.slice(0, 2));
    expect(log.leafId).toBe("u16");
    expect(idsOf(log.path()).slice(-3)).toEqual(["k14", "l15", "u16"]);
  });

  it("an entry that does not decode, or contradicts its index, is DATA_LOSS from the source, every time", () => {
    const entries = everyKind();
    const stored = new Map(entries.map((e) => [Number(e.seq), e]));
    stored.delete(3);
    stored.set(4, withSeq(modelChange("m4-other", "x", undefined, "a3"), 4));
    stored.set(8, withSeq(label("l8", "other", "b7"), 8));
    stored.set(9, withSeq(custom("x9", "ns", {}, "u2"), 9));
    const { log } = lazyLog(entries, stored);
    for (const [seq, why] of [
      [3, "undecodable"],
      [4, "id"],
      [8, "label"],
      [9, "parent"],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        expectError(() => log.at(seq), "DATA_LOSS", `line ${seq}`, why);
      }
    }
    expectError(() => log.path("x9"), "DATA_LOSS", "line 9");
    expect(log.at(2)?.id).toBe("u2");
  });
});

describe("SessionLog lazy entries: each indexed field is checked against the decoded entry", () => {
  /** everyKind() with the entry at `seq` stored as `stored` instead. */
  function storedAs(seq: number, stored: Entry) {
    const entries = everyKind();
    return lazyLog(entries, new Map(entries.map((e) => [Number(e.seq), e])).set(seq, stored));
  }

  it("a stored seq other than the indexed one is DATA_LOSS naming the seq", () => {
    const { log } = storedAs(2, withSeq(user("u2", "hi", "root"), 3));
    const err = expectError(() => log.at(2), "DATA_LOSS");
    expect(err.message).toBe('stored at line 2: the entry does not match its indexed seq ("u2")');
  });

  it("a stored kind other than the indexed one is DATA_LOSS naming the kind", () => {
    const { log } = storedAs(2, withSeq(label("u2", "hi", "root"), 2));
    const err = expectError(() => log.at(2), "DATA_LOSS");
    expect(err.message).toBe('stored at line 2: the entry does not match its indexed kind ("u2")');
  });

  it("a stored Leaf target other than the indexed one is DATA_LOSS naming the leaf target", () => {
    const { log } = storedAs(11, withSeq(leaf("v11", "u2", "u10"), 11));
    const err = expectError(() => log.at(11), "DATA_LOSS");
    expect(err.message).toBe(
      'stored at line 11: the entry does not match its indexed leaf target ("v11")',
    );
  });

  it("a stored title other than the indexed one is DATA_LOSS naming the title", () => {
    const { log } = storedAs(12, withSeq(info("i12", "other", "x9"), 12));
    const err = expectError(() => log.at(12), "DATA_LOSS");
    expect(err.message).toBe(
      'stored at line 12: the entry does not match its indexed title ("i12")',
    );
  });

  it("a Label with empty text, which JSON leaves out of the meta, indexes and decodes as ''", () => {
    const entries = [info("root"), label("l2", "", "root")].map((e, i) => withSeq(e, i + 1));
    const source = new CountingSource(new Map(entries.map((e) => [Number(e.seq), e])));
    const log = new SessionLog("s1");
    for (const e of entries) {
      log.applyLazy(
        { ...metaOf(e), label: undefined },
        source,
        Number(e.seq) * 10,
        Number(e.seq) * 10 + 5,
      );
    }
    expect(log.labelTarget("")).toBe("l2");
    expect(log.at(2)?.id).toBe("l2");
  });

  it("a title in the meta of an entry that is no SessionInfo is ignored", () => {
    const entries = [info("root", "first"), user("u2", "hi", "root")].map((e, i) =>
      withSeq(e, i + 1),
    );
    const source = new CountingSource(new Map(entries.map((e) => [Number(e.seq), e])));
    const log = new SessionLog("s1");
    for (const e of entries) {
      log.applyLazy(
        e.id === "u2" ? { ...metaOf(e), title: "stray" } : metaOf(e),
        source,
        Number(e.seq) * 10,
        Number(e.seq) * 10 + 5,
      );
    }
    expect(log.title).toBe("first");
    expect(log.at(2)?.id).toBe("u2");
  });

  it("a Leaf entry whose meta has no target is refused like one pointing at nothing", () => {
    const { log, source } = lazyLog(everyKind().slice(0, 10));
    const meta = { ...metaOf(withSeq(leaf("v11", "x9", "u10"), 11)), leafId: undefined };
    const err = expectError(() => log.applyLazy(meta, source, 110, 115), "DATA_LOSS");
    expect(err.message).toBe('session "s1" seq 11: Leaf entry "v11" points at no valid entry');
  });
});

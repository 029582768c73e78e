import { describe, expect, it } from "vitest";
import { langGraphEntry, rowLabel, shortId, taskName } from "./langgraph.js";

const ID = "1f1f0d49-6a62-6580-8000-6a70216b3819";

describe("langGraphEntry", () => {
  it("reads the JS saver's checkpoint: step and source from its JSON metadata, each value's form", () => {
    const e = langGraphEntry("langgraph.checkpoint", {
      ns: "",
      id: ID,
      parent: "p1",
      checkpoint: { t: "json", d: '{"v":4,"channel_versions":{"a":1,"b":2}}' },
      metadata: { t: "json", d: '{"source":"loop","step":3,"parents":{}}' },
      values: {
        a: { v: "1", t: "json", d: '{"x":1}' },
        big: { v: "2", t: "json", ref: "carrier-1" },
        grown: { v: "3", t: "json", base: "c0", keep: 120, d: ',"more"]' },
        raw: { v: "4", t: "bytes", d: "AAEC", b64: true },
      },
    });
    expect(e).toMatchObject({ kind: "checkpoint", saver: "js", step: 3, source: "loop" });
    if (e?.kind !== "checkpoint") throw new Error("not a checkpoint");
    expect(e.values).toEqual([
      { channel: "a", version: "1", value: { type: "json", bytes: 7, json: { x: 1 } } },
      { channel: "big", version: "2", value: { type: "json", ref: "carrier-1" } },
      {
        channel: "grown",
        version: "3",
        value: { type: "json", base: { checkpoint: "c0", keep: 120, tail: ',"more"]' } },
      },
      { channel: "raw", version: "4", value: { type: "bytes", bytes: 3 } },
    ]);
    expect(rowLabel(e)).toEqual({
      badge: "checkpoint",
      text: "step 3 · loop · …216b3819",
      title: `checkpoint ${ID}`,
    });
  });

  it("reads the Python saver's checkpoint: step and source from its own fields when the metadata is msgpack", () => {
    const e = langGraphEntry("langgraph.checkpoint", {
      checkpoint_id: ID,
      parent_checkpoint_id: null,
      thread_id: "t",
      checkpoint_ns: "",
      source: "input",
      step: -1,
      checkpoint: { type: "msgpack", b64: "gaF2BA==" },
      metadata: { type: "msgpack", b64: "gA==" },
      values: [
        { channel: "m", version: 2, type: "msgpack", b64: "kQE=" },
        { channel: "n", version: "00002.0.5", type: "null" },
      ],
    });
    expect(e).toMatchObject({
      kind: "checkpoint",
      saver: "python",
      parent: undefined,
      threadId: "t",
      step: -1,
      source: "input",
      metadata: { type: "msgpack", bytes: 1 },
      values: [
        { channel: "m", version: "2", value: { type: "msgpack", bytes: 2 } },
        { channel: "n", version: "00002.0.5", value: { type: "null", bytes: 0 } },
      ],
    });
  });

  it("reads both savers' writes, named by the node of their task path", () => {
    const js = langGraphEntry("langgraph.writes", {
      ns: "",
      checkpoint: ID,
      writes: [
        { task: "t1", path: "~__pregel_pull, model", c: "messages", i: 0, t: "json", d: "[]" },
        {
          task: "t1",
          path: "~__pregel_pull, model",
          c: "branch:to:tools",
          i: 1,
          t: "json",
          d: "1",
        },
      ],
    });
    expect(js && rowLabel(js).text).toBe("model → messages, branch:to:tools · of …216b3819");
    const py = langGraphEntry("langgraph.writes", {
      checkpoint_id: "c1",
      task_id: "0123456789abcdef",
      task_path: "",
      writes: [{ idx: -4, channel: "__resume__", type: "json", json: '"ok"' }],
    });
    expect(py && rowLabel(py).text).toBe("task …89abcdef → __resume__ · of c1");
  });

  it("is undefined for data of neither shape, so the entry is drawn as any Custom entry", () => {
    const cases: [string, unknown][] = [
      ["langgraph.checkpoint", { note: "by hand" }],
      ["langgraph.checkpoint", { id: ID, ns: "", checkpoint: { t: "json" } }],
      ["langgraph.checkpoint", { checkpoint_id: ID, checkpoint: { type: 1 }, metadata: {} }],
      [
        "langgraph.checkpoint",
        {
          checkpoint_id: ID,
          checkpoint: { type: "json" },
          metadata: { type: "json" },
          values: { a: 1 },
        },
      ],
      ["langgraph.writes", { checkpoint: ID, writes: [{ task: "t", c: "x", i: "0", t: "json" }] }],
      ["langgraph.writes", { checkpoint_id: ID, task_id: "t", writes: "none" }],
      ["langgraph.writes", null],
      ["other.namespace", { ns: "", id: ID, checkpoint: { t: "json" }, metadata: { t: "json" } }],
    ];
    for (const [ns, data] of cases)
      expect(langGraphEntry(ns, data), JSON.stringify(data)).toBe(undefined);
  });
});

describe("short names", () => {
  it("a UUIDv6 checkpoint id by its random end, a short id whole; a push task by its id, a Command's writes as such", () => {
    expect(shortId(ID)).toBe("…216b3819");
    expect(shortId("cp-1")).toBe("cp-1");
    expect(taskName({ task: "abc", path: "~__pregel_push, 0" })).toBe("task abc");
    expect(taskName({ task: "00000000-0000-0000-0000-000000000000", path: "" })).toBe("command");
  });
});

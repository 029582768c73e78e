/**
 * How SessiondSaver stores a thread (sessiond/langgraph), seen in the
 * session's entries: a channel whose value grows each step costs its
 * growth, not a copy per checkpoint, and every checkpoint reads back whole
 * from a new saver; a value too large for an entry's fields is a blob; a
 * channel left unchanged is stored once; thread ids that are no session
 * ids (any text) are threads like any other.
 */
import { type Checkpoint, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { expect, test } from "vitest";
import {
  CHECKPOINT_NAMESPACE,
  SessiondSaver,
  threadSessionId,
} from "../../src/adapters/langgraph/index.js";
import { createSessiondClient } from "../../src/client/index.js";
import { serverPerTest } from "./support.js";

const srv = serverPerTest();

const meta = { source: "loop" as const, step: 0, parents: {} };

/** Puts `values` as a chain of checkpoints of one thread, each channel's version bumped when it changes. */
async function chain(saver: SessiondSaver, threadId: string, values: Record<string, unknown>[]) {
  let config = { configurable: { thread_id: threadId, checkpoint_ns: "" } } as {
    configurable: Record<string, unknown>;
  };
  const versions: Record<string, number> = {};
  const ids: string[] = [];
  let previous: Record<string, unknown> = {};
  for (const v of values) {
    const newVersions: Record<string, number> = {};
    for (const [ch, value] of Object.entries(v)) {
      if (JSON.stringify(previous[ch]) === JSON.stringify(value)) continue;
      versions[ch] = (versions[ch] ?? 0) + 1;
      newVersions[ch] = versions[ch];
    }
    const checkpoint: Checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: v,
      channel_versions: { ...versions },
    };
    config = (await saver.put(config, checkpoint, meta, newVersions)) as typeof config;
    ids.push(checkpoint.id);
    previous = v;
  }
  return ids;
}

async function checkpointEntries(session: string) {
  const client = createSessiondClient({ baseUrl: srv().server.url, blobs: "refs" });
  const page = await client.session.getEntries({ session });
  return page.entries;
}

test("a channel that grows each step costs its growth, and every checkpoint reads back whole from a new saver", async () => {
  const saver = new SessiondSaver({ client: srv().client });
  const steps = Array.from({ length: 60 }, (_, i) =>
    Array.from({ length: i + 1 }, (_, j) => ({
      role: "ai",
      text: `message ${j}: ${"lorem ipsum ".repeat(20)}`,
    })),
  );
  const ids = await chain(
    saver,
    "growing",
    steps.map((messages) => ({ messages, counter: 7 })),
  );
  const entries = await checkpointEntries(threadSessionId("growing"));
  const values = entries.flatMap((e) =>
    e.kind.case === "custom" && e.kind.value.namespace === CHECKPOINT_NAMESPACE
      ? [JSON.stringify(e.kind.value.data?.values)]
      : [],
  );
  const stored = values.reduce((n, v) => n + v.length, 0);
  const last = JSON.stringify(steps[steps.length - 1]).length;
  // A copy per checkpoint would be ~30 × the last value; its growth is ~1 × (plus each value's own fields).
  expect(values.length).toBe(60);
  expect(stored).toBeLessThan(1.5 * last);
  const fresh = new SessiondSaver({ client: createSessiondClient({ baseUrl: srv().server.url }) });
  for (const [i, id] of ids.entries()) {
    const tuple = await fresh.getTuple({
      configurable: { thread_id: "growing", checkpoint_id: id },
    });
    expect(tuple?.checkpoint.channel_values).toEqual({ messages: steps[i], counter: 7 });
  }
});

test("a channel left unchanged is stored once, in the checkpoint where its version is new", async () => {
  const saver = new SessiondSaver({ client: srv().client });
  const big = "x".repeat(5000);
  await chain(
    saver,
    "unchanged",
    [1, 2, 3, 4].map((n) => ({ big, n })),
  );
  const entries = await checkpointEntries(threadSessionId("unchanged"));
  const holding = entries.filter(
    (e) =>
      e.kind.case === "custom" &&
      (e.kind.value.data?.values as Record<string, unknown> | undefined)?.big !== undefined,
  );
  expect(holding.length).toBe(1);
  expect(JSON.stringify(holding[0]?.kind.value)).toContain(big);
});

test("a value over 32 KiB of text is a blob, and reads back", async () => {
  const saver = new SessiondSaver({ client: srv().client });
  const large = Array.from({ length: 2000 }, (_, i) => `line ${i} ${"abc".repeat(30)}`).join("\n");
  const [id] = await chain(saver, "large", [{ doc: large }]);
  const entries = await checkpointEntries(threadSessionId("large"));
  const parts = entries.flatMap((e) => (e.kind.case === "message" ? e.kind.value.content : []));
  expect(parts.map((p) => p.part.case)).toEqual(["blob"]);
  const fresh = new SessiondSaver({ client: createSessiondClient({ baseUrl: srv().server.url }) });
  const tuple = await fresh.getTuple({ configurable: { thread_id: "large", checkpoint_id: id } });
  expect(tuple?.checkpoint.channel_values).toEqual({ doc: large });
  // The carrier is off the checkpoints' path: the session's state has no message.
  const state = await srv().client.session.getState({ session: threadSessionId("large") });
  expect(state.state?.messages).toEqual([]);
});

test("thread ids that are no session ids are threads like any other, listed by their ids", async () => {
  const saver = new SessiondSaver({ client: srv().client, workspace: "odd-ids" });
  const odd = ["user 42 / thread #7", "ünïcødé 🧵", "a".repeat(200), "1"];
  for (const t of odd) await chain(saver, t, [{ v: t }]);
  for (const t of odd) {
    expect(
      (await saver.getTuple({ configurable: { thread_id: t } }))?.checkpoint.channel_values,
    ).toEqual({ v: t });
  }
  const listed = [];
  for await (const tuple of saver.list({ configurable: {} }))
    listed.push(tuple.config.configurable?.thread_id);
  expect(listed.sort()).toEqual([...odd].sort());
  await saver.deleteThread("1");
  expect(await saver.getTuple({ configurable: { thread_id: "1" } })).toBeUndefined();
  expect(await saver.getTuple({ configurable: { thread_id: odd[0] } })).toBeDefined();
});

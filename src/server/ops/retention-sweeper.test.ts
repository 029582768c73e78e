import { describe, expect, it } from "vitest";
import { openStore } from "../../index.js";
import { startRetention } from "./retention-sweeper.js";

/** A memory store whose engine says another process runs every exclusive job, or not. */
function storeWhereAnotherReplicaSweeps(another: boolean) {
  const store = openStore({ memory: true });
  const asked: string[] = [];
  const exclusive: NonNullable<typeof store.engine.exclusive> = async (name, job) => {
    asked.push(name);
    return another ? { ran: false } : { ran: true, value: await job() };
  };
  store.engine.exclusive = exclusive;
  return { store, asked };
}

const config = { all: { keepNewest: 1 }, workspaces: {}, intervalMs: 3_600_000 };

describe("the retention sweeper among replicas", () => {
  it.each([
    ["leaves the sweep to the replica that holds the job, removes nothing and logs why", true],
    ["sweeps when it holds the job", false],
  ])("%s", async (_, another) => {
    const { store, asked } = storeWhereAnotherReplicaSweeps(another);
    for (const title of ["a", "b", "c"]) await store.create({ title });
    const lines: string[] = [];
    const sweeper = startRetention(store, config, (l) => lines.push(l));
    await sweeper.sweep();
    await sweeper.stop();
    expect(asked).toEqual(["retention"]);
    expect((await store.list({})).sessions).toHaveLength(another ? 3 : 1);
    const msgs = lines.map((l) => JSON.parse(l).msg);
    expect(msgs.includes("retention skipped")).toBe(another);
    expect(msgs.includes("retention")).toBe(!another);
  });
});

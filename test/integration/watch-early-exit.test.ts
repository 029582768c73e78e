/**
 * A caller that leaves `watchEntriesResumable` early (break, return, a throw
 * in its loop body) must end the server stream: otherwise the stream, its
 * heartbeats and the client's HTTP/2 connection live on and a script that
 * is done never exits.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { watchEntriesResumable } from "../../src/client/index.js";
import { user } from "./support/entries.js";
import { client, type SessiondProcess, startSessiond, uniqueWorkspace } from "./support/server.js";
import { eventually } from "./support/stream.js";

const ws = uniqueWorkspace("early-exit");
let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond();
});
afterAll(async () => {
  await server?.stop();
});

const watchLogLines = () =>
  server
    .stderr()
    .split("\n")
    .filter((l) => l.includes("/WatchEntries"));

describe("leaving a resumable watch early", () => {
  test("a break out of the loop cancels the server stream", async () => {
    const c = client(server.url, "grpc");
    const { session } = await c.store.createSession({ workspace: ws, title: "early exit" });
    const id = session?.id ?? "";
    await c.session.append({ workspace: ws, session: id, entries: [user("hi", { id: "u1" })] });
    const seen: bigint[] = [];
    for await (const ev of watchEntriesResumable(c, { workspace: ws, session: id })) {
      if (ev.event.case !== "entry") continue;
      seen.push(ev.event.value.seq);
      if (ev.event.value.seq === 2n) break;
    }
    expect(seen).toEqual([1n, 2n]);
    // The server logs a stream when it ends; an abandoned stream would stay open.
    await eventually(() => watchLogLines().length === 1, 10_000, "the WatchEntries stream to end");
    expect(JSON.parse(watchLogLines()[0] as string).code).toBe("Canceled");
  });
});

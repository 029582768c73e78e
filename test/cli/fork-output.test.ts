import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/** `F=$(sessiond fork ID)` must capture the new id, as `new` does. */

let server: SessiondProcess;
let client: SessiondClient;

beforeAll(async () => {
  server = await startSessiond();
  client = createSessiondClient({ baseUrl: server.url });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe("sessiond fork output", () => {
  it("fork prints the new session id alone on stdout", async () => {
    const { session } = await client.store.createSession({ title: "source" });
    const source = session?.id as string;
    const r = await runCli(["fork", source, "--server", server.url]);
    expect(r.code).toBe(0);
    const forked = r.stdout.replace(/\n$/, "");
    expect(forked).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
    const meta = (await client.store.getSession({ session: forked })).session;
    expect(meta?.forkedFrom?.sessionId).toBe(source);
  });
});
